"""The API keys panel in a real browser (issue 33 item 6): an owner creates a named key, sees its secret once with a
curl example filled in, the key really opens the REST API, and once revoked it is refused; a member who is not an
owner is told who can. Screenshots go to var/screenshots/api-keys-*.png.
"""

import json
import urllib.error
import urllib.request

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import log_in, shoot
from tests.browser.test_studio_members import _log_in_as, _person

pytestmark = [pytest.mark.browser, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def _get(url: str, key: str, body: dict | None = None) -> tuple[int, dict]:
    headers = {"Authorization": f"Bearer {key}", "Accept": "application/json", "Content-Type": "application/json"}
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, headers=headers)  # noqa: S310 - our own test server
    try:
        with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310 - our own test server
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def test_an_owner_creates_a_key_sees_it_once_uses_it_and_revokes_it(studio, page):
    from workspace.models import ApiKey

    # given alice, owner, in the studio
    page.set_viewport_size({"width": 1440, "height": 1000})
    log_in(page, studio)
    panel = page.locator("#api-keys-panel")
    panel.scroll_into_view_if_needed()
    expect(panel.locator(".api-key")).to_have_count(0)
    expect(panel).to_contain_text("No keys yet.")

    # when she asks for a key without a name, she is told to give one and nothing is created
    page.locator("#api-key-create-send").click()
    expect(page.locator("#api-keys-error")).to_have_text("Give the key a name, so you know later what uses it.")
    assert not ApiKey.objects.exists()

    # when she names it and creates it as a viewer
    page.get_by_label("Key name").fill("Newsletter script")
    page.locator("#api-key-role").select_option("viewer")
    page.locator("#api-key-create-send").click()

    # then the secret is shown with a copy button and a curl example naming this workspace and the secret
    secret = page.locator("#api-key-secret-value")
    expect(secret).to_be_visible()
    raw = secret.input_value()
    assert raw.startswith("lmk_")
    curl = page.locator("#api-key-curl")
    expect(curl).to_contain_text(f"curl {studio.url}/api/v1/workspaces/{studio.workspace.pk}/tasks/")
    expect(curl).to_contain_text(f"Authorization: Bearer {raw}")
    expect(page.locator("#api-key-copy")).to_be_visible()
    row = panel.locator(".api-key[data-active='true']")
    expect(row).to_have_count(1)
    expect(row).to_contain_text("Newsletter script")
    expect(row).to_contain_text("viewer")
    assert raw not in row.inner_text(), "the list shows the prefix, never the secret"
    shoot(page, "api-keys-created")

    # and the key opens the REST API as a viewer of this workspace
    status, body = _get(f"{studio.url}/api/v1/workspaces/{studio.workspace.pk}/", raw)
    assert status == 200, body
    assert body["id"] == studio.workspace.pk
    status, body = _get(f"{studio.url}/api/v1/workspaces/{studio.workspace.pk}/tasks/", raw)  # the curl example's
    assert status == 200, body

    # when she has copied it, the secret is gone from the page for good
    page.locator("#api-key-secret-done").click()
    expect(page.locator("#api-key-secret")).to_be_hidden()
    assert raw not in page.content()

    # when she revokes it (confirming)
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Revoke the key Newsletter script").click()

    # then it is listed as revoked and the API refuses it
    expect(panel.locator(".api-key[data-active='false']")).to_contain_text("revoked")
    expect(panel.get_by_role("button", name="Revoke the key Newsletter script")).to_have_count(0)
    status, body = _get(f"{studio.url}/api/v1/workspaces/{studio.workspace.pk}/", raw)
    assert status in (401, 403), body
    assert ApiKey.objects.get().revoked_at is not None
    shoot(page, "api-keys-revoked")


def test_a_member_who_is_not_an_owner_is_told_who_can_make_keys(studio, page, make_user):
    from workspace.services.workspaces import membership_add

    # given bob, an editor of alice's workspace
    bob = _person(make_user, "bob")
    membership_add(access=studio.access, user_identifier="bob", role="editor")

    # when he opens the studio
    _log_in_as(page, studio, bob)

    # then the keys panel says only owners make keys, and offers no form
    panel = page.locator("#api-keys-panel")
    expect(panel).to_contain_text("Only owners can create or revoke API keys")
    expect(panel.locator("#api-key-create")).to_have_count(0)


def test_an_editor_key_s_example_asks_main_for_work(studio, page):
    from agents.models import MainMessage

    # given alice, owner, creates an editor key
    log_in(page, studio)
    page.locator("#api-keys-panel").scroll_into_view_if_needed()
    page.get_by_label("Key name").fill("Shop integration")
    page.locator("#api-key-role").select_option("editor")
    page.locator("#api-key-create-send").click()
    raw = page.locator("#api-key-secret-value").input_value()

    # then its example posts a message to Main, and that request works as written
    curl = page.locator("#api-key-curl")
    expect(curl).to_contain_text(f"curl -X POST {studio.url}/api/v1/workspaces/{studio.workspace.pk}/messages/")
    status, body = _get(
        f"{studio.url}/api/v1/workspaces/{studio.workspace.pk}/messages/",
        raw,
        {"text": "Make a poster for our spring opening"},
    )
    assert status in (201, 202), body
    assert MainMessage.objects.filter(workspace=studio.workspace, text="Make a poster for our spring opening").exists()
