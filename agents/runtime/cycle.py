"""What happens after a cycle (DESIGN §3, figure 9), decided from persisted state only.

checklist complete → done; pending messages → next turn; a lightweight task's short step → its result carded and
done, or it rests with its answer (agents/runtime/shortpath.py); stopped at a checkpoint nobody was asked about →
the runtime's own confirm card (safety net); no progress → stop with a reason, and with items open, nothing in
flight and nobody asked, the runtime's card saying why (agents/services/stalls.py: never silent); progress made
and items left → next turn on its own (the person never types "continue"), unless the task's autonomy is "ask"
(a confirm card instead); a wait → suspend and free the worker, with the card a person's wait needs. Each ending
is one fenced transaction that also records the event the person sees and queues the rewrite of the task's
summary for a worker (agents/services/summaries.py).
"""

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from agents.exceptions import Fenced
from agents.fencing import fence
from agents.models import FLOW_RESULT, Autonomy, ChecklistStatus, InboxStatus, Task, TaskStatus, Turn, TurnStatus
from agents.queue import enqueue_turn
from agents.runtime.shortpath import is_short, short_result_record
from agents.services.cards import card_open_for_wait, card_open_safety_net, card_open_to_continue, checkpoint_unasked
from agents.services.stalls import task_stop
from agents.services.summaries import task_summary_follow
from agents.services.task_status import task_status_set
from agents.services.turns import turn_start
from agents.services.wakeups import decide_after_jobs
from agents.transitions import turn_move
from workspace.services.events import event_append

OPEN = (ChecklistStatus.PENDING, ChecklistStatus.IN_PROGRESS)


def _end_turn(task: Task, turn: Turn, status: str, *, reason: str = "", error: dict | None = None) -> None:
    turn_move(turn, status)
    turn.stop_reason = reason
    turn.finished_at = timezone.now()
    turn.lease_holder, turn.lease_expires_at = "", None
    fields = ["status", "stop_reason", "finished_at", "lease_holder", "lease_expires_at"]
    if error is not None:
        turn.error = error
        fields.append("error")
    turn.save(update_fields=fields)
    event_append(
        workspace_id=task.workspace_id,
        kind="turn.ended",
        data={"task": task.pk, "turn": turn.pk, "status": status, "reason": reason},
    )


def _set_task(task: Task, status: str, *, reason: str = "", waiting_for: dict | None = None) -> None:
    """The cycle's move: with the auto-turn count it changed; the summary's rewrite is queued once the cycle ends."""
    task_status_set(
        task, status, reason=reason, waiting_for=waiting_for or {}, summary=False, also_save=("auto_turns",)
    )


def _card_wait(card, **flags) -> dict:
    return {"type": "person", "card": card.pk, **flags}


def _stop(task: Task, turn: Turn | None, reason: str) -> None:
    """Stop the task; with items open, nothing in flight and nobody asked, never silently (services/stalls.py)."""
    task_stop(task, turn, reason=reason, summary=False, also_save=("auto_turns",))


def _has_pending_inbox(task: Task) -> bool:
    # A Flow's result is read with the next turn's messages but is no reason to start one (flow_threads.py).
    return task.inbox.filter(status=InboxStatus.PENDING).exclude(source=FLOW_RESULT).exists()


def cycle_end(turn_id: int, generation: int, task_id: int | None = None) -> str:
    """The model answered without asking for tools: decide whether the task goes on by itself."""
    with transaction.atomic():
        task, turn = fence(turn_id, generation, task_id)
        _end_turn(task, turn, TurnStatus.COMPLETED)
        outcome = _decide(task, turn)
        task_summary_follow(task)
        return outcome


def _decide(task: Task, turn: Turn) -> str:
    """What follows a completed cycle (task and turn locked, in the turn's ending transaction)."""
    if is_short(task):
        return _decide_short(task, turn)
    checklist = list(task.checklist.values_list("status", flat=True))
    open_items = sum(1 for status in checklist if status in OPEN)
    if checklist and not open_items:
        task.auto_turns = 0
        _set_task(task, TaskStatus.DONE, reason="checklist_complete")
        return "done"
    if _has_pending_inbox(task):
        task.auto_turns = 0
        task.save(update_fields=["auto_turns"])
        turn_start(task=task, trigger="message")
        return "next_turn"
    # Safety net: stopped at a checkpoint nobody was asked about — the runtime asks, the task waits.
    checkpoint = checkpoint_unasked(task) if open_items else None
    if checkpoint is not None:
        card = card_open_safety_net(task, checkpoint, turn=turn)
        _set_task(task, TaskStatus.WAITING, reason="checkpoint", waiting_for=_card_wait(card, safety_net=True))
        return "checkpoint"
    if open_items and not turn.made_progress:
        _stop(task, turn, "no_progress")
        return "no_progress"
    if open_items and task.auto_turns >= settings.LOMOTE_MAX_AUTO_TURNS:
        _stop(task, turn, "auto_turn_cap")
        return "auto_turn_cap"
    if open_items and task.autonomy == Autonomy.ASK:
        # Going on by itself needs autonomy beyond "ask": a person confirms each next step.
        card = card_open_to_continue(task, turn=turn)
        _set_task(task, TaskStatus.WAITING, reason="checkpoint", waiting_for=_card_wait(card, next_step=True))
        return "checkpoint"
    if open_items:
        task.auto_turns += 1
        task.save(update_fields=["auto_turns"])
        turn_start(task=task, trigger="auto_continue")
        return "auto_continue"
    task.auto_turns = 0
    _set_task(task, TaskStatus.IDLE, reason="answered")
    return "answered"


def _decide_short(task: Task, turn: Turn) -> str:
    """A lightweight task's short step ended: it never goes on by itself. What it made at once is put on its item
    and carded; a message that arrived meanwhile starts the next short step; else the task rests."""
    task.auto_turns = 0
    made = short_result_record(task, turn)
    if _has_pending_inbox(task):
        task.save(update_fields=["auto_turns"])
        turn_start(task=task, trigger="message")
        return "next_turn"
    if made or not task.checklist.filter(status__in=OPEN).exists():
        _set_task(task, TaskStatus.DONE, reason="checklist_complete")
        return "done"
    _stop(task, turn, "answered")
    return "answered"


def turn_suspend(turn_id: int, generation: int, task_id: int | None = None) -> str:
    """A tool asked to wait (a person's answer, a generation job): end the turn and free the worker."""
    with transaction.atomic():
        task, turn = fence(turn_id, generation, task_id)
        outcome = _suspend(task, turn)
        task_summary_follow(task)
        return outcome


def _suspend(task: Task, turn: Turn) -> str:
    waiting_for = turn.checkpoint.get("suspend") or {}
    _end_turn(task, turn, TurnStatus.SUSPENDED, reason=f"waiting_for_{waiting_for.get('type', 'event')}")
    if waiting_for.get("type") == "person" and _has_pending_inbox(task):
        turn_start(task=task, trigger="message")  # the answer is already here
        return "next_turn"
    card = card_open_for_wait(task, waiting_for, turn=turn)
    if card is not None:
        waiting_for = {**waiting_for, "card": card.pk}
    _set_task(task, TaskStatus.WAITING, reason="waiting", waiting_for=waiting_for)
    if waiting_for.get("type") == "jobs":
        # Fast jobs may have settled before this commit; their reaction saw a running task.
        outcome = decide_after_jobs(task)
        return "suspended" if outcome == "waiting" else outcome
    return "suspended"


def turn_stop(turn_id: int, generation: int, task_id: int | None = None, *, reason: str) -> str:
    """Out of limits: keep all state, stop, say why. A message or resume starts again."""
    with transaction.atomic():
        task, turn = fence(turn_id, generation, task_id)
        _end_turn(task, turn, TurnStatus.STOPPED, reason=reason)
        _stop(task, turn, reason)
        task_summary_follow(task)
    return reason


def turn_hand_off(turn_id: int, generation: int, task_id: int | None = None) -> str:
    """Give the turn to a fresh job (new generation) before this one nears the queue's timeout."""
    with transaction.atomic():
        task, turn = fence(turn_id, generation, task_id)
        turn_move(turn, TurnStatus.QUEUED)
        turn.generation += 1
        turn.lease_holder, turn.lease_expires_at, turn.enqueued_at = "", None, timezone.now()
        turn.save(update_fields=["status", "generation", "lease_holder", "lease_expires_at", "enqueued_at"])
        enqueue_turn(turn.pk, turn.generation)
    return "handed_off"


def turn_fail(turn_id: int, generation: int, *, code: str, message: str) -> str:
    """The turn cannot go on (model error after our retries, runtime bug). The task keeps its state."""
    try:
        with transaction.atomic():
            task, turn = fence(turn_id, generation)
            _end_turn(task, turn, TurnStatus.FAILED, reason=code, error={"code": code, "message": message})
            _stop(task, turn, code)
            task_summary_follow(task)
    except Fenced:
        return "fenced"
    return "failed"


def turn_end_after_resume(task: Task, turn: Turn, *, outcome: str) -> str:
    """A resume check ended the turn before any decision (agents/runtime/resumption.py), in the check's fenced
    transaction: a review card is open (the task already waits on it), the task was cancelled, or a check
    stopped it (the task says why)."""
    if outcome in ("review", "awaiting_approval"):
        _end_turn(task, turn, TurnStatus.SUSPENDED, reason=f"resume_{outcome}")
    elif outcome == "cancelled":
        _end_turn(task, turn, TurnStatus.CANCELLED, reason="cancelled")
    else:
        _end_turn(task, turn, TurnStatus.STOPPED, reason=outcome)
        _set_task(task, TaskStatus.IDLE, reason=outcome)
    task_summary_follow(task)
    return f"resume_{outcome}"
