"""Starting turns. A turn is one run of a task's worker; the queue only wakes it (DESIGN §3)."""

from django.db.models import Max
from django.utils import timezone

from agents.models import (
    ACTIVE_TURN_STATUSES,
    ModelLease,
    ModelProfile,
    ProviderKind,
    Task,
    TaskStatus,
    Turn,
)
from agents.queue import enqueue_turn
from agents.services.task_status import task_status_set
from workspace.services.events import event_append

SCRIPTED_DEFAULT = {"provider": ProviderKind.SCRIPTED, "model": "lomote-scripted-planner-1", "base_url": ""}


def active_turn(task: Task) -> Turn | None:
    return task.turns.filter(status__in=ACTIVE_TURN_STATUSES).first()


def turn_start(*, task: Task, trigger: str) -> Turn:
    """Queue the task's next turn and enqueue its job after commit; returns the active turn if one exists.

    Needs the task row lock (the caller's transaction): that lock is what makes "no active turn" true.
    """
    existing = active_turn(task)
    if existing is not None:
        return existing
    number = (task.turns.aggregate(last=Max("number"))["last"] or 0) + 1
    turn = Turn.objects.create(task=task, number=number, trigger=trigger, enqueued_at=timezone.now())
    _lease_model(turn, task)
    task_status_set(task, TaskStatus.ACTIVE, waiting_for={}, summary=False)
    event_append(
        workspace_id=task.workspace_id,
        kind="turn.queued",
        data={"task": task.pk, "turn": turn.pk, "number": number, "trigger": trigger},
    )
    enqueue_turn(turn.pk, turn.generation)
    return turn


def _lease_model(turn: Turn, task: Task) -> ModelLease:
    """Fix the turn's exact model. Copied once from the task's (or workspace's default) profile."""
    lease = lease_for(task)
    lease.turn = turn
    lease.save(force_insert=True)
    return lease


def lease_for(task: Task) -> ModelLease:
    """The lease a turn of the task would take now (unsaved): the task's profile, else the workspace's default,
    else the offline scripted planner."""
    profile = task.model_profile or ModelProfile.objects.filter(workspace_id=task.workspace_id, is_default=True).first()
    if profile is None:
        return ModelLease(**SCRIPTED_DEFAULT, params={})
    return ModelLease(
        provider=profile.provider,
        model=profile.model,
        base_url=profile.base_url,
        params=dict(profile.params),
        secret=profile.secret,
        context_tokens=profile.context_tokens,
    )
