"""What a runtime step costs the database (issue 17 item 1): one read, one fenced write transaction.

Counted on real PostgreSQL commits: statements run through the connection, commits of `transaction.atomic`
blocks, and statements run outside any block (autocommit: a transaction each). Two turns of different
lengths are run; the difference divided by the extra steps is what one step costs, whatever a turn's start
and end cost.
"""

import threading

import pytest
from django.db import connection, connections, transaction

from agents.exceptions import Fenced, ToolError
from agents.leases import lease_claim
from agents.models import ChecklistItem, ChecklistStatus, Step, Task, TaskStatus, ToolCall, ToolCallStatus, Turn
from agents.runtime.loop import turn_run
from agents.runtime.steplog import decision_write
from agents.tools.base import Tool, ToolContext, ToolResult
from agents.tools.registry import override
from tests.agents.conftest import says
from tests.support.runtime import EXECUTIONS, NoArgs
from workspace.models import Event

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


class Counter:
    def __init__(self):
        self.statements = self.autocommit = self.commits = 0

    def __call__(self, execute, sql, params, many, context):
        self.statements += 1
        self.autocommit += not connection.in_atomic_block
        return execute(sql, params, many, context)


def run_counted(task, tools, script, steps: int, tool: str = "test_noop") -> Counter:
    """Run a turn of `steps` steps that each call `tool`, then answer; count what it did on the database."""
    script([*[says("", (tool, {})) for _ in range(steps)], says("Done.")])
    turn = tools.start_turn(task)
    counter = Counter()
    db = connections["default"]  # the wrapper itself, not the proxy: its commit is what atomic() calls
    real_commit = db.commit

    def commit():
        counter.commits += 1
        real_commit()

    db.commit = commit
    try:
        with connection.execute_wrapper(counter):
            assert turn_run(turn_id=turn.pk, generation=turn.generation, holder="w") == "answered"
    finally:
        del db.commit  # the class's method again
    return counter


def test_a_step_with_a_transactional_tool_is_one_read_and_one_write_transaction(task, workspace, alice, tools, script):
    # given two tasks whose turns make 2 and 7 steps with a database-only tool before answering
    other = Task.objects.create(workspace=workspace, title="Other", created_by=alice, status=TaskStatus.IDLE)

    # when both turns run
    short = run_counted(task, tools, script, steps=2)
    long = run_counted(other, tools, script, steps=7)

    # then each extra step cost one commit (decision, tool effect and result together), nothing outside it, and
    # two statements in all: the decision (which also locks the task) and the result (which also reads the next
    # step's snapshot) — no savepoint around the tool
    extra = 5
    assert (long.commits - short.commits) / extra == 1
    assert (long.autocommit - short.autocommit) / extra == 0
    assert (long.statements - short.statements) / extra == 2
    # and the log says what the ORM path said: each call done with its result, events in order
    calls = ToolCall.objects.filter(turn__task=other).order_by("step__index")
    assert [c.status for c in calls] == [ToolCallStatus.DONE] * 7 and all(c.result == {"ok": True} for c in calls)
    assert list(Step.objects.filter(turn__task=other).order_by("index").values_list("index", flat=True)) == list(
        range(1, 9)
    )
    kinds = [e.kind for e in Event.objects.filter(workspace=workspace, data__task=other.pk).order_by("seq")]
    stepping = [k for k in kinds if k in ("step.committed", "tool_call.finished")]
    assert stepping == ["step.committed", "tool_call.finished"] * 7 + ["step.committed"]
    assert tools.EXECUTIONS and all(n == 1 for n in tools.EXECUTIONS.values())


class WriteThenFailTool(Tool):
    """Database-only: writes a checklist item, then refuses. Its write must not outlive its failure."""

    name = "test_write_then_fail"
    description = "Write, then fail (test tool)."
    Args = NoArgs

    def run(self, ctx: ToolContext, args: NoArgs) -> ToolResult:
        ChecklistItem.objects.create(task_id=ctx.task_id, position=1, title="Half-done")
        raise ToolError("The tool refused after writing.")


def test_a_transactional_tool_that_fails_in_the_decisions_transaction_leaves_no_write_but_keeps_the_step(
    task, tools, script
):
    # given a model that calls a database-only tool that writes and then fails, then answers
    model = script([says("Trying.", ("test_write_then_fail", {}), ("test_noop", {})), says("It failed.")])
    turn = tools.start_turn(task)

    # when the turn runs (the calls run in the decision's own transaction)
    with override(WriteThenFailTool):
        assert turn_run(turn_id=turn.pk, generation=turn.generation, holder="w") == "answered"

    # then the failed tool's write was rolled back, its failure recorded, the decision and the next call kept
    assert not ChecklistItem.objects.filter(task=task).exists()
    failed, noop = ToolCall.objects.filter(turn=turn).order_by("index")
    assert (failed.status, failed.error["code"]) == (ToolCallStatus.FAILED, "tool_error")
    assert (noop.status, noop.result) == (ToolCallStatus.DONE, {"ok": True})
    assert list(Step.objects.filter(turn=turn).order_by("index").values_list("text", flat=True)) == [
        "Trying.",
        "It failed.",
    ]
    # and the model read the failure once, in the step after
    assert model.calls_for_step(1) == 1
    assert [r["status"] for r in model.requests[1].state["last_results"]] == ["failed", "done"]


class WriteTool(Tool):
    """Database-only: writes a checklist item and succeeds."""

    name = "test_write"
    description = "Write a checklist item (test tool)."
    Args = NoArgs

    def run(self, ctx: ToolContext, args: NoArgs) -> ToolResult:
        EXECUTIONS[(self.name, ctx.call_id)] += 1
        ChecklistItem.objects.create(
            task_id=ctx.task_id, position=ctx.step_index * 10, title="Written", status=ChecklistStatus.DONE
        )
        return ToolResult(content={"written": True})


def test_the_next_step_reads_what_the_transactional_tool_wrote_in_the_decisions_transaction(task, tools, script):
    # given a model that writes a checklist item with a database-only tool, then answers
    model = script([says("Writing.", ("test_write", {})), says("Done.")])
    turn = tools.start_turn(task)

    # when the turn runs (the result's statement, in the decision's transaction, reads the next step's snapshot)
    with override(WriteTool):
        turn_run(turn_id=turn.pk, generation=turn.generation, holder="w")

    # then step 2's request carried the item the tool wrote
    assert [i["title"] for i in model.requests[1].state["checklist"]] == ["Written"]


class WriteOutsideTool(Tool):
    """Not transactional: runs after the decision commits, and adds a checklist item."""

    name = "test_write_outside"
    description = "Write a checklist item outside the decision (test tool)."
    Args = NoArgs
    transactional = False

    def run(self, ctx: ToolContext, args: NoArgs) -> ToolResult:
        ChecklistItem.objects.create(task_id=ctx.task_id, position=99, title="Written after")
        return ToolResult(content={"written": True})


def test_a_step_whose_later_call_runs_outside_reads_its_next_snapshot_after_that_call(task, tools, script):
    # given a decision with a database-only call, then one that runs after the commit and also writes
    model = script([says("Both.", ("test_write", {}), ("test_write_outside", {})), says("Done.")])
    turn = tools.start_turn(task)

    # when the turn runs
    with override(WriteTool, WriteOutsideTool):
        turn_run(turn_id=turn.pk, generation=turn.generation, holder="w")

    # then step 2 saw both writes: the snapshot was not taken before the second call ran
    assert [i["title"] for i in model.requests[1].state["checklist"]] == ["Written", "Written after"]


def test_a_failed_call_after_a_successful_one_keeps_the_first_effect_once_and_runs_the_rest(task, tools, script):
    # given a decision whose database-only calls write, then write and fail, then do nothing
    script([says("Three.", ("test_write", {}), ("test_write_then_fail", {}), ("test_noop", {})), says("Done.")])
    turn = tools.start_turn(task)
    EXECUTIONS.clear()

    # when the turn runs (the failure rolls the decision's transaction back; it runs again with the failure known)
    with override(WriteTool, WriteThenFailTool):
        assert turn_run(turn_id=turn.pk, generation=turn.generation, holder="w") == "done"  # its one item is done

    # then the first call's write is there once, the failed call's write is not, and every call has its outcome
    assert list(ChecklistItem.objects.filter(task=task).values_list("title", flat=True)) == ["Written"]
    calls = ToolCall.objects.filter(turn=turn).order_by("index")
    assert [c.status for c in calls] == [ToolCallStatus.DONE, ToolCallStatus.FAILED, ToolCallStatus.DONE]
    assert calls[1].error["code"] == "tool_error"
    # and one step, one committed decision event and one finished event per call
    assert Step.objects.filter(turn=turn).count() == 2
    kinds = [e.kind for e in Event.objects.filter(data__turn=turn.pk).order_by("seq")]
    assert kinds.count("step.committed") == 2 and kinds.count("tool_call.finished") == 3
    # the noop ran once, in the transaction that committed (the rolled-back attempt stopped at the failure)
    assert [n for (name, _), n in EXECUTIONS.items() if name == "test_noop"] == [1]


def test_the_decision_statement_locks_the_task_before_the_turn(task, tools):
    # given a running turn, and another transaction holding the task's row (as a job completion or a cancel does)
    turn = _running_turn(task, tools)
    holding, release, done = threading.Event(), threading.Event(), threading.Event()
    outcome = {}

    def hold_task():
        try:
            with transaction.atomic():
                Task.objects.select_for_update().get(pk=task.pk)
                holding.set()
                release.wait(30)
        finally:
            connection.close()

    def decide():
        try:
            with transaction.atomic():
                outcome["task"] = _decision_locking_the_task(task, turn).task
        finally:
            connection.close()
            done.set()

    holder = threading.Thread(target=hold_task)
    holder.start()
    assert holding.wait(10)
    decider = threading.Thread(target=decide)
    decider.start()
    try:
        # when the decision statement waits for the task
        assert not done.wait(0.5)
        # then it holds nothing on the turn yet: the turn's row can be locked without waiting
        with transaction.atomic():
            assert Turn.objects.select_for_update(nowait=True).get(pk=turn.pk).pk == turn.pk
    finally:
        release.set()
        holder.join(10)
        decider.join(10)
    # and once the task is free it writes, returning the task as locked with what a tool's checks read
    assert outcome["task"].pk == task.pk and outcome["task"].acting_role == "owner"
    assert Step.objects.filter(turn=turn).count() == 1


def test_a_decision_for_a_task_no_longer_active_writes_nothing(task, tools):
    # given a running turn whose task was paused meanwhile
    turn = _running_turn(task, tools)
    Task.objects.filter(pk=task.pk).update(status=TaskStatus.PAUSED)

    # when a decision that runs calls is written, then it is fenced out and nothing is written
    with pytest.raises(Fenced), transaction.atomic():
        _decision_locking_the_task(task, turn)
    assert not Step.objects.filter(turn=turn).exists()


def _running_turn(task, tools) -> Turn:
    turn = tools.start_turn(task)
    assert lease_claim(turn_id=turn.pk, generation=turn.generation, holder="w")
    return turn


def _decision_locking_the_task(task, turn):
    """A decision with no calls, written with the task's lock as a decision running transactional calls is."""
    return decision_write(
        turn_id=turn.pk,
        generation=turn.generation,
        workspace_id=task.workspace_id,
        step_fields=_step_fields(),
        calls=[],
        event={"task": task.pk},
        task_id=task.pk,
    )


def _step_fields() -> dict:
    return {
        "index": 1,
        "number": 1,
        "generation": 1,
        "text": "",
        "decision": {"tool_calls": []},
        "model": "test",
        "prompt_tokens": 0,
        "cached_prompt_tokens": 0,
        "completion_tokens": 0,
        "prefix_hash": "",
        "context_tokens": 0,
        "visible_tools": [],
        "memory": {},
    }
