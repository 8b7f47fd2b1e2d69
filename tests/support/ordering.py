"""Exact orderings for tests of races: run a callback right before or right after a function.

    with run_before("workspace.views.job_event_apply", hold_until_the_other_copy_waits):
        responses = race([...])

A sleep says "by now the other thread is probably there"; a hook says "this runs at that point", so a test
states the interleaving it checks and passes or fails the same way on a loaded machine. In the style of
saleor's `RunBefore`/`RunAfter` test helpers: the target is patched where it is looked
up, as `unittest.mock.patch` would, and the original still runs, with the callback given the same arguments
(`run_after`'s callback gets the result as well, as `result=`).

`wait_until` is the other half of an exact ordering: it polls a condition that says the other party has
reached its point (a backend waiting on a lock, a pipe being read), and fails loudly if it never does,
instead of hoping a fixed delay was long enough.
"""

import functools
import pkgutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

Target = str | tuple[Any, str]  # "module.attr", or (an object, the name of one of its attributes)


def _wrapping(target: Target, wrapper_of: Callable[[Callable], Callable]):
    if isinstance(target, str):
        module, attribute = target.rsplit(".", 1)
        function = getattr(pkgutil.resolve_name(module), attribute)
        return mock.patch(target, new=functools.wraps(function)(wrapper_of(function)))
    owner, attribute = target
    function = getattr(owner, attribute)
    return mock.patch.object(owner, attribute, new=functools.wraps(function)(wrapper_of(function)))


@contextmanager
def run_before(target: Target, callback: Callable[..., Any]) -> Iterator[None]:
    """Within the block, each call of `target` ("module.attr", or (object, "attr")) first runs
    `callback(*args, **kwargs)`."""

    def wrapper_of(function):
        def wrapper(*args, **kwargs):
            callback(*args, **kwargs)
            return function(*args, **kwargs)

        return wrapper

    with _wrapping(target, wrapper_of):
        yield


@contextmanager
def run_after(target: Target, callback: Callable[..., Any]) -> Iterator[None]:
    """Within the block, each call of `target` that returns runs `callback(*args, result=..., **kwargs)` before
    handing the result back to its caller."""

    def wrapper_of(function):
        def wrapper(*args, **kwargs):
            result = function(*args, **kwargs)
            callback(*args, result=result, **kwargs)
            return result

        return wrapper

    with _wrapping(target, wrapper_of):
        yield


def wait_until(condition: Callable[[], Any], *, timeout: float = 10, what: str = "the condition") -> Any:
    """Poll `condition` until it is true and return its value; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {timeout} s")
        time.sleep(0.01)
