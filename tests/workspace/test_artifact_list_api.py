import pytest
from django.db import transaction

from workspace.services.artifacts import artifact_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def artifacts(workspace, alice):
    with transaction.atomic():
        return [
            artifact_create(
                workspace_id=workspace.pk, kind="document", title="Storyboard for the teaser", author_user=alice
            ),
            artifact_create(workspace_id=workspace.pk, kind="document", title="Press release", author_user=alice),
        ]


def url(workspace, query=""):
    return f"/api/v1/workspaces/{workspace.pk}/artifacts/{query}"


def test_it_lists_the_workspace_artifacts_to_any_member(workspace, carol, client_for, artifacts):
    response = client_for(carol).get(url(workspace))
    assert response.status_code == 200
    assert [a["title"] for a in response.json()["results"]] == ["Press release", "Storyboard for the teaser"]


def test_it_narrows_by_kind_and_words(workspace, bob, client_for, artifacts):
    body = client_for(bob).get(url(workspace, "?kind=document&q=storyboard")).json()
    assert [a["id"] for a in body["results"]] == [artifacts[0].pk]
    assert client_for(bob).get(url(workspace, "?kind=image")).json()["results"] == []


def test_it_hides_the_list_from_outsiders_and_refuses_bad_filters(workspace, dave, bob, client_for, artifacts):
    assert client_for(dave).get(url(workspace)).status_code == 404
    response = client_for(bob).get(url(workspace, "?kind=spaceship"))
    assert response.status_code == 400 and response.json()["error"]["code"] == "invalid"


def test_it_gives_the_current_versions_media_type_for_the_grid(workspace, bob, client_for, alice):
    from django.core.files.base import ContentFile

    with transaction.atomic():
        image = artifact_create(
            workspace_id=workspace.pk,
            kind="image",
            title="Poster",
            file=ContentFile(b"\x89PNG", "p.png"),
            media_type="image/png",
            author_user=alice,
        )
    [row] = client_for(bob).get(url(workspace, "?kind=image")).json()["results"]
    assert (row["id"], row["media_type"], row["current_version"]) == (image.pk, "image/png", 1)
