"""The allowed moves of tasks, turns, tool calls and cards. Every status change goes through here."""

from agents.models import Card, CardStatus, Task, TaskStatus, ToolCallStatus, Turn, TurnStatus
from lomote.kernel.exceptions import Conflict
from lomote.kernel.moves import move_check, move_sources

T = TaskStatus
TASK_MOVES: dict[str, set[str]] = {
    T.IDLE: {T.ACTIVE, T.PAUSED, T.CANCELLED, T.DONE},
    T.ACTIVE: {T.IDLE, T.WAITING, T.PAUSED, T.CANCELLED, T.DONE, T.FAILED},
    T.WAITING: {T.ACTIVE, T.IDLE, T.PAUSED, T.CANCELLED, T.DONE},
    T.PAUSED: {T.ACTIVE, T.IDLE, T.WAITING, T.CANCELLED},  # waiting: a resume's review card, or its job
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

C = ToolCallStatus
TOOL_CALL_MOVES: dict[str, frozenset[str]] = {
    # pending → done | failed: a transactional tool, or its refusal, is recorded in the commit that runs it.
    C.PENDING: frozenset({C.STARTED, C.DONE, C.FAILED}),
    # started → started: a newer worker runs an idempotent call again; → unknown: a non-idempotent one it
    # found started without a result is not run again.
    C.STARTED: frozenset({C.STARTED, C.DONE, C.FAILED, C.UNKNOWN}),
    C.DONE: frozenset(),
    C.FAILED: frozenset(),
    C.UNKNOWN: frozenset(),
}

K = CardStatus
CARD_MOVES: dict[str, frozenset[str]] = {
    K.OPEN: frozenset({K.RESOLVED, K.CANCELLED}),  # a person's action, or withdrawn
    K.RESOLVED: frozenset(),
    K.CANCELLED: frozenset(),
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


def tool_call_sources(to: str) -> list[str]:
    """The statuses a tool call may reach `to` from: the condition of its compare-and-set updates."""
    return move_sources(TOOL_CALL_MOVES, to)


def tool_call_move_check(frm: str, to: str) -> None:
    move_check(TOOL_CALL_MOVES, frm, to, what="a tool call", code="tool_call_state")


def card_move(card: Card, to: str) -> None:
    """Set the card's status (caller holds its lock and saves); Conflict `card_state` for a move not listed."""
    move_check(CARD_MOVES, card.status, to, what=f"card {card.pk}", code="card_state")
    card.status = to


def card_sources(to: str) -> list[str]:
    return move_sources(CARD_MOVES, to)
