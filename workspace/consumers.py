"""WebSocket stream of a workspace's event log: `/ws/workspaces/<id>/?after=<seq>`.

The log is the truth. On connect the consumer replays everything after `after`, then streams. A push from
the channel layer is only a hint to re-read the log; a periodic tail covers lost pushes and processes that
cannot reach this one (embedded mode without Redis), and re-authenticates the caller's credentials and
re-checks that they may still read.
"""

import asyncio
import contextlib
import json
import logging
import re
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings

from lomote.kernel.events import workspace_group
from lomote.kernel.exceptions import NotFound
from workspace.selectors import event_list_after, workspace_access
from workspace.ws_auth import principal_from_scope, same_principal

logger = logging.getLogger(__name__)

CLOSE_FORBIDDEN = 4403
CLOSE_BAD_REQUEST = 4400
# After one of these the reader may have lost access: re-check at once instead of at the next tail tick,
# so a removed member or a revoked key receives nothing that follows its removal.
ACCESS_EVENT_KINDS = frozenset({"member.removed", "api_key.revoked"})
# ASCII digits within bigint range; int() alone would also take " 7", "+7", "1_0" and non-ASCII digits.
_AFTER = re.compile(r"[0-9]{1,18}")
MAX_ID = 2**63 - 1


def _parse_after(query_string: bytes) -> int | None:
    values = parse_qs(query_string.decode("latin-1"), keep_blank_values=True).get("after")
    if values is None:
        return 0
    if len(values) != 1 or not _AFTER.fullmatch(values[0]):
        return None
    return int(values[0])


@database_sync_to_async
def _readable_seq(principal, workspace_id: int) -> int | None:
    """The workspace's last event sequence if `principal` may read it now, else None."""
    try:
        access = workspace_access(principal=principal, workspace_id=workspace_id)
    except NotFound:
        return None
    return access.workspace.last_event_seq


@database_sync_to_async
def _events_after(workspace_id: int, after: int, limit: int) -> list[dict]:
    return [event.as_message() for event in event_list_after(workspace_id=workspace_id, after=after, limit=limit)]


async def _admission(scope, workspace_id: int) -> tuple[int | None, int]:
    """(None, the seq to stream after) for a client that may connect, else (the close code, 0)."""
    after = _parse_after(scope.get("query_string", b""))
    if after is None:
        return CLOSE_BAD_REQUEST, 0
    if not 0 < workspace_id <= MAX_ID:
        return CLOSE_FORBIDDEN, 0  # the route takes any digits; SQLite raises on ids beyond 64 bits
    principal = scope.get("user")
    if principal is None or not principal.is_authenticated:
        return CLOSE_FORBIDDEN, 0
    last_seq = await _readable_seq(principal, workspace_id)
    if last_seq is None:
        return CLOSE_FORBIDDEN, 0
    # A cursor beyond the log (a restored database, a client bug) would silently skip every event up to it;
    # start from the log's end instead, and say so in `replayed`.
    return None, min(after, last_seq)


async def _refuse_handshake(receive, send, code: int) -> None:
    message = await receive()
    if message["type"] == "websocket.connect":
        await send({"type": "websocket.close", "code": code})


class WorkspaceEventsConsumer(AsyncJsonWebsocketConsumer):
    groups = []  # joined explicitly, only after the access check

    async def __call__(self, scope, receive, send):
        self.workspace_id = int(scope["url_route"]["kwargs"]["workspace_id"])
        self.principal = scope.get("user")
        self.group = workspace_group(self.workspace_id)
        self.joined = False
        self.closed = False
        self.tail_task = None
        self.drain_lock = asyncio.Lock()
        # Admission is decided before the consumer starts: a refused client never gets a channel, a
        # channel-layer connection or a group, so a flood of bad handshakes costs the layer nothing.
        refusal, self.last_seq = await _admission(scope, self.workspace_id)
        if refusal is not None:
            await _refuse_handshake(receive, send, refusal)
            return
        try:
            await super().__call__(scope, receive, send)
        finally:
            # Also when the consumer fails or is cancelled without a disconnect: never leave a tail running.
            await self._stop()

    async def connect(self):
        # Join before the replay: an event committed meanwhile is either in the replay or hinted after it.
        await self.channel_layer.group_add(self.group, self.channel_name)
        self.joined = True
        await self.accept()
        await self.drain()
        if self.closed:
            return
        await self.send_json({"type": "replayed", "last_seq": self.last_seq})
        self.tail_task = asyncio.create_task(self.tail())

    async def disconnect(self, code):
        await self._stop()

    async def receive(self, text_data=None, bytes_data=None, **kwargs):
        # A malformed or binary frame from the client must not kill the stream.
        if text_data is None:
            return
        try:
            content = json.loads(text_data)
        except ValueError:
            return
        await self.receive_json(content)

    async def receive_json(self, content, **kwargs):
        if isinstance(content, dict) and content.get("type") == "ping" and not self.closed:
            await self.send_json({"type": "pong", "last_seq": self.last_seq})

    async def event_hint(self, message):
        if not self.closed and message.get("seq", 0) > self.last_seq:
            await self.drain()

    async def drain(self):
        """Send every logged event after the last one sent, in order, exactly once per connection."""
        batch_size = settings.EVENT_REPLAY_BATCH
        async with self.drain_lock:
            while not self.closed:
                events = await _events_after(self.workspace_id, self.last_seq, batch_size)
                for event in events:
                    await self.send_json({"type": "event", **event})
                    self.last_seq = event["seq"]
                    if event["kind"] in ACCESS_EVENT_KINDS and not await self.may_still_read():
                        await self._refuse(CLOSE_FORBIDDEN)
                        return
                if len(events) < batch_size:
                    return

    async def may_still_read(self) -> bool:
        """Re-authenticate the connection's credentials and re-check that they may read the workspace."""
        principal = await principal_from_scope(self.scope)
        if not same_principal(principal, self.principal):
            return False
        return await _readable_seq(principal, self.workspace_id) is not None

    async def tail(self):
        while not self.closed:
            await asyncio.sleep(settings.EVENT_TAIL_INTERVAL)
            try:
                if not await self.may_still_read():
                    await self._refuse(CLOSE_FORBIDDEN)
                    return
                if self.closed:  # refused by a drain while we were checking
                    return
                # Layers drop group members silently (group expiry, a full channel whose messages expired):
                # re-joining keeps pushes coming to a long-lived connection.
                await self.channel_layer.group_add(self.group, self.channel_name)
                self.joined = True
                await self.drain()
            except asyncio.CancelledError:
                raise
            except Exception:
                # A failed tick (database restart, layer outage) is retried at the next one.
                logger.exception("event tail failed for workspace %s", self.workspace_id)

    async def _refuse(self, code: int) -> None:
        """Close (or refuse, before accept) and stop: nothing is sent on this connection afterwards."""
        self.closed = True
        await self._leave()
        await self.close(code=code)

    async def _leave(self) -> None:
        if getattr(self, "joined", False):
            self.joined = False
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def _stop(self) -> None:
        self.closed = True
        task, self.tail_task = getattr(self, "tail_task", None), None
        if task is not None and task is not asyncio.current_task():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        with contextlib.suppress(Exception):
            await self._leave()
