"""Helpers for the REST suites: the one error shape, database snapshots, API-key clients."""

from typing import Any

from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from workspace.models import ApiKey, Event, Membership, Role, Workspace
from workspace.selectors import workspace_access
from workspace.services.workspaces import api_key_create


def assert_error(response, status: int, code: str) -> dict[str, Any]:
    """Assert `response` is `status` with exactly {"error": {"code", "message", "details"}}; return the error."""
    assert response.status_code == status, (response.status_code, response.content[:500])
    assert response["Content-Type"].startswith("application/json"), response["Content-Type"]
    body = response.json()
    assert set(body) == {"error"}, body
    error = body["error"]
    assert set(error) == {"code", "message", "details"}, error
    assert error["code"] == code, error
    assert isinstance(error["message"], str) and error["message"], error
    assert isinstance(error["details"], dict), error
    return error


def snapshot() -> dict[str, list[tuple]]:
    """Every persisted tenancy fact a request could change (API-key usage stamps excluded)."""
    return {
        "users": list(get_user_model().objects.order_by("pk").values_list("pk", "username", "email")),
        "workspaces": list(Workspace.objects.order_by("pk").values_list("pk", "name", "last_event_seq")),
        "memberships": list(Membership.objects.order_by("pk").values_list("pk", "workspace_id", "user_id", "role")),
        "api_keys": list(
            ApiKey.objects.order_by("pk").values_list("pk", "workspace_id", "name", "role", "digest", "revoked_at")
        ),
        "events": list(Event.objects.order_by("pk").values_list("pk", "workspace_id", "seq", "kind", "data")),
    }


def issue_api_key(workspace: Workspace, *, role: str = Role.EDITOR, name: str = "ci") -> tuple[ApiKey, str]:
    """Create a key through the service, as the workspace's first owner would; returns (key, raw secret)."""
    owner = Membership.objects.filter(workspace=workspace, role=Role.OWNER).order_by("pk").first().user
    access = workspace_access(principal=owner, workspace_id=workspace.pk)
    return api_key_create(access=access, name=name, role=role)


def key_client(raw_key: str, *, header: str = "bearer") -> APIClient:
    """An APIClient that authenticates with an API key, as `Authorization: Bearer` or `X-Api-Key`."""
    client = APIClient()
    if header == "bearer":
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw_key}")
    else:
        client.credentials(HTTP_X_API_KEY=raw_key)
    return client


def events_of(workspace_id: int, kind: str | None = None) -> list[Event]:
    events = Event.objects.filter(workspace_id=workspace_id).order_by("seq")
    return list(events.filter(kind=kind) if kind else events)


def call(client: APIClient, method: str, url: str, body=None):
    """One request as a client would send it: JSON body when there is one."""
    if body is None:
        return getattr(client, method)(url)
    return getattr(client, method)(url, body, format="json")


def missing_workspace_id() -> int:
    """An id no workspace has: what an outsider's 404 must look exactly like."""
    return (Workspace.objects.order_by("-pk").values_list("pk", flat=True).first() or 0) + 1000


def assert_role_answer(
    *, world, endpoint, response, expected: int, client_for, state, before, seq_before, effect
) -> None:
    """The tenancy matrix's verdict on one request (`world` and `endpoint` as the app's API tests build them):
    an outsider's 404 is the owner's answer for a workspace that does not exist and changes nothing; a 403 names
    the editor role and changes nothing; a read changes nothing; an allowed write is persisted (`effect()`) and
    its event is in the log. `state()` reads what must not change (`before` is its value before the request)."""
    assert response.status_code == expected, (response.status_code, response.content[:300])
    if expected == 404:
        assert_error(response, 404, "not_found")
        ghost_url = endpoint.url(world, workspace_id=missing_workspace_id())
        ghost = call(client_for(world.users["owner"]), endpoint.method, ghost_url, endpoint.body)
        assert response.json() == ghost.json()
        assert state() == before
    elif expected == 403:
        error = assert_error(response, 403, "role_required")
        assert error["details"]["required_role"] == Role.EDITOR
        assert state() == before
    elif endpoint.method == "get":
        assert state() == before
    else:
        assert effect()
        new_events = [e.kind for e in events_of(world.workspace.pk) if e.seq > seq_before]
        assert endpoint.event in new_events
