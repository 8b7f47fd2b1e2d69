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
