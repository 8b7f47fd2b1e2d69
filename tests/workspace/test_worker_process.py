"""An event appended by another process reaches a connected WebSocket client (DESIGN §12, §13).

The other process shares the PostgreSQL test database. Without a shared channel layer (embedded mode) its
push cannot reach this process and the consumer's log tail delivers the event; with Redis the push does,
and the tail is set far beyond the test's wait so that nothing else could.
"""

import os

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer

from lomote.channel_layers import redis_channel_layers
from tests.conftest import redis_url
from tests.support.realtime import (
    receive_events,
    receive_replay,
    run_append_process,
    session_cookie_for,
    websocket,
    worker_env,
    ws_headers,
    ws_path,
)
from workspace.models import Event

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("channel_layer"),
]


async def _assert_delivered_from_another_process(workspace, user, env, timeout: float) -> None:
    cookie = await database_sync_to_async(session_cookie_for)(user)
    async with websocket(ws_path(workspace.pk), ws_headers(cookie=cookie)) as (communicator, accepted, _):
        assert accepted
        assert (await receive_replay(communicator))[1] == 1

        # when a separate Python process appends an event to the shared log
        seq = await run_append_process(workspace.pk, "worker.finished", env)

        # then it is persisted by that process and reaches the connected client, once
        stored = await database_sync_to_async(Event.objects.get)(workspace=workspace, seq=seq)
        assert stored.kind == "worker.finished"
        assert seq == 2
        [event] = await receive_events(communicator, 1, timeout=timeout)
        assert (event["seq"], event["kind"], event["data"]) == (seq, "worker.finished", stored.data)
        assert event["data"]["pid"] != os.getpid()
        assert await communicator.receive_nothing(timeout=0.3)


async def test_it_delivers_a_worker_event_by_tailing_the_log_without_a_shared_layer(workspace, bob, settings):
    # given embedded mode: an in-process layer here, none shared with the worker, and a short tail
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    settings.EVENT_TAIL_INTERVAL = 0.2
    assert type(get_channel_layer()).__name__ == "InMemoryChannelLayer"
    env = worker_env(redis_url=None)

    # when / then
    await _assert_delivered_from_another_process(workspace, bob, env, timeout=10)


@pytest.mark.redis
async def test_it_delivers_a_worker_event_by_a_redis_push(workspace, bob, settings):
    # given the Redis layer in both processes and a tail that will not tick during the test
    url = redis_url()
    settings.CHANNEL_LAYERS = redis_channel_layers(url)
    settings.EVENT_TAIL_INTERVAL = 60
    env = worker_env(redis_url=url)

    # when / then: delivered well before the tail could have run
    await _assert_delivered_from_another_process(workspace, bob, env, timeout=10)
