"""Renaming an artifact (`PATCH …/artifacts/<id>/`): what the Flow editor's "rename the Flow" calls."""

import pytest
from django.urls import reverse

from tests.support.rest import assert_error
from workspace.flows.authoring import flow_create
from workspace.models import Artifact, Event
from workspace.services.artifacts import artifact_delete

pytestmark = pytest.mark.django_db

GRAPH = {"nodes": {"brief": {"type": "text_input"}, "end": {"type": "finish"}}, "edges": [["brief", "end"]],
         "start": "brief"}  # fmt: skip


def _rename(client, artifact, body):
    url = reverse("artifact-detail", kwargs={"workspace_id": artifact.workspace_id, "artifact_id": artifact.pk})
    return client.patch(url, body, format="json")


def test_it_renames_a_flow_without_a_new_version_and_logs_it(workspace, alice, bob, client_for):
    flow = flow_create(workspace_id=workspace.pk, title="Untitled Flow", graph=GRAPH, author_user=alice)

    response = _rename(client_for(bob), flow, {"title": "  Jazz night posters "})

    assert response.status_code == 200, response.content
    assert (response.json()["title"], response.json()["current_version"]) == ("Jazz night posters", 1)
    assert Artifact.objects.get(pk=flow.pk).title == "Jazz night posters"
    event = Event.objects.get(workspace=workspace, kind="artifact.renamed")
    assert event.data["artifact"] == flow.pk and event.data["was"] == "Untitled Flow"
    assert event.data["by"]["username"] == "bob"


def test_the_same_title_changes_nothing(workspace, alice, client_for):
    flow = flow_create(workspace_id=workspace.pk, title="Posters", graph=GRAPH, author_user=alice)

    assert _rename(client_for(alice), flow, {"title": "Posters"}).status_code == 200
    assert not Event.objects.filter(kind="artifact.renamed").exists()


@pytest.mark.parametrize(
    "body", [{"title": ""}, {"title": "   "}, {"title": "x" * 301}, {"title": 5}, {"name": "x"}, {}]
)
def test_it_refuses_a_title_it_cannot_keep(workspace, alice, client_for, body):
    flow = flow_create(workspace_id=workspace.pk, title="Posters", graph=GRAPH, author_user=alice)

    assert_error(_rename(client_for(alice), flow, body), 400, "invalid")
    assert Artifact.objects.get(pk=flow.pk).title == "Posters"


def test_a_deleted_artifact_is_not_found(workspace, alice, client_for):
    flow = flow_create(workspace_id=workspace.pk, title="Posters", graph=GRAPH, author_user=alice)
    artifact_delete(workspace_id=workspace.pk, artifact_id=flow.pk)

    assert_error(_rename(client_for(alice), flow, {"title": "Back"}), 404, "not_found")
