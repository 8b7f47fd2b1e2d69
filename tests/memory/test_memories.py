"""Version chains: ORIGIN, REFINE, CONFIRM and ignore, decided candidate by candidate against active memories."""

import pytest

from memory.models import (
    Derivation,
    DerivationRole,
    Evidence,
    EvidenceKind,
    Memory,
    MemoryIndex,
    MemoryKind,
    MemoryVersion,
    Tombstone,
    VersionOperation,
    VersionStatus,
)
from memory.services.extraction import evidence_extract
from memory.services.memories import Action, candidates_apply, normalised_key
from memory.text import content_hash
from tests.memory.statements import active, assert_memory_consistent, record, said
from workspace.models import Event

pytestmark = pytest.mark.django_db


def links(version) -> list[tuple[str, int]]:
    return [
        (d.role, d.evidence_id or d.from_version_id) for d in Derivation.objects.filter(version=version).order_by("id")
    ]


# --- the seed's example -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Our brand's main colour is blue.", "Blue with an off-white feels softer."),
        (
            "La couleur principale de notre marque est le bleu.",
            "Le bleu associé à un blanc cassé, ça donne un ensemble plus doux.",
        ),
    ],
)
def test_it_refines_the_brand_colour_into_a_merged_preference(workspace, alice, first, second):
    # when
    e1, [o1] = said(workspace, alice, first)
    e2, [o2] = said(workspace, alice, second)

    # then
    assert (o1.action, o2.action) == (Action.ORIGIN, Action.REFINE)
    assert o1.memory_id == o2.memory_id
    v1, v2 = MemoryVersion.objects.filter(memory_id=o1.memory_id).order_by("number")
    assert (v1.number, v1.operation, v1.status, v1.kind) == (
        1,
        VersionOperation.ORIGIN,
        VersionStatus.SUPERSEDED,
        "fact",
    )
    assert (v2.number, v2.operation, v2.status, v2.kind) == (
        2,
        VersionOperation.REFINE,
        VersionStatus.ACTIVE,
        "preference",
    )
    assert v2.content == f"{first.rstrip('.')}; {second.rstrip('.')}"  # merged: the old words kept, the new added
    assert v1.valid_from == e1.created_at
    assert v1.valid_to == v2.valid_from == e2.created_at  # the periods tile: an "as of" read finds one
    assert v2.valid_to is None
    assert links(v1) == [(DerivationRole.ORIGIN, e1.pk)]
    assert links(v2) == [(DerivationRole.REFINE, e2.pk), (DerivationRole.SUPERSEDES, v1.pk)]
    assert Memory.objects.get(pk=o1.memory_id).subject == "brand main colour"
    assert_memory_consistent(workspace)


def test_its_events_carry_ids_never_content(workspace, alice):
    # when
    said(workspace, alice, "Our brand's main colour is blue.")
    said(workspace, alice, "Blue with an off-white feels softer.")

    # then
    events = list(Event.objects.filter(workspace=workspace, kind__startswith="memory.").order_by("seq"))
    assert [e.kind for e in events] == ["memory.created", "memory.refined"]
    assert set(events[1].data) == {"memory", "version", "number", "kind", "evidence", "superseded"}
    assert not any("blue" in str(e.data).lower() or "colour" in str(e.data).lower() for e in events)


# --- contradictions and unrelated statements -------------------------------------------------------------

CONTRADICTING = [
    ("Our brand's main colour is blue.", "Our brand's main colour is green now."),
    ("Notre couleur principale est le bleu.", "Notre couleur principale est le vert."),
    ("Always put the logo bottom right.", "Always put the logo top left."),
    ("Mets toujours le logo en bas à droite.", "Mets toujours le logo en haut à gauche."),
    ("I prefer serif fonts.", "I prefer sans-serif fonts."),
    ("Je préfère les polices avec empattement.", "Je préfère les polices sans empattement."),
    ("We like warm palettes.", "We like cool, muted palettes."),
    ("J'aime les palettes peu saturées.", "J'aime les palettes très saturées."),
    ("Our tagline is 'Made to last'.", "Our tagline is 'Built for tomorrow'."),
    ("Notre slogan est « Fait pour durer ».", "Notre slogan est « Pensé pour demain »."),
    ("Our tone is playful.", "Our tone is formal."),
    ("Notre ton est décontracté.", "Notre ton est sérieux."),
    ("Never use gradients.", "Always use gradients."),
    ("N'utilise jamais de dégradés.", "Utilise toujours des dégradés."),
    ("Our logo is a fox.", "Our logo is an owl."),
    ("I prefer titles in uppercase.", "I prefer titles in lowercase."),
    ("Our secondary colour is orange.", "Our secondary colour is yellow."),
    ("Je préfère un fond blanc.", "Je préfère un fond noir."),
    ("Always write in English.", "Écris toujours en français."),
    ("La couleur principale de notre marque est le bleu.", "Our brand's main colour is green."),
]

UNRELATED = [
    ("Our brand's main colour is blue.", "Our secondary colour is orange."),
    ("Always put the logo bottom right.", "Our logo is a fox."),
    ("I prefer serif fonts.", "I like warm palettes."),
    ("Notre ton est décontracté.", "Notre slogan est « Fait pour durer »."),
    ("Never use gradients.", "Always use serif fonts for titles."),
    ("Je préfère les polices sans empattement.", "J'aime les palettes peu saturées."),
    ("Our tagline is 'Made to last'.", "Our tone is playful."),
    ("We prefer square formats.", "We like minimalist layouts."),
    ("Je préfère un fond blanc.", "Je préfère les titres en majuscules."),
    ("Always write in English.", "Always put the logo bottom right."),
    ("Mets toujours le logo en bas à droite.", "N'utilise jamais de dégradés."),
    ("I prefer dark backgrounds.", "I prefer serif fonts for titles."),
    ("Our brand's main colour is blue.", "I prefer blue backgrounds."),
    ("We like warm palettes.", "Never put text on faces."),
    ("Notre couleur principale est le bleu.", "Notre couleur secondaire est l'orange."),
    ("I prefer titles in uppercase.", "I prefer serif fonts."),
    ("Our audience is young parents.", "Our tone is playful."),
    ("I like low-saturation palettes.", "This time, try a saturated red."),
    ("J'aime les affiches rétro.", "J'aime les vidéos courtes."),
    ("Our logo is a fox.", "Our tagline is 'Made to last'."),
]


@pytest.mark.parametrize(("first", "second"), CONTRADICTING)
def test_a_contradicting_statement_supersedes_the_earlier_one(workspace, alice, first, second):
    # when
    _, [o1] = said(workspace, alice, first)
    _, [o2] = said(workspace, alice, second)

    # then
    assert (o1.action, o2.action) == (Action.ORIGIN, Action.REFINE)
    assert o2.memory_id == o1.memory_id
    v1 = MemoryVersion.objects.get(pk=o1.version_id)
    assert v1.status == VersionStatus.SUPERSEDED and v1.valid_to is not None
    assert [v.content for v in active(workspace)] == [second.rstrip(".")]
    assert_memory_consistent(workspace)


@pytest.mark.parametrize(("first", "second"), UNRELATED)
def test_an_unrelated_statement_invalidates_nothing(workspace, alice, first, second):
    # when
    _, [o1] = said(workspace, alice, first)
    _, [o2] = said(workspace, alice, second)

    # then
    assert (o1.action, o2.action) == (Action.ORIGIN, Action.ORIGIN)
    assert o1.memory_id != o2.memory_id
    assert not MemoryVersion.objects.filter(workspace=workspace).exclude(status=VersionStatus.ACTIVE).exists()
    assert len(active(workspace)) == 2
    assert_memory_consistent(workspace)


def test_the_same_statement_again_confirms_without_a_new_version(workspace, alice, bob):
    # given
    e1, [o1] = said(workspace, alice, "Our tone is playful.")

    # when
    e2, [o2] = said(workspace, bob, "our tone is PLAYFUL!")
    e3, [o3] = said(workspace, alice, "Our brand's tone is playful.")  # same subject, other words: a refine

    # then
    assert (o1.action, o2.action, o3.action) == (Action.ORIGIN, Action.CONFIRM, Action.REFINE)
    assert o2.version_id == o1.version_id
    assert links(MemoryVersion.objects.get(pk=o1.version_id)) == [
        (DerivationRole.ORIGIN, e1.pk),
        (DerivationRole.CONFIRM, e2.pk),
    ]
    assert MemoryVersion.objects.filter(memory_id=o1.memory_id).count() == 2
    assert_memory_consistent(workspace)


def test_a_replayed_candidate_links_its_evidence_once(workspace, alice):
    # given
    evidence, [first] = said(workspace, alice, "Our tone is playful.")

    # when
    again = candidates_apply(evidence, [{"content": "Our tone is playful", "subject": "brand tone", "kind": "fact"}])

    # then
    assert again[0].action == Action.CONFIRM
    assert Derivation.objects.filter(evidence=evidence).count() == 1


def test_a_one_off_instruction_never_supersedes_a_durable_preference(workspace, alice):
    # given
    _, [durable] = said(workspace, alice, "We always use serif fonts.")

    # when
    _, [one_off] = said(workspace, alice, "This time, use sans-serif fonts.")
    _, [next_one_off] = said(workspace, alice, "This time, use monospace fonts.")

    # then
    assert (durable.action, one_off.action, next_one_off.action) == (Action.ORIGIN, Action.ORIGIN, Action.REFINE)
    assert next_one_off.memory_id == one_off.memory_id != durable.memory_id
    kinds = {v.memory.subject + ":" + v.kind: v.content for v in active(workspace)}
    assert kinds == {
        "font:preference": "We always use serif fonts",
        "font:instruction": "This time, use monospace fonts",
    }


def test_a_person_scope_memory_is_the_speakers(workspace, alice, bob):
    # when
    _, [mine] = said(workspace, alice, "I prefer serif fonts.")
    _, [theirs] = said(workspace, bob, "I prefer sans-serif fonts.")

    # then: two people's tastes, neither superseding the other
    assert (mine.action, theirs.action) == (Action.ORIGIN, Action.ORIGIN)
    people = {v.memory.person_id for v in active(workspace)}
    assert people == {alice.pk, bob.pk}


# --- evidence not from a person ----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", [EvidenceKind.WEB, EvidenceKind.TOOL_OUTPUT, EvidenceKind.AGENT_OUTPUT])
def test_web_tool_and_agent_evidence_yield_hypotheses_only(workspace, kind):
    # when
    _, outcomes = said(workspace, None, "Our brand's main colour is red. I prefer serif fonts.", kind=kind)

    # then
    assert [o.action for o in outcomes] == [Action.ORIGIN, Action.ORIGIN]
    assert {(v.kind, v.memory.scope, v.memory.person_id) for v in active(workspace)} == {
        (MemoryKind.HYPOTHESIS, "workspace", None)
    }


def test_a_persons_words_without_a_person_are_a_hypothesis(workspace):
    _, [outcome] = said(workspace, None, "Our tone is playful.", kind=EvidenceKind.MAIN_MESSAGE)

    assert MemoryVersion.objects.get(pk=outcome.version_id).kind == MemoryKind.HYPOTHESIS


def test_a_guess_never_supersedes_what_a_person_stated(workspace, alice):
    # given
    _, [stated] = said(workspace, alice, "Our brand's main colour is blue.")

    # when
    _, [guess] = said(workspace, None, "Our brand's main colour is red.", kind=EvidenceKind.WEB)

    # then
    assert guess.action == Action.IGNORED and "person" in guess.reason
    assert [v.pk for v in active(workspace)] == [stated.version_id]


def test_a_person_stating_a_guess_makes_it_theirs(workspace, alice):
    # given
    _, [guess] = said(workspace, None, "Our tone is playful.", kind=EvidenceKind.WEB)

    # when
    evidence, [stated] = said(workspace, alice, "Our tone is playful.")

    # then
    assert stated.action == Action.REFINE and stated.memory_id == guess.memory_id
    version = MemoryVersion.objects.get(pk=stated.version_id)
    assert (version.number, version.kind, version.content) == (2, MemoryKind.FACT, "Our tone is playful")
    assert (DerivationRole.REFINE, evidence.pk) in links(version)


# --- forgotten words, revoked evidence, order -----------------------------------------------------------------


def test_forgotten_content_is_not_extracted_again(workspace, alice):
    # given
    Tombstone.objects.create(workspace=workspace, content_hash=content_hash("Our logo is a fox"))

    # when
    whole = record(workspace, alice, "our logo is a fox!")
    _, outcomes = said(workspace, alice, "Our logo is a fox. Our tone is playful.")

    # then
    assert whole is None  # the same words as a whole: nothing recorded
    assert [o.action for o in outcomes] == [Action.IGNORED, Action.ORIGIN]
    assert [v.content for v in active(workspace)] == ["Our tone is playful"]


def test_evidence_that_no_longer_feeds_memory_yields_nothing(workspace, alice):
    # given
    evidence = record(workspace, alice, "Our tone is playful.")
    Evidence.objects.filter(pk=evidence.pk).update(feeds_memory=False)

    # when
    applied = candidates_apply(evidence, [{"content": "Our tone is playful", "subject": "tone", "kind": "fact"}])
    extracted = evidence_extract(evidence_id=evidence.pk)

    # then
    assert [o.action for o in applied] == [Action.IGNORED] and extracted is None
    assert not Memory.objects.filter(workspace=workspace).exists()


def test_an_older_statement_extracted_late_does_not_supersede_a_newer_one(workspace, alice):
    # given
    older = record(workspace, alice, "Our tone is playful.")
    newer = record(workspace, alice, "Our tone is formal.")

    # when
    evidence_extract(evidence_id=newer.pk)
    [late] = evidence_extract(evidence_id=older.pk)

    # then
    assert late.action == Action.IGNORED
    assert [v.content for v in active(workspace)] == ["Our tone is formal"]


def test_a_long_statement_keeps_a_distinct_key(workspace):
    head = "Our brand guide says " + "very " * 120
    assert normalised_key(head + "blue") != normalised_key(head + "green")
    assert len(normalised_key(head + "blue")) == 500


def test_superseded_versions_leave_the_index(workspace, alice):
    # when
    _, [o1] = said(workspace, alice, "Our tone is playful.")
    _, [o2] = said(workspace, alice, "Our tone is formal.")

    # then
    assert not MemoryIndex.objects.filter(version_id=o1.version_id).exists()
    assert "formal" in MemoryIndex.objects.get(version_id=o2.version_id).document
