"""Fencing on (turn, generation): every write a worker makes goes through `fence()` (DESIGN §3)."""

from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from agents.exceptions import Fenced
from agents.locks import task_qs_for_update, turn_qs_for_update
from agents.models import Task, TaskStatus, Turn, TurnStatus


def fence(turn_id: int, generation: int) -> tuple[Task, Turn]:
    """Lock the task then the turn and check this worker still holds the turn; renews its lease.

    Call inside `transaction.atomic`. Raises Fenced (rolling the transaction back) when the turn was taken
    over (generation moved on), cancelled, paused or finished.
    """
    # order_by(): first() would otherwise apply Turn's Meta ordering, which joins the task table.
    task_id = Turn.objects.filter(pk=turn_id).order_by().values_list("task_id", flat=True).first()
    if task_id is None:
        raise Fenced()
    task = task_qs_for_update().get(pk=task_id)
    turn = turn_qs_for_update().get(pk=turn_id)
    if turn.generation != generation or turn.status != TurnStatus.RUNNING or task.status != TaskStatus.ACTIVE:
        raise Fenced()
    turn.lease_expires_at = timezone.now() + _lease()
    Turn.objects.filter(pk=turn_id).update(lease_expires_at=turn.lease_expires_at)
    return task, turn


def lease_renew(turn_id: int, generation: int) -> None:
    """Extend the lease with one conditional UPDATE; raises Fenced when the turn is no longer ours."""
    expires = timezone.now() + _lease()
    updated = Turn.objects.filter(pk=turn_id, generation=generation, status=TurnStatus.RUNNING).update(
        lease_expires_at=expires
    )
    if updated != 1:
        raise Fenced()


def _lease():
    return timedelta(seconds=settings.LOMOTE_LEASE_SECONDS)
