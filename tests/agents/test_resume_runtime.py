"""Resuming interrupted work through the runtime (DESIGN §11), on PostgreSQL: a worker killed mid-call, a receipt
store that cannot answer, a conflicting receipt, a goal changed during a pause; the checkpoint over REST.

A kill is a BaseException raised right after the paid submission: nothing after it runs (no result is written,
no `except Exception` catches it), exactly what a SIGKILL leaves in the database.
"""

from datetime import timedelta

import pytest
from django.utils import timezone

from agents.models import Card, ChecklistItem, Step, TaskStatus, ToolCall, ToolCallStatus, Turn, TurnStatus
from agents.runtime.history import History
from agents.runtime.loop import turn_run
from agents.runtime.resumption import checkpoint_export, task_resume_checked
from agents.runtime.watchdog import watchdog_sweep
from agents.services.card_actions import card_act
from agents.services.goals import goal_revise_by_person
from agents.services.tasks import task_pause
from billing.models import Approval, LedgerEntry, LedgerKind, Order, OrderStatus
from billing.services.approvals import approval_grant
from billing.services.policy import spend_policy_update
from billing.services.wallets import wallet_topup
from tests.agents.conftest import says
from workspace.models import Event, GenerationJob, JobStatus
from workspace.selectors import workspace_access
from workspace.services.jobs import job_event_apply

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

PNG = {"b64": "iVBORw0KGgo=", "media_type": "image/png", "filename": "poster.png", "meta": {}}
POSTER = ("generate_image", {"prompt": "retro brand poster", "checklist_position": 1})


class Killed(BaseException):
    """The worker process died here."""


@pytest.fixture
def access(workspace, alice):
    access = workspace_access(principal=alice, workspace_id=workspace.pk)
    wallet_topup(access=access, amount=1000)
    return access


@pytest.fixture
def posters(task):
    for position in (1, 2):
        ChecklistItem.objects.create(task=task, position=position, title=f"Poster {position} of 2")
    return task


def kill_after_submission(monkeypatch):
    """The worker dies once the provider accepted the job, before the call's result is written."""
    import agents.runtime.toolexec as toolexec

    real = toolexec._record

    def record(run, call, outcome, *, late_ok):
        if call.name == "generate_image" and run.generation == 1:
            raise Killed()
        return real(run, call, outcome, late_ok=late_ok)

    monkeypatch.setattr(toolexec, "_record", record)


def die_mid_call(task, tools, script):
    model = script([says("Making poster 1.", POSTER), says("Poster 1 is on its way.")])
    turn = tools.start_turn(task)
    with pytest.raises(Killed):
        turn_run(turn_id=turn.pk, generation=1)
    call = ToolCall.objects.get(turn=turn)
    assert call.status == ToolCallStatus.STARTED  # what the dead worker left
    return model, turn, call


def take_over(settings, turn) -> str:
    later = timezone.now() + timedelta(seconds=settings.LOMOTE_LEASE_SECONDS + 1)
    assert watchdog_sweep(now=later).taken_over == [turn.pk]
    return turn_run(turn_id=turn.pk, generation=2)


def verdicts(task) -> list[str]:
    return list(
        Event.objects.filter(kind="task.resume_checked", data__task=task.pk).values_list("data__verdict", flat=True)
    )


def test_a_takeover_after_a_paid_submission_settles_by_receipt_and_submits_nothing_again(
    posters, tools, script, access, upstream, settings, monkeypatch
):
    # given a worker killed right after the provider accepted the job, its result never written
    kill_after_submission(monkeypatch)
    model, turn, call = die_mid_call(posters, tools, script)
    job = GenerationJob.objects.get(idempotency_key=call.call_id)
    assert (upstream.submissions, Order.objects.get().status) == (1, OrderStatus.HELD)

    # when the watchdog hands the turn to a new worker
    assert take_over(settings, turn) == "suspended"

    # then the job found under the call's id settled it: no second submission, no new inference, one hold
    call.refresh_from_db()
    assert call.status == ToolCallStatus.DONE and call.result["job"] == job.pk and call.result["settled_by_receipt"]
    assert upstream.submissions == 1 and GenerationJob.objects.count() == 1 and len(model.requests) == 1
    assert (Order.objects.count(), LedgerEntry.objects.filter(kind=LedgerKind.HOLD).count()) == (1, 1)
    turn.refresh_from_db()
    assert turn.checkpoint["resume"]["verdict"] == "next_step_proposed" and turn.checkpoint["resume"]["lookups"] == 1
    posters.refresh_from_db()
    assert posters.waiting_for == {"type": "jobs", "jobs": [job.pk]}

    # and when the job succeeds, the hold is captured once
    assert job_event_apply(job_id=job.pk, status="succeeded", progress=100, result=PNG)
    job_event_apply(job_id=job.pk, status="succeeded", progress=100, result=PNG)  # a duplicate callback
    assert Order.objects.get().status == OrderStatus.CAPTURED
    assert LedgerEntry.objects.filter(kind=LedgerKind.CAPTURE).count() == 1
    assert verdicts(posters) == ["next_step_proposed"]


def test_a_receipt_store_that_cannot_answer_keeps_the_hold_and_asks_a_person(
    posters, tools, script, access, upstream, settings, monkeypatch
):
    # given a worker killed while the provider was being asked (the job row says `submitting`, no upstream id)
    def dies(job):
        raise Killed()

    monkeypatch.setattr(upstream, "submit", dies)
    model, turn, call = die_mid_call(posters, tools, script)
    assert GenerationJob.objects.get().status == JobStatus.SUBMITTING

    # when a new worker takes over
    assert take_over(settings, turn) == "resume_review"

    # then nothing was planned or resubmitted; the money stays held and the task waits on a review card
    assert len(model.requests) == 1 and GenerationJob.objects.count() == 1
    assert Order.objects.get().status == OrderStatus.HELD
    posters.refresh_from_db()
    card = Card.objects.get(pk=posters.waiting_for["card"])
    assert (posters.status, card.payload["verdict"], card.payload["call"]) == (
        TaskStatus.WAITING,
        "action_still_unknown",
        call.call_id,
    )
    call.refresh_from_db()
    assert call.status == ToolCallStatus.STARTED
    assert checkpoint_export(posters).to_json()["pendingAction"]["id"] == call.call_id


def test_a_receipt_for_another_request_is_a_conflict_for_review(
    posters, tools, script, access, upstream, settings, monkeypatch
):
    # given a dead worker's call, and under its id a job that asked for something else
    kill_after_submission(monkeypatch)
    model, turn, call = die_mid_call(posters, tools, script)
    GenerationJob.objects.filter(idempotency_key=call.call_id).update(prompt="a cold minimalist poster")

    # when a new worker takes over
    assert take_over(settings, turn) == "resume_review"

    # then the conflict is shown with what the target holds; nothing repeated, the call stays pending
    posters.refresh_from_db()
    card = Card.objects.get(pk=posters.waiting_for["card"])
    assert card.payload["verdict"] == "action_receipt_conflict"
    assert card.payload["receipt"]["params"]["prompt"] == "a cold minimalist poster"
    assert "a cold minimalist poster" in card.body
    assert (upstream.submissions, len(model.requests), Order.objects.get().status) == (1, 1, OrderStatus.HELD)

    # when the person confirms, the call is closed as a conflict (never repeated) and the task goes on
    card_act(access=access, card_id=card.pk, action="confirm")
    call.refresh_from_db()
    assert (call.status, call.error["code"]) == (ToolCallStatus.FAILED, "receipt_conflict")
    assert Turn.objects.filter(task=posters, status=TurnStatus.QUEUED).exists()
    assert upstream.submissions == 1


def test_no_receipt_runs_the_call_again_under_its_own_id_without_asking(
    posters, tools, script, access, upstream, settings, monkeypatch
):
    # given a dead worker whose call held money but whose job was never created
    import agents.tools.generation as generation

    def dies(**kwargs):
        raise Killed()

    monkeypatch.setattr(generation, "job_submit", dies)
    model, turn, call = die_mid_call(posters, tools, script)
    monkeypatch.undo()
    assert (GenerationJob.objects.count(), Order.objects.get().status) == (0, OrderStatus.HELD)

    # when a new worker takes over
    assert take_over(settings, turn) == "suspended"

    # then no job under the call's id proved nothing was submitted (the job row commits before any provider hears
    # of it): the call ran again under the same id, on the same hold, with no new inference and no card
    assert verdicts(posters) == ["action_not_found_replay"] and not Card.objects.exists()
    job = GenerationJob.objects.get()
    assert (job.idempotency_key, upstream.submissions, len(model.requests)) == (call.call_id, 1, 1)
    assert (Order.objects.count(), LedgerEntry.objects.filter(kind=LedgerKind.HOLD).count()) == (1, 1)
    call.refresh_from_db()
    assert call.status == ToolCallStatus.DONE and call.result["job"] == job.pk
    posters.refresh_from_db()
    assert posters.waiting_for == {"type": "jobs", "jobs": [job.pk]}


def test_a_call_an_ended_turn_left_without_receipt_runs_again_when_the_person_resumes(
    posters, tools, script, access, upstream, monkeypatch
):
    # given a paused task whose ended turn left a paid call started, money held and no job under its id
    import agents.tools.generation as generation

    def dies(**kwargs):
        raise Killed()

    monkeypatch.setattr(generation, "job_submit", dies)
    model, turn, call = die_mid_call(posters, tools, script)
    monkeypatch.undo()
    Turn.objects.filter(pk=turn.pk).update(status=TurnStatus.STOPPED)
    task_pause(access=access, task_id=posters.pk)

    # when the person resumes: the verdict is a replay, which only a runner does
    _, verdict = task_resume_checked(access=access, task_id=posters.pk)
    assert (verdict["verdict"], verdict["outcome"]) == ("action_not_found_replay", "replay")
    nxt = Turn.objects.get(task=posters, status=TurnStatus.QUEUED)
    assert turn_run(turn_id=nxt.pk, generation=nxt.generation) == "suspended"

    # then the new turn ran the old call under its own id before planning anything, and waits on its job
    job = GenerationJob.objects.get()
    call.refresh_from_db()
    assert (job.idempotency_key, call.status, call.result["job"]) == (call.call_id, ToolCallStatus.DONE, job.pk)
    assert (upstream.submissions, len(model.requests), Order.objects.count()) == (1, 1, 1)
    assert not Card.objects.exists()
    posters.refresh_from_db()
    assert posters.waiting_for == {"type": "jobs", "jobs": [job.pk]}


def test_a_goal_changed_during_a_pause_is_reviewed_and_its_old_approval_not_reused(
    posters, tools, script, access, upstream, settings
):
    # given a task with a budget approved for its goal (every order needs an approval), paused
    spend_policy_update(access=access, no_confirm_threshold=0)
    approval_grant(access=access, task_id=posters.pk, budget=200)
    tools.start_turn(posters)  # the work starts on goal revision 1 (its basis)
    Turn.objects.filter(task=posters).update(status=TurnStatus.STOPPED)
    posters.refresh_from_db()
    task_pause(access=access, task_id=posters.pk)

    # when the person rewrites the goal during the pause, then resumes
    goal_revise_by_person(access=access, task_id=posters.pk, brief="Make 2 art-deco posters instead")
    task, verdict = task_resume_checked(access=access, task_id=posters.pk)

    # then the resume answers a goal review: a card, no turn started
    assert verdict["verdict"] == "goal_changed_review" and verdict["outcome"] == "review"
    assert not Turn.objects.filter(task=posters, status__in=("queued", "running")).exists()
    card = Card.objects.get(pk=task.waiting_for["card"])
    assert "art-deco" in card.body and card.payload["verdict"] == "goal_changed_review"

    # when the person confirms the new goal, the next paid step asks for spending again
    card_act(access=access, card_id=card.pk, action="confirm")
    posters.refresh_from_db()
    assert posters.basis["goal_revision"] == 2
    script([says("Making poster 1.", POSTER)])
    turn = Turn.objects.get(task=posters, status=TurnStatus.QUEUED)
    assert turn_run(turn_id=turn.pk, generation=turn.generation) == "suspended"
    posters.refresh_from_db()
    assert posters.waiting_for["type"] == "approval"
    assert Order.objects.count() == 0 and upstream.submissions == 0
    assert Approval.objects.get().remaining == 200  # the old budget was not drawn on


def test_history_keeps_every_step_after_an_earlier_turns_unfinished_call(task, tools, script):
    # given a turn whose step 1 left a call started (paused mid-call), then a later turn with two steps
    first = tools.start_turn(task)
    step = Step.objects.create(turn=first, index=1, number=1, generation=1, text="Submitting.", decision={})
    ToolCall.objects.create(turn=first, step=step, index=1, call_id=f"{first.pk}:1:1", name="test_charge", input={})
    ToolCall.objects.filter(step=step).update(status=ToolCallStatus.STARTED)
    Turn.objects.filter(pk=first.pk).update(status=TurnStatus.STOPPED)
    second = Turn.objects.create(task=task, number=2, trigger="test")
    for index, number in ((1, 2), (2, 3)):
        Step.objects.create(turn=second, index=index, number=number, generation=1, text=f"Step {number}.", decision={})

    # when the next run reads the history
    history = History(task, turn_id=second.pk)
    history.load()

    # then every step is there, the unfinished call shown as interrupted (a tool answer for its call id)
    assert [entry.number for entry in history.steps] == [1, 2, 3]
    tool_messages = [m for m in history.steps[0].messages if m["role"] == "tool"]
    assert len(tool_messages) == 1 and "outcome_unknown" in tool_messages[0]["content"]


def test_checkpoint_and_resume_over_rest(client_for, alice, dave, posters, workspace, access):
    from agents.models import Task
    from tests.support.factories import WorkspaceFactory

    elsewhere = WorkspaceFactory(name="Elsewhere", created_by=dave)
    other_workspace_task = Task.objects.create(workspace=elsewhere, title="Theirs", brief="x", created_by=dave)
    client = client_for(alice)
    base = f"/api/v1/workspaces/{workspace.pk}/tasks/{posters.pk}/"
    got = client.get(base + "checkpoint/")
    assert got.status_code == 200
    body = got.json()
    assert body["schema"] == 1 and body["mission"] == posters.pk and body["tenant"] == workspace.pk
    assert body["subject"] == alice.pk and body["pendingAction"] is None and body["status"] in ("ready", "running")
    assert body["configVersion"].startswith("cfg-")
    # another workspace's task is not found, from either side
    theirs = f"/api/v1/workspaces/{workspace.pk}/tasks/{other_workspace_task.pk}/checkpoint/"
    assert client.get(theirs).status_code == 404
    assert (
        client.get(f"/api/v1/workspaces/{elsewhere.pk}/tasks/{other_workspace_task.pk}/checkpoint/").status_code == 404
    )
    task_pause(access=access, task_id=posters.pk)
    resumed = client.post(base + "resume/")
    assert resumed.status_code == 200
    assert resumed.json()["resume"]["verdict"] == "next_step_proposed" and resumed.json()["resume"]["writes"] == 0
    assert client.post(base + "resume/").json()["resume"] is None  # not paused any more: nothing judged


def test_a_model_changed_during_a_pause_is_reviewed_before_the_work_goes_on(posters, tools, access):
    # given a task that started under the workspace's default model, then paused
    from agents.models import ModelProfile

    tools.start_turn(posters)
    Turn.objects.filter(task=posters).update(status=TurnStatus.STOPPED)
    task_pause(access=access, task_id=posters.pk)

    # when someone makes another model the default meanwhile, and the person resumes
    ModelProfile.objects.create(
        workspace_id=posters.workspace_id, name="big", provider="openai_compat", model="big-model-2", is_default=True
    )
    task, verdict = task_resume_checked(access=access, task_id=posters.pk)

    # then the change is shown for review, then and now, before any turn
    assert verdict["verdict"] == "config_changed_review"
    card = Card.objects.get(pk=task.waiting_for["card"])
    assert "big-model-2" in card.body and "lomote-scripted-planner-1" in card.body
    assert not Turn.objects.filter(task=posters, status__in=("queued", "running")).exists()

    # when the person confirms, the work goes on under the new configuration
    card_act(access=access, card_id=card.pk, action="confirm")
    posters.refresh_from_db()
    assert posters.basis["config"]["model"]["model"] == "big-model-2"
    assert Turn.objects.filter(task=posters, status=TurnStatus.QUEUED).exists()


def test_a_source_changed_by_someone_else_is_seen_as_stale(posters, tools, access, alice):
    # given a task that read version 1 of a document
    from workspace.models import ArtifactKind
    from workspace.services.artifacts import artifact_create
    from workspace.services.documents import document_write
    from workspace.services.notices import artifact_seen

    doc = artifact_create(
        workspace_id=posters.workspace_id, kind=ArtifactKind.DOCUMENT, title="Brief", content="v1", author_user=alice
    )
    artifact_seen(workspace_id=posters.workspace_id, artifact_id=doc.pk, task_id=posters.pk, version=1)
    tools.start_turn(posters)
    Turn.objects.filter(task=posters).update(status=TurnStatus.STOPPED)
    before = checkpoint_export(posters).source_revision
    task_pause(access=access, task_id=posters.pk)

    # when a person writes version 2 during the pause
    document_write(
        workspace_id=posters.workspace_id, artifact_id=doc.pk, base_version=1, content="v2", author_user=alice
    )

    # then the work's sources are older than the present ones, and the resume says they must be read again
    assert checkpoint_export(posters).source_revision == before
    task, verdict = task_resume_checked(access=access, task_id=posters.pk)
    assert verdict["verdict"] == "source_refresh_required" and verdict["outcome"] == "go"
    # it does not stop the work: the change notice the task receives says what changed
    assert Turn.objects.filter(task=posters, status=TurnStatus.QUEUED).exists()
    assert Turn.objects.get(task=posters, status=TurnStatus.QUEUED).checkpoint["resume"]["verdict"] == (
        "source_refresh_required"
    )


def test_a_billing_receipt_conflict_is_reviewed_not_a_crash(posters, tools, script, access, upstream):
    # given, under the id the next call will have, a hold for another request
    from billing.services.orders import order_place

    turn = tools.start_turn(posters)
    order_place(
        workspace_id=posters.workspace_id,
        idempotency_key=f"{turn.pk}:1:1",
        operation="image.generate",
        target={"task": posters.pk, "prompt": "something else", "artifact": None},
        amount=5,
        task_id=posters.pk,
    )
    script([says("Making poster 1.", POSTER)])

    # when the model's call runs
    assert turn_run(turn_id=turn.pk, generation=1) == "suspended"

    # then it is a conflict a person reviews on a card — not tool_crashed — and nothing was submitted
    call = ToolCall.objects.get(turn=turn)
    assert call.status == ToolCallStatus.DONE and call.result["status"] == "receipt_conflict"
    assert call.result["error"]["code"] == "idempotency_key_reuse"
    posters.refresh_from_db()
    assert posters.status == TaskStatus.WAITING and Card.objects.get(pk=posters.waiting_for["card"]).status == "open"
    assert upstream.submissions == 0 and Order.objects.count() == 1


def test_a_person_rewrites_the_goal_over_rest_and_a_quote_for_the_old_one_is_withdrawn(
    client_for, alice, carol, posters, tools, script, access, upstream
):
    # given a task waiting on a quote for its first goal (every order needs an approval)
    spend_policy_update(access=access, no_confirm_threshold=0)
    script([says("Making poster 1.", POSTER)])
    turn = tools.start_turn(posters)
    assert turn_run(turn_id=turn.pk, generation=1) == "suspended"
    posters.refresh_from_db()
    quote_card = Card.objects.get(pk=posters.waiting_for["card"])
    url = f"/api/v1/workspaces/{posters.workspace_id}/tasks/{posters.pk}/goal/"

    # bad input changes nothing: an unknown field, the same brief, a viewer, another workspace's id
    assert post_status(client_for(alice), url, {"brief": "x", "force": True}) == 400
    assert post_status(client_for(alice), url, {"brief": posters.brief}) == 400
    assert post_status(client_for(carol), url, {"brief": "Something else"}) == 403
    assert post_status(client_for(alice), url.replace(f"/{posters.pk}/", "/999999/"), {"brief": "y"}) == 404
    posters.refresh_from_db()
    assert posters.goal_revision == 1 and Card.objects.get(pk=quote_card.pk).status == "open"

    # when the person rewrites the goal
    got = client_for(alice).post(url, {"brief": "Two art-deco posters", "reason": "Changed my mind"}, format="json")

    # then it is revision 2, the old quote's card is withdrawn (its approval must not fund the new goal)
    assert got.status_code == 200 and got.json()["goal_revision"] == 2
    assert Card.objects.get(pk=quote_card.pk).status == "cancelled"
    posters.refresh_from_db()
    assert (posters.status, posters.stop_reason) == (TaskStatus.IDLE, "goal_changed")


def post_status(client, url, body) -> int:
    return client.post(url, body, format="json").status_code


def test_a_harmless_call_left_started_is_closed_once_and_later_turns_are_not_rechecked(posters, tools, access):
    # given a paused task whose last turn left a read-only lookup started
    first = tools.start_turn(posters)
    step = Step.objects.create(turn=first, index=1, number=1, generation=1, text="Looking.", decision={})
    call = ToolCall.objects.create(turn=first, step=step, index=1, call_id=f"{first.pk}:1:1", name="test_lookup")
    ToolCall.objects.filter(pk=call.pk).update(status=ToolCallStatus.STARTED)
    Turn.objects.filter(pk=first.pk).update(status=TurnStatus.STOPPED)
    task_pause(access=access, task_id=posters.pk)

    # when the person resumes: nothing to settle (it cannot have acted elsewhere), so the work goes on
    _, verdict = task_resume_checked(access=access, task_id=posters.pk)
    assert verdict["verdict"] == "next_step_proposed" and verdict["lookups"] == 0

    # then the call is closed as interrupted, and the next turn starts without a resume check
    call.refresh_from_db()
    assert (call.status, call.error["code"]) == (ToolCallStatus.FAILED, "interrupted")
    queued = Turn.objects.get(task=posters, status=TurnStatus.QUEUED)
    assert queued.checkpoint["resume"]["verdict"] == "next_step_proposed"  # the check it started after
