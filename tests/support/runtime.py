"""Tools and helpers for runtime fault-injection tests.

Tools record each execution in memory and can be frozen per worker thread, so a test can stop a worker
exactly between its `started` write and the tool's run, the window the seed's §11.1 test targets.
"""

import threading
from collections import Counter
from contextlib import contextmanager

from django.db import transaction

from agents.models import Task
from agents.services.turns import turn_start
from agents.tools.base import Tool, ToolArgs, ToolContext, ToolResult


class Gate:
    """Freeze the calling thread inside a tool until released (only threads named in `frozen`)."""

    def __init__(self):
        self.frozen: set[str] = set()
        self.reached = threading.Event()
        self.release = threading.Event()

    def maybe_wait(self):
        if threading.current_thread().name in self.frozen:
            self.reached.set()
            assert self.release.wait(30), "the test never released the frozen worker"


GATE = Gate()
EXECUTIONS: Counter = Counter()


class NoArgs(ToolArgs):
    pass


class LookupTool(Tool):
    """A read-only lookup: idempotent, runs outside any transaction."""

    name = "test_lookup"
    description = "Look something up (test tool)."
    Args = NoArgs
    idempotent = True
    transactional = False

    def run(self, ctx: ToolContext, args: NoArgs) -> ToolResult:
        GATE.maybe_wait()
        EXECUTIONS[(self.name, ctx.call_id)] += 1
        return ToolResult(content={"found": "the poster palette", "call": ctx.call_id})


class ChargeTool(Tool):
    """An external side effect that is NOT safe to repeat."""

    name = "test_charge"
    description = "Do something that cannot be repeated safely (test tool)."
    Args = NoArgs
    idempotent = False
    transactional = False

    def run(self, ctx: ToolContext, args: NoArgs) -> ToolResult:
        EXECUTIONS[(self.name, ctx.call_id)] += 1
        GATE.maybe_wait()
        return ToolResult(content={"charged": True}, job_submitted=True)


class NoopTool(Tool):
    """A database-only tool that does nothing: the runtime's own overhead, measured by the bench."""

    name = "test_noop"
    description = "Do nothing (test tool)."
    Args = NoArgs

    def run(self, ctx: ToolContext, args: NoArgs) -> ToolResult:
        EXECUTIONS[(self.name, ctx.call_id)] += 1
        return ToolResult(content={"ok": True})


class ReadTool(Tool):
    """Read-only (Tool.read_only): run after its decision commits, recorded with the next one."""

    name = "test_read"
    description = "Read something (test tool)."
    Args = NoArgs
    read_only = True

    def run(self, ctx: ToolContext, args: NoArgs) -> ToolResult:
        EXECUTIONS[(self.name, ctx.call_id)] += 1
        return ToolResult(content={"read": ctx.call_id})


TEST_TOOLS = (LookupTool, ChargeTool, NoopTool, ReadTool)


def reset():
    GATE.__init__()
    EXECUTIONS.clear()


@contextmanager
def test_tools():
    from agents.tools.registry import override

    reset()
    with override(*TEST_TOOLS):
        yield


def start_turn(task: Task, trigger: str = "test"):
    with transaction.atomic():
        task = Task.objects.select_for_update().get(pk=task.pk)
        return turn_start(task=task, trigger=trigger)
