"""The provider API key reaches the provider and nothing else (DESIGN §10, TESTING.md "secrets").

A real turn runs against a local OpenAI-compatible server; then every prompt, event, log record, stored
log row and API response is scanned for the key.
"""

import json
import logging

import pytest
from django.core.serializers.json import DjangoJSONEncoder

from agents.models import InboxMessage, ModelLease, ModelProfile, ProviderKind, Step, Task, ToolCall, Turn
from agents.runtime.loop import turn_run
from agents.secrets import secret_put
from tests.support.fake_openai import FakeOpenAIServer, completion
from workspace.models import Event

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("local_model_servers")]

API_KEY = "sk-test-LOMOTE-do-not-leak-7f3a9c2e41b8"


def dump(value) -> str:
    return json.dumps(value, cls=DjangoJSONEncoder, default=str)


def test_it_never_puts_the_provider_key_in_prompts_events_logs_rows_or_responses(
    workspace, alice, client_for, no_enqueue, caplog
):
    caplog.set_level(logging.DEBUG)
    with FakeOpenAIServer() as server:
        # given a workspace whose default model is an OpenAI-compatible endpoint with a stored key
        ModelProfile.objects.create(
            workspace=workspace,
            name="fake",
            provider=ProviderKind.OPENAI_COMPAT,
            model="fake-model-1",
            base_url=server.url,
            secret=secret_put(workspace_id=workspace.pk, name="fake-key", value=API_KEY),
            is_default=True,
        )
        server.reply(completion(content="Reading the task.", tool_calls=[("read_task_state", {})]))
        server.reply(completion(content="Planned.", cached_tokens=12))
        client = client_for(alice)

        # when a person creates a task through the API and its turn runs
        response = client.post(
            f"/api/v1/workspaces/{workspace.pk}/tasks/",
            {"title": "Posters", "brief": "Make 3 retro posters"},
            format="json",
        )
        assert response.status_code == 201, response.content
        task = Task.objects.get(pk=response.json()["id"])
        turn = Turn.objects.get(task=task)
        assert turn_run(turn_id=turn.pk, generation=1) == "answered"

        # then the key went to the provider, in the Authorization header only
        assert server.calls == 2
        assert set(server.authorizations) == {f"Bearer {API_KEY}"}
        prompts = dump(server.bodies)
        assert "Make 3 retro posters" in prompts
        assert API_KEY not in prompts

    step = Step.objects.get(turn=turn, index=2)
    assert (step.model, step.cached_prompt_tokens) == ("fake-model-1", 12)
    base = f"/api/v1/workspaces/{workspace.pk}"
    responses = [
        client.get(path)
        for path in (
            f"{base}/tasks/",
            f"{base}/tasks/{task.pk}/",
            f"{base}/tasks/{task.pk}/log/",
            f"{base}/tasks/{task.pk}/messages/",
            f"{base}/events/?after=0",
        )
    ]
    assert all(r.status_code == 200 for r in responses)
    haystacks = {
        "api responses": "".join(r.content.decode() for r in responses),
        "events": dump(list(Event.objects.values())),
        "log rows": dump(
            [
                list(model.objects.values())
                for model in (Task, Turn, Step, ToolCall, InboxMessage, ModelLease, ModelProfile)
            ]
        ),
        "log records": "\n".join(
            f"{record.getMessage()} {record.args!r} {record.exc_text or ''}" for record in caplog.records
        ),
    }
    for where, text in haystacks.items():
        assert API_KEY not in text, f"the provider key leaked into {where}"
    assert "Planned." in haystacks["api responses"]  # the scan looked at real content
