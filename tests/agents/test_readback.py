"""Reading back instead of truncating (DESIGN §7, issue 12 item 4): large tool outputs page by page, old steps by
number, only ever this task's own."""

import json

import pytest
from pydantic import ValidationError

from agents.exceptions import ToolError
from agents.models import InboxStatus, Step, TaskStatus, ToolCall, ToolCallStatus, TurnStatus
from agents.runtime.loop import turn_run
from agents.tools.readback import (
    HISTORY_MAX_CHARS,
    HISTORY_MAX_STEPS,
    PAGE_CHARS,
    PREVIEW_CHARS,
    page_count,
    result_for_context,
    result_stub,
    result_text,
)
from agents.tools.registry import tool_get, tools_visible
from tests.agents.conftest import says
from tests.support.factories import InboxMessageFactory, StepFactory, TaskFactory, ToolCallFactory, TurnFactory
from tests.support.tooling import call_tool, tool_context


def _dumps(value) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def big_result(chars: int) -> dict:
    """An output of about `chars` characters with quotes, newlines and non-ASCII text, so its JSON escapes."""
    rows, size, i = [], 0, 0
    while size < chars:
        row = f'row {i}: "Affiche rétro" №{i}\n'
        rows.append(row)
        size += len(_dumps(row)) + 1
        i += 1
    return {"rows": rows}


def past_turn(task):
    """A finished turn of the task (a task has at most one queued or running turn)."""
    return TurnFactory(task=task, status=TurnStatus.COMPLETED)


def add_step(task, number, *, turn=None, text="", messages=(), calls=()):
    """A committed step numbered `number` in the task, the messages it consumed, and its finished calls."""
    step = StepFactory(turn=turn or past_turn(task), number=number, text=text)
    for source, message in messages:
        InboxMessageFactory(task=task, source=source, text=message, status=InboxStatus.CONSUMED, consumed_by_step=step)
    for name, arguments, result in calls:
        ToolCallFactory(step=step, done=True, name=name, input=arguments, result=result)
    return step


@pytest.fixture
def owned(workspace):
    return TaskFactory(workspace=workspace, status=TaskStatus.ACTIVE, title="Retro posters")


@pytest.fixture
def neighbour(workspace):
    """Another task of the same workspace."""
    return TaskFactory(workspace=workspace, status=TaskStatus.ACTIVE, title="Launch film")


def test_both_tools_are_base_tools_for_viewers():
    visible = [t.name for t in tools_visible(set())]
    for name in ("read_tool_result", "read_history"):
        tool = tool_get(name)
        assert name in visible
        assert (tool.domain, tool.required_role, tool.idempotent, tool.transactional) == ("base", "viewer", True, True)


# --- the helpers the context builder shares ---------------------------------------------------------------


@pytest.mark.django_db
def test_result_text_is_the_canonical_outcome_and_a_large_one_becomes_a_stub(owned):
    step = add_step(owned, 1)
    small = ToolCallFactory(step=step, done=True, result={"b": 1, "a": "é"})
    failed = ToolCallFactory(step=step, status=ToolCallStatus.FAILED, error={"code": "x", "message": "no"})
    big = ToolCallFactory(step=step, done=True, result=big_result(20_000))

    assert result_text(small) == '{"result":{"a":"é","b":1},"status":"done"}'
    assert result_text(failed) == '{"error":{"code":"x","message":"no"},"status":"failed"}'
    assert result_for_context(small, 4000) == result_text(small)

    text = result_text(big)
    stub = result_stub(big, text)
    assert stub["status"] == "done"
    assert stub["stored"] == {"call_id": big.call_id, "chars": len(text), "pages": page_count(text)}
    assert stub["preview"] == text[:PREVIEW_CHARS]
    assert f'read_tool_result(call_id="{big.call_id}", page=1..{page_count(text)})' in stub["note"]
    assert json.loads(result_for_context(big, 4000)) == stub
    assert (page_count(""), page_count("x" * PAGE_CHARS), page_count("x" * (PAGE_CHARS + 1))) == (1, 1, 2)


@pytest.mark.django_db
def test_a_read_back_output_is_shown_whole_in_context_never_as_a_stub_of_itself(owned):
    page = ToolCallFactory(step=add_step(owned, 1), done=True, name="read_tool_result", result={"text": "x" * 9000})
    assert result_for_context(page, 4000) == result_text(page)


# --- read_tool_result -------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_200_kb_output_reads_back_page_by_page(owned):
    call = ToolCallFactory(step=add_step(owned, 1), done=True, name="search_assets", result=big_result(200_000))
    full = result_text(call)
    assert len(full) > 200_000
    ctx = tool_context(owned)

    page2 = call_tool("read_tool_result", {"call_id": call.call_id, "page": 2}, ctx).content
    assert page2["text"] == full[PAGE_CHARS : 2 * PAGE_CHARS]
    assert page2 == {
        "call_id": call.call_id,
        "name": "search_assets",
        "page": 2,
        "pages": page_count(full),
        "chars": len(full),
        "next_page": 3,
        "text": page2["text"],
    }

    pages, page = [], 1
    while page is not None:
        content = call_tool("read_tool_result", {"call_id": call.call_id, "page": page}, ctx).content
        pages.append(content["text"])
        page = content["next_page"]
    assert len(pages) == page_count(full) == -(-len(full) // PAGE_CHARS)
    assert "".join(pages) == full
    assert json.loads("".join(pages)) == {"status": "done", "result": call.result}


@pytest.mark.django_db
def test_another_tasks_call_is_refused_exactly_like_an_unknown_one(owned, neighbour):
    theirs = ToolCallFactory(step=add_step(neighbour, 1), done=True, result={"secret": "their brief"})
    ctx = tool_context(owned)
    unknown_id = f"{theirs.turn_id + 1000}:0:0"
    assert not ToolCall.objects.filter(call_id=unknown_id).exists()

    with pytest.raises(ToolError) as cross:
        call_tool("read_tool_result", {"call_id": theirs.call_id}, ctx)
    with pytest.raises(ToolError) as missing:
        call_tool("read_tool_result", {"call_id": unknown_id}, ctx)

    assert cross.value.code == missing.value.code == "not_found"
    assert cross.value.message.replace(theirs.call_id, "ID") == missing.value.message.replace(unknown_id, "ID")
    assert cross.value.details == {"call_id": theirs.call_id}
    assert "their brief" not in cross.value.message
    # The owner of that call reads it.
    assert call_tool("read_tool_result", {"call_id": theirs.call_id}, tool_context(neighbour)).content["pages"] == 1


@pytest.mark.django_db
def test_a_page_out_of_range_is_refused_with_the_valid_range(owned):
    call = ToolCallFactory(step=add_step(owned, 1), done=True, result=big_result(20_000))
    pages = page_count(result_text(call))
    ctx = tool_context(owned)
    with pytest.raises(ToolError) as error:
        call_tool("read_tool_result", {"call_id": call.call_id, "page": pages + 1}, ctx)
    assert error.value.code == "page_out_of_range"
    assert f"page 1 to {pages}" in error.value.message
    assert error.value.details == {"call_id": call.call_id, "pages": pages}
    with pytest.raises(ValidationError):
        call_tool("read_tool_result", {"call_id": call.call_id, "page": 0}, ctx)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "payload",
    [
        {"call_id": "12"},
        {"call_id": "1:2:x"},
        {"call_id": "1:2:3; drop"},
        {"call_id": "١:٢:٣"},  # Arabic-Indic digits are digits to \d, not to a call id
        {"call_id": "1" * 63 + ":1:1"},
        {"call_id": 12},
        {"call_id": "1:2:3", "page": "2"},
        {"call_id": "1:2:3", "as_task": 5},
        {},
    ],
)
def test_a_malformed_call_id_is_refused_by_the_schema(owned, payload):
    with pytest.raises(ValidationError):
        call_tool("read_tool_result", payload, tool_context(owned))


# --- read_history -----------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_read_history_shows_steps_as_they_were_in_order(owned, settings):
    settings.LOMOTE_TOOL_RESULT_CONTEXT_CHARS = 4000
    first_turn = past_turn(owned)
    add_step(
        owned,
        1,
        turn=first_turn,
        text="Planning three posters.",
        messages=[("person", "Make three retro posters")],
        calls=[("update_checklist", {"items": [{"title": "Poster 1"}]}, {"changed": True})],
    )
    big = big_result(30_000)
    add_step(owned, 2, turn=first_turn, calls=[("search_assets", {"query": "retro"}, big)])
    second_turn = past_turn(owned)
    add_step(
        owned,
        3,
        turn=second_turn,
        text="Done with the palette.",
        messages=[("person", "Warmer colours, please"), ("runtime", "The quote was declined.")],
    )
    add_step(owned, 4, turn=second_turn, text="Not asked for.")

    content = call_tool("read_history", {"from_step": 1, "to_step": 3}, tool_context(owned)).content

    assert (content["from_step"], content["to_step"], content["last_step"], content["next_from_step"]) == (
        1,
        3,
        4,
        None,
    )
    one, two, three = content["steps"]
    assert one["step"] == 1
    assert one["messages"] == [{"source": "person", "text": "Make three retro posters"}]
    assert one["text"] == "Planning three posters."
    (plan,) = one["calls"]
    call = ToolCall.objects.get(step__number=1, step__turn__task=owned)
    assert plan == {
        "call_id": call.call_id,
        "name": "update_checklist",
        "input": {"items": [{"title": "Poster 1"}]},
        "status": "done",
        "result": {"changed": True},
    }
    # A large result is its stub, as in the context: read it with read_tool_result.
    (search,) = two["calls"]
    stored = ToolCall.objects.get(step__number=2, step__turn__task=owned)
    assert search == {
        "call_id": stored.call_id,
        "name": "search_assets",
        "input": {"query": "retro"},
        **result_stub(stored, result_text(stored)),
    }
    assert three["messages"] == [
        {"source": "person", "text": "Warmer colours, please"},
        {"source": "runtime", "text": "The quote was declined."},
    ]
    assert (three["text"], three["calls"]) == ("Done with the palette.", [])


@pytest.mark.django_db
def test_read_history_is_one_query_for_the_steps_whatever_their_number(owned, django_assert_max_num_queries):
    turn = past_turn(owned)
    for number in range(1, 11):
        add_step(owned, number, turn=turn, messages=[("person", f"m{number}")], calls=[("read_task_state", {}, {})] * 2)
    ctx = tool_context(owned)
    # The last step number, the steps, their consumed messages, their calls, the workspace's forgotten terms.
    tool = tool_get("read_history")
    args = tool.Args(from_step=1, to_step=10)
    with django_assert_max_num_queries(5):
        content = tool().run(ctx, args).content
    assert [s["step"] for s in content["steps"]] == list(range(1, 11))
    assert all(len(s["calls"]) == 2 for s in content["steps"])


@pytest.mark.django_db
def test_read_history_caps_the_steps_per_call(owned):
    turn = past_turn(owned)
    for number in range(1, 26):
        add_step(owned, number, turn=turn, text=f"Step {number}.")
    content = call_tool("read_history", {"from_step": 1, "to_step": 25}, tool_context(owned)).content
    assert [s["step"] for s in content["steps"]] == list(range(1, HISTORY_MAX_STEPS + 1))
    assert (content["to_step"], content["next_from_step"]) == (HISTORY_MAX_STEPS, HISTORY_MAX_STEPS + 1)
    assert "from_step=21" in content["note"]


@pytest.mark.django_db
def test_read_history_stops_at_its_size_and_says_where_to_go_on(owned, settings):
    settings.LOMOTE_TOOL_RESULT_CONTEXT_CHARS = 4000
    turn = past_turn(owned)
    for number in range(1, 13):
        # Each result or text just under the context's limit: shown whole, about 3.9k characters a step.
        if number % 3:
            add_step(owned, number, turn=turn, calls=[("read_artifact", {"artifact_id": number}, {"text": "p" * 3900})])
        else:
            add_step(owned, number, turn=turn, text="s" * 3900)
    ctx = tool_context(owned)

    seen, start, responses = [], 1, 0
    while start is not None:
        content = call_tool("read_history", {"from_step": start, "to_step": 12}, ctx).content
        assert len(_dumps(content)) <= HISTORY_MAX_CHARS
        seen += [s["step"] for s in content["steps"]]
        start = content["next_from_step"]
        responses += 1
    # Every step exactly once, in order, over several calls.
    assert seen == list(range(1, 13))
    assert responses >= 2
    first = call_tool("read_history", {"from_step": 1, "to_step": 12}, ctx).content
    assert first["next_from_step"] == first["to_step"] + 1 <= 12
    assert first["steps"][0]["calls"][0]["result"] == {"text": "p" * 3900}


@pytest.mark.django_db
def test_a_step_too_long_alone_is_shown_condensed_within_the_size(owned, settings):
    settings.LOMOTE_TOOL_RESULT_CONTEXT_CHARS = 4000
    calls = [("read_artifact", {"artifact_id": i, "note": "n" * 5000}, {"text": "q" * 3900}) for i in range(60)]
    step = add_step(owned, 1, text="t" * 10_000, messages=[("person", "Long brief " * 1000)], calls=calls)
    add_step(owned, 2, turn=step.turn, text="Next.")

    content = call_tool("read_history", {"from_step": 1, "to_step": 2}, tool_context(owned)).content

    assert len(_dumps(content)) <= HISTORY_MAX_CHARS
    (shown,) = content["steps"]
    assert content["next_from_step"] == 2
    assert shown["text"].startswith("t" * PREVIEW_CHARS) and "clipped: 10000 chars" in shown["text"]
    assert shown["messages"][0]["text"].startswith("Long brief")
    assert "input_clipped" in shown["calls"][0] and shown["calls"][0]["stored"]["chars"] > PREVIEW_CHARS
    omitted = shown["omitted"]
    ids = list(ToolCall.objects.filter(step=step).order_by("index").values_list("call_id", flat=True))
    assert len(shown["calls"]) + omitted["calls"] == 60
    assert omitted["call_ids"] == [ids[len(shown["calls"])], ids[-1]]


@pytest.mark.django_db
@pytest.mark.parametrize(("from_step", "to_step"), [(3, 2), (1, 4), (4, 5), (4, 4)])
def test_a_range_outside_the_tasks_steps_is_refused_with_the_valid_range(owned, from_step, to_step):
    turn = past_turn(owned)
    for number in range(1, 4):
        add_step(owned, number, turn=turn)
    with pytest.raises(ToolError) as error:
        call_tool("read_history", {"from_step": from_step, "to_step": to_step}, tool_context(owned))
    assert error.value.code == "step_out_of_range"
    assert "1 to 3" in error.value.message
    assert error.value.details == {"first_step": 1, "last_step": 3}


@pytest.mark.django_db
def test_read_history_reads_only_this_tasks_steps(owned, neighbour):
    add_step(neighbour, 1, text="Their plan", messages=[("person", "Their secret brief")])
    add_step(neighbour, 2, text="More of theirs")
    add_step(owned, 1, text="Our plan")
    content = call_tool("read_history", {"from_step": 1, "to_step": 1}, tool_context(owned)).content
    assert [(s["step"], s["text"]) for s in content["steps"]] == [(1, "Our plan")]
    assert "Their" not in _dumps(content)
    with pytest.raises(ToolError):
        call_tool("read_history", {"from_step": 2, "to_step": 2}, tool_context(owned))


@pytest.mark.django_db
@pytest.mark.parametrize(
    "payload",
    [
        {"from_step": 0, "to_step": 1},
        {"from_step": 1},
        {"from_step": "1", "to_step": 2},
        {"from_step": 1, "to_step": -1},
    ],
)
def test_read_history_arguments_are_checked_by_the_schema(owned, payload):
    with pytest.raises(ValidationError):
        call_tool("read_history", payload, tool_context(owned))


# --- through the runtime ----------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_bad_read_backs_are_error_results_the_model_reads_and_good_ones_work(task, neighbour, script, tools):
    # given another task's call in the same workspace, and a model that reads back wrongly, then rightly
    theirs = ToolCallFactory(step=add_step(neighbour, 1), done=True, result={"secret": "launch-film-secret-7f3"})
    model = script(
        [
            says(
                "Reading back.",
                ("read_tool_result", {"call_id": "not-an-id"}),
                ("read_tool_result", {"call_id": theirs.call_id}),
                ("read_history", {"from_step": 5, "to_step": 1}),
                ("test_lookup", {}),
            ),
            says("Reading my own.", ("read_history", {"from_step": 1, "to_step": 1})),
            says("Understood."),
        ]
    )
    turn = tools.start_turn(task)
    # when the turn runs
    assert turn_run(turn_id=turn.pk, generation=1) == "answered"
    # then the bad calls failed with errors the model read, and the turn went on
    bad_id, cross, bad_range, lookup = ToolCall.objects.filter(turn=turn, step__number=1).order_by("index")
    assert (bad_id.status, bad_id.error["code"]) == (ToolCallStatus.FAILED, "invalid_arguments")
    assert (cross.status, cross.error["code"]) == (ToolCallStatus.FAILED, "not_found")
    assert (bad_range.status, bad_range.error["code"]) == (ToolCallStatus.FAILED, "step_out_of_range")
    assert lookup.status == ToolCallStatus.DONE
    assert [r["status"] for r in model.requests[1].state["last_results"]] == ["failed", "failed", "failed", "done"]
    assert "launch-film-secret-7f3" not in _dumps([r.messages for r in model.requests])
    # and the model read its own first step back
    (own,) = ToolCall.objects.filter(turn=turn, step__number=2)
    assert own.status == ToolCallStatus.DONE
    (first,) = own.result["steps"]
    assert first["step"] == Step.objects.get(turn=turn, index=1).number == 1
    assert [c["call_id"] for c in first["calls"]] == [bad_id.call_id, cross.call_id, bad_range.call_id, lookup.call_id]
    assert first["calls"][1]["error"]["code"] == "not_found"
