"""Archiving a task: Main stops routing to it, it takes no messages, and unarchiving brings it back."""

import pytest

from agents.main.messages import main_message_post
from agents.models import InboxMessage, Task, TaskStatus
from workspace.models import Event
from workspace.selectors import workspace_access

pytestmark = pytest.mark.django_db


@pytest.fixture
def done_task(workspace, alice):
    return Task.objects.create(workspace=workspace, title="Retro posters", created_by=alice, status=TaskStatus.DONE)


def url(workspace, task, action):
    return f"/api/v1/workspaces/{workspace.pk}/tasks/{task.pk}/{action}/"


def test_it_archives_a_finished_task_and_then_refuses_its_messages(workspace, bob, client_for, done_task, no_enqueue):
    client = client_for(bob)
    # when an editor archives the finished task
    response = client.post(url(workspace, done_task, "archive"))
    # then it is archived, the event says so, and a message to it is refused with nothing delivered
    assert response.status_code == 200 and response.json()["archived_at"]
    assert Event.objects.filter(kind="task.archived", data__task=done_task.pk).count() == 1
    refused = client.post(
        f"/api/v1/workspaces/{workspace.pk}/tasks/{done_task.pk}/messages/", {"text": "hi"}, format="json"
    )
    assert (refused.status_code, refused.json()["error"]["code"]) == (409, "task_archived")
    assert not InboxMessage.objects.filter(task=done_task).exists()


def test_it_tells_the_person_when_main_is_asked_about_an_archived_task(workspace, alice, done_task, client_for):
    client_for(alice).post(url(workspace, done_task, "archive"))
    access = workspace_access(principal=alice, workspace_id=workspace.pk)
    message = main_message_post(access=access, text="make them warmer", task_id=done_task.pk)
    assert message.refusal == "task_archived" and "archived" in message.reply
    assert not InboxMessage.objects.filter(task=done_task).exists()


def test_it_unarchives_and_takes_messages_again(workspace, bob, client_for, done_task, no_enqueue):
    client = client_for(bob)
    client.post(url(workspace, done_task, "archive"))
    assert client.post(url(workspace, done_task, "unarchive")).json()["archived_at"] is None
    posted = client.post(
        f"/api/v1/workspaces/{workspace.pk}/tasks/{done_task.pk}/messages/", {"text": "warmer"}, format="json"
    )
    assert posted.status_code == 201


def test_it_refuses_to_archive_a_working_task_and_viewers_and_outsiders(workspace, bob, carol, dave, alice, client_for):
    working = Task.objects.create(workspace=workspace, title="Video", created_by=alice, status=TaskStatus.ACTIVE)
    response = client_for(bob).post(url(workspace, working, "archive"))
    assert (response.status_code, response.json()["error"]["code"]) == (409, "task_state")
    assert client_for(carol).post(url(workspace, working, "archive")).status_code == 403
    assert client_for(dave).post(url(workspace, working, "archive")).status_code == 404
    working.refresh_from_db()
    assert working.archived_at is None
