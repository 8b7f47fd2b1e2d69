"""The context, layered and cache-stable (DESIGN §7, issue 12): the prefix keeps its bytes from step to step,
compaction appends summaries and keeps recent steps verbatim, and a long task stays within its budget."""

import json
import os

import pytest

from agents.models import ContextSegment, InboxMessage, ModelProfile, Step, Task, ToolCall
from agents.runtime import context as context_module
from agents.runtime.compaction import KEEP_RECENT_STEPS, context_budget
from agents.runtime.context import ProfileSnapshot, context_build
from agents.runtime.history import History, dumps
from agents.runtime.loop import turn_run
from agents.tools.base import Tool, ToolArgs, ToolContext, ToolResult
from agents.tools.registry import override, tool_get, tools_offered
from tests.agents.conftest import says
from tests.support.factories import InboxMessageFactory

pytestmark = [pytest.mark.django_db(transaction=True)]


class SizedArgs(ToolArgs):
    size: int = 100


class Produce(Tool):
    """A lookup whose output is as large as asked: mixed tool outputs for long runs."""

    name = "test_produce"
    description = "Produce an output of the given size (test tool)."
    Args = SizedArgs

    def run(self, ctx: ToolContext, args: SizedArgs) -> ToolResult:
        return ToolResult(content={"text": ("palette swatch " * (args.size // 15 + 1))[: args.size]})


@pytest.fixture
def produce():
    with override(Produce):
        yield


def _window(workspace, tokens: int) -> ModelProfile:
    return ModelProfile.objects.create(workspace=workspace, name="small", is_default=True, context_tokens=tokens)


def _run(task: Task, tools, turns: int = 1) -> list[str]:
    outcomes = []
    for _ in range(turns):
        turn = tools.start_turn(task)
        outcomes.append(turn_run(turn_id=turn.pk, generation=turn.generation))
    return outcomes


def _steps(task: Task) -> list[Step]:
    return list(Step.objects.filter(turn__task=task).order_by("number"))


def _prefix(model, index: int) -> str:
    """The rendered prefix of the index-th request (what the step recorded the hash of)."""
    request = model.requests[index]
    return request.state["_prefix"]


@pytest.fixture
def recorded(monkeypatch):
    """Keep each built context's prefix bytes on its request, so a test can compare them."""
    real = context_module.context_build

    def build(**kwargs):
        built = real(**kwargs, detail=True)
        built.request.state["_prefix"] = built.prefix
        built.request.state["_built"] = built
        return built

    monkeypatch.setattr("agents.runtime.loop.context_build", build)


def test_the_prefix_is_byte_identical_from_step_to_step(task, tools, script, recorded, settings):
    # given a model that works for six steps without loading anything
    settings.LOMOTE_MAX_STEPS_PER_TURN = 6
    model = script([says("Looking.", ("test_noop", {}))])

    # when the turn runs
    _run(task, tools)

    # then every request had the same prefix bytes, and every step recorded the same hash
    prefixes = {_prefix(model, i) for i in range(len(model.requests))}
    assert len(model.requests) == 6 and len(prefixes) == 1
    assert len({s.prefix_hash for s in _steps(task)}) == 1
    # and the history grows by appending: each request's messages before the tail start the next one's
    for earlier, later in zip(model.requests, model.requests[1:], strict=False):
        history = earlier.messages[:-1]  # without the tail (no input: nothing new was posted)
        assert later.messages[: len(history)] == history


def _cacheable(request) -> str:
    """The request as a provider's prompt cache sees it (tools, then messages), up to the dynamic tail."""
    tail = next(i for i, m in enumerate(request.messages) if str(m["content"]).startswith("Current task state"))
    return "\n".join([*(dumps(t.as_openai()) for t in request.tools), *(dumps(m) for m in request.messages[:tail])])


def _kept(before: str, after: str) -> float:
    return len(os.path.commonprefix([before, after])) / len(before)


def test_loading_a_domain_keeps_every_earlier_byte_and_appends_its_schemas(task, tools, script, recorded):
    # given a model that loads the documents domain at its second step
    model = script(
        [
            says("Reading.", ("test_noop", {})),
            says("Loading.", ("load_tools", {"domain": "documents"})),
            says("Reading again.", ("test_noop", {})),
            says("Done."),
        ]
    )

    # when the turn runs
    _run(task, tools)

    # then the tool list and the prefix never changed: the list names every tool from the start
    steps = _steps(task)
    assert len({s.prefix_hash for s in steps}) == 1
    assert all(r.tools == model.requests[0].tools for r in model.requests)
    offered = {t.name: t for t in model.requests[0].tools}
    assert offered["write_document"].parameters == {"type": "object"}  # a stub until loaded

    # and the request after the load repeats the one before it, up to its tail, byte for byte (>= 95 %: all of it)
    before, after = _cacheable(model.requests[1]), _cacheable(model.requests[2])
    assert after.startswith(before) and _kept(before, after) >= 0.95

    # and what it appended is the load's result, with each loaded tool's full schema
    load = json.loads(model.requests[2].messages[-2]["content"])
    schemas = {s["name"]: s["parameters"] for s in load["result"]["schemas"]}
    assert schemas["write_document"] == tool_get("write_document").Args.model_json_schema()

    # and the tools the model may call grew by the domain's, recorded on the step
    assert steps[2].visible_tools[: len(steps[1].visible_tools)] == steps[1].visible_tools
    assert {"edit_document", "write_document"} <= set(steps[2].visible_tools) - set(steps[1].visible_tools)


class PaintArgs(ToolArgs):
    prompt: str


PAINTED: list[str] = []


class Paint(Tool):
    """An image-domain tool that records each run (test tool)."""

    name = "test_paint"
    description = "Paint a picture (test tool)."
    domain = "image"
    Args = PaintArgs

    def run(self, ctx: ToolContext, args: PaintArgs) -> ToolResult:
        PAINTED.append(args.prompt)
        return ToolResult(content={"painted": args.prompt})


def test_a_loaded_domain_tool_is_called_by_name_and_checked_against_its_schema(task, tools, script):
    # given a model that calls an unknown tool, then loads the image domain and calls one of its tools with
    # arguments its schema refuses, then with good ones
    PAINTED.clear()
    script(
        [
            says("Looking.", ("test_no_such_tool", {})),
            says("Loading.", ("load_tools", {"domain": "image"})),
            says("Painting.", ("test_paint", {"prompt": 42})),
            says("Painting.", ("test_paint", {"prompt": "a lighthouse"})),
            says("Done."),
        ]
    )

    # when the turn runs
    with override(Paint):
        _run(task, tools)

    # then the unknown tool and the refused arguments failed without running, and the good call ran once
    calls = list(ToolCall.objects.filter(turn__task=task).order_by("step__number", "index"))
    by_step = [(c.step.number, c.name, c.status, (c.error or {}).get("code")) for c in calls]
    assert by_step == [
        (1, "test_no_such_tool", "failed", "unknown_tool"),
        (2, "load_tools", "done", None),
        (3, "test_paint", "failed", "invalid_arguments"),
        (4, "test_paint", "done", None),
    ]
    assert PAINTED == ["a lighthouse"] and calls[-1].result == {"painted": "a lighthouse"}
    # and the load gave the tool's schema, which the refusal was checked against
    schemas = {s["name"]: s for s in calls[1].result["schemas"]}
    assert schemas["test_paint"] == {"name": "test_paint", **_spec(Paint)} and "generate_image" in schemas


def _spec(tool) -> dict:
    spec = tool.spec()
    return {"description": spec.description, "parameters": spec.parameters}


def test_a_new_profile_version_changes_the_prefix(task, tools, script, recorded, monkeypatch, settings):
    settings.LOMOTE_MAX_STEPS_PER_TURN = 2
    script([says("Looking.", ("test_noop", {}))])
    _run(task, tools)
    monkeypatch.setattr(context_module, "profile_snapshot", lambda task: ProfileSnapshot(2, "Prefers warm colours."))
    _run(task, tools)

    first, _, third, fourth = _steps(task)
    assert first.prefix_hash != third.prefix_hash == fourth.prefix_hash


def test_shuffled_tool_registration_changes_no_byte(task, lease_for):
    class Zebra(Produce):
        name = "test_zebra"

    class Apple(Produce):
        name = "test_apple"

    with override(Zebra, Apple):
        first = context_build(task=task, turn=None, lease=lease_for(task), history=History(task)).prefix
    with override(Apple, Zebra):
        second = context_build(task=task, turn=None, lease=lease_for(task), history=History(task)).prefix
    assert first == second


@pytest.fixture
def lease_for():
    from types import SimpleNamespace

    def lease(task, tokens=128_000):
        return SimpleNamespace(model="script-1", params={}, provider="scripted", context_tokens=tokens)

    return lease


def test_compaction_appends_a_summary_and_keeps_the_recent_steps_verbatim(
    task, tools, script, recorded, produce, settings, workspace
):
    # given a task on a small model whose steps return mid-sized outputs
    _window(workspace, 16_000)
    settings.LOMOTE_MAX_STEPS_PER_TURN = 40
    model = script([says("Checking the palette again.", ("test_produce", {"size": 1500}))])

    # when it works long enough to pass the high-water mark twice
    _run(task, tools)

    # then summaries were appended, each after the earlier ones, covering whole steps in order
    segments = list(ContextSegment.objects.filter(task=task).order_by("number"))
    assert len(segments) >= 2
    assert segments[0].from_step == 1
    for earlier, later in zip(segments, segments[1:], strict=False):
        assert later.from_step == earlier.to_step + 1
    assert all(s.summariser == "extractive" and s.summary.startswith("Extractive summary") for s in segments)

    # and at each compaction the prefix only grew: the old bytes are the start of the new ones
    prefixes = [_prefix(model, i) for i in range(len(model.requests))]
    for before, after in zip(prefixes, prefixes[1:], strict=False):
        assert after.startswith(before)

    # and the request right after a compaction shows the newest steps exactly as the request before it did
    changed = next(i for i in range(1, len(prefixes)) if prefixes[i] != prefixes[i - 1])
    before, after = model.requests[changed - 1].messages, model.requests[changed].messages
    recent = [m for m in before[:-1] if m["role"] in ("assistant", "tool")][-2 * KEEP_RECENT_STEPS :]
    assert all(message in after for message in recent)

    # and the originals are all still in the log
    assert Step.objects.filter(turn__task=task).count() == 40


def test_every_compaction_keeps_nine_tenths_of_the_prefix_once_the_summaries_are_full(
    task, tools, script, recorded, produce, settings, workspace
):
    # given a task on a small model that loads a domain early, then works with mid-sized outputs
    _window(workspace, 16_000)
    settings.LOMOTE_MAX_STEPS_PER_TURN = 50
    load = says("Loading.", ("load_tools", {"domain": "documents"}))
    work = says("Checking the palette again.", ("test_produce", {"size": 1500}))
    model = script([work, load, *[work] * 200])

    # when it works long enough for the summaries to fill their share of the budget
    _run(task, tools, turns=4)

    # then later compactions folded the last segment into the new one, and none touched an earlier segment
    segments = list(ContextSegment.objects.filter(task=task).order_by("number"))
    folds = [s for e, s in zip(segments, segments[1:], strict=False) if s.from_step <= e.to_step]
    assert folds and all(s.from_step > segments[0].to_step for s in folds)

    # and every compaction kept at least 90 % of the stable prefix before it
    prefixes = [_prefix(model, i) for i in range(len(model.requests))]
    changes = [(a, b) for a, b in zip(prefixes, prefixes[1:], strict=False) if a != b]
    assert len(changes) == len(segments)
    assert min(_kept(a, b) for a, b in changes) >= 0.9

    # and the loaded domain's schemas stayed in the context once its load step was summarised
    assert segments[0].from_step <= 2 <= segments[0].to_step
    last = model.requests[-1].messages
    loaded = [m["content"] for m in last if str(m["content"]).startswith("[Tools loaded in steps")]
    assert len(loaded) == 1 and '"name":"write_document"' in loaded[0]


def test_a_300_step_task_never_exceeds_its_context_budget(task, tools, script, produce, settings, workspace):
    # given a task on a 9k-token model, with mixed outputs: small, mid-sized, and larger than the context shows
    profile = _window(workspace, 9000)
    settings.LOMOTE_MAX_STEPS_PER_TURN = 50
    sizes = [80, 1200, 30_000, 300, 2500]
    responses = [
        says(f"Step {n}: comparing swatches.", ("test_produce", {"size": sizes[n % len(sizes)]})) for n in range(300)
    ]
    model = script(responses)

    # when it runs 300 steps over six turns
    _run(task, tools, turns=6)

    # then no request passed the budget, history was compacted, and nothing was lost from the log
    budget = context_budget(profile.context_tokens)
    steps = _steps(task)
    assert len(steps) == 300 and len(model.requests) == 300
    assert max(s.context_tokens for s in steps) <= budget
    assert ContextSegment.objects.filter(task=task).count() >= 5
    assert [s.number for s in steps] == list(range(1, 301))


# --- what the model sees, over REST ----------------------------------------------------------------------------


def test_the_context_endpoint_shows_each_layer_and_changes_nothing(task, tools, script, client_for, carol, workspace):
    # given a task that ran two steps and has a new message waiting
    script([says("Looking.", ("test_noop", {})), says("Done.")])
    _run(task, tools)
    InboxMessageFactory(task=task, text="Make the third poster warmer")
    before = (
        Step.objects.count(),
        ContextSegment.objects.count(),
        InboxMessage.objects.filter(status="pending").count(),
    )

    # when a viewer asks what the next decision would see
    response = client_for(carol).get(f"/api/v1/workspaces/{workspace.pk}/tasks/{task.pk}/context/")

    # then every layer is there, stable first, with its tokens, hash and content; the prefix hash is the last step's
    assert response.status_code == 200
    body = response.json()
    assert [layer["name"] for layer in body["layers"]] == [
        "system",
        "tools",
        "profile",
        "guides",
        "summaries",
        "recall",
        "history",
        "tail",
        "input",
    ]
    layers = {layer["name"]: layer for layer in body["layers"]}
    assert all(len(layer["hash"]) == 64 and layer["tokens"] >= 0 for layer in body["layers"])
    assert layers["input"]["content"] == [{"role": "user", "content": "Make the third poster warmer"}]
    assert '"goal_revision":1' in layers["tail"]["content"][0]["content"]
    assert body["prefix_hash"] == _steps(task)[-1].prefix_hash
    assert body["tokens"] == sum(layer["tokens"] for layer in body["layers"]) and body["tokens"] < body["budget"]
    # and the tool list names every tool; the model may call the base ones (nothing is loaded)
    offered = [t["function"]["name"] for t in layers["tools"]["content"]]
    assert offered == [t.name for t in tools_offered()]
    assert body["visible_tools"] == [t.name for t in tools_offered() if t.domain == "base"]
    # and nothing ran or moved
    assert before == (
        Step.objects.count(),
        ContextSegment.objects.count(),
        InboxMessage.objects.filter(status="pending").count(),
    )


# --- who writes the summary, and who may ------------------------------------------------------------------


def _long_history(task, tools, script, settings, workspace, steps=12):
    _window(workspace, 1_000_000)  # no compaction while the history is made
    settings.LOMOTE_MAX_STEPS_PER_TURN = steps
    script([says("Checking the palette again.", ("test_produce", {"size": 1500}))])
    _run(task, tools)
    history = History(task)
    history.load()
    return history


def _lease(provider: str, tokens: int):
    from agents.models import ModelLease

    return ModelLease(provider=provider, model="writer-1", params={}, context_tokens=tokens)


def test_the_tasks_model_writes_the_summary_and_a_failing_model_leaves_an_extractive_one(
    task, tools, script, produce, settings, workspace
):
    from agents.exceptions import ModelError
    from agents.runtime.compaction import compaction_run

    history = _long_history(task, tools, script, settings, workspace, steps=20)
    tokens = history.step_tokens + 3000
    window = int(tokens / 0.74)  # just past the high-water mark: one segment of the oldest steps
    writer = script([says("The person wants warm retro posters; palette checked 8 times.")])

    # when a language model's task compacts
    segment = compaction_run(
        task=task, lease=_lease("openai_compat", window), history=history, provider=writer, request_tokens=tokens
    )

    # then its own model wrote the summary, from the steps themselves, told not to invent
    assert (segment.summariser, segment.summary) == (
        "writer-1",
        "The person wants warm retro posters; palette checked 8 times.",
    )
    assert "Do not invent" in writer.requests[-1].messages[0]["content"] and writer.requests[-1].tools == []

    # when the model fails the next time
    def fail(index, request):
        raise ModelError("down", code="model_unavailable", retryable=True)

    failing = script([says("unused")], on_call=fail)
    tokens = history.step_tokens + history.summary_tokens + 3000
    window = int(tokens / 0.74)
    more = compaction_run(
        task=task, lease=_lease("openai_compat", window), history=history, provider=failing, request_tokens=tokens
    )

    # then the segment is still written, extractive, and says why
    assert more.summariser == "extractive"
    head = more.summary.splitlines()[0]
    assert head.startswith("Extractive summary") and "no model wrote it; the model failed: model_unavailable" in head


def test_a_worker_that_lost_its_turn_writes_no_summary(task, tools, script, produce, settings, workspace):
    from agents.exceptions import Fenced
    from agents.models import Turn
    from agents.runtime.compaction import compaction_run

    history = _long_history(task, tools, script, settings, workspace)
    turn = Turn.objects.filter(task=task).get()
    tokens = history.step_tokens + 3000

    # when a compaction runs under a fence its turn no longer holds (the turn ended, a newer generation took it)
    with pytest.raises(Fenced):
        compaction_run(
            task=task,
            lease=_lease("scripted", tokens),
            history=history,
            provider=None,
            request_tokens=tokens,
            fence=(turn.pk, turn.generation + 1),
        )

    # then nothing was written and the history in memory is unchanged
    assert not ContextSegment.objects.filter(task=task).exists()
    assert history.segments == [] and len(history.steps) == 12
