"""Lightweight tasks: their promotion to persistent, and their messages held while the result is made (DESIGN
§2, seed §2.2; their turns take the runtime's short path, agents/runtime/shortpath.py).

A lightweight task is one quick result that stays out of the task list. When the person keeps iterating on it
— a second follow-up, whatever path it comes by (Main, the task's inbox, a result card) — or keeps it on its
result card, it becomes persistent: the same row, so its inbox, turns, checklist, cards and artifacts stay,
and from then on it is listed and runs the full planning cycle.

A message reaching a lightweight task while its result is being made ("make it fluffier" while the job runs)
waits for that result: a short step started now would see no result to change and make the first one again.
The job's settlement starts the next short step (agents/services/wakeups.py), which reads the message with the
result made.
"""

from agents.models import REVISION_PREFIX, ChecklistItem, InboxMessage, InboxStatus, Task, TaskKind, TaskStatus
from lomote.understanding import decide
from workspace.services.events import event_append

# The first message of a lightweight task is its brief; the person's second follow-up promotes it.
PROMOTE_AFTER_FOLLOW_UPS = 1
PERSON_SOURCES = ("person", "api_key")  # inbox sources that are the person's own words (not runtime notes)


def task_follow_ups(task: Task) -> int:
    """Messages the person sent the task after the one that started it."""
    # A replaced message lives on as its replacement, a withdrawn one was taken back: neither is an iteration.
    sent = InboxMessage.objects.filter(
        task=task, source__in=PERSON_SOURCES, status__in=(InboxStatus.PENDING, InboxStatus.CONSUMED)
    ).count()
    return max(sent - 1, 0)


def do_task_promote(task: Task, *, by: str) -> Task:
    """Make a locked lightweight task persistent (the caller holds its row lock). Promoting twice changes nothing."""
    if task.kind == TaskKind.PERSISTENT:
        return task
    task.kind = TaskKind.PERSISTENT
    task.save(update_fields=["kind", "updated_at"])
    event_append(
        workspace_id=task.workspace_id,
        kind="task.promoted",
        data={"task": task.pk, "kind": task.kind, "by": by},
    )
    return task


def do_task_promote_if_iterating(task: Task, *, by: str) -> Task:
    """Before a person's message is added to a locked task: a lightweight task that already had its follow-up
    is being iterated on again, so it is promoted first (its next turn plans like any persistent task)."""
    if task.kind == TaskKind.LIGHTWEIGHT and task_follow_ups(task) >= PROMOTE_AFTER_FOLLOW_UPS:
        return do_task_promote(task, by=by)
    return task


def _thanks(text: str) -> bool:
    """Thanks or praise, read by meaning (the route_act decision): nothing to keep as a change."""
    return decide("route_act", text).label == "thanks"


def change_keep_on_result(task: Task, text: str) -> None:
    """A person's change to a quick result made (the locked task): kept on its one item until the next result
    answers it (the job's completion writes the item's evidence again). The short step that reads the message may
    be interrupted — a spending approval, a killed worker and its resume review — and the step after it sees no new
    message: without this it made the first result again, as a copy, instead of the next version."""
    if task.kind != TaskKind.LIGHTWEIGHT or _thanks(text):
        return
    item = ChecklistItem.objects.filter(task=task).order_by("position").first()
    if item is not None and item.artifacts:
        item.evidence = (REVISION_PREFIX + " ".join(text.split()))[:2000]
        item.save(update_fields=["evidence", "updated_at"])


def result_in_progress(task: Task) -> bool:
    """A lightweight task waiting for the job making its result: a new message waits for that result."""
    return (
        task.kind == TaskKind.LIGHTWEIGHT
        and task.status == TaskStatus.WAITING
        and (task.waiting_for or {}).get("type") == "jobs"
    )
