"""A quick request in the studio (issue 19 item 2): its result card in the chat, its image on the canvas, and no
entry in the Tasks panel until the person keeps it as a task. Real daphne, django-q2 cluster and chromium."""

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import log_in, shoot

pytestmark = [pytest.mark.browser, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def test_it_answers_a_quick_request_with_a_result_card_and_lists_it_once_kept(studio, page):
    from agents.models import Task, TaskKind

    # given a person logged in to the studio
    log_in(page, studio)

    # when they ask Main for one image
    page.get_by_label("Message to Main").fill("Generate an image of a ginger cat")
    page.keyboard.press("Enter")

    # then it is handled as a quick job, and its result card arrives naming the image
    expect(page.locator(".msg.person .route")).to_contain_text("quick job")
    card = page.locator(".task-card[data-status='open']")
    expect(card).to_be_visible(timeout=60_000)
    expect(card.locator(".card-meta")).to_contain_text("result card")
    result = card.locator(".card-results button.result-open")
    expect(result).to_have_count(1)
    expect(page.locator(".tile[data-kind='image'] img")).to_have_count(1, timeout=30_000)
    shoot(page, "quick-01-result-card")
    # and the Tasks panel does not list it
    expect(page.locator("#tasks .task")).to_have_count(0)

    # when they open the result from the card, the canvas shows it
    result.click()
    task = Task.objects.get(workspace=studio.workspace)
    artifact = task.checklist.get().artifacts[-1]["artifact"]
    expect(page.locator(f"#viewer[data-artifact='{artifact}']")).to_be_visible()

    # when they keep it as a task
    card.locator("button[data-action='keep']").click()

    # then the card is resolved and the Tasks panel lists the task
    expect(page.locator(".task-card[data-status='resolved'] .card-resolution")).to_contain_text("Kept as a task")
    expect(page.locator(f"#tasks .task[data-task='{task.pk}']")).to_have_count(1, timeout=30_000)
    shoot(page, "quick-02-kept")
    task.refresh_from_db()
    assert task.kind == TaskKind.PERSISTENT
    assert page.js_errors == []


def test_a_quick_task_the_person_goes_on_talking_to_joins_the_tasks_panel(studio, page):
    from agents.models import Task

    # given a quick job's result, which the Tasks panel does not list
    log_in(page, studio)
    page.get_by_label("Message to Main").fill("Generate an image of a ginger cat")
    page.keyboard.press("Enter")
    expect(page.locator(".task-card[data-status='open']")).to_be_visible(timeout=60_000)
    expect(page.locator("#tasks .task")).to_have_count(0)
    task = Task.objects.get(workspace=studio.workspace)

    # when the person asks for a change to it
    page.get_by_label("Message to Main").fill("Make the ginger cat warmer, more orange")
    page.keyboard.press("Enter")

    # then the message went to that task, says why, and the task is listed from then on (after a reload too)
    expect(page.locator(f".msg.person .route[data-task='{task.pk}']")).to_have_count(2)
    expect(page.locator(".msg.person .why").last).to_contain_text(f"task #{task.pk}")
    expect(page.locator(f"#tasks .task[data-task='{task.pk}']")).to_have_count(1)
    page.reload()
    page.locator("#studio[data-ready='true']").wait_for()
    expect(page.locator(f"#tasks .task[data-task='{task.pk}']")).to_have_count(1)
    shoot(page, "quick-03-talked-to-task-listed")
    assert not page.js_errors, page.js_errors
