"""Running a step's tool calls with `started` / result logging and recovery (DESIGN §3, seed §4.1).

For each call, in index order: a finished call is reused; a non-idempotent call found `started` without a
result is NOT run again (it becomes `unknown` and the model is told to check state first); anything else
is validated and permission-checked on the server, then run:
- a transactional tool (database only) runs inside the fenced transaction that records it as started and
  finished: effect and result commit together, exactly once, in one commit;
- any other tool is logged `started` under the fence and committed first, runs outside any transaction,
  and its result is written under the fence. If the fence was lost meanwhile, the result is still kept on
  the call as what happened (when this worker's run is the call's latest), and nothing else changes.
"""

import logging
from dataclasses import dataclass

from django.db import connection, transaction
from django.utils import timezone
from pydantic import ValidationError

from agents.exceptions import Fenced, ToolError
from agents.fencing import fence_task, fence_turn
from agents.models import Autonomy, Task, ToolCall, ToolCallStatus, Turn
from agents.runtime.snapshot import TaskSnapshot
from agents.runtime.steplog import call_result_write
from agents.selectors import with_acting_role
from agents.services.cards import card_gate_call
from agents.tools.base import Tool, ToolArgs, ToolContext, ToolResult
from agents.tools.permissions import check_tool_permission
from agents.tools.registry import tool_get
from agents.transitions import tool_call_move_check, tool_call_sources
from workspace.services.events import event_append

logger = logging.getLogger(__name__)

OUTCOME_UNKNOWN = {
    "outcome_unknown": True,
    "message": (
        "This call was started by an earlier worker that stopped before recording a result, and it is not "
        "safe to repeat. It was not run again. Check the current state before deciding what to do."
    ),
}


NEEDS_CONFIRMATION = (
    "Nothing was done: a person must confirm this call first, on the card named here. The turn ends now. Once "
    "they confirm you will be told; then call the tool again with exactly the same arguments."
)


@dataclass(frozen=True)
class Outcome:
    status: str
    result: dict | None = None
    error: dict | None = None
    tool_result: ToolResult | None = None


@dataclass(frozen=True)
class RunContext:
    """What the runner already knows about the turn it holds."""

    turn_id: int
    generation: int
    task_id: int
    workspace_id: int


def _error(code: str, message: str, details: dict | None = None) -> dict:
    return {"code": code, "message": message, "details": details or {}}


def calls_run(run: RunContext, calls: list[ToolCall]) -> list[Outcome]:
    """Finish every unfinished call; updates the ToolCall objects in place and returns new outcomes."""
    outcomes = []
    for call in calls:
        if call.is_finished:
            continue
        if call.status == ToolCallStatus.STARTED and not call.idempotent:
            outcome = Outcome(ToolCallStatus.UNKNOWN, result=OUTCOME_UNKNOWN)
            _record(run, call, outcome, late_ok=False)
        else:
            outcome = _run_one(run, call)
        outcomes.append(outcome)
    return outcomes


def transactional(name: str) -> bool:
    tool_cls = tool_get(name)
    return tool_cls is not None and tool_cls.transactional


def read_only(name: str) -> bool:
    """Runs after its decision, recorded with the next (Tool.read_only). A tool that also spends, cannot be undone
    or acts outside our database goes the full way whatever it declares: its checks may open a card."""
    tool_cls = tool_get(name)
    return (
        tool_cls is not None
        and tool_cls.read_only
        and tool_cls.transactional
        and not (tool_cls.paid or tool_cls.irreversible)
    )


def calls_run_read_only(run: RunContext, calls: list[ToolCall], task: Task) -> tuple[list[Outcome], list[ToolCall]]:
    """Run a step's read-only calls (Tool.read_only) once its decision has committed: no transaction, no
    `started` mark, nothing written. Each outcome is set on its call (status, result, error, times), and the
    calls come back for the caller to record with its next decision (steplog.decision_write's `results`) or
    with `calls_record`; a crash before that leaves them pending, and they run again (they change nothing).

    `task`: the role, permissions and autonomy read with the decision. A result that carries events, progress
    or a wait breaks the read-only contract: it is recorded at once, the full way, rather than lost.
    """
    outcomes, unrecorded = [], []
    for call in calls:
        tool_cls = tool_get(call.name)
        started = timezone.now()
        ctx = _context(run, call, task)
        checked = _check(tool_cls, ctx, call)
        outcome = checked if isinstance(checked, Outcome) else _invoke(tool_cls(), ctx, checked)
        outcomes.append(outcome)
        effects = outcome.tool_result
        if effects is not None and (effects.events or effects.suspend or effects.made_progress):
            logger.error("read-only tool %s returned effects on call %s; recorded at once", call.name, call.call_id)
            call.started_at = started
            with transaction.atomic():
                fence_task(run.turn_id, run.generation, run.task_id)  # _write may update the turn: task first
                _write(run, call, outcome)
            continue
        call.status, call.result, call.error = outcome.status, outcome.result, outcome.error
        call.started_generation, call.started_at, call.finished_at = run.generation, started, timezone.now()
        unrecorded.append(call)
    return outcomes, unrecorded


def calls_record(run: RunContext, calls: list[ToolCall]) -> None:
    """Record read-only calls run by `calls_run_read_only` in one fenced transaction of their own: what the turn
    does when no next decision will carry them (it ends, hands off, or stops)."""
    with transaction.atomic():
        fence_turn(run.turn_id, run.generation)
        for call in calls:
            _write(run, call, Outcome(call.status, result=call.result, error=call.error))


class InlineFailed(Exception):
    """A transactional call run in the decision's transaction failed: the whole transaction must roll back (its
    partial writes with it) and run again with this outcome recorded instead of running the call."""

    def __init__(self, index: int, outcome: Outcome):
        self.index, self.outcome = index, outcome


def calls_run_in_decision(
    run: RunContext, calls: list[ToolCall], task: Task, failed: dict[int, Outcome] | None = None
) -> tuple[list[Outcome], TaskSnapshot | None]:
    """Run the step's leading transactional calls inside the decision's own fenced transaction (issue 17).

    The caller locked `task` (with the decision's statement, agents/runtime/steplog.py), fenced the turn and
    inserted the calls: a transactional tool's effect and result then commit with the decision that asked for
    it, in one commit. No savepoint per call (two round trips each): a call that fails raises InlineFailed, the
    caller rolls the whole transaction back and runs it again with the failures it knows in `failed` (call
    index → outcome), recorded without running. Exactly once still holds: the decision, the effects and the
    results commit together or not at all. The first call that is not transactional, and every call after it,
    stays pending for `calls_run`.

    When every call of the step runs here, the last result's statement also reads the task's snapshot for the
    next step (returned with the outcomes; else None): nothing the step does after it changes what it read.
    """
    outcomes, snapshot = [], None
    failed = failed or {}
    for call in calls:
        tool_cls = tool_get(call.name)
        if tool_cls is None or not tool_cls.transactional:
            break
        if call.index in failed:
            outcome = failed[call.index]
        else:
            ctx = _context(run, call, task)
            checked = _check(tool_cls, ctx, call)
            outcome = checked if isinstance(checked, Outcome) else _invoke(tool_cls(), ctx, checked)
            if outcome.status != ToolCallStatus.DONE and not isinstance(checked, Outcome):
                raise InlineFailed(call.index, outcome)
        snapshot = _write(run, call, outcome, snapshot=call is calls[-1])
        outcomes.append(outcome)
    return outcomes, snapshot


def _context(run: RunContext, call: ToolCall, task: Task) -> ToolContext:
    """The call's context, with the task's role, permissions and autonomy as read with the task row."""
    return ToolContext(
        workspace_id=run.workspace_id,
        task_id=run.task_id,
        turn_id=run.turn_id,
        step_index=int(call.call_id.split(":")[1]),
        call_id=call.call_id,
        generation=run.generation,
        role=task.acting_role,
        permissions=task.permissions,
        autonomy=task.autonomy,
    )


class _RollBack(Exception):
    """A transactional tool failed: undo its writes, then record the failure on its own."""

    def __init__(self, outcome: Outcome):
        self.outcome = outcome


def _run_one(run: RunContext, call: ToolCall) -> Outcome:
    tool_cls = tool_get(call.name)
    if tool_cls is not None and tool_cls.transactional:
        try:
            with transaction.atomic():
                task = fence_task(run.turn_id, run.generation, run.task_id)
                ctx = _context(run, call, task)
                checked = _check(tool_cls, ctx, call)
                outcome = checked if isinstance(checked, Outcome) else _invoke(tool_cls(), ctx, checked)
                if outcome.status != ToolCallStatus.DONE and not isinstance(checked, Outcome):
                    raise _RollBack(outcome)
                _write(run, call, outcome)
            return outcome
        except _RollBack as failed:
            with transaction.atomic():
                fence_turn(run.turn_id, run.generation)
                _write(run, call, failed.outcome)
            return failed.outcome

    with transaction.atomic():
        fence_turn(run.turn_id, run.generation)
        now = timezone.now()
        started = ToolCall.objects.filter(pk=call.pk, status__in=tool_call_sources(ToolCallStatus.STARTED)).update(
            status=ToolCallStatus.STARTED, started_generation=run.generation, started_at=now, attempts=call.attempts + 1
        )
        if started != 1:
            raise Fenced()
        event_append(
            workspace_id=run.workspace_id,
            kind="tool_call.started",
            data={"task": run.task_id, "turn": run.turn_id, "call": call.call_id, "name": call.name},
        )
        task = acting_task(run.task_id)
    call.status, call.started_generation, call.started_at = ToolCallStatus.STARTED, run.generation, now
    call.attempts += 1
    ctx = _context(run, call, task)
    checked = _check(tool_cls, ctx, call)
    outcome = checked if isinstance(checked, Outcome) else _invoke(tool_cls(), ctx, checked)
    _record(run, call, outcome, late_ok=isinstance(checked, ToolArgs))
    return outcome


def acting_task(task_id: int) -> Task:
    """The task's role, permissions and autonomy, in one query."""
    columns = ("created_by_id", "created_by_key_id", "permissions", "autonomy")
    return with_acting_role(Task.objects.filter(pk=task_id).only(*columns)).get()


def _check(tool_cls: type[Tool] | None, ctx: ToolContext, call: ToolCall) -> ToolArgs | Outcome:
    """Server-side checks, whatever the model was shown: the tool exists, is permitted, its args are valid,
    and — for an irreversible call, or a paid one when the task's autonomy is "ask" — a person confirmed it.

    Returns the validated arguments, or the outcome the model will read (a failure, or a wait for a card).
    """
    invalid = call.input.get("_invalid") if isinstance(call.input, dict) else None
    if isinstance(invalid, dict):  # the provider's check failed even after its repair round (loop._call_input)
        code, message = str(invalid.get("code", "invalid_tool_call")), str(invalid.get("message", ""))
        return Outcome(ToolCallStatus.FAILED, error=_error(code, message, invalid.get("details")))
    if tool_cls is None:
        return Outcome(ToolCallStatus.FAILED, error=_error("unknown_tool", f"There is no tool named {call.name!r}."))
    try:
        check_tool_permission(tool_cls, ctx)
    except ToolError as exc:
        return Outcome(ToolCallStatus.FAILED, error=_error(exc.code, exc.message, exc.details))
    if not isinstance(call.input, dict) or "_raw" in call.input:
        return Outcome(ToolCallStatus.FAILED, error=_error("invalid_arguments", "Arguments must be a JSON object."))
    try:
        args = tool_cls.Args.model_validate(call.input)
    except ValidationError as exc:
        problems = [{"field": ".".join(map(str, e["loc"])), "problem": e["msg"]} for e in exc.errors()]
        return Outcome(
            ToolCallStatus.FAILED,
            error=_error("invalid_arguments", "The arguments do not match the tool's schema.", {"problems": problems}),
        )
    if tool_cls.irreversible or (tool_cls.paid and ctx.autonomy == Autonomy.ASK):
        wait = card_gate_call(
            workspace_id=ctx.workspace_id,
            task_id=ctx.task_id,
            turn_id=ctx.turn_id,
            call_id=call.call_id,
            tool=call.name,
            arguments=call.input,
            irreversible=tool_cls.irreversible,
        )
        if wait is not None:
            content = {"status": "needs_confirmation", **wait, "message": NEEDS_CONFIRMATION}
            return Outcome(ToolCallStatus.DONE, result=content, tool_result=ToolResult(content=content, suspend=wait))
    return args


def _invoke(tool: Tool, ctx: ToolContext, args: ToolArgs) -> Outcome:
    try:
        result = tool.run(ctx, args)
    except ToolError as exc:
        return Outcome(ToolCallStatus.FAILED, error=_error(exc.code, exc.message, exc.details))
    except Fenced:
        raise
    except Exception:
        logger.exception("tool %s crashed on call %s", tool.name, ctx.call_id)
        return Outcome(ToolCallStatus.FAILED, error=_error("tool_crashed", "The tool failed unexpectedly."))
    return Outcome(ToolCallStatus.DONE, result=result.content, tool_result=result)


def _write(run: RunContext, call: ToolCall, outcome: Outcome, *, snapshot: bool = False) -> TaskSnapshot | None:
    """Record a result under a held fence, with the turn-level effects of the tool's result.

    The condition accepts a call still pending (a transactional tool starts and finishes in this same
    transaction) or started by this generation, as far as the move table allows the outcome from there;
    anything else means another worker got there first. With `snapshot`, the same statement reads the task's
    snapshot for the next step and returns it (PostgreSQL; else None).
    """
    tool_result = outcome.tool_result
    if tool_result is not None and (tool_result.made_progress or tool_result.suspend):
        turn = Turn.objects.only("checkpoint").get(pk=run.turn_id)
        changes = {}
        if tool_result.made_progress:
            changes["made_progress"] = True
        if tool_result.suspend:
            changes["checkpoint"] = {
                **turn.checkpoint,
                "suspend": merge_waits(turn.checkpoint.get("suspend"), tool_result.suspend),
            }
        Turn.objects.filter(pk=run.turn_id).update(**changes)
    if tool_result is not None:
        for kind, data in tool_result.events:
            event_append(workspace_id=run.workspace_id, kind=kind, data=data)
    finished = {
        "task": run.task_id,
        "turn": run.turn_id,
        "call": call.call_id,
        "name": call.name,
        "status": outcome.status,
    }
    attempts = call.attempts + (0 if call.status == ToolCallStatus.STARTED else 1)
    next_read = None
    if connection.vendor == "postgresql":
        # The compare-and-set and its event in one statement (agents/runtime/steplog.py).
        updated, next_read = call_result_write(
            call_id=call.pk,
            sources=tool_call_sources(outcome.status),
            status=outcome.status,
            result=outcome.result,
            error=outcome.error,
            generation=run.generation,
            started_at=call.started_at,
            attempts=attempts,
            workspace_id=run.workspace_id,
            event=finished,
            snapshot_of=run.task_id if snapshot else None,
        )
    else:
        now = timezone.now()
        updated = (
            ToolCall.objects.filter(pk=call.pk, status__in=tool_call_sources(outcome.status))
            .exclude(status=ToolCallStatus.STARTED, started_generation__lt=run.generation)
            .update(
                status=outcome.status,
                result=outcome.result,
                error=outcome.error,
                started_generation=run.generation,
                started_at=call.started_at or now,
                finished_at=now,
                attempts=attempts,
            )
        )
        if updated == 1:
            event_append(workspace_id=run.workspace_id, kind="tool_call.finished", data=finished)
    if updated != 1:
        raise Fenced()
    call.status, call.result, call.error = outcome.status, outcome.result, outcome.error
    return next_read


def merge_waits(current: dict | None, new: dict) -> dict:
    """Several calls of one step may each ask to wait (e.g. three generation jobs): wait for all of them."""
    if current and current.get("type") == new.get("type") == "jobs":
        return {"type": "jobs", "jobs": sorted(set(current.get("jobs", [])) | set(new.get("jobs", [])))}
    return new


def _record(run: RunContext, call: ToolCall, outcome: Outcome, *, late_ok: bool) -> None:
    try:
        with transaction.atomic():
            # The task row first, like every task writer: _write may update the turn a second time in this
            # transaction, and PostgreSQL then re-checks the turn's foreign key, taking a KEY SHARE lock on
            # the task at commit. Holding the task already keeps the order task → turn (no deadlock with a
            # job completion or a cancel, which lock the task and then want the turn).
            fence_task(run.turn_id, run.generation, run.task_id)
            if outcome.status == ToolCallStatus.UNKNOWN:
                # Take the started call over for this generation so _write's condition holds.
                ToolCall.objects.filter(pk=call.pk, status=ToolCallStatus.STARTED).update(
                    started_generation=run.generation
                )
                call.started_generation = run.generation
            _write(run, call, outcome)
    except Fenced:
        if late_ok:
            _record_late(run.generation, call, outcome)
        raise


def _record_late(generation: int, call: ToolCall, outcome: Outcome) -> None:
    """A fenced-out worker's side effect did happen: keep the truth on the call, change nothing else.

    Only if the call is still the one this worker started; a newer worker's run wins.
    """
    tool_call_move_check(ToolCallStatus.STARTED, outcome.status)
    ToolCall.objects.filter(pk=call.pk, status=ToolCallStatus.STARTED, started_generation=generation).update(
        status=outcome.status, result=outcome.result, error=outcome.error, finished_at=timezone.now()
    )
