"""django-q2's ORM broker, woken by PostgreSQL NOTIFY instead of sleeping a poll interval (Q_CLUSTER["broker_class"]).

The ORM broker's pusher asks the queue table for work and, when there is none, sleeps `poll` seconds: a job
enqueued just after a look waits up to that long (half of it on average) before any worker sees it. Here each
enqueue also sends `NOTIFY lomote_queue` (delivered when the enqueuing transaction commits, with the row; sent by the
row's own INSERT, so an enqueue stays one round trip on a callback's or a turn's path), and an
idle pusher waits on `LISTEN lomote_queue` for at most `poll` seconds: it wakes as soon as a job exists. The table
stays the truth — a lost notification (a dropped listener connection, a restart) only costs the old poll wait,
and the listener is opened again at the next look.

On another database (SQLite, the embedded default) it is the plain ORM broker.
"""

import contextlib
import logging
from time import sleep

import psycopg
from django.db import connections
from django.utils import timezone
from django_q.brokers.orm import ORM
from django_q.conf import Conf
from django_q.models import OrmQ

logger = logging.getLogger(__name__)

CHANNEL = "lomote_queue"


class NotifyingOrmBroker(ORM):
    def __init__(self, list_key: str | None = None):
        super().__init__(list_key=list_key or Conf.CLUSTER_NAME)
        self._listener: psycopg.Connection | None = None

    @staticmethod
    def _alias() -> str:
        return Conf.ORM

    def _on_postgres(self) -> bool:
        return connections[self._alias()].vendor == "postgresql"

    def enqueue(self, task):
        if not self._on_postgres():
            return super().enqueue(task)
        self.get_connection()  # django-q's own check for stale connections outside a transaction
        connection = connections[self._alias()]
        table = connection.ops.quote_name(OrmQ._meta.db_table)
        with connection.cursor() as cursor:
            # The row and its notification in one statement (what ORM.enqueue stores, then NOTIFY).
            cursor.execute(
                f"INSERT INTO {table} (key, payload, lock) VALUES (%s, %s, %s) "  # noqa: S608 - table name from model meta
                "RETURNING id, pg_notify(%s, '')",
                [self.list_key or Conf.CLUSTER_NAME, task, timezone.now(), CHANNEL],
            )
            return cursor.fetchone()[0]

    def dequeue(self):
        if not self._on_postgres():
            return super().dequeue()
        listener = self._listen()
        self._drain(listener)  # what arrived before this look is answered by the look itself
        taken = self._take()
        if taken:
            return taken
        self._wait(listener)
        return None

    def _take(self) -> list[tuple[int, str]]:
        """The ORM broker's own selection: up to `bulk` visible messages, each locked with a conditional update
        (of two clusters, one takes a message)."""
        queue = self.get_connection()
        taken = []
        for task in queue.filter(key=self.list_key, lock__lt=timezone.now())[: Conf.BULK]:
            if queue.filter(id=task.id, lock=task.lock).update(lock=self.timeout(task)):
                taken.append((task.pk, task.payload))
        return taken

    def _listen(self) -> psycopg.Connection | None:
        if self._listener is not None and not self._listener.closed:
            return self._listener
        try:
            params = connections[self._alias()].get_connection_params()
            params.pop("cursor_factory", None)
            params.pop("context", None)
            self._listener = psycopg.connect(**params, autocommit=True)
            self._listener.execute(f"LISTEN {CHANNEL}")
        except psycopg.Error:
            logger.warning("queue listener: cannot LISTEN; polling until it can", exc_info=True)
            self._listener = None
        return self._listener

    def _drain(self, listener: psycopg.Connection | None) -> None:
        if listener is None:
            return
        try:
            list(listener.notifies(timeout=0))
        except psycopg.Error:
            self._drop()

    def _wait(self, listener: psycopg.Connection | None) -> None:
        if listener is None:
            sleep(Conf.POLL)
            return
        try:
            list(listener.notifies(timeout=Conf.POLL, stop_after=1))
        except psycopg.Error:
            self._drop()
            sleep(Conf.POLL)

    def _drop(self) -> None:
        if self._listener is not None:
            with contextlib.suppress(psycopg.Error):
                self._listener.close()
        self._listener = None
