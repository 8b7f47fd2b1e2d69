"""Push hints for the per-workspace event log (DESIGN §12).

The log in the database is the truth; a push only tells connected consumers to re-read it. Channel layers
are at-most-once, so a lost push costs latency (the consumer's tail catches up), never an event.
"""

import asyncio
import atexit
import logging
import os
import threading

from asgiref.sync import async_to_sync
from channels import DEFAULT_CHANNEL_LAYER
from channels.layers import InMemoryChannelLayer, channel_layers, get_channel_layer
from django.db import transaction

logger = logging.getLogger(__name__)

HINT_TYPE = "event.hint"
SEND_TIMEOUT = 5.0  # seconds: an unreachable layer holds the hints behind it no longer (they coalesce meanwhile)
EXIT_WAIT = 2.0  # seconds a process exiting waits for its hints still in flight


def workspace_group(workspace_id: int) -> str:
    return f"workspace.{workspace_id}"


_pending = threading.local()


def push_hint_on_commit(workspace_id: int, seq: int) -> None:
    """Push one hint per workspace after the transaction commits, however many events it appended.

    A hint only says "re-read the log from where you are", so the highest sequence is all that matters;
    a value left behind by a rolled-back transaction is at worst a hint with nothing new behind it.
    """
    pending = _pending.__dict__.setdefault("by_workspace", {})
    pending[workspace_id] = max(seq, pending.get(workspace_id, 0))
    transaction.on_commit(lambda: _flush(workspace_id))


def _flush(workspace_id: int) -> None:
    seq = _pending.__dict__.setdefault("by_workspace", {}).pop(workspace_id, None)
    if seq is not None:  # the first callback after a commit pushes; the others find nothing left
        push_hint(workspace_id, seq)


def push_hint(workspace_id: int, seq: int) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    if not isinstance(layer, InMemoryChannelLayer):
        hints.send(layer, workspace_id, seq)  # a cross-process layer (Redis): sent from this process's hint loop
        return
    if not layer.groups.get(workspace_group(workspace_id)):
        return  # nobody in this process listens (e.g. a worker process); consumers elsewhere tail the log
    try:
        async_to_sync(layer.group_send)(workspace_group(workspace_id), {"type": HINT_TYPE, "seq": seq})
    except Exception:  # noqa: BLE001 - a hint that cannot be sent is recovered by log tailing
        logger.warning("event push failed for workspace %s seq %s", workspace_id, seq, exc_info=True)


class HintSender:
    """Sends a process's hints through a cross-process channel layer from one event loop of its own, off the
    writer's path.

    async_to_sync ran each hint on a new event loop, and channels_redis keeps its connection pools per loop: every
    hint opened and closed a Redis connection, ~3.7 ms inside each committing step of a worker (issue 17). Here
    one loop on a daemon thread keeps one connection, and a writer only records the hint: the highest sequence
    per workspace waiting to go, so a burst of commits costs one message per workspace. A hint is at most once
    anyway (the log is the truth, consumers tail it), so a slow or absent Redis never slows a commit.

    The loop's layer is its own instance of the configured one (channel_layers.make_backend), made again when
    the configured instance changes, so that closing the default layer's pools on another loop never meets it.
    """

    def __init__(self):
        self.forget()

    def forget(self) -> None:
        """Start afresh on the next hint. Also run in a forked child (django-q2's workers): the parent's loop
        thread is not there, and its lock may have been held at the fork."""
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pending: dict[int, int] = {}  # workspace → the highest sequence not yet sent
        self._draining = False
        self._idle = threading.Event()
        self._idle.set()
        self._wanted = None  # the configured layer, as the last writer saw it
        self._source = None  # the configured layer `_layer` was made for
        self._layer = None

    def send(self, source, workspace_id: int, seq: int) -> None:
        with self._lock:
            if self._loop is None:
                self._start()
            self._pending[workspace_id] = max(seq, self._pending.get(workspace_id, 0))
            self._wanted = source
            if self._draining:
                return  # the running drain takes it
            self._draining = True
            self._idle.clear()
            loop = self._loop
        loop.call_soon_threadsafe(lambda: loop.create_task(self._drain()))

    def wait_idle(self, timeout: float) -> bool:
        """True once every hint recorded so far has been handed to the layer (tests: nothing left in flight)."""
        return self._idle.wait(timeout)

    def _start(self) -> None:
        self._loop = asyncio.new_event_loop()
        threading.Thread(target=self._loop.run_forever, name="lomote-event-hints", daemon=True).start()

    async def _drain(self) -> None:
        while True:
            with self._lock:
                batch, self._pending, source = self._pending, {}, self._wanted
                if not batch:
                    self._draining = False
                    self._idle.set()
                    return
            layer = await self._layer_for(source)
            for workspace_id, seq in batch.items():
                try:
                    message = {"type": HINT_TYPE, "seq": seq}
                    await asyncio.wait_for(layer.group_send(workspace_group(workspace_id), message), SEND_TIMEOUT)
                except Exception:  # noqa: BLE001 - a hint that cannot be sent is recovered by log tailing
                    logger.warning("event push failed for workspace %s seq %s", workspace_id, seq, exc_info=True)

    async def _layer_for(self, source):
        if self._source is not source:
            old, self._layer, self._source = self._layer, channel_layers.make_backend(DEFAULT_CHANNEL_LAYER), source
            close_pools = getattr(old, "close_pools", None)
            if close_pools is not None:
                try:
                    await close_pools()
                except Exception:  # noqa: BLE001 - an old connection that will not close is dropped with its loop
                    logger.warning("closing the previous hint layer failed", exc_info=True)
        return self._layer


hints = HintSender()
os.register_at_fork(after_in_child=hints.forget)
atexit.register(hints.wait_idle, EXIT_WAIT)  # a short-lived process (a command, a script) sends its last hints
