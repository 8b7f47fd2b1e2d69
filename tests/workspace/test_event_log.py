"""The per-workspace event log (DESIGN §12): gapless, commit-ordered sequences; hints only after commit."""

import asyncio
import random
import threading
import time

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from django.db import connections, transaction

from lomote.kernel.events import hints, workspace_group
from lomote.kernel.exceptions import NotFound
from tests.support.realtime import append
from workspace.models import Event, Workspace
from workspace.services.events import event_append
from workspace.services.workspaces import workspace_create

MARKER = {"type": "test.marker"}


def _seqs(workspace_id: int) -> list[int]:
    return list(Event.objects.filter(workspace_id=workspace_id).order_by("seq").values_list("seq", flat=True))


async def _next_message(layer, channel: str) -> dict:
    return await asyncio.wait_for(layer.receive(channel), 5)


async def _nothing_queued(layer, channel: str) -> bool:
    """True if no message was waiting on the channel: a marker sent now is the first thing received.

    Through a cross-process layer a hint leaves from the process's hint loop (lomote.kernel.events.hints): wait
    until every hint recorded so far has been handed over, then no timing window is involved.
    """
    assert await asyncio.to_thread(hints.wait_idle, 10)
    await layer.send(channel, MARKER)
    message = await _next_message(layer, channel)
    if message != MARKER:
        raise AssertionError(f"unexpected message {message}")
    return True


async def _listen(layer, workspace_id: int) -> str:
    channel = await layer.new_channel()
    await layer.group_add(workspace_group(workspace_id), channel)
    return channel


@pytest.mark.django_db(transaction=True)
def test_it_numbers_events_gaplessly_and_independently_per_workspace(alice, workspace):
    # given two workspaces, each with its `workspace.created` event at seq 1
    other = workspace_create(user=alice, name="Other studio")

    # when events are appended to both, interleaved, each in its own transaction
    got = {workspace.pk: [], other.pk: []}
    for index in range(9):
        target = workspace if index % 3 else other
        with transaction.atomic():
            got[target.pk].append(event_append(workspace_id=target.pk, kind="test.event", data={"i": index}).seq)

    # then each workspace counts from 1 with no gap, whatever the other did
    assert got[workspace.pk] == [2, 3, 4, 5, 6, 7]
    assert got[other.pk] == [2, 3, 4]
    assert _seqs(workspace.pk) == [1, 2, 3, 4, 5, 6, 7]
    assert _seqs(other.pk) == [1, 2, 3, 4]
    assert Workspace.objects.get(pk=workspace.pk).last_event_seq == 7
    assert Workspace.objects.get(pk=other.pk).last_event_seq == 4
    stored = Event.objects.get(workspace=workspace, seq=4)
    assert (stored.kind, stored.data) == ("test.event", {"i": 4})


@pytest.mark.django_db(transaction=True)
def test_it_refuses_to_append_outside_a_transaction(workspace):
    # given a connection in autocommit mode (no atomic block)
    assert not connections["default"].in_atomic_block

    # when an event is appended outside any transaction
    with pytest.raises(RuntimeError, match="inside the transaction"):
        event_append(workspace_id=workspace.pk, kind="test.event")

    # then nothing was written: no event, no sequence consumed
    assert _seqs(workspace.pk) == [1]
    assert Workspace.objects.get(pk=workspace.pk).last_event_seq == 1


@pytest.mark.django_db(transaction=True)
def test_it_refuses_an_unknown_workspace(workspace):
    # when an event is appended to a workspace that does not exist
    with pytest.raises(NotFound), transaction.atomic():
        event_append(workspace_id=workspace.pk + 1000, kind="test.event")

    # then no event row exists anywhere
    assert Event.objects.count() == 1


@pytest.mark.asyncio
@pytest.mark.django_db(transaction=True)
async def test_it_never_stores_nor_pushes_an_event_whose_transaction_rolls_back(workspace, channel_layer):
    # given a listener in the workspace's group
    channel = await _listen(channel_layer, workspace.pk)

    # when an event is appended in a transaction that then fails
    def append_then_fail():
        with transaction.atomic():
            event_append(workspace_id=workspace.pk, kind="doomed")
            raise ValueError("the change it described failed")

    with pytest.raises(ValueError, match="failed"):
        await database_sync_to_async(append_then_fail)()

    # then the event does not exist, its sequence was not consumed, and no hint was pushed
    assert await database_sync_to_async(_seqs)(workspace.pk) == [1]
    assert await _nothing_queued(channel_layer, channel)

    # and the next committed event takes the sequence the rolled-back one had, and is hinted
    assert await append(workspace.pk, "kept") == 2
    assert await _next_message(channel_layer, channel) == {"type": "event.hint", "seq": 2}


@pytest.mark.asyncio
@pytest.mark.django_db(transaction=True)
async def test_it_drops_an_event_whose_savepoint_rolls_back_while_the_outer_transaction_commits(
    workspace, channel_layer
):
    # given a listener in the workspace's group
    channel = await _listen(channel_layer, workspace.pk)

    # when one event is appended in a savepoint that rolls back, and another after it in the same transaction
    def append_in_savepoint_then_outside():
        with transaction.atomic():
            with pytest.raises(ValueError), transaction.atomic():
                event_append(workspace_id=workspace.pk, kind="doomed")
                raise ValueError("inner change failed")
            return event_append(workspace_id=workspace.pk, kind="kept").seq

    kept_seq = await database_sync_to_async(append_in_savepoint_then_outside)()

    # then only the outer event exists, with no gap, and it is the only hint
    assert kept_seq == 2
    events = await database_sync_to_async(
        lambda: list(Event.objects.filter(workspace=workspace).values_list("seq", "kind"))
    )()
    assert sorted(events) == [(1, "workspace.created"), (2, "kept")]
    assert await _next_message(channel_layer, channel) == {"type": "event.hint", "seq": 2}
    assert await _nothing_queued(channel_layer, channel)


@pytest.mark.asyncio
@pytest.mark.django_db(transaction=True)
async def test_it_pushes_the_hint_only_after_commit(workspace, channel_layer):
    # given a listener in the workspace's group
    channel = await _listen(channel_layer, workspace.pk)
    seen_before_commit = []

    # when an event is appended and the transaction is still open
    def append_and_look_before_commit():
        with transaction.atomic():
            seq = event_append(workspace_id=workspace.pk, kind="test.event").seq
            # Still inside the transaction: ask the event loop whether a hint has arrived yet.
            seen_before_commit.append(async_to_sync(_nothing_queued)(channel_layer, channel))
        return seq

    seq = await database_sync_to_async(append_and_look_before_commit)()

    # then nothing was pushed before the commit, and the hint follows it
    assert seen_before_commit == [True]
    assert await _next_message(channel_layer, channel) == {"type": "event.hint", "seq": seq}


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_it_keeps_sequences_gapless_and_in_commit_order_under_concurrent_writers(workspace):
    # given N writers on their own connections, released together, each holding its transaction open a
    # little after appending (so a commit out of seq order would have a window to show)
    writers = 12
    start = threading.Barrier(writers + 1)
    done = threading.Event()
    results: list[int] = []
    errors: list[BaseException] = []
    snapshots: list[list[int]] = []
    lock = threading.Lock()

    def write(index: int) -> None:
        try:
            start.wait(timeout=10)
            with transaction.atomic():
                seq = event_append(workspace_id=workspace.pk, kind="test.concurrent", data={"writer": index}).seq
                time.sleep(random.uniform(0, 0.02))  # noqa: S311 - jitter, not security
            with lock:
                results.append(seq)
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)
        finally:
            connections.close_all()

    def observe() -> None:
        # Reads committed state while the writers run: every snapshot must be a prefix 1..k, i.e. no event
        # ever becomes visible before an earlier sequence (a client that saw k can never later miss k-1).
        try:
            while not done.is_set():
                snapshots.append(_seqs(workspace.pk))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=write, args=(i,)) for i in range(writers)]
    observer = threading.Thread(target=observe)
    for thread in threads:
        thread.start()
    observer.start()

    # when they all append at once
    start.wait(timeout=10)
    for thread in threads:
        thread.join(timeout=30)
    done.set()
    observer.join(timeout=30)

    # then every writer got its own sequence, 2..N+1, with no gap or duplicate
    assert not errors, errors
    assert sorted(results) == list(range(2, writers + 2))
    assert _seqs(workspace.pk) == list(range(1, writers + 2))
    assert Workspace.objects.get(pk=workspace.pk).last_event_seq == writers + 1
    assert sorted(Event.objects.filter(kind="test.concurrent").values_list("data__writer", flat=True)) == list(
        range(writers)
    )
    # and commits became visible in sequence order: no snapshot ever had a hole
    assert snapshots
    holes = [snapshot for snapshot in snapshots if snapshot != list(range(1, len(snapshot) + 1))]
    assert holes == []
    assert len({len(snapshot) for snapshot in snapshots}) > 1, "the observer saw no commit happen"
