"""Row locks for the agents app. Order, always: task, then turn, then inbox messages, then cards (each by pk)."""

from agents.models import Card, InboxMessage, Task, Turn
from lomote.kernel.exceptions import NotFound
from workspace.selectors import Access


def task_qs_for_update():
    return Task.objects.order_by("pk").select_for_update(of=("self",))


def turn_qs_for_update():
    return Turn.objects.order_by("pk").select_for_update(of=("self",))


def inbox_qs_for_update():
    return InboxMessage.objects.order_by("pk").select_for_update(of=("self",))


def card_qs_for_update():
    return Card.objects.order_by("pk").select_for_update(of=("self",))


def task_locked(*, access: Access, task_id: int) -> Task:
    """The task, locked, if it belongs to the caller's workspace; NotFound otherwise."""
    task = task_qs_for_update().filter(pk=task_id, workspace=access.workspace).first()
    if task is None:
        raise NotFound("Task not found.")
    return task
