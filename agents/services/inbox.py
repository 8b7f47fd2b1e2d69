"""Task inboxes (DESIGN §3, seed §4.3): delivered is not executed.

A message is stored at once; the worker reads it at its next safe boundary and the consuming step is
recorded. Until then it may be withdrawn or replaced; after, it is part of the history.
"""

from django.db import transaction
from django.utils.translation import gettext_noop

from agents.locks import inbox_qs_for_update, task_locked
from agents.models import CARD_ANSWER, InboxMessage, InboxStatus, TaskStatus
from agents.services.lightweight import change_keep_on_result, do_task_promote_if_iterating, result_in_progress
from agents.services.turns import turn_start
from lomote.kernel.exceptions import Conflict, NotFound
from workspace.models import Role
from workspace.selectors import Access
from workspace.services.events import event_append


def message_source(access: Access) -> str:
    """Who a message from this caller comes from: a person, or an integrator's API key."""
    return "api_key" if access.api_key is not None else "person"


def _message_data(message: InboxMessage) -> dict:
    return {"task": message.task_id, "message": message.pk, "status": message.status}


@transaction.atomic
def message_post(*, access: Access, task_id: int, text: str, card_answer: bool = False) -> InboxMessage:
    """Add a message to a task's inbox and start its turn. `card_answer`: the runtime's words for a person's
    answer to a card (a confirmation, a choice) — it wakes the task but neither iterates on a quick result nor is
    a change to keep on it."""
    access.require(Role.EDITOR)
    task = task_locked(access=access, task_id=task_id)
    if task.status == TaskStatus.CANCELLED:
        raise Conflict("This task was cancelled; it takes no more messages.", code="task_cancelled")
    if task.is_archived:
        raise Conflict("This task is archived; unarchive it to send it a message.", code="task_archived")
    source = CARD_ANSWER if card_answer else message_source(access)
    if not card_answer:
        # Iterating on a quick result again makes it a persistent task, whichever way the message comes.
        do_task_promote_if_iterating(task, by=access.actor)
    message = InboxMessage.objects.create(task=task, author=access.user, source=source, text=text)
    event_append(workspace_id=task.workspace_id, kind="inbox.posted", data=_message_data(message))
    if not card_answer and not result_in_progress(task):
        change_keep_on_result(task, text)  # a change held for a result in progress is read when it lands
    if task.status != TaskStatus.PAUSED and not result_in_progress(task):
        turn_start(task=task, trigger="message")  # no-op when a turn is active: it reads the inbox next
    return message


def _pending_locked(*, access: Access, task_id: int, message_id: int) -> tuple:
    task = task_locked(access=access, task_id=task_id)
    message = inbox_qs_for_update().filter(pk=message_id, task=task).first()
    if message is None:
        raise NotFound(gettext_noop("Message not found."))
    if message.status != InboxStatus.PENDING:
        raise Conflict(
            "The agent already read this message (or it was withdrawn); it can no longer change.",
            code="message_not_pending",
            details={"status": message.status},
        )
    return task, message


@transaction.atomic
def message_withdraw(*, access: Access, task_id: int, message_id: int) -> InboxMessage:
    access.require(Role.EDITOR)
    task, message = _pending_locked(access=access, task_id=task_id, message_id=message_id)
    message.status = InboxStatus.WITHDRAWN
    message.save(update_fields=["status"])
    event_append(workspace_id=task.workspace_id, kind="inbox.withdrawn", data=_message_data(message))
    return message


@transaction.atomic
def message_replace(*, access: Access, task_id: int, message_id: int, text: str) -> InboxMessage:
    access.require(Role.EDITOR)
    task, old = _pending_locked(access=access, task_id=task_id, message_id=message_id)
    old.status = InboxStatus.REPLACED
    old.save(update_fields=["status"])
    new = InboxMessage.objects.create(
        task=task, author=access.user, source=message_source(access), text=text, replaces=old
    )
    event_append(workspace_id=task.workspace_id, kind="inbox.replaced", data={**_message_data(new), "replaces": old.pk})
    return new
