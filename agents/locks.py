"""Row locks for the agents app. Order, always: task, then turn, then inbox messages, then cards (each by pk)."""

from agents.models import Card, InboxMessage, Task, Turn


def task_qs_for_update():
    return Task.objects.order_by("pk").select_for_update(of=("self",))


def turn_qs_for_update():
    return Turn.objects.order_by("pk").select_for_update(of=("self",))


def inbox_qs_for_update():
    return InboxMessage.objects.order_by("pk").select_for_update(of=("self",))


def card_qs_for_update():
    return Card.objects.order_by("pk").select_for_update(of=("self",))
