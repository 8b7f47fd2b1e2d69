"""Documents: full rewrites and exact-fragment edits on a base version (DESIGN §9; seed §9.3)."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lomote.kernel.exceptions import Conflict, InvalidInput
from workspace.models import ArtifactVersion
from workspace.services.artifacts import artifact_create
from workspace.services.documents import document_edit, document_write, edits_apply

pytestmark = pytest.mark.django_db


@pytest.fixture
def doc(workspace, alice):
    return artifact_create(
        workspace_id=workspace.pk,
        kind="document",
        title="Storyboard",
        content="# Storyboard\n## Shot 1\nA cup.\n## Shot 2\nSteam rises.\n",
        author_user=alice,
    )


def test_it_rewrites_a_document_on_its_current_version(doc, bob):
    version = document_write(
        workspace_id=doc.workspace_id, artifact_id=doc.pk, base_version=1, content="New", author_user=bob
    )
    assert (version.number, version.content, version.author_user) == (2, "New", bob)


def test_it_refuses_a_stale_rewrite_and_changes_nothing(doc, bob):
    # given version 2 saved by someone
    document_write(workspace_id=doc.workspace_id, artifact_id=doc.pk, base_version=1, content="v2", author_user=bob)

    # when a rewrite based on version 1 arrives
    with pytest.raises(Conflict) as refused:
        document_write(workspace_id=doc.workspace_id, artifact_id=doc.pk, base_version=1, content="x", author_user=bob)

    # then 409 stale_version with the current version, and no version 3
    assert (refused.value.code, refused.value.status, refused.value.details["current_version"]) == (
        "stale_version",
        409,
        2,
    )
    assert ArtifactVersion.objects.filter(artifact=doc).count() == 2


def test_it_applies_unique_fragments_all_together(doc, bob):
    version = document_edit(
        workspace_id=doc.workspace_id,
        artifact_id=doc.pk,
        base_version=1,
        edits=[{"find": "A cup.", "replace": "A red cup."}, {"find": "Steam rises.", "replace": "Steam curls."}],
        author_user=bob,
    )
    assert version.content == "# Storyboard\n## Shot 1\nA red cup.\n## Shot 2\nSteam curls.\n"


@pytest.mark.parametrize(
    ("edits", "code", "index"),
    [
        ([{"find": "A cup.", "replace": "x"}, {"find": "A mug.", "replace": "y"}], "fragment_not_found", 1),
        ([{"find": "## Shot", "replace": "## Plan"}], "fragment_not_unique", 0),
        ([{"find": "A cup.", "replace": "x"}, {"find": "cup", "replace": "y"}], "fragment_overlap", 1),
    ],
)
def test_it_refuses_edits_naming_the_bad_fragment_and_writes_nothing(doc, bob, edits, code, index):
    with pytest.raises(Conflict) as refused:
        document_edit(workspace_id=doc.workspace_id, artifact_id=doc.pk, base_version=1, edits=edits, author_user=bob)
    assert (refused.value.code, refused.value.details["edit"]) == (code, index)
    assert refused.value.details["find"] == edits[index]["find"]
    assert ArtifactVersion.objects.filter(artifact=doc).count() == 1


def test_it_refuses_edits_on_a_stale_base(doc, bob):
    document_write(workspace_id=doc.workspace_id, artifact_id=doc.pk, base_version=1, content="A cup.", author_user=bob)
    with pytest.raises(Conflict) as refused:
        document_edit(
            workspace_id=doc.workspace_id,
            artifact_id=doc.pk,
            base_version=1,
            edits=[{"find": "A cup.", "replace": "x"}],
            author_user=bob,
        )
    assert refused.value.code == "stale_version"
    assert refused.value.details["current_version"] == 2


def test_it_refuses_an_empty_fragment(doc, bob):
    with pytest.raises(InvalidInput):
        edits_apply("abc", [{"find": "", "replace": "x"}])


# --- property: fragment edits ------------------------------------------------------------------------------

# Segments are distinct lowercase words joined by spaces, so each occurs exactly once; replacements are
# uppercase, so they can never create an occurrence of another fragment.
segments = st.lists(st.text("abcdefgh", min_size=3, max_size=6), min_size=1, max_size=8, unique=True).filter(
    lambda words: all(a not in b for a in words for b in words if a != b)
)


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), words=segments)
def test_property_unique_fragments_apply_exactly_as_sequential_replaces(data, words):
    base = " ".join(words)
    chosen = data.draw(st.lists(st.sampled_from(words), unique=True, min_size=1, max_size=len(words)))
    replaces = [data.draw(st.text("XYZ ", max_size=5)) for _ in chosen]
    edits = [{"find": f, "replace": r} for f, r in zip(chosen, replaces, strict=True)]

    result = edits_apply(base, edits)

    expected = base
    for edit in edits:
        assert expected.count(edit["find"]) == 1
        expected = expected.replace(edit["find"], edit["replace"], 1)
    assert result == expected


@settings(max_examples=100, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), words=segments)
def test_property_a_repeated_or_missing_fragment_refuses_everything(data, words):
    word = data.draw(st.sampled_from(words))
    base = " ".join(words) + " " + word  # `word` now occurs twice
    good = [{"find": w, "replace": "Q"} for w in words if w != word][:2]
    bad = data.draw(st.sampled_from([{"find": word, "replace": "Z"}, {"find": "zzzzzzz", "replace": "Z"}]))
    position = data.draw(st.integers(0, len(good)))
    edits = [*good[:position], bad, *good[position:]]
    before = base

    with pytest.raises(Conflict) as refused:
        edits_apply(base, edits)

    assert refused.value.details["edit"] == position
    assert refused.value.code == ("fragment_not_unique" if bad["find"] == word else "fragment_not_found")
    assert base == before


@settings(max_examples=30, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(words=segments)
def test_property_a_refused_edit_writes_no_version(doc, bob, words):
    count = ArtifactVersion.objects.filter(artifact=doc).count()
    with pytest.raises(Conflict):
        document_edit(
            workspace_id=doc.workspace_id,
            artifact_id=doc.pk,
            base_version=doc.current_version,
            edits=[{"find": "A cup.", "replace": "ok"}, {"find": "never-" + words[0], "replace": "x"}],
            author_user=bob,
        )
    assert ArtifactVersion.objects.filter(artifact=doc).count() == count
