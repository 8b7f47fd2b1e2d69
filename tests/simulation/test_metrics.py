"""Each collaboration metric counts the bad case it names (issue 18 item 3), and only that case.

Every test makes the bad case on purpose with the services that make it in real life (a status move, a card
opened for a wait, a message routed, a generation job) on PostgreSQL, and reads the figure back from the stored
facts — beside a near miss that must not be counted.
"""

from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from agents.locks import task_qs_for_update
from agents.main.messages import main_message_post
from agents.models import (
    Autonomy,
    CardKind,
    ChecklistItem,
    ChecklistStatus,
    Route,
    Step,
    TaskStatus,
    ToolCall,
    Turn,
    TurnStatus,
)
from agents.services.cards import card_open, card_open_for_wait
from agents.services.memory_forget import memory_forget_ask
from agents.services.task_settings import task_settings_update
from agents.services.task_status import task_status_set
from agents.services.tasks import task_create
from billing.services.policy import spend_policy_update
from memory.services.memories import memory_state
from simulation.metrics import Intents, RevisionIntent, RouteIntent, collaboration_metrics
from workspace.models import GenerationJob, JobStatus
from workspace.selectors import workspace_access
from workspace.services.artifacts import artifact_create

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]


@pytest.fixture
def owner(workspace, alice):
    return workspace_access(principal=alice, workspace_id=workspace.pk)


@pytest.fixture
def posters(owner, no_enqueue):
    task = task_create(access=owner, title="Posters", brief="")
    for position in (1, 2, 3):
        ChecklistItem.objects.create(task=task, position=position, title=f"Poster {position}")
    return task


@pytest.fixture
def no_enqueue(monkeypatch):
    """Turns are recorded but not run: these tests look only at stored facts."""
    monkeypatch.setattr("agents.services.turns.enqueue_turn", lambda *a, **k: None)


def measured(workspace, **kwargs):
    return collaboration_metrics(workspace_id=workspace.pk, **kwargs)


def _stop(task, status, reason, waiting_for=None):
    with transaction.atomic():
        locked = task_qs_for_update().get(pk=task.pk)
        task_status_set(locked, status, reason=reason, waiting_for=waiting_for or {}, summary=False)


def _wait_on(task, waiting_for):
    with transaction.atomic():
        locked = task_qs_for_update().get(pk=task.pk)
        return card_open_for_wait(locked, waiting_for)


# --- stalls -----------------------------------------------------------------------------------------------


def test_a_task_stopped_with_open_items_and_no_card_is_a_stall(workspace, posters):
    # when the task stops short with three open items and nothing asked
    _stop(posters, TaskStatus.IDLE, "no_progress")
    # then it is one stall, named in the findings
    metrics = measured(workspace)
    assert metrics.stalls == 1
    assert any(f"task #{posters.pk} stopped idle (no_progress) with 3 open item(s)" in f for f in metrics.findings)


def test_a_stop_waiting_on_generation_or_on_an_open_card_is_not_a_stall(workspace, posters):
    # when the task waits for its jobs, then on a card it opened
    _stop(posters, TaskStatus.ACTIVE, "")
    _stop(posters, TaskStatus.WAITING, "jobs", {"type": "jobs", "jobs": [1]})
    _stop(posters, TaskStatus.ACTIVE, "")
    _wait_on(posters, {"type": "person", "question": "Warm or cool?", "options": ["Warm", "Cool"]})
    _stop(posters, TaskStatus.WAITING, "checkpoint", {"type": "person"})
    # then nothing stalled
    assert measured(workspace).stalls == 0


# --- duplicate generations --------------------------------------------------------------------------------


def _job(workspace, key, *, prompt="A retro poster", status=JobStatus.SUCCEEDED, task=None, **extra):
    return GenerationJob.objects.create(
        workspace=workspace,
        kind="image",
        provider="procedural",
        prompt=prompt,
        params={"size": "1024x1536"},
        idempotency_key=key,
        status=status,
        task_id=task.pk if task else None,
        **extra,
    )


def test_two_jobs_with_the_same_inputs_are_a_duplicate_generation(workspace):
    # when the same poster is generated twice under two keys
    first, second = _job(workspace, "turn:1:a"), _job(workspace, "turn:2:a")
    # then one of them was a duplicate
    metrics = measured(workspace)
    assert metrics.duplicate_generations == 1
    assert any(f"jobs #{first.pk}, #{second.pk} had the same inputs" in f for f in metrics.findings)


def test_a_retry_after_a_failure_and_a_different_prompt_are_not_duplicates(workspace):
    # when a job failed and was tried again, and another poster has its own prompt
    _job(workspace, "turn:1:a", status=JobStatus.FAILED)
    _job(workspace, "turn:2:a")
    _job(workspace, "turn:2:b", prompt="A retro poster, warmer")
    # then nothing was duplicated
    assert measured(workspace).duplicate_generations == 0


# --- unnecessary confirmations ----------------------------------------------------------------------------


def test_a_confirmation_asked_under_auto_with_no_rule_is_unnecessary(workspace, owner, posters):
    # given a task the person let run by itself
    task_settings_update(access=owner, task_id=posters.pk, autonomy=Autonomy.AUTO)
    # when the agent still asks a yes/no question about nothing that needs it
    card = _wait_on(posters, {"type": "person", "question": "Shall I go on with the posters?"})
    # then that card is counted
    metrics = measured(workspace)
    assert (metrics.confirmations, metrics.unnecessary_confirmations) == (1, 1)
    assert any(f"card #{card.pk}" in f and "no rule required it" in f for f in metrics.findings)


def test_the_same_question_is_required_under_ask_or_at_a_checkpoint_item(workspace, owner, posters):
    # given a task under `ask` (the default is `checkpoints`) asking the same question
    task_settings_update(access=owner, task_id=posters.pk, autonomy=Autonomy.ASK)
    _wait_on(posters, {"type": "person", "question": "Shall I go on with the posters?"})
    # and, later under `checkpoints`, a question at an item that needs confirmation
    task_settings_update(access=owner, task_id=posters.pk, autonomy=Autonomy.CHECKPOINTS)
    ChecklistItem.objects.filter(task=posters, position=1).update(needs_confirmation=True)
    _wait_on(posters, {"type": "person", "question": "Is the layout right?"})
    # then neither is counted: the autonomy rule, then the checkpoint, required them
    assert measured(workspace).unnecessary_confirmations == 0


def test_a_quote_under_the_threshold_is_unnecessary_and_one_above_it_is_not(workspace, owner, posters):
    # given a policy that lets 50 credits through unasked
    spend_policy_update(access=owner, no_confirm_threshold=50)
    # when a 40-credit image is quoted "over the threshold", then a 60-credit one
    _wait_on(posters, {"type": "approval", "amount": 40, "per_item": 40, "items": 1, "reasons": ["threshold"]})
    _wait_on(posters, {"type": "approval", "amount": 60, "per_item": 60, "items": 1, "reasons": ["threshold"]})
    # then only the first asked for nothing
    metrics = measured(workspace)
    assert (metrics.confirmations, metrics.unnecessary_confirmations) == (2, 1)
    assert any("Approve 40 credits" in f for f in metrics.findings)


def test_a_quote_asked_only_because_the_task_budget_ran_short_is_unnecessary(workspace, owner, posters):
    # given a policy that lets 50 credits through unasked (an approved budget adds to it, never lowers it)
    spend_policy_update(access=owner, no_confirm_threshold=50)
    # when a 40-credit revision is quoted because the task's budget had too little left, then a 60-credit one
    # that is over the threshold and which the budget did not cover either
    _wait_on(posters, {"type": "approval", "amount": 40, "per_item": 40, "items": 1, "reasons": ["budget"]})
    _wait_on(
        posters, {"type": "approval", "amount": 60, "per_item": 60, "items": 1, "reasons": ["threshold", "budget"]}
    )
    # then only the first asked for nothing
    metrics = measured(workspace)
    assert (metrics.confirmations, metrics.unnecessary_confirmations) == (2, 1)
    assert any("Approve 40 credits" in f for f in metrics.findings)


def test_a_quote_is_judged_by_the_policy_of_its_moment(workspace, owner, posters):
    # given a 60-credit quote asked while the threshold was 50
    spend_policy_update(access=owner, no_confirm_threshold=50)
    _wait_on(posters, {"type": "approval", "amount": 60, "per_item": 60, "items": 1, "reasons": ["threshold"]})
    # when the owner raises the threshold afterwards
    spend_policy_update(access=owner, no_confirm_threshold=500)
    # then the quote was still needed when it was asked
    assert measured(workspace).unnecessary_confirmations == 0


def test_irreversible_operations_always_need_their_card(workspace, owner):
    # when the person asks to forget a memory (under any policy)
    memory = memory_state(access=owner, content="Our slogan is Bake it warm.", kind="fact")
    memory_forget_ask(access=owner, memory_id=memory.pk)
    # then its confirmation is required by rule
    metrics = measured(workspace)
    assert (metrics.confirmations, metrics.unnecessary_confirmations) == (1, 0)


def _resume_review(task, *, verdict, tool="generate_image", job_provider=None, changed=None):
    """A resumed task's review card about an interrupted call of `tool` (and its job, on `job_provider`)."""
    number = Turn.objects.filter(task=task).count() + 1
    turn = Turn.objects.create(task=task, number=number, trigger="test", status=TurnStatus.STOPPED)
    step = Step.objects.create(turn=turn, index=1, number=turn.number, generation=1, text="", decision={})
    call_id = f"{turn.pk}:1:1"
    ToolCall.objects.create(turn=turn, step=step, index=1, call_id=call_id, name=tool, input={"prompt": "a poster"})
    if job_provider is not None:
        GenerationJob.objects.create(
            workspace_id=task.workspace_id,
            kind="image",
            provider=job_provider,
            prompt="a poster",
            idempotency_key=call_id,
        )
    payload = {"source": "resume_review", "verdict": verdict, "call": call_id, "changed": changed}
    with transaction.atomic():
        locked = task_qs_for_update().get(pk=task.pk)
        return card_open(locked, kind=CardKind.CONFIRM, title="Review", payload=payload, turn=turn)


def test_a_resume_review_the_replay_contract_would_have_settled_is_unnecessary(workspace, posters):
    # when a worker crash alone opened reviews: a generation call with no receipt (its receipts are ours), and a
    # submission left unconfirmed on our own renderer
    _resume_review(posters, verdict="action_not_found_review")
    _resume_review(posters, verdict="action_still_unknown", job_provider="procedural")
    # then both asked although nothing required it
    metrics = measured(workspace)
    assert (metrics.confirmations, metrics.unnecessary_confirmations) == (2, 2)


def test_a_resume_review_only_a_person_can_settle_is_required(workspace, posters):
    # when reviews asked what only a person can settle: no receipt but the goal changed meanwhile, a remote provider
    # that never confirmed, a receipt for another request, a call of a tool that keeps no receipts
    _resume_review(posters, verdict="action_not_found_review", changed="goal_changed_review")
    _resume_review(posters, verdict="action_still_unknown", job_provider="a_remote_upstream")
    _resume_review(posters, verdict="action_receipt_conflict", job_provider="procedural")
    _resume_review(posters, verdict="action_still_unknown", tool="write_document")
    _resume_review(posters, verdict="goal_changed_review")
    # then none is counted
    metrics = measured(workspace)
    assert (metrics.confirmations, metrics.unnecessary_confirmations) == (5, 0)


# --- routing ----------------------------------------------------------------------------------------------


def test_a_follow_up_that_reached_another_task_is_misrouted(workspace, owner, posters):
    # given a second task
    video = task_create(access=owner, title="Cat video", brief="")
    # when a message meant for the posters reaches the video, and another one reaches the posters
    wrong = main_message_post(access=owner, text="Make poster 2 warmer", task_id=video.pk)
    right = main_message_post(access=owner, text="And poster 3 cooler", task_id=posters.pk)
    intents = Intents(
        routes=[
            RouteIntent(message_id=wrong.pk, route=Route.FOLLOW_UP, task_id=posters.pk),
            RouteIntent(message_id=right.pk, route=Route.FOLLOW_UP, task_id=posters.pk),
        ]
    )
    # then one of two follow-ups was routed right
    metrics = measured(workspace, intents=intents)
    assert (metrics.follow_ups, metrics.follow_ups_right) == (2, 1)
    assert metrics.follow_ups_routed_right == 0.5
    assert any(
        f"message #{wrong.pk} meant for task #{posters.pk} went direct → task #{video.pk}" in f
        for f in metrics.findings
    )


# --- split copies -----------------------------------------------------------------------------------------


def _artifact(workspace, task, title):
    return artifact_create(workspace_id=workspace.pk, kind="image", title=title, content="", author_task_id=task.pk)


def test_a_checklist_item_whose_poster_became_two_artifacts_is_a_split_copy(workspace, posters):
    # given poster 1 made as an artifact, then "revised" into a second artifact instead of a version
    first, copy = _artifact(workspace, posters, "Poster 1"), _artifact(workspace, posters, "Poster 1 (warmer)")
    one = _job(workspace, "turn:1:a", task=posters, artifact=first)
    two = _job(workspace, "turn:2:a", task=posters, artifact=copy, prompt="warmer")
    ChecklistItem.objects.filter(task=posters, position=1).update(
        status=ChecklistStatus.DONE,
        artifacts=[
            {"job": one.pk, "artifact": first.pk, "version": 1},
            {"job": two.pk, "artifact": copy.pk, "version": 1},
        ],
    )
    # and poster 2 revised properly: two versions of one artifact
    second = _artifact(workspace, posters, "Poster 2")
    ChecklistItem.objects.filter(task=posters, position=2).update(
        artifacts=[{"artifact": second.pk, "version": 1}, {"artifact": second.pk, "version": 2}]
    )
    # then one split copy is counted, for poster 1
    metrics = measured(workspace)
    assert metrics.split_copies == 1
    assert any("“Poster 1”" in f and str(sorted([first.pk, copy.pk])) in f for f in metrics.findings)


def test_a_revision_that_made_a_new_artifact_is_a_split_copy(workspace, posters):
    # given poster 2, and the person's request to revise it
    poster2 = _artifact(workspace, posters, "Poster 2")
    _job(workspace, "turn:1:b", task=posters, artifact=poster2)
    asked = timezone.now()
    revision = RevisionIntent(task_id=posters.pk, artifact_ids=(poster2.pk,), at=asked, until=None)
    # when the revision came out as a version of poster 2: nothing to count
    _job(workspace, "turn:2:b", task=posters, artifact=poster2, base_version=1, prompt="warmer")
    assert measured(workspace, intents=Intents(revisions=[revision])).split_copies == 0
    # when another revision made a new artifact instead
    copy = _artifact(workspace, posters, "Poster 2, warmer")
    _job(workspace, "turn:3:b", task=posters, artifact=copy, prompt="warmer still")
    # then it is a split copy
    metrics = measured(workspace, intents=Intents(revisions=[revision]))
    assert metrics.split_copies == 1
    assert any(f"made new artifact(s) [{copy.pk}]" in f for f in metrics.findings)
    # and outside the revision's window it is not this revision's
    closed = RevisionIntent(task_id=posters.pk, artifact_ids=(poster2.pk,), at=asked, until=asked + timedelta(0))
    assert measured(workspace, intents=Intents(revisions=[closed])).split_copies == 0
