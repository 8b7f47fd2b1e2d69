"""What agents feeds memory: the person's Main and task messages as evidence, and the task's model to read
them with (agents/services/memory_feed.py)."""

import json

import pytest
from django.db import transaction
from django_q.conf import Conf

from agents.main.messages import main_message_post
from agents.models import RUNTIME_NOTE, InboxMessage, MainMessage, ModelProfile, ProviderKind, Route
from agents.providers import registry
from agents.providers.base import ModelResponse, Usage
from agents.services.memory_feed import (
    main_message_recorded,
    memories_parse,
    messages_consumed,
    messages_consumed_follow,
    model_extractor,
)
from agents.tasks import messages_consumed_record
from memory.models import Evidence, EvidenceKind, MemoryKind
from memory.services.extraction import evidence_extract
from memory.services.memories import Action
from tests.memory.statements import active, record
from tests.support.factories import ModelProfileFactory, TaskFactory
from tests.support.queued import queued, run_queued
from workspace.selectors import workspace_access

pytestmark = pytest.mark.django_db


@pytest.fixture
def enqueued(monkeypatch):
    sent: list[int] = []
    monkeypatch.setattr("memory.services.evidence._enqueue", sent.append)
    monkeypatch.setattr("agents.queue._enqueue", lambda turn_id, generation: None)
    return sent


class Model:
    """An OpenAI-compatible endpoint that answers every request with `answer` and keeps the requests."""

    kind = "test"

    def __init__(self, answer: str):
        self.answer, self.requests = answer, []

    def complete(self, request):
        self.requests.append(request)
        return ModelResponse(text=self.answer, tool_calls=[], usage=Usage(), model="endpoint-model-1")


def endpoint_profile(workspace, **fields) -> ModelProfile:
    return ModelProfileFactory(
        workspace=workspace,
        provider=ProviderKind.OPENAI_COMPAT,
        model="gpt-test",
        base_url="https://m.test/v1",
        **fields,
    )


# --- evidence -----------------------------------------------------------------------------------------------


def test_a_persons_main_message_becomes_evidence_extracted_after_commit(
    workspace, alice, enqueued, django_capture_on_commit_callbacks
):
    # given
    task = TaskFactory(workspace=workspace)
    access = workspace_access(principal=alice, workspace_id=workspace.pk)

    # when
    with django_capture_on_commit_callbacks(execute=True):
        message = main_message_post(access=access, text="Our brand's main colour is blue.", task_id=task.pk)

    # then
    evidence = Evidence.objects.get(workspace=workspace)
    assert (evidence.kind, evidence.source_id, evidence.stated_by_id, evidence.task_id) == (
        EvidenceKind.MAIN_MESSAGE,
        str(message.pk),
        alice.pk,
        task.pk,
    )
    assert evidence.text == "Our brand's main colour is blue."
    assert enqueued == [evidence.pk]


def test_a_main_message_is_recorded_once(workspace, alice, enqueued):
    message = MainMessage.objects.create(
        workspace=workspace, author=alice, text="Our tone is playful.", route=Route.ANSWER
    )

    first, again = main_message_recorded(message), main_message_recorded(message)

    assert first == again and Evidence.objects.count() == 1


def test_consumed_messages_that_are_a_persons_words_become_evidence(workspace, alice, enqueued):
    # given: the person's message, a runtime note, an API key's (no author), one delivered from Main
    task = TaskFactory(workspace=workspace)
    own = InboxMessage.objects.create(task=task, author=alice, source="person", text="Never use gradients.")
    note = InboxMessage.objects.create(task=task, source=RUNTIME_NOTE, text="The job settled.")
    api = InboxMessage.objects.create(task=task, source="api_key", text="Our tone is formal.")
    from_main = InboxMessage.objects.create(task=task, author=alice, source="person", text="Our logo is a fox.")
    MainMessage.objects.create(
        workspace=workspace, author=alice, text="Our logo is a fox.", route=Route.DIRECT, inbox_message=from_main
    )
    ids = [own.pk, note.pk, api.pk, from_main.pk]

    # when
    recorded = messages_consumed(task_id=task.pk, message_ids=ids)
    replayed = messages_consumed(task_id=task.pk, message_ids=ids)

    # then
    evidence = Evidence.objects.get(pk__in=recorded)
    assert (evidence.kind, evidence.source_id, evidence.task_id, evidence.stated_by_id) == (
        EvidenceKind.TASK_MESSAGE,
        str(own.pk),
        task.pk,
        alice.pk,
    )
    assert replayed == recorded and Evidence.objects.count() == 1
    assert messages_consumed(task_id=task.pk + 1, message_ids=ids) == []  # another task's ids: nothing


def test_a_step_queues_the_recording_with_its_commit_and_a_worker_records_once(
    workspace, alice, enqueued, django_capture_on_commit_callbacks
):
    # given a person's message a step consumes (issue 31 item 4: evidence is no work of the turn's)
    task = TaskFactory(workspace=workspace)
    own = InboxMessage.objects.create(task=task, author=alice, source="person", text="Never use gradients.")

    # when the step's transaction queues it
    with transaction.atomic():
        messages_consumed_follow(task_id=task.pk, message_ids=[own.pk])

    # then the message for a worker is stored with the step, and no evidence yet
    assert queued("agents.tasks.messages_consumed_record") == [(task.pk, [own.pk])]
    assert not Evidence.objects.exists()
    # when a worker runs it, and the broker delivers it again (at least once)
    with django_capture_on_commit_callbacks(execute=True):
        (recorded,) = run_queued("agents.tasks.messages_consumed_record")
        again = messages_consumed_record(task.pk, [own.pk])
    # then one piece of evidence (its extraction, itself safe to repeat, is enqueued while it is pending)
    evidence = Evidence.objects.get()
    assert recorded == again == [evidence.pk] and evidence.source_id == str(own.pk)
    assert set(enqueued) == {evidence.pk}


def test_where_the_message_would_not_commit_with_the_step_it_records_inline(workspace, alice, enqueued, monkeypatch):
    # given a broker whose message could be lost after the commit (django-q's sync mode here)
    monkeypatch.setattr(Conf, "SYNC", True)
    task = TaskFactory(workspace=workspace)
    own = InboxMessage.objects.create(task=task, author=alice, source="person", text="Never use gradients.")
    # when a step consumes the message
    with transaction.atomic():
        messages_consumed_follow(task_id=task.pk, message_ids=[own.pk])
        # then it is evidence in the step's own transaction, and nothing is queued for it
        assert Evidence.objects.filter(source_id=str(own.pk), task_id=task.pk).exists()
    assert queued("agents.tasks.messages_consumed_record") == []


# --- the model extractor ---------------------------------------------------------------------------------


def test_the_workspaces_model_reads_the_evidence(workspace, alice):
    # given: a default endpoint profile whose model answers in a code fence, with junk among the candidates
    endpoint_profile(workspace, is_default=True)
    answer = {
        "memories": [
            {
                "content": "The brand favours blue with an off-white",
                "subject": "brand main colour",
                "kind": "preference",
            },
            "junk",
            {"content": "I like serif fonts", "subject": "font", "kind": "preference", "scope": "person"},
        ]
    }
    model = Model("```json\n" + json.dumps(answer) + "\n```")
    evidence = record(workspace, alice, "Blue with an off-white, and serif fonts for me.")

    # when
    with registry.override(ProviderKind.OPENAI_COMPAT, model):
        outcomes = evidence_extract(evidence_id=evidence.pk)

    # then
    assert [o.action for o in outcomes] == [Action.ORIGIN, Action.INVALID, Action.ORIGIN]
    assert {(v.memory.subject, v.kind, v.memory.person_id) for v in active(workspace)} == {
        ("brand main colour", MemoryKind.PREFERENCE, None),
        ("font", MemoryKind.PREFERENCE, alice.pk),
    }
    [request] = model.requests
    assert request.model == "gpt-test" and request.tools == []
    assert "JSON only" in request.messages[0]["content"]
    assert json.loads(request.messages[1]["content"])["message"] == evidence.text


def test_the_tasks_own_model_reads_its_messages(workspace, alice):
    # given: the workspace's default is the offline planner, the task has an endpoint of its own
    ModelProfileFactory(workspace=workspace, is_default=True)
    task = TaskFactory(workspace=workspace, model_profile=endpoint_profile(workspace))
    model = Model('{"memories": []}')

    # when
    with registry.override(ProviderKind.OPENAI_COMPAT, model):
        for_task = model_extractor(workspace_id=workspace.pk, task_id=task.pk, text="hi", language="en", existing=[])
        for_main = model_extractor(workspace_id=workspace.pk, task_id=None, text="hi", language="en", existing=[])

    # then
    assert for_task == [] and len(model.requests) == 1
    assert for_main is None  # the scripted default: memory reads it with its own extractor


def test_without_an_endpoint_the_scripted_extractor_reads(workspace, alice):
    evidence = record(workspace, alice, "Our tone is playful.")

    [outcome] = evidence_extract(evidence_id=evidence.pk)

    assert outcome.action == Action.ORIGIN


def test_an_answer_that_is_not_json_is_retried(workspace, alice):
    # given
    endpoint_profile(workspace, is_default=True)
    evidence = record(workspace, alice, "Our tone is playful.")

    # when
    with registry.override(ProviderKind.OPENAI_COMPAT, Model("Sure! You like playful things.")):
        with pytest.raises(ValueError):
            evidence_extract(evidence_id=evidence.pk)

    # then
    evidence.refresh_from_db()
    assert (evidence.extraction_attempts, evidence.extracted_at) == (1, None)


@pytest.mark.parametrize(
    ("answer", "items"),
    [
        ('{"memories": [{"a": 1}]}', [{"a": 1}]),
        ('[{"a": 1}, 2]', [{"a": 1}, 2]),
        ('Here: {"memories": []} done', []),
    ],
)
def test_it_parses_the_models_answer(answer, items):
    assert memories_parse(answer) == items


@pytest.mark.parametrize("answer", ["", "no json", '{"memories": "none"}', "{broken"])
def test_it_refuses_an_answer_without_a_list(answer):
    with pytest.raises(ValueError):
        memories_parse(answer)
