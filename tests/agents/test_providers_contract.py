"""One conformance suite for every model provider (agents/providers/base.py), plus the registry and replay.

Each implementation — the scripted planner, the replay provider, the OpenAI-compatible adapter against a
real local HTTP server — must give the runtime the same guarantees: a well-formed response naming the model
that produced it, only offered tools, honest usage counts, an untouched request, failures as ModelError with
`retryable` set, and a registry that builds it for a lease of its kind.
"""

import copy
import threading
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import pytest

from agents.exceptions import ModelConfigError, ModelError
from agents.models import ModelProfile, ProviderKind, Step, ToolCall
from agents.providers import registry
from agents.providers.base import ModelProvider, ModelRequest, ModelResponse, ToolCallIntent, ToolSpec, Usage
from agents.providers.openai_compat import OpenAICompatProvider
from agents.providers.replay import ReplayProvider
from agents.runtime.loop import turn_run
from agents.scripted.planner import MODEL_NAME, ScriptedPlanner
from agents.secrets import secret_put
from tests.support import runtime as rt
from tests.support.fake_openai import FakeOpenAIServer, completion

TOOLS = [
    ToolSpec("read_task_state", "Read the task state.", {"type": "object", "properties": {}}),
    ToolSpec("update_checklist", "Plan or progress the checklist.", {"type": "object", "properties": {}}),
    ToolSpec("ask_user", "Ask the person.", {"type": "object", "properties": {}}),
    ToolSpec("load_tools", "Load a domain's tools.", {"type": "object", "properties": {}}),
]
STATE = {
    "task": {"id": 1, "title": "Posters", "brief": "a series of 3 retro posters", "language": "en"},
    "checklist": [],
    "new_messages": [{"id": 1, "text": "a series of 3 retro posters"}],
    "last_results": [],
    "step_index": 1,
    "turn_trigger": "message",
    "tools": [t.name for t in TOOLS],
}
MESSAGES = [
    {"role": "system", "content": "You are Lomote's agent."},
    {"role": "user", "content": "a series of 3 retro posters"},
]
CANNED = ModelResponse(
    text="Reading the task first.",
    tool_calls=[ToolCallIntent(id="call_0", name="read_task_state", arguments={})],
    usage=Usage(prompt_tokens=42, completion_tokens=7, cached_prompt_tokens=0),
    model="fake-model-1",
)


PLAN = {"items": [{"title": f"Poster {n} of 3", "needs_confirmation": False} for n in (1, 2, 3)]}


@dataclass
class Harness:
    provider: ModelProvider
    model: str
    lease: Any  # what the registry is given
    fail: Any  # (harness) -> ModelRequest: arrange the implementation's failure, return the request to send
    expected_retryable: bool
    # What the standard request gets: the tool calls, words the text contains, the model named as its author,
    # and the usage (None: an estimate, which must grow with the prompt).
    calls: list[tuple[str, dict]]
    says: list[str]
    answered_by: str
    usage: Usage | None
    install: Any = None  # context manager factory for kinds that need an override

    def request(self, **overrides) -> ModelRequest:
        fields = {
            "model": self.model,
            "params": {},
            "messages": copy.deepcopy(MESSAGES),
            "tools": list(TOOLS),
            "state": copy.deepcopy(STATE),
        }
        return ModelRequest(**{**fields, **overrides})


@pytest.fixture(params=["scripted", "replay", "openai_compat"])
def harness(request):
    kind = request.param
    if kind == "scripted":
        lease = SimpleNamespace(provider="scripted", model=MODEL_NAME, base_url="", params={}, secret=None)
        # No transport to fail: the failure the planner must report is a request for another model.
        yield Harness(
            ScriptedPlanner(),
            MODEL_NAME,
            lease,
            fail=lambda h: h.request(model="gpt-other"),
            expected_retryable=False,
            calls=[("read_task_state", {}), ("update_checklist", PLAN)],
            says=["not an LLM", *(item["title"] for item in PLAN["items"])],
            answered_by=MODEL_NAME,
            usage=None,
        )
    elif kind == "replay":
        replay = ReplayProvider([CANNED] * 20)
        lease = SimpleNamespace(provider="replay", model="replay", base_url="", params={}, secret=None)

        # Exhaustion is the replay provider's failure: a test that forgot an output must not get a default.
        def exhaust(h):
            while replay.remaining:
                replay.complete(h.request())
            return h.request()

        harness = Harness(
            replay,
            "replay",
            lease,
            fail=exhaust,
            expected_retryable=False,
            calls=[("read_task_state", {})],
            says=[CANNED.text],
            answered_by=CANNED.model,  # a replayed output keeps the model that produced it
            usage=CANNED.usage,
        )
        harness.install = lambda: registry.override(ProviderKind.REPLAY, replay)
        yield harness
    else:
        request.getfixturevalue("db")
        workspace = request.getfixturevalue("workspace")
        settings = request.getfixturevalue("settings")
        settings.LOMOTE_MODEL_TIMEOUT = 0.5
        settings.LOMOTE_MODEL_ALLOW_PRIVATE = True  # the fake server listens on 127.0.0.1
        secret = secret_put(workspace_id=workspace.pk, name="openai", value="sk-contract-0123456789")
        with FakeOpenAIServer() as server:
            server.default.body = completion(content=CANNED.text, tool_calls=[("read_task_state", {})])
            provider = OpenAICompatProvider(model="fake-model-1", base_url=server.url, secret=secret)
            lease = SimpleNamespace(
                provider="openai_compat", model="fake-model-1", base_url=server.url, params={}, secret=secret
            )

            def unavailable(h):
                server.fail(503)
                return h.request()

            yield Harness(
                provider,
                "fake-model-1",
                lease,
                fail=unavailable,
                expected_retryable=True,
                calls=[("read_task_state", {})],
                says=[CANNED.text],
                answered_by="fake-model-1",  # as the server's body names it
                usage=Usage(prompt_tokens=42, completion_tokens=7, cached_prompt_tokens=0),
            )
            provider.close()


# --- the contract ------------------------------------------------------------------------------------------


def test_it_declares_a_registered_kind(harness):
    # then its kind is the kind of the leases it serves
    assert harness.provider.kind == harness.lease.provider
    assert harness.provider.kind in ProviderKind.values


def test_it_returns_a_well_formed_response(harness):
    # when the provider completes the standard request
    response = harness.provider.complete(harness.request())
    # then every field has the contract's type
    assert isinstance(response, ModelResponse)
    assert isinstance(response.text, str)
    assert isinstance(response.usage, Usage)
    for call in response.tool_calls:
        assert isinstance(call, ToolCallIntent)
        assert isinstance(call.id, str) and call.id
        assert isinstance(call.name, str) and call.name
        assert isinstance(call.arguments, dict | str)
    # and it is the provider's own answer to that request
    assert [(call.name, call.arguments) for call in response.tool_calls] == harness.calls
    assert all(words in response.text for words in harness.says), response.text


def test_it_only_calls_offered_tools_with_distinct_ids(harness):
    response = harness.provider.complete(harness.request())
    assert response.tool_calls, "the standard request is expected to lead to at least one tool call"
    assert {call.name for call in response.tool_calls} <= {tool.name for tool in TOOLS}
    ids = [call.id for call in response.tool_calls]
    assert len(ids) == len(set(ids))


def test_it_names_the_model_that_produced_the_output(harness):
    response = harness.provider.complete(harness.request())
    assert response.model == harness.answered_by


def test_it_reports_usage_as_honest_counts(harness):
    usage = harness.provider.complete(harness.request()).usage
    assert all(isinstance(n, int) and n >= 0 for n in (usage.prompt_tokens, usage.completion_tokens))
    assert 0 <= usage.cached_prompt_tokens <= usage.prompt_tokens
    assert usage.prompt_tokens > 0
    if harness.usage is not None:
        # then it is what the model reported, unchanged
        assert usage == harness.usage
    else:
        # then the estimate follows what a model would have been sent
        longer = harness.request(messages=[*MESSAGES, {"role": "user", "content": "more context " * 100}])
        assert harness.provider.complete(longer).usage.prompt_tokens > usage.prompt_tokens


def test_it_leaves_the_request_untouched(harness):
    request = harness.request()
    snapshot = copy.deepcopy(request)
    harness.provider.complete(request)
    assert request == snapshot


def test_it_fails_with_a_model_error_that_says_whether_to_retry(harness):
    # given the implementation's own way of failing
    request = harness.fail(harness)
    # when it completes
    with pytest.raises(ModelError) as caught:
        harness.provider.complete(request)
    # then the runtime gets a ModelError whose retryable flag it can act on, never a raw exception
    assert caught.value.retryable is harness.expected_retryable
    assert caught.value.code


def test_it_is_built_by_the_registry_for_a_lease_of_its_kind(harness):
    if harness.install is not None:
        with harness.install():
            built = registry.provider_for_lease(harness.lease)
            assert built is harness.provider
    else:
        built = registry.provider_for_lease(harness.lease)
        assert built is not harness.provider and type(built) is type(harness.provider)
    assert built.kind == harness.provider.kind
    # then the built provider answers the standard request like the one under test
    response = built.complete(harness.request())
    assert response.model == harness.answered_by
    assert [(call.name, call.arguments) for call in response.tool_calls] == harness.calls


# --- the registry ------------------------------------------------------------------------------------------


def _lease(kind: str):
    return SimpleNamespace(provider=kind, model="m", base_url="", params={}, secret=None)


def test_it_refuses_an_unknown_kind_instead_of_falling_back():
    with pytest.raises(ModelConfigError) as caught:
        registry.provider_for_lease(_lease("mystery"))
    assert caught.value.retryable is False
    assert "mystery" in caught.value.message


def test_it_refuses_a_replay_lease_when_no_replay_provider_is_installed():
    with pytest.raises(ModelConfigError):
        registry.provider_for_lease(_lease("replay"))


def test_it_refuses_to_register_a_kind_twice():
    with pytest.raises(ValueError, match="registered twice"):
        registry.register(ProviderKind.SCRIPTED, lambda lease: ScriptedPlanner())
    assert {"scripted", "openai_compat"} <= set(registry.registered_kinds())


def test_it_shares_an_override_across_threads_and_restores_the_previous_one():
    outer, inner = ReplayProvider([]), ReplayProvider([])
    seen = []
    with registry.override("replay", outer):
        with registry.override("replay", inner):
            # a worker thread gets the very same instance
            worker = threading.Thread(target=lambda: seen.append(registry.provider_for_lease(_lease("replay"))))
            worker.start()
            worker.join()
        # leaving the inner block restores the outer one exactly
        assert registry.provider_for_lease(_lease("replay")) is outer
    assert seen == [inner]
    with pytest.raises(ModelConfigError):
        registry.provider_for_lease(_lease("replay"))


def test_it_can_override_a_registered_kind_for_a_test():
    replay = ReplayProvider([CANNED])
    with registry.override(ProviderKind.SCRIPTED, replay):
        assert registry.provider_for_lease(_lease("scripted")) is replay
        assert registry.provider_for_lease(_lease("scripted")).complete(_request()) == CANNED
    after = SimpleNamespace(provider="scripted", model=MODEL_NAME, base_url="", params={}, secret=None)
    planner = registry.provider_for_lease(after)
    assert isinstance(planner, ScriptedPlanner)
    assert planner.complete(_request(model=MODEL_NAME)).model == MODEL_NAME
    assert replay.calls == 1


# --- the replay provider -----------------------------------------------------------------------------------


def _request(model: str = "replay") -> ModelRequest:
    return ModelRequest(model=model, params={}, messages=copy.deepcopy(MESSAGES), tools=list(TOOLS), state={})


def test_it_replays_outputs_in_order_and_records_every_request():
    # given a replay of a dict, a callable and a ModelResponse
    replay = ReplayProvider(
        [
            {"text": "one", "tool_calls": [{"name": "read_task_state"}], "usage": {"prompt_tokens": 3}},
            lambda request: {"text": f"saw {len(request.messages)} messages"},
            CANNED,
        ]
    )
    request = _request()
    # when it is called three times
    outputs = [replay.complete(request) for _ in range(3)]
    # then it returns them in order, recorded each request and counted the calls
    assert [o.text for o in outputs] == ["one", "saw 2 messages", CANNED.text]
    assert outputs[0].tool_calls == [ToolCallIntent(id="replay-0", name="read_task_state", arguments={})]
    assert outputs[0].usage == Usage(prompt_tokens=3)
    assert outputs[0].model == "replay"
    assert (replay.calls, replay.remaining) == (3, 0)
    assert replay.requests == [request] * 3


def test_it_keeps_what_each_call_saw_even_if_the_caller_changes_its_lists():
    replay = ReplayProvider([CANNED])
    request = _request()
    replay.complete(request)
    request.messages.append({"role": "user", "content": "later"})
    assert len(replay.requests[0].messages) == 2


def test_it_raises_queued_errors_and_fails_when_exhausted():
    # given a replay whose first output is a retryable failure
    replay = ReplayProvider([ModelError("slow", code="model_timeout", retryable=True), CANNED])
    # then the failure is raised, the next output returned, and running out is a final error
    with pytest.raises(ModelError) as first:
        replay.complete(_request())
    assert first.value.retryable is True
    assert replay.complete(_request()) == CANNED
    with pytest.raises(ModelError) as exhausted:
        replay.complete(_request())
    assert (exhausted.value.code, exhausted.value.retryable) == ("replay_exhausted", False)
    assert replay.calls == 3


def test_it_hands_each_output_out_once_across_threads():
    # given 40 distinct outputs and 8 threads calling at once
    replay = ReplayProvider([{"text": str(n)} for n in range(40)])
    texts, lock = [], threading.Lock()

    def work():
        for _ in range(5):
            text = replay.complete(_request()).text
            with lock:
                texts.append(text)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # then every output was returned exactly once
    assert sorted(texts, key=int) == [str(n) for n in range(40)]
    assert replay.calls == 40


@pytest.mark.django_db(transaction=True)
def test_it_lets_the_runtime_use_an_installed_replay_provider(task, workspace):
    # given a workspace whose default model profile is a replay lease
    ModelProfile.objects.create(
        workspace=workspace, name="replay", provider=ProviderKind.REPLAY, model="replay", is_default=True
    )
    replay = ReplayProvider([CANNED, {"text": "Done reading.", "model": "replay"}])
    # when a turn runs with that provider installed
    with registry.override(ProviderKind.REPLAY, replay):
        turn = rt.start_turn(task)
        turn_run(turn_id=turn.pk, generation=1)
    # then the runtime called it for each step, recorded its tool call, and the model that answered
    assert replay.calls == 2
    assert replay.requests[1].state["last_results"][0]["name"] == "read_task_state"
    assert list(Step.objects.filter(turn=turn).order_by("index").values_list("model", flat=True)) == [
        "fake-model-1",
        "replay",
    ]
    assert ToolCall.objects.get(turn=turn).provider_call_id == "call_0"
