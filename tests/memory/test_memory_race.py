"""Two statements at the same moment, on two connections (PostgreSQL): one memory, one next version."""

import pytest

from memory.models import Derivation, DerivationRole, Memory, MemoryVersion, VersionStatus
from memory.services.extraction import evidence_extract
from memory.services.memories import memory_correct, memory_state
from tests.memory.statements import assert_memory_consistent, record, said
from tests.support.race import race
from workspace.selectors import workspace_access

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def test_the_same_statement_twice_at_once_makes_one_memory(workspace, alice, bob):
    # given two people's messages saying the same thing, extracted by two jobs at once
    first = record(workspace, alice, "Our tone is playful.")
    second = record(workspace, bob, "Our tone is playful!")

    # when
    results = race([lambda: evidence_extract(evidence_id=first.pk), lambda: evidence_extract(evidence_id=second.pk)])

    # then one ORIGIN, one CONFIRM, and a single active memory
    assert sorted(outcomes[0].action for outcomes in results) == ["confirm", "origin"]
    assert Memory.objects.filter(workspace=workspace).count() == 1
    version = MemoryVersion.objects.get(workspace=workspace)
    roles = sorted(Derivation.objects.filter(version=version).values_list("role", flat=True))
    assert roles == [DerivationRole.CONFIRM, DerivationRole.ORIGIN]
    assert_memory_consistent(workspace)


def test_two_people_stating_the_same_thing_at_once_land_in_one_memory(workspace, alice, bob):
    def state(user):
        access = workspace_access(principal=user, workspace_id=workspace.pk)
        return lambda: memory_state(access=access, content="We prefer square formats.", kind="preference")

    results = race([state(alice), state(bob)])

    assert not [r for r in results if isinstance(r, BaseException)]
    assert results[0].pk == results[1].pk
    assert MemoryVersion.objects.filter(workspace=workspace).count() == 1


def test_two_corrections_at_once_make_two_versions_one_after_the_other(workspace, alice, bob):
    # given
    _, [stated] = said(workspace, alice, "Our logo is a fox.")

    def correct(user, content):
        access = workspace_access(principal=user, workspace_id=workspace.pk)
        return lambda: memory_correct(access=access, memory_id=stated.memory_id, content=content)

    # when
    results = race([correct(alice, "Our logo is an owl."), correct(bob, "Our logo is a heron.")])

    # then: versions 2 and 3, never two version 2s; one active, the chain unbroken
    assert not [r for r in results if isinstance(r, BaseException)]
    versions = list(MemoryVersion.objects.filter(memory_id=stated.memory_id).order_by("number"))
    assert [v.number for v in versions] == [1, 2, 3]
    assert [v.status for v in versions] == [VersionStatus.SUPERSEDED, VersionStatus.SUPERSEDED, VersionStatus.ACTIVE]
    assert Derivation.objects.get(version=versions[2], role=DerivationRole.SUPERSEDES).from_version_id == versions[1].pk
    assert versions[1].valid_to == versions[2].valid_from
    assert_memory_consistent(workspace)
