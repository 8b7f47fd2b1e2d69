"""The queues of our django-q2 clusters: waiting for a message without holding the queue's read lock.

A `multiprocessing.Queue` reader blocked in `get()` holds the queue's read lock for as long as it waits. A django-q2
worker (or the monitor) SIGKILLed while idle therefore dies holding that lock, and every worker the sentinel starts in
its place waits on it forever: the cluster still runs, still takes tasks from the broker, and never executes one
again (found by the scenarios' kill variant; reproduced with a bare queue in tests/lomote/test_qcluster_queue.py).

`PatientQueue` waits for the pipe to become readable with no lock held, and takes the lock only to receive a message
that is already there — a window of microseconds instead of the whole idle time. Readers woken together for one
message race for it; the losers find the pipe empty and wait again.
"""

import time
from multiprocessing.reduction import ForkingPickler
from queue import Empty

from django_q.queues import Queue

# How long a reader waits for another reader to finish receiving before it looks at the pipe again.
_LOCK_WAIT = 0.1


class PatientQueue(Queue):
    def get(self, block: bool = True, timeout: float | None = None):
        if not block:
            return super().get(block=False)
        if self._closed:
            raise ValueError(f"Queue {self!r} is closed")
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                raise Empty
            if not self._poll(remaining):  # waiting: no lock held, a SIGKILL here leaves nothing behind
                continue
            if not self._rlock.acquire(True, _LOCK_WAIT):
                continue
            try:
                if not self._poll():
                    continue  # another reader took the message
                data = self._recv_bytes()
                self._sem.release()
            finally:
                self._rlock.release()
            self.size.increment(-1)
            return ForkingPickler.loads(data)
