"""The studio's layout holds whatever text people and models write (chromium via Playwright).

Long unbroken strings (a pasted URL, a file name, a hash), right-to-left text, emoji and HTML go into the chat,
cards, task titles, artifact titles, version history and Flow nodes; at 800, 1280, 1440 and 1920 px wide the page
never scrolls sideways, the chat column never meets the canvas, every box holds its own text, and every button is
reachable by vertical scrolling alone and is not covered. Screenshots go to var/screenshots/layout-*.png.
"""

from pathlib import Path

import pytest
from django.db import transaction
from playwright.sync_api import expect

from tests.browser.conftest import log_in, shoot
from tests.browser.test_studio import POSTERS

pytestmark = [pytest.mark.browser, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

WIDTHS = (800, 1280, 1440, 1920)
URL = "https://cdn.example.com/uploads/" + "a1b2c3d4e5f6a7b8c9d0" * 6 + "/poster-final-FINAL-v2.png"
HASH = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08" * 2
FILE_NAME = "Sommerfest_Plakat_Entwurf_" + "endgültig_" * 14 + "🎷🎺.pdf"
ARABIC = "مهرجان الجاز الصيفي في المدينة القديمة"
HTML = '<img src="x" onerror="document.body.dataset.injected=1"><b>bold</b>'
NODE_ID = ("resize_for_" + "instagram_story_" * 4)[:64]  # the longest node id a Flow accepts

# What a person sees, measured in the page: figures, and the problems found (empty when the layout holds).
MEASURE = (Path(__file__).parent / "measure_layout.js").read_text()


def _seed(studio):
    """Text people and models wrote, in every place the studio shows it, made through the services."""
    from agents.locks import task_qs_for_update
    from agents.services.cards import card_open_for_wait
    from agents.services.tasks import task_create
    from workspace.flows.authoring import flow_create
    from workspace.services.artifacts import artifact_create, artifact_version_add

    task = task_create(access=studio.access, title=f"Check the upload {URL}", brief="")
    with transaction.atomic():
        locked = task_qs_for_update().get(pk=task.pk)
        # A model's clarification: right-to-left first, options holding a file name and a hash.
        choice = card_open_for_wait(
            locked,
            {"type": "person", "question": f"{ARABIC} — {FILE_NAME}?", "options": [FILE_NAME, HASH, f"{HTML} 🎉"]},
        )
    document = artifact_create(
        workspace_id=studio.workspace.pk,
        kind="document",
        title=f"Notes {FILE_NAME}",
        content=f"Sources: {URL}\nChecksum: {HASH}\n{ARABIC}\n{HTML}",
        author_user=studio.user,
    )
    artifact_version_add(
        workspace_id=studio.workspace.pk,
        artifact_id=document.pk,
        base_version=1,
        content=f"Sources: {URL}\nChecksum: {HASH}",
        meta={"change": f"replaced the link with {URL}"},
        author_task_id=task.pk,
    )
    flow = flow_create(
        workspace_id=studio.workspace.pk,
        title=f"Resize {HASH}",
        graph={
            "nodes": {
                "input": {"type": "text_input", "params": {"default": URL}},
                NODE_ID: {"type": "generate_text", "params": {"prompt": f"Describe {FILE_NAME} for {{input}}"}},
            },
            "edges": [["input", NODE_ID]],
            "start": "input",
        },
        author_user=studio.user,
    )
    return task, choice, document, flow


def _measure_at_each_width(page, name: str) -> dict[int, dict]:
    results = {}
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        results[width] = page.evaluate(MEASURE)
        page.evaluate("() => { document.getElementById('chat').scrollTop = 0; }")  # the clarification card
        shoot(page, f"layout-{name}-{width}")
        print(f"{name} @ {width}px: {results[width]}")  # noqa: T201 - the figures, with pytest -s
    return results


def test_it_keeps_long_unbroken_rtl_emoji_and_html_text_inside_its_own_box_at_every_width(studio, page):
    assert len(NODE_ID) == 64
    # given tasks, cards, a document with two versions and a Flow, all holding long unbroken strings
    task, choice, document, flow = _seed(studio)
    log_in(page, studio)

    # when a person pastes a long URL, a file name, a hash, emoji and HTML into a request for posters
    message = f"{POSTERS} for {URL} {FILE_NAME} {HASH} {ARABIC} {HTML}"
    page.get_by_label("Message to Main").fill(message)
    page.keyboard.press("Enter")

    # then the quote card with its buttons arrives beside the model's clarification card — after Main's own
    # question when the Router reads the pasted URL as pointing at the task named after it (starting a new task)
    quote = page.locator(".task-card[data-status='open']:has(button[data-action='approve'])")
    clarify = page.locator(".task-card[data-status='open']", has_text="Which work is this about?")
    expect(quote.or_(clarify).first).to_be_visible(timeout=30_000)
    if clarify.count():
        clarify.get_by_role("button", name="Start a new task").click()
    expect(quote).to_be_visible(timeout=30_000)
    expect(page.locator(f".task-card[data-card='{choice.pk}'] button[data-action='choose']")).to_have_count(3)
    expect(page.locator(f".task[data-task='{task.pk}']")).to_contain_text(URL)
    expect(page.locator(f".tile[data-artifact='{document.pk}']")).to_contain_text(FILE_NAME)

    # and the text is shown as written: escaped, never parsed as markup
    expect(page.locator(".msg.person .text").first).to_have_text(message)  # (twice when Main asked first)
    expect(page.locator(f".task-card[data-card='{choice.pk}'] button[data-option='3']")).to_have_text(f"{HTML} 🎉")
    assert page.locator("#chat img, #chat b").count() == 0
    assert page.evaluate("() => document.body.dataset.injected") is None

    # when the document is open with its version history and a version's text shown
    page.locator(f".tile[data-artifact='{document.pk}'] .tile-open").click()
    expect(page.locator("#versions li")).to_have_count(2)
    expect(page.locator("#versions li[data-version='2']")).to_contain_text(URL)
    page.locator("#versions li[data-version='1']").get_by_role("button", name="v1", exact=True).click()
    expect(page.locator(".version-preview pre")).to_contain_text(HASH)

    # then at every width the layout holds
    results = _measure_at_each_width(page, "chat-document")

    # and so it does with the Flow editor open (a 64-character node id, a URL in its params)
    page.locator(f".tile[data-artifact='{flow.pk}'] .tile-open").click()
    expect(page.locator(f".node[data-node='{NODE_ID}']")).to_be_visible()
    flow_results = _measure_at_each_width(page, "flow")

    problems = {
        f"{name} @ {width}px": result["problems"]
        for name, measured in (("chat-document", results), ("flow", flow_results))
        for width, result in measured.items()
        if result["problems"]
    }
    assert problems == {}
    card_title = page.locator(f".task-card[data-card='{choice.pk}'] .card-title")
    assert card_title.evaluate("el => getComputedStyle(el).direction") == "rtl"
    assert page.js_errors == []
