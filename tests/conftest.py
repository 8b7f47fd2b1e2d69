"""Suite-wide set-up: service markers, personas, replay notes, and the summary `make test` prints last."""

import os
import socket
from pathlib import Path

import pytest
from django.conf import settings

SUMMARY_FILE = Path(settings.VAR_DIR) / "test-summary.txt"
REQUIRE_SERVICES = os.environ.get("LOMOTE_REQUIRE_SERVICES") == "1"
_skipped = {"postgres": 0, "redis": 0, "browser": 0}
# How to replay a run that drew its inputs from a seed: printed in pytest's summary and in SUMMARY_FILE.
REPLAY_NOTES = pytest.StashKey[list[str]]()
CHROMIUM = "/usr/bin/chromium"


def pytest_configure(config):
    config.addinivalue_line("markers", f"browser: drives {CHROMIUM} with Playwright; skipped without it outside CI")


def _browser_available() -> bool:
    """Debian's chromium and the playwright package (its own browser downloads are never used)."""
    import importlib.util

    return os.access(CHROMIUM, os.X_OK) and importlib.util.find_spec("playwright") is not None


def _redis_reachable() -> bool:
    if not settings.REDIS_URL and not os.environ.get("TEST_REDIS_URL"):
        return False
    try:
        with socket.create_connection(("127.0.0.1", 6379), timeout=0.5):
            return True
    except OSError:
        return False


def redis_url() -> str:
    return settings.REDIS_URL or os.environ.get("TEST_REDIS_URL", "")


def pytest_collection_modifyitems(config, items):
    available = {"postgres": settings.IS_POSTGRES, "redis": _redis_reachable(), "browser": _browser_available()}
    for item in items:
        for service, ok in available.items():
            if ok or item.get_closest_marker(service) is None:
                continue
            if REQUIRE_SERVICES:
                raise pytest.UsageError(f"LOMOTE_REQUIRE_SERVICES=1 but {service} is unavailable ({item.nodeid})")
            reason = f"needs {CHROMIUM} and playwright" if service == "browser" else f"needs {service}"
            item.add_marker(pytest.mark.skip(reason=reason))
            _skipped[service] += 1
            break


def pytest_sessionfinish(session, exitstatus):
    engine = settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1]
    line = (
        f"lomote tests ran on {engine} ({settings.DATABASES['default']['NAME']}); "
        f"skipped for lack of PostgreSQL: {_skipped['postgres']}, for lack of Redis: {_skipped['redis']}, "
        f"for lack of chromium: {_skipped['browser']}"
    )
    notes = session.config.stash.get(REPLAY_NOTES, [])
    SUMMARY_FILE.write_text("\n".join([line, *notes]) + "\n")


def pytest_terminal_summary(terminalreporter):
    notes = terminalreporter.config.stash.get(REPLAY_NOTES, [])
    if notes:
        terminalreporter.write_sep("-", "replay")
        for note in notes:
            terminalreporter.write_line(note)


@pytest.fixture
def replay_note(request):
    """Record one line saying how to replay this run (a seed and the command), shown at the end of the session."""
    notes = request.config.stash.setdefault(REPLAY_NOTES, [])

    def note(line: str) -> None:
        if line not in notes:
            notes.append(line)

    return note


# --- personas ---------------------------------------------------------------------------------------------


@pytest.fixture
def make_user(db):
    from tests.support.worlds import person

    return person


@pytest.fixture
def alice(make_user):
    """Owner of `workspace`."""
    return make_user("alice")


@pytest.fixture
def bob(make_user):
    """Editor of `workspace`."""
    return make_user("bob")


@pytest.fixture
def carol(make_user):
    """Viewer of `workspace`."""
    return make_user("carol")


@pytest.fixture
def dave(make_user):
    """Outsider: member of no workspace of theirs."""
    return make_user("dave")


@pytest.fixture
def workspace(alice, bob, carol):
    from tests.support.worlds import shared_workspace

    return shared_workspace(alice, bob, carol)


@pytest.fixture
def api_client():
    from rest_framework.test import APIClient

    return APIClient()


@pytest.fixture
def client_for(api_client):
    """An APIClient logged in (by force) as the given user."""
    from rest_framework.test import APIClient

    def make(user):
        client = APIClient()
        client.force_authenticate(user)
        return client

    return make


# --- speed ------------------------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def fast_password_hasher(settings):
    """PBKDF2 costs ~0.3 s per user created; tests need passwords that work, not ones that resist cracking."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


# --- outbound endpoints -------------------------------------------------------------------------------------


@pytest.fixture
def local_model_servers(settings):
    """The fake model and embedding servers listen on 127.0.0.1: allowed the way an operator allows a llama.cpp or
    Ollama server of their own (lomote/kernel/endpoints.py refuses loopback addresses otherwise)."""
    settings.LOMOTE_MODEL_ALLOW_PRIVATE = True


# --- realtime: channel layers -----------------------------------------------------------------------------

import pytest_asyncio  # noqa: E402 - kept with the fixtures that need it


@pytest_asyncio.fixture
async def channel_layer(settings):
    """The default channel layer, fresh for this test's event loop (a Redis layer's pools belong to one loop).

    Changing CHANNEL_LAYERS in the test replaces it: fetch `get_channel_layer()` again after doing so.
    """
    from channels.db import database_sync_to_async
    from channels.layers import channel_layers, get_channel_layer
    from django.db import connections

    channel_layers.backends = {}
    layer = get_channel_layer()
    # Open the layer's connections on this loop before any consumer does: redis-py may swallow a
    # cancellation that lands while a connection is being set up (redis/redis-py#2028).
    warm = await layer.new_channel()
    await layer.send(warm, {"type": "warm.up"})
    await layer.receive(warm)
    yield layer
    for layer in list(channel_layers.backends.values()):
        close_pools = getattr(layer, "close_pools", None)
        if close_pools is not None:
            await close_pools()
    channel_layers.backends = {}
    # The test's (and its consumers') queries ran on asgiref's sync thread, whose persistent connection would
    # otherwise outlive the test and keep the test database from being dropped.
    await database_sync_to_async(connections.close_all)()


@pytest.fixture
def layer_spy(channel_layer, monkeypatch):
    """What consumers ask of the default layer during the test: `channels` opened, `joins` (group, channel)."""
    from types import SimpleNamespace

    spy = SimpleNamespace(channels=[], joins=[])
    new_channel, group_add = channel_layer.new_channel, channel_layer.group_add

    async def spy_new_channel(*args, **kwargs):
        channel = await new_channel(*args, **kwargs)
        spy.channels.append(channel)
        return channel

    async def spy_group_add(group, channel):
        spy.joins.append((group, channel))
        return await group_add(group, channel)

    monkeypatch.setattr(channel_layer, "new_channel", spy_new_channel)
    monkeypatch.setattr(channel_layer, "group_add", spy_group_add)
    return spy
