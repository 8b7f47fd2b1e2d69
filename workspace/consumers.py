"""WebSocket stream of a workspace's event log: `/ws/workspaces/<id>/?after=<seq>`.

The log is the truth. On connect the consumer replays everything after `after`, then streams. A push from
the channel layer is only a hint to re-read the log; a periodic tail covers lost pushes and processes that
cannot reach this one (embedded mode without Redis), and re-checks that the caller may still read.
"""

import asyncio
import contextlib
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings

from lomote.events import workspace_group
from lomote.exceptions import NotFound
from workspace.selectors import event_list_after, workspace_access

CLOSE_FORBIDDEN = 4403
CLOSE_BAD_REQUEST = 4400


def _parse_after(query_string: bytes) -> int | None:
    values = parse_qs(query_string.decode("latin-1")).get("after", ["0"])
    try:
        after = int(values[-1])
    except ValueError:
        return None
    return after if after >= 0 else None


@database_sync_to_async
def _may_read(principal, workspace_id: int) -> bool:
    try:
        workspace_access(principal=principal, workspace_id=workspace_id)
    except NotFound:
        return False
    return True


@database_sync_to_async
def _events_after(workspace_id: int, after: int, limit: int) -> list[dict]:
    return [event.as_message() for event in event_list_after(workspace_id=workspace_id, after=after, limit=limit)]


class WorkspaceEventsConsumer(AsyncJsonWebsocketConsumer):
    groups = []  # joined explicitly, only after the membership check

    async def connect(self):
        self.workspace_id = int(self.scope["url_route"]["kwargs"]["workspace_id"])
        self.principal = self.scope.get("user")
        self.tail_task = None
        after = _parse_after(self.scope.get("query_string", b""))
        if after is None:
            await self.close(code=CLOSE_BAD_REQUEST)
            return
        if self.principal is None or not self.principal.is_authenticated:
            await self.close(code=CLOSE_FORBIDDEN)
            return
        if not await _may_read(self.principal, self.workspace_id):
            await self.close(code=CLOSE_FORBIDDEN)
            return
        self.last_seq = after
        self.drain_lock = asyncio.Lock()
        # Join before the replay: an event committed meanwhile is either in the replay or hinted after it.
        await self.channel_layer.group_add(workspace_group(self.workspace_id), self.channel_name)
        await self.accept()
        await self.drain()
        await self.send_json({"type": "replayed", "last_seq": self.last_seq})
        self.tail_task = asyncio.create_task(self.tail())

    async def disconnect(self, code):
        if self.tail_task is not None:
            self.tail_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.tail_task
            await self.channel_layer.group_discard(workspace_group(self.workspace_id), self.channel_name)

    async def receive_json(self, content, **kwargs):
        if isinstance(content, dict) and content.get("type") == "ping":
            await self.send_json({"type": "pong", "last_seq": self.last_seq})

    async def event_hint(self, message):
        if message.get("seq", 0) > self.last_seq:
            await self.drain()

    async def drain(self):
        """Send every logged event after the last one sent, in order, exactly once per connection."""
        batch_size = settings.EVENT_REPLAY_BATCH
        async with self.drain_lock:
            while True:
                events = await _events_after(self.workspace_id, self.last_seq, batch_size)
                for event in events:
                    await self.send_json({"type": "event", **event})
                    self.last_seq = event["seq"]
                if len(events) < batch_size:
                    return

    async def tail(self):
        while True:
            await asyncio.sleep(settings.EVENT_TAIL_INTERVAL)
            if not await _may_read(self.principal, self.workspace_id):
                await self.close(code=CLOSE_FORBIDDEN)
                return
            await self.drain()
