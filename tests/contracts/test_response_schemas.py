"""Responses that did not match the published schema (found by schemathesis, issue 10), checked one by one.

Each answer goes through the same validation schemathesis applies (tests/support/openapi.py).
"""

import json

import pytest
from django.conf import settings
from django.core.files.base import ContentFile
from rest_framework.test import APIClient

from agents.services.tasks import task_create
from billing.services.policy import spend_policy_update
from tests.contracts.world import FLOW
from tests.support.openapi import assert_conforms, published_schema
from workspace.flows.authoring import flow_create
from workspace.models import SERVED_MEDIA_TYPES, UNDECLARED_MEDIA_TYPE
from workspace.selectors import workspace_access
from workspace.services.artifacts import artifact_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner(workspace, alice, client_for):
    return client_for(alice), workspace_access(principal=alice, workspace_id=workspace.pk)


def test_it_documents_the_default_spend_policy_as_never_updated(owner, workspace):
    client, _ = owner

    # when the owner reads the policy nobody has changed yet
    response = client.get(f"/api/v1/workspaces/{workspace.pk}/billing/policy/")

    # then it conforms: the defaults, with no update time
    assert_conforms(response)
    assert (response.json()["is_default"], response.json()["updated_at"]) == (True, None)


def test_it_documents_the_updated_policy_with_its_time(owner, workspace):
    client, access = owner
    # given an owner changed the policy
    spend_policy_update(access=access, no_confirm_threshold=50)

    # when it is read
    response = client.get(f"/api/v1/workspaces/{workspace.pk}/billing/policy/")

    # then it conforms and says when
    assert_conforms(response)
    assert response.json()["is_default"] is False and response.json()["updated_at"]


def test_it_documents_the_balance_and_topup_of_a_workspace_with_the_default_policy(owner, workspace):
    client, _ = owner

    # when the owner reads the balance, then tops up
    balance = client.get(f"/api/v1/workspaces/{workspace.pk}/billing/balance/")
    topup = client.post(f"/api/v1/workspaces/{workspace.pk}/billing/topup/", {"amount": 10}, format="json")

    # then both conform, the policy inside them included
    assert_conforms(balance)
    assert_conforms(topup)
    assert topup.json()["available"] == 10


def test_it_documents_the_lease_of_an_embedded_model(owner, workspace):
    client, access = owner
    # given a task whose first turn is leased to the embedded planner (no endpoint)
    task = task_create(access=access, title="Jazz posters", brief="Two posters for a jazz night")

    # when its log is read
    response = client.get(f"/api/v1/workspaces/{workspace.pk}/tasks/{task.pk}/log/")

    # then it conforms: the lease names the provider and model, and no endpoint
    assert_conforms(response)
    lease = response.json()["results"][0]["model_lease"]
    assert (lease["provider"], lease["base_url"]) == ("scripted", None)


def test_it_documents_the_media_type_a_version_file_is_served_with(owner, workspace, alice):
    client, _ = owner
    # given an image artifact
    image = artifact_create(
        workspace_id=workspace.pk,
        kind="image",
        title="Poster",
        file=ContentFile(b"\x89PNG\r\n\x1a\n", "poster.png"),
        media_type="image/png",
        author_user=alice,
    )

    # when its file is fetched
    response = client.get(f"/api/v1/workspaces/{workspace.pk}/artifacts/{image.pk}/versions/1/file")

    # then it is served as what it is, and the schema says a version comes in its own media type
    assert response["Content-Type"] == "image/png"
    assert_conforms(response)


FILE_CASES = {
    # kind, stored media type, file bytes (None: the version holds text) -> the Content-Type it is served with
    "flow": ("flow", "application/json", None, "application/json; charset=utf-8"),
    "markdown": ("document", "text/markdown", None, "text/markdown; charset=utf-8"),
    "plain text": ("document", "text/plain", None, "text/plain; charset=utf-8"),
    "gltf": ("3d", "model/gltf+json", b'{"asset": {"version": "2.0"}, "scenes": []}', "model/gltf+json"),
    "glb": ("3d", "model/gltf-binary", b"glTF\x02\x00\x00\x00", "model/gltf-binary"),
    "mp4": ("video", "video/mp4", b"\x00\x00\x00\x18ftypmp42", "video/mp4"),
    "animated webp": ("video", "image/webp", b"RIFF\x00\x00\x00\x00WEBPVP8X", "image/webp"),
    "an outside provider's type": ("video", "video/x-flv", b"FLV\x01", "application/octet-stream"),
    "an asset collection's JSON": ("asset_collection", "application/json", None, "application/octet-stream"),
}


@pytest.mark.parametrize("case", FILE_CASES.values(), ids=FILE_CASES.keys())
def test_it_serves_each_kind_in_a_media_type_its_schema_declares(owner, workspace, alice, case):
    client, _ = owner
    kind, media_type, data, served_as = case
    # given a version of that kind (a Flow through the authoring service, so its text is a real graph)
    if kind == "flow":
        artifact = flow_create(workspace_id=workspace.pk, title="Poster flow", graph=FLOW, author_user=alice)
    else:
        stored = {"file": ContentFile(data, "v1.bin")} if data is not None else {"content": '{"items": [3, 1]}'}
        artifact = artifact_create(
            workspace_id=workspace.pk, kind=kind, title="One", media_type=media_type, author_user=alice, **stored
        )

    # when its file is fetched
    response = client.get(f"/api/v1/workspaces/{workspace.pk}/artifacts/{artifact.pk}/versions/1/file")

    # then it comes in a type the schema declares for the operation, with a body that matches what it declares
    assert (response.status_code, response["Content-Type"]) == (200, served_as)
    assert_conforms(response)
    if kind == "flow":
        assert set(response.json()) == {"nodes", "edges", "start"}


def test_it_declares_every_media_type_a_kind_is_served_in_and_no_other():
    # when the published schema is read for the version file
    operation = published_schema().find_operation_by_path("GET", "/api/v1/workspaces/1/artifacts/2/versions/3/file")
    declared = set(operation.definition.raw["responses"]["200"]["content"])

    # then it names each kind's media types and the one for anything else, and a Flow's JSON is not "binary"
    served = {media_type for kind_types in SERVED_MEDIA_TYPES.values() for media_type in kind_types}
    assert declared == served | {UNDECLARED_MEDIA_TYPE}
    assert {"image/png", "video/mp4", "model/gltf-binary", "text/markdown", "application/json"} <= declared
    flow = operation.definition.raw["responses"]["200"]["content"]["application/json"]["schema"]
    assert flow.get("format") != "binary"


def test_it_documents_413_on_every_operation_with_a_body(owner, workspace):
    client, access = owner
    # given a document, and a rewrite whose body is over the limit although its content is within its own
    document = artifact_create(
        workspace_id=workspace.pk, kind="document", title="Notes", content="a", author_user=access.user
    )
    big = {"base_version": 1, "content": "b" * settings.LOMOTE_MAX_JSON_BODY}

    # when it is sent
    response = client.put(
        f"/api/v1/workspaces/{workspace.pk}/artifacts/{document.pk}/document/",
        json.dumps(big),
        content_type="application/json",
    )

    # then 413, as documented
    assert response.status_code == 413
    assert_conforms(response)


def test_it_documents_401_on_every_operation(workspace):
    # when someone without credentials lists the workspaces, or reads one
    anonymous = APIClient()
    responses = [anonymous.get("/api/v1/workspaces/"), anonymous.get(f"/api/v1/workspaces/{workspace.pk}/tasks/")]

    # then 401, as documented
    for response in responses:
        assert response.status_code == 401
        assert_conforms(response)
