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
