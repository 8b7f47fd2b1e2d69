"""The WebSocket stream `/ws/workspaces/<id>/?after=<seq>` through the real ASGI stack (DESIGN §12, §14).

Every client goes through `lomote.asgi.application`: Origin validation, session and header credentials, then
the consumer. The channel layer is whatever the settings configure (in-memory, or Redis in CI).
"""

import asyncio
import contextlib

import pytest
from channels.db import database_sync_to_async
from django.contrib.sessions.models import Session
from django.utils import timezone
from rest_framework.authtoken.models import Token

from lomote.kernel.events import workspace_group
from tests.support.realtime import (
    append,
    append_committed,
    channel_layers_config,
    next_message,
    receive_close,
    receive_events,
    receive_replay,
    session_cookie_for,
    websocket,
    ws_headers,
    ws_path,
)
from workspace.consumers import CLOSE_BAD_REQUEST, CLOSE_FORBIDDEN, WorkspaceEventsConsumer
from workspace.models import ApiKey, Membership, Role
from workspace.selectors import workspace_access
from workspace.services.workspaces import api_key_create, api_key_revoke, membership_remove

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("channel_layer"),
]

NO_TAIL = 60.0  # a tail interval no test waits for: only pushes (and the replay) can deliver


@pytest.fixture
def push_only(settings):
    settings.EVENT_TAIL_INTERVAL = NO_TAIL


@pytest.fixture
def fast_tail(settings):
    settings.EVENT_TAIL_INTERVAL = 0.05


@pytest.fixture
def api_key_for(alice, workspace):
    """Raw API keys of `workspace` (role viewer unless told), created by its owner."""

    def make(role: str = Role.VIEWER, name: str = "ci") -> tuple[ApiKey, str]:
        access = workspace_access(principal=alice, workspace_id=workspace.pk)
        return api_key_create(access=access, name=name, role=role)

    return make


def _token(user) -> str:
    return Token.objects.create(user=user).key


def _seqs(events: list[dict]) -> list[int]:
    return [event["seq"] for event in events]


# --- refused handshakes ---------------------------------------------------------------------------------


async def _assert_refused(path, headers, layer_spy, code) -> None:
    async with websocket(path, headers) as (communicator, accepted, detail):
        assert (accepted, detail) == (False, code)
        assert await communicator.receive_nothing(timeout=0.02)
    _assert_layer_untouched(layer_spy)


def _assert_layer_untouched(layer_spy) -> None:
    # Refused before any group, and before the consumer even opened a channel on the layer.
    assert (layer_spy.joins, layer_spy.channels) == ([], [])


async def test_it_refuses_a_client_without_credentials(workspace, layer_spy):
    # given a browser on the right Origin with no session cookie
    # when it connects, then it is refused before joining any group
    await _assert_refused(ws_path(workspace.pk), ws_headers(), layer_spy, CLOSE_FORBIDDEN)


async def test_it_refuses_a_foreign_or_missing_origin(workspace, alice, layer_spy):
    # given alice's valid session, sent from other sites or with no Origin at all
    cookie = await database_sync_to_async(session_cookie_for)(alice)

    for origin in ("http://evil.example", "http://testserver.evil.example", "null", None):
        # when the page connects, then the Origin check refuses the handshake before any consumer runs
        async with websocket(ws_path(workspace.pk), ws_headers(origin=origin, cookie=cookie)) as (_, accepted, _):
            assert accepted is False, origin
    _assert_layer_untouched(layer_spy)

    # and the same session from the right Origin is accepted (the refusals were the Origin's doing)
    async with websocket(ws_path(workspace.pk), ws_headers(cookie=cookie)) as (_, accepted, _):
        assert accepted is True


async def test_it_compares_the_origins_scheme_host_and_port_with_the_page_it_serves(workspace, alice, layer_spy):
    # given alice's session, and the studio served at http://127.0.0.1:8000
    cookie = await database_sync_to_async(session_cookie_for)(alice)

    def headers(origin: str, host: str = "127.0.0.1:8000") -> list[tuple[bytes, bytes]]:
        return [(b"host", host.encode()), (b"origin", origin.encode()), (b"cookie", cookie.encode())]

    # when pages on the same host but another port or scheme connect with her cookie
    for origin in ("http://127.0.0.1:8001", "http://127.0.0.1", "https://127.0.0.1:8000", "http://localhost:8000"):
        async with websocket(ws_path(workspace.pk), headers(origin)) as (_, accepted, _):
            # then each is refused before any consumer runs
            assert accepted is False, origin
    # and a page on a host this server does not serve is refused even when Origin and Host agree (DNS rebinding)
    async with websocket(ws_path(workspace.pk), headers("http://evil.example:8000", "evil.example:8000")) as (
        _,
        accepted,
        _,
    ):
        assert accepted is False
    _assert_layer_untouched(layer_spy)

    # while the served page itself is accepted, however its origin is spelled
    for origin in ("http://127.0.0.1:8000", "HTTP://127.0.0.1:8000/"):
        async with websocket(ws_path(workspace.pk), headers(origin)) as (_, accepted, _):
            assert accepted is True, origin


async def test_it_accepts_the_origins_an_operator_lists(workspace, alice, settings):
    # given a studio behind a proxy: the public page is https://studio.example, the server sees Host testserver
    settings.LOMOTE_WS_ALLOWED_ORIGINS = ["https://studio.example"]
    cookie = await database_sync_to_async(session_cookie_for)(alice)

    # when pages connect, then the listed origin is accepted, with its default port spelled or not
    for origin, expected in (
        ("https://studio.example", True),
        ("https://studio.example:443", True),
        ("https://studio.example:8443", False),
        ("http://studio.example", False),
        ("https://www.studio.example", False),
    ):
        async with websocket(ws_path(workspace.pk), ws_headers(origin=origin, cookie=cookie)) as (_, accepted, _):
            assert accepted is expected, origin


async def test_it_refuses_a_non_member_and_a_workspace_that_does_not_exist(workspace, dave, layer_spy):
    # given dave, logged in but member of no workspace
    cookie = await database_sync_to_async(session_cookie_for)(dave)

    # when he connects to alice's workspace, to a missing one and to an absurd id
    # then each is refused the same way: he learns nothing about which exist
    for workspace_id in (workspace.pk, workspace.pk + 1000, 10**30):
        await _assert_refused(ws_path(workspace_id), ws_headers(cookie=cookie), layer_spy, CLOSE_FORBIDDEN)


async def test_it_refuses_bad_header_credentials(workspace, alice, bob, api_key_for, layer_spy):
    # given credentials that do not (or no longer) authenticate for this workspace
    def make_headers() -> dict[str, str]:
        from workspace.services.workspaces import workspace_create

        revoked, revoked_raw = api_key_for(name="revoked")
        api_key_revoke(access=workspace_access(principal=alice, workspace_id=workspace.pk), key_id=revoked.pk)
        other = workspace_create(user=alice, name="Elsewhere")
        other_access = workspace_access(principal=alice, workspace_id=other.pk)
        _, other_raw = api_key_create(access=other_access, name="elsewhere", role=Role.VIEWER)
        _, valid_raw = api_key_for(name="valid")
        inactive_token = _token(bob)
        bob.is_active = False
        bob.save(update_fields=["is_active"])
        return {
            "revoked key": f"Bearer {revoked_raw}",
            "unknown key": "Bearer lmk_000000000000_" + "x" * 43,
            "other workspace's key": f"Bearer {other_raw}",
            "key with a wrong secret": f"Bearer {valid_raw[:-4]}AAAA",
            "unknown token": "Token " + "0" * 40,
            "empty token": "Token ",
            "inactive user's token": f"Token {inactive_token}",
            "unknown scheme": f"Basic {valid_raw}",
        }

    for case, header in (await database_sync_to_async(make_headers)()).items():
        # when each connects with a valid Origin, then it is refused before joining any group
        async with websocket(ws_path(workspace.pk), ws_headers(authorization=header)) as (communicator, ok, code):
            assert (ok, code) == (False, CLOSE_FORBIDDEN), case
            assert await communicator.receive_nothing(timeout=0.02), case
    _assert_layer_untouched(layer_spy)


async def test_it_lets_a_bad_header_win_over_a_valid_session(workspace, alice, layer_spy):
    # given alice's valid session cookie, plus a header credential that does not authenticate
    cookie = await database_sync_to_async(session_cookie_for)(alice)

    # when both are sent (or the header is sent twice), then the bad credential is not ignored
    headers = ws_headers(cookie=cookie, authorization="Token " + "0" * 40)
    await _assert_refused(ws_path(workspace.pk), headers, layer_spy, CLOSE_FORBIDDEN)
    token = await database_sync_to_async(_token)(alice)
    twice = ws_headers(authorization=f"Token {token}") + [(b"authorization", b"Token " + b"1" * 40)]
    await _assert_refused(ws_path(workspace.pk), twice, layer_spy, CLOSE_FORBIDDEN)


async def test_it_refuses_a_bad_after_cursor(workspace, alice, layer_spy):
    # given a member's session
    cookie = await database_sync_to_async(session_cookie_for)(alice)

    for after in ("-1", "abc", "1.5", "1_0", "+1", "%201", "", "99999999999999999999", "1&after=2", "%D9%A3"):
        # when the cursor is not exactly one non-negative integer, then the handshake is a bad request
        async with websocket(ws_path(workspace.pk, after), ws_headers(cookie=cookie)) as (_, accepted, code):
            assert (accepted, code) == (False, CLOSE_BAD_REQUEST), after
    _assert_layer_untouched(layer_spy)


# --- accepted clients -----------------------------------------------------------------------------------


async def test_it_accepts_session_token_and_api_key_clients_and_streams_to_each(
    workspace, alice, bob, carol, api_key_for, layer_spy, push_only
):
    # given readers authenticated by a session cookie, a DRF token and an API key (viewer role)
    def credentials() -> dict[str, list]:
        return {
            "session": ws_headers(cookie=session_cookie_for(bob)),
            "token": ws_headers(authorization=f"Token {_token(carol)}"),
            "api key": ws_headers(authorization=f"Bearer {api_key_for(role=Role.VIEWER)[1]}"),
        }

    clients = await database_sync_to_async(credentials)()
    last = await append(workspace.pk, "before.connect")

    async with contextlib.AsyncExitStack() as stack:
        sockets = {}
        for method, headers in clients.items():
            # when each connects
            communicator, accepted, _ = await stack.enter_async_context(websocket(ws_path(workspace.pk), headers))
            # then it is accepted and joins the workspace's group
            assert accepted is True, method
            sockets[method] = communicator
        assert [group for group, _ in layer_spy.joins] == [workspace_group(workspace.pk)] * 3

        for method, communicator in sockets.items():
            # and gets the whole log, then the replay marker
            replayed, replayed_seq = await receive_replay(communicator)
            assert replayed_seq == last, method
            assert _seqs(replayed) == list(range(1, last + 1)), method
            assert replayed[-1]["kind"] == "before.connect"
            assert set(replayed[-1]) == {"type", "seq", "kind", "data", "at"}

        # and each gets a live event once
        live = await append(workspace.pk, "after.connect", {"n": 1})
        for method, communicator in sockets.items():
            [event] = await receive_events(communicator, 1)
            assert (event["seq"], event["kind"], event["data"]) == (live, "after.connect", {"n": 1}), method
            assert await communicator.receive_nothing(), method


async def test_it_replays_from_the_cursor_in_order_then_streams_live(workspace, alice, push_only):
    # given a log of 1 (workspace.created) + 5 events
    for index in range(5):
        await append(workspace.pk, "test.event", {"i": index})
    cookie = await database_sync_to_async(session_cookie_for)(alice)

    # when a client that saw seq 3 connects
    async with websocket(ws_path(workspace.pk, 3), ws_headers(cookie=cookie)) as (communicator, accepted, _):
        assert accepted
        # then it gets 4, 5, 6 in order and the replay marker
        replayed, last_seq = await receive_replay(communicator)
        assert _seqs(replayed) == [4, 5, 6]
        assert [event["data"] for event in replayed] == [{"i": 2}, {"i": 3}, {"i": 4}]
        assert last_seq == 6

        # and then the live events, in order
        for _ in range(3):
            await append(workspace.pk, "live")
        assert _seqs(await receive_events(communicator, 3)) == [7, 8, 9]
        assert await communicator.receive_nothing()


async def test_it_replays_exactly_the_missed_events_on_reconnect(workspace, alice, push_only):
    # given a client that saw everything up to now, then disconnected
    cookie = await database_sync_to_async(session_cookie_for)(alice)
    async with websocket(ws_path(workspace.pk), ws_headers(cookie=cookie)) as (communicator, accepted, _):
        assert accepted
        await receive_replay(communicator)
        await append(workspace.pk, "seen")
        [seen] = await receive_events(communicator, 1)
    last_seen = seen["seq"]
    assert last_seen == 2

    # when events happen while it is away and it reconnects with after=<last seen>
    missed = [await append(workspace.pk, "missed", {"i": i}) for i in range(4)]
    async with websocket(ws_path(workspace.pk, last_seen), ws_headers(cookie=cookie)) as (communicator, accepted, _):
        assert accepted
        # then it gets exactly the missed events, in order, once
        replayed, last_seq = await receive_replay(communicator)
        assert _seqs(replayed) == missed == [3, 4, 5, 6]
        assert [event["data"]["i"] for event in replayed] == [0, 1, 2, 3]
        assert last_seq == 6
        # and then live events
        live = await append(workspace.pk, "live")
        assert _seqs(await receive_events(communicator, 1)) == [live]
        assert await communicator.receive_nothing()


async def test_it_starts_from_the_end_of_the_log_when_the_cursor_is_beyond_it(workspace, alice, push_only):
    # given a log that ends at seq 1 and a client whose cursor says 50 (a restored database, a bug)
    cookie = await database_sync_to_async(session_cookie_for)(alice)

    async with websocket(ws_path(workspace.pk, 50), ws_headers(cookie=cookie)) as (communicator, accepted, _):
        assert accepted
        # then the replay marker tells it where the log really ends
        assert await receive_replay(communicator) == ([], 1)
        # and the next events are not skipped
        seq = await append(workspace.pk, "next")
        assert _seqs(await receive_events(communicator, 1)) == [seq] == [2]


async def test_it_converges_through_the_log_when_pushes_exceed_the_layer_capacity(
    workspace, alice, settings, channel_layer, monkeypatch
):
    # given a channel layer that holds at most 2 messages per channel, no tail, and a connected client
    settings.CHANNEL_LAYERS = channel_layers_config(capacity=2)
    settings.EVENT_TAIL_INTERVAL = NO_TAIL
    hints = []
    original_hint = WorkspaceEventsConsumer.event_hint

    async def counting_hint(self, message):
        hints.append(message["seq"])
        await original_hint(self, message)

    monkeypatch.setattr(WorkspaceEventsConsumer, "event_hint", counting_hint)
    cookie = await database_sync_to_async(session_cookie_for)(alice)

    # when 60 events commit in a burst while the consumer is busy (the burst holds the database thread the
    # consumer's reads need, so its channel fills and the layer drops hints)
    def burst() -> list[int]:
        return [append_committed(workspace.pk, "burst", {"i": i}) for i in range(60)]

    async with websocket(ws_path(workspace.pk), ws_headers(cookie=cookie)) as (communicator, accepted, _):
        assert accepted
        _, replayed_seq = await receive_replay(communicator)
        assert replayed_seq == 1
        seqs = await database_sync_to_async(burst)()

        # then the client still receives every event, in order, exactly once
        events = await receive_events(communicator, 60)
        assert _seqs(events) == seqs == list(range(2, 62))
        assert [event["data"]["i"] for event in events] == list(range(60))
        assert await communicator.receive_nothing(timeout=0.3)
    # and most pushes were indeed lost on the way
    assert len(hints) < 30


async def test_it_sends_each_event_once_when_pushes_and_the_tail_race(workspace, alice, fast_tail):
    # given a client with a very frequent tail, so the tail and the pushes both re-read the log
    cookie = await database_sync_to_async(session_cookie_for)(alice)
    async with websocket(ws_path(workspace.pk), ws_headers(cookie=cookie)) as (communicator, accepted, _):
        assert accepted
        await receive_replay(communicator)

        # when events keep arriving
        for index in range(30):
            await append(workspace.pk, "race", {"i": index})

        # then each is sent once, in order
        events = await receive_events(communicator, 30)
        assert _seqs(events) == list(range(2, 32))
        assert await communicator.receive_nothing(timeout=0.3)


async def test_it_answers_pings_and_survives_malformed_frames(workspace, alice, push_only):
    # given a connected client
    cookie = await database_sync_to_async(session_cookie_for)(alice)
    async with websocket(ws_path(workspace.pk), ws_headers(cookie=cookie)) as (communicator, accepted, _):
        assert accepted
        await receive_replay(communicator)

        # when it sends garbage, a binary frame and JSON that is not a command
        await communicator.send_to(text_data="{not json")
        await communicator.send_to(bytes_data=b"\x00\x01")
        await communicator.send_json_to(["ping"])

        # then the stream is still up: a ping is answered and events still flow
        await communicator.send_json_to({"type": "ping"})
        assert await next_message(communicator) == {"type": "pong", "last_seq": 1}
        seq = await append(workspace.pk, "still.up")
        assert _seqs(await receive_events(communicator, 1)) == [seq]


# --- losing access while connected ----------------------------------------------------------------------


async def test_it_closes_the_socket_when_the_tail_finds_the_membership_gone(workspace, bob, channel_layer, fast_tail):
    # given bob connected by session
    cookie = await database_sync_to_async(session_cookie_for)(bob)
    async with websocket(ws_path(workspace.pk), ws_headers(cookie=cookie)) as (communicator, accepted, _):
        assert accepted
        await receive_replay(communicator)

        # when his membership disappears without any event (an admin deletes the row)
        await database_sync_to_async(Membership.objects.filter(workspace=workspace, user=bob).delete)()

        # then the tail closes the socket as forbidden
        assert await receive_close(communicator) == CLOSE_FORBIDDEN
        # and later events are not sent to him
        await append(workspace.pk, "after.removal")
        assert await communicator.receive_nothing(timeout=0.3)


async def test_it_closes_the_socket_right_after_a_member_is_removed(workspace, alice, bob, push_only):
    # given bob connected by token, with no tail to rely on
    token = await database_sync_to_async(_token)(bob)
    async with websocket(ws_path(workspace.pk), ws_headers(authorization=f"Token {token}")) as (communicator, ok, _):
        assert ok
        await receive_replay(communicator)

        # when alice removes him
        def remove_bob():
            access = workspace_access(principal=alice, workspace_id=workspace.pk)
            membership = Membership.objects.get(workspace=workspace, user=bob)
            membership_remove(access=access, membership_id=membership.pk)

        await database_sync_to_async(remove_bob)()
        after = await append(workspace.pk, "secret.after.removal")

        # then he is told of his removal and disconnected at once, and never sees what follows
        [removed] = await receive_events(communicator, 1)
        assert removed["kind"] == "member.removed"
        assert removed["data"]["user"] == "bob"
        assert await receive_close(communicator) == CLOSE_FORBIDDEN
        assert await communicator.receive_nothing(timeout=0.3)
        assert removed["seq"] == after - 1


async def test_it_closes_the_socket_right_after_its_api_key_is_revoked(workspace, alice, api_key_for, push_only):
    # given a client connected with an API key, with no tail to rely on
    key, raw = await database_sync_to_async(api_key_for)()
    async with websocket(ws_path(workspace.pk), ws_headers(authorization=f"Bearer {raw}")) as (communicator, ok, _):
        assert ok
        await receive_replay(communicator)

        # when the owner revokes the key
        access = await database_sync_to_async(workspace_access)(principal=alice, workspace_id=workspace.pk)
        await database_sync_to_async(api_key_revoke)(access=access, key_id=key.pk)
        await append(workspace.pk, "secret.after.revocation")

        # then the revocation is the last thing the key sees
        [revoked] = await receive_events(communicator, 1)
        assert (revoked["kind"], revoked["data"]["api_key"]) == ("api_key.revoked", key.pk)
        assert await receive_close(communicator) == CLOSE_FORBIDDEN
        assert await communicator.receive_nothing(timeout=0.3)


async def test_it_closes_the_socket_when_its_credentials_are_withdrawn(
    workspace, alice, bob, carol, api_key_for, fast_tail
):
    # given clients whose credentials are then withdrawn without any event: a session that is logged out,
    # a token that is deleted, a token of a user who is deactivated, an API key revoked behind our back
    def connect_and_withdrawals():
        cookie = session_cookie_for(bob)
        carol_token, alice_token = _token(carol), _token(alice)
        key, raw = api_key_for()
        session_key = cookie.split("=", 1)[1]
        cases = {
            "logout": (
                ws_headers(cookie=cookie),
                lambda: Session.objects.filter(session_key=session_key).delete(),
            ),
            "token deleted": (
                ws_headers(authorization=f"Token {carol_token}"),
                lambda: Token.objects.filter(key=carol_token).delete(),
            ),
            "user deactivated": (
                ws_headers(authorization=f"Token {alice_token}"),
                lambda: type(alice).objects.filter(pk=alice.pk).update(is_active=False),
            ),
            "key revoked silently": (
                ws_headers(authorization=f"Bearer {raw}"),
                lambda: ApiKey.objects.filter(pk=key.pk).update(revoked_at=timezone.now()),
            ),
        }
        return cases

    cases = await database_sync_to_async(connect_and_withdrawals)()
    async with contextlib.AsyncExitStack() as stack:
        sockets = {}
        for case, (headers, _) in cases.items():
            communicator, accepted, _ = await stack.enter_async_context(websocket(ws_path(workspace.pk), headers))
            assert accepted, case
            await receive_replay(communicator)
            sockets[case] = communicator

        # when each credential is withdrawn
        for _case, (_, withdraw) in cases.items():
            await database_sync_to_async(withdraw)()

        # then the tail notices and closes each socket as forbidden, and sends nothing afterwards
        for case, communicator in sockets.items():
            assert await receive_close(communicator) == CLOSE_FORBIDDEN, case
        await append(workspace.pk, "after.withdrawal")
        quiet = await asyncio.gather(*(communicator.receive_nothing(timeout=0.3) for communicator in sockets.values()))
        assert dict(zip(sockets, quiet, strict=True)) == dict.fromkeys(sockets, True)
