"""Memory reads: the search rows, recall by a task's goal (bounded in tokens and time), "as of", the panel lists.

Rows are made with the ORM: the extraction services that normally write them are tested on their own.
"""

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection, transaction

import memory.selectors as selectors
from lomote.kernel.exceptions import NotFound
from memory.models import Derivation, DerivationRole, MemoryIndex, MemoryKind, MemoryScope, VersionStatus
from memory.search import FTS_INDEX, goal_terms, index_document
from memory.selectors import as_of, estimate_tokens, memory_get, memory_list, recall
from memory.services.index import index_drop, index_put
from memory.services.profile import profile_rebuild
from tests.memory.rows import T0, remember
from workspace.selectors import workspace_access

pytestmark = pytest.mark.django_db


def recalled(result) -> list[str]:
    return [m.content for m in result.memories]


# --- search rows -----------------------------------------------------------------------------------------------


def test_it_indexes_an_active_version_with_its_subject_folded(workspace):
    # given
    version = remember(workspace, "Les affiches utilisent toujours la police Montserrat", subject="Police des affiches")

    # then
    row = MemoryIndex.objects.get(version=version)
    assert row.workspace_id == workspace.pk
    assert row.document == "les affiches utilisent toujours la police montserrat\npolice des affiches"
    assert index_document("Vidéo Élégante", "Sujet") == "video elegante\nsujet"


def test_it_drops_the_row_instead_of_indexing_a_version_that_is_not_active(workspace):
    # given
    version = remember(workspace, "Our brand's main colour is blue", subject="brand main colour")
    assert MemoryIndex.objects.filter(version=version).exists()

    # when the version is superseded and a late call tries to index it again
    version.status = VersionStatus.SUPERSEDED
    version.save()
    written = index_put(version)

    # then
    assert written is False
    assert not MemoryIndex.objects.filter(version=version).exists()


def test_it_drops_rows_by_version_or_by_id(workspace):
    # given
    first = remember(workspace, "Posters use Montserrat")
    second = remember(workspace, "Videos last five seconds")
    third = remember(workspace, "Logos are flat")

    # when
    dropped = index_drop([first, second.pk])

    # then
    assert dropped == 2
    assert list(MemoryIndex.objects.values_list("version_id", flat=True)) == [third.pk]
    assert index_drop([]) == 0


@pytest.mark.postgres
def test_it_has_a_gin_index_on_the_search_expression():
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = %s", [FTS_INDEX])
        (definition,) = cursor.fetchone()
    assert "USING gin" in definition
    assert "to_tsvector('simple'::regconfig, COALESCE(document, ''::text))" in definition


def test_it_reads_the_goals_content_words_in_english_and_french():
    assert goal_terms("Make three retro posters for our brand in warm colours, please") == [
        "three",
        "retro",
        "poster",
        "brand",
        "warm",
        "colour",
    ]
    assert goal_terms("Crée une affiche pour la fête avec notre couleur principale") == [
        "affiche",
        "fete",
        "couleur",
        "principale",
    ]
    assert goal_terms("Can you do it?") == []


# --- recall ----------------------------------------------------------------------------------------------------


def test_it_recalls_the_memories_that_share_words_with_the_goal(workspace, alice):
    # given
    remember(workspace, "Posters always use the Montserrat typeface", subject="poster typeface")
    remember(workspace, "Videos last five seconds at most", subject="video length")
    remember(workspace, "Les affiches gardent une marge blanche de 2 cm", subject="marge des affiches")

    # when
    english = recall(workspace_id=workspace.pk, person_id=alice.pk, goal="Make 3 retro posters", limit_tokens=500)
    french = recall(workspace_id=workspace.pk, goal="Crée une affiche pour le festival", limit_tokens=500)
    nothing = recall(workspace_id=workspace.pk, goal="Plan the quarterly budget", limit_tokens=500)

    # then
    assert recalled(english) == ["Posters always use the Montserrat typeface"]
    assert english.timed_out is False
    assert [m.found_by for m in english.memories] == ["goal"]
    assert recalled(french) == ["Les affiches gardent une marge blanche de 2 cm"]
    assert recalled(nothing) == []
    assert nothing.timed_out is False


def test_it_ranks_rare_words_above_common_ones(workspace):
    # given "brand" is in every memory and "halftone" in one
    for n in range(6):
        remember(workspace, f"The brand uses accent number {n} sparingly", subject=f"brand accent {n}")
    halftone = remember(workspace, "Brand posters get a halftone texture", subject="poster texture")

    # when
    result = recall(workspace_id=workspace.pk, goal="brand halftone", limit_tokens=1000)

    # then
    assert result.memories[0].version_id == halftone.pk
    assert len(result.memories) == 7


def test_it_stays_within_the_token_budget_and_skips_what_does_not_fit(workspace):
    # given a long memory ranked first and short ones after it
    long_one = remember(workspace, "Poster grids: " + "twelve columns, " * 30 + "always.", subject="poster grid poster")
    short = [remember(workspace, f"Poster note {n}", subject=f"poster note {n}") for n in range(5)]
    long_cost = estimate_tokens(long_one.content) + selectors.ITEM_OVERHEAD_TOKENS
    short_cost = estimate_tokens(short[0].content) + selectors.ITEM_OVERHEAD_TOKENS

    # when the budget is smaller than the long one
    result = recall(workspace_id=workspace.pk, goal="poster", limit_tokens=3 * short_cost)

    # then the long one is skipped and the short ones fill what it leaves
    assert long_cost > 3 * short_cost
    assert len(result.memories) == 3
    assert long_one.pk not in result.version_ids
    assert result.tokens == sum(m.tokens for m in result.memories) <= 3 * short_cost
    assert recall(workspace_id=workspace.pk, goal="poster", limit_tokens=0).memories == []


def test_it_never_recalls_a_superseded_or_forgotten_version(workspace):
    # given blue superseded by green, and a forgotten memory
    blue = remember(
        workspace,
        "Our brand's main colour is blue",
        subject="brand main colour",
        status=VersionStatus.SUPERSEDED,
        valid_to=T0 + timedelta(days=30),
    )
    green = remember(
        workspace,
        "Our brand's main colour is green",
        memory=blue.memory,
        valid_from=T0 + timedelta(days=30),
    )
    remember(workspace, "", subject="brand secondary colour", status=VersionStatus.FORGOTTEN)
    # even if a stale search row were left behind by mistake
    MemoryIndex.objects.create(version=blue, workspace=workspace, document="our brand's main colour is blue")

    # when
    result = recall(workspace_id=workspace.pk, goal="brand colour blue", limit_tokens=1000)

    # then
    assert result.version_ids == [green.pk]


def test_it_leaves_out_instructions_other_peoples_memories_and_what_the_profile_carries(workspace, alice, bob):
    # given
    remember(workspace, "This time make the poster saturated red", subject="poster colour", kind=MemoryKind.INSTRUCTION)
    bobs = remember(workspace, "I like posters with big titles", scope=MemoryScope.PERSON, person=bob)
    in_profile = remember(workspace, "Our posters are printed in A3", subject="poster size", kind=MemoryKind.FACT)
    profile_rebuild(workspace_id=workspace.pk, reason="test")
    remember(workspace, "Posters once had gold foil", kind=MemoryKind.HYPOTHESIS)

    # when
    for_alice = recall(workspace_id=workspace.pk, person_id=alice.pk, goal="poster", limit_tokens=1000)
    for_bob = recall(workspace_id=workspace.pk, person_id=bob.pk, goal="poster", limit_tokens=1000)

    # then
    assert recalled(for_alice) == ["Posters once had gold foil"]
    assert bobs.pk in for_bob.version_ids
    assert in_profile.pk not in for_bob.version_ids


def test_it_brings_the_persons_own_preferences_first_whatever_the_goal(workspace, alice, bob):
    # given
    remember(workspace, "Posters use Montserrat", subject="poster typeface")
    mine = remember(workspace, "Answer me in French", scope=MemoryScope.PERSON, person=alice)
    remember(workspace, "Keep my replies short", scope=MemoryScope.PERSON, person=bob)

    # when
    result = recall(workspace_id=workspace.pk, person_id=alice.pk, goal="a poster", limit_tokens=1000)

    # then
    assert [(m.version_id, m.found_by) for m in result.memories][0] == (mine.pk, "standing")
    assert recalled(result) == ["Answer me in French", "Posters use Montserrat"]
    no_words = recall(workspace_id=workspace.pk, person_id=alice.pk, goal="Can you do it?", limit_tokens=1000)
    assert no_words.version_ids == [mine.pk]


def test_it_marks_hypotheses_and_ranks_them_below_stated_memories(workspace):
    # given a hypothesis that matches as well as a stated preference
    guess = remember(workspace, "Seems to like cyberpunk posters", kind=MemoryKind.HYPOTHESIS)
    stated = remember(workspace, "Wants minimal posters")

    # when
    result = recall(workspace_id=workspace.pk, goal="posters", limit_tokens=1000)

    # then
    assert result.version_ids == [stated.pk, guess.pk]
    assert [m.kind for m in result.memories] == [MemoryKind.PREFERENCE, MemoryKind.HYPOTHESIS]


def test_it_keeps_to_its_workspace(workspace, dave):
    # given
    from tests.support.factories import WorkspaceFactory

    other = WorkspaceFactory(created_by=dave, name="Elsewhere")
    remember(other, "Posters use Comic Sans")

    # then
    assert recall(workspace_id=workspace.pk, goal="posters", limit_tokens=1000).memories == []


def test_it_times_out_before_a_statement_when_no_time_is_left(workspace):
    # given
    remember(workspace, "Posters use Montserrat")

    # when
    result = recall(workspace_id=workspace.pk, goal="posters", limit_tokens=1000, timeout_ms=0)

    # then
    assert result.timed_out is True
    assert result.memories == []


SLOW_STATEMENT = {
    "postgresql": "SELECT pg_sleep(2)",
    # about ten seconds of work for SQLite, which its progress handler interrupts
    "sqlite": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 300000000) "
    "SELECT count(*) FROM c",
}


def _slow_search(monkeypatch):
    """Make recall's read run a slow statement first, under the recall's deadline like its own statements."""
    name = "_recall_rows_postgresql" if connection.vendor == "postgresql" else "_recall_rows_portable"
    read = getattr(selectors, name)

    def slow(*args, **kwargs):
        args[-1].arm()
        with connection.cursor() as cursor:
            cursor.execute(SLOW_STATEMENT[connection.vendor])
        return read(*args, **kwargs)

    monkeypatch.setattr(selectors, name, slow)


def test_it_returns_timed_out_instead_of_blocking_on_a_slow_database(workspace, monkeypatch, caplog):
    # given
    remember(workspace, "Posters use Montserrat")
    _slow_search(monkeypatch)

    # when
    started = datetime.now(UTC)
    result = recall(workspace_id=workspace.pk, goal="posters", limit_tokens=1000, timeout_ms=100)
    elapsed = datetime.now(UTC) - started

    # then the statement was cancelled (interrupted on SQLite), nothing raised, and it is recorded
    assert result.timed_out is True
    assert result.memories == []
    assert elapsed < timedelta(seconds=1)
    assert "memory recall timed out" in caplog.text


@pytest.mark.postgres
def test_a_timed_out_recall_leaves_the_callers_transaction_usable_and_its_timeout_unchanged(workspace, monkeypatch):
    # given
    remember(workspace, "Posters use Montserrat")

    with transaction.atomic():
        # when one recall times out and another finishes, inside the caller's transaction
        with monkeypatch.context() as patch:
            _slow_search(patch)
            slow = recall(workspace_id=workspace.pk, goal="posters", limit_tokens=1000, timeout_ms=100)
        fine = recall(workspace_id=workspace.pk, goal="posters", limit_tokens=1000, timeout_ms=500)

        # then the transaction goes on, with its own statement timeout
        with connection.cursor() as cursor:
            cursor.execute("SELECT current_setting('statement_timeout'), count(*) FROM memory_memoryindex")
            setting, rows = cursor.fetchone()
    assert slow.timed_out is True
    assert recalled(fine) == ["Posters use Montserrat"]
    assert setting == "0"
    assert rows == 1


# --- as of -----------------------------------------------------------------------------------------------------


def test_as_of_answers_blue_before_the_change_and_green_after(workspace):
    # given the brand was blue from T0 and green from T0 + 30 days
    change = T0 + timedelta(days=30)
    blue = remember(
        workspace,
        "Our brand's main colour is blue",
        subject="Brand main colour",
        status=VersionStatus.SUPERSEDED,
        valid_to=change,
    )
    green = remember(workspace, "Our brand's main colour is green", memory=blue.memory, valid_from=change)

    def answer(when):
        version = as_of(workspace_id=workspace.pk, subject="brand main colour", when=when)
        return version.content if version else None

    # then
    assert answer(T0 - timedelta(days=1)) is None
    assert answer(T0) == blue.content
    assert answer(change - timedelta(seconds=1)) == blue.content
    assert answer(change) == green.content
    assert answer(change + timedelta(days=400)) == green.content


def test_as_of_never_answers_with_a_forgotten_version_or_another_persons_memory(workspace, alice, bob):
    # given
    remember(workspace, "", subject="logo shape", status=VersionStatus.FORGOTTEN)
    bobs = remember(workspace, "Bob's desk is by the window", subject="desk", scope=MemoryScope.PERSON, person=bob)

    # then
    assert as_of(workspace_id=workspace.pk, subject="logo shape", when=T0) is None
    assert as_of(workspace_id=workspace.pk, subject="desk", when=T0, person_id=alice.pk) is None
    assert as_of(workspace_id=workspace.pk, subject="desk", when=T0, person_id=bob.pk) == bobs


# --- the memory panel ------------------------------------------------------------------------------------------


def test_memory_list_shows_active_memories_and_on_request_their_whole_chains(workspace, alice):
    # given one memory refined once, one forgotten, one of another kind
    blue = remember(
        workspace, "Brand colour is blue", subject="brand colour", status=VersionStatus.SUPERSEDED, valid_to=T0
    )
    green = remember(workspace, "Brand colour is green", memory=blue.memory)
    forgotten = remember(workspace, "", subject="secret", status=VersionStatus.FORGOTTEN)
    fact = remember(workspace, "We print in A3", subject="print size", kind=MemoryKind.FACT)
    access = workspace_access(principal=alice, workspace_id=workspace.pk)

    # when
    active = {m.pk: [v.pk for v in m.chain] for m in memory_list(access=access)}
    everything = {m.pk: [v.pk for v in m.chain] for m in memory_list(access=access, include_superseded=True)}
    facts = [m.pk for m in memory_list(access=access, kind=MemoryKind.FACT)]

    # then
    assert active == {blue.memory_id: [green.pk], fact.memory_id: [fact.pk]}
    assert everything == {
        blue.memory_id: [blue.pk, green.pk],
        forgotten.memory_id: [forgotten.pk],
        fact.memory_id: [fact.pk],
    }
    assert facts == [fact.memory_id]
    assert [m.pk for m in memory_list(access=access, subject="Brand")] == [blue.memory_id]


def test_memory_get_brings_the_chain_with_provenance_in_few_queries(workspace, alice, django_assert_max_num_queries):
    # given
    blue = remember(workspace, "Brand colour is blue", subject="brand colour", status=VersionStatus.SUPERSEDED)
    green = remember(workspace, "Brand colour is green", memory=blue.memory)
    Derivation.objects.create(workspace=workspace, role=DerivationRole.SUPERSEDES, version=green, from_version=blue)
    access = workspace_access(principal=alice, workspace_id=workspace.pk)

    # when
    with django_assert_max_num_queries(3):
        memory = memory_get(access=access, memory_id=blue.memory_id)
        links = [
            [(d.role, d.evidence.text if d.evidence else d.from_version.number) for d in v.derived_from.all()]
            for v in memory.chain
        ]

    # then
    assert [v.number for v in memory.chain] == [1, 2]
    assert links == [[("origin", "Brand colour is blue")], [("origin", "Brand colour is green"), ("supersedes", 1)]]


def test_memory_get_is_not_found_outside_the_workspace_or_for_another_persons_memory(workspace, alice, bob, dave):
    # given
    from tests.support.factories import WorkspaceFactory

    elsewhere = remember(WorkspaceFactory(created_by=dave, name="Elsewhere"), "Posters use Comic Sans")
    bobs = remember(workspace, "I like big titles", scope=MemoryScope.PERSON, person=bob)
    access = workspace_access(principal=alice, workspace_id=workspace.pk)

    # then
    with pytest.raises(NotFound):
        memory_get(access=access, memory_id=elsewhere.memory_id)
    with pytest.raises(NotFound):
        memory_get(access=access, memory_id=bobs.memory_id)
    assert bobs.memory_id not in [m.pk for m in memory_list(access=access)]
    bob_access = workspace_access(principal=bob, workspace_id=workspace.pk)
    assert memory_get(access=bob_access, memory_id=bobs.memory_id).pk == bobs.memory_id
