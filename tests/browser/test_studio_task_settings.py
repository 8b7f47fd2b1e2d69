"""A task's detail in a real browser (issue 16 items 2 and 5): its settings — autonomy, tool domains, budget
approvals, and the irreversible-operations rule shown always on — edited by those allowed to, and a resumed
task that waits saying why, in words, with its review card.

Autonomy is compared on persisted facts: the same one-poster request, resumed from the task's detail, opens a
confirmation card and places no order under `ask`, and under `auto` runs to the end with no card at all.
Screenshots go to var/screenshots/task-*.png.
"""

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import PASSWORD, log_in, shoot
from tests.browser.test_studio import wait_until

pytestmark = [pytest.mark.browser, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

POSTER = "Make a retro brand poster"


def _paused_task(studio, title: str, brief: str):
    """A task as task_create leaves it (its brief the first message, goal revision 1), but paused before its
    first turn: nothing runs until a person resumes it, so its settings can be chosen first."""
    from agents.models import GoalRevision, InboxMessage, Task, TaskStatus

    task = Task.objects.create(
        workspace=studio.workspace, title=title, brief=brief, created_by=studio.user, status=TaskStatus.PAUSED
    )
    GoalRevision.objects.create(task=task, revision=1, brief=brief)
    InboxMessage.objects.create(task=task, author=studio.user, source="person", text=brief)
    return task


def _open_task(page, task) -> None:
    page.locator(f"#tasks [data-task='{task.pk}'] .task-open").click()
    expect(page.locator("#task-detail h3")).to_be_focused()
    expect(page.locator("#task-detail")).to_have_attribute("data-task", str(task.pk))


def _tab_to(page, locator, *, presses: int = 30) -> None:
    for _ in range(presses):
        if locator.evaluate("e => e === document.activeElement"):
            return
        page.keyboard.press("Tab")
    raise AssertionError("not reachable with Tab")


def _choose_autonomy(page, key: str) -> None:
    """From the checked autonomy (the default, `checkpoints`), move with an arrow key, then Tab to Save."""
    detail = page.locator("#task-detail")
    detail.locator("input[name='autonomy']:checked").focus()
    page.keyboard.press(key)
    _tab_to(page, detail.locator("#task-settings-save"))
    page.keyboard.press("Enter")


def test_it_switches_autonomy_from_the_task_settings_and_an_auto_run_no_longer_asks(studio, page):
    from agents.models import Card, CardStatus, Task, TaskStatus
    from billing.models import Order, OrderStatus

    # given two paused tasks with the same one-poster request, on the default autonomy
    asking = _paused_task(studio, "Poster, asking", POSTER)
    alone = _paused_task(studio, "Poster, alone", POSTER)
    log_in(page, studio)
    detail = page.locator("#task-detail")

    # when alice opens the first from the task list and sets it to "ask" with the keyboard
    _open_task(page, asking)
    expect(detail.locator("input[name='autonomy'][value='checkpoints']")).to_be_checked()
    expect(detail.locator("#task-irreversible-rule")).to_be_checked()
    expect(detail.locator("#task-irreversible-rule")).to_be_disabled()
    expect(detail).to_contain_text("Always on")
    _choose_autonomy(page, "ArrowUp")

    # then it is saved, said so, and stored
    expect(page.locator("#task-settings-status")).to_contain_text("Saved: ask")
    expect(detail).to_have_attribute("data-autonomy", "ask")
    assert Task.objects.get(pk=asking.pk).autonomy == "ask"
    shoot(page, "task-01-settings-ask")

    # when she opens the second, sets it to "auto" and refuses it videos
    page.locator("#task-detail-close").click()
    expect(detail).to_be_hidden()
    expect(page.locator(f"#tasks [data-task='{asking.pk}'] .task-open")).to_be_focused()
    _open_task(page, alone)
    detail.get_by_label("Videos").uncheck()
    _choose_autonomy(page, "ArrowDown")

    # then both settings are stored, the domains in their fixed order
    expect(page.locator("#task-settings-status")).to_contain_text("Saved: automatic; it may use 5 tool domains")
    stored = Task.objects.get(pk=alone.pk)
    assert stored.autonomy == "auto"
    assert stored.permissions["domains"] == ["image", "3d", "documents", "flows", "assets"]
    expect(detail.get_by_label("Videos")).not_to_be_checked()
    shoot(page, "task-02-settings-auto")

    # when she resumes both from their detail
    detail.locator("#task-resume").focus()
    page.keyboard.press("Enter")
    expect(detail.locator(".resume-verdict")).to_have_attribute("data-verdict", "next_step_proposed")
    expect(detail.locator(".resume-sentence")).to_have_text("Everything checked out: it goes on with its next step.")
    _open_task(page, asking)
    detail.locator("#task-resume").click()

    # then under "ask" the paid step waits for a confirmation card, and nothing is ordered
    ask_card = wait_until(
        lambda: Card.objects.filter(
            task=asking, status=CardStatus.OPEN, payload__source="confirm_call", payload__reason="autonomy_ask"
        ).first(),
        timeout=60,
        what="the confirmation card of the asking task",
    )
    expect(page.locator(f".task-card[data-card='{ask_card.pk}']")).to_contain_text("Confirm the paid step")
    expect(detail.get_by_role("button", name="Show the card it waits on")).to_be_visible()
    expect(detail.locator(".task-status")).to_contain_text("Waiting: it waits for a person's answer on a card.")

    # and under "auto" the same request runs to the end with no card at all, paid under the limits
    wait_until(lambda: Task.objects.get(pk=alone.pk).status == TaskStatus.DONE, timeout=120, what="the auto task done")
    assert not Card.objects.filter(task=alone).exists()
    orders = list(Order.objects.filter(task_id=alone.pk).values_list("status", "authorisation"))
    assert orders == [(OrderStatus.CAPTURED, "auto")]
    assert not Order.objects.filter(task_id=asking.pk).exists()
    asking.refresh_from_db()
    assert (asking.status, asking.waiting_for["card"]) == (TaskStatus.WAITING, ask_card.pk)
    expect(page.locator(f"#tasks [data-task='{alone.pk}']")).to_have_attribute("data-status", "done")
    shoot(page, "task-03-ask-versus-auto")

    # and a budget approved from the asking task's detail is listed there, by her
    detail.get_by_label("Approve a budget of (credits)").fill("200")
    page.keyboard.press("Enter")
    expect(detail.locator(".task-budget li")).to_contain_text("200 credits approved by alice")
    assert page.js_errors == []


def test_a_resumed_task_says_why_it_waits_and_links_its_review_card(studio, page, browser, make_user):
    from django.contrib.auth.hashers import PBKDF2PasswordHasher

    from agents.models import Card, Task, TaskStatus
    from agents.services.goals import goal_revise_by_person
    from agents.services.turns import basis_now
    from workspace.models import Membership

    # given a paused task whose work relied on goal revision 1, whose goal alice then rewrote
    task = _paused_task(studio, "Posters", "Make 2 retro posters")
    Task.objects.filter(pk=task.pk).update(basis=basis_now(task))
    goal_revise_by_person(access=studio.access, task_id=task.pk, brief="Make 2 art-deco posters instead")
    log_in(page, studio)
    detail = page.locator("#task-detail")
    _open_task(page, task)
    expect(detail).to_contain_text("Paused")

    # when she resumes it from its detail with the keyboard
    _tab_to(page, detail.locator("#task-resume"))
    page.keyboard.press("Enter")

    # then the detail says, in words, why it waits, and where its review card is
    verdict = detail.locator(".resume-verdict")
    expect(verdict).to_have_attribute("data-verdict", "goal_changed_review")
    expect(verdict.locator("h4")).to_have_text("Why it waits")
    expect(verdict.locator(".resume-sentence")).to_have_text(
        "Its goal changed while it was interrupted, so you review the work before it goes on."
    )
    assert "goal_changed_review" not in verdict.inner_text()
    review = verdict.locator("#task-review-card")
    expect(review).to_contain_text("The goal changed while this task was interrupted")
    stored = Task.objects.get(pk=task.pk)
    assert (stored.status, stored.stop_reason, stored.waiting_for["resume"]) == (
        TaskStatus.WAITING,
        "resume_review",
        "goal_changed_review",
    )
    card = Card.objects.get(pk=stored.waiting_for["card"])
    assert card.payload["source"] == "resume_review"
    expect(review).to_have_attribute("data-card", str(card.pk))
    shoot(page, "task-04-resume-verdict")

    # when she follows the link, the review card in the chat takes the keyboard
    review.focus()
    page.keyboard.press("Enter")
    expect(page.locator(f".task-card[data-card='{card.pk}'] .card-title")).to_be_focused()
    expect(page.locator(f".task-card[data-card='{card.pk}']")).to_contain_text("art-deco")
    # its body keeps its lines: the new goal, then what confirming does, never run together
    shown = page.locator(f".task-card[data-card='{card.pk}'] .card-body").inner_text()
    assert "Make 2 art-deco posters instead\nConfirm to go on" in shown

    # and after a reload the task still says why it waits (from its stored state, not from this session)
    page.reload()
    page.locator("#studio[data-ready='true']").wait_for()
    _open_task(page, task)
    expect(detail.locator(".resume-verdict")).to_have_attribute("data-verdict", "goal_changed_review")
    expect(detail.locator("#task-review-card")).to_have_attribute("data-card", str(card.pk))

    # when alice is made a viewer behind her back and tries to change the autonomy
    Membership.objects.filter(workspace=studio.workspace, user=studio.user).update(role="viewer")
    detail.locator("input[name='autonomy'][value='auto']").check()
    detail.locator("#task-settings-save").click()

    # then the 403 reads as a sentence, nothing changed, and the settings turn read-only
    expect(page.locator("#task-settings-status")).to_have_text(
        "Not changed: this needs an editor, and you are a viewer here."
    )
    expect(detail.locator("#task-settings-save")).to_have_count(0)
    expect(detail.locator("input[name='autonomy'][value='checkpoints']")).to_be_checked()
    expect(detail.locator("input[name='autonomy'][value='auto']")).to_be_disabled()
    assert Task.objects.get(pk=task.pk).autonomy == "checkpoints"
    Membership.objects.filter(workspace=studio.workspace, user=studio.user).update(role="owner")

    # when carol, a viewer, opens the task at 800 px wide
    carol = make_user("carol")
    carol.password = PBKDF2PasswordHasher().encode(PASSWORD, PBKDF2PasswordHasher().salt())
    carol.save(update_fields=["password"])
    Membership.objects.create(workspace=studio.workspace, user=carol, role="viewer")
    context = browser.new_context(viewport={"width": 800, "height": 1000})
    context.set_default_timeout(20_000)
    other = context.new_page()
    try:
        other.goto(f"{studio.url}/")
        other.get_by_label("Username").fill("carol")
        other.get_by_label("Password").fill(PASSWORD)
        other.keyboard.press("Enter")
        other.locator("#studio[data-ready='true']").wait_for()
        other.get_by_role("tab", name="Tasks").click()  # at 800 px the studio is tabs
        other.locator(f"#tasks [data-task='{task.pk}'] .task-open").click()
        other_detail = other.locator("#task-detail")

        # then she reads why it waits and its settings, but cannot change them, resume it or approve a budget
        expect(other_detail.locator(".resume-verdict")).to_have_attribute("data-verdict", "goal_changed_review")
        for control in other_detail.locator("fieldset.settings-fields input").all():
            expect(control).to_be_disabled()
        expect(other_detail.locator("input[name='autonomy'][value='checkpoints']")).to_be_checked()
        expect(other_detail.locator("#task-settings-save")).to_have_count(0)
        expect(other_detail.locator("#task-budget-approve")).to_have_count(0)
        expect(other_detail.locator("#task-pause")).to_have_count(0)
        expect(other_detail).to_contain_text("Only editors and owners change a task's settings; you are a viewer here.")
        width = other.evaluate("() => document.documentElement.scrollWidth")
        assert width <= 800, width
        other_detail.scroll_into_view_if_needed()
        shoot(other, "task-05-viewer-800px")
    finally:
        context.close()
    assert page.js_errors == []
