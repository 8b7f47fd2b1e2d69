"""The billing panel in a real browser (issue 16 item 1): the balance, holds, quotes waiting for a person, the
no-confirmation limits, top-up and the ledger, every figure re-read when the event log says money moved.

A quote is approved from the panel (not from its card) and the balance moves live; another person's top-up
through the API moves it without a reload; owners change the limits, a viewer or editor sees them read-only,
and a 403 from the API reads as a sentence. Screenshots go to var/screenshots/billing-*.png.
"""

import re

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import PASSWORD, log_in, shoot
from tests.browser.test_studio import POSTERS, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def _member(studio, make_user, username: str, role: str):
    """Another person of the studio's workspace, with a password the daphne process can check, and a token."""
    from django.contrib.auth.hashers import PBKDF2PasswordHasher
    from rest_framework.authtoken.models import Token

    from workspace.models import Membership

    user = make_user(username)
    user.password = PBKDF2PasswordHasher().encode(PASSWORD, PBKDF2PasswordHasher().salt())
    user.save(update_fields=["password"])
    Membership.objects.create(workspace=studio.workspace, user=user, role=role)
    return user, Token.objects.create(user=user).key


def _log_in_as(page, studio, username: str) -> None:
    page.goto(f"{studio.url}/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.keyboard.press("Enter")
    page.wait_for_url(f"{studio.url}/")
    page.locator("#studio[data-ready='true']").wait_for()
    page.locator("#connection[data-state='live']").wait_for()


def _api(page, studio, token: str, method: str, path: str, data: dict):
    url = f"{studio.url}/api/v1/workspaces/{studio.workspace.pk}{path}"
    return page.request.fetch(url, method=method, data=data, headers={"Authorization": f"Token {token}"})


def _tab_to(page, locator, *, presses: int = 40) -> None:
    for _ in range(presses):
        if locator.evaluate("e => e === document.activeElement"):
            return
        page.keyboard.press("Tab")
    raise AssertionError("not reachable with Tab")


def test_it_approves_a_quote_from_the_panel_and_the_balance_moves_live(studio, page, make_user):
    from agents.models import Card, CardKind, CardStatus
    from billing.models import Approval, LedgerEntry, Order

    # given alice in the studio with 2000 credits, and bob, another owner, with an API token
    _, bob_token = _member(studio, make_user, "bob", "owner")
    log_in(page, studio)
    panel = page.locator("#billing-panel")
    expect(panel).to_have_attribute("data-available", "2000")
    expect(page.locator("#balance-available")).to_have_text("2,000 credits")
    expect(page.locator("#quotes")).to_contain_text("Nothing is waiting")
    expect(page.locator("#holds")).to_contain_text("Nothing held")
    shoot(page, "billing-01-panel")

    # when bob tops the wallet up through the API
    answer = _api(page, studio, bob_token, "POST", "/billing/topup/", {"amount": 500, "memo": "from bob"})
    assert answer.status == 200, answer.text()

    # then alice's figures and ledger move without a reload
    expect(panel).to_have_attribute("data-available", "2500")
    expect(page.locator("#balance-available")).to_have_text("2,500 credits")
    newest = page.locator("#ledger-rows tr").first
    expect(newest).to_contain_text("Top-up")
    expect(newest).to_contain_text("+500")
    expect(newest).to_contain_text("bob")
    assert page.evaluate("() => performance.getEntriesByType('navigation').length") == 1  # never reloaded

    # when alice asks Main for posters: 3 × 40 credits is above the 100-credit threshold, so a quote card opens
    page.get_by_label("Message to Main").fill(POSTERS)
    page.keyboard.press("Enter")
    card = page.locator(".task-card[data-status='open']")
    expect(card).to_be_visible(timeout=30_000)

    # then the panel lists it as waiting, with its amount, its task and a way to its card
    quote = page.locator("#quotes .quote[data-card]")
    expect(quote).to_have_count(1)
    expect(quote).to_contain_text("120 credits")
    expect(quote).to_contain_text("image generation × 3")
    # (the quote can be listed a moment before its card is known: wait for the card's id)
    expect(quote).to_have_attribute("data-card", re.compile(r"^\d+$"))
    card_id = int(quote.get_attribute("data-card"))
    shoot(page, "billing-02-quote-waiting")

    # when she uses "Show its card" with the keyboard, the card in the chat takes the focus
    show = quote.get_by_role("button", name="Show its card in the chat")
    show.focus()
    page.keyboard.press("Enter")
    expect(page.locator(f".task-card[data-card='{card_id}'] .card-title")).to_be_focused()

    # when she approves it from the panel, reaching Approve with Tab and pressing Enter
    approve = quote.get_by_role("button", name="Approve")
    show.focus()
    _tab_to(page, approve)
    page.keyboard.press("Enter")

    # then the card in the chat is resolved by her, nothing waits any more, and the money moves live
    expect(page.locator(f".task-card[data-card='{card_id}']")).to_have_attribute("data-status", "resolved")
    expect(page.locator("#quotes")).to_contain_text("Nothing is waiting")
    expect(page.locator("#billing-notice")).to_contain_text("Approved 120 credits")
    wait_until(lambda: Order.objects.count() == 3, timeout=60, what="three orders placed")
    expect(panel).not_to_have_attribute("data-available", "2500", timeout=30_000)
    shoot(page, "billing-03-approved")
    # and once the three images are made, everything held was charged: 2500 - 120
    expect(panel).to_have_attribute("data-available", "2380", timeout=90_000)
    expect(panel).to_have_attribute("data-held", "0", timeout=90_000)
    expect(page.locator("#ledger-rows")).to_contain_text("Charged")
    # and each of the agent's movements says whose approval allowed it
    expect(page.locator("#ledger-rows tr[data-kind='capture']").first).to_contain_text("Agent, approved by alice")
    shoot(page, "billing-04-charged")

    # and the persisted facts agree: the card resolved by alice with a 120-credit approval, three captures
    stored = Card.objects.get(pk=card_id)
    assert (stored.kind, stored.status, stored.resolved_by_id) == (CardKind.QUOTE, CardStatus.RESOLVED, studio.user.pk)
    approval = Approval.objects.get(pk=stored.resolution["approval"])
    assert (approval.amount, approval.approved_by_id) == (120, studio.user.pk)
    assert LedgerEntry.objects.filter(kind="capture").count() == 3
    assert page.js_errors == []


def test_it_lets_owners_change_the_limits_and_shows_others_them_read_only(studio, page, browser, make_user):
    from billing.models import Approval, SpendPolicy
    from billing.services.wallets import wallet_topup
    from workspace.models import Membership

    # given bob (owner, with a token), carol (viewer) and dave (editor), and 12 more top-ups in the ledger
    _, bob_token = _member(studio, make_user, "bob", "owner")
    _member(studio, make_user, "carol", "viewer")
    _member(studio, make_user, "dave", "editor")
    for n in range(12):
        wallet_topup(access=studio.access, amount=10 + n, memo=f"top-up {n}")
    log_in(page, studio)
    policy = page.locator("#policy")
    expect(policy).to_have_attribute("data-threshold", "100")

    # when alice, an owner, changes both limits with the keyboard
    threshold, cap = page.get_by_label("Per request, up to (credits)"), page.get_by_label("Per day, up to (credits)")
    threshold.focus()
    threshold.fill("50")
    page.keyboard.press("Tab")
    expect(cap).to_be_focused()
    cap.fill("300")
    page.keyboard.press("Tab")
    expect(page.locator("#policy-save")).to_be_focused()
    page.keyboard.press("Enter")

    # then they are saved, said so, and stored
    expect(page.locator("#policy-status")).to_contain_text("Saved: up to 50 credits per request and 300 credits a day")
    expect(policy).to_have_attribute("data-threshold", "50")
    stored = SpendPolicy.objects.get(workspace=studio.workspace)
    assert (stored.no_confirm_threshold, stored.daily_no_confirm_cap, stored.updated_by_id) == (50, 300, studio.user.pk)
    shoot(page, "billing-05-owner-limits")

    # when bob changes the cap through the API, alice's panel follows without a reload
    answer = _api(page, studio, bob_token, "PATCH", "/billing/policy/", {"daily_no_confirm_cap": 400})
    assert answer.status == 200, answer.text()
    expect(policy).to_have_attribute("data-cap", "400")
    expect(cap).to_have_value("400")

    # and the ledger pages back and forth with the keyboard: 13 movements, 10 a page
    expect(page.locator("#ledger-position")).to_have_text("1–10 of 13")
    expect(page.locator("#ledger-newer")).to_be_disabled()
    page.locator("#ledger-older").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#ledger-position")).to_have_text("11–13 of 13")
    expect(page.locator("#ledger-rows tr")).to_have_count(3)
    expect(page.locator("#ledger-newer")).to_be_focused()  # Older is now disabled: the keyboard moved over
    expect(page.locator("#ledger-rows tr").last).to_contain_text("browser test credits")
    page.keyboard.press("Enter")
    expect(page.locator("#ledger-position")).to_have_text("1–10 of 13")

    # and she tops up with the keyboard: 2000 + the 12 top-ups (186) + 250
    page.get_by_label("Top up (credits)").fill("250")
    page.keyboard.press("Enter")
    expect(page.locator("#topup-status")).to_have_text("Added 250 credits: 2,436 credits available.")
    expect(page.locator("#billing-panel")).to_have_attribute("data-available", "2436")
    expect(page.locator("#ledger-position")).to_have_text("1–10 of 14")
    expect(page.locator("#ledger-rows tr").first.locator("td").nth(1)).to_have_text("Top-up")  # not "· top-up" too

    # when bob asks for two quotes through the API (no card: nobody put them in the chat)
    first = _api(
        page, studio, bob_token, "POST", "/billing/quotes/", {"operation": "video.generate", "params": {"seconds": 4}}
    )
    second = _api(page, studio, bob_token, "POST", "/billing/quotes/", {"operation": "3d.generate"})
    assert (first.status, second.status) == (201, 201), (first.text(), second.text())
    first_id, second_id = first.json()["id"], second.json()["id"]

    # then both wait in alice's panel, and she approves the first there
    waiting = page.locator(f"#quotes .quote[data-quote='{first_id}']")
    expect(waiting).to_contain_text("80 credits for video generation, 4 s")
    expect(page.locator(f"#quotes .quote[data-quote='{second_id}']")).to_be_visible()
    waiting.get_by_role("button", name="Approve this quote").click()
    expect(waiting).to_have_count(0)
    approval = Approval.objects.get(quote_id=first_id)
    assert (approval.kind, approval.amount, approval.approved_by_id) == ("quote", 80, studio.user.pk)

    # when alice is made an editor behind her back and tries again
    Membership.objects.filter(workspace=studio.workspace, user=studio.user).update(role="editor")
    threshold.fill("10")
    page.locator("#policy-save").click()

    # then the 403 reads as a sentence, nothing changed, and the controls turn read-only
    expect(page.locator("#policy-status")).to_have_text(
        "Not changed: only an owner can do this, and you are an editor in this workspace."
    )
    expect(page.locator("#policy-save")).to_be_disabled()
    expect(threshold).to_be_disabled()
    expect(page.locator("#topup-submit")).to_be_disabled()
    assert SpendPolicy.objects.get(workspace=studio.workspace).no_confirm_threshold == 50
    shoot(page, "billing-06-refused")

    # when carol (a viewer) and dave (an editor) open the studio, at 800 px wide
    for username, role in (("carol", "a viewer"), ("dave", "an editor")):
        context = browser.new_context(viewport={"width": 800, "height": 1000})
        context.set_default_timeout(20_000)
        other = context.new_page()
        try:
            _log_in_as(other, studio, username)
            other.get_by_role("tab", name="Billing").click()  # at 800 px the studio is tabs
            # then they see the limits, read-only, and why
            expect(other.locator("#policy")).to_have_attribute("data-cap", "400")
            expect(other.get_by_label("Per request, up to (credits)")).to_have_value("50")
            for control in ("#policy-threshold", "#policy-cap", "#policy-save", "#topup-amount", "#topup-submit"):
                expect(other.locator(control)).to_be_disabled()
            # and the quote still waiting: an editor may approve it, a viewer only sees it
            approve = other.locator(f"#quotes .quote[data-quote='{second_id}'] button[data-action='approve']")
            if username == "carol":
                expect(approve).to_be_disabled()
            else:
                expect(approve).to_be_enabled()
            expect(other.locator("#policy-hint")).to_have_text(
                f"Only an owner can change these limits or add credits; you are {role} in this workspace."
            )
            # and the page fits 800 px: nothing wider than the window
            width = other.evaluate("() => document.documentElement.scrollWidth")
            assert width <= 800, width
            other.locator("#billing-panel").scroll_into_view_if_needed()
            shoot(other, f"billing-07-read-only-{username}")
        finally:
            context.close()
    assert SpendPolicy.objects.get(workspace=studio.workspace).daily_no_confirm_cap == 400
    assert page.js_errors == []
