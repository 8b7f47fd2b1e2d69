"""Fencing on (turn, generation): every write a worker makes is conditional on still holding the turn.

Cancel, pause, takeover and hand-off all bump the turn's generation (or end it) under the turn's row lock,
so one conditional UPDATE of the turn row is the whole check: it matches 0 rows once we lost the turn,
and otherwise holds the row lock (and renews the lease) until our transaction commits.
"""

from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from agents.exceptions import Fenced
from agents.locks import task_qs_for_update, turn_qs_for_update
from agents.models import Task, TaskStatus, Turn, TurnStatus
from agents.selectors import with_acting_role


def lease_deadline() -> datetime:
    return timezone.now() + timedelta(seconds=settings.LOMOTE_LEASE_SECONDS)


def fence_turn(turn_id: int, generation: int) -> datetime:
    """Check and lock the turn in one statement, renewing the lease; returns the new expiry.

    For transactions that write only the turn's own log (steps, tool calls, inbox consumption). Call
    inside `transaction.atomic`; raises Fenced when the turn is no longer ours.
    """
    expires = lease_deadline()
    updated = Turn.objects.filter(pk=turn_id, generation=generation, status=TurnStatus.RUNNING).update(
        lease_expires_at=expires
    )
    if updated != 1:
        raise Fenced()
    return expires


def fence(turn_id: int, generation: int, task_id: int | None = None) -> tuple[Task, Turn]:
    """Lock the task then the turn (the order every writer uses) and check we still hold the turn.

    For transactions that also touch the task (tools writing task state, the end of a cycle). Call inside
    `transaction.atomic`; raises Fenced when the turn was taken over, cancelled, paused or finished.
    """
    if task_id is None:
        # order_by(): Turn's Meta ordering would otherwise add a sort to this point lookup.
        task_id = Turn.objects.filter(pk=turn_id).order_by().values_list("task_id", flat=True).first()
        if task_id is None:
            raise Fenced()
    task = task_qs_for_update().get(pk=task_id)
    turn = turn_qs_for_update().get(pk=turn_id)
    if turn.generation != generation or turn.status != TurnStatus.RUNNING or task.status != TaskStatus.ACTIVE:
        raise Fenced()
    turn.lease_expires_at = lease_deadline()
    Turn.objects.filter(pk=turn_id).update(lease_expires_at=turn.lease_expires_at)
    return task, turn


def fence_task(turn_id: int, generation: int, task_id: int) -> Task:
    """Lock the task, then fence the turn: two statements, in the order every writer uses.

    The task comes with `acting_role` (its creator's current role), read in the same statement. For a
    tool that writes task state. Raises Fenced when the turn is no longer ours or the task stopped.
    """
    task = task_lock_for_tools(task_id)
    fence_turn(turn_id, generation)
    return task


def task_lock_for_tools(task_id: int) -> Task:
    """The first half of `fence_task`: lock the active task with what a tool's checks read. The caller fences
    the turn next (the runtime's decision write does it in its own statement, agents/runtime/steplog.py)."""
    # Only the columns a tool's checks read: the task row also carries long texts (brief, summary).
    columns = ("id", "workspace_id", "status", "created_by_id", "created_by_key_id", "permissions", "autonomy")
    task = with_acting_role(task_qs_for_update().filter(pk=task_id).only(*columns)).get()
    if task.status != TaskStatus.ACTIVE:
        raise Fenced()
    return task


def lease_renew(turn_id: int, generation: int) -> datetime:
    """Extend the lease in its own short transaction; raises Fenced when the turn is no longer ours."""
    return fence_turn(turn_id, generation)
