"""A person's own operations on memory: state, correct, confirm — scoped to their workspace, editors only."""

import pytest

from lomote.kernel.exceptions import Conflict, InvalidInput, NotFound, PermissionDenied
from memory.models import (
    Derivation,
    DerivationRole,
    Evidence,
    EvidenceKind,
    MemoryKind,
    MemoryVersion,
    Tombstone,
    VersionOperation,
    VersionStatus,
)
from memory.services.memories import memory_confirm, memory_correct, memory_state
from memory.text import content_hash
from tests.memory.statements import active, assert_memory_consistent, said
from tests.support.factories import WorkspaceFactory
from workspace.models import Event
from workspace.selectors import workspace_access

pytestmark = pytest.mark.django_db


def access_of(user, workspace):
    return workspace_access(principal=user, workspace_id=workspace.pk)


def test_a_person_states_a_memory(workspace, bob):
    # when
    memory = memory_state(
        access=access_of(bob, workspace), content="I prefer serif fonts.", kind="preference", scope="person"
    )

    # then
    [version] = memory.versions.all()
    assert (memory.subject, memory.scope, memory.person_id) == ("font", "person", bob.pk)
    assert (version.kind, version.operation, version.content) == (
        "preference",
        VersionOperation.ORIGIN,
        "I prefer serif fonts.",
    )
    [link] = Derivation.objects.filter(version=version)
    evidence = link.evidence
    assert (link.role, evidence.kind, evidence.stated_by_id) == (DerivationRole.ORIGIN, EvidenceKind.STATEMENT, bob.pk)
    assert evidence.extracted_at is not None  # applied at once: no extraction job runs on it
    assert Event.objects.filter(workspace=workspace, kind="memory.created").count() == 1


def test_stating_what_memory_holds_confirms_it(workspace, alice, bob):
    # given
    first = memory_state(access=access_of(alice, workspace), content="Our tone is playful.", kind="fact")

    # when
    again = memory_state(access=access_of(bob, workspace), content="our tone is playful", kind="fact")

    # then
    assert again.pk == first.pk
    assert first.versions.count() == 1
    assert Derivation.objects.filter(version__memory=first, role=DerivationRole.CONFIRM).count() == 1


def test_a_person_corrects_a_memory(workspace, alice, bob):
    # given
    _, [said_first] = said(workspace, alice, "Our brand's main colour is blue.")

    # when
    memory = memory_correct(
        access=access_of(bob, workspace), memory_id=said_first.memory_id, content="Our brand's main colour is teal."
    )

    # then
    v1, v2 = memory.versions.order_by("number")
    assert (v1.status, v2.status, v2.operation, v2.kind) == (
        VersionStatus.SUPERSEDED,
        VersionStatus.ACTIVE,
        VersionOperation.REFINE,
        MemoryKind.FACT,
    )
    assert v2.content == "Our brand's main colour is teal."
    roles = sorted(Derivation.objects.filter(version=v2).values_list("role", flat=True))
    assert roles == [DerivationRole.REFINE, DerivationRole.SUPERSEDES]
    assert Event.objects.filter(workspace=workspace, kind="memory.refined").count() == 1
    assert_memory_consistent(workspace)


def test_a_correction_to_the_same_words_only_confirms(workspace, alice):
    _, [stated] = said(workspace, alice, "Our tone is playful.")

    memory = memory_correct(
        access=access_of(alice, workspace), memory_id=stated.memory_id, content="Our tone is PLAYFUL"
    )

    assert memory.versions.count() == 1
    assert Derivation.objects.filter(version_id=stated.version_id, role=DerivationRole.CONFIRM).count() == 1


def test_a_correction_may_not_duplicate_another_memory(workspace, alice):
    _, [tone] = said(workspace, alice, "Our tone is playful.")
    _, [logo] = said(workspace, alice, "Our logo is a fox.")

    with pytest.raises(Conflict) as refused:
        memory_correct(access=access_of(alice, workspace), memory_id=logo.memory_id, content="Our tone is playful")

    assert refused.value.code == "memory_duplicate" and refused.value.details == {"memory": tone.memory_id}
    assert len(active(workspace)) == 2


def test_a_corrected_guess_becomes_the_persons_fact(workspace, alice):
    _, [guess] = said(workspace, None, "Our tone is playful.", kind=EvidenceKind.WEB)

    memory = memory_correct(access=access_of(alice, workspace), memory_id=guess.memory_id, content="Our tone is warm.")

    assert memory.versions.get(status=VersionStatus.ACTIVE).kind == MemoryKind.FACT


def test_a_person_confirms_a_memory(workspace, alice, bob):
    # given
    _, [stated] = said(workspace, alice, "Our logo is a fox.")

    # when
    memory_confirm(access=access_of(bob, workspace), memory_id=stated.memory_id)

    # then
    assert MemoryVersion.objects.filter(memory_id=stated.memory_id).count() == 1
    confirm = Derivation.objects.get(version_id=stated.version_id, role=DerivationRole.CONFIRM)
    assert (confirm.evidence.kind, confirm.evidence.stated_by_id, confirm.evidence.text) == ("statement", bob.pk, "")
    assert Event.objects.filter(workspace=workspace, kind="memory.confirmed").count() == 1


def test_another_workspaces_memory_is_not_found(workspace, alice, dave):
    # given
    elsewhere = WorkspaceFactory(name="Elsewhere", created_by=dave)
    _, [theirs] = said(elsewhere, dave, "Our tone is secretive.")
    mine = access_of(alice, workspace)

    # when / then
    with pytest.raises(NotFound):
        memory_correct(access=mine, memory_id=theirs.memory_id, content="Our tone is loud.")
    with pytest.raises(NotFound):
        memory_confirm(access=mine, memory_id=theirs.memory_id)
    assert MemoryVersion.objects.filter(memory_id=theirs.memory_id).count() == 1
    assert not Derivation.objects.filter(workspace=workspace).exists()


def test_a_viewer_may_not_change_memory(workspace, alice, carol):
    _, [stated] = said(workspace, alice, "Our logo is a fox.")
    viewer = access_of(carol, workspace)

    for change in (
        lambda: memory_state(access=viewer, content="Our logo is an owl.", kind="fact"),
        lambda: memory_correct(access=viewer, memory_id=stated.memory_id, content="Our logo is an owl."),
        lambda: memory_confirm(access=viewer, memory_id=stated.memory_id),
    ):
        with pytest.raises(PermissionDenied):
            change()
    assert not Evidence.objects.filter(kind=EvidenceKind.STATEMENT).exists()


@pytest.mark.parametrize(
    ("content", "kind", "scope", "code"),
    [
        ("", "fact", "workspace", "empty_memory"),
        ("x" * 2001, "fact", "workspace", "memory_too_long"),
        ("Our tone is playful.", "hypothesis", "workspace", "invalid_kind"),
        ("Our tone is playful.", "fact", "team", "invalid_scope"),
    ],
)
def test_a_statement_is_checked(workspace, alice, content, kind, scope, code):
    with pytest.raises(InvalidInput) as refused:
        memory_state(access=access_of(alice, workspace), content=content, kind=kind, scope=scope)
    assert refused.value.code == code


def test_forgotten_words_are_not_stated_again(workspace, alice):
    Tombstone.objects.create(workspace=workspace, content_hash=content_hash("Our logo is a fox"))

    with pytest.raises(Conflict) as refused:
        memory_state(access=access_of(alice, workspace), content="Our logo is a fox.", kind="fact")

    assert refused.value.code == "forgotten"
