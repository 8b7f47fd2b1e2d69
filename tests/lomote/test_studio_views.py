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


def test_it_sends_a_content_security_policy_that_allows_only_its_own_origin(client, alice, workspace):
    # given a member
    client.force_login(alice)

    # when the studio is loaded twice
    first, second = client.get("/"), client.get("/")

    # then each page says where it may load from: its own origin, blob:/data: images, its own WebSocket host
    policy = dict(part.strip().split(" ", 1) for part in first["Content-Security-Policy"].split(";"))
    assert policy["default-src"] == "'self'"
    assert policy["img-src"] == "'self' blob: data:"
    assert policy["connect-src"].split() == ["'self'", "ws://testserver", "data:", "blob:"]
    assert policy["style-src"] == "'self'" and policy["object-src"] == "'none'"
    # and the inline import map runs by a nonce that changes with every response
    nonce = policy["script-src"].split("'nonce-", 1)[1].rstrip("'")
    assert policy["script-src"] == f"'self' 'nonce-{nonce}'" and len(nonce) >= 16
    assert f'<script type="importmap" nonce="{nonce}">' in first.content.decode()
    assert nonce not in second["Content-Security-Policy"]


def test_the_policy_names_the_secure_websocket_behind_https(client, alice, workspace, settings):
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    client.force_login(alice)

    response = client.get("/", HTTP_X_FORWARDED_PROTO="https", HTTP_HOST="localhost")

    assert "connect-src 'self' wss://localhost data: blob:" in response["Content-Security-Policy"]
