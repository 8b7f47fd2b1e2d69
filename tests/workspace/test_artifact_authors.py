"""Version authors carry the person's username (issue 16 item 6: names, not ids), in the API and in the log."""

import pytest
from django.urls import reverse

from workspace.models import ArtifactKind, Event
from workspace.services.artifacts import artifact_create, artifact_version_add

pytestmark = pytest.mark.django_db


def detail(workspace_id: int, artifact_id: int) -> str:
    return reverse("artifact-detail", kwargs={"workspace_id": workspace_id, "artifact_id": artifact_id})


def test_it_names_the_person_task_or_system_that_wrote_each_version(workspace, alice, bob, carol, client_for):
    # given a document alice wrote, bob changed, a task rewrote and the system touched
    doc = artifact_create(
        workspace_id=workspace.pk, kind=ArtifactKind.DOCUMENT, title="Brief", content="v1", author_user=alice
    )
    artifact_version_add(workspace_id=workspace.pk, artifact_id=doc.pk, base_version=1, content="v2", author_user=bob)
    artifact_version_add(
        workspace_id=workspace.pk, artifact_id=doc.pk, base_version=2, content="v3", author_task_id=7, author_turn_id=9
    )
    artifact_version_add(workspace_id=workspace.pk, artifact_id=doc.pk, base_version=3, content="v4")

    # when a viewer reads it
    response = client_for(carol).get(detail(workspace.pk, doc.pk))

    # then each version says who wrote it, people by username
    assert response.status_code == 200, response.content
    authors = {v["number"]: v["author"] for v in response.json()["versions"]}
    assert authors == {
        1: {"type": "user", "id": alice.pk, "username": "alice"},
        2: {"type": "user", "id": bob.pk, "username": "bob"},
        3: {"type": "task", "task": 7, "turn": 9},
        4: {"type": "system"},
    }
    # and the log's version event names bob too
    added = Event.objects.filter(workspace=workspace, kind="artifact.version_added").order_by("seq").first()
    assert added.data["author"] == {"type": "user", "id": bob.pk, "username": "bob"}


def test_it_reads_the_authors_of_many_versions_in_a_fixed_number_of_queries(
    workspace, alice, bob, client_for, django_assert_max_num_queries
):
    # given a document with forty versions by two people
    doc = artifact_create(
        workspace_id=workspace.pk, kind=ArtifactKind.DOCUMENT, title="Brief", content="0", author_user=alice
    )
    for n in range(1, 40):
        artifact_version_add(
            workspace_id=workspace.pk,
            artifact_id=doc.pk,
            base_version=n,
            content=str(n),
            author_user=(alice, bob)[n % 2],
        )
    client = client_for(alice)

    # when it is read, then the authors' names do not cost a query per version
    with django_assert_max_num_queries(8):
        response = client.get(detail(workspace.pk, doc.pk))
    names = {v["author"]["username"] for v in response.json()["versions"]}
    assert names == {"alice", "bob"}


def test_it_shows_a_version_whose_author_was_deleted_as_the_systems(workspace, alice, make_user, client_for):
    # given a version by someone whose account was deleted since
    frank = make_user("frank")
    doc = artifact_create(
        workspace_id=workspace.pk, kind=ArtifactKind.DOCUMENT, title="Brief", content="v1", author_user=frank
    )
    frank.delete()

    # then the version reads, without a name that no longer exists
    [version] = client_for(alice).get(detail(workspace.pk, doc.pk)).json()["versions"]
    assert version["author"] == {"type": "system"}
