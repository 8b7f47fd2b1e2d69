"""What a runtime step costs the database (issue 17 item 1): one read, one fenced write transaction.

Counted on real PostgreSQL commits: statements run through the connection, commits of `transaction.atomic`
blocks, and statements run outside any block (autocommit: a transaction each). Two turns of different
lengths are run; the difference divided by the extra steps is what one step costs, whatever a turn's start
and end cost.
"""

import pytest
from django.db import connection, connections

from agents.exceptions import ToolError
from agents.models import ChecklistItem, Step, Task, TaskStatus, ToolCall, ToolCallStatus
from agents.runtime.loop import turn_run
from agents.tools.base import Tool, ToolContext, ToolResult
from agents.tools.registry import override
from tests.agents.conftest import says
from tests.support.runtime import NoArgs
from workspace.models import Event

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


class Counter:
    def __init__(self):
        self.statements = self.autocommit = self.commits = 0

    def __call__(self, execute, sql, params, many, context):
        self.statements += 1
        self.autocommit += not connection.in_atomic_block
        return execute(sql, params, many, context)


def _run_counted(task, tools, script, steps: int) -> Counter:
    script([*[says("", ("test_noop", {})) for _ in range(steps)], says("Done.")])
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
    short = _run_counted(task, tools, script, steps=2)
    long = _run_counted(other, tools, script, steps=7)

    # then each extra step cost one commit (decision, tool effect and result together), one read-only
    # statement outside it, and six statements in all
    extra = 5
    assert (long.commits - short.commits) / extra == 1
    assert (long.autocommit - short.autocommit) / extra == 1
    assert (long.statements - short.statements) / extra <= 6
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
