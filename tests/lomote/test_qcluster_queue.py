"""A SIGKILLed idle worker must not wedge a django-q2 cluster (lomote.kernel.qcluster_queue).

The trap: a `multiprocessing.Queue` reader waiting in `get()` holds the queue's read lock, so killing it leaves the
lock taken and every later reader waits forever. The control case shows the trap on django-q2's own queue; the same
steps on PatientQueue deliver the message. Then the fix in place: a real qcluster whose only worker and monitor are
SIGKILLed while idle still runs the next task.
"""

import multiprocessing
import os
import queue
import signal
import time
from contextlib import ExitStack

import pytest
from django_q.models import Success
from django_q.queues import Queue
from django_q.tasks import async_task

from lomote.kernel.qcluster_queue import PatientQueue
from simulation.processes import descendants
from tests.support import qcluster as cluster
from tests.support.ordering import run_before
from tests.support.realtime import worker_env

FORK = multiprocessing.get_context("fork")


def _read_one(q, out, waiting=None):
    """Put what `q.get()` returns on `out`; set `waiting` as the reader starts to wait for a message: a plain Queue
    waits in `_recv_bytes` holding its read lock, a PatientQueue in `_poll` holding none."""
    with ExitStack() as hooks:
        if waiting is not None:
            for blocking in ("_poll", "_recv_bytes"):
                hooks.enter_context(run_before((q, blocking), lambda *args, **kwargs: waiting.set()))
        out.put(q.get())


def _killed_idle_reader_then_another(queue_class) -> object:
    """Start a reader, let it wait, SIGKILL it, start a second reader and put one message; return what it read."""
    q, out, waiting = queue_class(), FORK.Queue(), FORK.Event()
    first = FORK.Process(target=_read_one, args=(q, out, waiting), daemon=True)
    first.start()
    assert waiting.wait(10), "the first reader never started waiting in get()"
    os.kill(first.pid, signal.SIGKILL)
    first.join(5)
    second = FORK.Process(target=_read_one, args=(q, out), daemon=True)
    second.start()
    q.put("hello")
    try:
        return out.get(timeout=3)
    except queue.Empty:
        return None
    finally:
        second.kill()
        second.join(5)


def test_the_trap_is_real_a_killed_idle_reader_wedges_a_plain_queue():
    assert _killed_idle_reader_then_another(Queue) is None


def test_a_killed_idle_reader_leaves_a_patient_queue_working():
    assert _killed_idle_reader_then_another(PatientQueue) == "hello"


def _drain(q, out, stop):
    for item in iter(q.get, stop):
        out.put(item)
    out.put(("done", os.getpid()))


def test_several_readers_receive_every_message_exactly_once():
    # given three readers on one patient queue
    q, out = PatientQueue(), FORK.Queue()
    readers = [FORK.Process(target=_drain, args=(q, out, "STOP"), daemon=True) for _ in range(3)]
    for reader in readers:
        reader.start()

    # when 600 messages are put, then one STOP per reader
    for n in range(600):
        q.put(n)
    for _ in readers:
        q.put("STOP")

    # then every message arrives once, and every reader stops
    got, done = [], 0
    while done < len(readers):
        item = out.get(timeout=10)
        if isinstance(item, tuple):
            done += 1
        else:
            got.append(item)
    for reader in readers:
        reader.join(5)
    assert sorted(got) == list(range(600))
    assert q.qsize() == 0


def test_a_get_with_a_timeout_raises_empty_and_a_closed_queue_refuses():
    q = PatientQueue()
    started = time.monotonic()
    with pytest.raises(queue.Empty):
        q.get(timeout=0.2)
    assert time.monotonic() - started >= 0.2
    with pytest.raises(queue.Empty):
        q.get(block=False)
    q.put("x")
    assert q.get(timeout=2) == "x"
    q.close()
    with pytest.raises(ValueError):
        q.get()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_qcluster_whose_idle_worker_and_monitor_are_killed_still_runs_the_next_task():
    # given a real qcluster with one worker, which has run a task and is idle
    with cluster.running(worker_env(redis_url=None, Q_WORKERS="1")) as (process, log):
        async_task("math.floor", 1.5, task_name="before")
        cluster.wait_for(
            lambda: Success.objects.filter(name="before").exists(),
            timeout=60,
            process=process,
            log=log,
            what="the first task",
        )
        time.sleep(0.5)  # the worker and the monitor are back waiting on their queues

        # when every process below the sentinel (worker, monitor, pusher) is SIGKILLed
        sentinel = cluster.wait_for(lambda: descendants(process.pid)[:1], timeout=10, what="the sentinel")[0]
        killed = descendants(sentinel)
        assert len(killed) == 3, killed
        for pid in killed:
            os.kill(pid, signal.SIGKILL)

        # then the sentinel starts them again and the next task runs
        async_task("math.floor", 2.5, task_name="after")
        cluster.wait_for(
            lambda: Success.objects.filter(name="after").exists(),
            timeout=60,
            process=process,
            log=log,
            what="a task after the kills",
        )
        restarted = [pid for pid in descendants(sentinel) if pid not in killed]
        assert len(restarted) == 3, "a new worker, monitor and pusher"
