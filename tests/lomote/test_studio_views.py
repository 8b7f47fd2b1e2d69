"""The studio page and the canvas grid's first load."""

import pytest

pytestmark = pytest.mark.django_db


def test_it_sends_anonymous_people_to_the_login_page(client):
    response = client.get("/")

    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_it_serves_the_studio_with_local_modules_only(client, alice, workspace):
    client.force_login(alice)

    response = client.get("/")

    body = response.content.decode()
    assert response.status_code == 200
    assert 'type="module" src="/static/lomote/studio.js"' in body
    assert "http://" not in body and "https://" not in body  # nothing from a CDN
    assert 'aria-live="polite"' in body


def test_it_lists_the_workspace_artifacts_for_the_grid(client, alice, workspace):
    from workspace.services.artifacts import artifact_create

    artifact_create(workspace_id=workspace.pk, kind="document", title="Brief", content="hi", author_user=alice)
    client.force_login(alice)

    response = client.get(f"/studio/workspaces/{workspace.pk}/artifacts")

    assert response.status_code == 200
    [row] = response.json()["artifacts"]
    assert (row["kind"], row["title"], row["current_version"]) == ("document", "Brief", 1)


def test_it_hides_the_grid_from_outsiders(client, dave, workspace):
    client.force_login(dave)

    response = client.get(f"/studio/workspaces/{workspace.pk}/artifacts")

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
