"""The studio in the person's language (issue 33 item 4), in real chromium set to French: the page and every panel
(headings, buttons, labels, placeholders), a French request's cards, their buttons and titles, the studio's words
around them (routes, card lines, resolutions) and the task's detail hold no English phrase of ours; the language
picked in the top bar wins over the browser's. Screenshots: var/screenshots/language-fr*.png, language-de.png.
"""

import json
import re
from pathlib import Path

import pytest
from django.conf import settings
from playwright.sync_api import expect

from tests.browser.conftest import PASSWORD, shoot

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
PLACEHOLDER = re.compile(r"\{\w+\}|%\(\w+\)[sd]")
START = "export const PHRASES = "


def _our_english_phrases(language: str) -> set[str]:
    """Every phrase of two words or more the studio says in English (its script catalogue and the page's gettext
    catalogue), cut at placeholders, less those the language writes the same way."""
    phrases: dict[str, str] = {}
    text = (Path(settings.BASE_DIR) / "static" / "lomote" / "catalogue.js").read_text(encoding="utf-8")
    catalogue = json.loads(text[text.index(START) + len(START) : text.rindex(";")])
    phrases.update({key: said[language] for key, said in catalogue.items()})
    po = (Path(settings.BASE_DIR) / "locale" / language / "LC_MESSAGES" / "django.po").read_text(encoding="utf-8")
    for msgid, msgstr in re.findall(r'^msgid "(.+)"\nmsgstr "(.*)"$', po, flags=re.M):
        phrases[msgid.replace('\\"', '"')] = msgstr.replace('\\"', '"')
    translated = " ".join(phrases.values())
    runs = {run.strip(" .,;:?!…“”()·") for key in phrases for run in PLACEHOLDER.split(key)}
    return {run for run in runs if " " in run and len(run) >= 8 and run not in translated}


def _english_in(text: str, phrases) -> list[str]:
    return sorted(phrase for phrase in phrases if re.search(rf"(?<!\w){re.escape(phrase)}(?!\w)", text))


def _said_on(page, selector: str) -> str:
    """The visible text under `selector`, with the names, placeholders and titles a person hears or sees."""
    return page.locator(selector).evaluate(
        """(root) => [root.innerText,
            ...[...root.querySelectorAll('[aria-label], [placeholder], [title]')]
              .filter((e) => e.checkVisibility())
              .flatMap((e) => [e.getAttribute('aria-label'), e.getAttribute('placeholder'), e.getAttribute('title')])
          ].filter(Boolean).join('\\n')"""
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


def _log_in(page, studio) -> None:
    """The login page is in the browser's language too: its fields by their ids."""
    page.goto(f"{studio.url}/")
    expect(page.locator("html")).to_have_attribute("lang", "fr")
    expect(page.get_by_label("Nom d'utilisateur")).to_be_visible()
    page.locator("#id_username").fill(studio.user.username)
    page.locator("#id_password").fill(PASSWORD)
    page.keyboard.press("Enter")
    page.wait_for_url(f"{studio.url}/")
    page.locator("#studio[data-ready='true']").wait_for()
    page.locator("#connection[data-state='live']").wait_for()


def test_a_french_browser_sees_every_panel_in_french_and_can_pick_another_language(studio, french_page):
    page = french_page
    english = _our_english_phrases("fr")
    assert len(english) > 200, len(english)

    # when a person whose browser speaks French opens the studio
    _log_in(page, studio)

    # then the page says it is French, and each panel's heading and buttons are French
    expect(page.locator("html")).to_have_attribute("lang", "fr")
    expect(page.locator("#chat-heading")).to_have_text("Discuter avec Main")
    expect(page.locator("#tasks-heading")).to_have_text("Tâches")
    expect(page.locator("#memory-heading")).to_have_text("Mémoire")
    expect(page.locator("#billing-heading")).to_have_text("Facturation")
    expect(page.locator("#members-heading")).to_have_text("Membres")
    expect(page.locator("#api-keys-heading")).to_have_text("Clés d'API")
    expect(page.locator("#canvas-heading")).to_have_text("Canevas")
    expect(page.locator("#send")).to_have_text("Envoyer")
    expect(page.locator("#connection")).to_have_text("en direct")
    expect(page.locator("#new-document")).to_have_text("Nouveau document")
    expect(page.locator("#policy-save")).to_have_text("Enregistrer les limites")
    expect(page.locator("#member-invite-send")).to_have_text("Inviter")
    expect(page.locator("#api-key-create-send")).to_have_text("Créer la clé")
    expect(page.locator("#message")).to_have_attribute(
        "placeholder", "Demandez des affiches, une vidéo, un changement…"
    )
    expect(page.locator("#balance-available")).to_contain_text("crédits")
    expect(page.locator("#ledger-rows tr").first).to_contain_text("Recharge")
    expect(page.locator("#api-keys")).to_contain_text("Aucune clé pour l'instant.")

    # and nothing the studio writes, on the page or in its panels' names and placeholders, is English of ours
    said = _said_on(page, "body")
    assert not _english_in(said, english), (_english_in(said, english), said)

    # when the person creates an API key, what the panel says about it is French too
    page.locator("#api-key-name").fill("Script de newsletter")
    page.locator("#api-key-create-send").click()
    expect(page.locator("#api-key-secret")).to_contain_text("Copiez-la maintenant")
    expect(page.locator("#api-key-copy")).to_have_text("Copier")
    said = _said_on(page, "#api-keys-panel")
    assert not _english_in(said, english), (_english_in(said, english), said)
    shoot(page, "language-fr-panels")

    # when they pick Deutsch in the top bar, the studio speaks German from then on, whatever the browser says
    page.locator("#language-choice").select_option("de")
    page.locator("#language-use").click()
    page.locator("#studio[data-ready='true']").wait_for()
    expect(page.locator("html")).to_have_attribute("lang", "de")
    expect(page.locator("#tasks-heading")).to_have_text("Aufgaben")
    expect(page.locator("#send")).to_have_text("Senden")
    expect(page.locator("#api-keys .api-key .reason").first).to_contain_text("erstellt")
    said = _said_on(page, "body")
    german_left = _english_in(said, _our_english_phrases("de"))
    assert not german_left, (german_left, said)
    shoot(page, "language-de")
    assert not page.js_errors, page.js_errors


def test_a_french_request_gets_its_cards_and_the_studios_words_in_french(studio, french_page):
    page = french_page
    _log_in(page, studio)
    english = _our_english_phrases("fr")

    # when a person writes in French for a series that asks for a budget
    page.locator("#message").fill("Fais-moi une série de 3 affiches pour notre soirée jazz de vendredi")
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
    assert not _english_in(said, OUR_ENGLISH), (_english_in(said, OUR_ENGLISH), said)
    assert not _english_in(said, english), (_english_in(said, english), said)
    # the card's controls are said in French, and marked so (on themselves, or by the page they are on)
    assert card.locator(".card-actions").evaluate("(e) => e.closest('[lang]').lang") == "fr"

    # when the person approves, the resolution line is French too
    card.locator("button[data-action='approve']").click()
    resolved = page.locator(".task-card .card-resolution").first
    expect(resolved).to_contain_text("Approuvé")
    assert not _english_in(resolved.inner_text(), OUR_ENGLISH), resolved.inner_text()
    shoot(page, "language-fr")

    # and the task's detail (its state, settings, budget, checklist, conversation) is French as well
    page.locator("#tasks .task-open").first.click()
    detail = page.locator("#task-detail")
    expect(detail.locator("#task-settings h4")).to_have_text("Réglages")
    expect(detail.locator("#task-budget-heading")).to_have_text("Budget")
    expect(detail.locator("#task-conversation-heading")).to_have_text("Conversation")
    expect(detail.locator("#task-settings-save")).to_have_text("Enregistrer les réglages")
    expect(detail.locator("#task-detail-close")).to_have_text("Fermer")
    said = _said_on(page, "#task-detail")
    assert not _english_in(said, english), (_english_in(said, english), said)
    assert not _english_in(said, OUR_ENGLISH), (_english_in(said, OUR_ENGLISH), said)
    shoot(page, "language-fr-task")
    assert not page.js_errors, page.js_errors
