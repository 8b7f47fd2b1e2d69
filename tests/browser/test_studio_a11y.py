"""Accessibility of the studio (issue 16 item 7), in a real browser with the vendored axe-core.

The studio is scanned in the states a person actually reaches — chat with open cards, the task detail with its
settings, the billing, memory and members panels, a document open with its version history and how it was made,
the Flow editor — at desktop width and at 800 px, and must have no serious or
critical violation. Keyboard paths are walked with the Tab key: every control of the chat, the cards and the canvas
is reachable, in reading order, and each says what it is. Screenshots go to var/screenshots/a11y-*.png.
"""

import json
from pathlib import Path

import pytest
from django.conf import settings
from playwright.sync_api import expect

from tests.browser.conftest import log_in, shoot
from tests.browser.test_studio import POSTERS
from tests.browser.test_studio_layout import _seed

pytestmark = [pytest.mark.browser, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

AXE = Path(settings.BASE_DIR) / "static" / "vendor" / "axe-core-4.14.1" / "axe.min.js"
BLOCKING = ("serious", "critical")


def _axe(page, name: str) -> list[dict]:
    """The serious and critical violations axe-core finds in the page as it is now (WCAG 2.x A/AA + best practice)."""
    if not page.evaluate("() => Boolean(window.axe)"):
        # By URL from the studio's own static files: the page's Content-Security-Policy refuses inline scripts.
        assert AXE.is_file()
        page.add_script_tag(url=f"/static/{AXE.relative_to(Path(settings.BASE_DIR) / 'static').as_posix()}")
    result = page.evaluate(
        """async () => {
            const r = await axe.run(document, {resultTypes: ["violations"]});
            return r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
                nodes: v.nodes.map(n => n.target.join(" ") + " — " + n.failureSummary).slice(0, 5)}));
        }"""
    )
    shoot(page, f"a11y-{name}")
    print(f"axe {name}: " + json.dumps(result, indent=1))  # noqa: T201 - the findings, with pytest -s
    return [violation for violation in result if violation["impact"] in BLOCKING]


def test_the_studio_has_no_serious_or_critical_accessibility_violations(studio, page):
    # given the studio with tasks, a clarification card, a document with two versions and a Flow
    task, choice, document, flow = _seed(studio)
    log_in(page, studio)
    found = {}

    # when a person asks for posters and the quote card arrives beside the clarification
    page.get_by_label("Message to Main").fill(POSTERS)
    page.keyboard.press("Enter")
    expect(page.locator(".task-card[data-status='open']:has(button[data-action='approve'])")).to_be_visible(
        timeout=30_000
    )
    found["chat"] = _axe(page, "chat")

    # and opens the task's detail (its settings, what it waits for)
    page.locator(f"#tasks [data-task='{task.pk}'] .task-open").click()
    expect(page.locator("#task-detail")).to_be_visible()
    found["task-detail"] = _axe(page, "task-detail")

    # and opens the document with its history, then a version's text
    page.locator(f".tile[data-artifact='{document.pk}'] .tile-open").click()
    expect(page.locator("#versions li")).to_have_count(2)
    page.locator("#versions li[data-version='1'] button").first.click()
    found["document"] = _axe(page, "document")

    # and asks how the first version was made
    page.locator("#versions li[data-version='1'] button.how").click()
    expect(page.locator("#provenance")).to_be_visible()
    found["provenance"] = _axe(page, "provenance")

    # and the Flow editor
    page.locator(f".tile[data-artifact='{flow.pk}'] .tile-open").click()
    expect(page.locator(".node").first).to_be_visible()
    found["flow"] = _axe(page, "flow")

    # and all of it at 800 px
    page.set_viewport_size({"width": 800, "height": 900})
    found["flow-800"] = _axe(page, "flow-800")
    page.locator("#viewer-close").click()
    found["chat-800"] = _axe(page, "chat-800")

    # then nothing serious or critical is found in any state
    assert {state: violations for state, violations in found.items() if violations} == {}
    assert page.js_errors == []


def _tab_order(page, presses: int) -> list[str]:
    """What the Tab key reaches, in order: each control's id, or its role and accessible text."""
    order = []
    for _ in range(presses):
        page.keyboard.press("Tab")
        order.append(
            page.evaluate(
                """() => {
                    const el = document.activeElement;
                    if (el.id) return "#" + el.id;
                    const name = el.getAttribute("aria-label") || el.textContent.trim().slice(0, 40);
                    return `${el.tagName.toLowerCase()}.${el.className}:${name}`;
                }"""
            )
        )
    return order


def test_a_person_works_the_chat_cards_and_canvas_with_the_keyboard_alone(studio, page):
    from billing.models import Approval

    # given the studio with a document
    _, _, document, _ = _seed(studio)
    log_in(page, studio)
    page.locator("#workspace").focus()

    # then Tab walks the controls in reading order: the chat box and its button, the memory form, top-up, canvas
    order = _tab_order(page, 60)
    for earlier, later in [
        ("#message", "#send"),
        ("#send", "#memory-history"),
        ("#memory-history", "#memory-content"),
        ("#memory-content", "#topup-amount"),
        ("#topup-amount", "#new-document"),
        ("#new-document", "#upload"),
    ]:
        assert order.index(earlier) < order.index(later), order
    assert any(entry.startswith("button.tile-open") for entry in order), order

    # when they type a request and send it with Enter
    page.locator("#message").focus()
    page.keyboard.type(POSTERS)
    page.keyboard.press("Enter")
    card = page.locator(".task-card[data-status='open']:has(button[data-action='approve'])")
    expect(card).to_be_visible(timeout=30_000)

    # and go back from the message box to the card's buttons with Shift+Tab, moving between them with the arrows
    page.locator("#message").focus()
    for _ in range(6):
        page.keyboard.press("Shift+Tab")
        if page.evaluate("() => document.activeElement.dataset.action") in ("approve", "decline"):
            break
    assert page.evaluate("() => document.activeElement.dataset.action") == "decline"  # the last of the card's buttons
    for _ in range(3):
        if page.evaluate("() => document.activeElement.dataset.action") == "approve":
            break
        page.keyboard.press("ArrowLeft")
    expect(card.locator("button[data-action='approve']")).to_be_focused()
    shoot(page, "a11y-keyboard-card")

    # and press Enter: the budget is approved and the keyboard stays on the card
    page.keyboard.press("Enter")
    resolved = page.locator(f".task-card[data-card='{card.get_attribute('data-card')}'][data-status='resolved']")
    expect(resolved).to_be_visible()
    assert Approval.objects.filter(workspace=studio.workspace).count() == 1
    expect(resolved.locator(".card-title")).to_be_focused()

    # when they open the document from its tile with Enter, the viewer's title takes the focus
    tile = page.locator(f".tile[data-artifact='{document.pk}'] .tile-open")
    tile.focus()
    page.keyboard.press("Enter")
    expect(page.locator("#viewer-title")).to_be_focused()
    shoot(page, "a11y-keyboard-viewer")

    # and Escape closes it, giving the keyboard back to the tile
    page.keyboard.press("Escape")
    expect(page.locator("#viewer")).to_be_hidden()
    expect(tile).to_be_focused()
    assert page.js_errors == []
