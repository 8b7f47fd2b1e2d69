"""Waking workers. The database is the truth; a queued job only wakes a worker (DESIGN §3, §14)."""

import logging

from django.conf import settings
from django.db import transaction

from lomote.kernel.deferred import enqueue_with_commit
from workspace.models import GenerationJob

logger = logging.getLogger(__name__)


def enqueue_turn(turn_id: int, generation: int) -> None:
    """Enqueue the job for (turn, generation) once the current transaction commits.

    If the process dies after the commit, or the enqueue fails, the watchdog finds the queued turn.
    """
    transaction.on_commit(lambda: _enqueue(turn_id, generation))


def turn_message_name(turn_id: int, generation: int) -> str:
    """The django-q task name of a turn's message (the watchdog finds it by this name)."""
    return f"turn-{turn_id}-g{generation}"


def enqueue_turn_now(turn_id: int, generation: int) -> None:
    """Enqueue at once, outside any transaction (the watchdog, for a turn whose message is gone)."""
    _enqueue(turn_id, generation)


def job_settled_message_name(job_id: int) -> str:
    return f"job-settled-{job_id}"


def job_settled_enqueue(*, task_id: int, job_id: int) -> None:
    """Have a worker record a settled job on its task and decide whether the task goes on (wakeups.task_job_settled).

    Queued with the job's own transaction (lomote/kernel/deferred.py); the watchdog does it for a task still
    waiting on settled jobs when the message was lost. Safe to run twice."""
    enqueue_with_commit(
        "agents.tasks.job_settled",
        task_id,
        job_id,
        name=job_settled_message_name(job_id),
        group="wakeups",
        timeout=settings.LOMOTE_TASK_TIMEOUTS["default"],
        written_with=GenerationJob,
    )


def _enqueue(turn_id: int, generation: int) -> None:
    from django_q.tasks import async_task

    try:
        async_task(
            "agents.tasks.run_turn",
            turn_id,
            generation,
            group="turns",
            timeout=settings.LOMOTE_TASK_TIMEOUTS["turn"],
            task_name=turn_message_name(turn_id, generation),
        )
    except Exception:  # noqa: BLE001 - the watchdog re-enqueues turns queued too long
        logger.warning("enqueue of turn %s generation %s failed", turn_id, generation, exc_info=True)
