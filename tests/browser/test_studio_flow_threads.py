"""A Flow run over a conversation thread in a real browser: started from a task's detail and from the Main chat, its
steps shown live in the chat under that thread, and its result shown where the thread is read — the task's
conversation, or the Main chat — as a message from the Flow.

Same servers as test_studio.py (daphne, a django-q2 cluster, PostgreSQL). Screenshots: var/screenshots/flow-thread-*.
"""

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import log_in, shoot
from tests.browser.test_studio import wait_until

pytestmark = [pytest.mark.browser, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

SUMMARY = {
    "nodes": {
        "thread": {"type": "text_input"},
        "sum": {"type": "generate_text", "params": {"instructions": "Summarise"}},
        "end": {"type": "finish"},
    },
    "edges": [["thread", "sum"], ["sum", "end"]],
    "start": "thread",
}


def test_it_runs_a_flow_over_a_task_thread_and_over_main_and_shows_each_result_in_its_thread(studio, page):
    from agents.models import InboxMessage, InboxStatus, MainMessage, Route, Task, TaskStatus
    from workspace.flows.authoring import flow_create

    # given a task whose conversation the agent has read, a Main thread, and a Flow that summarises its input
    task = Task.objects.create(
        workspace=studio.workspace, title="Jazz posters", created_by=studio.user, status=TaskStatus.IDLE
    )
    for text in ("Posters for the jazz festival, please.", "Add the date: 14 July, Lyon."):
        InboxMessage.objects.create(task=task, author=studio.user, text=text, status=InboxStatus.CONSUMED)
    MainMessage.objects.create(
        workspace=studio.workspace, author=studio.user, text="What can you make?", route=Route.ANSWER, reply="Images."
    )
    flow_create(workspace_id=studio.workspace.pk, title="Thread summary", graph=SUMMARY)

    # when the person opens the task and runs the Flow over its conversation
    log_in(page, studio)
    page.locator(f"#tasks [data-task='{task.pk}'] .task-open").click()
    detail = page.locator("#task-detail")
    expect(detail.locator(".task-messages li")).to_have_count(2)
    form = detail.locator(f".flow-thread-form[data-thread='task:{task.pk}']")
    expect(form.locator("option")).to_have_text(["Thread summary"])
    form.get_by_role("button", name="Run the Flow").click()

    # then the run shows in the chat under the task's thread, step by step, until it is done
    run = page.locator(f"#chat .flow-run[data-thread='task:{task.pk}']")
    # (a worker's first offline writing loads the understanding layer's models: a few seconds)
    expect(run).to_have_attribute("data-status", "done", timeout=30_000)
    expect(run.locator(".flow-run-nodes li")).to_have_count(3)
    expect(run.locator(".flow-run-nodes li[data-node-status='done']")).to_have_count(3)
    expect(run.locator(".who")).to_contain_text("Flow “Thread summary” · run #")
    expect(run.locator(".who")).to_contain_text(f"in task #{task.pk}")

    expect(form.get_by_role("status")).to_contain_text("started: its steps, then its result, show in the chat")
    # and its result is a message from the Flow, in the chat and in the task's own conversation
    result = page.locator(f"#chat .flow-result[data-thread='task:{task.pk}']")
    # (the offline writer's summary: the thread's first and latest messages, and its note)
    expect(result).to_contain_text("It opens with: Posters for the jazz festival, please.")
    expect(result).to_contain_text("offline writer")
    expect(detail.locator(".task-messages .flow-result")).to_contain_text("Add the date: 14 July, Lyon.")
    shoot(page, "flow-thread-task")
    posted = wait_until(
        lambda: list(InboxMessage.objects.filter(task=task, source="flow")), timeout=10, what="the posted result"
    )
    assert len(posted) == 1 and posted[0].author_id is None

    # when the person runs it over the Main thread from the chat
    page.get_by_role("button", name="Run a Flow over this conversation").click()
    main_form = page.locator(".flow-thread-form[data-thread='main']")
    expect(main_form.locator("option")).to_have_text(["Thread summary"])
    main_form.get_by_label("over the last").fill("2")
    main_form.get_by_role("button", name="Run the Flow").click()

    # then its steps and its result show in the chat as Main's, the result a message from the Flow
    expect(page.locator("#chat .flow-run[data-thread='main']")).to_have_attribute("data-status", "done", timeout=30_000)
    main_result = page.locator("#chat .flow-result[data-thread='main']")
    expect(main_result).to_contain_text("It opens with: What can you make?")
    shoot(page, "flow-thread-main")
    [record] = MainMessage.objects.filter(route=Route.FLOW)
    assert record.author_id is None and record.flow_run.thread == "main"
    assert page.js_errors == []
