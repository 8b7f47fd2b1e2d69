"""A task's status move, whole (DESIGN §1, STYLE rule 6): every status change of a Task goes through
`task_status_set`, which checks the move against agents/transitions.py, saves the row, appends the
`task.status` event and rewrites the task's summary.
"""

from typing import Any, Final

from agents.models import ChecklistStatus, Task, TaskStatus
from agents.services.summaries import task_summary_write
from agents.services.task_episodes import task_episode_write
from agents.transitions import task_move
from workspace.services.events import event_append

OPEN_ITEM_STATUSES = (ChecklistStatus.PENDING, ChecklistStatus.IN_PROGRESS)
KEEP: Final = object()  # `waiting_for` left as it stands


def task_status_data(task: Task) -> dict:
    """The `task.status` event's data. `open_items` is the fact stall metrics read (agents/services/metrics.py):
    how many checklist items were still open at that moment, recorded in the transaction that moved the task."""
    return {
        "task": task.pk,
        "status": task.status,
        "stop_reason": task.stop_reason,
        "waiting_for": task.waiting_for,
        "open_items": task.checklist.filter(status__in=OPEN_ITEM_STATUSES).count(),
    }


def task_status_set(
    task: Task,
    status: str,
    *,
    reason: str = "",
    waiting_for: Any = KEEP,
    summary: bool = True,
    also_save: tuple[str, ...] = (),
) -> bool:
    """Move `task` (its row locked by the caller) to `status` for `reason`, and record the move.

    `waiting_for` is what the task waits for now ({} for nothing); without it the stored wait stays.
    `summary=False` when the caller rewrites the summary itself once the rest of its transaction is done.
    `also_save` names other fields the caller changed on the row, saved with the move.
    A task that already stands there (same status, reason and wait) is not saved and records no event:
    returns False. A move the table does not allow raises Conflict `task_state` and changes nothing.
    """
    new_wait = waiting_for is not KEEP and waiting_for != task.waiting_for
    if status == task.status and reason == task.stop_reason and not new_wait:
        return False
    task_move(task, status, reason=reason)
    fields = ["status", "stop_reason"]
    if waiting_for is not KEEP:
        task.waiting_for = waiting_for
        fields.append("waiting_for")
    task.save(update_fields=[*fields, *also_save, "updated_at"])
    event_append(workspace_id=task.workspace_id, kind="task.status", data=task_status_data(task))
    if summary:
        task_summary_write(task)
    if status == TaskStatus.DONE:
        task_episode_write(task)
    return True
