"""'How was this made' and version authors by name in a real browser (issue 16 items 4 and 6).

A poster is made through the real runtime (the scripted model, the procedural generator, a quote card the person
approves in the chat); its provenance view lists the model lease, the tool calls and the approval with who gave it.
A document written by two people shows their names in the version history, and its provenance opens the version
it came from. Screenshots go to var/screenshots/provenance-*.png.
"""

import re

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import log_in, shoot

pytestmark = [pytest.mark.browser, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

POSTER = "Make a retro poster for the bakery's summer fair"
TASTE = "Our bakery's posters always use warm orange."


def _focused(page, locator) -> bool:
    return locator.evaluate("element => element === document.activeElement")


def _tab_to(page, locator, *, limit: int = 15) -> None:
    for _ in range(limit):
        if _focused(page, locator):
            return
        page.keyboard.press("Tab")
    assert _focused(page, locator), "not reachable with Tab"


def test_it_shows_how_a_generated_poster_was_made_with_the_model_the_calls_and_who_approved_it(studio, page):
    from agents.models import Card, ModelLease
    from billing.models import Order
    from billing.services.policy import spend_policy_update
    from workspace.models import GenerationJob

    # given a workspace whose policy asks before every paid order, and alice in the studio
    spend_policy_update(access=studio.access, no_confirm_threshold=0)
    log_in(page, studio)
    # and a preference she told the memory panel, which is in the profile every step is shown
    page.get_by_label("Remember").fill(TASTE)
    page.get_by_label("Kind").select_option("preference")
    page.get_by_role("button", name="Remember", exact=True).click()
    expect(page.locator("#profile li")).to_have_count(1)

    # when she asks Main for a poster and approves its quote card
    page.get_by_label("Message to Main").fill(POSTER)
    page.keyboard.press("Enter")
    card = page.locator(".task-card[data-status='open']")
    expect(card.locator("button[data-action='approve']")).to_be_visible(timeout=30_000)
    card.locator("button[data-action='approve']").click()
    # and the card in the chat says who approved it, by name
    expect(page.locator(".task-card[data-status='resolved'] .card-resolution")).to_have_text("Approved by alice")

    # then the poster arrives on the canvas
    tile = page.locator(".tile[data-kind='image']")
    expect(tile).to_have_count(1, timeout=60_000)
    job = GenerationJob.objects.get(workspace=studio.workspace, status="succeeded")
    lease = ModelLease.objects.get(turn_id=job.turn_id)
    approved = Card.objects.get(task_id=job.task_id, kind="quote")
    assert approved.resolved_by_id == studio.user.pk

    # when she opens it and, with the keyboard, asks how version 1 was made
    tile.locator("button.tile-open").click()
    expect(page.locator("#viewer")).to_be_visible()
    row = page.locator("#versions li[data-version='1']")
    expect(row.locator(".version-author")).to_have_text(re.compile(rf"^task #{job.task_id} “.+”$"))
    row.locator("button", has_text="v1").focus()
    how = row.get_by_role("button", name="How was this made: version 1")
    _tab_to(page, how)
    page.keyboard.press("Enter")

    # then the provenance view opens with the keyboard on its heading
    view = page.locator("#provenance")
    expect(view).to_have_attribute("data-state", "ready")
    expect(how).to_have_attribute("aria-expanded", "true")
    heading = page.locator("#provenance-title")
    expect(heading).to_contain_text("How version 1 of")
    assert _focused(page, heading)
    # the task and the person's request
    expect(view.locator("[data-part='task']")).to_contain_text(f"#{job.task_id}")
    expect(view.locator("[data-part='request'] li[data-source='person']")).to_contain_text(POSTER)
    expect(view.locator("[data-part='request'] li[data-source='person']")).to_contain_text("from alice")
    # the exact model lease
    model = view.locator("[data-part='model']")
    expect(model.locator(f"dd[data-model='{lease.model}']")).to_have_text(f"{lease.model} ({lease.provider})")
    expect(model).to_contain_text(f"#{lease.pk} of turn")
    # the tool calls, the one that made the poster marked, its input and result one keypress away
    made = view.locator(f".provenance-call[data-call='{job.idempotency_key}']")
    expect(made).to_have_attribute("data-name", "generate_image")
    expect(made).to_have_attribute("data-made", "true")
    expect(view.locator("[data-part='calls'] .provenance-job")).to_contain_text(f"Generation job #{job.pk}")
    # the approval, by name
    decision = view.locator(f".provenance-decision[data-card='{approved.pk}'] .decision")
    expect(decision).to_have_text(re.compile(r"^Approved by alice"))
    # and what the approval covered
    covered = view.locator(f".provenance-decision[data-card='{approved.pk}'] .provenance-covers")
    expect(covered).to_have_text(re.compile(r"^Covered 1 image at \d+ credits each, \d+ credits in all$"))
    # the charge of the call that made it, captured
    order = Order.objects.get(workspace=studio.workspace, idempotency_key=job.idempotency_key)
    expect(view.locator(".provenance-charge")).to_have_count(1)
    charge = view.locator(f".provenance-charge[data-order='{order.pk}'][data-status='captured']")
    expect(charge).to_contain_text(f"{order.amount} credits for")
    # and the memory the step was shown
    expect(view.locator("[data-part='memories'] li")).to_contain_text(["orange"])
    # and no creative guide: a quick request is one short step that reads none (a planned task's poster names the
    # guide it read: tests/agents/test_guides.py)
    expect(view.locator("[data-part='guides'] li")).to_have_count(0)
    shoot(page, "provenance-poster")

    # when she opens the call's details with the keyboard
    summary = made.locator("summary")
    _tab_to(page, summary, limit=40)
    page.keyboard.press("Enter")
    expect(made.locator("pre").first).to_be_visible()
    expect(made.locator("pre").nth(1)).to_contain_text(f'"job": {job.pk}')

    # and closes the view with Escape: the keyboard goes back to the button that opened it
    page.keyboard.press("Escape")
    expect(view).to_be_hidden()
    assert _focused(page, how)
    expect(how).to_have_attribute("aria-expanded", "false")

    # at 800 px wide the view still fits without scrolling sideways
    page.set_viewport_size({"width": 800, "height": 1000})
    how.click()
    expect(view).to_have_attribute("data-state", "ready")
    # (its button toggles it, as its aria-expanded says: pressed again it closes, pressed once more it opens)
    how.click()
    expect(view).to_be_hidden()
    how.click()
    expect(view).to_have_attribute("data-state", "ready")
    wide = page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert wide <= 0, f"the page scrolls sideways by {wide}px at 800 px"
    view.scroll_into_view_if_needed()
    shoot(page, "provenance-poster-800")
    assert page.js_errors == []


def test_it_names_the_people_in_the_version_history_and_opens_the_version_a_change_came_from(studio, page, make_user):
    from workspace.models import Role
    from workspace.services.artifacts import artifact_create, artifact_version_add
    from workspace.services.workspaces import membership_add

    # given a brief alice wrote and bob, an editor, changed
    bob = make_user("bob")
    membership_add(access=studio.access, user_identifier="bob", role=Role.EDITOR)
    brief = artifact_create(
        workspace_id=studio.workspace.pk,
        kind="document",
        title="Fair brief",
        content="Posters for the summer fair.",
        author_user=studio.user,
    )
    artifact_version_add(
        workspace_id=studio.workspace.pk,
        artifact_id=brief.pk,
        base_version=1,
        content="Posters for the summer fair, in warm colours.",
        meta={"change": "warmer"},
        author_user=bob,
    )
    log_in(page, studio)

    # when alice opens it
    page.locator(f".tile[data-artifact='{brief.pk}'] button.tile-open").click()

    # then the version history names both people, not their ids
    authors = page.locator("#versions .version-author")
    expect(authors).to_have_text(["bob", "alice"])
    expect(page.locator("#versions")).not_to_contain_text("user #")

    # and bob's next change, arriving live, is announced by name
    artifact_version_add(
        workspace_id=studio.workspace.pk,
        artifact_id=brief.pk,
        base_version=2,
        content="Posters for the summer fair, in warm colours, with the date.",
        author_user=bob,
    )
    expect(page.locator("#notices .notice[data-version='3']")).to_contain_text("added by bob")
    expect(authors).to_have_text(["bob", "bob", "alice"])
    shoot(page, "provenance-version-authors")

    # when she asks how version 2 was made
    page.get_by_role("button", name="How was this made: version 2").click()
    view = page.locator("#provenance")
    expect(view).to_have_attribute("data-state", "ready")

    # then it says bob wrote it, outside any task, and that it came from version 1
    expect(view.locator(".provenance-summary")).to_contain_text("Made by bob")
    expect(view.locator("[data-part='task']")).to_contain_text("outside any task")
    earlier = view.locator("[data-part='sources'] li[data-relation='previous_version'] button")
    expect(earlier).to_have_text("Fair brief v1")
    shoot(page, "provenance-document")

    # and following that link (with the keyboard) shows version 1, with the keyboard on its row
    earlier.focus()
    page.keyboard.press("Enter")
    expect(page.locator(".version-preview h4")).to_have_text("Version 1")
    expect(page.locator(".version-preview pre")).to_have_text("Posters for the summer fair.")
    v1 = page.locator("#versions li[data-version='1'] button:not(.how)")
    expect(v1).to_be_focused()
    assert page.js_errors == []
