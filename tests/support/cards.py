"""Helpers for the card and autonomy suites: who acts, the turn the runtime queued, the simulated upstream."""

from django.db import transaction

from agents.locks import task_qs_for_update
from agents.models import ACTIVE_TURN_STATUSES, Card, Task, Turn
from agents.runtime.loop import turn_run
from agents.services.cards import card_open_for_wait
from tests.support.queued import run_wakeups
from workspace.selectors import Access, workspace_access
from workspace.services.jobs import job_event_apply

PNG = {"b64": "iVBORw0KGgo=", "media_type": "image/png", "filename": "poster.png", "meta": {}}


def access_of(user, workspace) -> Access:
    return workspace_access(principal=user, workspace_id=workspace.pk)


def queued_turn(task: Task) -> Turn | None:
    """The task's queued or running turn, if the runtime started one."""
    return Turn.objects.filter(task=task, status__in=ACTIVE_TURN_STATUSES).first()


def run_queued(task: Task) -> str:
    """Run the turn the runtime queued for the task (there must be one), as a worker would."""
    turn = queued_turn(task)
    assert turn is not None, "no turn was queued"
    return turn_run(turn_id=turn.pk, generation=turn.generation)


def open_card(task: Task, waiting_for: dict) -> Card:
    """Open the card a wait needs, as the runtime does when a turn suspends (task row locked)."""
    with transaction.atomic():
        locked = task_qs_for_update().get(pk=task.pk)
        return card_open_for_wait(locked, waiting_for)


def complete(job) -> bool:
    """The job succeeds, and a worker runs the task's reaction to it."""
    applied = job_event_apply(job_id=job.pk, status="succeeded", progress=100, result=PNG)
    run_wakeups()
    return applied
