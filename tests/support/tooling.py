"""Calling agent tools in tests the way the runtime does, without a model or a queue.

The runtime validates the arguments with `Args.model_validate`, checks permission on the server with the
task's current role, and runs a transactional tool inside the transaction that records its result.
"""

from typing import Any

from django.db import transaction

from agents.models import Task, Turn, TurnStatus
from agents.selectors import task_role
from agents.tools.base import ToolContext, ToolResult
from agents.tools.permissions import check_tool_permission
from agents.tools.registry import tool_get


def tool_context(task: Task, *, step: int = 1, index: int = 0, role: str | None = None) -> ToolContext:
    turn = Turn.objects.filter(task=task).order_by("-number").first()
    if turn is None:
        turn = Turn.objects.create(task=task, number=1, status=TurnStatus.RUNNING)
    return ToolContext(
        workspace_id=task.workspace_id,
        task_id=task.pk,
        turn_id=turn.pk,
        step_index=step,
        call_id=f"{turn.pk}:{step}:{index}",
        generation=turn.generation,
        role=role if role is not None else task_role(task),
    )


def call_tool(name: str, payload: dict[str, Any], ctx: ToolContext) -> ToolResult:
    """Validate, authorise and run one call; a ToolError rolls back the tool's writes and propagates."""
    tool_cls = tool_get(name)
    assert tool_cls is not None, f"no tool {name!r}"
    check_tool_permission(tool_cls, ctx)
    args = tool_cls.Args.model_validate(payload)
    with transaction.atomic():
        return tool_cls().run(ctx, args)
