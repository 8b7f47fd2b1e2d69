"""Deleting an artifact through its confirmation card (issue 15 item 4; DESIGN §5: irreversible operations are
always confirmed, by a person).

POST …/artifacts/<id>/delete/ opens the card (202); only a person's confirm deletes; then the artifact is gone
from listings, search and its collections, and the tasks that had seen it get a change notice.
"""

import pytest
from django.core.files.base import ContentFile

from agents.models import Card, CardStatus
from agents.runtime.context import context_preview
from tests.support import media_samples as media
from tests.support.factories import TaskFactory, WorkspaceFactory
from tests.support.rest import assert_error, issue_api_key, key_client
from workspace.models import Artifact, AssetCollectionItem, ChangeNotice, Event, Role
from workspace.selectors import artifact_search, notices_pending
from workspace.services.artifacts import artifact_create
from workspace.services.collections import collection_create
from workspace.services.notices import artifact_seen
from workspace.services.uploads import artifact_upload

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def cat(workspace, alice):
    return artifact_upload(
        workspace_id=workspace.pk,
        file=ContentFile(media.png_bytes(), "cat.png"),
        title="Cat photo",
        tags=["cat", "photo"],
        author_user=alice,
    )


def ask_url(workspace, artifact_id: int) -> str:
    return f"/api/v1/workspaces/{workspace.pk}/artifacts/{artifact_id}/delete/"


def act_url(workspace, card_id: int) -> str:
    return f"/api/v1/workspaces/{workspace.pk}/cards/{card_id}/actions/"


def ask(client, workspace, artifact_id: int) -> dict:
    response = client.post(ask_url(workspace, artifact_id))
    assert response.status_code == 202, response.content
    return response.json()


def live(artifact_id: int) -> bool:
    return Artifact.objects.filter(pk=artifact_id, deleted_at__isnull=True).exists()


def test_asking_opens_a_confirmation_card_and_deletes_nothing(workspace, bob, client_for, cat):
    # when an editor asks to delete the cat photo
    body = ask(client_for(bob), workspace, cat.pk)

    # then 202 with an open confirm card, for exactly this artifact, needing a person
    card = body["card"]
    assert (body["artifact"], body["status"]) == (cat.pk, "awaiting_confirmation")
    assert (card["kind"], card["status"], card["actions"]) == ("confirm", "open", ["confirm", "adjust"])
    assert card["title"] == "Delete “Cat photo” for good?" and "cannot be undone" in card["body"]
    assert card["payload"]["artifact"] == cat.pk and card["payload"]["reason"] == "irreversible"
    assert live(cat.pk)
    assert Event.objects.filter(workspace=workspace, kind="card.opened", data__card=card["id"]).exists()
    # and asking again while it is open gives the same card
    assert ask(client_for(bob), workspace, cat.pk)["card"]["id"] == card["id"]
    assert Card.objects.filter(payload__source="artifact_delete").count() == 1


def test_an_api_key_can_ask_but_cannot_confirm(workspace, cat):
    _, raw = issue_api_key(workspace, role=Role.EDITOR)
    client = key_client(raw)
    card = ask(client, workspace, cat.pk)["card"]

    response = client.post(act_url(workspace, card["id"]), {"action": "confirm"}, format="json")

    assert assert_error(response, 403, "person_required")["details"]["action"] == "confirm"
    assert live(cat.pk) and Card.objects.get(pk=card["id"]).status == CardStatus.OPEN


def test_a_person_confirms_and_the_artifact_is_gone_everywhere(workspace, alice, bob, client_for, cat):
    # given two tasks that had seen the photo, a collection holding it, and a pending card
    seen_v1, seen_later = TaskFactory(workspace=workspace), TaskFactory(workspace=workspace, title="Cat video")
    artifact_seen(workspace_id=workspace.pk, artifact_id=cat.pk, task_id=seen_v1.pk, version=1)
    artifact_seen(workspace_id=workspace.pk, artifact_id=cat.pk, task_id=seen_later.pk, version=1)
    never_looked = TaskFactory(workspace=workspace, title="Posters")
    other = artifact_create(workspace_id=workspace.pk, kind="document", title="Cat notes", author_user=alice)
    pack = collection_create(workspace_id=workspace.pk, name="Pets", artifact_ids=[cat.pk, other.pk])
    card = ask(client_for(bob), workspace, cat.pk)["card"]

    # when alice (a person) confirms the card
    response = client_for(alice).post(act_url(workspace, card["id"]), {"action": "confirm"}, format="json")

    # then the card is resolved with what happened, and the artifact is deleted
    assert response.status_code == 200, response.content
    resolved = response.json()
    assert resolved["status"] == "resolved" and resolved["resolution"]["outcome"]["deleted"] is True
    artifact = Artifact.objects.get(pk=cat.pk)
    assert artifact.is_deleted and artifact.deleted_at is not None
    # and listings, search and the detail no longer show it
    listed = client_for(bob).get(f"/api/v1/workspaces/{workspace.pk}/artifacts/").json()["results"]
    assert [a["id"] for a in listed] == [other.pk]
    searched = client_for(bob).get(f"/api/v1/workspaces/{workspace.pk}/artifacts/?q=cat").json()["results"]
    assert cat.pk not in [a["id"] for a in searched] and other.pk in [a["id"] for a in searched]
    assert cat.pk not in [a.pk for a in artifact_search(workspace_id=workspace.pk, query="cat photo")]
    assert_error(client_for(bob).get(f"/api/v1/workspaces/{workspace.pk}/artifacts/{cat.pk}/"), 404, "not_found")
    file_url = f"/api/v1/workspaces/{workspace.pk}/artifacts/{cat.pk}/versions/1/file"
    assert_error(client_for(bob).get(file_url), 404, "not_found")
    # and it left its collection
    assert list(AssetCollectionItem.objects.filter(collection=pack).values_list("artifact_id", "position")) == [
        (other.pk, 0)
    ]
    # and each task that had seen it has a notice saying who deleted it; the others have none
    for task in (seen_v1, seen_later):
        [notice] = notices_pending(task_id=task.pk)
        assert "“Cat photo”" in notice.summary and "was deleted by alice" in notice.summary
    assert notices_pending(task_id=never_looked.pk) == []
    # and the task's next decision is told
    built = context_preview(seen_v1).built
    assert "was deleted by alice" in built.request.messages[-1]["content"]
    assert built.notice_ids == [notices_pending(task_id=seen_v1.pk)[0].pk]
    # and the log says so
    event = Event.objects.filter(workspace=workspace, kind="artifact.deleted").get()
    assert event.data["artifact"] == cat.pk and event.data["by"]["username"] == "alice"
    assert sorted(event.data["tasks_told"]) == sorted([seen_v1.pk, seen_later.pk])
    assert event.data["collections"] == [pack.pk]


def test_confirming_twice_is_409_and_asking_after_is_404(workspace, alice, client_for, cat):
    card = ask(client_for(alice), workspace, cat.pk)["card"]
    assert (
        client_for(alice).post(act_url(workspace, card["id"]), {"action": "confirm"}, format="json").status_code == 200
    )
    deleted_at = Artifact.objects.get(pk=cat.pk).deleted_at

    again = client_for(alice).post(act_url(workspace, card["id"]), {"action": "confirm"}, format="json")

    assert_error(again, 409, "card_resolved")
    assert Artifact.objects.get(pk=cat.pk).deleted_at == deleted_at
    assert Event.objects.filter(workspace=workspace, kind="artifact.deleted").count() == 1
    assert_error(client_for(alice).post(ask_url(workspace, cat.pk)), 404, "not_found")


def test_adjusting_the_card_keeps_the_artifact(workspace, alice, client_for, cat):
    card = ask(client_for(alice), workspace, cat.pk)["card"]
    response = client_for(alice).post(
        act_url(workspace, card["id"]), {"action": "adjust", "text": "keep it after all"}, format="json"
    )
    assert response.status_code == 200 and response.json()["resolution"]["action"] == "adjust"
    assert live(cat.pk) and not ChangeNotice.objects.exists()
    # and a new request opens a new card
    assert ask(client_for(alice), workspace, cat.pk)["card"]["id"] != card["id"]


def test_two_open_cards_for_one_artifact_delete_it_once(workspace, alice, client_for, cat):
    from agents.services.artifact_delete import SOURCE
    from agents.services.cards import card_open_confirm

    # given a second card (two requests raced past each other)
    first = ask(client_for(alice), workspace, cat.pk)["card"]
    payload = {"source": SOURCE, "artifact": cat.pk, "reason": "irreversible"}
    second = card_open_confirm(workspace_id=workspace.pk, title="Delete?", body="", payload=payload)

    client_for(alice).post(act_url(workspace, first["id"]), {"action": "confirm"}, format="json")
    response = client_for(alice).post(act_url(workspace, second.pk), {"action": "confirm"}, format="json")

    # then the second confirmation resolves its card with nothing left to do
    assert response.status_code == 200
    assert response.json()["resolution"]["outcome"] == {"artifact": cat.pk, "deleted": False, "already_deleted": True}
    assert Event.objects.filter(workspace=workspace, kind="artifact.deleted").count() == 1


def test_a_viewer_cannot_ask_and_an_outsider_sees_nothing(workspace, carol, dave, client_for, cat):
    assert_error(client_for(carol).post(ask_url(workspace, cat.pk)), 403, "role_required")
    assert_error(client_for(dave).post(ask_url(workspace, cat.pk)), 404, "not_found")
    elsewhere = WorkspaceFactory(name="Elsewhere", created_by=dave)
    assert_error(client_for(dave).post(ask_url(elsewhere, cat.pk)), 404, "not_found")
    assert not Card.objects.exists() and live(cat.pk)


def test_a_viewer_cannot_confirm_a_card_an_editor_opened(workspace, bob, carol, client_for, cat):
    card = ask(client_for(bob), workspace, cat.pk)["card"]
    response = client_for(carol).post(act_url(workspace, card["id"]), {"action": "confirm"}, format="json")
    assert_error(response, 403, "role_required")
    assert live(cat.pk)
