"""Helpers for the realtime suites: WebSocket clients against the real ASGI stack, and worker processes.

Clients go through `lomote.asgi.application`, so the Origin check and both credential middlewares run.
Waits are bounded; a test fails with what it did receive rather than hanging.
"""

import asyncio
import contextlib
import json
import os
import subprocess
import sys

from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.db import transaction

from lomote.asgi import application
from lomote.channel_layers import redis_channel_layers
from lomote.kernel.database import current_database_url
from workspace.services.events import event_append

ORIGIN = "http://testserver"
REPO_ROOT = settings.BASE_DIR


def ws_path(workspace_id: int, after: int | str | None = None) -> str:
    path = f"/ws/workspaces/{workspace_id}/"
    return path if after is None else f"{path}?after={after}"


def ws_headers(
    *, origin: str | None = ORIGIN, cookie: str | None = None, authorization: str | None = None
) -> list[tuple[bytes, bytes]]:
    headers = [(b"host", b"testserver")]
    if origin is not None:
        headers.append((b"origin", origin.encode()))
    if cookie is not None:
        headers.append((b"cookie", cookie.encode()))
    if authorization is not None:
        headers.append((b"authorization", authorization.encode()))
    return headers


def session_cookie_for(user) -> str:
    """A real session for `user` (as a browser login would leave), as a Cookie header value."""
    from django.test import Client

    client = Client()
    client.force_login(user)
    return f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"


@contextlib.asynccontextmanager
async def websocket(path: str, headers: list[tuple[bytes, bytes]]):
    """A client that has sent the handshake: yields (communicator, accepted, subprotocol_or_close_code)."""
    communicator = WebsocketCommunicator(application, path, headers=headers)
    try:
        accepted, detail = await communicator.connect(timeout=5)
        yield communicator, accepted, detail
    finally:
        if communicator._future is not None and not communicator.future.done():
            # redis-py can swallow the cancellation of a Redis layer receive (redis/redis-py#2028): the
            # consumer has finished its own disconnect by then, and this timeout cancels it again.
            await communicator.disconnect(timeout=1)


async def next_message(communicator: WebsocketCommunicator, timeout: float = 5.0) -> dict:
    """The next thing the server sent: a decoded JSON frame, or the raw `websocket.close` message."""
    output = await communicator.receive_output(timeout)
    if output["type"] == "websocket.send":
        return json.loads(output["text"])
    return output


async def receive_events(communicator: WebsocketCommunicator, count: int, timeout: float = 10.0) -> list[dict]:
    """Exactly the next `count` messages, each of which must be an event."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    events: list[dict] = []
    while len(events) < count:
        remaining = deadline - loop.time()
        if remaining <= 0:
            raise AssertionError(f"received {len(events)} of {count} events in {timeout}s: {events}")
        try:
            message = await next_message(communicator, remaining)
        except TimeoutError:
            raise AssertionError(f"received {len(events)} of {count} events in {timeout}s: {events}") from None
        if message.get("type") != "event":
            raise AssertionError(f"expected an event after {len(events)} events, got {message}")
        events.append(message)
    return events


async def receive_replay(communicator: WebsocketCommunicator, timeout: float = 10.0) -> tuple[list[dict], int]:
    """The replayed events and the `replayed` marker's last_seq."""
    events: list[dict] = []
    while True:
        message = await next_message(communicator, timeout)
        if message.get("type") == "replayed":
            return events, message["last_seq"]
        if message.get("type") != "event":
            raise AssertionError(f"expected the replay, got {message} after {events}")
        events.append(message)


async def receive_close(communicator: WebsocketCommunicator, timeout: float = 5.0) -> int | None:
    """Skip frames until the server closes the socket; returns the close code."""
    while True:
        message = await next_message(communicator, timeout)
        if message.get("type") == "websocket.close":
            return message.get("code")


def append_committed(workspace_id: int, kind: str, data: dict | None = None) -> int:
    """Append one event in its own transaction (sync code). Returns its seq."""
    with transaction.atomic():
        return event_append(workspace_id=workspace_id, kind=kind, data=data or {}).seq


async def append(workspace_id: int, kind: str = "test.event", data: dict | None = None) -> int:
    """Append one committed event (from the sync thread, as a view or a job would). Returns its seq."""
    return await database_sync_to_async(append_committed)(workspace_id, kind, data)


def channel_layers_config(*, capacity: int | None = None) -> dict:
    """CHANNEL_LAYERS for the configured backend (Redis when REDIS_URL is set), optionally with a capacity."""
    extra = {} if capacity is None else {"capacity": capacity}
    if settings.REDIS_URL:
        return redis_channel_layers(settings.REDIS_URL, **extra)
    return {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer", "CONFIG": extra}}


# --- worker processes -------------------------------------------------------------------------------------


def database_url_of_test_db() -> str:
    """DATABASE_URL of the database this test runs on (the test database, not the configured one)."""
    if settings.DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
        raise RuntimeError("worker-process tests share a PostgreSQL database with the test process")
    return current_database_url()


def worker_env(*, redis_url: str | None, **extra: str) -> dict[str, str]:
    """Environment for a separate Lomote process on the test database, with or without a Redis layer."""
    env = {k: v for k, v in os.environ.items() if k not in {"REDIS_URL", "DATABASE_URL", "DJANGO_SETTINGS_MODULE"}}
    env.update(
        DATABASE_URL=database_url_of_test_db(),
        DJANGO_SETTINGS_MODULE="lomote.settings",
        CONN_MAX_AGE="0",  # leave no connection behind: the test database is flushed, then dropped
        LOG_LEVEL="WARNING",
        PYTHONPATH=str(REPO_ROOT),
        **extra,
    )
    if redis_url:
        env["REDIS_URL"] = redis_url
    return env


async def run_append_process(workspace_id: int, kind: str, env: dict[str, str], timeout: float = 30.0) -> int:
    """Run `tests.support.append_event` in a new Python process; returns the seq it appended."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.support.append_event",
        str(workspace_id),
        kind,
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        stdout, stderr = await asyncio.wait_for(process.communicate(), timeout)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise
    if process.returncode != 0:
        raise AssertionError(f"worker process failed ({process.returncode}): {stderr.decode()[-2000:]}")
    return int(stdout.decode().strip().splitlines()[-1])
