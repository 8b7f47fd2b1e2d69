"""API keys: shown once, stored as a digest, scoped to one workspace and to a viewer or editor role."""

import hashlib
import json

import pytest
from django.urls import reverse
from django.utils import timezone

from lomote.kernel.exceptions import InvalidInput
from tests.support.rest import assert_error, events_of, issue_api_key, key_client, snapshot
from workspace.models import ApiKey, Role, Workspace
from workspace.selectors import workspace_access
from workspace.services.workspaces import api_key_create, workspace_create

pytestmark = pytest.mark.django_db


def _keys_url(workspace) -> str:
    return reverse("api-key-list", kwargs={"workspace_id": workspace.pk})


def _key_url(workspace, key_id: int) -> str:
    return reverse("api-key-detail", kwargs={"workspace_id": workspace.pk, "key_id": key_id})


def _workspace_url(workspace_id: int) -> str:
    return reverse("workspace-detail", kwargs={"workspace_id": workspace_id})


def test_it_shows_the_key_once_and_stores_only_its_digest(workspace, alice, client_for):
    # given the owner
    owner = client_for(alice)

    # when she creates a key
    created = owner.post(_keys_url(workspace), {"name": "CI", "role": "viewer"}, format="json")

    # then the 201 carries the secret, once, and forbids caches from keeping it
    assert created.status_code == 201, created.content
    body = created.json()
    raw = body["key"]
    assert raw.startswith(ApiKey.PREFIX)
    prefix, secret = raw.removeprefix(ApiKey.PREFIX).split("_", 1)
    assert body["prefix"] == f"{ApiKey.PREFIX}{prefix}"
    assert body["role"] == "viewer" and body["is_active"] is True
    assert created["Cache-Control"] == "no-store"
    # then the row holds the SHA-256 digest and no part of the secret beyond its public prefix
    row = ApiKey.objects.get(pk=body["id"])
    assert row.digest == hashlib.sha256(raw.encode()).hexdigest()
    for field in ApiKey._meta.concrete_fields:
        value = str(field.value_from_object(row))
        assert raw not in value and secret not in value, field.name
    # then the event log does not carry it either
    assert all(secret not in json.dumps(event.data) for event in events_of(workspace.pk))
    # then later reads never show it again
    detail = owner.get(_key_url(workspace, row.pk))
    listing = owner.get(_keys_url(workspace))
    assert detail.status_code == listing.status_code == 200
    assert "key" not in detail.json()
    assert all("key" not in item for item in listing.json()["results"])
    assert secret not in detail.content.decode() and secret not in listing.content.decode()


def test_it_never_returns_the_same_secret_twice(workspace, alice, client_for):
    # given the owner creates two keys with the same name
    owner = client_for(alice)
    first = owner.post(_keys_url(workspace), {"name": "CI"}, format="json").json()
    second = owner.post(_keys_url(workspace), {"name": "CI"}, format="json").json()

    # then they differ in secret, prefix and digest, and default to the editor role
    assert first["key"] != second["key"] and first["prefix"] != second["prefix"]
    assert ApiKey.objects.get(pk=first["id"]).digest != ApiKey.objects.get(pk=second["id"]).digest
    assert first["role"] == second["role"] == "editor"


@pytest.mark.parametrize("header", ["bearer", "x-api-key"])
@pytest.mark.parametrize("role", [Role.VIEWER, Role.EDITOR])
def test_it_authenticates_with_either_header_and_acts_with_its_role(workspace, header, role):
    # given a key of the workspace
    key, raw = issue_api_key(workspace, role=role)
    assert key.last_used_at is None

    # when it reads the workspace through either header
    response = key_client(raw, header=header).get(_workspace_url(workspace.pk))

    # then it is let in with the key's role, and its use is stamped
    assert response.status_code == 200, response.content
    assert response.json()["id"] == workspace.pk
    assert response.json()["role"] == role
    key.refresh_from_db()
    assert key.last_used_at is not None


def test_it_refuses_a_revoked_key_at_once(workspace, alice, client_for):
    # given a key that works
    key, raw = issue_api_key(workspace, role=Role.EDITOR)
    assert key_client(raw).get(_workspace_url(workspace.pk)).status_code == 200

    # when the owner revokes it
    revoked = client_for(alice).delete(_key_url(workspace, key.pk))

    # then the record stays, marked revoked, and the key no longer authenticates anywhere
    assert revoked.status_code == 200, revoked.content
    assert revoked.json()["is_active"] is False
    key.refresh_from_db()
    assert key.revoked_at is not None
    for header in ("bearer", "x-api-key"):
        for url in (_workspace_url(workspace.pk), reverse("workspace-list")):
            assert_error(key_client(raw, header=header).get(url), 401, "invalid_api_key")


def test_it_revokes_once(workspace, alice, client_for):
    # given a revoked key
    key, _ = issue_api_key(workspace)
    owner = client_for(alice)
    owner.delete(_key_url(workspace, key.pk))
    key.refresh_from_db()
    before = snapshot()

    # when it is revoked again
    again = owner.delete(_key_url(workspace, key.pk))

    # then the answer is the same record, and neither the stamp nor the log moved
    assert again.status_code == 200
    assert again.json()["revoked_at"] is not None
    assert snapshot() == before
    assert len(events_of(workspace.pk, "api_key.revoked")) == 1


def test_it_refuses_a_forged_secret_behind_a_real_prefix(workspace):
    # given a real key and a forgery that keeps its prefix
    key, raw = issue_api_key(workspace)
    forged = raw[:-4] + ("AAAA" if not raw.endswith("AAAA") else "BBBB")

    # when the forgery is used
    response = key_client(forged).get(_workspace_url(workspace.pk))

    # then it is refused and the real key's usage stamp is untouched
    assert_error(response, 401, "invalid_api_key")
    key.refresh_from_db()
    assert key.last_used_at is None


def test_it_does_not_let_a_key_create_workspaces(workspace):
    # given an editor key
    _, raw = issue_api_key(workspace, role=Role.EDITOR)
    before = snapshot()

    # when it tries to create a workspace
    response = key_client(raw).post(reverse("workspace-list"), {"name": "Escape"}, format="json")

    # then it is refused with api_key_scope and nothing is created
    assert_error(response, 403, "api_key_scope")
    assert snapshot() == before


def test_it_keeps_a_key_inside_its_workspace(workspace, dave):
    # given a key of the shared workspace and dave's workspace next door
    _, raw = issue_api_key(workspace, role=Role.EDITOR)
    other = workspace_create(user=dave, name="Dave's place")
    client = key_client(raw)

    # when the key reaches for dave's workspace, and for one that does not exist
    foreign = client.get(_workspace_url(other.pk))
    missing = client.get(_workspace_url(other.pk + 1000))
    foreign_events = client.get(reverse("event-list", kwargs={"workspace_id": other.pk}))

    # then it gets the same 404 as for nothing at all
    assert_error(foreign, 404, "not_found")
    assert foreign.json() == missing.json()
    assert_error(foreign_events, 404, "not_found")
    # then listing shows only its own workspace
    listed = client.get(reverse("workspace-list")).json()["results"]
    assert [item["id"] for item in listed] == [workspace.pk]


def test_it_refuses_the_owner_role_for_keys(workspace, alice, client_for):
    # given the owner
    before = snapshot()

    # when she asks for an owner key
    response = client_for(alice).post(_keys_url(workspace), {"name": "root", "role": "owner"}, format="json")

    # then the request is invalid, names the field, and no key exists
    error = assert_error(response, 400, "invalid")
    assert set(error["details"]["fields"]) == {"role"}
    assert snapshot() == before


def test_it_refuses_the_owner_role_for_keys_in_the_service_too(workspace, alice):
    # given the owner's access, bypassing the API's input validation
    access = workspace_access(principal=alice, workspace_id=workspace.pk)
    before = snapshot()

    # when the service is asked for an owner key
    with pytest.raises(InvalidInput) as raised:
        api_key_create(access=access, name="root", role=Role.OWNER)

    # then it is the same 400 as through the API, and nothing was written
    assert raised.value.status == 400
    assert set(raised.value.details["fields"]) == {"role"}
    assert snapshot() == before


def test_it_does_not_let_an_editor_key_mint_or_revoke_keys(workspace):
    # given an editor key and another key of the workspace
    _, raw = issue_api_key(workspace, role=Role.EDITOR)
    target, _ = issue_api_key(workspace, role=Role.VIEWER, name="target")
    before = snapshot()
    client = key_client(raw)

    # when it tries to create a key and to revoke one
    minted = client.post(_keys_url(workspace), {"name": "mine"}, format="json")
    revoked = client.delete(_key_url(workspace, target.pk))

    # then each is refused for lack of the owner role, and nothing changed
    assert_error(minted, 403, "role_required")
    assert_error(revoked, 403, "role_required")
    assert snapshot() == before


def test_it_records_creation_and_revocation_in_the_event_log(workspace, alice, client_for):
    # given the owner
    owner = client_for(alice)
    seq_before = Workspace.objects.get(pk=workspace.pk).last_event_seq

    # when she creates then revokes a key
    created = owner.post(_keys_url(workspace), {"name": "CI", "role": "viewer"}, format="json").json()
    owner.delete(_key_url(workspace, created["id"]))

    # then both are in the log, in order, naming the key and who acted, without the secret
    events = [e for e in events_of(workspace.pk) if e.seq > seq_before]
    assert [e.kind for e in events] == ["api_key.created", "api_key.revoked"]
    by_alice = {"type": "user", "id": alice.pk, "username": "alice"}
    assert events[0].data == {
        "api_key": created["id"],
        "name": "CI",
        "role": "viewer",
        "prefix": created["prefix"].removeprefix(ApiKey.PREFIX),
        "by": by_alice,
    }
    assert events[1].data == {"api_key": created["id"], "name": "CI", "by": by_alice}
    assert Workspace.objects.get(pk=workspace.pk).last_event_seq == events[-1].seq


def test_it_stamps_last_use_coarsely(workspace):
    # given a key used a moment ago
    key, raw = issue_api_key(workspace)
    client = key_client(raw)
    client.get(_workspace_url(workspace.pk))
    key.refresh_from_db()
    first_use = key.last_used_at

    # when it is used again within the minute
    client.get(_workspace_url(workspace.pk))

    # then the stamp is not rewritten on every request
    key.refresh_from_db()
    assert key.last_used_at == first_use
    assert first_use <= timezone.now()
