"""Text work (a description, an email, a slogan…) on the embedded default and with a real model (issue 10, item 6).

The scripted planner cannot write prose. It must say so at once on a card — what it needs (a model profile), how
to set one, what it can do meanwhile (a skeleton document) — instead of stopping with no word. With a model
profile set, the same request yields a document artifact written by the model.
"""

import pytest

from agents.models import (
    Card,
    CardKind,
    CardStatus,
    ChecklistItem,
    ChecklistStatus,
    ModelProfile,
    ProviderKind,
    Step,
    Task,
    TaskStatus,
)
from agents.runtime.loop import turn_run
from agents.scripted.planner import MODEL_NAME
from agents.services.card_actions import card_act
from agents.services.metrics import stalls_list
from agents.services.tasks import task_create
from tests.support import runtime as rt
from tests.support.cards import access_of, queued_turn, run_queued
from tests.support.fake_openai import FakeOpenAIServer, completion
from workspace.models import Artifact, ArtifactKind

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("local_model_servers")]

TEA = "Write a short product description for our new tea"


@pytest.fixture
def owner(workspace, alice):
    return access_of(alice, workspace)


def _task(owner, brief: str, language: str = "en") -> Task:
    return task_create(access=owner, title=brief[:60], brief=brief, language=language)


def _option(card: Card, label_word: str) -> str:
    return next(o["id"] for o in card.options if label_word in o["label"].lower())


def test_it_says_at_once_on_a_card_what_writing_needs_instead_of_stopping_silently(owner, no_enqueue):
    # given a task asking for prose on the embedded default (no model profile)
    task = _task(owner, TEA)
    # when its first turn runs
    outcome = run_queued(task)
    # then the turn ends on a choice card saying what is needed, how to set it, and what can be done meanwhile
    assert outcome == "suspended"
    task.refresh_from_db()
    card = Card.objects.get(task=task, status=CardStatus.OPEN)
    assert (task.status, task.waiting_for["card"]) == (TaskStatus.WAITING, card.pk)
    assert card.kind == CardKind.CHOICE
    text = card.body or card.title
    assert "model profile" in text and "manage.py model_profile" in text and "skeleton" in text
    assert "“Document — new tea”" in text
    assert [o["label"] for o in card.options] == ["Create a skeleton document", "I'll set a model profile"]
    # and nothing was written pretending to be the text, and no stall was left for the person to notice
    assert not Artifact.objects.filter(workspace=task.workspace).exists()
    assert ChecklistItem.objects.get(task=task).status == ChecklistStatus.PENDING
    assert stalls_list(workspace_id=task.workspace_id) == []


def test_it_asks_in_french_for_a_french_task(owner, no_enqueue):
    # given a French request for a slogan
    task = _task(owner, "Rédige un slogan pour notre nouveau café", language="fr")
    # when its first turn runs
    run_queued(task)
    # then the card speaks French and offers the same two ways forward
    card = Card.objects.get(task=task, status=CardStatus.OPEN)
    text = card.body or card.title
    assert "profil de modèle" in text and "squelette" in text and "pas un modèle de langage" in text
    assert [o["label"] for o in card.options] == ["Créer un document squelette", "Je configure un profil de modèle"]


def test_it_creates_a_skeleton_document_titled_from_the_request_when_the_person_chooses_it(owner, no_enqueue):
    # given the prose card
    task = _task(owner, TEA)
    run_queued(task)
    card = Card.objects.get(task=task, status=CardStatus.OPEN)
    # when the person chooses the skeleton
    card_act(access=owner, card_id=card.pk, action="choose", option=_option(card, "skeleton"))
    outcome = run_queued(task)
    # then a real document exists, made through write_document: titled from the request, the brief, headings
    document = Artifact.objects.get(workspace=task.workspace, kind=ArtifactKind.DOCUMENT)
    assert document.title == "Document — new tea"
    content = document.versions.get(number=1).content
    assert content.startswith("# Document — new tea\n")
    assert TEA in content and "## Headline" in content and "## Call to action" in content
    assert "no text was written" in content
    # and the item says honestly that the text itself was not written; the task is finished, with no stall
    item = ChecklistItem.objects.get(task=task)
    assert item.status == ChecklistStatus.SKIPPED and f"Skeleton document {document.pk} created" in item.evidence
    task.refresh_from_db()
    assert (outcome, task.status) == ("done", TaskStatus.DONE)
    assert stalls_list(workspace_id=task.workspace_id) == []


def test_it_waits_for_the_profile_then_the_model_writes_the_text(owner, workspace, no_enqueue):
    # given the prose card, and the person saying they will set a model profile
    task = _task(owner, TEA)
    run_queued(task)
    card = Card.objects.get(task=task, status=CardStatus.OPEN)
    card_act(access=owner, card_id=card.pk, action="choose", option=_option(card, "profile"))
    run_queued(task)
    # then the task waits on a confirm card telling how to set it (no stall: a card is open)
    task.refresh_from_db()
    confirm = Card.objects.get(task=task, status=CardStatus.OPEN)
    assert confirm.kind == CardKind.CONFIRM and "manage.py model_profile" in (confirm.body or confirm.title)
    assert task.status == TaskStatus.WAITING and stalls_list(workspace_id=workspace.pk) == []

    with FakeOpenAIServer() as server:
        # when a model profile is set and the person confirms
        ModelProfile.objects.create(
            workspace=workspace, name="fake", provider=ProviderKind.OPENAI_COMPAT, model="fake-model-1",
            base_url=server.url, is_default=True,
        )  # fmt: skip
        text = "Meet Jade Mist: a bright green tea with notes of pear, grown on misty hillsides."
        server.reply(completion(content="Loading documents.", tool_calls=[("load_tools", {"domain": "documents"})]))
        server.reply(
            completion(
                content="Writing it.",
                tool_calls=[
                    ("write_document", {"title": "Jade Mist — product description", "content": text}),
                    ("update_checklist", {"updates": [{"position": 1, "status": "done", "evidence": "Written."}]}),
                ],
            )
        )
        server.reply(completion(content="Here is the description."))
        card_act(access=owner, card_id=confirm.pk, action="confirm")
        outcome = run_queued(task)

    # then that turn ran on the model, which wrote a real document holding the text, and the task is done
    turn = task.turns.order_by("-number").first()
    assert turn.model_lease.model == "fake-model-1"
    assert set(Step.objects.filter(turn=turn).values_list("model", flat=True)) == {"fake-model-1"}
    document = Artifact.objects.get(workspace=workspace, kind=ArtifactKind.DOCUMENT)
    assert document.versions.get(number=1).content == text
    task.refresh_from_db()
    assert (outcome, task.status) == ("done", TaskStatus.DONE)


def test_it_yields_a_document_artifact_with_a_model_profile_set(owner, workspace, no_enqueue):
    with FakeOpenAIServer() as server:
        # given a workspace whose default model is an OpenAI-compatible endpoint
        ModelProfile.objects.create(
            workspace=workspace, name="fake", provider=ProviderKind.OPENAI_COMPAT, model="fake-model-1",
            base_url=server.url, is_default=True,
        )  # fmt: skip
        text = "Jade Mist is a bright green tea with notes of pear."
        server.reply(
            completion(
                tool_calls=[
                    ("update_checklist", {"items": [{"title": "Product description for our new tea"}]}),
                    ("load_tools", {"domain": "documents"}),
                ]
            )
        )
        server.reply(
            completion(
                tool_calls=[
                    ("write_document", {"title": "New tea", "content": text, "checklist_position": 1}),
                    ("update_checklist", {"updates": [{"position": 1, "status": "done"}]}),
                ]
            )
        )
        server.reply(completion(content="Done: the description is in the document “New tea”."))
        # when the same request runs
        task = _task(owner, TEA)
        outcome = run_queued(task)
    # then the model's document exists with its text, and no card was needed
    document = Artifact.objects.get(workspace=workspace, kind=ArtifactKind.DOCUMENT)
    assert (document.title, document.versions.get(number=1).content) == ("New tea", text)
    assert document.created_by_task_id == task.pk
    assert outcome == "done" and not Card.objects.filter(task=task).exists()
    assert MODEL_NAME not in set(Step.objects.filter(turn__task=task).values_list("model", flat=True))


def test_it_does_not_ask_about_generation_work(task, no_enqueue):
    # given a poster series (the task fixture's brief) on the embedded default
    turn = rt.start_turn(task)
    # when its turn runs
    turn_run(turn_id=turn.pk, generation=1)
    # then it goes for the images (a quote card for the plan), not for a prose card
    card = Card.objects.get(task=task, status=CardStatus.OPEN)
    assert card.kind == CardKind.QUOTE
    assert queued_turn(task) is None
