"""Measures of how tasks behave, computed from stored facts only (never from what a model or a person wrote).

A **stall** is a moment when a task stopped short — any stop that is not done, cancelled or failed — with
checklist items still open and no card open for the person: the moment a person would have had to type
"continue" (DESIGN §3: they never should). Read from:
- the `task.status` events of the workspace's log: each records the status and reason the task moved to and,
  since the fact was added, `open_items` (open checklist items, counted in the same transaction as the move);
  older events lack it and are not counted;
- the cards' `created_at` / `resolved_at`: a card of the task open at that moment means the person was asked.

Not stalls: a wait for generation jobs (the runtime wakes the task when they settle) and a pause the person
asked for themselves.
"""

from dataclasses import dataclass
from datetime import datetime

from agents.models import Card, TaskStatus
from workspace.models import Event

STOPPED = (TaskStatus.IDLE, TaskStatus.WAITING, TaskStatus.PAUSED)
# Stops that wait on something other than a person, or that a person asked for.
NOT_STALLS_WAITING_FOR = ("jobs",)
NOT_STALLS_REASONS = ("paused_by_person",)


@dataclass(frozen=True)
class Stall:
    task_id: int
    at: datetime
    status: str
    reason: str
    open_items: int
    seq: int  # the `task.status` event that recorded the stop


def stalls_list(*, workspace_id: int, since: datetime | None = None) -> list[Stall]:
    """The workspace's stalls (oldest first), from `since` on if given."""
    events = Event.objects.filter(
        workspace_id=workspace_id, kind="task.status", data__status__in=STOPPED, data__open_items__gt=0
    )
    if since is not None:
        events = events.filter(created_at__gte=since)
    stops = [
        event
        for event in events.order_by("seq")
        if (event.data.get("waiting_for") or {}).get("type") not in NOT_STALLS_WAITING_FOR
        and event.data.get("stop_reason") not in NOT_STALLS_REASONS
    ]
    cards: dict[int, list[tuple[datetime, datetime | None]]] = {}
    task_ids = {event.data.get("task") for event in stops}
    for task_id, opened, closed in Card.objects.filter(task_id__in=task_ids).values_list(
        "task_id", "created_at", "resolved_at"
    ):
        cards.setdefault(task_id, []).append((opened, closed))
    stalls = []
    for event in stops:
        task_id, at = event.data.get("task"), event.created_at
        asked = any(opened <= at and (closed is None or closed > at) for opened, closed in cards.get(task_id, []))
        if not asked:
            stalls.append(
                Stall(
                    task_id=task_id,
                    at=at,
                    status=event.data.get("status", ""),
                    reason=event.data.get("stop_reason", ""),
                    open_items=int(event.data.get("open_items") or 0),
                    seq=event.seq,
                )
            )
    return stalls


def stalls_count(*, workspace_id: int, since: datetime | None = None) -> int:
    return len(stalls_list(workspace_id=workspace_id, since=since))
