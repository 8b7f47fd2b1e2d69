"""The agent's words over REST (issue 33 item 2): every step that wrote to the person, with the messages it
answers, for the studio's chat and a task's conversation; scoped to the caller's workspace."""

import pytest
from django.urls import reverse

from agents.models import InboxMessage
from agents.runtime.loop import turn_run
from agents.services.inbox import message_post
from tests.agents.conftest import says
from tests.support.cards import access_of
from tests.support.rest import assert_error, events_of
from workspace.services.workspaces import workspace_create

pytestmark = [pytest.mark.django_db(transaction=True)]


def _url(workspace_id: int, **query) -> str:
    url = reverse("reply-list", args=[workspace_id])
    return url + ("?" + "&".join(f"{k}={v}" for k, v in query.items()) if query else "")


def test_it_lists_what_the_agent_said_with_the_message_it_answers(task, tools, script, alice, carol, client_for):
    # given a person's message in the task, and a model that answers it in words, then calls a tool silently
    message = message_post(access=access_of(alice, task.workspace), task_id=task.pk, text="Which palette do you use?")
    script([says("Warm oranges and teal, like the café's sign."), says("", ("test_noop", {})), says("")])

    # when the task's turn runs
    turn_run(turn_id=tools.start_turn(task).pk, generation=1)

    # then a viewer of the workspace reads the agent's words, newest first, each naming what it answers
    response = client_for(carol).get(_url(task.workspace_id))
    assert response.status_code == 200, response.content
    replies = response.json()["results"]
    assert [r["text"] for r in replies] == ["Warm oranges and teal, like the café's sign."]
    reply = replies[0]
    assert (reply["task"], reply["index"], reply["model"]) == (task.pk, 1, "script-1")
    assert reply["answers"] == [message.pk]
    assert InboxMessage.objects.get(pk=message.pk).consumed_by_step_id == reply["id"]
    # and the live event of that step carries the same words and the same answered message
    committed = [e.data for e in events_of(task.workspace_id, "step.committed") if e.data.get("text")]
    assert committed[0]["text"] == reply["text"] and committed[0]["consumed_messages"] == [message.pk]
    assert (committed[0]["turn"], committed[0]["step"]) == (reply["turn"], reply["index"])

    # and filtered by task, the same words; another task of the workspace has none
    assert client_for(carol).get(_url(task.workspace_id, task=task.pk)).json()["count"] == 1


@pytest.mark.parametrize(
    "query, status, code",
    [({"task": "abc"}, 400, "invalid"), ({"limit": "-1"}, 400, "invalid"), ({"task": 999999}, 404, "not_found")],
)
def test_it_refuses_bad_filters_clearly(workspace, alice, client_for, query, status, code):
    assert_error(client_for(alice).get(_url(workspace.pk, **query)), status, code)


def test_another_workspace_reads_none_of_it(task, tools, script, dave, client_for):
    # given words the agent wrote in alice's workspace, and dave with a workspace of his own
    script([says("A question for alice only?")])
    turn_run(turn_id=tools.start_turn(task).pk, generation=1)
    own = workspace_create(user=dave, name="Dave's place")

    # then dave gets 404 for alice's workspace and for her task through his own, and his list is empty
    assert client_for(dave).get(_url(task.workspace_id)).status_code == 404
    assert client_for(dave).get(_url(own.pk, task=task.pk)).status_code == 404
    assert client_for(dave).get(_url(own.pk)).json()["results"] == []
