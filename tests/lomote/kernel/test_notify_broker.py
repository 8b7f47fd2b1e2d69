"""The NOTIFY-woken ORM broker (lomote/kernel/notify_broker.py): an idle pusher wakes when a job is enqueued,
not a poll interval later; the queue table stays the truth."""

import threading
import time

import pytest
from django.db import connection, transaction
from django.utils import timezone
from django_q.conf import Conf
from django_q.models import OrmQ
from django_q.tasks import async_task

from lomote.kernel.notify_broker import NotifyingOrmBroker

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def slow_poll(monkeypatch):
    monkeypatch.setattr(Conf, "POLL", 2.0)  # long enough that a wake by poll cannot be mistaken for a wake by NOTIFY
    return 2.0


def test_an_idle_pusher_wakes_when_a_job_is_enqueued(slow_poll):
    if connection.vendor != "postgresql":
        pytest.skip("LISTEN/NOTIFY is PostgreSQL's")
    broker = NotifyingOrmBroker()
    assert broker.dequeue() is None  # empty: opened its listener and waited one poll

    # when a job is enqueued 0.2 s into the pusher's wait
    timer = threading.Timer(0.2, lambda: async_task("math.floor", 1.5, broker=NotifyingOrmBroker()))
    started = time.monotonic()
    timer.start()
    assert broker.dequeue() is None  # woken by the notification, before the poll interval
    woke = time.monotonic() - started
    taken = broker.dequeue()

    # then it took the job at the next look, long before the 2-second poll would have ended
    assert woke < 1.0, woke
    assert taken and len(taken) == 1
    assert OrmQ.objects.filter(lock__gt=timezone.now()).count() == 1  # handed out, hidden from other pushers


def test_a_job_enqueued_in_a_transaction_is_announced_at_commit(slow_poll):
    if connection.vendor != "postgresql":
        pytest.skip("LISTEN/NOTIFY is PostgreSQL's")
    broker = NotifyingOrmBroker()
    assert broker.dequeue() is None
    with transaction.atomic():
        async_task("math.floor", 2.5, broker=NotifyingOrmBroker())
    started = time.monotonic()
    assert broker.dequeue()  # the row and its notification arrived together
    assert time.monotonic() - started < 1.0


def test_it_still_finds_jobs_when_its_listener_connection_is_gone(slow_poll):
    broker = NotifyingOrmBroker()
    assert broker.dequeue() is None
    if broker._listener is not None:
        broker._listener.close()  # a restarted server: the notification is lost, the table is not
    async_task("math.floor", 3.5, broker=NotifyingOrmBroker())
    assert broker.dequeue()
