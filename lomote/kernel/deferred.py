"""Work that follows a commit but need not be done while the caller waits: a django-q job, queued with the write.

    enqueue_with_commit("agents.tasks.job_settled", task_id, job_id, name="job-settled-7", group="wakeups")

A webhook, an API call or a turn commits its facts and answers; what derives from them (a task's reaction to its
settled job, search vectors) runs in a worker. On the ORM broker in the same database (our deployment) the
message is written in the caller's transaction: it commits with the facts or not at all, so a process dying
right after the commit loses nothing, and no worker can see the message before the facts (DESIGN §14). Anywhere
else — another broker, django-q's sync mode, no transaction open — it is queued once the transaction commits,
and the caller names how lost work is found again (a sweep, or a reader that fills what is missing).
Every job queued this way must be safe to run twice: the ORM broker is at-least-once.
"""

import logging

from django.db import router, transaction
from django_q.brokers import get_broker
from django_q.brokers.orm import ORM
from django_q.conf import Conf
from django_q.tasks import async_task

logger = logging.getLogger(__name__)


def broker_in_database_of(model) -> bool:
    """Whether django-q's broker stores its messages in the database `model` is written to (the ORM broker)."""
    return Conf.ORM is not None and Conf.ORM == router.db_for_write(model) and isinstance(get_broker(), ORM)


def enqueue_with_commit(func: str, *args, name: str, group: str, timeout: int, written_with=None) -> None:
    """Queue `func(*args)` to run in a worker after the current transaction commits (module docstring).

    `written_with` is a model the caller's transaction writes: when the broker stores its messages in that
    model's database, the message joins the transaction instead of waiting for the commit."""
    options = {"task_name": name, "group": group, "timeout": timeout}
    if written_with is not None and joins_transaction(written_with):
        async_task(func, *args, **options)
        return
    transaction.on_commit(lambda: _enqueue(func, args, options))


def joins_transaction(written_with) -> bool:
    """Whether a message queued now commits with the open transaction that writes `written_with` (the ORM broker
    in its database, not in sync mode). A caller whose deferred work has no sweep to find it again does that work
    inline unless this holds."""
    connection = transaction.get_connection(router.db_for_write(written_with))
    return connection.in_atomic_block and not Conf.SYNC and broker_in_database_of(written_with)


def _enqueue(func: str, args: tuple, options: dict) -> None:
    try:
        async_task(func, *args, **options)
    except Exception:  # noqa: BLE001 - the caller's sweep (or reader) does the work the message would have
        logger.warning("enqueue of %s %s failed", func, options["task_name"], exc_info=True)
