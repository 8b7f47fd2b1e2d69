"""The memory panel in a real browser (issue 13 item 6): a memory stated through the API appears with where it
came from, a click on a source opens it, a correction makes its next version, and a forget — asked in the panel,
confirmed on its card in the chat — takes it out of the panel and moves the profile to a new version.
Screenshots go to var/screenshots/memory-*.png.
"""

import re

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import log_in, shoot

pytestmark = [pytest.mark.browser, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

BLUE = "Our brand's main colour is blue."
GREEN = "Our brand's main colour is green, like a bottle."
SLOGAN = "Our slogan is Bake it warm."
REMEMBERED_SLOGAN = re.compile(r"^Our slogan is Bake it warm\.?$")  # as the extractor words it


def _task_message(studio, text: str):
    """A person's message in a task, read by the agent and remembered (as the feed does after a turn)."""
    from agents.models import InboxMessage, Task
    from memory.models import EvidenceKind
    from memory.services.evidence import evidence_record
    from memory.services.extraction import evidence_extract

    task = Task.objects.create(
        workspace=studio.workspace, title="Posters", brief="Make posters", created_by=studio.user
    )
    message = InboxMessage.objects.create(task=task, author=studio.user, source="person", text=text, status="consumed")
    evidence = evidence_record(
        workspace_id=studio.workspace.pk,
        kind=EvidenceKind.TASK_MESSAGE,
        source_id=str(message.pk),
        text=text,
        stated_by_id=studio.user.pk,
        task_id=task.pk,
    )
    evidence_extract(evidence_id=evidence.pk)
    return task, message


def test_it_shows_corrects_and_forgets_a_memory_from_the_panel(studio, page):
    from rest_framework.authtoken.models import Token

    from memory.models import MemoryVersion, VersionStatus

    # given a person in the studio, with a slogan they said in a task, and an API token of theirs
    task, message = _task_message(studio, SLOGAN)
    token = Token.objects.create(user=studio.user).key
    log_in(page, studio)
    panel = page.locator("#memory-panel")
    slogan = page.locator(".memory", has_text="Bake it warm")
    expect(slogan).to_have_count(1)
    expect(panel).to_have_attribute("data-profile-version", "1")

    # when they state a memory through the API
    stated = page.request.post(
        f"{studio.url}/api/v1/workspaces/{studio.workspace.pk}/memories/",
        data={"content": BLUE, "kind": "fact"},
        headers={"Authorization": f"Token {token}"},
    )
    assert stated.status == 201, stated.text()
    memory_id = stated.json()["id"]

    # then it appears in the panel (through the event log) with its kind, scope and source, and in the profile
    item = page.locator(f".memory[data-memory='{memory_id}']")
    expect(item.locator(".memory-text")).to_have_text(BLUE)
    expect(item.locator(".memory-meta")).to_contain_text("fact")
    expect(item.locator(".memory-meta")).to_contain_text("workspace")
    expect(item.locator(".provenance")).to_contain_text("stated in a direct statement")
    expect(item.locator(".provenance")).to_contain_text("you")
    expect(panel).to_have_attribute("data-profile-version", "2")
    expect(page.locator("#profile li")).to_have_text([REMEMBERED_SLOGAN, BLUE])
    shoot(page, "memory-01-stated")

    # when they click the slogan's source, the task message opens (read from the task's messages)
    slogan.locator("button.source").click()
    source = page.locator("#memory-source")
    expect(source).to_be_visible()
    expect(page.locator("#memory-source-title")).to_contain_text(f"Message #{message.pk} in task #{task.pk}")
    expect(page.locator("#memory-source-text")).to_have_text(SLOGAN)
    shoot(page, "memory-02-source")
    page.locator("#memory-source-close").click()
    expect(source).to_be_hidden()

    # when they correct the brand colour inline
    item.get_by_role("button", name="Correct").click()
    page.get_by_label("Correct to").fill(GREEN)
    item.get_by_role("button", name="Save").click()

    # then its next version shows, refined by them, and the profile moves with it
    expect(item.locator(".memory-text")).to_have_text(GREEN)
    expect(item.locator(".memory-meta")).to_contain_text("v2")
    expect(item.locator(".provenance")).to_contain_text("replaces version 1 (superseded)")
    expect(panel).to_have_attribute("data-profile-version", "3")
    expect(page.locator("#profile li")).to_have_text([REMEMBERED_SLOGAN, GREEN])

    # and with earlier versions shown, version 1 is there with its period
    page.locator("#memory-history").check()
    expect(item.locator(".memory-versions li[data-version='1']")).to_contain_text(BLUE)
    page.locator("#memory-history").uncheck()
    shoot(page, "memory-03-corrected")

    # when they forget it: the panel only asks, and the confirmation card appears in the chat
    item.get_by_role("button", name="Forget…").click()
    expect(page.locator("#memory-notice")).to_contain_text("confirm")
    card = page.locator(".task-card[data-status='open']", has_text="Forget this for good?")
    expect(card).to_be_visible()
    expect(item).to_have_attribute("data-forget", "asked")
    assert MemoryVersion.objects.filter(memory_id=memory_id, status=VersionStatus.ACTIVE).exists()
    shoot(page, "memory-04-forget-card")

    # when they confirm on the card
    card.locator("button[data-action='confirm']").click()

    # then the memory is gone from the panel and the profile, which moved to a new version
    expect(item).to_have_count(0)
    expect(page.locator("#memory-notice")).to_contain_text("Forgotten")
    expect(panel).to_have_attribute("data-profile-version", "4")
    expect(page.locator("#profile li")).to_have_text([REMEMBERED_SLOGAN])
    expect(page.locator("#profile-versions > li")).to_have_count(4)
    # and with earlier versions shown it is there as forgotten, its words nowhere in the panel
    page.locator("#memory-history").check()
    expect(item).to_have_attribute("data-status", "forgotten")
    expect(item.locator(".memory-versions li")).to_have_count(2)
    panel_text = panel.inner_text().casefold()
    assert "blue" not in panel_text and "green" not in panel_text
    shoot(page, "memory-05-forgotten")
    assert not MemoryVersion.objects.filter(memory_id=memory_id, status=VersionStatus.ACTIVE).exists()

    # and the panel's own form states a new memory, of the kind chosen
    page.get_by_label("Remember").fill("I prefer hand-drawn lettering.")
    page.get_by_label("Kind").select_option("preference")
    page.get_by_role("button", name="Remember").click()
    lettering = page.locator(".memory", has_text="hand-drawn lettering")
    expect(lettering.locator(".memory-meta")).to_contain_text("preference")
    assert page.js_errors == []
