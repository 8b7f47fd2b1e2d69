"""Row locks for the agents app. Order, always: task, then turn, then inbox messages, then cards (each by pk).

Every lock is FOR NO KEY UPDATE (`no_key=True`), never FOR UPDATE: a FOR UPDATE lock also blocks the foreign-key
check of any row another transaction inserts pointing at the locked row (a card or a step pointing at its task), and
PostgreSQL runs Django's deferred foreign-key checks at COMMIT — after that transaction took the event-log row. A
person confirming a card deadlocked that way against a turn opening the next card (tests/agents/test_lock_modes.py).
"""

from django.utils.translation import gettext_noop

from agents.models import Card, InboxMessage, Task, Turn
from lomote.kernel.exceptions import NotFound
from workspace.selectors import Access


def task_qs_for_update():
    return Task.objects.order_by("pk").select_for_update(of=("self",), no_key=True)


def turn_qs_for_update():
    return Turn.objects.order_by("pk").select_for_update(of=("self",), no_key=True)


def inbox_qs_for_update():
    return InboxMessage.objects.order_by("pk").select_for_update(of=("self",), no_key=True)


def card_qs_for_update():
    return Card.objects.order_by("pk").select_for_update(of=("self",), no_key=True)


def task_locked(*, access: Access, task_id: int) -> Task:
    """The task, locked, if it belongs to the caller's workspace; NotFound otherwise."""
    task = task_qs_for_update().filter(pk=task_id, workspace=access.workspace).first()
    if task is None:
        raise NotFound(gettext_noop("Task not found."))
    return task
