"""The watchdog on PostgreSQL: takeovers, attempt cap, parallel sweeps, inbox sweeps."""

import threading
from datetime import timedelta

import pytest
from django.db import connections
from django.utils import timezone

from agents.leases import lease_claim
from agents.models import InboxMessage, Task, TaskStatus, Turn, TurnStatus
from agents.runtime.watchdog import watchdog_sweep
from workspace.models import Event

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def running_turns(workspace, alice, tools, count):
    turns = []
    for i in range(count):
        task = Task.objects.create(workspace=workspace, title=f"t{i}", created_by=alice)
        turn = tools.start_turn(task)
        assert lease_claim(turn_id=turn.pk, generation=1, holder="dead-worker")
        turns.append(turn)
    return turns


def test_it_takes_over_each_expired_turn_once_when_two_sweeps_race(workspace, alice, tools, no_enqueue, settings):
    # given 10 running turns whose worker died
    turns = running_turns(workspace, alice, tools, 10)
    no_enqueue.clear()
    later = timezone.now() + timedelta(seconds=settings.LOMOTE_LEASE_SECONDS + 1)
    reports = []

    # when two watchdogs sweep at the same time
    def sweep():
        try:
            reports.append(watchdog_sweep(now=later))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=sweep) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)

    # then each turn moved to generation 2 once and was re-enqueued once
    taken = sorted(reports[0].taken_over + reports[1].taken_over)
    assert taken == sorted(t.pk for t in turns)
    assert sorted(no_enqueue) == sorted((t.pk, 2) for t in turns)
    assert set(Turn.objects.filter(pk__in=taken).values_list("generation", "status")) == {(2, TurnStatus.QUEUED)}


def test_it_leaves_a_turn_alone_while_its_lease_is_valid(workspace, alice, tools, no_enqueue):
    # given a running turn with a fresh lease
    (turn,) = running_turns(workspace, alice, tools, 1)
    # when the watchdog sweeps now
    report = watchdog_sweep()
    # then nothing moved
    turn.refresh_from_db()
    assert not report.taken_over
    assert (turn.generation, turn.status) == (1, TurnStatus.RUNNING)


def test_it_fails_a_turn_at_the_attempt_cap_instead_of_looping(workspace, alice, tools, no_enqueue, settings):
    # given a turn whose workers keep dying
    settings.LOMOTE_MAX_TURN_ATTEMPTS = 3
    (turn,) = running_turns(workspace, alice, tools, 1)
    for generation in (2, 3):
        watchdog_sweep(now=timezone.now() + timedelta(seconds=settings.LOMOTE_LEASE_SECONDS + 1))
        assert lease_claim(turn_id=turn.pk, generation=generation, holder="dies-again")

    # when its lease expires once more
    report = watchdog_sweep(now=timezone.now() + timedelta(seconds=settings.LOMOTE_LEASE_SECONDS + 1))

    # then the turn failed with a reason, and the task stopped with it
    turn.refresh_from_db()
    assert report.failed == [turn.pk]
    assert (turn.status, turn.attempts, turn.stop_reason) == (TurnStatus.FAILED, 3, "attempt_cap")
    task = turn.task
    task.refresh_from_db()
    assert (task.status, task.stop_reason) == (TaskStatus.IDLE, "attempt_cap")
    assert "Stopped: attempt cap." in task.summary


def test_it_starts_a_turn_for_unread_messages_when_none_is_active(workspace, alice, no_enqueue):
    # given a message that arrived while no turn was active and none was started (e.g. a crash)
    task = Task.objects.create(workspace=workspace, title="Posters", created_by=alice)
    InboxMessage.objects.create(task=task, author=alice, text="Warmer colours please")

    # when two sweeps run
    first, second = watchdog_sweep(), watchdog_sweep()

    # then exactly one turn was started and enqueued
    assert len(first.started) == 1 and not second.started
    assert Turn.objects.filter(task=task, status=TurnStatus.QUEUED).count() == 1
    assert no_enqueue == [(first.started[0], 1)]
    task.refresh_from_db()
    assert task.status == TaskStatus.ACTIVE
    assert Event.objects.filter(kind="turn.queued", data__task=task.pk).count() == 1


def test_it_does_not_wake_paused_or_cancelled_tasks(workspace, alice, no_enqueue):
    for status in (TaskStatus.PAUSED, TaskStatus.CANCELLED):
        task = Task.objects.create(workspace=workspace, title=status, created_by=alice, status=status)
        InboxMessage.objects.create(task=task, author=alice, text="hello")
    assert not watchdog_sweep().started
    assert not Turn.objects.exists()


def test_it_does_not_restart_a_failed_turn_for_the_message_it_failed_on(workspace, alice, no_enqueue):
    # given a turn that failed before reading the message that started it
    task = Task.objects.create(workspace=workspace, title="Posters", created_by=alice)
    first = InboxMessage.objects.create(task=task, author=alice, text="Make posters")
    Turn.objects.create(task=task, number=1, status=TurnStatus.FAILED, finished_at=timezone.now())
    # when the watchdog sweeps, nothing restarts (that would loop on the same failure)
    assert not watchdog_sweep().started
    # and when the person writes again, a turn starts and will read both messages
    InboxMessage.objects.create(task=task, author=alice, text="Try again please")
    assert len(watchdog_sweep().started) == 1
    assert first.pk in InboxMessage.objects.filter(task=task, status="pending").values_list("pk", flat=True)


def test_at_the_attempt_cap_a_task_with_work_left_asks_the_person(workspace, alice, tools, no_enqueue, settings):
    from agents.models import Card, ChecklistItem

    # given a turn whose workers keep dying, on a task with an item left
    settings.LOMOTE_MAX_TURN_ATTEMPTS = 2
    (turn,) = running_turns(workspace, alice, tools, 1)
    ChecklistItem.objects.create(task=turn.task, position=1, title="Poster")
    watchdog_sweep(now=timezone.now() + timedelta(seconds=settings.LOMOTE_LEASE_SECONDS + 1))
    assert lease_claim(turn_id=turn.pk, generation=2, holder="dies-again")

    # when its lease expires at the cap
    report = watchdog_sweep(now=timezone.now() + timedelta(seconds=settings.LOMOTE_LEASE_SECONDS + 1))

    # then the task does not stop silently: it waits on the runtime's card, which says why and offers to try again
    assert report.failed == [turn.pk]
    task = turn.task
    task.refresh_from_db()
    card = Card.objects.get(task=task, payload__source="stalled")
    assert (task.status, task.stop_reason, task.waiting_for["card"]) == (TaskStatus.WAITING, "attempt_cap", card.pk)
    assert "The turn was interrupted 2 times." in card.body
    assert [option["label"] for option in card.options] == ["Try again"]
