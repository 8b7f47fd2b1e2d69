"""The small versioned profile: what enters it, when its version moves, and its links."""

from datetime import timedelta

import pytest

from memory.models import (
    Derivation,
    DerivationRole,
    MemoryKind,
    MemoryScope,
    ProfileVersion,
    VersionOperation,
    VersionStatus,
)
from memory.selectors import profile_versions
from memory.services.profile import PROFILE_ENTRIES, profile_current, profile_rebuild
from tests.memory.rows import T0, remember, statement
from workspace.selectors import workspace_access

pytestmark = pytest.mark.django_db


def texts(workspace) -> list[str]:
    return [entry.text for entry in profile_current(workspace.pk).entries]


def test_it_has_no_version_until_there_is_something_to_hold(workspace, django_assert_num_queries):
    # when
    with django_assert_num_queries(1):
        assert profile_current(workspace.pk) == (0, [])
    built = profile_rebuild(workspace_id=workspace.pk, reason="first look")

    # then
    assert built is None
    assert not ProfileVersion.objects.filter(workspace=workspace).exists()


def test_it_holds_durable_preferences_and_stated_facts_only(workspace, bob):
    # given
    remember(workspace, "We prefer muted palettes", subject="palette")
    remember(workspace, "Our brand's main colour is blue", subject="brand main colour", kind=MemoryKind.FACT)
    remember(workspace, "Seems to like cyberpunk", kind=MemoryKind.HYPOTHESIS)
    remember(workspace, "This time try a saturated red", kind=MemoryKind.INSTRUCTION)
    remember(workspace, "I like big titles", scope=MemoryScope.PERSON, person=bob)
    remember(workspace, "Old typeface: Futura", status=VersionStatus.SUPERSEDED)
    remember(workspace, "", subject="forgotten", status=VersionStatus.FORGOTTEN)

    # when
    profile = profile_rebuild(workspace_id=workspace.pk, reason="extraction")

    # then
    assert (profile.number, profile.reason) == (1, "extraction")
    assert texts(workspace) == ["We prefer muted palettes", "Our brand's main colour is blue"]


def test_it_moves_its_version_only_when_the_entries_change(workspace):
    # given
    blue = remember(workspace, "Our brand's main colour is blue", subject="brand main colour")
    first = profile_rebuild(workspace_id=workspace.pk, reason="origin")

    # when nothing changed, or a confirmation only adds a link
    again = profile_rebuild(workspace_id=workspace.pk, reason="nothing new")
    Derivation.objects.create(
        workspace=workspace, role=DerivationRole.CONFIRM, version=blue, evidence=statement(workspace, "Yes, blue.")
    )
    confirmed = profile_rebuild(workspace_id=workspace.pk, reason="confirm")

    # then
    assert first.pk == again.pk == confirmed.pk
    assert profile_current(workspace.pk).number == 1

    # when the memory is refined (the seed's example: blue, then blue with off-white)
    blue.status, blue.valid_to = VersionStatus.SUPERSEDED, T0 + timedelta(days=1)
    blue.normalised = ""
    blue.save()
    merged = remember(
        workspace,
        "The brand favours blue with an off-white, for a softer overall look",
        memory=blue.memory,
        valid_from=T0 + timedelta(days=1),
    )
    refined = profile_rebuild(workspace_id=workspace.pk, reason="refine")

    # then a new version holds the merged preference, and the old one keeps what it said
    assert merged.operation == VersionOperation.REFINE
    assert refined.number == 2
    assert texts(workspace) == ["The brand favours blue with an off-white, for a softer overall look"]
    assert [e.text for e in first.entries.all()] == ["Our brand's main colour is blue"]


def test_it_links_every_entry_to_the_version_it_was_made_from(workspace):
    # given
    versions = [remember(workspace, f"Posters keep rule {n}", subject=f"poster rule {n}") for n in range(3)]

    # when
    profile = profile_rebuild(workspace_id=workspace.pk, reason="test")

    # then
    entries = list(profile.entries.order_by("position"))
    assert [e.position for e in entries] == [1, 2, 3]
    links = Derivation.objects.filter(profile_entry__profile=profile)
    assert sorted(links.values_list("profile_entry_id", "role", "from_version_id", "evidence_id")) == sorted(
        (e.pk, DerivationRole.PROFILES, v.pk, None) for e, v in zip(entries, versions, strict=True)
    )


def test_it_keeps_the_best_supported_and_most_recent_and_appends_new_memories(workspace):
    # given more durable memories than the profile holds; the oldest is confirmed twice
    oldest = remember(workspace, "Rule 0", valid_from=T0)
    for n in range(1, PROFILE_ENTRIES + 3):
        remember(workspace, f"Rule {n}", valid_from=T0 + timedelta(hours=n))
    for text in ("Yes, rule 0.", "Still rule 0."):
        Derivation.objects.create(
            workspace=workspace, role=DerivationRole.CONFIRM, version=oldest, evidence=statement(workspace, text)
        )

    # when
    profile_rebuild(workspace_id=workspace.pk, reason="test")

    # then: rule 0 for its support, then the newest, listed in memory order
    newest = [f"Rule {n}" for n in range(PROFILE_ENTRIES + 2 - (PROFILE_ENTRIES - 2), PROFILE_ENTRIES + 3)]
    assert texts(workspace) == ["Rule 0", *newest]

    # when a new memory comes, it goes last and the entries before it keep their places
    before = texts(workspace)
    remember(workspace, "Rule new", valid_from=T0 + timedelta(days=30))
    profile_rebuild(workspace_id=workspace.pk, reason="new memory")
    after = texts(workspace)
    assert after[-1] == "Rule new"
    assert after[:-1] == [before[0], *before[2:]]


def test_it_makes_an_empty_version_when_the_last_entry_goes(workspace):
    # given
    version = remember(workspace, "We prefer muted palettes")
    profile_rebuild(workspace_id=workspace.pk, reason="origin")

    # when the memory is forgotten
    version.status, version.content, version.normalised = VersionStatus.FORGOTTEN, "", ""
    version.save()
    profile = profile_rebuild(workspace_id=workspace.pk, reason="forget")

    # then
    assert profile.number == 2
    assert profile_current(workspace.pk) == (2, [])


def test_profile_current_is_cheap_and_in_entry_order(workspace, django_assert_num_queries):
    # given
    for n in range(4):
        remember(workspace, f"Rule {n}")
    profile_rebuild(workspace_id=workspace.pk, reason="test")

    # when
    with django_assert_num_queries(2):
        number, entries = profile_current(workspace.pk)

    # then
    assert number == 1
    assert [(e.position, e.text) for e in entries] == [(1, "Rule 0"), (2, "Rule 1"), (3, "Rule 2"), (4, "Rule 3")]


def test_it_keeps_to_its_workspace(workspace, dave):
    # given
    from tests.support.factories import WorkspaceFactory

    other = WorkspaceFactory(created_by=dave, name="Elsewhere")
    remember(other, "Comic Sans everywhere")
    remember(workspace, "Montserrat everywhere")

    # when
    profile_rebuild(workspace_id=workspace.pk, reason="test")
    profile_rebuild(workspace_id=other.pk, reason="test")

    # then
    assert texts(workspace) == ["Montserrat everywhere"]
    assert texts(other) == ["Comic Sans everywhere"]


def test_profile_versions_lists_them_newest_first_with_entries_and_links(workspace, alice, django_assert_num_queries):
    # given two versions
    remember(workspace, "Rule A")
    profile_rebuild(workspace_id=workspace.pk, reason="first")
    second_rule = remember(workspace, "Rule B")
    profile_rebuild(workspace_id=workspace.pk, reason="second")
    access = workspace_access(principal=alice, workspace_id=workspace.pk)

    # when
    with django_assert_num_queries(3):
        shown = [
            (p.number, p.reason, [(e.text, [d.from_version_id for d in e.derived_from.all()]) for e in p.entries.all()])
            for p in profile_versions(access=access)
        ]

    # then
    first_rule_id = shown[1][2][0][1][0]
    assert shown == [
        (2, "second", [("Rule A", [first_rule_id]), ("Rule B", [second_rule.pk])]),
        (1, "first", [("Rule A", [first_rule_id])]),
    ]
