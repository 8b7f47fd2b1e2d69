"""Resuming interrupted work in the runtime (DESIGN §11): the task's portable checkpoint, the present it is judged
against, and what each verdict of the evaluator (agents/resume.py) does to the task.

Three moments run it before anything is planned: a takeover of a turn whose worker died (the watchdog, then the
new generation's first act), a resume after a pause (the REST resume, synchronously, so it answers the verdict),
and any turn that starts while an earlier one left a call `started` (agents/services/turns.py flags it).

The action whose outcome is unknown is settled first, by its tool's receipt lookup (agents/tools/base.py): a
matching receipt records the call as done without running it again (no second submission, the hold captured
once when its job ends). No receipt of a tool whose replay contract says so (`replay_safe_by_key`: the receipt
store is ours and commits with the effect) proves nothing happened: the call runs again under the same id, by
itself — a worker crash alone never asks a person (DESIGN §11). Anything only a person can settle — no receipt
elsewhere, a conflicting one, a lookup that cannot be made (a remote provider that never confirmed), a changed
goal or configuration — opens a review card and the task waits.
"""

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import DatabaseError, transaction
from django.db.models import OuterRef, Subquery
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from agents.exceptions import ToolPermissionDenied
from agents.locks import task_locked
from agents.models import (
    Card,
    CardKind,
    ChecklistItem,
    ChecklistStatus,
    Task,
    TaskStatus,
    ToolCall,
    ToolCallStatus,
    Turn,
)
from agents.resume import (
    MESSAGES,
    Action,
    Checkpoint,
    ReceiptLookupUnavailable,
    ResumeContext,
    Resumption,
    Status,
    Verdict,
    evaluate,
)
from agents.runtime.toolexec import OUTCOME_UNKNOWN
from agents.selectors import task_role
from agents.services.cards import CONFIRM_HANDLERS, card_open, spoken
from agents.services.task_status import task_status_set
from agents.services.tasks import task_resume_prepare
from agents.services.turns import ACTIVE_TURN_STATUSES, basis_now, turn_start
from agents.services.wakeups import decide_after_jobs
from agents.tools.base import Tool, ToolContext, ToolResult
from agents.tools.permissions import check_tool_permission
from agents.tools.registry import tool_get, tool_names_keeping_receipts
from billing.models import OrderStatus
from billing.selectors import order_find, task_spending
from billing.services.orders import order_release
from workspace.models import ArtifactVersion, ArtifactView, Role, role_at_least
from workspace.selectors import Access
from workspace.services.events import event_append

REVIEW_SOURCE = "resume_review"


@dataclass
class Reading:
    """What judging a task reads once: the interrupted call and its action, spending, sources, the acting role."""

    call: ToolCall | None
    tool: type[Tool] | None
    action: Action | None
    spending: dict[str, int | None]
    sources: tuple[int | None, int | None]
    role: str

    @classmethod
    def of(cls, task: Task) -> "Reading":
        call = interrupted_call(task)
        tool, action = _action(task, call) if call is not None else (None, None)
        return cls(
            call=call,
            tool=tool,
            action=action,
            spending=task_spending(workspace_id=task.workspace_id, task_id=task.pk),
            sources=source_revisions(task),
            role=task_role(task),
        )


@dataclass
class Judged:
    """A verdict with what it was about: the task's interrupted call (if any) and that call's tool."""

    resumption: Resumption
    call: ToolCall | None
    tool: type[Tool] | None
    present: dict[str, Any]  # the basis the task would have now (goal revision and configuration)


# --- the checkpoint and the present ---


def interrupted_call(task: Task) -> ToolCall | None:
    """The first call of the task left `started` (the worker died, or the task was paused, mid-call) that may
    have acted. A started call of a harmless tool (idempotent, no effect elsewhere) is simply run again."""
    started = ToolCall.objects.filter(turn__task=task, status=ToolCallStatus.STARTED)
    for call in started.order_by("turn__number", "step__index", "index"):
        tool = tool_get(call.name)
        if tool is not None and tool.outcome_can_be_unknown():
            return call
    return None


def source_revisions(task: Task) -> tuple[int | None, int | None]:
    """(sourceRevision, minSourceRevision) from the versions of the artifacts the task read.

    Version ids grow with every version written anywhere. sourceRevision is the watermark up to which the task
    saw every version of its sources (just below the first version of a source it has not seen, if any; else
    the newest it saw); minSourceRevision is the newest version of any of its sources now. The work is stale
    exactly when a source gained a version it has not seen — written by someone else (its own writes it saw).
    """
    views = ArtifactView.objects.filter(viewer_task_id=task.pk, artifact__deleted_at__isnull=True)
    versions = ArtifactVersion.objects.filter(artifact=OuterRef("artifact"))
    rows = list(
        views.annotate(
            seen=Subquery(versions.filter(number=OuterRef("seen_version")).values("pk")[:1]),
            unseen=Subquery(
                versions.filter(number__gt=OuterRef("seen_version"))
                .exclude(author_task_id=task.pk)
                .order_by("number")
                .values("pk")[:1]
            ),
            newest=Subquery(versions.order_by("-number").values("pk")[:1]),
        ).values_list("seen", "unseen", "newest")
    )
    if not rows:
        return None, None
    unseen = [u for _, u, _ in rows if u is not None]
    seen = max((s for s, _, _ in rows if s is not None), default=0)
    newest = max((n for _, _, n in rows if n is not None), default=0)
    return (min(unseen) - 1 if unseen else max(seen, newest)), newest


def _status(task: Task, call: ToolCall | None) -> str:
    if task.status == TaskStatus.DONE:
        return Status.COMPLETED
    if task.status == TaskStatus.CANCELLED:
        return Status.CANCELLED
    if call is not None:
        return Status.ACTION_UNKNOWN
    waiting = task.waiting_for or {}
    if task.status == TaskStatus.WAITING and waiting.get("type") == "approval":
        return Status.AWAITING_APPROVAL
    if task.status == TaskStatus.WAITING and waiting.get("resume"):
        return Status.NEEDS_REVIEW
    if task.status == TaskStatus.PAUSED:
        return Status.PAUSED
    if task.status == TaskStatus.FAILED:
        return Status.FAILED
    return Status.RUNNING if task.status == TaskStatus.ACTIVE else Status.READY


def _action(task: Task, call: ToolCall) -> tuple[type[Tool] | None, Action]:
    tool = tool_get(call.name)
    call_input = call.input if isinstance(call.input, dict) else {}
    if tool is None:
        return None, Action(id=call.call_id, tool=call.name, target={"workspace": task.workspace_id}, params={})
    return tool, tool.action(workspace_id=task.workspace_id, call_input=call_input).model_copy(
        update={"id": call.call_id}
    )


def checkpoint_export(task: Task, reading: Reading | None = None) -> Checkpoint:
    """The task's portable checkpoint (schema 1): what its work relies on and where it stands."""
    reading = reading or Reading.of(task)
    basis = task.basis or basis_now(task)  # a task from before bases were kept relies on the present
    active = Turn.objects.filter(task=task, status__in=ACTIVE_TURN_STATUSES).first()
    completed = ToolCall.objects.filter(
        turn__task=task, status=ToolCallStatus.DONE, name__in=tool_names_keeping_receipts()
    )
    checklist = list(task.checklist.order_by("position").values("position", "title", "status"))
    return Checkpoint(
        schema_=1,
        mission=task.pk,
        tenant=task.workspace_id,
        subject=task.created_by_id,
        goal_revision=basis["goal_revision"],
        source_revision=reading.sources[0],
        config_version=basis["config_version"],
        status=_status(task, reading.call),
        facts={
            "title": task.title,
            "taskStatus": task.status,
            "checklist": checklist,
            "openItems": sum(1 for item in checklist if item["status"] in ("pending", "in_progress")),
        },
        completed_actions=list(completed.order_by("pk").values_list("call_id", flat=True)),
        pending_action=reading.action,
        spent=reading.spending["spent"],
        held=reading.spending["held"],
        step_count=active.steps.count() if active is not None else 0,
    )


def _may_act(task: Task, role: str) -> bool:
    """The person the task acts for can still edit in its workspace, and the task is not put away."""
    return task.archived_at is None and role_at_least(role, Role.EDITOR)


def _contract(task: Task, reading: Reading) -> list[dict[str, Any]]:
    """The (tool, target) pairs the task may act on, as far as the pending action is concerned: its own pair if the
    tool exists, the task may use it now, and it targets this workspace."""
    tool, action = reading.tool, reading.action
    if tool is None or action is None or not isinstance(action.target, dict):
        return []
    if action.target.get("workspace") != task.workspace_id:
        return []
    ctx = ToolContext(
        workspace_id=task.workspace_id,
        task_id=task.pk,
        turn_id=0,
        step_index=0,
        call_id=str(action.id),
        generation=0,
        role=reading.role,
        permissions=task.permissions,
        autonomy=task.autonomy,
    )
    try:
        check_tool_permission(tool, ctx)
    except ToolPermissionDenied:
        return []
    return [{"tool": action.tool, "target": action.target, "replay_safe_by_key": tool.replay_safe_by_key}]


def present(task: Task, reading: Reading) -> tuple[ResumeContext, dict[str, Any]]:
    """The context a checkpoint is judged against: the task as it is now, for the person it acts for; and the
    basis the work would have if it went on now."""
    now = basis_now(task)
    spending, remaining = reading.spending, reading.spending["remaining"]
    context = ResumeContext(
        mission=task.pk,
        tenant=task.workspace_id,
        subject=task.created_by_id,
        goal_revision=now["goal_revision"],
        config_version=now["config_version"],
        min_source_revision=reading.sources[1],
        next_step_allowed=_may_act(task, reading.role),
        # An approved budget: what was spent and held plus what it still allows (None: each order is authorised
        # by billing as it comes, so no ceiling applies here).
        budget=None if remaining is None else spending["spent"] + spending["held"] + remaining,
        next_step_cost=0,
        max_steps=settings.LOMOTE_MAX_STEPS_PER_TURN,
        cancel_requested=task.status == TaskStatus.CANCELLED,
        lookup_available=True,
        pending_contract=_contract(task, reading),
    )
    return context, now


def judge(task: Task) -> Judged:
    """Evaluate the task's checkpoint against the present (the task row locked by the caller). Reads only."""
    reading = Reading.of(task)
    checkpoint = checkpoint_export(task, reading)
    context, now = present(task, reading)
    tool = reading.tool

    def lookup(operation_id: str) -> Action | None:
        if not tool.keeps_receipts:
            raise ReceiptLookupUnavailable(f"{tool.name} keeps no receipts: its outcome cannot be checked")
        try:
            return tool.receipt(workspace_id=task.workspace_id, operation_id=operation_id, expected=reading.action)
        except DatabaseError as exc:
            raise ReceiptLookupUnavailable(f"the receipt store did not answer ({type(exc).__name__})") from exc

    return Judged(evaluate(checkpoint, context, lookup), reading.call, tool, now)


# --- what a verdict does ---

STOPS = (
    Verdict.BUDGET_EXCEEDED,
    Verdict.NEXT_STEP_NOT_AUTHORIZED,
    Verdict.RESUME_STEP_LIMIT,
    Verdict.MISSION_COMPLETED,
)


def record(task: Task, judged: Judged, *, reason: str, turn: Turn | None) -> dict[str, Any]:
    """Record the verdict on the turn (if any) and in the event log the task's log and the studio read."""
    resumption = judged.resumption
    entry = {
        "reason": reason,
        "verdict": resumption.verdict.value,
        "message": resumption.to_json()["message"],
        "lookups": resumption.lookups,
        "call": judged.call.call_id if judged.call is not None else None,
        "checked_at": timezone.now().isoformat(),
    }
    if turn is not None:
        turn.checkpoint = {**turn.checkpoint, "resume": entry}
        Turn.objects.filter(pk=turn.pk).update(checkpoint=turn.checkpoint)
    event_append(
        workspace_id=task.workspace_id,
        kind="task.resume_checked",
        data={"task": task.pk, "turn": turn.pk if turn is not None else None, **entry},
    )
    return entry


def settle_done(task: Task, judged: Judged, *, turn: Turn | None) -> ToolResult | None:
    """A matching receipt: record the interrupted call as done from it — never run it again."""
    call, tool = judged.call, judged.tool
    if call is None or tool is None or judged.resumption.lookups == 0:
        return None
    if judged.resumption.checkpoint.pending_action is not None:
        return None  # not settled (the verdict kept it pending)
    result = tool.settled(workspace_id=task.workspace_id, operation_id=call.call_id, call_input=call.input)
    now = timezone.now()
    updated = ToolCall.objects.filter(pk=call.pk, status=ToolCallStatus.STARTED).update(
        status=ToolCallStatus.DONE, result=result.content, error=None, finished_at=now
    )
    if not updated:
        return None
    call.status, call.result = ToolCallStatus.DONE, result.content
    if turn is not None and call.turn_id == turn.pk and result.made_progress:
        Turn.objects.filter(pk=turn.pk).update(made_progress=True)
    event_append(
        workspace_id=task.workspace_id,
        kind="tool_call.finished",
        data={"task": task.pk, "turn": call.turn_id, "call": call.call_id, "name": call.name, "status": call.status},
    )
    return result


def open_review(task: Task, judged: Judged, *, turn: Turn | None) -> Card:
    """A card for the person: what was found, and what confirming does (the task row locked), in the task's
    language — the check's own finding too (agents/resume.py marks it for makemessages; it is said here)."""
    with spoken(task):
        return _open_review(task, judged, turn=turn)


def _open_review(task: Task, judged: Judged, *, turn: Turn | None) -> Card:
    resumption, call = judged.resumption, judged.call
    verdict = resumption.verdict
    lines = [_(MESSAGES[verdict])]
    if call is not None:
        lines.append(_("Interrupted call: %(name)s (%(id)s).") % {"name": call.name, "id": call.call_id})
    if resumption.receipt is not None:
        lines.append(
            _("What the target holds under that id: %(receipt)s.") % {"receipt": resumption.to_json()["receipt"]}
        )
    changed = resumption.details.get("changed")  # no receipt, and what changed meanwhile (agents/resume.py)
    if Verdict.GOAL_CHANGED_REVIEW in (verdict, changed):
        lines.append(
            _("The work was planned for goal revision %(then)s; the goal is now revision %(now)s: %(brief)s")
            % {"then": task.basis.get("goal_revision"), "now": task.goal_revision, "brief": task.brief[:300]}
        )
    if Verdict.CONFIG_CHANGED_REVIEW in (verdict, changed):
        lines.append(
            _("Then: %(then)s. Now: %(now)s.")
            % {"then": _config_text(task.basis.get("config")), "now": _config_text(judged.present["config"])}
        )
    lines.append(str(CONFIRM_MEANS.get(verdict, _("Confirm to let the agent go on, or adjust to tell it what to do."))))
    return card_open(
        task,
        kind=CardKind.CONFIRM,
        title=str(REVIEW_TITLES.get(verdict, _("Review the interrupted work before it goes on"))),
        body="\n".join(lines),
        payload={
            "source": REVIEW_SOURCE,
            "verdict": verdict.value,
            "call": call.call_id if call is not None else None,
            "receipt": resumption.to_json().get("receipt"),
            # What changed meanwhile when nothing was found (a goal, a configuration): why a person is asked.
            "changed": resumption.details.get("changed"),
        },
        turn=turn,
    )


def _config_text(config: dict[str, Any] | None) -> str:
    if not config:
        return _("unknown")
    model, policy = config.get("model", {}), config.get("policy", {})
    return _("%(model)s, no confirmation up to %(threshold)s credits (%(cap)s a day)") % {
        "model": f"{model.get('provider')}/{model.get('model')}",
        "threshold": policy.get("no_confirm_threshold"),
        "cap": policy.get("daily_no_confirm_cap"),
    }


REVIEW_TITLES = {
    Verdict.ACTION_STILL_UNKNOWN: gettext_lazy("An interrupted step cannot be checked yet"),
    Verdict.ACTION_NOT_FOUND_REVIEW: gettext_lazy("An interrupted step left no trace: run it again?"),
    Verdict.ACTION_RECEIPT_CONFLICT: gettext_lazy("An interrupted step conflicts with what was recorded"),
    Verdict.GOAL_CHANGED_REVIEW: gettext_lazy("The goal changed while this task was interrupted"),
    Verdict.CONFIG_CHANGED_REVIEW: gettext_lazy("The model or spending rules changed while this task was interrupted"),
}
CONFIRM_MEANS = {
    Verdict.ACTION_STILL_UNKNOWN: gettext_lazy(
        "Confirm to check again; its money stays held until its outcome is known."
    ),
    Verdict.ACTION_NOT_FOUND_REVIEW: gettext_lazy("Confirm to let the agent do it again (its hold is released first)."),
    Verdict.ACTION_RECEIPT_CONFLICT: gettext_lazy(
        "Confirm to leave what was recorded as it is and let the agent go on."
    ),
    Verdict.GOAL_CHANGED_REVIEW: gettext_lazy(
        "Confirm to go on with the new goal; spending approved for the old one is asked anew."
    ),
    Verdict.CONFIG_CHANGED_REVIEW: gettext_lazy("Confirm to go on with the new configuration."),
}


def apply(task: Task, judged: Judged, *, reason: str, turn: Turn | None) -> tuple[str, ToolResult | None]:
    """Carry out a verdict (task row locked; `turn` fenced when a runner checks its own turn).

    Returns what follows — "go" when the work may go on now, "replay" when the interrupted call must run again
    under its id first (the runner does it), "wait_jobs" when the settled call left it waiting on a job, "review"
    when a card was opened, "awaiting_approval", "cancelled" or the verdict's name when it stops — and the result
    the interrupted call was settled with, if it was.
    """
    verdict = judged.resumption.verdict
    record(task, judged, reason=reason, turn=turn)
    result = settle_done(task, judged, turn=turn)
    if judged.resumption.needs_person:
        card = open_review(task, judged, turn=turn)
        task_status_set(
            task,
            TaskStatus.WAITING,
            reason="resume_review",
            waiting_for={"type": "person", "card": card.pk, "resume": verdict.value},
            summary=False,
        )
        return "review", result
    if verdict == Verdict.AWAITING_APPROVAL:
        return "awaiting_approval", result
    if verdict == Verdict.CANCELLED_OBSERVED:
        return "cancelled", result
    if verdict in STOPS:
        return verdict.value, result
    task.basis = judged.present  # the work goes on under the present goal and configuration
    Task.objects.filter(pk=task.pk).update(basis=task.basis)
    _close_harmless_leftovers(task)
    if verdict == Verdict.ACTION_NOT_FOUND_REPLAY:
        return "replay", result
    return ("wait_jobs" if result is not None and result.suspend else "go"), result


def _close_harmless_leftovers(task: Task) -> None:
    """Calls of ended turns left `started` by tools that cannot have acted elsewhere (a read, a lookup): nothing
    to settle, and no turn will finish them — they are closed as interrupted, so the log stops showing them
    running and later turns are not checked for them again."""
    harmless = [
        call.pk
        for call in ToolCall.objects.filter(turn__task=task, status=ToolCallStatus.STARTED)
        .exclude(turn__status__in=ACTIVE_TURN_STATUSES)
        .only("pk", "name")
        if (tool := tool_get(call.name)) is None or not tool.outcome_can_be_unknown()
    ]
    if harmless:
        error = {"code": "interrupted", "message": "Interrupted before its result was recorded; not run again."}
        ToolCall.objects.filter(pk__in=harmless, status=ToolCallStatus.STARTED).update(
            status=ToolCallStatus.FAILED, error={**error, "details": {}}, finished_at=timezone.now()
        )


# --- a resume after a pause (the REST resume) ---


@transaction.atomic
def task_resume_checked(*, access: Access, task_id: int) -> tuple[Task, dict[str, Any] | None]:
    """Resume a paused task after judging its checkpoint: the verdict decides whether a turn starts.

    Returns the task and the recorded verdict (None when the task was not paused: nothing was judged).
    """
    access.require(Role.EDITOR)
    task = task_locked(access=access, task_id=task_id)
    has_work = task_resume_prepare(task)
    if has_work is None:
        return task, None
    judged = judge(task)
    outcome, _ = apply(task, judged, reason="resume", turn=None)
    entry = {**record_view(judged), "outcome": outcome}
    if outcome == "replay":
        # Only a runner runs a call: the new turn's first act judges again and runs it under its id.
        turn_start(task=task, trigger="resume", resume_check="replay")
    elif outcome == "go" and has_work:
        turn = turn_start(task=task, trigger="resume", resume_check=None)
        # The turn's log shows the check it started after, as a takeover's turn shows its own.
        turn.checkpoint = {**turn.checkpoint, "resume": {"reason": "resume", **entry}}
        Turn.objects.filter(pk=turn.pk).update(checkpoint=turn.checkpoint)
    elif outcome == "wait_jobs":
        jobs = [judged.call.result["job"]]
        task_status_set(task, TaskStatus.WAITING, reason="waiting", waiting_for={"type": "jobs", "jobs": jobs})
        decide_after_jobs(task)
    elif outcome == "go":
        task_status_set(task, TaskStatus.IDLE, reason="resumed", summary=False)
    elif outcome in ("cancelled", *STOPS):
        task_status_set(task, TaskStatus.IDLE, reason=outcome, summary=False)
    return task, entry


def record_view(judged: Judged) -> dict[str, Any]:
    out = judged.resumption.to_json()
    return {key: out[key] for key in ("verdict", "message", "pendingAction", "completed", "lookups", "writes")}


# --- a person's answer to a review card ---


class ResumeReview:
    """Confirming a review card settles what the verdict left open, then the task goes on (card_actions)."""

    def confirm(self, *, access: Access, card: Card) -> dict[str, Any]:
        return _settle_review(card, note="")

    def adjust(self, *, access: Access, card: Card, text: str) -> None:
        _settle_review(card, note=text)


UNDONE_VERDICTS = (
    Verdict.ACTION_NOT_FOUND_REVIEW.value,
    Verdict.ACTION_RECEIPT_CONFLICT.value,
    Verdict.PENDING_STATE_INCONSISTENT.value,
    Verdict.PENDING_CONTRACT_DENIED.value,
    Verdict.MISSION_MISMATCH.value,
    Verdict.TENANT_MISMATCH.value,
    Verdict.SUBJECT_MISMATCH.value,
)


def _settle_review(card: Card, *, note: str) -> dict[str, Any]:
    task = Task.objects.get(pk=card.task_id)  # locked by card_act
    verdict, call_id = card.payload.get("verdict"), card.payload.get("call")
    outcome: dict[str, Any] = {"verdict": verdict}
    call = ToolCall.objects.filter(turn__task=task, call_id=call_id, status=ToolCallStatus.STARTED).first()
    if call is not None and verdict in UNDONE_VERDICTS:
        conflict = verdict == Verdict.ACTION_RECEIPT_CONFLICT.value
        code = "receipt_conflict" if conflict else "not_done"
        message = (
            "Something else is recorded under this call's id; it was left as it is and this call was not repeated."
            if conflict
            else "This call left no trace after an interruption and was not done; a person reviewed it. Do it "
            "again if it is still needed."
        )
        ToolCall.objects.filter(pk=call.pk, status=ToolCallStatus.STARTED).update(
            status=ToolCallStatus.FAILED,
            error={"code": code, "message": message, "details": {}},
            finished_at=timezone.now(),
        )
        order = order_find(workspace_id=task.workspace_id, idempotency_key=call.call_id)
        if not conflict and order is not None and order.status == OrderStatus.HELD:
            order_release(
                workspace_id=task.workspace_id, idempotency_key=call.call_id, reason="not done (resume review)"
            )
            outcome["released"] = order.amount
        position = call.input.get("checklist_position") if isinstance(call.input, dict) else None
        if position is not None:
            ChecklistItem.objects.filter(task=task, position=position, status=ChecklistStatus.IN_PROGRESS).update(
                status=ChecklistStatus.PENDING
            )
        outcome["call"] = {"id": call.call_id, "status": ToolCallStatus.FAILED, "code": code}
    tool = tool_get(call.name) if call is not None else None
    if (
        call is not None
        and verdict == Verdict.ACTION_STILL_UNKNOWN.value
        and tool is not None
        and not tool.keeps_receipts
    ):
        # Nothing will ever tell: the call stays unknown for good, and the agent checks the state itself.
        ToolCall.objects.filter(pk=call.pk, status=ToolCallStatus.STARTED).update(
            status=ToolCallStatus.UNKNOWN, result=OUTCOME_UNKNOWN, finished_at=timezone.now()
        )
        outcome["call"] = {"id": call.call_id, "status": ToolCallStatus.UNKNOWN}
    if verdict != Verdict.ACTION_STILL_UNKNOWN.value:
        # The person looked: the work now relies on the present goal and configuration.
        task.basis = basis_now(task)
        Task.objects.filter(pk=task.pk).update(basis=task.basis)
    outcome["note"] = REVIEW_NOTES.get(verdict, "The person reviewed the interrupted work; go on.")
    return outcome


REVIEW_NOTES = {
    Verdict.ACTION_STILL_UNKNOWN.value: "The person asked to check the interrupted step again before going on.",
    Verdict.ACTION_NOT_FOUND_REVIEW.value: (
        "The person confirmed: the interrupted step was not done. Do it again if the plan still needs it."
    ),
    Verdict.ACTION_RECEIPT_CONFLICT.value: (
        "The person reviewed the conflicting record and left it as it is; the step was not repeated. Go on."
    ),
    Verdict.GOAL_CHANGED_REVIEW.value: (
        "The person confirmed the new goal. Re-read the brief and re-plan what is left; approvals given for the "
        "old goal no longer count."
    ),
    Verdict.CONFIG_CHANGED_REVIEW.value: "The person confirmed the new configuration; go on.",
}


def install() -> None:
    CONFIRM_HANDLERS[REVIEW_SOURCE] = ResumeReview()
