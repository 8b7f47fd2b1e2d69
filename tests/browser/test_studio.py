"""The studio in a real browser (Debian's chromium via Playwright) against daphne and a django-q2 cluster.

Each test saves screenshots under var/screenshots/.
"""

import re
import time

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import log_in, shoot

pytestmark = [pytest.mark.browser, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

POSTERS = "Make a series of 3 retro brand posters"


def wait_until(predicate, *, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.1)  # polling interval


def test_it_runs_the_poster_request_from_chat_to_three_images(studio, page):
    from agents.models import InboxMessage, MainMessage, Task

    # given a person logged in to the studio
    log_in(page, studio)
    shoot(page, "01-studio-empty")

    # when they ask Main for posters
    page.get_by_label("Message to Main").fill(POSTERS)
    page.keyboard.press("Enter")

    # then the message shows where it was routed, and a quote card arrives
    expect(page.locator(".msg.person .route")).to_contain_text("new task")
    card = page.locator(".task-card[data-status='open']")
    expect(card).to_be_visible(timeout=30_000)
    expect(card.locator("button[data-action='approve']")).to_have_text("Approve")
    shoot(page, "02-quote-card")

    # when they approve it with the keyboard (Tab to the Approve button, then Enter)
    page.locator(".task-card[data-status='open'] .card-title").click()
    approve = card.locator("button[data-action='approve']")
    for _ in range(10):
        if approve.evaluate("b => b === document.activeElement"):
            break
        page.keyboard.press("Tab")
    assert approve.evaluate("b => b === document.activeElement"), "Approve is not reachable with Tab"
    page.keyboard.press("Enter")

    # then the card is resolved, generations show progress, three images appear and the task is done
    expect(page.locator(".task-card[data-status='resolved']")).to_have_count(1)
    expect(page.locator(".msg.job progress").first).to_be_visible(timeout=30_000)
    shoot(page, "03-generating")
    images = page.locator(".tile[data-kind='image'] img")
    expect(images).to_have_count(3, timeout=60_000)
    expect(page.locator(".task[data-status='done']")).to_have_count(1, timeout=60_000)
    expect(page.locator(".msg.job[data-status='succeeded']")).to_have_count(3)
    page.wait_for_function(
        "() => [...document.querySelectorAll('.tile img')].every(img => img.complete && img.naturalWidth > 0)"
    )
    shoot(page, "04-posters-done")
    task = Task.objects.get(workspace=studio.workspace)
    assert task.status == "done"
    texts = [
        *MainMessage.objects.filter(workspace=studio.workspace).values_list("text", flat=True),
        *InboxMessage.objects.filter(task=task, source="person").values_list("text", flat=True),
    ]
    assert not [t for t in texts if t.strip().lower().startswith("continue")]
    assert page.js_errors == []


def test_it_shows_a_document_conflict_with_the_agent_and_resolves_it(studio, page):
    from workspace.models import ArtifactVersion
    from workspace.services.documents import document_write

    # given a person editing a new document on the canvas
    log_in(page, studio)
    page.get_by_role("button", name="New document").click()
    editor = page.get_by_label("Document text")
    expect(editor).to_be_visible()
    artifact_id = int(page.locator("#viewer").get_attribute("data-artifact"))
    editor.fill("Tagline: Sunset soda, since 1962")

    # when the agent rewrites the document meanwhile (a task author, through the service)
    document_write(
        workspace_id=studio.workspace.pk,
        artifact_id=artifact_id,
        base_version=1,
        content="Tagline: Retro fizz for warm evenings",
        author_task_id=41,
    )

    # then a change notice appears where the person is editing
    expect(page.locator("#notices .notice")).to_contain_text("Version 2 was added by task #41")
    shoot(page, "05-document-notice")

    # when they save on their base version, the conflict is shown side by side
    page.get_by_role("button", name="Save", exact=True).click()
    conflict = page.locator("#conflict")
    expect(conflict).to_be_visible()
    expect(page.get_by_label("Your text")).to_have_value("Tagline: Sunset soda, since 1962")
    expect(page.get_by_label("Current version (v2)")).to_have_value("Tagline: Retro fizz for warm evenings")
    shoot(page, "06-document-conflict")

    # and "keep mine on top of latest" saves their text as version 3
    page.get_by_role("button", name="Keep mine on top of latest").click()
    expect(page.locator("#doc-status")).to_have_text("Saved as version 3")
    expect(conflict).to_be_hidden()
    v3 = ArtifactVersion.objects.get(artifact_id=artifact_id, number=3)
    assert v3.content == "Tagline: Sunset soda, since 1962"
    assert v3.author_user_id == studio.user.pk

    # when the agent writes again and the person, editing v3, takes theirs instead
    editor.fill("Tagline: a third idea")
    document_write(
        workspace_id=studio.workspace.pk,
        artifact_id=artifact_id,
        base_version=3,
        content="Tagline: the agent's fourth",
        author_task_id=41,
    )
    expect(page.locator("#notices .notice[data-version='4']")).to_be_visible()
    page.get_by_role("button", name="Save", exact=True).click()
    page.get_by_role("button", name="Take theirs").click()

    # then the editor holds the agent's text on base 4, and a later save becomes version 5
    expect(editor).to_have_value("Tagline: the agent's fourth")
    editor.fill("Tagline: the agent's fourth, in orange")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.locator("#doc-status")).to_have_text("Saved as version 5")
    expect(page.locator("#versions li")).to_have_count(5)
    shoot(page, "07-document-resolved")
    assert page.js_errors == []


def test_it_delivers_a_card_created_while_the_socket_was_down(studio, page):
    from agents.main.messages import main_message_post
    from agents.models import Card

    # given a person in the studio, live
    sockets: list[str] = []
    page.on("websocket", lambda ws: sockets.append(ws.url))
    log_in(page, studio)
    assert len(sockets) == 1

    # when the server goes away, and a card is created while the page cannot hear about it
    studio.server.stop()
    expect(page.locator("#connection")).to_have_text(re.compile("reconnecting|connecting"))
    message = main_message_post(access=studio.access, text=POSTERS)
    wait_until(lambda: Card.objects.filter(task_id=message.task_id, status="open").first(), timeout=30, what="the card")
    shoot(page, "08-socket-down")
    assert page.locator(".task-card").count() == 0

    # then after the server is back the page reconnects after its last seq and the missed card arrives
    studio.server.start()
    expect(page.locator("#connection")).to_have_text("live", timeout=20_000)
    card = page.locator(".task-card[data-status='open']")
    expect(card).to_be_visible()
    expect(card.locator("button[data-action='approve']")).to_be_visible()
    expect(page.locator(".msg.person .text")).to_have_text(POSTERS)
    expect(page.locator(f".task[data-task='{message.task_id}']")).to_be_visible()
    reconnect = sockets[-1]
    after = int(re.search(r"after=(\d+)", reconnect).group(1))
    assert after > 0, reconnect
    shoot(page, "09-missed-card-arrived")


CHAT_ITEMS = """() => [...document.querySelectorAll('#chat > li')].map((li) => {
  const who = li.querySelector('.who')?.textContent || '';
  if (li.dataset.message) return `message ${li.dataset.message} ${who}`;
  if (li.dataset.card) return `card ${li.dataset.card} ${li.dataset.status}`;
  if (li.dataset.job) return `job ${li.dataset.job} ${li.dataset.status}`;
  return `${li.className} ${who}`;
})"""


def test_it_shows_the_chat_after_a_reload_as_it_happened(studio, page):
    from agents.main.messages import main_card_act, main_message_post
    from agents.models import Card, MainMessage, Task
    from workspace.models import GenerationJob
    from workspace.services.workspaces import api_key_create

    # given a person who asked for posters, approved the quote and watched the three images being made
    log_in(page, studio)
    asked = main_message_post(access=studio.access, text=POSTERS)
    card = wait_until(
        lambda: Card.objects.filter(task_id=asked.task_id, kind="quote", status="open").first(),
        timeout=30,
        what="the quote card",
    )
    expect(page.locator(f".task-card[data-card='{card.pk}'][data-status='open']")).to_be_visible()
    main_card_act(access=studio.access, card_id=card.pk, action="approve")
    wait_until(lambda: Task.objects.get(pk=asked.task_id).status == "done", timeout=60, what="the task to be done")
    jobs = list(GenerationJob.objects.filter(task_id=asked.task_id).order_by("created_at", "id"))
    assert [job.status for job in jobs] == ["succeeded"] * 3
    expect(page.locator(".msg.job[data-status='succeeded']")).to_have_count(3)

    # and then a message to Main posted through the API with the "Zapier" key
    _, raw_key = api_key_create(access=studio.access, name="Zapier", role="editor")
    answer = page.request.post(
        f"{studio.url}/api/v1/workspaces/{studio.workspace.pk}/messages/",
        data={"text": "Thanks, that looks great!"},
        headers={"Authorization": f"Bearer {raw_key}"},
    )
    assert answer.status == 201, answer.text()
    assert answer.json()["api_key"]["name"] == "Zapier"
    thanks = MainMessage.objects.get(pk=answer.json()["id"])
    assert thanks.author_id is None
    expect(page.locator(f"[data-message='{thanks.pk}'] .who")).to_have_text("API key · Zapier")
    live = page.evaluate(CHAT_ITEMS)
    shoot(page, "10-chat-live")

    # when the page is reloaded
    page.reload()
    page.locator("#studio[data-ready='true']").wait_for()
    page.locator("#connection[data-state='live']").wait_for()
    shoot(page, "11-chat-reloaded")

    # then the chat is the conversation as it happened: the request, its approved quote card (who approved
    # it), the three finished images, then the API key's message and Main's reply — the same as seen live —
    # with the agent's own words after the request they answer
    items = page.evaluate(CHAT_ITEMS)
    assert [item for item in items if not item.startswith("msg agent")] == [
        f"message {asked.pk} alice",
        f"card {card.pk} resolved",
        *[f"job {job.pk} succeeded" for job in jobs],
        f"message {thanks.pk} API key · Zapier",
        "msg main Main",
    ]
    said = [i for i, item in enumerate(items) if item.startswith("msg agent")]
    assert said and min(said) > items.index(f"message {asked.pk} alice"), items
    assert items == live
    resolved = page.locator(f".task-card[data-card='{card.pk}']")
    expect(resolved.locator(".card-resolution")).to_have_text("Approved by alice")
    expect(resolved.locator(".card-title")).to_contain_text("120 credits")
    expect(page.locator(f"[data-message='{asked.pk}'] .route")).to_contain_text(f"task #{asked.task_id} “")
    expect(page.locator(".msg.job").first).to_contain_text(f"#{jobs[0].pk} for task #{asked.task_id} “")
    expect(page.locator(".msg.person .who", has_text="You")).to_have_count(0)
    assert page.js_errors == []
