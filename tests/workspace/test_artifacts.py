"""Artifacts, immutable versions and optimistic concurrency (DESIGN §9; issue 6, minimal part)."""

import pytest
from django.core.files.base import ContentFile

from lomote.kernel import domain_events
from lomote.kernel.exceptions import Conflict, InvalidInput, NotFound
from tests.support.race import race
from workspace.domain_events import ARTIFACT_VERSION_ADDED
from workspace.flows.stale import flow_outputs_mark_stale
from workspace.models import Artifact, ArtifactKind, ArtifactVersion, Event
from workspace.selectors import artifact_get, artifact_search, artifact_version_get
from workspace.services.artifacts import artifact_create, artifact_version_add
from workspace.services.workspaces import workspace_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def elsewhere(dave):
    """A workspace of dave's, of which nobody in `workspace` is a member."""
    return workspace_create(user=dave, name="Elsewhere")


@pytest.fixture
def storyboard(workspace, alice):
    return artifact_create(
        workspace_id=workspace.pk,
        kind=ArtifactKind.DOCUMENT,
        title="Storyboard",
        description="Shots for the teaser",
        tags=["teaser", "Draft"],
        content="shot 1: the cat\nshot 2: the window",
        author_user=alice,
    )


def _state(artifact: Artifact) -> dict:
    artifact.refresh_from_db()
    return {
        "current_version": artifact.current_version,
        "updated_at": artifact.updated_at,
        "versions": list(artifact.versions.values_list("number", "content")),
        "events": list(Event.objects.filter(workspace_id=artifact.workspace_id).values_list("seq", "kind")),
    }


# --- create ------------------------------------------------------------------------------------------------


def test_it_creates_an_artifact_with_its_first_version_and_an_event(workspace, alice):
    # when
    artifact = artifact_create(
        workspace_id=workspace.pk,
        kind="document",
        title="  Brand guide  ",
        tags=[" retro ", "Retro", "", "warm"],
        content="# Brand guide",
        author_user=alice,
    )

    # then
    artifact.refresh_from_db()
    assert (artifact.title, artifact.tags, artifact.current_version) == ("Brand guide", ["retro", "warm"], 1)
    assert artifact.created_by == alice and artifact.created_by_task_id is None
    version = artifact.versions.get()
    assert (version.number, version.content, version.media_type) == (1, "# Brand guide", "text/markdown")
    assert version.author == {"type": "user", "id": alice.pk, "username": "alice"}
    event = Event.objects.filter(workspace=workspace).latest("seq")
    assert event.kind == "artifact.created"
    assert event.data == {
        "artifact": artifact.pk,
        "kind": "document",
        "title": "Brand guide",
        "version": 1,
        "author": {"type": "user", "id": alice.pk, "username": "alice"},
    }


def test_it_records_a_task_and_its_turn_as_author(workspace):
    # when
    artifact = artifact_create(
        workspace_id=workspace.pk, kind="flow", title="Teaser flow", content="{}", author_task_id=7, author_turn_id=9
    )

    # then
    assert artifact.created_by is None and artifact.created_by_task_id == 7
    assert artifact.versions.get().author == {"type": "task", "task": 7, "turn": 9}
    assert artifact.versions.get().media_type == "application/json"


@pytest.mark.parametrize(
    "changes",
    [
        {"kind": "spreadsheet"},
        {"title": ""},
        {"title": "   "},
        {"title": "x" * 301},
        {"tags": ["x" * 51]},
        {"tags": [f"tag{i}" for i in range(21)]},
        {"tags": [3]},
        {"content": 42},
    ],
)
def test_it_refuses_invalid_artifacts_and_writes_nothing(workspace, changes):
    # given
    events_before = Event.objects.count()
    arguments = {"workspace_id": workspace.pk, "kind": "document", "title": "Notes", **changes}

    # when / then
    with pytest.raises(InvalidInput):
        artifact_create(**arguments)
    assert not Artifact.objects.exists()
    assert Event.objects.count() == events_before


def test_it_stores_a_file_version_under_its_workspace_and_artifact(workspace, settings, tmp_path):
    # given
    settings.MEDIA_ROOT = tmp_path

    # when
    artifact = artifact_create(
        workspace_id=workspace.pk,
        kind="image",
        title="Poster 1",
        file=ContentFile(b"\x89PNG fake bytes", name="poster.png"),
        media_type="image/png",
        meta={"width": 1024, "height": 1536},
    )

    # then
    version = artifact.versions.get()
    assert version.file.name.startswith(f"artifacts/{workspace.pk}/{artifact.pk}/v1/poster")
    assert (tmp_path / version.file.name).read_bytes() == b"\x89PNG fake bytes"
    assert version.meta == {"width": 1024, "height": 1536, "bytes": 15}
    assert version.media_type == "image/png"


def test_it_keeps_versions_immutable(storyboard):
    # given
    version = storyboard.versions.get()

    # when / then
    version.content = "rewritten history"
    with pytest.raises(ValueError, match="immutable"):
        version.save()
    assert storyboard.versions.get().content.startswith("shot 1")


# --- versions and optimistic concurrency -------------------------------------------------------------------


def test_it_adds_the_next_version_on_the_current_one(workspace, bob, storyboard):
    # when
    version = artifact_version_add(
        workspace_id=workspace.pk, artifact_id=storyboard.pk, base_version=1, content="shot 1: the dog", author_user=bob
    )

    # then
    storyboard.refresh_from_db()
    assert storyboard.current_version == 2 and version.number == 2
    assert version.media_type == "text/markdown"  # inherited from the version it was based on
    assert list(storyboard.versions.values_list("number", flat=True)) == [1, 2]
    assert storyboard.versions.get(number=1).content.startswith("shot 1: the cat")
    event = Event.objects.filter(workspace=workspace).latest("seq")
    assert (event.kind, event.data["version"], event.data["base_version"]) == ("artifact.version_added", 2, 1)
    assert event.data["author"] == {"type": "user", "id": bob.pk, "username": "bob"}


def test_it_announces_a_new_version_but_not_a_new_artifact(workspace, bob, storyboard):
    # given a recorder of ARTIFACT_VERSION_ADDED, after the subscribers the app installed
    calls: list[dict] = []
    with domain_events.subscribed(ARTIFACT_VERSION_ADDED, lambda **data: calls.append(data)):
        # when an artifact is created, then gets a version
        created = artifact_create(workspace_id=workspace.pk, kind=ArtifactKind.DOCUMENT, title="Notes")
        artifact_version_add(
            workspace_id=workspace.pk, artifact_id=storyboard.pk, base_version=1, content="v2", author_user=bob
        )

    # then only the new version was announced, with its number; Flow outputs listen to it
    assert created.current_version == 1
    assert calls == [{"workspace_id": workspace.pk, "artifact_id": storyboard.pk, "version": 2}]
    assert flow_outputs_mark_stale in domain_events.subscribers(ARTIFACT_VERSION_ADDED)


def test_it_refuses_a_stale_write_and_changes_nothing(workspace, alice, bob, storyboard):
    # given: the agent read v1; the person saved v2 meanwhile
    artifact_version_add(
        workspace_id=workspace.pk, artifact_id=storyboard.pk, base_version=1, content="v2", author_user=alice
    )
    before = _state(storyboard)

    # when: the agent writes on v1
    with pytest.raises(Conflict) as refused:
        artifact_version_add(
            workspace_id=workspace.pk,
            artifact_id=storyboard.pk,
            base_version=1,
            content="agent on v1",
            author_task_id=3,
        )

    # then
    assert refused.value.code == "stale_version"
    assert refused.value.status == 409
    assert refused.value.details == {"current_version": 2, "base_version": 1}
    assert _state(storyboard) == before


def test_it_accepts_the_write_again_after_a_re_read(workspace, alice, storyboard):
    # given: figure 10 — the agent reads v1, the person saves v2, the agent's write on v1 is refused
    seen = artifact_version_get(workspace_id=workspace.pk, artifact_id=storyboard.pk).number
    artifact_version_add(
        workspace_id=workspace.pk, artifact_id=storyboard.pk, base_version=1, content="v2", author_user=alice
    )
    with pytest.raises(Conflict):
        artifact_version_add(workspace_id=workspace.pk, artifact_id=storyboard.pk, base_version=seen, content="x")

    # when: it re-reads and resubmits on the current version
    current = artifact_version_get(workspace_id=workspace.pk, artifact_id=storyboard.pk)
    version = artifact_version_add(
        workspace_id=workspace.pk,
        artifact_id=storyboard.pk,
        base_version=current.number,
        content=current.content + "\nshot 3",
        author_task_id=3,
        author_turn_id=4,
    )

    # then
    assert (seen, current.number, version.number) == (1, 2, 3)
    assert version.content == "v2\nshot 3"


def test_it_refuses_a_base_version_from_the_future(workspace, storyboard):
    # when / then
    with pytest.raises(Conflict) as refused:
        artifact_version_add(workspace_id=workspace.pk, artifact_id=storyboard.pk, base_version=5, content="x")
    assert refused.value.details["current_version"] == 1


def test_it_hides_another_workspaces_artifact_from_writes(workspace, elsewhere, storyboard):
    # when / then: the same error as for an id that does not exist
    with pytest.raises(NotFound) as foreign:
        artifact_version_add(workspace_id=elsewhere.pk, artifact_id=storyboard.pk, base_version=1, content="x")
    with pytest.raises(NotFound) as missing:
        artifact_version_add(workspace_id=elsewhere.pk, artifact_id=storyboard.pk + 1000, base_version=1, content="x")
    assert (foreign.value.code, foreign.value.message, foreign.value.details) == (
        missing.value.code,
        missing.value.message,
        missing.value.details,
    )
    assert storyboard.versions.count() == 1


def test_it_refuses_writes_to_a_deleted_artifact(workspace, storyboard):
    # given
    Artifact.objects.filter(pk=storyboard.pk).update(deleted_at="2026-01-01T00:00:00Z")

    # when / then
    with pytest.raises(NotFound):
        artifact_version_add(workspace_id=workspace.pk, artifact_id=storyboard.pk, base_version=1, content="x")


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_it_lets_exactly_one_of_two_concurrent_writers_on_the_same_base_win(workspace, storyboard):
    # given: two writers, each on its own connection, both based on v1
    names = ("person", "agent")

    def write(name: str) -> str:
        try:
            artifact_version_add(workspace_id=workspace.pk, artifact_id=storyboard.pk, base_version=1, content=name)
        except Conflict as exc:
            return exc.code
        return "won"

    # when
    outcomes = dict(zip(names, race([lambda name=name: write(name) for name in names]), strict=True))

    # then
    assert sorted(outcomes.values()) == ["stale_version", "won"]
    winner = next(name for name, outcome in outcomes.items() if outcome == "won")
    storyboard.refresh_from_db()
    assert storyboard.current_version == 2
    assert list(storyboard.versions.values_list("number", "content")) == [
        (1, storyboard.versions.get(number=1).content),
        (2, winner),
    ]
    assert Event.objects.filter(workspace=workspace, kind="artifact.version_added").count() == 1


# --- selectors ---------------------------------------------------------------------------------------------


def test_it_gets_an_artifact_only_in_its_workspace(workspace, elsewhere, storyboard):
    # when / then
    assert artifact_get(workspace_id=workspace.pk, artifact_id=storyboard.pk) == storyboard
    with pytest.raises(NotFound):
        artifact_get(workspace_id=elsewhere.pk, artifact_id=storyboard.pk)


def test_it_treats_a_deleted_artifact_as_not_found(workspace, storyboard):
    # given
    Artifact.objects.filter(pk=storyboard.pk).update(deleted_at="2026-01-01T00:00:00Z")

    # when / then
    with pytest.raises(NotFound):
        artifact_get(workspace_id=workspace.pk, artifact_id=storyboard.pk)
    with pytest.raises(NotFound):
        artifact_version_get(workspace_id=workspace.pk, artifact_id=storyboard.pk)
    assert artifact_search(workspace_id=workspace.pk, query="storyboard") == []


def test_it_gets_the_current_or_a_named_version(workspace, storyboard):
    # given
    artifact_version_add(workspace_id=workspace.pk, artifact_id=storyboard.pk, base_version=1, content="v2")

    # when
    current = artifact_version_get(workspace_id=workspace.pk, artifact_id=storyboard.pk)
    first = artifact_version_get(workspace_id=workspace.pk, artifact_id=storyboard.pk, number=1)

    # then
    assert (current.number, current.content) == (2, "v2")
    assert first.number == 1 and first.content.startswith("shot 1")
    with pytest.raises(NotFound) as missing:
        artifact_version_get(workspace_id=workspace.pk, artifact_id=storyboard.pk, number=9)
    assert (missing.value.code, missing.value.details) == ("version_not_found", {"current_version": 2})


@pytest.fixture
def library(workspace, elsewhere):
    """Artifacts of every kind, some about posters, plus a poster in another workspace."""

    def make(kind, title, description="", tags=(), workspace_id=workspace.pk):
        return artifact_create(workspace_id=workspace_id, kind=kind, title=title, description=description, tags=tags)

    return {
        "poster_image": make("image", "Retro Poster #1", tags=["print"]),
        "brief": make("document", "Campaign brief", description="Three POSTERS in a warm palette"),
        "flow": make("flow", "Teaser pipeline", tags=["Poster", "video"]),
        "clip": make("video", "Cat teaser", tags=["cat"]),
        "model": make("3d", "Mascot", description="low-poly cat"),
        "pack": make("asset_collection", "Poster pack", tags=["print"]),
        "foreign": make("image", "Retro poster (elsewhere)", workspace_id=elsewhere.pk),
    }


def _ids(artifacts):
    return {a.pk for a in artifacts}


def test_it_searches_titles_descriptions_and_tags_across_kinds_ignoring_case(workspace, library):
    # when
    found = artifact_search(workspace_id=workspace.pk, query="poster")

    # then: title (image, collection), description (document), tag (flow); not the other workspace's
    assert _ids(found) == _ids([library["poster_image"], library["brief"], library["flow"], library["pack"]])
    assert _ids(artifact_search(workspace_id=workspace.pk, query="CAT")) == _ids([library["clip"], library["model"]])


def test_it_requires_every_word_of_the_query(workspace, library):
    # when / then
    assert _ids(artifact_search(workspace_id=workspace.pk, query="retro poster")) == {library["poster_image"].pk}
    assert _ids(artifact_search(workspace_id=workspace.pk, query="poster print")) == _ids(
        [library["poster_image"], library["pack"]]
    )


def test_it_filters_search_by_kinds(workspace, library):
    # when
    found = artifact_search(workspace_id=workspace.pk, query="poster", kinds=["flow", "document"])

    # then
    assert _ids(found) == _ids([library["brief"], library["flow"]])
    with pytest.raises(InvalidInput):
        artifact_search(workspace_id=workspace.pk, query="poster", kinds=["spreadsheet"])


def test_it_lists_the_most_recent_for_an_empty_query_within_the_limit(workspace, library):
    # given
    artifact_version_add(workspace_id=workspace.pk, artifact_id=library["clip"].pk, base_version=1, content="")

    # when
    found = artifact_search(workspace_id=workspace.pk, query="  ", limit=2)

    # then
    assert len(found) == 2 and found[0] == library["clip"]
    assert len(artifact_search(workspace_id=workspace.pk, query="", limit=10_000)) == 6


def test_it_does_not_match_the_json_around_tags(workspace, library):
    # when / then: the tags are stored as a JSON list, whose quotes and commas are not words
    assert artifact_search(workspace_id=workspace.pk, query='", "') == []
    assert artifact_search(workspace_id=workspace.pk, query="[") == []
    assert artifact_search(workspace_id=workspace.pk, query="]") == []


def test_it_finds_tags_with_accents_and_quotes(workspace):
    # given
    artifact = artifact_create(workspace_id=workspace.pk, kind="image", title="Affiche", tags=["Été", 'say "cheese"'])

    # when / then
    assert artifact_search(workspace_id=workspace.pk, query="Été") == [artifact]
    assert artifact_search(workspace_id=workspace.pk, query='"cheese"') == [artifact]


@pytest.mark.postgres
def test_it_folds_case_beyond_ascii_on_postgresql(workspace):
    # given
    artifact = artifact_create(workspace_id=workspace.pk, kind="image", title="Café ÉTÉ", tags=["Été"])

    # when / then
    assert artifact_search(workspace_id=workspace.pk, query="café été") == [artifact]
    assert artifact_search(workspace_id=workspace.pk, query="ÉTÉ") == [artifact]


def test_it_counts_versions_per_artifact(storyboard):
    # given / when / then: one version row per number, the number is the artifact's own sequence
    assert ArtifactVersion.objects.filter(artifact=storyboard).count() == storyboard.current_version == 1


def test_it_matches_list_punctuation_in_titles_but_not_in_the_tags_json(workspace, library):
    # given
    bracketed = artifact_create(workspace_id=workspace.pk, kind="document", title="Notes [draft], v1")

    # when / then
    assert artifact_search(workspace_id=workspace.pk, query="[draft],") == [bracketed]
    assert artifact_search(workspace_id=workspace.pk, query=",") == [bracketed]
