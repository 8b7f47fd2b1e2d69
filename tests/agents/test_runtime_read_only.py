"""Read-only calls (Tool.read_only, issue 17 item 1): run once their decision commits, recorded with the next.

A step of read-only calls is one statement, atomic by itself: no BEGIN or COMMIT round trip, and it also reads what
the next step's context needs. What must hold around it, on PostgreSQL: every result is recorded once, before the
next step's own event; a turn that ends without another decision records them on its way out; a worker that dies or
is fenced out before the next decision records nothing, and the call runs again under the next worker; what the
person writes while a read runs is read one step later, never lost.
"""

import pytest
from django.db import connection

from agents.exceptions import ModelConfigError
from agents.models import InboxMessage, InboxStatus, Step, Task, TaskStatus, ToolCall, ToolCallStatus, Turn, TurnStatus
from agents.runtime.loop import turn_run
from agents.runtime.watchdog import watchdog_sweep
from agents.tools.base import Tool, ToolContext, ToolResult
from agents.tools.registry import override
from tests.agents.conftest import says
from tests.agents.test_runtime_faults import after_lease_expiry
from tests.agents.test_runtime_hot_path import run_counted
from tests.support.runtime import NoArgs
from workspace.models import Event

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def _stepping(workspace, task) -> list[str]:
    kinds = Event.objects.filter(workspace=workspace, data__task=task.pk).order_by("seq").values_list("kind", flat=True)
    return [k for k in kinds if k in ("step.committed", "tool_call.finished")]


def test_a_step_of_read_only_calls_is_one_statement(task, workspace, alice, tools, script):
    # given two tasks whose turns make 2 and 7 steps that each read, then answer
    other = Task.objects.create(workspace=workspace, title="Other", created_by=alice, status=TaskStatus.IDLE)

    # when both turns run
    short = run_counted(task, tools, script, steps=2, tool="test_read")
    long = run_counted(other, tools, script, steps=7, tool="test_read")

    # then each extra step cost one statement, its own transaction (the decision, with the last step's results and
    # the next step's snapshot), and no transaction block
    extra = 5
    assert (long.statements - short.statements) / extra == 1
    assert (long.autocommit - short.autocommit) / extra == 1
    assert long.commits == short.commits
    # and every call ran once and is recorded done with its result, attempt 1, by this generation
    calls = list(ToolCall.objects.filter(turn__task=other).order_by("step__index"))
    assert [c.status for c in calls] == [ToolCallStatus.DONE] * 7
    assert [c.result for c in calls] == [{"read": c.call_id} for c in calls]
    assert all(c.attempts == 1 and c.started_generation == 1 and c.finished_at >= c.started_at for c in calls)
    assert all(n == 1 for n in tools.EXECUTIONS.values()) and len(tools.EXECUTIONS) == 9
    # and each result's event comes before the next step's, gapless
    assert _stepping(workspace, other) == ["step.committed"] + ["tool_call.finished", "step.committed"] * 7
    seqs = list(Event.objects.filter(workspace=workspace).order_by("seq").values_list("seq", flat=True))
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))


def test_the_model_reads_a_read_only_result_in_the_very_next_step(task, tools, script):
    # given a model that reads, then answers
    model = script([says("Reading.", ("test_read", {})), says("Read it.")])
    turn = tools.start_turn(task)

    # when the turn runs
    assert turn_run(turn_id=turn.pk, generation=turn.generation, holder="w") == "answered"

    # then step 2's request carried step 1's result, which the log holds as well
    call = ToolCall.objects.get(turn=turn)
    assert model.requests[1].state["last_results"][0]["status"] == "done"
    assert call.result == {"read": f"{turn.pk}:1:1"}


def test_a_turn_that_stops_after_read_only_calls_records_their_results_on_its_way_out(
    task, workspace, tools, script, settings
):
    # given a step cap of 2 and a model that reads at every step
    settings.LOMOTE_MAX_STEPS_PER_TURN = 2
    script([says("", ("test_read", {}), ("test_read", {}))])
    turn = tools.start_turn(task)

    # when the turn runs into the cap
    turn_run(turn_id=turn.pk, generation=turn.generation, holder="w")

    # then it stopped with all four calls recorded once, the last step's two after its decision
    turn.refresh_from_db()
    assert turn.status != TurnStatus.RUNNING
    calls = ToolCall.objects.filter(turn=turn).order_by("step__index", "index")
    assert [(c.status, c.attempts) for c in calls] == [(ToolCallStatus.DONE, 1)] * 4
    assert (
        _stepping(workspace, task)
        == ["step.committed"] + ["tool_call.finished"] * 2 + ["step.committed"] + ["tool_call.finished"] * 2
    )


class Crash(BaseException):
    """The worker process dies: nothing after it runs (not an Exception, so nothing catches it)."""


def test_a_worker_that_dies_before_the_next_decision_leaves_the_read_pending_and_the_next_worker_runs_it_once_more(
    task, workspace, tools, script, settings
):
    # given a model that reads, then answers; the worker dies during the second model call
    def die_at_step_two(index, request):
        if request.state["step_index"] == 2 and not died:
            died.append(True)
            raise Crash()

    died = []
    script([says("Reading.", ("test_read", {})), says("Read it.")], on_call=die_at_step_two)
    turn = tools.start_turn(task)
    with pytest.raises(Crash):
        turn_run(turn_id=turn.pk, generation=turn.generation, holder="A")

    # then the read ran but nothing recorded it: the call is pending, no finished event
    call = ToolCall.objects.get(turn=turn)
    assert call.status == ToolCallStatus.PENDING and call.result is None
    assert tools.EXECUTIONS[("test_read", call.call_id)] == 1
    assert _stepping(workspace, task) == ["step.committed"]

    # when its lease expires and the next worker takes the turn over
    assert watchdog_sweep(now=after_lease_expiry(settings)).taken_over == [turn.pk]
    turn.refresh_from_db()
    assert turn_run(turn_id=turn.pk, generation=turn.generation, holder="B") == "answered"

    # then the read ran once more and is recorded once, with one finished event, before the answer
    call.refresh_from_db()
    assert (call.status, call.result, call.started_generation) == (ToolCallStatus.DONE, {"read": call.call_id}, 2)
    assert tools.EXECUTIONS[("test_read", call.call_id)] == 2
    assert _stepping(workspace, task) == ["step.committed", "tool_call.finished", "step.committed"]
    assert Step.objects.filter(turn=turn).count() == 2


def test_a_worker_fenced_out_before_its_next_decision_records_no_read_only_result(task, workspace, tools, script):
    # given a model that reads, then answers; the turn is taken from the worker during its second model call
    def take_turn_at_step_two(index, request):
        if request.state["step_index"] == 2:
            Turn.objects.filter(pk=turn.pk).update(generation=turn.generation + 1)

    script([says("Reading.", ("test_read", {})), says("Read it.")], on_call=take_turn_at_step_two)
    turn = tools.start_turn(task)

    # when the worker tries to commit its next decision
    assert turn_run(turn_id=turn.pk, generation=turn.generation, holder="A") == "fenced"

    # then neither that decision nor the read's result was written
    call = ToolCall.objects.get(turn=turn)
    assert (call.status, call.result) == (ToolCallStatus.PENDING, None)
    assert Step.objects.filter(turn=turn).count() == 1
    assert _stepping(workspace, task) == ["step.committed"]


def test_a_read_only_call_that_is_not_allowed_is_recorded_failed_with_the_next_decision(task, tools, script):
    # given a model that calls a read-only tool with arguments its schema refuses
    model = script([says("Reading.", ("test_read", {"unexpected": 1})), says("It failed.")])
    turn = tools.start_turn(task)

    # when the turn runs
    assert turn_run(turn_id=turn.pk, generation=turn.generation, holder="w") == "answered"

    # then the call never ran, and its refusal is what the model read and the log holds
    call = ToolCall.objects.get(turn=turn)
    assert (call.status, call.error["code"]) == (ToolCallStatus.FAILED, "invalid_arguments")
    assert not tools.EXECUTIONS
    assert model.requests[1].state["last_results"][0]["status"] == "failed"


def test_a_model_failure_after_read_only_calls_records_them_before_the_turn_fails(task, workspace, tools, script):
    # given a model that reads, then fails for good at the next step
    def fail_at_step_two(index, request):
        if request.state["step_index"] == 2:
            raise ModelConfigError("The model is misconfigured.")

    script([says("Reading.", ("test_read", {})), says("Never said.")], on_call=fail_at_step_two)
    turn = tools.start_turn(task)

    # when the turn runs
    turn_run(turn_id=turn.pk, generation=turn.generation, holder="w")

    # then the turn failed, and what step 1 read is recorded, with its event
    turn.refresh_from_db()
    assert turn.status == TurnStatus.FAILED
    call = ToolCall.objects.get(turn=turn)
    assert (call.status, call.result) == (ToolCallStatus.DONE, {"read": call.call_id})
    assert _stepping(workspace, task) == ["step.committed", "tool_call.finished"]


class ReadThatTellsTool(Tool):
    """Declared read-only, yet returns an event: it breaks the contract, and must not lose what it returned."""

    name = "test_read_that_tells"
    description = "Read, and announce it (test tool)."
    Args = NoArgs
    read_only = True

    def run(self, ctx: ToolContext, args: NoArgs) -> ToolResult:
        return ToolResult(content={"read": True}, events=[("test.told", {"task": ctx.task_id})])


def test_a_read_only_tool_that_returns_effects_is_recorded_at_once_with_them(task, workspace, tools, script):
    # given a model that calls a "read-only" tool returning an event, then watches the log before answering
    seen = {}

    def look_at_step_two(index, request):
        if request.state["step_index"] == 2:
            seen["call"] = ToolCall.objects.get(turn=turn).status

    script([says("Reading.", ("test_read_that_tells", {})), says("Done.")], on_call=look_at_step_two)
    turn = tools.start_turn(task)

    # when the turn runs
    with override(ReadThatTellsTool):
        assert turn_run(turn_id=turn.pk, generation=turn.generation, holder="w") == "answered"

    # then its result and its event were written before the next decision, once
    assert seen["call"] == ToolCallStatus.DONE
    kinds = Event.objects.filter(workspace=workspace).order_by("seq").values_list("kind", flat=True)
    stepping = [k for k in kinds if k in ("test.told", "step.committed", "tool_call.finished")]
    assert stepping == ["step.committed", "test.told", "tool_call.finished", "step.committed"]


class ReadWhileThePersonWritesTool(Tool):
    """Read-only; while it runs, the person posts a message and edits the brief (in their own transactions)."""

    name = "test_read_while_written"
    description = "Read slowly (test tool)."
    Args = NoArgs
    read_only = True

    def run(self, ctx: ToolContext, args: NoArgs) -> ToolResult:
        if not InboxMessage.objects.filter(task_id=ctx.task_id).exists():
            task = Task.objects.get(pk=ctx.task_id)
            InboxMessage.objects.create(task=task, author=task.created_by, text="Make it blue")
            Task.objects.filter(pk=ctx.task_id).update(brief="A blue poster")
        return ToolResult(content={"read": True})


def test_the_next_step_reads_what_the_decision_statement_saw_and_what_arrived_meanwhile_comes_one_step_later(
    task, tools, script
):
    # given a model that reads three times, then answers; during the first read the person writes
    model = script(
        [says("", ("test_read_while_written", {})) for _ in range(3)] + [says("Done.")],
    )
    turn = tools.start_turn(task)

    # when the turn runs
    with override(ReadWhileThePersonWritesTool):
        assert turn_run(turn_id=turn.pk, generation=turn.generation, holder="w") == "answered"

    # then step 2 was built from what step 1's statement read (before the person wrote), step 3 from step 2's
    # statement, which saw the message and the new brief
    inbox = [r.state["new_messages"] for r in model.requests]
    briefs = [r.state["task"]["brief"] for r in model.requests]
    assert [[m["text"] for m in messages] for messages in inbox] == [[], [], ["Make it blue"], []]
    assert briefs[:2] == [task.brief, task.brief] and briefs[2:] == ["A blue poster", "A blue poster"]
    # and the message was consumed once, by step 3
    message = InboxMessage.objects.get(task=task)
    assert message.status == InboxStatus.CONSUMED and message.consumed_by_step.index == 3


def test_a_message_that_arrives_during_the_last_read_starts_the_next_turn(task, tools, script):
    # given a model that reads once, then answers without seeing the message posted during that read
    model = script([says("", ("test_read_while_written", {})), says("Done.")])
    turn = tools.start_turn(task)

    # when the turn runs
    with override(ReadWhileThePersonWritesTool):
        outcome = turn_run(turn_id=turn.pk, generation=turn.generation, holder="w")

    # then the message is not lost: it waits, and the next turn is queued for it
    assert model.requests[1].state["new_messages"] == []
    assert outcome == "next_turn"
    assert InboxMessage.objects.get(task=task).status == InboxStatus.PENDING
    assert Turn.objects.filter(task=task, status=TurnStatus.QUEUED, trigger="message").count() == 1


def test_the_decision_finds_the_last_steps_results_by_index_under_the_plan_kept_for_every_execution(
    task, workspace, alice, tools, script
):
    # given a call log of a few thousand rows (another task's), and a connection that plans each prepared statement
    # once for all executions (what PostgreSQL settles on after five), showing each plan it runs
    other = Task.objects.create(workspace=workspace, title="Other", created_by=alice, status=TaskStatus.IDLE)
    turn = tools.start_turn(other)
    step = Step.objects.create(turn=turn, index=1, number=1, generation=1, decision={})
    ToolCall.objects.bulk_create(
        ToolCall(turn=turn, step=step, index=i, call_id=f"old:{i}", name="test_read", input={}) for i in range(3000)
    )
    plans: list[str] = []
    db = connection.connection
    with connection.cursor() as cursor:
        cursor.execute("LOAD 'auto_explain'")
        cursor.execute("SET auto_explain.log_min_duration = 0")
        cursor.execute("SET auto_explain.log_level = 'notice'")
        cursor.execute("SET plan_cache_mode = force_generic_plan")

    def shown(notice):
        plans.append(notice.message_primary)

    db.add_notice_handler(shown)

    # when a turn reads twice, then answers
    try:
        script([says("", ("test_read", {})), says("", ("test_read", {})), says("Done.")])
        turn = tools.start_turn(task)
        assert turn_run(turn_id=turn.pk, generation=turn.generation, holder="w") == "answered"
    finally:
        db.remove_notice_handler(shown)
        with connection.cursor() as cursor:
            cursor.execute("SET auto_explain.log_min_duration = -1")
            cursor.execute("RESET plan_cache_mode")

    # then the turn's three decisions (the last two recording a read's result) looked the calls up by index, not by
    # reading the whole log
    decisions = [plan for plan in plans if "Insert on agents_step" in plan]
    assert len(decisions) == 3 and all("Update on agents_toolcall" in plan for plan in decisions)
    assert all("Seq Scan on agents_toolcall" not in plan for plan in decisions)
    assert all(c.status == ToolCallStatus.DONE for c in ToolCall.objects.filter(turn=turn))
