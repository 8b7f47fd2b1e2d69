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
from tests.support.openapi import assert_conforms
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
