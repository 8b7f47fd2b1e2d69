"""A worker crash never asks the person (DESIGN §11, the replay contract), on PostgreSQL with our own worker.

A paid step goes: hold → job row → broker message → the provider's answer. Our own worker's jobs (the procedural
renderer on the ORM broker) commit with their message, and the hold and the job are both keyed by the call's id, so
the runtime settles a dead worker's call from its own records: a lookup that finds nothing proves nothing was
submitted, and the call runs again under the same id; a job found is waited on. Each point is killed 20 times,
and every run ends the same: no card, one job, one hold captured once, the ledger whole, the task done.

A kill is a BaseException raised at the point (nothing after it runs, no `except Exception` catches it, an open
transaction rolls back): what a SIGKILL leaves in the database. What still asks a person is tested at the end:
a remote provider that never confirmed, a receipt for another request, a goal changed meanwhile.
"""

from contextlib import contextmanager
from datetime import timedelta

import pytest
from django.utils import timezone
from django_q.models import OrmQ

from agents.models import Card, ChecklistItem, Task, TaskStatus, ToolCall, ToolCallStatus, Turn
from agents.runtime.loop import turn_run
from agents.runtime.watchdog import watchdog_sweep
from agents.services.card_actions import card_act
from agents.services.goals import goal_revise_by_person
from billing.models import LedgerEntry, LedgerKind, Order, OrderStatus
from billing.services.policy import spend_policy_update
from billing.services.wallets import wallet_reconcile, wallet_topup
from tests.agents.conftest import says
from tests.support.queued import run_wakeups
from workspace.models import Event, GenerationJob, JobStatus
from workspace.providers.base import WorkerProvider
from workspace.providers.procedural import ProceduralProvider
from workspace.selectors import workspace_access
from workspace.services.jobs import job_work

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

REPEATS = 20
POSTER = ("generate_image", {"prompt": "retro brand poster", "checklist_position": 1})


class Killed(BaseException):
    """The worker process died here."""


@pytest.fixture
def access(workspace, alice):
    access = workspace_access(principal=alice, workspace_id=workspace.pk)
    wallet_topup(access=access, amount=100_000)
    # Every run's step is paid without asking: the policy is no question here, the crash is.
    spend_policy_update(access=access, no_confirm_threshold=1000, daily_no_confirm_cap=100_000)
    return access


def a_poster_task(workspace, alice) -> Task:
    task = Task.objects.create(
        workspace=workspace, title="A poster", brief="Make a retro poster", created_by=alice, status=TaskStatus.IDLE
    )
    ChecklistItem.objects.create(task=task, position=1, title="The poster")
    return task


def the_job_of(call_id: str) -> GenerationJob:
    return GenerationJob.objects.get(idempotency_key=call_id)


# --- the points of a paid step where the worker dies ---


@contextmanager
def after_the_hold(monkeypatch):
    """The money is held (committed); the job was never written."""

    def dies(**kwargs):
        raise Killed()

    with monkeypatch.context() as patched:
        patched.setattr("agents.tools.generation.job_submit", dies)
        yield


@contextmanager
def after_the_job_row(monkeypatch):
    """The job row is written, in the transaction that would queue its message: the kill rolls both back."""

    def dies(self, job):
        assert GenerationJob.objects.filter(pk=job.pk).exists()  # the row, not yet committed
        raise Killed()

    with monkeypatch.context() as patched:
        patched.setattr(ProceduralProvider, "submit_with_the_job", dies)
        yield


@contextmanager
def after_the_job_row_with_a_broker_elsewhere(monkeypatch):
    """A broker outside the job's database: the row commits `submitting` first, and the worker dies before its
    message is queued. The job is ours: our own records settle it, it is not unknowable."""

    def dies(self, job):
        raise Killed()

    with monkeypatch.context() as patched:
        patched.setattr(ProceduralProvider, "submit_with_the_job", lambda self, job: None)
        patched.setattr(ProceduralProvider, "submit", dies)
        yield


def _dies_once_recording(monkeypatch, before=None):
    import agents.runtime.toolexec as toolexec

    real = toolexec._record

    def record(run, call, outcome, *, late_ok):
        if call.name == "generate_image" and run.generation == 1:
            if before is not None:
                before(call)
            raise Killed()
        return real(run, call, outcome, late_ok=late_ok)

    return toolexec, record


@contextmanager
def after_the_broker_message(monkeypatch):
    """The job committed with its message; the worker dies before the call's result is written."""
    toolexec, record = _dies_once_recording(monkeypatch)
    with monkeypatch.context() as patched:
        patched.setattr(toolexec, "_record", record)
        yield


@contextmanager
def after_the_providers_answer(monkeypatch):
    """Our worker rendered the poster and reported it (the hold captured); then the turn's worker dies before the
    call's result is written."""

    def work(call):
        job_work(job_id=the_job_of(call.call_id).pk)
        assert the_job_of(call.call_id).status == JobStatus.SUCCEEDED
        run_wakeups()  # another worker runs the settled job's reaction, queued with its report

    toolexec, record = _dies_once_recording(monkeypatch, before=work)
    with monkeypatch.context() as patched:
        patched.setattr(toolexec, "_record", record)
        yield


KILL_POINTS = {
    "after_the_hold": after_the_hold,
    "after_the_job_row": after_the_job_row,
    "after_the_job_row_with_a_broker_elsewhere": after_the_job_row_with_a_broker_elsewhere,
    "after_the_broker_message": after_the_broker_message,
    "after_the_providers_answer": after_the_providers_answer,
}


def take_over(settings, turn) -> str:
    later = timezone.now() + timedelta(seconds=settings.LOMOTE_LEASE_SECONDS + 1)
    assert turn.pk in watchdog_sweep(now=later).taken_over
    turn.refresh_from_db()
    return turn_run(turn_id=turn.pk, generation=turn.generation)


def queued_message(job: GenerationJob) -> bool:
    name = WorkerProvider.message_name(job.pk)
    return any(message.name() == name for message in OrmQ.objects.all())


def die_and_take_over(task, kill, settings, script, tools) -> tuple[str, ToolCall, object]:
    """Run the task's turn until `kill` (a context manager) stops its worker, then take the turn over."""
    model = script([says("Making the poster.", POSTER), says("The poster is made.")])
    turn = tools.start_turn(task)
    with kill, pytest.raises(Killed):
        turn_run(turn_id=turn.pk, generation=turn.generation)
    call = ToolCall.objects.get(turn=turn)
    assert call.status == ToolCallStatus.STARTED  # what the dead worker left
    return take_over(settings, turn), call, model


@pytest.mark.parametrize("point", list(KILL_POINTS))
def test_a_worker_killed_at_any_point_of_a_paid_step_never_asks_the_person(
    point, workspace, alice, access, tools, script, settings, monkeypatch, no_enqueue
):
    for attempt in range(REPEATS):
        # given a one-poster task whose worker is killed at this point of its paid step
        task = a_poster_task(workspace, alice)
        # when the watchdog hands the turn to a new worker
        outcome, call, model = die_and_take_over(task, KILL_POINTS[point](monkeypatch), settings, script, tools)
        cards = list(Card.objects.filter(task=task).values_list("payload__verdict", flat=True))
        assert not cards, (attempt, outcome, cards)
        job = the_job_of(call.call_id)
        if not job.is_terminal:
            # then the call is settled or run again under its own id, and the turn waits on its one job
            assert outcome == "suspended", (attempt, outcome)
            # and our worker takes its message from the broker and renders it
            assert queued_message(job), attempt
            job_work(job_id=job.pk)
        # and a worker runs the settled job's reaction on its task (queued with the job's report)
        run_wakeups()

        # then no card asked the person anything; one job, one hold captured once; the task is done
        task.refresh_from_db()
        assert not Card.objects.filter(task=task).exists(), attempt
        assert GenerationJob.objects.filter(task_id=task.pk).count() == 1
        job.refresh_from_db()
        assert job.status == JobStatus.SUCCEEDED and job.idempotency_key == call.call_id
        [order] = Order.objects.filter(task_id=task.pk)
        assert order.status == OrderStatus.CAPTURED and order.idempotency_key == call.call_id
        for kind in (LedgerKind.HOLD, LedgerKind.CAPTURE):
            assert LedgerEntry.objects.filter(order=order, kind=kind).count() == 1, (attempt, kind)
        assert (task.status, task.stop_reason) == (TaskStatus.DONE, "checklist_complete"), attempt
        call.refresh_from_db()
        assert call.status == ToolCallStatus.DONE and call.result["job"] == job.pk
        # no inference was repeated to get there (after the answer, the model is asked for its next step once)
        assert len(model.requests) == (2 if point == "after_the_providers_answer" else 1), attempt
        verdicts = Event.objects.filter(kind="task.resume_checked", data__task=task.pk).values_list(
            "data__verdict", flat=True
        )
        assert len(verdicts) == 1 and verdicts[0] in ("action_not_found_replay", "next_step_proposed"), attempt
    assert wallet_reconcile(workspace.pk)[0]
    assert Turn.objects.filter(task__workspace=workspace).count() == REPEATS


# --- what still asks a person ---


def test_a_remote_provider_that_never_confirmed_still_asks(
    workspace, alice, access, tools, script, settings, monkeypatch, no_enqueue, upstream
):
    # given the simulated remote upstream, and a worker killed while it was being asked (no id came back)
    task = a_poster_task(workspace, alice)

    def dies(job):
        raise Killed()

    @contextmanager
    def while_asking():
        with monkeypatch.context() as patched:
            patched.setattr(upstream, "submit", dies)
            yield

    outcome, call, model = die_and_take_over(task, while_asking(), settings, script, tools)

    # then only a person can settle it: a card, the money held, nothing resubmitted or planned
    assert outcome == "resume_review"
    task.refresh_from_db()
    card = Card.objects.get(pk=task.waiting_for["card"])
    assert card.payload["verdict"] == "action_still_unknown" and card.payload["call"] == call.call_id
    assert the_job_of(call.call_id).status == JobStatus.SUBMITTING and upstream.submissions == 0
    assert Order.objects.get(task_id=task.pk).status == OrderStatus.HELD and len(model.requests) == 1


def test_a_goal_changed_while_the_worker_was_dead_still_asks(
    workspace, alice, access, tools, script, settings, monkeypatch, no_enqueue
):
    # given a worker killed after the hold, and the person rewriting the goal before anyone took over
    task = a_poster_task(workspace, alice)
    model = script([says("Making the poster.", POSTER)])
    turn = tools.start_turn(task)
    with after_the_hold(monkeypatch), pytest.raises(Killed):
        turn_run(turn_id=turn.pk, generation=turn.generation)
    goal_revise_by_person(access=access, task_id=task.pk, brief="Make an art-deco poster instead")

    # when a new worker takes over
    assert take_over(settings, turn) == "resume_review"

    # then the call is not run again for the old goal by itself: a person reviews it, the change named
    task.refresh_from_db()
    card = Card.objects.get(pk=task.waiting_for["card"])
    assert card.payload["verdict"] == "action_not_found_review"
    assert "art-deco" in card.body
    assert not GenerationJob.objects.filter(task_id=task.pk).exists() and len(model.requests) == 1
    assert Order.objects.get(task_id=task.pk).status == OrderStatus.HELD

    # when the person confirms, the call is closed as not done, its hold released, its item open again
    card_act(access=access, card_id=card.pk, action="confirm")
    call = ToolCall.objects.get(turn=turn)
    assert (call.status, call.error["code"]) == (ToolCallStatus.FAILED, "not_done")
    assert Order.objects.get(task_id=task.pk).status == OrderStatus.RELEASED
    assert ChecklistItem.objects.get(task=task, position=1).status == "pending"
    assert not GenerationJob.objects.filter(task_id=task.pk).exists()  # nothing was replayed by itself
    assert wallet_reconcile(workspace.pk)[0]


def test_a_hold_released_meanwhile_is_not_spent_by_the_replay(
    workspace, alice, access, tools, script, settings, monkeypatch, no_enqueue
):
    # given a worker killed after the hold, and no worker for longer than the orphaned-hold rule waits
    task = a_poster_task(workspace, alice)
    script([says("Making the poster.", POSTER), says("The hold was released; I stop here.")])
    turn = tools.start_turn(task)
    with after_the_hold(monkeypatch), pytest.raises(Killed):
        turn_run(turn_id=turn.pk, generation=turn.generation)
    much_later = timezone.now() + timedelta(seconds=settings.LOMOTE_ORPHAN_HOLD_SECONDS + 1)
    assert watchdog_sweep(now=much_later).released_holds
    turn.refresh_from_db()

    # when the new worker runs the call again under its id
    turn_run(turn_id=turn.pk, generation=turn.generation)

    # then no job was made on money given back: the call failed for the model to read, no review was asked; the
    # task, stopped with its poster still to make, says so on the runtime's card (never silent)
    call = ToolCall.objects.get(turn=turn)
    assert (call.status, call.error["code"]) == (ToolCallStatus.FAILED, "hold_released")
    assert not GenerationJob.objects.filter(task_id=task.pk).exists()
    [card] = Card.objects.filter(task=task)
    assert card.payload["source"] == "stalled"
    assert "The hold was released; I stop here." in card.body
    assert Order.objects.get(task_id=task.pk).status == OrderStatus.RELEASED
    assert wallet_reconcile(workspace.pk)[0]
