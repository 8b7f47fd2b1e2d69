"""Quick requests stay quick (issue 19 item 2, seed §2.2, DESIGN §2).

"Generate an image of a ginger cat" goes through Main and the scripted Router to a lightweight task, whose turn
takes the runtime's short path: one model call offered only the tools that make one result, one generation job
priced, held and captured once, a RESULT card naming the artifact, and no place in the default task list. A second
iteration makes a new version of the same artifact on the same short path; a third promotes the task to persistent
(same row: its turns, checklist and artifacts kept) and it is listed. Asserted on persisted facts.
"""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from agents.main.messages import main_message_post
from agents.models import (
    Card,
    CardKind,
    CardStatus,
    ChecklistItem,
    ChecklistStatus,
    InboxMessage,
    Route,
    Step,
    Task,
    TaskKind,
    TaskStatus,
    ToolCall,
    Turn,
    TurnStatus,
)
from agents.providers.base import ModelRequest
from agents.runtime.loop import turn_run
from agents.runtime.shortpath import SHORT_RULES, SHORT_TOOLS
from agents.runtime.watchdog import watchdog_sweep
from agents.scripted.planner import MODEL_NAME, ScriptedPlanner
from billing.models import LedgerEntry, LedgerKind, Order, OrderStatus, SpendPolicy
from billing.services.approvals import approval_grant
from billing.services.wallets import wallet_reconcile, wallet_topup
from tests.agents.conftest import says
from tests.support.queued import run_wakeups
from tests.support.rest import assert_error
from workspace.models import Artifact, GenerationJob, JobStatus
from workspace.selectors import workspace_access
from workspace.services.jobs import job_event_apply

pytestmark = [pytest.mark.django_db(transaction=True)]

PNG = {"b64": "iVBORw0KGgo=", "media_type": "image/png", "filename": "result.png", "meta": {}}
GINGER_CAT = "Generate an image of a ginger cat"


class Counting:
    """The embedded scripted planner, watched: every request it is sent is kept."""

    def __init__(self):
        self.inner = ScriptedPlanner()
        self.requests = []

    def complete(self, request):
        self.requests.append(request)
        return self.inner.complete(request)


@pytest.fixture
def planner(monkeypatch):
    counting = Counting()
    monkeypatch.setattr("agents.runtime.loop.provider_for_lease", lambda lease: counting)
    return counting


@pytest.fixture
def access(workspace, alice, upstream, no_enqueue):
    access = workspace_access(principal=alice, workspace_id=workspace.pk)
    wallet_topup(access=access, amount=5000)
    return access


def run_queued_turns():
    while turn := Turn.objects.filter(status=TurnStatus.QUEUED).order_by("pk").first():
        turn_run(turn_id=turn.pk, generation=turn.generation)


def settle(access, task, *, approve=False):
    """Run the task until it rests: its queued turns, its jobs completed by the upstream; spending approved by
    a person only when `approve` says so."""
    for _ in range(10):
        run_queued_turns()
        task.refresh_from_db()
        if approve and task.status == TaskStatus.WAITING and task.waiting_for.get("type") == "approval":
            approval_grant(access=access, task_id=task.pk, budget=task.waiting_for["amount"])
            continue
        open_jobs = GenerationJob.objects.exclude(status__in=[JobStatus.SUCCEEDED, JobStatus.FAILED])
        if not open_jobs.exists():
            return
        for job in open_jobs:
            job_event_apply(job_id=job.pk, status="succeeded", progress=100, result=PNG)
        run_wakeups()
    raise AssertionError("the task did not come to rest")


def listed(client, workspace, query=""):
    response = client.get(reverse("task-list", args=[workspace.pk]) + query)
    assert response.status_code == 200, response.content
    return [row["id"] for row in response.json()["results"]]


def quick_cat(access, planner) -> tuple[Task, GenerationJob]:
    message = main_message_post(access=access, text=GINGER_CAT)
    assert message.route == Route.LIGHTWEIGHT
    task = message.task
    settle(access, task)
    task.refresh_from_db()
    [job] = GenerationJob.objects.filter(task_id=task.pk)
    return task, job


def test_it_answers_a_quick_request_in_one_step_with_one_charge_and_a_result_card(access, planner, client_for, alice):
    # when alice asks Main for one image
    task, job = quick_cat(access, planner)

    # then a lightweight task answered in one turn of one step: one model call, offered only the short path's tools
    assert task.kind == TaskKind.LIGHTWEIGHT
    assert (task.status, task.stop_reason) == (TaskStatus.DONE, "checklist_complete")
    [turn] = Turn.objects.filter(task=task)
    assert Step.objects.filter(turn__task=task).count() == 1
    assert len(planner.requests) == 1
    offered = {tool.name for tool in planner.requests[0].tools}
    assert offered <= set(SHORT_TOOLS) and "generate_image" in offered
    assert planner.requests[0].state["mode"] == "one_result"
    [call] = ToolCall.objects.filter(turn__task=task)
    assert call.name == "generate_image" and "ginger cat" in call.input["prompt"].lower()
    # and no plan was made or confirmed: the one item the task was made with, done with the artifact
    [item] = ChecklistItem.objects.filter(task=task)
    assert item.status == ChecklistStatus.DONE
    assert item.artifacts[-1]["artifact"] == job.artifact_id
    # one generation job, one order held and captured once
    assert job.status == JobStatus.SUCCEEDED and job.idempotency_key == call.call_id
    [order] = Order.objects.filter(workspace_id=task.workspace_id, task_id=task.pk)
    assert order.status == OrderStatus.CAPTURED and order.idempotency_key == call.call_id
    assert LedgerEntry.objects.filter(order=order, kind=LedgerKind.HOLD).count() == 1
    assert LedgerEntry.objects.filter(order=order, kind=LedgerKind.CAPTURE).count() == 1
    assert wallet_reconcile(task.workspace_id)[0]
    # and the answer is a result card naming the artifact; no other card was opened
    [card] = Card.objects.filter(task=task)
    artifact = Artifact.objects.get(pk=job.artifact_id)
    assert (card.kind, card.status) == (CardKind.RESULT, CardStatus.OPEN)
    assert card.payload["artifacts"] == [
        {"artifact": artifact.pk, "version": 1, "kind": artifact.kind, "title": artifact.title}
    ]
    assert f"#{artifact.pk}" in card.body

    # the task is not in the default task list; the filter shows it
    client = client_for(alice)
    assert task.pk not in listed(client, task.workspace)
    assert task.pk in listed(client, task.workspace, "?kind=lightweight")
    assert task.pk in listed(client, task.workspace, "?kind=all")
    assert task.pk not in listed(client, task.workspace, "?kind=persistent")
    # and its result stays reachable: the card through the API, the artifact on the canvas
    response = client.get(reverse("card-detail", args=[task.workspace_id, card.pk]))
    assert response.status_code == 200 and response.json()["actions"] == ["iterate", "keep"]
    response = client.get(f"/api/v1/workspaces/{task.workspace_id}/artifacts/{artifact.pk}/")
    assert response.status_code == 200


def test_it_promotes_the_quick_task_on_the_third_iteration_keeping_its_history(access, planner, client_for, alice):
    # given a quick result
    task, first = quick_cat(access, planner)
    client = client_for(alice)

    # when alice iterates once: a new version of the same artifact, on the short path again
    main_message_post(access=access, text="Make it fluffier", task_id=task.pk)
    settle(access, task)
    task.refresh_from_db()
    assert task.kind == TaskKind.LIGHTWEIGHT and task.status == TaskStatus.DONE
    assert Turn.objects.filter(task=task).count() == 2 and Step.objects.filter(turn__task=task).count() == 2
    assert len(planner.requests) == 2
    second = GenerationJob.objects.filter(task_id=task.pk).exclude(pk=first.pk).get()
    assert second.artifact_id == first.artifact_id and second.artifact_version.number == 2
    assert "fluffier" in second.prompt
    assert Order.objects.filter(task_id=task.pk, status=OrderStatus.CAPTURED).count() == 2
    old, new = Card.objects.filter(task=task).order_by("pk")
    assert (old.status, new.status) == (CardStatus.CANCELLED, CardStatus.OPEN)
    assert new.payload["artifacts"][0] == {**new.payload["artifacts"][0], "artifact": first.artifact_id, "version": 2}
    assert task.pk not in listed(client, task.workspace)

    # when she iterates a second time
    main_message_post(access=access, text="Now add a party hat", task_id=task.pk)

    # then the same task is persistent, listed, with its whole history
    task.refresh_from_db()
    assert task.kind == TaskKind.PERSISTENT
    assert Task.objects.filter(workspace=task.workspace).count() == 1
    assert task.pk in listed(client, task.workspace)
    texts = list(InboxMessage.objects.filter(task=task).order_by("pk").values_list("text", flat=True))
    assert texts == [GINGER_CAT, "Make it fluffier", "Now add a party hat"]
    assert Turn.objects.filter(task=task).count() == 3  # the two short turns, and the one now queued
    # and its next turn plans like any persistent task, on the result already made: a third version
    settle(access, task)
    task.refresh_from_db()
    assert task.status == TaskStatus.DONE
    last = GenerationJob.objects.filter(task_id=task.pk).order_by("pk").last()
    assert last.artifact_id == first.artifact_id and last.artifact_version.number == 3
    assert Artifact.objects.filter(workspace=task.workspace).count() == 1
    assert task.pk in listed(client, task.workspace)


def test_it_iterates_and_keeps_through_the_result_card(access, planner, client_for, alice):
    # given a quick result and its card
    task, first = quick_cat(access, planner)
    card = Card.objects.get(task=task, kind=CardKind.RESULT)

    # when alice iterates on the card without saying what to change, nothing happens
    client = client_for(alice)
    url = reverse("card-actions", args=[task.workspace_id, card.pk])
    response = client.post(url, {"action": "iterate"}, format="json")
    assert_error(response, 400, "text_required")
    # when she says it: the change reaches the task, which makes a new version on its short path
    response = client.post(url, {"action": "iterate", "text": "warmer light"}, format="json")
    assert response.status_code == 200, response.content
    settle(access, task)
    task.refresh_from_db()
    assert task.kind == TaskKind.LIGHTWEIGHT and task.status == TaskStatus.DONE
    assert GenerationJob.objects.filter(task_id=task.pk).count() == 2
    assert "warmer light" in GenerationJob.objects.filter(task_id=task.pk).order_by("pk").last().prompt

    # when she keeps the new result as a task
    card = Card.objects.get(task=task, kind=CardKind.RESULT, status=CardStatus.OPEN)
    keep = reverse("card-actions", args=[task.workspace_id, card.pk])
    response = client.post(keep, {"action": "keep"}, format="json")

    # then it is persistent and listed, with nothing new run
    assert response.status_code == 200, response.content
    task.refresh_from_db()
    assert task.kind == TaskKind.PERSISTENT
    assert task.pk in listed(client, task.workspace)
    assert Turn.objects.filter(task=task).count() == 2
    # and keeping it twice is refused like any resolved card
    assert_error(client.post(keep, {"action": "keep"}, format="json"), 409, "card_resolved")


def test_it_holds_a_change_sent_while_the_result_is_made_until_it_lands(access, planner):
    # given a quick request whose image is being made
    message = main_message_post(access=access, text=GINGER_CAT)
    task = message.task
    run_queued_turns()
    task.refresh_from_db()
    assert (task.status, task.waiting_for["type"]) == (TaskStatus.WAITING, "jobs")
    [first] = GenerationJob.objects.filter(task_id=task.pk)

    # when alice asks for a change before it lands, and the watchdog sweeps
    main_message_post(access=access, text="Make it fluffier", task_id=task.pk)
    watchdog_sweep()

    # then no turn starts for it meanwhile: the change waits for the result (no second copy of the first image)
    assert not Turn.objects.filter(task=task, status=TurnStatus.QUEUED).exists()
    assert GenerationJob.objects.filter(task_id=task.pk).count() == 1

    # when the image lands, the result card opens and the change is made on it: a new version of the same artifact
    settle(access, task)
    task.refresh_from_db()
    first.refresh_from_db()
    assert task.status == TaskStatus.DONE and task.kind == TaskKind.LIGHTWEIGHT
    second = GenerationJob.objects.filter(task_id=task.pk).exclude(pk=first.pk).get()
    assert first.artifact_id is not None
    assert (second.artifact_id, second.artifact_version.number) == (first.artifact_id, 2)
    assert "fluffier" in second.prompt
    assert [t.steps.count() for t in Turn.objects.filter(task=task).order_by("number")] == [1, 1]
    assert len(planner.requests) == 2
    assert Order.objects.filter(task_id=task.pk, status=OrderStatus.CAPTURED).count() == 2
    assert Card.objects.filter(task=task, kind=CardKind.RESULT, status=CardStatus.OPEN).count() == 1


def test_it_runs_one_call_of_a_model_that_proposes_more(access, script, workspace):
    # given a hosted model that answers a quick request with a plan, two images and a question
    model = script(
        [
            says(
                "Here is my plan",
                ("update_checklist", {"items": [{"title": "Cat"}, {"title": "Another cat"}]}),
                ("generate_image", {"prompt": "a ginger cat"}),
                ("generate_image", {"prompt": "another ginger cat"}),
                ("ask_user", {"question": "Happy?"}),
            )
        ]
    )
    message = main_message_post(access=access, text=GINGER_CAT)
    task = message.task

    # when its turn runs
    settle(access, task)

    # then one model call, one call run (the first generation, on the task's one item), the rest recorded as dropped
    task.refresh_from_db()
    assert len(model.requests) == 1
    assert {tool.name for tool in model.requests[0].tools} <= set(SHORT_TOOLS)
    assert model.requests[0].messages[0] == {"role": "system", "content": SHORT_RULES}
    [step] = Step.objects.filter(turn__task=task)
    [call] = ToolCall.objects.filter(step=step)
    assert (call.name, call.input) == ("generate_image", {"prompt": "a ginger cat", "checklist_position": 1})
    assert [d["name"] for d in step.decision["dropped"]] == ["update_checklist", "generate_image", "ask_user"]
    assert GenerationJob.objects.filter(task_id=task.pk).count() == 1
    assert Order.objects.filter(task_id=task.pk).count() == 1
    assert ChecklistItem.objects.filter(task=task).count() == 1
    assert task.status == TaskStatus.DONE
    assert Card.objects.get(task=task).kind == CardKind.RESULT


def test_it_cards_a_result_made_at_once(access, script):
    # given a hosted model that writes the tagline a quick request asks for as a document
    model = script([says("Here it is", ("write_document", {"title": "Tagline", "content": "Steeped in calm."}))])

    # when the request runs
    task = main_message_post(access=access, text="Write a tagline for my tea shop").task
    settle(access, task)

    # then one step made the document, the item is done and the result card names it, with nothing charged
    task.refresh_from_db()
    assert len(model.requests) == 1
    assert (task.kind, task.status) == (TaskKind.LIGHTWEIGHT, TaskStatus.DONE)
    document = Artifact.objects.get(workspace=task.workspace, kind="document")
    [item] = ChecklistItem.objects.filter(task=task)
    assert item.status == ChecklistStatus.DONE and item.artifacts[-1]["artifact"] == document.pk
    [card] = Card.objects.filter(task=task)
    assert card.kind == CardKind.RESULT
    assert card.payload["artifacts"] == [
        {"artifact": document.pk, "version": 1, "kind": "document", "title": "Tagline"}
    ]
    assert not Order.objects.filter(task_id=task.pk).exists()


def test_it_keeps_the_confirmation_rules_on_the_short_path(access, planner, workspace, alice):
    # given a workspace that confirms every paid step
    SpendPolicy.objects.update_or_create(
        workspace=workspace, defaults={"no_confirm_threshold": 0, "daily_no_confirm_cap": 0}
    )

    # when alice asks for one image
    message = main_message_post(access=access, text=GINGER_CAT)
    task = message.task
    run_queued_turns()

    # then nothing is charged or generated before a person approves the quote
    task.refresh_from_db()
    assert (task.status, task.waiting_for["type"]) == (TaskStatus.WAITING, "approval")
    assert not GenerationJob.objects.filter(task_id=task.pk).exists()
    assert not Order.objects.filter(task_id=task.pk).exists()
    [quote] = Card.objects.filter(task=task)
    assert quote.kind == CardKind.QUOTE

    # when she approves it, the task makes its result on its short path: one job, one capture, the result card
    settle(access, task, approve=True)
    task.refresh_from_db()
    assert task.status == TaskStatus.DONE
    assert GenerationJob.objects.filter(task_id=task.pk).count() == 1
    [order] = Order.objects.filter(task_id=task.pk)
    assert order.status == OrderStatus.CAPTURED
    # the documented minimum with a confirmation: one short step before the approval, one after it
    assert [t.steps.count() for t in Turn.objects.filter(task=task).order_by("number")] == [1, 1]
    assert len(planner.requests) == 2
    assert Card.objects.filter(task=task, kind=CardKind.RESULT, status=CardStatus.OPEN).count() == 1


def test_a_change_approved_after_its_quote_makes_the_next_version_not_a_copy(access, planner, workspace, alice):
    # given a quick result made, in a workspace that confirms every paid step
    SpendPolicy.objects.update_or_create(
        workspace=workspace, defaults={"no_confirm_threshold": 0, "daily_no_confirm_cap": 0}
    )
    task = main_message_post(access=access, text=GINGER_CAT).task
    settle(access, task, approve=True)
    [first] = GenerationJob.objects.filter(task_id=task.pk)

    # when alice asks for a change, and approves its quote
    main_message_post(access=access, text="Make the cat fluffier", task_id=task.pk)
    settle(access, task, approve=True)

    # then the step after the approval ran the call she approved: the next version of the same artifact
    second = GenerationJob.objects.filter(task_id=task.pk).exclude(pk=first.pk).get()
    assert (second.artifact_id, second.base_version) == (first.artifact_id, 1)
    assert "fluffier" in second.prompt
    assert Artifact.objects.filter(workspace=workspace, kind="image").count() == 1
    assert Artifact.objects.get(pk=first.artifact_id).versions.count() == 2


# --- the scripted planner's one step, in other words and in French ------------------------------------------------

SHORT = list(SHORT_TOOLS)


def _one(brief, *, language="en", item=None, messages=None):
    """The scripted planner's answer to a short step of a quick task with this brief (and, once made, its item)."""
    item = item or {"position": 1, "title": "Quick", "status": "pending", "artifacts": []}
    state = {
        "task": {"id": 3, "title": item["title"], "brief": brief, "language": language, "kind": "lightweight"},
        "checklist": [item],
        "new_messages": [{"id": n, "text": t} for n, t in enumerate(messages or [brief], 1)],
        "last_results": [],
        "step_index": 1,
        "tools": SHORT,
        "mode": "one_result",
    }
    request = ModelRequest(model=MODEL_NAME, params={}, messages=[], tools=[], state=state)
    return [(c.name, c.arguments) for c in ScriptedPlanner().complete(request).tool_calls]


@pytest.mark.parametrize(
    ("brief", "language", "tool"),
    [
        ("Generate an image of a ginger cat", "en", "generate_image"),
        ("could you draw me a logo for my bakery", "en", "generate_image"),
        ("Génère une image de chat roux", "fr", "generate_image"),
        ("Dessine-moi une affiche pour la fête du village", "fr", "generate_image"),
        ("a 5 second clip of waves at sunset", "en", "generate_video"),
        ("Fais une petite animation d'un chat qui dort", "fr", "generate_video"),
        ("a 3D figurine of a fox", "en", "generate_3d"),
        # no noun names the kind: the verb of depicting does
        ("Could you sketch a lighthouse at dusk for our café menu?", "en", "generate_image"),
        ("Paint me the old harbour at sunrise", "en", "generate_image"),
        ("Peux-tu dessiner un phare au crépuscule pour notre carte ?", "fr", "generate_image"),
        ("Peins-moi le vieux port au lever du soleil", "fr", "generate_image"),
        # a noun still decides over the verb
        ("Draw a storyboard for our spring teaser", "en", "write_document"),
    ],
)
def test_it_makes_one_call_for_one_result(brief, language, tool):
    [(name, arguments)] = _one(brief, language=language)
    assert name == tool
    assert arguments["checklist_position"] == 1
    assert brief.lower().rstrip(".") in arguments["prompt"].lower()


@pytest.mark.parametrize(
    ("change", "language"), [("Make it fluffier", "en"), ("Rends-le plus doux", "fr"), ("a bit warmer please", "en")]
)
def test_it_makes_a_new_version_of_the_result_for_a_change(change, language):
    made = {"position": 1, "title": "Ginger cat", "status": "done", "artifacts": [{"job": 4, "artifact": 42}]}
    [(name, arguments)] = _one("Generate an image of a ginger cat", language=language, item=made, messages=[change])
    assert (name, arguments["artifact_id"], arguments["checklist_position"]) == ("generate_image", 42, 1)
    assert change in arguments["prompt"]


def test_it_animates_the_result_it_made_when_asked():
    made = {"position": 1, "title": "Ginger cat", "status": "done", "artifacts": [{"job": 4, "artifact": 42}]}
    [(name, arguments)] = _one("Generate an image of a ginger cat", item=made, messages=["Now animate it"])
    assert (name, arguments["source_artifact_id"]) == ("generate_video", 42)
    assert "artifact_id" not in arguments


@pytest.mark.parametrize("thanks", ["Thanks, perfect!", "merci, c'est parfait"])
def test_it_makes_nothing_for_thanks(thanks):
    made = {"position": 1, "title": "Ginger cat", "status": "done", "artifacts": [{"job": 4, "artifact": 42}]}
    assert _one("Generate an image of a ginger cat", item=made, messages=[thanks]) == []


def test_it_says_why_it_makes_nothing_for_prose():
    assert _one("Write a tagline for my tea shop") == []


def test_a_change_kept_on_the_result_survives_a_step_that_no_longer_sees_it(access, planner):
    # given a quick result made, and the person's change to it
    task, job = quick_cat(access, planner)
    main_message_post(access=access, text="Make it  fluffier", task_id=task.pk)

    # then the change is kept on the task's one item until a result answers it
    item = ChecklistItem.objects.get(task=task)
    assert item.evidence == "Revision requested: Make it fluffier"

    # and a step that does not see the message (its turn was interrupted: an approval, a killed worker's review)
    # still makes the next version of the result, not a copy
    made = {
        "position": 1,
        "title": "Ginger cat",
        "status": "done",
        "artifacts": item.artifacts,
        "evidence": item.evidence,
    }
    [(name, arguments)] = _one(GINGER_CAT, item=made)
    assert (name, arguments["artifact_id"]) == ("generate_image", job.artifact_id)
    assert "fluffier" in arguments["prompt"]

    # and once that version is made, the item says so instead
    settle(access, task)
    item.refresh_from_db()
    assert not item.evidence.startswith("Revision requested")


def test_thanks_is_no_change_to_keep(access, planner):
    task, _ = quick_cat(access, planner)
    before = ChecklistItem.objects.get(task=task).evidence
    main_message_post(access=access, text="Thanks!", task_id=task.pk)
    assert ChecklistItem.objects.get(task=task).evidence == before


class Killed(BaseException):
    """The worker process died here: nothing after it runs, as a SIGKILL leaves the database."""


@pytest.mark.postgres
def test_a_change_whose_worker_died_before_submitting_is_made_without_asking_anyone(
    access, planner, settings, monkeypatch
):
    # given a quick result made, and a change whose worker dies once the money is held, before the job exists
    task, first = quick_cat(access, planner)
    main_message_post(access=access, text="Make it  fluffier", task_id=task.pk)
    turn = Turn.objects.get(task=task, status=TurnStatus.QUEUED)

    def dies(**kwargs):
        raise Killed()

    with monkeypatch.context() as patched:
        patched.setattr("agents.tools.generation.job_submit", dies)
        with pytest.raises(Killed):
            turn_run(turn_id=turn.pk, generation=turn.generation)

    # when a new worker takes over: no job under the call's id proves nothing was submitted (DESIGN §11)
    later = timezone.now() + timedelta(seconds=settings.LOMOTE_LEASE_SECONDS + 1)
    assert watchdog_sweep(now=later).taken_over == [turn.pk]
    assert turn_run(turn_id=turn.pk, generation=turn.generation + 1) == "suspended"
    settle(access, task)

    # then the call ran again under its own id, and the change is made once, as the next version of the same artifact
    assert not Card.objects.filter(task=task).exclude(kind=CardKind.RESULT).exists()
    [second] = GenerationJob.objects.filter(task_id=task.pk).exclude(pk=first.pk)
    assert second.idempotency_key.startswith(f"{turn.pk}:")
    assert (second.artifact_id, second.base_version) == (first.artifact_id, 1)
    assert "fluffier" in second.prompt
    assert Artifact.objects.get(pk=first.artifact_id).versions.count() == 2
    assert wallet_reconcile(task.workspace_id)[0]
    task.refresh_from_db()
    assert task.kind == TaskKind.LIGHTWEIGHT
