"""Forget reaches everything derived (issue 13, the canary): a unique string a person stated reaches a memory,
the profile, an episode, the search index and a later agent output; after the forget — confirmed on a card by a
person — it is in no memory, summary, profile or index row and in no context built afterwards, for any task,
while a fact with a second, independent source survives with that provenance."""

import json

import pytest
from django.db import transaction
from rest_framework.test import APIClient

from agents.models import Card, CardStatus, InboxMessage, Task
from agents.runtime.loop import turn_run
from agents.services.card_actions import card_act
from agents.services.memory_forget import memory_forget_ask
from lomote.kernel.exceptions import InvalidInput, NotFound, PermissionDenied
from memory.models import (
    Derivation,
    DerivationRole,
    Episode,
    Evidence,
    EvidenceKind,
    ForgetRequest,
    ForgetStatus,
    MemoryIndex,
    MemoryVersion,
    ProfileEntry,
    VersionStatus,
)
from memory.services.episodes import episode_write
from memory.services.evidence import evidence_record
from memory.services.extraction import evidence_extract
from memory.services.profile import profile_current, profile_rebuild
from tests.agents.conftest import says
from tests.support.rest import assert_error
from tests.support.tooling import call_tool, tool_context
from workspace.selectors import workspace_access

pytestmark = [pytest.mark.django_db(transaction=True)]

CANARY = "Zorblax-7731"


def _said(task: Task, person, text: str) -> Evidence:
    """A person's message in the task, consumed, and what memory extracted from it."""
    message = InboxMessage.objects.create(task=task, author=person, source="person", text=text, status="consumed")
    evidence = evidence_record(
        workspace_id=task.workspace_id,
        kind=EvidenceKind.TASK_MESSAGE,
        source_id=str(message.pk),
        text=text,
        stated_by_id=person.pk,
        task_id=task.pk,
    )
    evidence_extract(evidence_id=evidence.pk)
    return evidence


def _everything_stored(workspace) -> str:
    """Every memory-side text of the workspace, in one string."""
    texts = [
        *MemoryVersion.objects.filter(workspace=workspace).values_list("content", flat=True),
        *Episode.objects.filter(workspace=workspace).values_list("summary", flat=True),
        *ProfileEntry.objects.filter(profile__workspace=workspace).values_list("text", flat=True),
        *MemoryIndex.objects.filter(workspace=workspace).values_list("document", flat=True),
        *Evidence.objects.filter(workspace=workspace).values_list("text", flat=True),
    ]
    return "\n".join(texts).casefold()


@pytest.fixture
def other_task(workspace, alice):
    return Task.objects.create(workspace=workspace, title="Cat video", brief="Animate the cat", created_by=alice)


def test_a_forgotten_statement_leaves_no_trace_in_memory_or_in_any_later_context(
    task, other_task, tools, script, workspace, alice, bob, settings
):
    # given the person stated the canary with a tagline, and the tagline again, independently, elsewhere
    first = _said(task, alice, f"Our secret mascot is {CANARY}. Our tagline is Bake it warm.")
    second = _said(other_task, bob, "Our tagline is Bake it warm.")
    mascot = MemoryVersion.objects.get(workspace=workspace, content__icontains=CANARY)
    tagline = MemoryVersion.objects.get(workspace=workspace, content__icontains="bake it warm")
    profile = profile_rebuild(workspace_id=workspace.pk, reason="test")
    episode_write(
        workspace_id=workspace.pk,
        task_id=task.pk,
        title="Retro posters",
        summary=f"The person named the mascot {CANARY}. Three posters were made.",
        period_start=task.created_at,
        period_end=task.created_at,
        evidence_ids=[first.pk],
        version_ids=[mascot.pk],
    )
    # and the agent repeated it in its own words, in the task's history
    settings.LOMOTE_MAX_STEPS_PER_TURN = 1
    script([says(f"I'll put {CANARY} on every poster.", ("test_noop", {}))])
    turn = tools.start_turn(task)
    turn_run(turn_id=turn.pk, generation=turn.generation)
    assert CANARY.casefold() in _everything_stored(workspace)
    assert any(CANARY in e.text for e in profile.entries.all())

    # when the person asks to forget the first message, and confirms on the card
    access = workspace_access(principal=alice, workspace_id=workspace.pk)
    request, card = memory_forget_ask(access=access, evidence={"type": "task_message", "id": int(first.source_id)})
    card_act(access=access, card_id=card.pk, action="confirm")

    # then the card no longer quotes it
    assert CANARY not in Card.objects.get(pk=card.pk).body

    # and the canary is in no memory, episode, profile entry, index row or stored evidence
    request.refresh_from_db()
    assert request.status == ForgetStatus.DONE
    assert CANARY.casefold() not in _everything_stored(workspace)
    assert MemoryVersion.objects.get(pk=mascot.pk).status == VersionStatus.FORGOTTEN
    assert profile_current(workspace.pk).number > profile.number

    # and the tagline survives, rebuilt from its independent source and linked to it alone
    survivor = MemoryVersion.objects.get(workspace=workspace, status=VersionStatus.ACTIVE, content__icontains="bake it")
    sources = set(Derivation.objects.filter(version=survivor).values_list("evidence_id", flat=True))
    assert sources == {second.pk} and survivor.pk != tagline.pk

    # and no context built afterwards shows it: the preview of both tasks, and what the model is sent
    client = APIClient()
    client.force_authenticate(alice)
    for each in (task, other_task):
        preview = client.get(f"/api/v1/workspaces/{workspace.pk}/tasks/{each.pk}/context/")
        assert preview.status_code == 200
        assert CANARY.casefold() not in json.dumps(preview.json(), ensure_ascii=False).casefold()
    model = script([says("Going on.")])
    InboxMessage.objects.create(task=task, author=alice, source="person", text="Go on with the posters.")
    turn = tools.start_turn(task)
    turn_run(turn_id=turn.pk, generation=turn.generation)
    sent = json.dumps([r.messages for r in model.requests], ensure_ascii=False).casefold()
    assert model.requests and CANARY.casefold() not in sent
    # and reading the log back does not bring it back either
    history = call_tool("read_history", {"from_step": 1, "to_step": 1}, tool_context(task))
    assert CANARY.casefold() not in json.dumps(history.content, ensure_ascii=False).casefold()

    # the agent's own earlier line is shown as removed, and the rest of the conversation is still there
    assert "removed: this relied on something the person asked to forget" in sent
    assert "go on with the posters" in sent


def test_forgetting_twice_changes_nothing_more_and_asks_a_person(task, workspace, alice, bob):
    evidence = _said(task, alice, f"Our secret mascot is {CANARY}.")
    owner = workspace_access(principal=alice, workspace_id=workspace.pk)
    target = {"type": "task_message", "id": int(evidence.source_id)}

    request, card = memory_forget_ask(access=owner, evidence=target)
    again, same_card = memory_forget_ask(access=owner, evidence=target)
    assert (again.pk, same_card.pk) == (request.pk, card.pk)

    card_act(access=owner, card_id=card.pk, action="confirm")
    done, no_card = memory_forget_ask(access=owner, evidence=target)
    assert done.pk == request.pk and no_card is None
    assert ForgetRequest.objects.count() == 1
    assert Card.objects.get(pk=card.pk).status == CardStatus.RESOLVED


def test_bad_forgets_are_refused_and_change_nothing(task, workspace, alice, make_user):
    from tests.support.factories import WorkspaceFactory

    evidence = _said(task, alice, f"Our secret mascot is {CANARY}.")
    stranger = make_user("stranger")
    elsewhere = workspace_access(principal=stranger, workspace_id=WorkspaceFactory(created_by=stranger).pk)
    mascot = MemoryVersion.objects.get(workspace=workspace, content__icontains=CANARY)

    with pytest.raises(NotFound):
        memory_forget_ask(access=elsewhere, memory_id=mascot.memory_id)
    with pytest.raises(NotFound):
        memory_forget_ask(access=elsewhere, evidence={"type": "task_message", "id": int(evidence.source_id)})
    owner = workspace_access(principal=alice, workspace_id=workspace.pk)
    with pytest.raises(InvalidInput) as unknown:
        memory_forget_ask(access=owner, evidence={"type": "voicemail", "id": 1})
    assert unknown.value.code == "invalid_evidence_type"
    assert not ForgetRequest.objects.exists() and not Card.objects.exists()
    assert MemoryVersion.objects.get(pk=mascot.pk).status == VersionStatus.ACTIVE


def test_an_api_key_cannot_confirm_a_forget(task, workspace, alice):
    from tests.support.rest import issue_api_key
    from workspace.authentication import ApiKeyPrincipal

    evidence = _said(task, alice, f"Our secret mascot is {CANARY}.")
    owner = workspace_access(principal=alice, workspace_id=workspace.pk)
    _, card = memory_forget_ask(access=owner, evidence={"type": "task_message", "id": int(evidence.source_id)})
    key, _ = issue_api_key(workspace, role="editor")
    keyed = workspace_access(principal=ApiKeyPrincipal(key), workspace_id=workspace.pk)

    with pytest.raises(PermissionDenied):
        card_act(access=keyed, card_id=card.pk, action="confirm")
    assert MemoryVersion.objects.filter(workspace=workspace, content__icontains=CANARY).exists()
    assert Derivation.objects.filter(evidence=evidence, role=DerivationRole.ORIGIN).exists()


def test_the_forget_endpoint_asks_for_a_card_and_refuses_bad_input(task, workspace, alice, client_for):
    evidence = _said(task, alice, f"Our secret mascot is {CANARY}.")
    url = f"/api/v1/workspaces/{workspace.pk}/memories/forget/"
    client = client_for(alice)
    target = {"evidence": {"type": "task_message", "id": int(evidence.source_id)}}

    # bad input: a clear error, nothing asked
    assert_error(
        client.post(url, {"evidence": {"type": "voicemail", "id": 1}}, format="json"), 400, "invalid_evidence_type"
    )
    assert_error(client.post(url, {"memory": "12"}, format="json"), 400, "invalid")
    assert_error(client.post(url, {}, format="json"), 400, "invalid")
    assert_error(client.post(url, {"memory": 10**9}, format="json"), 404, "not_found")
    assert not ForgetRequest.objects.exists()

    # asking: 202 with the card a person confirms; asking again: the same card
    asked = client.post(url, target, format="json")
    assert asked.status_code == 202 and asked.json()["status"] == "awaiting_confirmation"
    assert client.post(url, target, format="json").json()["card"] == asked.json()["card"]
    confirmed = client.post(
        f"/api/v1/workspaces/{workspace.pk}/cards/{asked.json()['card']}/actions/", {"action": "confirm"}, format="json"
    )
    assert confirmed.status_code == 200

    # once done: 200, no card, nothing more happens
    again = client.post(url, target, format="json")
    assert (again.status_code, again.json()["status"], again.json()["card"]) == (200, "done", None)
    assert ForgetRequest.objects.count() == 1


def test_the_seeds_example_blue_then_off_white_then_forget_the_blue(task, workspace, alice, client_for):
    # given "our brand's main colour is blue", then "blue with an off-white feels softer"
    first = _said(task, alice, "Our brand's main colour is blue.")
    v1 = MemoryVersion.objects.get(workspace=workspace, status=VersionStatus.ACTIVE)
    assert (v1.number, v1.operation) == (1, "origin")
    second = _said(task, alice, "Blue with an off-white feels softer.")
    v1.refresh_from_db()
    v2 = MemoryVersion.objects.get(workspace=workspace, status=VersionStatus.ACTIVE)
    assert (v2.memory_id, v2.number, v2.operation, v1.status) == (v1.memory_id, 2, "refine", VersionStatus.SUPERSEDED)
    assert "off-white" in v2.content.casefold() and "blue" in v2.content.casefold()
    before = profile_current(workspace.pk)
    assert any("off-white" in e.text for e in before.entries)

    # when the person forgets the first statement
    access = workspace_access(principal=alice, workspace_id=workspace.pk)
    _, card = memory_forget_ask(access=access, evidence={"type": "task_message", "id": int(first.source_id)})
    card_act(access=access, card_id=card.pk, action="confirm")

    # then v1 and v2 are erased, and the memory is rebuilt from what remains: the off-white statement alone
    for version in (v1, v2):
        version.refresh_from_db()
        assert (version.status, version.content) == (VersionStatus.FORGOTTEN, "")
    rebuilt = MemoryVersion.objects.get(workspace=workspace, status=VersionStatus.ACTIVE)
    assert rebuilt.memory_id == v1.memory_id and rebuilt.operation == "reextract"
    assert "off-white" in rebuilt.content.casefold() and "main colour" not in rebuilt.content.casefold()
    assert set(Derivation.objects.filter(version=rebuilt).values_list("evidence_id", flat=True)) == {second.pk}
    after = profile_current(workspace.pk)
    assert after.number > before.number
    assert not any("main colour" in e.text.casefold() for e in after.entries)

    # and nothing of the original statement is in a later context
    preview = client_for(alice).get(f"/api/v1/workspaces/{workspace.pk}/tasks/{task.pk}/context/").json()
    assert "main colour" not in json.dumps(preview, ensure_ascii=False).casefold()


def test_a_finished_task_becomes_an_episode_linked_to_what_it_drew_on(task, workspace, alice):
    from agents.services.task_status import task_status_set

    evidence = _said(task, alice, "Our tagline is Bake it warm.")
    with transaction.atomic():
        locked = Task.objects.select_for_update().get(pk=task.pk)
        task_status_set(locked, "active")
        task_status_set(locked, "done", reason="checklist_complete")

    episode = Episode.objects.get(workspace=workspace, task_id=task.pk)
    assert episode.title == task.title and episode.summary
    assert Derivation.objects.filter(episode=episode, evidence=evidence, role=DerivationRole.SUMMARISES).exists()


def test_another_persons_own_memory_cannot_be_named_to_forget(workspace, alice, bob):
    from memory.services.memories import memory_state

    mine = memory_state(
        access=workspace_access(principal=bob, workspace_id=workspace.pk),
        content="I prefer tea",
        kind="preference",
        scope="person",
    )
    with pytest.raises(NotFound):
        memory_forget_ask(access=workspace_access(principal=alice, workspace_id=workspace.pk), memory_id=mine.pk)
    assert not ForgetRequest.objects.exists()
