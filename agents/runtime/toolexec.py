"""Running a step's tool calls with `started` / result logging and recovery (DESIGN §3, seed §4.1).

For each call, in index order: a finished call is reused; a non-idempotent call found `started` without a
result is NOT run again (it becomes `unknown` and the model is told to check state first); anything else
is logged `started` under the fence, validated, permission-checked on the server, run, and its result
written under the fence. Transactional tools run inside the fenced transaction that records their result.
"""

import logging
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone
from pydantic import ValidationError

from agents.exceptions import Fenced, ToolError
from agents.models import Task, ToolCall, ToolCallStatus, Turn
from agents.runtime.fencing import fence
from agents.tools.base import Tool, ToolContext, ToolResult
from agents.tools.permissions import check_tool_permission, task_role
from agents.tools.registry import tool_get
from workspace.services.events import event_append

logger = logging.getLogger(__name__)

OUTCOME_UNKNOWN = {
    "outcome_unknown": True,
    "message": (
        "This call was started by an earlier worker that stopped before recording a result, and it is not "
        "safe to repeat. It was not run again. Check the current state before deciding what to do."
    ),
}


@dataclass(frozen=True)
class Outcome:
    status: str
    result: dict | None = None
    error: dict | None = None
    tool_result: ToolResult | None = None


def _error(code: str, message: str, details: dict | None = None) -> dict:
    return {"code": code, "message": message, "details": details or {}}


def calls_run(*, turn_id: int, generation: int, calls: list[ToolCall]) -> None:
    for call in calls:
        if call.is_finished:
            continue
        if call.status == ToolCallStatus.STARTED and not call.idempotent:
            _record(turn_id, generation, call, Outcome(ToolCallStatus.UNKNOWN, result=OUTCOME_UNKNOWN), late_ok=False)
            continue
        _run_one(turn_id, generation, call)


def _run_one(turn_id: int, generation: int, call: ToolCall) -> None:
    with transaction.atomic():
        task, turn = fence(turn_id, generation)
        started = ToolCall.objects.filter(
            pk=call.pk, status__in=[ToolCallStatus.PENDING, ToolCallStatus.STARTED]
        ).update(
            status=ToolCallStatus.STARTED,
            started_generation=generation,
            started_at=timezone.now(),
            attempts=call.attempts + 1,
        )
        if started != 1:
            raise Fenced()
        event_append(
            workspace_id=task.workspace_id,
            kind="tool_call.started",
            data={"task": task.pk, "turn": turn_id, "call": call.call_id, "name": call.name},
        )
        ctx = ToolContext(
            workspace_id=task.workspace_id,
            task_id=task.pk,
            turn_id=turn_id,
            step_index=int(call.call_id.split(":")[1]),
            call_id=call.call_id,
            generation=generation,
            role=task_role(task),
        )
    call.status, call.started_generation = ToolCallStatus.STARTED, generation

    tool_cls = tool_get(call.name)
    refusal = _check(tool_cls, ctx, call)
    if refusal is not None:
        _record(turn_id, generation, call, refusal, late_ok=False)
        return
    args = tool_cls.Args.model_validate(call.input)
    tool = tool_cls()
    if tool_cls.transactional:
        # Effect and result commit together, under the fence: exactly once.
        with transaction.atomic():
            task, turn = fence(turn_id, generation)
            outcome = _invoke(tool, ctx, args, savepoint=True)
            _write(task, turn, call, outcome)
        return
    outcome = _invoke(tool, ctx, args, savepoint=False)
    _record(turn_id, generation, call, outcome, late_ok=True)


def _check(tool_cls: type[Tool] | None, ctx: ToolContext, call: ToolCall) -> Outcome | None:
    """Server-side checks, whatever the model was shown: the tool exists, is permitted, and its args are valid."""
    if tool_cls is None:
        return Outcome(ToolCallStatus.FAILED, error=_error("unknown_tool", f"There is no tool named {call.name!r}."))
    try:
        check_tool_permission(tool_cls, ctx)
    except ToolError as exc:
        return Outcome(ToolCallStatus.FAILED, error=_error(exc.code, exc.message, exc.details))
    if not isinstance(call.input, dict) or "_raw" in call.input:
        return Outcome(ToolCallStatus.FAILED, error=_error("invalid_arguments", "Arguments must be a JSON object."))
    try:
        tool_cls.Args.model_validate(call.input)
    except ValidationError as exc:
        problems = [{"field": ".".join(map(str, e["loc"])), "problem": e["msg"]} for e in exc.errors()]
        return Outcome(
            ToolCallStatus.FAILED,
            error=_error("invalid_arguments", "The arguments do not match the tool's schema.", {"problems": problems}),
        )
    return None


def _invoke(tool: Tool, ctx: ToolContext, args, *, savepoint: bool) -> Outcome:
    try:
        if savepoint:
            with transaction.atomic():  # a refusal rolls back the tool's own writes, not the result
                result = tool.run(ctx, args)
        else:
            result = tool.run(ctx, args)
    except ToolError as exc:
        return Outcome(ToolCallStatus.FAILED, error=_error(exc.code, exc.message, exc.details))
    except Fenced:
        raise
    except Exception:
        logger.exception("tool %s crashed on call %s", tool.name, ctx.call_id)
        return Outcome(ToolCallStatus.FAILED, error=_error("tool_crashed", "The tool failed unexpectedly."))
    return Outcome(ToolCallStatus.DONE, result=result.content, tool_result=result)


def _write(task: Task, turn: Turn, call: ToolCall, outcome: Outcome) -> None:
    """Record a result under a held fence, with the turn-level effects of the tool's result."""
    updated = ToolCall.objects.filter(
        pk=call.pk, status=ToolCallStatus.STARTED, started_generation=turn.generation
    ).update(status=outcome.status, result=outcome.result, error=outcome.error, finished_at=timezone.now())
    if updated != 1:
        raise Fenced()
    tool_result = outcome.tool_result
    if tool_result is not None:
        changed = []
        if tool_result.made_progress and not turn.made_progress:
            turn.made_progress = True
            changed.append("made_progress")
        if tool_result.suspend:
            turn.checkpoint = {**turn.checkpoint, "suspend": tool_result.suspend}
            changed.append("checkpoint")
        if changed:
            turn.save(update_fields=changed)
        for kind, data in tool_result.events:
            event_append(workspace_id=task.workspace_id, kind=kind, data=data)
    event_append(
        workspace_id=task.workspace_id,
        kind="tool_call.finished",
        data={"task": task.pk, "turn": turn.pk, "call": call.call_id, "name": call.name, "status": outcome.status},
    )


def _record(turn_id: int, generation: int, call: ToolCall, outcome: Outcome, *, late_ok: bool) -> None:
    try:
        with transaction.atomic():
            task, turn = fence(turn_id, generation)
            if outcome.status == ToolCallStatus.UNKNOWN:
                # Claim the started call for this generation so _write's condition holds.
                ToolCall.objects.filter(pk=call.pk, status=ToolCallStatus.STARTED).update(started_generation=generation)
            _write(task, turn, call, outcome)
    except Fenced:
        if late_ok:
            _record_late(generation, call, outcome)
        raise


def _record_late(generation: int, call: ToolCall, outcome: Outcome) -> None:
    """A fenced-out worker's side effect did happen: keep the truth on the call, change nothing else.

    Only if the call is still the one this worker started; a newer worker's run wins.
    """
    ToolCall.objects.filter(pk=call.pk, status=ToolCallStatus.STARTED, started_generation=generation).update(
        status=outcome.status, result=outcome.result, error=outcome.error, finished_at=timezone.now()
    )
