"""The Router's task index on workspace search (issue 15 item 1): tasks found by meaning across languages, the
duplicate check, vectors that follow a task's text and a forget, and the profile's embedding endpoint."""

import json
import logging

import pytest

from agents.main.messages import main_message_post
from agents.models import InboxMessage, MainMessage, ModelProfile, ProviderKind, Task, TaskStatus
from agents.providers.base import ModelRequest
from agents.providers.openai_compat import OpenAICompatProvider
from agents.secrets import secret_put
from agents.services import task_index
from agents.services.card_actions import card_act
from agents.services.embedding_endpoint import embedding_endpoint
from agents.services.memory_forget import memory_forget_ask
from agents.services.tasks import task_create
from memory.models import EvidenceKind
from memory.services.evidence import evidence_record
from memory.services.extraction import evidence_extract
from tests.support.fake_embeddings import FakeEmbeddingServer
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.queued import run_queued
from workspace.models import Embedding, Event
from workspace.search import offline_embedder
from workspace.search.embedders import embedders_for
from workspace.search.query import text_hash
from workspace.selectors import workspace_access

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("local_model_servers")]

SECRET = "sk-test-embeddings-9f8e7d6c5b4a"  # noqa: S105 - a test key, asserted never to leak
POSTERS = ("Retro posters for the coffee shop", "Three retro posters for Café Lumen, orange and teal")
OTHERS = [
    ("Quarterly sales report", "A document with the figures of the third quarter"),
    ("Cat video", "Animate the photo of the cat into a 5-second clip"),
    ("Yoga studio logo", "A calm logo for the Lotus yoga studio"),
    ("Jazz night flyer", "A flyer for Friday's jazz night at the bar"),
]


@pytest.fixture
def access(workspace, bob, no_enqueue):
    return workspace_access(principal=bob, workspace_id=workspace.pk)


def _task(access, title, brief, **fields) -> Task:
    task = task_create(access=access, title=title, brief=brief)
    if fields:
        Task.objects.filter(pk=task.pk).update(**fields)
        task.refresh_from_db()
    return task


@pytest.fixture
def studio(access):
    """The poster task and four unrelated ones, all in English."""
    posters = _task(access, *POSTERS)
    others = [_task(access, title, brief) for title, brief in OTHERS]
    return posters, others


# --- semantic search over tasks ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["affiches rétro pour le café", "les affiches vintage du café", "I'd like vintage posters for my coffee shop"],
)
def test_it_finds_the_english_task_from_other_words_and_french(workspace, studio, text):
    posters, others = studio

    # when the Router's semantic search looks for the message
    found = task_index.task_search_similar(workspace_id=workspace.pk, text=text, limit=5)

    # then the poster task comes first, well above every unrelated task
    assert found[0][0] == posters.pk
    scores = dict(found)
    assert all(scores[posters.pk] > scores.get(other.pk, 0.0) + 0.2 for other in others)


def test_the_router_index_brings_an_older_task_back_by_meaning(workspace, access):
    # given the poster task from last week, and fourteen more recent ones about other things
    posters = _task(access, *POSTERS)
    Task.objects.filter(pk=posters.pk).update(updated_at=posters.updated_at.replace(year=2025))
    for n in range(14):
        title, brief = OTHERS[n % len(OTHERS)]
        _task(access, f"{title} {n}", brief)

    # when a French message comes in
    index = task_index.task_index_get(workspace_id=workspace.pk, text="Rends les affiches du café plus chaudes")

    # then search put it in the bounded index, found by meaning, with the highest similarity of all
    entry = index.get(posters.pk)
    assert entry is not None and "recent" not in entry.found_by and "vector" in entry.found_by
    assert entry.similarity == max(e.similarity for e in index.entries) and entry.similarity > 0.3
    assert len(index.entries) <= task_index.RECENT_K + task_index.CANDIDATES_M


def test_the_duplicate_check_finds_the_same_goal_in_other_words(workspace, studio, access):
    posters, others = studio
    # given a done task about the same posters (done work is not a duplicate to continue)
    done = _task(access, *POSTERS, status=TaskStatus.DONE)

    # when a new request states the goal again, in French
    duplicates = task_index.task_duplicates_find(
        workspace_id=workspace.pk, text="Fais-moi trois affiches rétro pour le café"
    )

    # then the in-progress poster task is flagged, and nothing else
    assert [task_id for task_id, _ in duplicates] == [posters.pk]
    assert done.pk not in dict(duplicates)
    assert task_index.task_duplicates_find(workspace_id=workspace.pk, text="Write our privacy policy") == []


def test_a_task_vectors_follow_its_text(workspace, access):
    # given the poster task indexed
    posters = _task(access, *POSTERS)
    task_index.task_search_similar(workspace_id=workspace.pk, text="posters")
    model = offline_embedder().model_id
    old = Embedding.objects.get(kind=task_index.TASK, object_id=posters.pk, model_id=model)

    # when its summary changes: the old vector goes with the save, the new one comes from a worker after it
    posters.summary = "Affiches livrées : orange et bleu canard"
    posters.save(update_fields=["summary", "updated_at"])
    assert not Embedding.objects.filter(kind=task_index.TASK, object_id=posters.pk).exists()
    run_queued("workspace.tasks.embeddings_follow_work")

    # then the new row is the new text's, with one vector per line (title, brief, summary)
    new = Embedding.objects.get(kind=task_index.TASK, object_id=posters.pk, model_id=model)
    assert new.text_hash != old.text_hash == text_hash("\n".join(POSTERS))
    assert new.text_hash == text_hash("\n".join([*POSTERS, "Affiches livrées : orange et bleu canard"]))
    assert len(bytes(new.vector)) == 3 * 512 * 4

    # and a status move does not touch it
    posters.status = TaskStatus.WAITING
    posters.save(update_fields=["status", "updated_at"])
    assert Embedding.objects.get(pk=new.pk).updated_at == new.updated_at


def test_a_forget_drops_the_vectors_made_from_it(workspace, alice, no_enqueue, django_capture_on_commit_callbacks):
    # given a task whose summary names what the person will ask to forget
    canary = "Zorblax-7731"
    task = Task.objects.create(
        workspace=workspace,
        title="Retro posters",
        brief="Make 3 retro posters",
        summary=f"Our mascot is {canary}. Three posters.",
        created_by=alice,
        status=TaskStatus.IDLE,
    )
    task_index.task_search_similar(workspace_id=workspace.pk, text="mascot")
    carried = text_hash(f"Retro posters\nMake 3 retro posters\nOur mascot is {canary}. Three posters.")
    assert Embedding.objects.filter(object_id=task.pk, kind=task_index.TASK, text_hash=carried).exists()
    message = InboxMessage.objects.create(
        task=task, author=alice, source="person", text=f"Our mascot is {canary}.", status="consumed"
    )
    evidence = evidence_record(
        workspace_id=workspace.pk,
        kind=EvidenceKind.TASK_MESSAGE,
        source_id=str(message.pk),
        text=message.text,
        stated_by_id=alice.pk,
        task_id=task.pk,
    )
    evidence_extract(evidence_id=evidence.pk)

    # when the person forgets it, on the card
    access = workspace_access(principal=alice, workspace_id=workspace.pk)
    with django_capture_on_commit_callbacks(execute=True):
        _, card = memory_forget_ask(access=access, evidence={"type": "task_message", "id": message.pk})
        card_act(access=access, card_id=card.pk, action="confirm")
    run_queued("workspace.tasks.embeddings_follow_work")

    # then no vector made from the text that carried it is left, and the task is searchable without it
    assert not Embedding.objects.filter(text_hash=carried).exists()
    assert Embedding.objects.get(object_id=task.pk, kind=task_index.TASK).text_hash == text_hash(
        "Retro posters\nMake 3 retro posters\nThree posters."
    )


# --- the profile's embedding endpoint ------------------------------------------------------------------------


def _embedding_profile(workspace, server, *, default=False) -> ModelProfile:
    return ModelProfile.objects.create(
        workspace=workspace,
        name="embeddings",
        provider=ProviderKind.OPENAI_COMPAT,
        model="chat-model-unused",
        base_url=server.url,
        params={"embedding_model": "fake-embed-1"},
        secret=secret_put(workspace_id=workspace.pk, name="embeddings-key", value=SECRET),
        is_default=default,
    )


def test_the_profile_embedding_model_serves_the_router_and_the_key_leaks_nowhere(workspace, access, caplog):
    with FakeEmbeddingServer() as server:
        # given a profile that sets an embedding model (the Router itself stays the scripted one)
        _embedding_profile(workspace, server)
        posters = _task(access, *POSTERS)
        for title, brief in OTHERS:
            _task(access, title, brief)
        assert embedding_endpoint(workspace.pk).model == "fake-embed-1"

        # when a message goes through Main and its Router
        with caplog.at_level(logging.DEBUG):
            message = main_message_post(access=access, text="Make the retro posters warmer")

        # then the endpoint embedded the message and the tasks, with the key, and the vectors are its own
        assert server.calls >= 2 and set(server.authorizations) == {f"Bearer {SECRET}"}
        assert "Make the retro posters warmer" in server.inputs
        models = set(Embedding.objects.filter(kind=task_index.TASK).values_list("model_id", flat=True))
        assert any(m.startswith("endpoint/fake-embed-1@127.0.0.1#") for m in models)
        assert message.candidates and message.candidates[0]["task"] == posters.pk

    # and the key is in no log record, event, main message or stored row
    assert all(SECRET not in record.getMessage() for record in caplog.records)
    stored = json.dumps(
        [
            list(Event.objects.filter(workspace=workspace).values_list("data", flat=True)),
            list(MainMessage.objects.values_list("text", "reply", "candidates")),
            list(Embedding.objects.values_list("model_id", "text_hash")),
        ],
        default=str,
    )
    assert SECRET not in stored


def test_a_failing_endpoint_falls_back_for_the_router(workspace, access, caplog):
    with FakeEmbeddingServer() as server:
        # given the profile's endpoint answering 500
        _embedding_profile(workspace, server)
        posters = _task(access, *POSTERS)
        server.fail(500)

        # when the Router searches in French
        with caplog.at_level(logging.INFO, logger="workspace.search"):
            found = task_index.task_search_similar(workspace_id=workspace.pk, text="affiches rétro pour le café")

        # then the offline model answered after one request, and the failure was logged without the key
        assert server.calls == 1 and found[0][0] == posters.pk
    failures = [r.getMessage() for r in caplog.records if "embedding endpoint failed" in r.getMessage()]
    assert failures and all(SECRET not in m for m in failures) and "InternalServerError" in failures[0]


def test_no_endpoint_without_an_embedding_model_or_with_an_unreadable_key(workspace, settings):
    # given an OpenAI-compatible profile without an embedding model: none
    ModelProfile.objects.create(
        workspace=workspace, name="chat", provider=ProviderKind.OPENAI_COMPAT, model="m", base_url="http://x/v1"
    )
    assert embedding_endpoint(workspace.pk) is None

    # and with one whose key the server can no longer decrypt, search still answers (offline)
    with FakeEmbeddingServer() as server:
        profile = _embedding_profile(workspace, server)
        settings.LOMOTE_SECRETS_KEYS = ["k9Xc3wQ2a0H1bYVq2cC4m5f8Lr7t6Pz0sJdNeRgUiOo="]
        assert [type(e).__name__ for e in embedders_for(workspace.pk)] == ["SentenceEncoder", "LexicalEmbedder"]
        assert server.calls == 0 and profile.pk


def test_the_chat_adapter_never_sends_the_embedding_model(workspace):
    with FakeOpenAIServer() as server:
        # given a chat lease whose profile also names an embedding model
        provider = OpenAICompatProvider(
            model="chat-1", base_url=server.url, params={"embedding_model": "fake-embed-1", "temperature": 0.2}
        )

        # when it calls the chat endpoint
        provider.complete(
            ModelRequest(model="chat-1", params={}, messages=[{"role": "user", "content": "hi"}], tools=[])
        )

        # then the request carries the chat parameters only
        [body] = server.bodies
        assert body["temperature"] == 0.2 and "embedding_model" not in body
