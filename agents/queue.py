"""Waking workers. The database is the truth; a queued job only wakes a worker (DESIGN §3, §14)."""

import logging

from django.conf import settings
from django.db import transaction

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
