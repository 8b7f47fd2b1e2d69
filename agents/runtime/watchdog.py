"""The watchdog (DESIGN §3): every period, recover what a lost message or a dead worker left behind.

- expired leases → take the turn over (generation + 1) and re-enqueue, or fail it at the attempt cap;
- turns queued too long → hand their message out again if a dead process took it, or re-enqueue the same
  generation if it is gone (a message still waiting is left alone; a duplicate job is a no-op anyway);
- tasks with unconsumed inbox messages and no active turn → start a turn;
- tasks waiting on jobs that all settled (a lost on-commit reaction) → decide as the reaction would;
- tasks waiting on an approval a person already granted (a lost on-commit reaction) → wake them;
- money held for a job that was never created (a crash between hold and submit) → released by rule;
- Flow nodes whose q-job a killed process took or lost → handed out again.
Every move is a conditional write, so two watchdogs sweeping at once act once per turn.
"""

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial

from django.conf import settings
from django.db import transaction
from django.db.models import F, OuterRef, Q, Subquery
from django.utils import timezone

from agents.locks import task_qs_for_update, turn_qs_for_update
from agents.models import (
    ACTIVE_TURN_STATUSES,
    QUIET_SOURCES,
    InboxMessage,
    InboxStatus,
    Task,
    TaskKind,
    TaskStatus,
    Turn,
    TurnStatus,
)
from agents.queue import enqueue_turn, enqueue_turn_now, turn_message_name
from agents.services.stalls import task_stop
from agents.services.turns import turn_start
from agents.services.wakeups import (
    task_job_settled,
    task_spending_approved,
    tasks_waiting_on_granted_approval,
    tasks_waiting_on_settled_jobs,
)
from agents.transitions import turn_move
from billing.services.orders import orders_release_orphaned
from lomote.kernel.queue_revival import messages_revive
from memory.services.evidence import evidence_sweep
from workspace.flows.runner import flow_nodes_revive
from workspace.services.events import event_append

logger = logging.getLogger(__name__)
BATCH = 200
GAVE_UP_TURN_STATUSES = (TurnStatus.FAILED, TurnStatus.STOPPED)


@dataclass
class SweepReport:
    taken_over: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)
    requeued: list[int] = field(default_factory=list)
    started: list[int] = field(default_factory=list)
    released_holds: list[int] = field(default_factory=list)
    extraction_retried: list[int] = field(default_factory=list)
    flow_nodes_revived: list[int] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(
            self.taken_over
            or self.failed
            or self.requeued
            or self.started
            or self.released_holds
            or self.extraction_retried
            or self.flow_nodes_revived
        )


def watchdog_sweep(*, now: datetime | None = None) -> SweepReport:
    now = now or timezone.now()
    report = SweepReport()
    expired = Turn.objects.filter(status=TurnStatus.RUNNING, lease_expires_at__lt=now).values_list("pk", "generation")
    for turn_id, generation in list(expired[:BATCH]):
        _take_over(turn_id, generation, now, report)
    stale_before = now - timedelta(seconds=settings.LOMOTE_QUEUE_STALE_SECONDS)
    stale = Turn.objects.filter(status=TurnStatus.QUEUED, enqueued_at__lt=stale_before)
    owed: dict[str, tuple[int, int]] = {}
    for turn_id, generation, enqueued_at in list(stale.values_list("pk", "generation", "enqueued_at")[:BATCH]):
        # Conditional on the old stamp: of two sweeps, one looks after it.
        if Turn.objects.filter(pk=turn_id, status=TurnStatus.QUEUED, enqueued_at=enqueued_at).update(enqueued_at=now):
            owed[turn_message_name(turn_id, generation)] = (turn_id, generation)
    # Its message still waiting (a backlog) is left alone; one a dead process took, or a lost one, is revived.
    revived = messages_revive({name: partial(enqueue_turn_now, *turn) for name, turn in owed.items()})
    report.requeued += [owed[name][0] for name in revived]
    for task_id in list(_tasks_with_unread_inbox()[:BATCH]):
        _start_for_inbox(task_id, report)
    for task_id, jobs in list(tasks_waiting_on_settled_jobs()):
        # The on-commit reaction to the last job was lost (process died): do it now, once.
        for job_id in jobs:
            if task_job_settled(task_id=task_id, job_id=job_id) == "woken":
                report.started.append(task_id)
    for workspace_id, task_id in list(tasks_waiting_on_granted_approval()):
        if task_spending_approved(workspace_id=workspace_id, task_id=task_id) == "woken":
            report.started.append(task_id)
    report.released_holds = orders_release_orphaned(now=now)
    # Flow nodes whose q-job a killed process took or lost (workspace/flows/runner.py).
    report.flow_nodes_revived = flow_nodes_revive(now=now)
    # Memory extraction that failed or whose job was lost is tried again (it never blocks a turn).
    report.extraction_retried = evidence_sweep(now=now)
    if report:
        logger.info("watchdog: %s", report)
    return report


def _take_over(turn_id: int, generation: int, now: datetime, report: SweepReport) -> None:
    with transaction.atomic():
        task_id = Turn.objects.filter(pk=turn_id).values_list("task_id", flat=True).first()
        task = task_qs_for_update().get(pk=task_id)
        turn = turn_qs_for_update().get(pk=turn_id)
        if turn.status != TurnStatus.RUNNING or turn.generation != generation or turn.lease_expires_at >= now:
            return  # renewed, finished, or already taken over by another sweep
        if turn.attempts >= settings.LOMOTE_MAX_TURN_ATTEMPTS:
            turn_move(turn, TurnStatus.FAILED)
            turn.stop_reason, turn.finished_at = "attempt_cap", now
            turn.error = {"code": "attempt_cap", "message": f"The turn was interrupted {turn.attempts} times."}
            turn.save(update_fields=["status", "stop_reason", "finished_at", "error"])
            task_stop(task, turn, reason="attempt_cap")
            report.failed.append(turn_id)
            return
        turn_move(turn, TurnStatus.QUEUED)
        turn.generation += 1
        turn.lease_holder, turn.lease_expires_at, turn.enqueued_at = "", None, now
        # The new generation's first act is a resume check (agents/runtime/resumption.py): whatever the dead
        # worker left started is settled by its receipt before anything is planned.
        turn.checkpoint = {**turn.checkpoint, "resume": {"reason": "takeover"}}
        turn.save(
            update_fields=["status", "generation", "lease_holder", "lease_expires_at", "enqueued_at", "checkpoint"]
        )
        event_append(
            workspace_id=task.workspace_id,
            kind="turn.taken_over",
            data={"task": task.pk, "turn": turn.pk, "generation": turn.generation},
        )
        enqueue_turn(turn.pk, turn.generation)
        report.taken_over.append(turn_id)


def _unread_messages():
    """Pending messages no turn has had a chance to read.

    A message already pending when the task's last turn failed or stopped at a limit was that turn's to
    read: starting a turn for it again would loop on the same failure. It waits for the person instead
    (a new message, a resume), and the task shows why it stopped. A runtime note (e.g. "the person declined
    the quote") or a Flow run's result waits for the task's next turn and never starts one.
    """
    last_turn = Turn.objects.filter(task=OuterRef("task")).order_by("-number")
    return (
        InboxMessage.objects.filter(status=InboxStatus.PENDING)
        .exclude(source__in=QUIET_SOURCES)
        .annotate(
            last_status=Subquery(last_turn.values("status")[:1]), last_end=Subquery(last_turn.values("finished_at")[:1])
        )
        .filter(
            Q(last_status__isnull=True)
            | ~Q(last_status__in=GAVE_UP_TURN_STATUSES)
            | Q(last_end__isnull=True)
            | Q(created_at__gt=F("last_end"))
        )
    )


def _tasks_with_unread_inbox():
    return (
        Task.objects.filter(pk__in=_unread_messages().values("task"))
        .exclude(status__in=[TaskStatus.PAUSED, TaskStatus.CANCELLED])
        .exclude(turns__status__in=ACTIVE_TURN_STATUSES)
        # A quick task's message waits for the result being made (agents/services/lightweight.py).
        .exclude(kind=TaskKind.LIGHTWEIGHT, status=TaskStatus.WAITING, waiting_for__type="jobs")
        .values_list("pk", flat=True)
        .distinct()
    )


def _start_for_inbox(task_id: int, report: SweepReport) -> None:
    with transaction.atomic():
        task = task_qs_for_update().get(pk=task_id)
        if task.status in (TaskStatus.PAUSED, TaskStatus.CANCELLED):
            return
        if task.turns.filter(status__in=ACTIVE_TURN_STATUSES).exists():
            return
        if not _unread_messages().filter(task=task).exists():
            return
        turn = turn_start(task=task, trigger="watchdog", resume_check="watchdog_restart")
        report.started.append(turn.pk)
