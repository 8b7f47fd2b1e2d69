"""Run calls at the same moment, each in its own thread and so on its own database connection.

    first, second = race([lambda: order_place(...), lambda: order_place(...)])

Each result is what the call returned or the exception it raised, in the order of the calls. A test that
needs the calls to meet at a later point (say, at a row lock) patches that point to wait on its own barrier.
"""

import threading
from collections.abc import Callable, Sequence
from typing import Any

from django.db import connections


def race(calls: Sequence[Callable[[], Any]], *, timeout: float = 60) -> list:
    """Release every call together; return each one's result or exception. Each thread closes its
    connections, so the test database can be dropped afterwards."""
    gate = threading.Barrier(len(calls), timeout=timeout)
    results: list = [None] * len(calls)

    def run(index, call):
        try:
            gate.wait()
            results[index] = call()
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            results[index] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i, call)) for i, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=timeout)
    assert not any(thread.is_alive() for thread in threads), "a racing call never finished"
    return results
