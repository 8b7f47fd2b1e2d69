"""Main and the Router (issue 5 items 1-3, DESIGN §2): the routing matrix, on persisted facts.

Explicit targets never call the Router (a spy counts its calls); semantic routing reads a bounded index whose
prompt does not grow with the number of tasks; near-duplicates and ambiguity ask instead of guessing; targets
that no longer take messages are reported and nothing runs. Search-heavy cases run on PostgreSQL.
"""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from agents.exceptions import ModelError
from agents.language import language_detect
from agents.main.messages import main_card_act, main_clarification_apply, main_message_post, task_promote
from agents.models import (
    Card,
    CardKind,
    CardStatus,
    InboxMessage,
    MainMessage,
    ProviderKind,
    Route,
    Task,
    TaskEmbedding,
    TaskKind,
    TaskStatus,
    Turn,
)
from agents.providers import registry
from agents.providers.base import ModelResponse, ToolCallIntent, Usage
from agents.scripted.router import ScriptedRouter
from agents.services import task_index
from agents.services.card_actions import card_act
from agents.services.tasks import task_cancel, task_create
from lomote.kernel.exceptions import Conflict, InvalidInput, NotFound, PermissionDenied
from tests.support.factories import CardFactory, ModelProfileFactory
from tests.support.rest import events_of
from workspace.models import Artifact, ArtifactKind, Role
from workspace.selectors import workspace_access
from workspace.services.workspaces import workspace_create

pytestmark = pytest.mark.django_db

POSTERS_LATER = "make the posters from the other day warmer and move the text"


# --- helpers ----------------------------------------------------------------------------------------------


class RouterSpy:
    """The Router's provider, watched: every request is kept; answers come from `inner` (scripted by default)."""

    def __init__(self, inner=None):
        self.inner = inner or ScriptedRouter()
        self.requests = []

    def complete(self, request):
        self.requests.append(request)
        return self.inner.complete(request)


class Says:
    """A Router model that always answers the same thing (a tool call, or a raised error)."""

    def __init__(self, arguments=None, *, error=None, text=""):
        self.arguments, self.error, self.text = arguments, error, text

    def complete(self, request):
        if self.error is not None:
            raise self.error
        calls = [] if self.arguments is None else [ToolCallIntent("r1", "route_message", self.arguments)]
        return ModelResponse(text=self.text, tool_calls=calls, usage=Usage(), model="fake-router-1")


@pytest.fixture
def router(monkeypatch):
    """Install a spy as the Router's provider for every workspace; `router.inner` may be replaced."""
    spy = RouterSpy()
    monkeypatch.setattr("agents.main.router.router_provider", lambda *, workspace_id: (spy, "spy", {}))
    return spy


@pytest.fixture
def access(workspace, bob, no_enqueue):
    """Bob, an editor of the shared workspace."""
    return workspace_access(principal=bob, workspace_id=workspace.pk)


def _task(access, title, brief, **fields) -> Task:
    """A task made through the service (first inbox message, turn 1 queued), then given extra fields."""
    kind = fields.pop("kind", TaskKind.PERSISTENT)
    task = task_create(access=access, title=title, brief=brief, kind=kind)
    if fields:
        Task.objects.filter(pk=task.pk).update(**fields)
        task.refresh_from_db()
    return task


def _artifacts(task: Task, *titles: str) -> list[Artifact]:
    return [
        Artifact.objects.create(
            workspace_id=task.workspace_id,
            kind=ArtifactKind.IMAGE,
            title=t,
            current_version=1,
            created_by_task_id=task.pk,
        )
        for t in titles
    ]


MEDIA = [
    "logo", "video teaser", "storyboard", "menu", "banner", "flyer", "mascot", "3D figurine", "podcast cover",
    "newsletter", "landing page copy", "sticker pack", "icon set", "packaging mockup", "t-shirt print",
    "album cover", "book cover", "invitation", "infographic", "slide deck",
]  # fmt: skip
SUBJECTS = [
    "coffee shop", "bakery", "yoga studio", "bike repair", "jazz night", "tea house", "bookstore", "surf school",
    "florist", "dental clinic",
]  # fmt: skip
STYLES = ["minimal", "warm autumn", "neon", "watercolour", "brutalist"]


def _many_tasks(workspace, user, count: int, *, start_days_ago: float = 0) -> list[Task]:
    """`count` tasks with varied titles (none about posters), bulk-created, indexed, most recent first.

    Some share words with the poster message ("warm", "text") so the right answer is not just any match.
    """
    combos = [(m, s, st) for st in STYLES for s in SUBJECTS for m in MEDIA]
    tasks = [
        Task(
            workspace=workspace,
            created_by=user,
            title=f"{style.capitalize()} {medium} for the {subject}",
            brief=f"Make a {style} {medium} for the {subject}, with the opening hours as text.",
            summary=f"{medium.capitalize()} drafts for the {subject}.",
            status=[TaskStatus.IDLE, TaskStatus.DONE, TaskStatus.WAITING][i % 3],
        )
        for i, (medium, subject, style) in enumerate(combos[:count])
    ]
    created = Task.objects.bulk_create(tasks)
    now = timezone.now()
    for i, task in enumerate(created):
        Task.objects.filter(pk=task.pk).update(updated_at=now - timedelta(days=start_days_ago, minutes=i))
    task_index.task_embeddings_backfill(workspace_id=workspace.pk)
    return created


def _poster_task(access, *, days_ago: float = 3, **fields) -> Task:
    task = _task(
        access,
        "Retro brand posters",
        "Make a series of 3 retro brand posters",
        summary="Three retro posters for the brand: orange and teal palette, bold type, slogan at the bottom.",
        updated_at=timezone.now() - timedelta(days=days_ago),
        **fields,
    )
    _artifacts(task, "Retro poster 1", "Retro poster 2", "Retro poster 3")
    return task


def _inbox_texts(task: Task) -> list[str]:
    return list(InboxMessage.objects.filter(task=task).order_by("pk").values_list("text", flat=True))


# --- 1. explicit targets: no model call -------------------------------------------------------------------


def test_it_delivers_to_an_explicit_task_without_asking_the_router(access, router):
    # given a task and another one the message would match better by its words
    posters = _task(access, "Retro brand posters", "Make 3 retro posters")
    _task(access, "Cat video", "Turn the cat photo into a video, warmer")

    # when bob replies inside the poster task's panel
    message = main_message_post(access=access, text="warmer, and the cat too", task_id=posters.pk)

    # then it is in that task's inbox, routed directly, and the Router model was never called
    assert router.requests == []
    assert (message.route, message.task_id, message.router_model, message.router_prompt_chars) == (
        Route.DIRECT,
        posters.pk,
        "",
        0,
    )
    assert _inbox_texts(posters)[-1] == "warmer, and the cat too"
    assert message.inbox_message.task_id == posters.pk
    [event] = events_of(posters.workspace_id, "main.message")
    assert event.data["route"] == "direct" and event.data["task"] == posters.pk and event.data["delivered"]


def test_it_delivers_a_card_answer_to_the_cards_task_without_asking_the_router(access, router):
    # given an open confirmation card of the poster task
    posters = _task(access, "Retro brand posters", "Make 3 retro posters")
    card = CardFactory(task=posters, kind=CardKind.CONFIRM, title="Use the orange palette?")

    # when bob answers the card from the main thread
    message = main_message_post(access=access, text="Yes, but a bit less saturated", card_id=card.pk)

    # then the task reads the answer, naming the card, with no model call
    assert router.requests == []
    assert (message.route, message.task_id, message.card_id) == (Route.DIRECT, posters.pk, card.pk)
    # and the cards service resolved the card with the person's answer, which the task reads
    card.refresh_from_db()
    assert card.status == CardStatus.RESOLVED and card.resolution["text"] == "Yes, but a bit less saturated"
    assert message.inbox_message.task_id == posters.pk
    assert (
        "Yes, but a bit less saturated" in message.inbox_message.text
        and f"card {card.pk}" in message.inbox_message.text
    )


def test_it_tells_the_person_when_the_card_is_closed(access, router):
    # given a card that was already resolved
    posters = _task(access, "Retro brand posters", "Make 3 retro posters")
    card = CardFactory(task=posters, kind=CardKind.CHOICE, title="A or B?", status=CardStatus.RESOLVED)
    before = InboxMessage.objects.count()

    # when bob answers it anyway
    message = main_message_post(access=access, text="B", card_id=card.pk)

    # then he is told, and nothing reaches the task
    assert (message.refusal, message.inbox_message) == ("card_closed", None)
    assert "resolved" in message.reply
    assert InboxMessage.objects.count() == before and router.requests == []


def test_it_delivers_an_artifact_request_to_the_task_that_made_it(access, router):
    # given two tasks, the second one made the poster image
    _task(access, "Cat video", "Turn the cat photo into a video")
    posters = _task(access, "Brand work", "Make 3 retro posters")
    [poster] = _artifacts(posters, "Retro poster 2")

    # when bob asks for a change on that artifact
    message = main_message_post(access=access, text="Move the text to the top", artifact_id=poster.pk)

    # then the task that made it gets the request, told which artifact it is about, with no model call
    assert router.requests == []
    assert (message.route, message.task_id) == (Route.DIRECT, posters.pk)
    last = _inbox_texts(posters)[-1]
    assert last.startswith("Move the text to the top") and f"artifact #{poster.pk}" in last


def test_it_tells_the_person_when_the_artifact_was_deleted(access, router):
    # given a poster artifact its task made, since deleted
    posters = _task(access, "Brand work", "Make 3 retro posters")
    [poster] = _artifacts(posters, "Retro poster 2")
    Artifact.objects.filter(pk=poster.pk).update(deleted_at=timezone.now())
    before = (InboxMessage.objects.count(), Turn.objects.count())

    # when bob asks for a change on it
    message = main_message_post(access=access, text="Make it warmer", artifact_id=poster.pk)

    # then he is told it is gone, and nothing runs
    assert (message.route, message.refusal, message.inbox_message) == (Route.DIRECT, "artifact_deleted", None)
    assert "deleted" in message.reply
    assert (InboxMessage.objects.count(), Turn.objects.count()) == before
    assert router.requests == []


@pytest.mark.parametrize("target", ["task_id", "artifact_id", "card_id"])
def test_it_treats_a_target_from_another_workspace_as_not_found(access, router, dave, target):
    # given dave's own workspace with a task, an artifact it made and a card
    other = workspace_create(user=dave, name="Dave's")
    theirs = _task(workspace_access(principal=dave, workspace_id=other.pk), "Secret", "Dave's secret plan")
    [artifact] = _artifacts(theirs, "Secret poster")
    card = CardFactory(workspace=other, task=theirs, kind=CardKind.CONFIRM, title="Go?")
    ids = {"task_id": theirs.pk, "artifact_id": artifact.pk, "card_id": card.pk}
    before = (MainMessage.objects.count(), InboxMessage.objects.count())

    # when bob names it in his workspace, then it does not exist for him and nothing is written
    with pytest.raises(NotFound):
        main_message_post(access=access, text="hello", **{target: ids[target]})
    assert (MainMessage.objects.count(), InboxMessage.objects.count()) == before
    assert router.requests == []


def test_it_lets_only_editors_post(workspace, carol, router, no_enqueue):
    # given carol, a viewer; when she posts, then it is refused before anything happens
    with pytest.raises(PermissionDenied):
        main_message_post(access=workspace_access(principal=carol, workspace_id=workspace.pk), text="Make a poster")
    assert MainMessage.objects.count() == 0 and router.requests == []


def test_it_refuses_an_empty_message_and_two_targets(access, router):
    # given a task; when the text is blank, or two targets are named, then it is invalid and nothing is written
    task = _task(access, "Posters", "Make posters")
    with pytest.raises(InvalidInput):
        main_message_post(access=access, text="   ")
    with pytest.raises(InvalidInput):
        main_message_post(access=access, text="hi", task_id=task.pk, card_id=1)
    assert MainMessage.objects.count() == 0


# --- 2. semantic routing ----------------------------------------------------------------------------------


@pytest.mark.postgres
def test_it_finds_the_follow_up_among_200_tasks(access, router, workspace, bob):
    # given the poster task from three days ago, and 199 more recent tasks with varied titles
    posters = _poster_task(access, days_ago=3)
    _many_tasks(workspace, bob, 199)
    recent = list(Task.objects.filter(workspace=workspace).order_by("-updated_at")[:12].values_list("pk", flat=True))
    assert posters.pk not in recent  # only search can bring it into the index
    tasks_before = Task.objects.count()

    # when bob comes back to it from the main thread
    message = main_message_post(access=access, text=POSTERS_LATER)

    # then the Router, shown a bounded index that contains it, sends the message to the poster task
    [request] = router.requests
    assert len(request.state["index"]) <= task_index.RECENT_K + task_index.CANDIDATES_M
    shown = {entry["id"]: entry for entry in request.state["index"]}
    assert posters.pk in shown and "recent" not in shown[posters.pk]["found_by"]
    assert (message.route, message.task_id) == (Route.FOLLOW_UP, posters.pk)
    assert _inbox_texts(posters)[-1] == POSTERS_LATER
    assert Task.objects.count() == tasks_before
    assert message.router_model == "lomote-scripted-router-3" and message.router_prompt_chars > 0
    assert message.candidates[0]["task"] == posters.pk


def test_it_starts_a_new_task_or_a_lightweight_one_by_what_is_asked(access, router):
    # when bob asks for a series, for one image, and to turn a photo into a video
    series = main_message_post(access=access, text="Make a series of 3 retro brand posters")
    one = main_message_post(access=access, text="Generate an image of a ginger cat")
    video = main_message_post(access=access, text="also turn yesterday's cat photo into a 5-second video")

    # then the series and the transformation are persistent tasks and the single image a lightweight one
    assert (series.route, series.task.kind) == (Route.NEW_TASK, TaskKind.PERSISTENT)
    assert (one.route, one.task.kind) == (Route.LIGHTWEIGHT, TaskKind.LIGHTWEIGHT)
    assert (video.route, video.task.kind) == (Route.NEW_TASK, TaskKind.PERSISTENT)
    # and each task's brief is the person's own words, first in its inbox
    assert _inbox_texts(series.task) == ["Make a series of 3 retro brand posters"]
    assert len({series.task_id, one.task_id, video.task_id}) == 3


def test_it_answers_a_question_without_creating_anything(access, router):
    # given a poster task
    posters = _task(access, "Retro brand posters", "Make 3 retro posters")

    # when bob asks a question, and then asks how the posters are going
    question = main_message_post(access=access, text="What resolutions does the video model support?")
    status = main_message_post(access=access, text="How are the posters going?")

    # then Main answers both itself: nothing is created or delivered
    assert (question.route, question.task, question.inbox_message) == (Route.ANSWER, None, None)
    assert question.reply
    assert status.route == Route.ANSWER and "Retro brand posters" in status.reply
    assert Task.objects.count() == 1 and _inbox_texts(posters) == ["Make 3 retro posters"]


# --- 3. duplicates and ambiguity --------------------------------------------------------------------------


def test_it_sends_a_near_duplicate_request_to_the_existing_task(access, router):
    # given the poster series in progress
    posters = _task(access, "Retro brand posters", "Make a series of 3 retro brand posters")
    tasks_before = Task.objects.count()

    # when bob asks for nearly the same thing again
    message = main_message_post(access=access, text="Make a series of three retro brand posters")

    # then the Router was asked twice (the second time with the close in-progress tasks) and no task was created
    assert [r.state["phase"] for r in router.requests] == ["route", "duplicates"]
    assert [d["id"] for d in router.requests[1].state["duplicates"]] == [posters.pk]
    assert Task.objects.count() == tasks_before
    assert (message.route, message.task_id) == (Route.FOLLOW_UP, posters.pk)
    assert message.candidates[0]["task"] == posters.pk and message.candidates[0]["similarity"] >= 0.8


def test_it_asks_when_two_in_progress_tasks_are_equally_close(access, router):
    # given two identical poster series in progress (the person started both)
    first = _task(access, "Retro brand posters", "Make a series of 3 retro brand posters")
    second = _task(access, "Retro brand posters", "Make a series of 3 retro brand posters")

    # when bob asks for that series once more
    message = main_message_post(access=access, text="Make a series of 3 retro brand posters")

    # then he is asked which one (or a new task) and nothing is created or delivered
    assert message.route == Route.CLARIFY and Task.objects.count() == 2
    assert {o["id"] for o in message.card.options} == {f"task:{first.pk}", f"task:{second.pk}", "new_task"}
    assert _inbox_texts(first) == _inbox_texts(second) == ["Make a series of 3 retro brand posters"]


def test_it_creates_a_distinct_request_even_when_a_similar_topic_is_in_progress(access, router):
    # given a poster series in progress
    _task(access, "Retro brand posters", "Make a series of 3 retro brand posters")

    # when bob asks for something else entirely
    message = main_message_post(access=access, text="Make a series of 4 watercolour landscapes for the bakery")

    # then a second task is created without a duplicate round
    assert message.route == Route.NEW_TASK and Task.objects.count() == 2
    assert [r.state["phase"] for r in router.requests] == ["route"]


def test_it_asks_with_a_clarification_card_when_two_tasks_fit(access, router):
    # given two poster series, each with its posters
    acme = _task(access, "Retro poster series for Acme", "Make 3 retro posters for Acme", kind=TaskKind.PERSISTENT)
    zest = _task(access, "Retro poster series for Zest", "Make 3 retro posters for Zest", kind=TaskKind.PERSISTENT)
    _artifacts(acme, "Acme poster 1")
    _artifacts(zest, "Zest poster 1")
    inbox_before = InboxMessage.objects.count()

    # when bob says "the poster series from last time", naming neither
    message = main_message_post(access=access, text="Change the poster series from last time: warmer colours")

    # then a clarification card offers both and a new task; nothing is delivered or created
    card = message.card
    assert message.route == Route.CLARIFY and card.kind == CardKind.CLARIFY and card.status == CardStatus.OPEN
    assert [o["id"] for o in card.options][-1] == "new_task"
    assert {o["id"] for o in card.options[:-1]} == {f"task:{acme.pk}", f"task:{zest.pk}"}
    assert card.payload["text"] == message.text and card.payload["message"] == message.pk
    assert InboxMessage.objects.count() == inbox_before and Task.objects.count() == 2
    assert events_of(card.workspace_id, "card.opened")[-1].data == {
        "card": card.pk,
        "task": None,
        "kind": "clarify",
        "status": "open",
        "title": card.title,
        "source": "router",
    }

    # when bob picks Zest on the card
    routed = main_clarification_apply(access=access, card_id=card.pk, option_id=f"task:{zest.pk}")

    # then the original message reaches Zest, once: a second click is refused
    assert (routed.route, routed.task_id, routed.card_id) == (Route.DIRECT, zest.pk, card.pk)
    assert _inbox_texts(zest)[-1] == message.text
    card.refresh_from_db()
    assert card.status == CardStatus.RESOLVED
    assert (card.resolution["action"], card.resolution["option"]) == ("choose", f"task:{zest.pk}")
    with pytest.raises(Conflict):
        main_clarification_apply(access=access, card_id=card.pk, option_id=f"task:{acme.pk}")
    assert _inbox_texts(acme) == ["Make 3 retro posters for Acme"]


def test_it_starts_a_new_task_when_the_person_chooses_so_on_the_card(access, router):
    # given a clarification card
    _task(access, "Retro poster series for Acme", "Make 3 retro posters for Acme")
    _task(access, "Retro poster series for Zest", "Make 3 retro posters for Zest")
    asked = main_message_post(access=access, text="Change the poster series from last time")
    assert asked.route == Route.CLARIFY

    # when bob answers the card with the "new task" option, as a message naming the card
    routed = main_message_post(access=access, text="new_task", card_id=asked.card_id)

    # then a persistent task starts from his original words
    assert routed.route == Route.NEW_TASK and routed.task.kind == TaskKind.PERSISTENT
    assert routed.task.brief == "Change the poster series from last time"
    assert Task.objects.count() == 3


def test_it_routes_the_original_message_when_the_card_action_chooses_a_task(access, router):
    # given a clarification card between two poster series
    acme = _task(access, "Retro poster series for Acme", "Make 3 retro posters for Acme")
    _task(access, "Retro poster series for Zest", "Make 3 retro posters for Zest")
    asked = main_message_post(access=access, text="Change the poster series from last time")

    # when bob chooses Acme through the card action (Main answers its clarification cards)
    card = main_card_act(access=access, card_id=asked.card_id, action="choose", option=f"task:{acme.pk}")

    # then the card is resolved, his original words reach Acme, and Main records where they went
    assert card.status == CardStatus.RESOLVED and card.resolution["option"] == f"task:{acme.pk}"
    assert _inbox_texts(acme)[-1] == "Change the poster series from last time"
    routed = MainMessage.objects.filter(card=card).exclude(pk=asked.pk).get()
    assert (routed.route, routed.task_id) == (Route.DIRECT, acme.pk)


def test_the_cards_service_leaves_the_routers_clarification_cards_to_main(access, router):
    # given a clarification card between two poster series
    _task(access, "Retro poster series for Acme", "Make 3 retro posters for Acme")
    _task(access, "Retro poster series for Zest", "Make 3 retro posters for Zest")
    asked = main_message_post(access=access, text="Change the poster series from last time")
    option = Card.objects.get(pk=asked.card_id).options[0]["id"]

    # when something acts on it through the cards service instead of Main
    with pytest.raises(InvalidInput) as refused:
        card_act(access=access, card_id=asked.card_id, action="choose", option=option)

    # then it is refused and nothing moved: the card is open and the message went nowhere
    assert refused.value.code == "invalid_action"
    assert Card.objects.get(pk=asked.card_id).status == CardStatus.OPEN
    assert MainMessage.objects.count() == 1


# --- 4. pre-execution validation -------------------------------------------------------------------------


@pytest.mark.postgres
def test_it_tells_the_person_when_the_task_they_mean_is_archived(access, router, workspace, bob):
    # given the poster task, finished and archived, among 30 others
    posters = _poster_task(access, days_ago=10, status=TaskStatus.DONE, archived_at=timezone.now())
    _many_tasks(workspace, bob, 30)
    before = (InboxMessage.objects.filter(task=posters).count(), Turn.objects.filter(task=posters).count())

    # when bob comes back to the posters
    message = main_message_post(access=access, text=POSTERS_LATER)

    # then the Router finds it, and he is told it is archived; nothing is delivered or started
    assert (message.route, message.task_id, message.refusal) == (Route.FOLLOW_UP, posters.pk, "task_archived")
    assert "archived" in message.reply and message.inbox_message is None
    assert (InboxMessage.objects.filter(task=posters).count(), Turn.objects.filter(task=posters).count()) == before
    posters.refresh_from_db()
    assert posters.status == TaskStatus.DONE


def test_it_tells_the_person_when_an_explicit_task_is_archived_or_cancelled(access, router):
    # given an archived task and a cancelled one
    archived = _task(access, "Old posters", "Make posters", status=TaskStatus.DONE, archived_at=timezone.now())
    cancelled = _task(access, "Cat video", "Animate the cat")
    task_cancel(access=access, task_id=cancelled.pk)
    before = InboxMessage.objects.count()

    # when bob writes to each directly
    to_archived = main_message_post(access=access, text="One more please", task_id=archived.pk)
    to_cancelled = main_message_post(access=access, text="Continue", task_id=cancelled.pk)

    # then each answer says why, and nothing is delivered
    assert (to_archived.refusal, to_cancelled.refusal) == ("task_archived", "task_cancelled")
    assert "Old posters" in to_archived.reply and "cancelled" in to_cancelled.reply
    assert InboxMessage.objects.count() == before and router.requests == []


# --- the Router's model: interface, validation, bounded prompt ---------------------------------------------


def test_it_asks_the_workspaces_default_model_through_the_provider_interface(access, workspace):
    # given a default profile of the replay kind, answered by a fake model through the registry
    ModelProfileFactory(workspace=workspace, name="fake", provider=ProviderKind.REPLAY, model="m", is_default=True)
    fake = RouterSpy(Says({"route": "new_task", "title": "Retro poster series"}))

    # when bob posts a French request
    with registry.override(ProviderKind.REPLAY, fake):
        message = main_message_post(access=access, text="Fais une série de trois affiches rétro pour la marque")

    # then the model got the route_message tool, and the task keeps bob's language, not the model's English
    [request] = fake.requests
    assert [tool.name for tool in request.tools] == ["route_message"]
    assert request.messages[-1]["content"].endswith("Fais une série de trois affiches rétro pour la marque")
    assert (message.route, message.router_model) == (Route.NEW_TASK, "fake-router-1")
    assert (message.task.title, message.task.language, message.language) == ("Retro poster series", "fr", "fr")
    assert message.task.brief == "Fais une série de trois affiches rétro pour la marque"


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param(Says({"route": "delete_everything"}), id="unknown-route"),
        pytest.param(Says({"route": "follow_up"}), id="follow-up-without-task"),
        pytest.param(Says({"route": "follow_up", "task": "old-posters"}), id="label-not-offered"),
        pytest.param(Says({"route": "follow_up", "task": 999999}), id="an-id-for-a-label"),
        pytest.param(Says({"route": "answer", "reply": "ok", "sudo": True}), id="extra-field"),
        pytest.param(Says({"route": "clarify", "candidates": ["x"]}), id="wrong-type"),
        pytest.param(Says(None, text="I think it is the posters"), id="no-tool-call"),
        pytest.param(Says(None, text="{not json"), id="broken-json"),
        pytest.param(Says(error=ModelError("down", retryable=True)), id="provider-error"),
    ],
)
def test_it_turns_an_unusable_router_answer_into_a_clarification(access, router, answer):
    # given a task, and a Router model that answers badly
    posters = _task(access, "Retro brand posters", "Make 3 retro posters")
    router.inner = answer

    # when bob posts without a target
    message = main_message_post(access=access, text="the posters, warmer")

    # then he is asked (the index's likeliest task offered), nothing crashes, nothing runs
    assert message.route == Route.CLARIFY
    assert [o["id"] for o in message.card.options] == [f"task:{posters.pk}", "new_task"]
    assert _inbox_texts(posters) == ["Make 3 retro posters"] and Task.objects.count() == 1


def test_it_does_not_let_the_router_reach_a_task_of_another_workspace(access, router, dave):
    # given dave's workspace with a task, and a Router that names it (by the label it would have, or its id)
    other = workspace_create(user=dave, name="Dave's")
    theirs = _task(workspace_access(principal=dave, workspace_id=other.pk), "Secret", "Dave's plan")
    router.inner = Says({"route": "follow_up", "task": task_index.task_label(theirs.title)})

    # when bob posts, then the decision is unusable and he is asked; dave's task gets nothing
    message = main_message_post(access=access, text="continue the plan")
    assert message.route == Route.CLARIFY
    assert _inbox_texts(theirs) == ["Dave's plan"]


@pytest.mark.postgres
def test_it_keeps_the_router_prompt_the_same_size_at_10_and_1000_tasks(router, make_user, no_enqueue, settings):
    # given two workspaces, one with 10 tasks and one with 1,000 (five jazz night flyers among them), and no
    # look-ups: what is measured is the index the Router reads (look-ups have their own bound, see
    # test_router_lookups.py)
    settings.LOMOTE_ROUTER_MAX_LOOKUPS = 0
    sizes, queries = {}, {}
    for count in (10, 1000):
        owner = make_user(f"owner{count}")
        workspace = workspace_create(user=owner, name=f"{count} tasks")
        access = workspace_access(principal=owner, workspace_id=workspace.pk)
        _many_tasks(workspace, owner, count)

        # when the same message is routed in each
        with CaptureQueriesContext(connection) as captured:
            index = task_index.task_index_get(workspace_id=workspace.pk, text="make the jazz night flyer warmer")
        message = main_message_post(access=access, text="make the jazz night flyer warmer")
        sizes[count], queries[count] = message.router_prompt_chars, len(captured)
        assert len(index.entries) <= task_index.RECENT_K + task_index.CANDIDATES_M

    # then the prompt is the same order of size, and building the index costs a fixed number of queries
    # (10: recent tasks, word frequencies, two keyword searches, their tasks still alive, the embedding endpoint
    # lookup, the semantic scan, the entries, and two for artifact references; with 10 tasks every task is
    # recent, nothing is left to check)
    assert sizes[1000] < 1.5 * sizes[10], sizes
    assert queries[10] <= queries[1000] == 10, queries


def test_it_scores_tasks_by_meaning_from_one_read(workspace, bob, no_enqueue):
    # given 300 tasks, indexed
    _many_tasks(workspace, bob, 300)

    # when the semantic search runs
    with CaptureQueriesContext(connection) as captured:
        found = task_index.task_search_similar(workspace_id=workspace.pk, text="warm autumn bakery flyer", limit=5)

    # then one read listed the tasks with their rows' text hashes (after the embedding endpoint lookup), the
    # vectors came from search's cache (the backfill put them there), nothing was embedded again or written,
    # and numpy ranked them: five back, the best ones first
    reads = [q["sql"] for q in captured if '"workspace_embedding"' in q["sql"]]
    assert len(captured) == 2 and len(reads) == 1 and reads[0].lstrip().upper().startswith("SELECT")
    assert len(found) == 5 and [s for _, s in found] == sorted((s for _, s in found), reverse=True)
    best = Task.objects.get(pk=found[0][0])
    assert best.title == "Warm autumn flyer for the bakery"


def test_it_keeps_a_tasks_search_row_current(access):
    # given a task (its row written when it was created)
    task = _task(access, "Retro brand posters", "Make 3 retro posters")
    row = TaskEmbedding.objects.get(task=task)
    assert "retro brand posters" in row.document and len(row.vector) == task_index.DIMENSIONS

    # when only its status changes, then the row is not rewritten
    task.status = TaskStatus.WAITING
    task.save(update_fields=["status", "updated_at"])
    assert TaskEmbedding.objects.get(task=task).updated_at == row.updated_at

    # when its summary changes, then the row follows
    task.summary = "Orange and teal, bold type"
    task.save(update_fields=["summary", "updated_at"])
    assert "orange and teal" in TaskEmbedding.objects.get(task=task).document


def test_it_searches_by_keyword_including_artifact_titles(access):
    # given a task whose own words never say "poster", but whose artifacts do
    task = _task(access, "Brand work", "Three images for the launch")
    _artifacts(task, "Launch poster A")
    _task(access, "Cat video", "Animate the cat")

    # when searching for posters, then that task is found
    found = task_index.task_search_keyword(workspace_id=task.workspace_id, text="the posters")
    assert [task_id for task_id, _ in found] == [task.pk]


# --- language and promotion -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("Make a series of 3 retro brand posters", "en"),
        ("La série d'affiches de l'autre fois, un peu plus chaude.", "fr"),
        ("Haz una serie de carteles retro para la marca", "es"),
        ("Erstelle eine Serie von Retro-Plakaten für die Marke", "de"),
        ("Genera un'immagine di un gatto rosso", "it"),
        ("Faça uma série de cartazes retrô da marca", "pt"),
        ("ok", "en"),
        ("1920x1080", "en"),
    ],
)
def test_it_detects_the_language_of_the_persons_wording(text, language):
    assert language_detect(text) == language


def test_it_creates_the_task_in_the_language_of_the_persons_words(access, router):
    # when bob asks in French, then the task, its brief and the record keep French
    message = main_message_post(access=access, text="Fais une série de trois affiches rétro pour la marque")
    assert message.route == Route.NEW_TASK
    assert (message.language, message.task.language) == ("fr", "fr")
    assert message.task.brief == "Fais une série de trois affiches rétro pour la marque"


def test_it_promotes_a_lightweight_task_when_the_person_keeps_iterating(access, router):
    # given a lightweight task for one image
    first = main_message_post(access=access, text="Generate an image of a ginger cat")
    task = first.task
    assert task.kind == TaskKind.LIGHTWEIGHT

    # when bob follows up once, then it stays lightweight
    main_message_post(access=access, text="Make it fluffier", task_id=task.pk)
    task.refresh_from_db()
    assert task.kind == TaskKind.LIGHTWEIGHT

    # when he follows up a second time
    main_message_post(access=access, text="Now add a party hat", task_id=task.pk)

    # then the same task is persistent, with its whole history
    task.refresh_from_db()
    assert task.kind == TaskKind.PERSISTENT
    assert _inbox_texts(task) == ["Generate an image of a ginger cat", "Make it fluffier", "Now add a party hat"]
    assert Task.objects.count() == 1
    [promoted] = events_of(task.workspace_id, "task.promoted")
    assert promoted.data["task"] == task.pk
    # and promoting again changes nothing
    assert task_promote(access=access, task_id=task.pk).kind == TaskKind.PERSISTENT
    assert len(events_of(task.workspace_id, "task.promoted")) == 1


def test_it_records_every_routed_message_as_an_event(access, router):
    # when bob sends three messages that route three ways
    posters = _task(access, "Retro brand posters", "Make 3 retro posters")
    direct = main_message_post(access=access, text="warmer", task_id=posters.pk)
    answer = main_message_post(access=access, text="What can you do?")
    created = main_message_post(access=access, text="Generate an image of a ginger cat")

    # then each has its "main.message" event with route, task and candidates
    events = events_of(posters.workspace_id, "main.message")
    assert [(e.data["message"], e.data["route"], e.data["task"]) for e in events] == [
        (direct.pk, "direct", posters.pk),
        (answer.pk, "answer", None),
        (created.pk, "lightweight", created.task_id),
    ]
    assert all(isinstance(e.data["candidates"], list) for e in events)


def test_it_marks_messages_sent_with_an_api_key(workspace, router, no_enqueue):
    # given an editor API key of the workspace
    from tests.support.rest import issue_api_key
    from workspace.authentication import ApiKeyPrincipal

    key, _ = issue_api_key(workspace, role=Role.EDITOR)
    access = workspace_access(principal=ApiKeyPrincipal(key), workspace_id=workspace.pk)

    # when a message comes through it, then it is an API request, and so is its inbox message
    message = main_message_post(access=access, text="Make a series of 3 retro brand posters")
    assert message.api_request is True
    assert message.inbox_message.source == "api_key"


@pytest.mark.parametrize(
    "text, language",
    [
        ("Donne vie à ma photo de chat", "fr"),
        ("Anime la photo du chat", "fr"),
        ("Ajoute deux affiches", "fr"),
        ("Animate the photo of my cat", "en"),
        ("Añade dos carteles", "es"),
        ("Aggiungi due poster", "it"),
    ],
)
def test_short_requests_are_told_by_their_verbs(text, language):
    from agents.language import content_terms, language_detect, stem, words

    assert language_detect(text) == language
    # the verb that tells the language still counts for search: it is not a stop word
    assert stem(words(text)[0]) in content_terms(text)
