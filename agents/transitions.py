"""The allowed moves of tasks and turns. Every status change goes through here."""

from agents.models import Task, TaskStatus, Turn, TurnStatus
from lomote.exceptions import Conflict

T = TaskStatus
TASK_MOVES: dict[str, set[str]] = {
    T.IDLE: {T.ACTIVE, T.PAUSED, T.CANCELLED, T.DONE},
    T.ACTIVE: {T.IDLE, T.WAITING, T.PAUSED, T.CANCELLED, T.DONE, T.FAILED},
    T.WAITING: {T.ACTIVE, T.IDLE, T.PAUSED, T.CANCELLED, T.DONE},
    T.PAUSED: {T.ACTIVE, T.IDLE, T.CANCELLED},
    T.DONE: {T.ACTIVE, T.CANCELLED},  # a follow-up reopens a finished task
    T.FAILED: {T.ACTIVE, T.CANCELLED},
    T.CANCELLED: set(),
}

U = TurnStatus
TURN_MOVES: dict[str, set[str]] = {
    U.QUEUED: {U.RUNNING, U.STOPPED, U.CANCELLED, U.FAILED},
    U.RUNNING: {U.QUEUED, U.COMPLETED, U.SUSPENDED, U.STOPPED, U.CANCELLED, U.FAILED},
    U.COMPLETED: set(),
    U.SUSPENDED: set(),
    U.STOPPED: set(),
    U.CANCELLED: set(),
    U.FAILED: set(),
}


def task_can_move(task: Task, to: str) -> bool:
    return to == task.status or to in TASK_MOVES[task.status]


def task_move(task: Task, to: str, *, reason: str = "") -> bool:
    """Set the task's status (caller holds its lock and saves). Returns whether it changed."""
    if to == task.status and reason == task.stop_reason:
        return False
    if not task_can_move(task, to):
        raise Conflict(
            f"A {task.get_status_display().lower()} task cannot become {TaskStatus(to).label.lower()}.",
            code="task_state",
            details={"status": task.status, "requested": to},
        )
    task.status = to
    task.stop_reason = reason
    return True


def turn_move(turn: Turn, to: str) -> None:
    if to not in TURN_MOVES[turn.status]:
        raise Conflict(f"turn {turn.pk} cannot go from {turn.status} to {to}", code="turn_state")
    turn.status = to
