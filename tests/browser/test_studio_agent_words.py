"""The agent's own words in the studio (issue 33 items 1 and 2), in real chromium with real workers: what the agent
says in a task appears in the chat under the message it answers, live and after a reload, and in the task's
conversation beside its checklist; a request the embedded default cannot make gets a card, not silence.
Screenshots go to var/screenshots/words-*.png.
"""

import time

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import log_in, shoot

pytestmark = [pytest.mark.browser, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def test_what_the_agent_says_shows_under_the_message_it_answers_and_a_stop_is_a_card(studio, page):
    # given a person in the studio, with no model profile (the embedded default cannot write prose)
    log_in(page, studio)

    # when they ask for a poem
    asked = "Write a haiku about autumn leaves"
    page.get_by_label("Message to Main").fill(asked)
    started = time.monotonic()
    page.keyboard.press("Enter")

    # then a card explains the stop and offers what it can do instead, soon after the request
    card = page.locator(".task-card[data-status='open']")
    expect(card).to_be_visible(timeout=30_000)
    waited = time.monotonic() - started
    print(f"request → card in the chat: {waited:.1f} s")
    assert card.locator(".card-actions button").count() >= 2, "the card offers choices"

    # and the agent's own words are in the chat, after the person's message, saying what they answer
    words = page.locator(".msg.agent")
    expect(words.first).to_be_visible(timeout=30_000)
    expect(words.first.locator(".text")).to_contain_text("language model")
    expect(words.first.locator(".answers")).to_contain_text(asked)
    order = page.locator("#chat > li").evaluate_all(
        "items => items.map(i => ['agent', 'person'].find(c => i.classList.contains(c)) || 'other')"
    )
    assert order.index("person") < order.index("agent"), order
    shoot(page, "words-01-stop-and-card")

    # when the page is reloaded, the same words are there once
    count = words.count()
    page.reload()
    page.locator("#studio[data-ready='true']").wait_for()
    expect(page.locator(".msg.agent")).to_have_count(count)
    expect(page.locator(".msg.agent .answers").first).to_contain_text(asked)
    assert not page.js_errors, page.js_errors


def test_a_task_conversation_shows_the_agent_beside_the_checklist(studio, page):
    from agents.models import Task, TaskKind

    # given a person in the studio
    log_in(page, studio)

    # when they ask for a series, which becomes a task with a checklist
    page.get_by_label("Message to Main").fill("Make a series of 3 posters for our jazz night on Friday")
    page.keyboard.press("Enter")
    expect(page.locator("#tasks .task")).to_have_count(1, timeout=30_000)
    row = page.locator("#tasks .task").element_handle()
    expect(page.locator(".msg.agent").first).to_be_visible(timeout=30_000)
    task = Task.objects.get(workspace=studio.workspace, kind=TaskKind.PERSISTENT)

    # then its detail lists the checklist and, in its conversation, the person's words then the agent's
    page.locator(f"#tasks [data-task='{task.pk}'] .task-open").click()
    detail = page.locator("#task-detail")
    expect(detail.locator(".task-checklist li")).to_have_count(3, timeout=30_000)
    # and the row clicked is the one first shown: the task's events update it in place, never rebuild it under a click
    expect(page.locator(f"#tasks [data-task='{task.pk}'] .task-progress")).to_contain_text("/3 done")
    assert row.evaluate("li => li.isConnected"), "the task's row was rebuilt by an event"
    conversation = detail.locator(".task-messages > li")
    expect(conversation.first).to_have_class("msg person")
    expect(detail.locator(".task-messages .msg.agent").first).to_be_visible()
    expect(detail.locator(".task-messages .msg.agent .who").first).to_contain_text("The agent")
    shoot(page, "words-02-task-conversation")
    assert not page.js_errors, page.js_errors


def test_an_answer_to_mains_question_shows_the_message_once_and_where_it_went(studio, page):
    from agents.models import Task, TaskStatus

    # given two finished poster series, so a change that names neither is asked about
    series = [
        Task.objects.create(
            workspace=studio.workspace, created_by=studio.user, title=title, brief=brief, status=TaskStatus.DONE
        )
        for title, brief in (
            ("Spring market posters", "Three posters for the spring market"),
            ("Summer market posters", "Three posters for the summer market"),
        )
    ]
    log_in(page, studio)

    # when the person asks for a change and Main asks which work it is about
    asked = "Make them warmer"
    page.get_by_label("Message to Main").fill(asked)
    page.keyboard.press("Enter")
    question = page.locator(".task-card[data-status='open']")
    expect(question.locator(f"button[data-option='task:{series[1].pk}']")).to_be_visible(timeout=30_000)
    expect(page.locator(".msg.person .why").first).to_contain_text("so I ask")

    # and they choose the summer series
    question.locator(f"button[data-option='task:{series[1].pk}']").click()

    # then their words show once, and a line says where they went, as they chose
    chosen = page.locator(".msg.person.chosen")
    expect(chosen).to_have_count(1)
    expect(chosen.locator(".route")).to_contain_text(f"task #{series[1].pk}")
    expect(page.locator(".msg.person .text", has_text=asked)).to_have_count(1)
    page.reload()
    page.locator("#studio[data-ready='true']").wait_for()
    expect(page.locator(".msg.person .text", has_text=asked)).to_have_count(1)
    expect(page.locator(".msg.person.chosen")).to_have_count(1)
    shoot(page, "words-03-answer-to-mains-question")
    assert not page.js_errors, page.js_errors
