"""Push hints through a cross-process layer (Redis) go out from one event loop per process (lomote.kernel.events).

A worker commits a step every few milliseconds; async_to_sync ran each hint on a new event loop, and
channels_redis keeps its connection pools per loop, so each hint opened and closed a Redis connection inside the
committing step. What must hold now: a writer only records the hint; the process keeps one connection; the
listener gets the highest sequence of each workspace; a forked worker starts its own loop; an unreachable Redis
loses hints (the log is the truth), never a commit.
"""

import asyncio
import logging
import os

import pytest
import redis
from channels.layers import channel_layers, get_channel_layer

from lomote.channel_layers import redis_channel_layers
from lomote.kernel.events import HINT_TYPE, HintSender, hints, push_hint, workspace_group
from tests.conftest import redis_url

pytestmark = pytest.mark.redis


@pytest.fixture
def redis_layer(settings):
    settings.CHANNEL_LAYERS = redis_channel_layers(redis_url())
    channel_layers.backends = {}
    yield get_channel_layer()
    assert hints.wait_idle(10)
    channel_layers.backends = {}


@pytest.fixture
def listen(redis_layer):
    """listen(*workspaces) → a function returning every message the listener got so far: a channel in those
    workspaces' groups, on a loop of its own as a consumer's is (closed after the test)."""
    loop = asyncio.new_event_loop()

    async def received(channel: str) -> list[dict]:
        await redis_layer.send(channel, {"type": "test.marker"})  # sent after them all: it ends the read
        got = []
        while (message := await asyncio.wait_for(redis_layer.receive(channel), 5)) != {"type": "test.marker"}:
            got.append(message)
        return got

    def start(*workspaces: int):
        channel = loop.run_until_complete(redis_layer.new_channel())
        for workspace in workspaces:
            loop.run_until_complete(redis_layer.group_add(workspace_group(workspace), channel))
        return lambda: loop.run_until_complete(received(channel))

    yield start
    loop.run_until_complete(redis_layer.close_pools())
    loop.close()


def _connections_opened(client) -> int:
    return client.info("stats")["total_connections_received"]


def test_a_processs_hints_share_one_connection_and_each_workspace_gets_its_highest_sequence(listen):
    # given a listener in two workspaces' groups
    received = listen(1, 2)
    assert hints.wait_idle(10)
    client = redis.Redis.from_url(redis_url())
    opened = _connections_opened(client)  # its own connection is open from here on

    # when a worker thread pushes 60 hints for the two workspaces, as 60 committing steps do
    for seq in range(1, 61):
        push_hint(1 + seq % 2, seq)
    assert hints.wait_idle(10)

    # then at most one connection was opened for all of them (the process's first hint opens it)
    assert _connections_opened(client) - opened <= 1
    # and the last hint each workspace got carries its highest sequence, with no more hints than pushes
    got = received()
    assert 2 <= len(got) <= 60 and all(m["type"] == HINT_TYPE for m in got)
    assert max(m["seq"] for m in got if m["seq"] % 2) == 59 and max(m["seq"] for m in got if not m["seq"] % 2) == 60


def test_a_forked_worker_sends_its_hints_from_its_own_loop(listen):
    # given a parent whose hint loop is running, and a listener
    received = listen(7)
    push_hint(7, 1)
    assert hints.wait_idle(10)

    # when a forked child (as django-q2 starts its workers) pushes a hint and exits
    pid = os.fork()
    if pid == 0:  # the child: its own loop thread, started by its first hint
        try:
            push_hint(7, 2)
            os._exit(0 if hints.wait_idle(10) else 1)
        finally:
            os._exit(2)
    _, status = os.waitpid(pid, 0)

    # then the child's hint arrived after the parent's
    assert os.waitstatus_to_exitcode(status) == 0
    assert [m["seq"] for m in received()] == [1, 2]


def test_an_unreachable_layer_loses_the_hint_with_a_warning_and_the_writer_goes_on(settings, caplog):
    # given a Redis layer on a port where nothing listens, and a sender of its own
    settings.CHANNEL_LAYERS = redis_channel_layers("redis://127.0.0.1:9")
    channel_layers.backends = {}
    sender = HintSender()

    # when a writer records a hint, then it returns without having sent it
    with caplog.at_level(logging.WARNING, logger="lomote.kernel.events"):
        sender.send(get_channel_layer(), 3, 1)
        assert sender.wait_idle(10)
    channel_layers.backends = {}

    # and the failed push was logged, with the workspace and sequence
    assert any("event push failed for workspace 3 seq 1" in r.getMessage() for r in caplog.records)


@pytest.mark.asyncio
async def test_a_channel_quiet_for_longer_than_the_layers_blocking_pop_still_receives(settings):
    # given the Redis layer as the settings configure it, and a channel nobody writes to for a while
    settings.CHANNEL_LAYERS = redis_channel_layers(redis_url())
    channel_layers.backends = {}
    layer = get_channel_layer()
    channel = await layer.new_channel()

    # when a message arrives after more than the layer's blocking pop (channels_redis: 5 s), as on a quiet
    # WebSocket. redis-py 8 reads with a 5 s socket timeout by default, so the consumer's read raised
    # TimeoutError and daphne dropped the connection every few seconds.
    async def later():
        await asyncio.sleep(layer.brpop_timeout + 1.5)
        await layer.send(channel, {"type": "test.late"})

    sender = asyncio.create_task(later())
    try:
        # then the waiting receive gets it
        assert await asyncio.wait_for(layer.receive(channel), layer.brpop_timeout + 10) == {"type": "test.late"}
    finally:
        await sender
        await layer.close_pools()
        channel_layers.backends = {}
