"""Fault injection on the durable runtime (DESIGN §3, seed §11.1, TESTING.md), on PostgreSQL.

Workers are real threads with their own database connections; assertions are on persisted facts.
"""

import json
import threading
from datetime import timedelta

import pytest
from django.db import connections
from django.utils import timezone
from django_q.brokers import get_broker
from django_q.models import OrmQ
from django_q.tasks import async_task

from agents.models import (
    Card,
    InboxMessage,
    InboxStatus,
    Step,
    TaskStatus,
    ToolCall,
    ToolCallStatus,
    Turn,
    TurnStatus,
)
from agents.queue import turn_message_name
from agents.runtime.loop import turn_run
from agents.runtime.watchdog import watchdog_sweep
from agents.services.card_actions import card_act
from agents.services.inbox import message_post
from agents.services.tasks import task_cancel
from tests.agents.conftest import says
from workspace.models import Event
from workspace.selectors import workspace_access

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def run_in_thread(name, turn_id, generation, results):
    def work():
        try:
            results[name] = turn_run(turn_id=turn_id, generation=generation, holder=name)
        finally:
            connections.close_all()

    thread = threading.Thread(target=work, name=name)
    thread.start()
    return thread


def after_lease_expiry(settings):
    return timezone.now() + timedelta(seconds=settings.LOMOTE_LEASE_SECONDS + 1)


def test_it_takes_over_a_frozen_worker_without_calling_the_model_again(task, tools, script, settings):
    # given a model that decides one lookup, then answers
    model = script([says("Looking up the palette.", ("test_lookup", {})), says("Palette found.")])
    turn = tools.start_turn(task)
    tools.GATE.frozen.add("worker-A")
    results = {}

    # when worker A freezes right after logging the call `started`
    worker_a = run_in_thread("worker-A", turn.pk, 1, results)
    assert tools.GATE.reached.wait(10)
    call = ToolCall.objects.get(turn=turn)
    assert (call.status, call.started_generation) == (ToolCallStatus.STARTED, 1)
    # and its lease expires, so the watchdog hands the turn to worker B
    assert watchdog_sweep(now=after_lease_expiry(settings)).taken_over == [turn.pk]
    run_in_thread("worker-B", turn.pk, 2, results).join(30)
    # and A wakes up and tries to write its late result
    tools.GATE.release.set()
    worker_a.join(30)

    # then the turn completed at generation 2, the step-1 decision was inferred once, one result exists
    turn.refresh_from_db()
    assert (turn.status, turn.generation) == (TurnStatus.COMPLETED, 2)
    assert results == {"worker-A": "fenced", "worker-B": "answered"}
    assert model.calls_for_step(1) == 1
    assert Step.objects.filter(turn=turn).count() == 2
    call.refresh_from_db()
    assert ToolCall.objects.filter(turn=turn).count() == 1
    assert (call.status, call.started_generation) == (ToolCallStatus.DONE, 2)
    assert call.result == {"found": "the poster palette", "call": f"{turn.pk}:1:1"}
    assert tools.EXECUTIONS[("test_lookup", call.call_id)] == 2  # same id, idempotent lookup re-run by B


def test_it_recovers_a_lost_enqueue_and_ignores_a_duplicate_job(task, tools, script, no_enqueue, settings):
    # given a turn whose queue message was lost after the commit
    script([says("Nothing to do yet.")])
    turn = tools.start_turn(task)
    assert no_enqueue == [(turn.pk, 1)]

    # when the watchdog sweeps before and after the stale threshold (twice at the same moment)
    assert not watchdog_sweep(now=turn.enqueued_at + timedelta(seconds=1))
    stale = turn.enqueued_at + timedelta(seconds=settings.LOMOTE_QUEUE_STALE_SECONDS + 0.1)
    first, second = watchdog_sweep(now=stale), watchdog_sweep(now=stale)

    # then it re-enqueued the same generation exactly once, within one watchdog period
    assert settings.LOMOTE_QUEUE_STALE_SECONDS <= settings.LOMOTE_WATCHDOG_PERIOD
    assert (first.requeued, second.requeued) == ([turn.pk], [])
    assert no_enqueue == [(turn.pk, 1), (turn.pk, 1)]
    # and of the two deliveries, the first runs the turn and the duplicate does nothing
    assert turn_run(turn_id=turn.pk, generation=1) == "answered"
    assert turn_run(turn_id=turn.pk, generation=1) == "noop"
    assert Step.objects.filter(turn=turn).count() == 1


def test_it_adds_no_copy_of_a_waiting_turn_message_and_frees_one_a_dead_worker_took(task, tools, script, settings):
    # given a stale queued turn whose message still waits in the broker (a backlog: every worker busy)
    script([says("Nothing to do yet.")])
    turn = tools.start_turn(task)
    OrmQ.objects.all().delete()  # the task's search vectors, queued with its save: not what this test follows
    async_task("agents.tasks.run_turn", turn.pk, 1, task_name=turn_message_name(turn.pk, 1))
    stale = lambda: timezone.now() + timedelta(seconds=settings.LOMOTE_QUEUE_STALE_SECONDS + 1)  # noqa: E731

    # when the watchdog sweeps, then no copy is added (each used to add one, and a backlog grew at every sweep)
    assert watchdog_sweep(now=stale()).requeued == [] and OrmQ.objects.count() == 1

    # when a worker takes the message and is killed: the broker would hide it for Q_CLUSTER retry (12 minutes)
    assert get_broker().dequeue()
    swept = watchdog_sweep(now=stale() + timedelta(seconds=settings.LOMOTE_QUEUE_STALE_SECONDS + 1))

    # then the same message is handed out again at once, still one
    assert swept.requeued == [turn.pk]
    assert OrmQ.objects.filter(lock__lte=timezone.now()).count() == OrmQ.objects.count() == 1


def test_it_runs_a_turn_once_when_two_workers_get_the_same_job(task, tools, script):
    # given a slow model, so both deliveries overlap
    barrier = threading.Event()
    model = script([says("Checked.", ("test_noop", {})), says("Done.")], on_call=lambda i, r: barrier.wait(0.3))
    turn = tools.start_turn(task)
    results = {}

    # when two workers run the job for the same turn and generation at once
    threads = [run_in_thread(name, turn.pk, 1, results) for name in ("worker-1", "worker-2")]
    for thread in threads:
        thread.join(30)

    # then one ran it and the other was a no-op: one step per decision, one tool result, one set of events
    assert sorted(results.values()) == ["answered", "noop"]
    assert len(model.requests) == 2
    assert Step.objects.filter(turn=turn).count() == 2
    assert ToolCall.objects.filter(turn=turn, status=ToolCallStatus.DONE).count() == 1
    assert Event.objects.filter(kind="step.committed", data__turn=turn.pk).count() == 2


def test_it_never_reruns_a_non_idempotent_call_found_started(task, tools, script, settings, alice):
    # given a model that makes a call which is not safe to repeat
    model = script([says("Submitting.", ("test_charge", {})), says("I checked the state; it went through.")])
    turn = tools.start_turn(task)
    tools.GATE.frozen.add("worker-A")
    results = {}

    # when worker A dies after the side effect but before recording its result, and B takes over
    worker_a = run_in_thread("worker-A", turn.pk, 1, results)
    assert tools.GATE.reached.wait(10)
    watchdog_sweep(now=after_lease_expiry(settings))
    run_in_thread("worker-B", turn.pk, 2, results).join(30)
    tools.GATE.release.set()
    worker_a.join(30)

    # then B planned nothing: it judged the interrupted call first, could not check it (the tool keeps no
    # receipts), and the task waits on a review card; the call ran once, and A's late result is kept as the truth
    call = ToolCall.objects.get(turn=turn)
    assert tools.EXECUTIONS[("test_charge", call.call_id)] == 1
    assert results == {"worker-A": "fenced", "worker-B": "resume_review"}
    assert len(model.requests) == 1
    task.refresh_from_db()
    assert (task.status, task.waiting_for["resume"]) == (TaskStatus.WAITING, "action_still_unknown")
    card = Card.objects.get(pk=task.waiting_for["card"])
    assert (card.status, card.payload["verdict"], card.payload["call"]) == (
        "open",
        "action_still_unknown",
        call.call_id,
    )
    turn.refresh_from_db()
    assert (turn.status, turn.checkpoint["resume"]["verdict"]) == (TurnStatus.SUSPENDED, "action_still_unknown")
    assert call.status == ToolCallStatus.DONE  # what A did, recorded late

    # when the person confirms, the next turn runs and the model reads the call's recorded outcome
    card_act(
        access=workspace_access(principal=alice, workspace_id=task.workspace_id), card_id=card.pk, action="confirm"
    )
    nxt = Turn.objects.get(task=task, status=TurnStatus.QUEUED)
    assert turn_run(turn_id=nxt.pk, generation=nxt.generation) == "answered"
    assert len(model.requests) == 2 and tools.EXECUTIONS[("test_charge", call.call_id)] == 1


def test_a_call_that_keeps_no_receipt_becomes_unknown_once_a_person_reviews_it(task, tools, script, settings, alice):
    # given a call that is not safe to repeat, left started by a worker that died (never to write again)
    model = script([says("Submitting.", ("test_charge", {})), says("I checked the state first.")])
    turn = tools.start_turn(task)
    tools.GATE.frozen.add("worker-A")
    results = {}
    worker_a = run_in_thread("worker-A", turn.pk, 1, results)
    assert tools.GATE.reached.wait(10)
    watchdog_sweep(now=after_lease_expiry(settings))
    run_in_thread("worker-B", turn.pk, 2, results).join(30)
    task.refresh_from_db()
    card = Card.objects.get(pk=task.waiting_for["card"])

    # when the person confirms before A ever writes
    card_act(
        access=workspace_access(principal=alice, workspace_id=task.workspace_id), card_id=card.pk, action="confirm"
    )

    # then the call is unknown for good, never run again, and the model is told to check the state first
    call = ToolCall.objects.get(turn=turn)
    assert call.status == ToolCallStatus.UNKNOWN and call.result["outcome_unknown"] is True
    nxt = Turn.objects.get(task=task, status=TurnStatus.QUEUED)
    assert turn_run(turn_id=nxt.pk, generation=nxt.generation) == "answered"
    assert tools.EXECUTIONS[("test_charge", call.call_id)] == 1
    assert "outcome_unknown" in json.dumps(model.requests[1].messages)
    tools.GATE.release.set()
    worker_a.join(30)
    call.refresh_from_db()
    assert call.status == ToolCallStatus.UNKNOWN  # a late write never overwrites what a person settled


def test_it_consumes_a_message_sent_during_inference_at_the_next_boundary(task, tools, script, alice):
    # given a person who writes while the model is thinking about step 1
    access = workspace_access(principal=alice, workspace_id=task.workspace_id)

    def on_call(index, request):
        if index == 0:
            message_post(access=access, task_id=task.pk, text="No white background: use midnight blue.")

    model = script([says("Planning.", ("test_noop", {})), says("Switched to midnight blue.")], on_call=on_call)
    turn = tools.start_turn(task)

    # when the turn runs
    assert turn_run(turn_id=turn.pk, generation=1) == "answered"

    # then step 1 did not see the message, step 2 consumed it, and the log says so
    message = InboxMessage.objects.get(task=task)
    assert message.status == InboxStatus.CONSUMED
    assert message.consumed_by_step.index == 2
    texts = [[m.get("content") for m in r.messages] for r in model.requests]
    assert "No white background: use midnight blue." not in texts[0]
    assert "No white background: use midnight blue." in texts[1]
    assert model.requests[1].state["new_messages"] == [{"id": message.pk, "text": message.text}]


def test_it_commits_no_step_once_the_task_is_cancelled_during_inference(task, tools, script, alice):
    # given a person who clicks stop while the model is thinking
    access = workspace_access(principal=alice, workspace_id=task.workspace_id)
    script([says("Planning.", ("test_noop", {}))], on_call=lambda i, r: task_cancel(access=access, task_id=task.pk))
    turn = tools.start_turn(task)

    # when the model returns its decision
    outcome = turn_run(turn_id=turn.pk, generation=1)

    # then the decision was not committed, and the task and turn stay cancelled
    assert outcome == "fenced"
    assert not Step.objects.filter(turn=turn).exists()
    turn.refresh_from_db()
    task.refresh_from_db()
    assert (turn.status, task.status) == (TurnStatus.CANCELLED, TaskStatus.CANCELLED)


@pytest.mark.parametrize("attempt", range(6))
def test_it_commits_no_step_after_a_cancel_racing_the_commit(task, tools, script, alice, attempt):
    # given a worker and a person's stop click released at the same moment
    access = workspace_access(principal=alice, workspace_id=task.workspace_id)
    go = threading.Barrier(2)
    script([says("Step.", ("test_noop", {})), says("Done.")], on_call=lambda i, r: go.wait(5) if i == 0 else None)
    turn = tools.start_turn(task)
    results = {}
    worker = run_in_thread("worker", turn.pk, 1, results)

    def cancel():
        go.wait(5)
        try:
            task_cancel(access=access, task_id=task.pk)
        finally:
            connections.close_all()

    canceller = threading.Thread(target=cancel)
    canceller.start()
    worker.join(30)
    canceller.join(30)

    # then every committed step precedes the cancel in the log, and nothing ran after it
    cancel_seq = Event.objects.get(kind="task.status", data__task=task.pk, data__status="cancelled").seq
    step_seqs = list(Event.objects.filter(kind="step.committed", data__task=task.pk).values_list("seq", flat=True))
    assert all(seq < cancel_seq for seq in step_seqs)
    assert Step.objects.filter(turn=turn).count() == len(step_seqs)
    task.refresh_from_db()
    assert task.status == TaskStatus.CANCELLED
    assert results["worker"] in {"fenced", "answered"}


def test_it_records_a_late_result_after_cancel_without_changing_the_cancelled_state(task, tools, script, alice):
    # given a worker inside a slow external call
    access = workspace_access(principal=alice, workspace_id=task.workspace_id)
    script([says("Submitting.", ("test_charge", {})), says("Done.")])
    turn = tools.start_turn(task)
    tools.GATE.frozen.add("worker")
    results = {}
    worker = run_in_thread("worker", turn.pk, 1, results)
    assert tools.GATE.reached.wait(10)

    # when the person cancels, then the call's result arrives
    task_cancel(access=access, task_id=task.pk)
    tools.GATE.release.set()
    worker.join(30)

    # then the result is recorded as what happened, but nothing else moved
    call = ToolCall.objects.get(turn=turn)
    assert (call.status, call.result) == (ToolCallStatus.DONE, {"charged": True})
    task.refresh_from_db()
    turn.refresh_from_db()
    assert (task.status, turn.status, results["worker"]) == (TaskStatus.CANCELLED, TurnStatus.CANCELLED, "fenced")
    assert Step.objects.filter(turn=turn).count() == 1
    assert not Turn.objects.filter(task=task).exclude(pk=turn.pk).exists()
    assert not turn.made_progress
