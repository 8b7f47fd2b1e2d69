"""Task lifecycle: create, cancel, pause, resume (judged by agents/runtime/resumption.py), archive. Each takes the task
row lock (DESIGN §3, §5)."""

from django.db import transaction
from django.utils import timezone

from agents.locks import task_locked, turn_qs_for_update
from agents.models import (
    ACTIVE_TURN_STATUSES,
    FLOW_RESULT,
    ChecklistItem,
    ChecklistStatus,
    GoalRevision,
    InboxMessage,
    InboxStatus,
    Task,
    TaskKind,
    TaskStatus,
    TurnStatus,
)
from agents.services.cards import cards_withdraw
from agents.services.inbox import message_source
from agents.services.task_status import task_status_set
from agents.services.turns import turn_start, unrun_calls_close
from agents.transitions import task_can_move, task_move, turn_move
from lomote.kernel.exceptions import Conflict
from workspace.models import Role
from workspace.selectors import Access
from workspace.services.events import event_append


@transaction.atomic
def task_create(
    *, access: Access, title: str, brief: str, language: str = "en", kind: str = TaskKind.PERSISTENT
) -> Task:
    """Create a task; its brief becomes the first inbox message and a turn starts.

    A lightweight task delivers one result: its checklist is that one item, recorded here rather than planned by a
    model (its turns take the short path, agents/runtime/shortpath.py). Should it be promoted, the planner finds
    the result already on the checklist, and a change to it makes a new version of the same artifact.
    """
    access.require(Role.EDITOR)
    task = Task.objects.create(
        workspace=access.workspace,
        kind=kind,
        title=title,
        brief=brief,
        language=language,
        created_by=access.user,
        created_by_key=access.api_key,
    )
    GoalRevision.objects.create(task=task, revision=task.goal_revision, brief=brief)
    if kind == TaskKind.LIGHTWEIGHT:
        ChecklistItem.objects.create(task=task, position=1, title=title[:300])
    event_append(
        workspace_id=task.workspace_id,
        kind="task.created",
        data={"task": task.pk, "title": title, "kind": kind, "language": language, "by": access.actor},
    )
    if brief:
        InboxMessage.objects.create(task=task, author=access.user, source=message_source(access), text=brief)
        turn_start(task=task, trigger="created")
    return task


def _fence_out_active_turn(task: Task, to: str, reason: str) -> None:
    """End the active turn and bump its generation, so its worker's next write is rejected."""
    for turn in turn_qs_for_update().filter(task=task, status__in=ACTIVE_TURN_STATUSES):
        turn_move(turn, to)
        turn.generation += 1
        turn.stop_reason, turn.finished_at = reason, timezone.now()
        turn.lease_holder, turn.lease_expires_at = "", None
        turn.save(
            update_fields=["status", "generation", "stop_reason", "finished_at", "lease_holder", "lease_expires_at"]
        )
        event_append(
            workspace_id=task.workspace_id,
            kind="turn.ended",
            data={"task": task.pk, "turn": turn.pk, "status": to, "reason": reason},
        )
        unrun_calls_close(task, reason=reason)


@transaction.atomic
def task_cancel(*, access: Access, task_id: int) -> Task:
    """Stop for good. Workers are fenced out; late results are recorded but change nothing."""
    access.require(Role.EDITOR)
    task = task_locked(access=access, task_id=task_id)
    if task.status == TaskStatus.CANCELLED:
        return task
    _fence_out_active_turn(task, TurnStatus.CANCELLED, "cancelled")
    task_status_set(task, TaskStatus.CANCELLED, reason="cancelled_by_person", waiting_for={})
    cards_withdraw(task, reason="task_cancelled")
    return task


@transaction.atomic
def task_pause(*, access: Access, task_id: int) -> Task:
    access.require(Role.EDITOR)
    task = task_locked(access=access, task_id=task_id)
    if task.status == TaskStatus.PAUSED:
        return task
    _fence_out_active_turn(task, TurnStatus.STOPPED, "paused")
    task_status_set(task, TaskStatus.PAUSED, reason="paused_by_person")
    return task


def task_resume_prepare(task: Task) -> bool | None:
    """The first half of resuming a paused task (its row locked): None when it is not paused (nothing to resume;
    409 `task_state` for a cancelled one), else whether work waits (messages or open checklist items).

    The task stays paused: what happens next is the resume verdict's to decide (agents/runtime/resumption.py).
    """
    if task.status != TaskStatus.PAUSED:
        # Only a cancelled task answers the state conflict. Moving `task` for the others would change its
        # status in memory without saving it, and callers would report a status never stored.
        if not task_can_move(task, TaskStatus.ACTIVE):
            task_move(task, TaskStatus.ACTIVE)
        return None
    task.auto_turns = 0
    task.save(update_fields=["auto_turns"])
    return (
        task.inbox.filter(status=InboxStatus.PENDING).exclude(source=FLOW_RESULT).exists()
        or task.checklist.filter(status__in=[ChecklistStatus.PENDING, ChecklistStatus.IN_PROGRESS]).exists()
    )


@transaction.atomic
def task_archive(*, access: Access, task_id: int) -> Task:
    """Put a finished, idle or cancelled task away: Main no longer routes to it and it takes no messages."""
    access.require(Role.EDITOR)
    task = task_locked(access=access, task_id=task_id)
    if task.status in (TaskStatus.ACTIVE, TaskStatus.WAITING):
        raise Conflict(
            "This task is still working or waiting; stop it or let it finish before archiving it.",
            code="task_state",
            details={"status": task.status},
        )
    if task.archived_at is None:
        task.archived_at = timezone.now()
        task.save(update_fields=["archived_at", "updated_at"])
        event_append(workspace_id=task.workspace_id, kind="task.archived", data={"task": task.pk, "by": access.actor})
    return task


@transaction.atomic
def task_unarchive(*, access: Access, task_id: int) -> Task:
    access.require(Role.EDITOR)
    task = task_locked(access=access, task_id=task_id)
    if task.archived_at is not None:
        task.archived_at = None
        task.save(update_fields=["archived_at", "updated_at"])
        event_append(workspace_id=task.workspace_id, kind="task.unarchived", data={"task": task.pk, "by": access.actor})
    return task
