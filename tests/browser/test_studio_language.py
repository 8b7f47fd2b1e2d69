"""The studio in the person's language (issue 33 item 4), in real chromium set to French: a French request's cards,
their buttons and titles, and the studio's words around them (routes, card lines, resolutions) hold no English
phrase of ours. Screenshot: var/screenshots/language-fr.png.
"""

import re

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import log_in, shoot

pytestmark = [pytest.mark.browser, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

# What the studio and the runtime would say in English around a quote card and a route.
OUR_ENGLISH = (
    "card",
    "open",
    "resolved",
    "Approve",
    "Adjust",
    "Decline",
    "credits",
    "routed",
    "task #",
    "What should change",
    "Approved",
    "in all",
    "A person approves",
)


@pytest.fixture
def french_page(browser, request):
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="fr-FR")
    context.set_default_timeout(20_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.js_errors = errors
    yield page
    context.close()
    from django.db import connections

    connections.close_all()


def _english_in(text: str) -> list[str]:
    return [phrase for phrase in OUR_ENGLISH if re.search(rf"\b{re.escape(phrase)}\b", text)]


def test_a_french_request_gets_its_cards_and_the_studios_words_in_french(studio, french_page):
    page = french_page
    log_in(page, studio)

    # when a person writes in French for a series that asks for a budget
    page.get_by_label("Message to Main").fill("Fais-moi une série de 3 affiches pour notre soirée jazz de vendredi")
    page.keyboard.press("Enter")

    # then the quote card, its buttons and the route line are in French
    card = page.locator(".task-card[data-status='open']")
    expect(card).to_be_visible(timeout=60_000)
    expect(card.locator(".card-title")).to_contain_text("Approuver")
    expect(card.locator("button[data-action='approve']")).to_have_text("Approuver")
    expect(card.locator(".card-meta")).to_contain_text("carte devis")
    route = page.locator(".msg.person .route").first
    expect(route).to_contain_text("envoyé")
    said = " ".join([card.inner_text(), route.inner_text()])
    assert not _english_in(said), (_english_in(said), said)
    assert card.locator(".card-actions").get_attribute("lang") == "fr"

    # when the person approves, the resolution line is French too
    card.locator("button[data-action='approve']").click()
    resolved = page.locator(".task-card .card-resolution").first
    expect(resolved).to_contain_text("Approuvé")
    assert not _english_in(resolved.inner_text()), resolved.inner_text()
    shoot(page, "language-fr")
    assert not page.js_errors, page.js_errors
