"""A new person's ordinary requests for work, on the embedded default, through REST and the real runtime (issue 32).

The kind of work, its format, how many and the subject are read by meaning (lomote/understanding): the scripted
planner plans one item per piece, asks the image tool for the format the kind takes, and the procedural provider
really renders each image (its jobs run as a worker would) with the subject as its headline. What is asserted is
what was persisted: checklist items, the tool calls, the artifacts' files and their recorded meta.
"""

import io
import re

import pytest
from PIL import Image

from agents.models import Card, ChecklistItem, Task, TaskStatus, ToolCall, Turn, TurnStatus
from agents.runtime.loop import turn_run
from agents.services.card_actions import card_act
from billing.services.approvals import approval_grant
from billing.services.wallets import wallet_topup
from tests.support.queued import run_queued, run_wakeups
from workspace.models import Artifact, GenerationJob, JobStatus
from workspace.selectors import workspace_access

pytestmark = [pytest.mark.django_db(transaction=True)]

# Words of the request that must never be a headline: its verbs, politeness, count, the kind of work itself.
REQUEST_WORDS = {
    "en": {"could", "you", "make", "me", "three", "instagram", "posts", "announcing", "our", "poster", "of", "3"},
    "fr": {"peux", "tu", "créer", "trois", "visuels", "carrés", "pour", "instagram", "nos", "affiche", "sur", "3"},
}


@pytest.fixture
def access(workspace, alice, no_enqueue, settings):
    settings.LOMOTE_DEFAULT_GENERATION_PROVIDER = "procedural"
    access = workspace_access(principal=alice, workspace_id=workspace.pk)
    wallet_topup(access=access, amount=5000)
    return access


def run_queued_turns():
    while turn := Turn.objects.filter(status=TurnStatus.QUEUED).order_by("pk").first():
        turn_run(turn_id=turn.pk, generation=turn.generation)


def settle(access, task):
    """Run the task until it rests: approve the spending it asks for, let the workers render its jobs."""
    for _ in range(12):
        run_queued_turns()
        task.refresh_from_db()
        if task.status == TaskStatus.WAITING and task.waiting_for.get("type") == "approval":
            approval_grant(access=access, task_id=task.pk, budget=task.waiting_for["amount"])
            continue
        if not GenerationJob.objects.exclude(status__in=[JobStatus.SUCCEEDED, JobStatus.FAILED]).exists():
            return
        run_queued("workspace.tasks.generation_work")
        run_wakeups()
    raise AssertionError("the task did not come to rest")


def create(client, workspace, brief, language) -> Task:
    response = client.post(
        f"/api/v1/workspaces/{workspace.pk}/tasks/",
        {"title": brief[:60], "brief": brief, "language": language},
        format="json",
    )
    assert response.status_code == 201, response.content
    return Task.objects.get(pk=response.json()["id"])


def images(task) -> list[tuple[Image.Image, dict]]:
    """Each finished item's image, opened from its stored file, with the meta its renderer recorded."""
    found = []
    for item in ChecklistItem.objects.filter(task=task).order_by("position"):
        artifact = Artifact.objects.get(pk=item.artifacts[-1]["artifact"])
        version = artifact.versions.order_by("-number").first()
        with version.file.open("rb") as handle:
            found.append((Image.open(io.BytesIO(handle.read())), version.meta))
    return found


@pytest.mark.parametrize(
    ("language", "brief", "subject"),
    [
        ("en", "Could you make me three Instagram posts announcing our winter pottery classes?", "winter pottery"),
        ("fr", "Peux-tu créer trois visuels carrés pour Instagram pour nos cours de poterie d'hiver ?", "poterie"),
    ],
)
def test_it_makes_three_square_posts_whose_headline_is_the_subject(
    access, client_for, alice, workspace, language, brief, subject
):
    # given a new person's request through REST, in their own words
    task = create(client_for(alice), workspace, brief, language)
    # when the runtime plans it and the embedded provider renders it
    settle(access, task)
    # then three items were planned and made, each asked as a square image titled by the subject
    task.refresh_from_db()
    assert task.status == TaskStatus.DONE
    items = list(ChecklistItem.objects.filter(task=task).order_by("position"))
    assert [i.status for i in items] == ["done"] * 3
    calls = ToolCall.objects.filter(turn__task=task, name="generate_image").order_by("pk")
    assert {c.input["checklist_position"] for c in calls} == {1, 2, 3}
    assert {c.input["format"] for c in calls} == {"square"}
    made = images(task)
    assert len(made) == 3
    for image, meta in made:
        assert image.size[0] == image.size[1] == meta["width"] == meta["height"]
        headline = meta["title"]
        assert subject in headline.casefold()
        words = set(re.findall(r"\w+", headline.casefold()))
        assert not words & REQUEST_WORDS[language], headline
        assert "poster" not in headline.casefold() and not re.search(r"\d", headline)


@pytest.mark.parametrize(
    ("language", "brief", "subject", "wide"),
    [
        ("de", "Erstelle bitte zwei Banner für unser Sommerfest am See", "sommerfest", True),
        ("es", "¿Puedes hacer dos portadas de historia para el mercado de Navidad?", "mercado de navidad", False),
    ],
)
def test_it_makes_banners_wide_and_story_covers_tall_in_other_languages(
    access, client_for, alice, workspace, language, brief, subject, wide
):
    task = create(client_for(alice), workspace, brief, language)
    settle(access, task)
    task.refresh_from_db()
    assert task.status == TaskStatus.DONE
    made = images(task)
    assert len(made) == 2
    for image, meta in made:
        width, height = image.size
        assert (width > height) if wide else (height * 9 == width * 16), image.size
        assert subject in meta["title"].casefold()


def test_it_keeps_a_name_with_an_ampersand_as_the_headline(access, client_for, alice, workspace):
    task = create(client_for(alice), workspace, "A logo for my ceramics studio called Terre & Feu", "en")
    settle(access, task)
    [(image, meta)] = images(task)
    assert meta["title"] == "Terre & Feu" and image.size[0] == image.size[1]


def test_it_says_plainly_that_it_cannot_make_music_and_offers_what_it_can(access, client_for, alice, workspace):
    # given a request for work no tool makes
    task = create(client_for(alice), workspace, "Can you write us a theme tune for the shop's podcast?", "en")
    run_queued_turns()
    # then the planner says so in plain words on a card, calls no generation tool and plans nothing
    task.refresh_from_db()
    assert not ChecklistItem.objects.filter(task=task).exists()
    assert not ToolCall.objects.filter(turn__task=task, name__startswith="generate_").exists()
    [card] = Card.objects.filter(task=task)
    assert "cannot make that" in card.title + card.body and "music" in card.title + card.body
    assert task.status == TaskStatus.WAITING and task.waiting_for["card"] == card.pk
    # and offers the three nearest kinds it makes
    labels = [o["label"] for o in card.options]
    assert len(labels) == 3 and all(label.startswith(("A ", "An ")) for label in labels), labels

    # when the person chooses one, it is planned and made
    chosen = next(o for o in card.options if o["label"] in ("An image", "A video", "A poster", "A social post"))
    card_act(access=access, card_id=card.pk, action="choose", option=chosen["id"])
    settle(access, task)
    [item] = ChecklistItem.objects.filter(task=task)
    assert item.status == "done"


def test_it_asks_on_a_card_with_the_likely_kinds_when_it_cannot_tell_what_to_make(access, client_for, alice, workspace):
    task = create(client_for(alice), workspace, "Help me with my business", "en")
    run_queued_turns()
    [card] = Card.objects.filter(task=task)
    options = [o["label"] for o in card.options]
    assert len(options) >= 2 and all(o.startswith(("A ", "An ")) for o in options), card.options
    assert not ToolCall.objects.filter(turn__task=task, name__startswith="generate_").exists()

    # when the person chooses a kind of image on the card
    image_kinds = {"A logo": "logo", "A banner": "wide", "A social post": "square", "A poster": "portrait"}
    chosen = next(o for o in card.options if o["label"] in image_kinds)
    card_act(access=access, card_id=card.pk, action="choose", option=chosen["id"])
    settle(access, task)

    # then that kind is planned and made, in its format
    [item] = ChecklistItem.objects.filter(task=task)
    assert item.title.startswith(chosen["label"].split(" ", 1)[1].capitalize()) and item.status == "done"
    [call] = ToolCall.objects.filter(turn__task=task, name="generate_image")
    assert call.input["format"] == image_kinds[chosen["label"]]
