"""Idempotency-Key on Main and task messages (issue 31): ten parallel POSTs with one key made ten tasks and eight
charged jobs. Now a repeat gets the first answer and does nothing again, parallel repeats make one effect, the key
with another body is 409 `idempotency_key_reuse`, and keys are the sender's own in one workspace."""

import pytest
from django.urls import reverse

from agents.models import InboxMessage, MainMessage, Route, Task, Turn
from billing.models import LedgerEntry, LedgerKind, Order, OrderStatus
from tests.agents.test_lightweight import planner, settle  # noqa: F401 - planner is a fixture, used by name
from tests.support.openapi import assert_conforms, published_schema
from tests.support.race import race
from tests.support.rest import assert_error, issue_api_key, key_client
from workspace.models import GenerationJob, IdempotentRequest, Role
from workspace.selectors import workspace_access
from workspace.services.workspaces import workspace_create

pytestmark = pytest.mark.postgres

GINGER_CAT = "Generate an image of a ginger cat"


def main_url(workspace_id: int) -> str:
    return reverse("main-message-list", kwargs={"workspace_id": workspace_id})


def task_url(workspace_id: int, task_id: int) -> str:
    return reverse("task-message-list", kwargs={"workspace_id": workspace_id, "task_id": task_id})


def facts(workspace_id: int) -> dict[str, list[tuple]]:
    """What a message can leave behind in a workspace."""
    return {
        "main": list(MainMessage.objects.filter(workspace_id=workspace_id).values_list("pk", "route", "task_id")),
        "tasks": list(Task.objects.filter(workspace_id=workspace_id).values_list("pk", "kind", "status")),
        "inbox": list(InboxMessage.objects.filter(task__workspace_id=workspace_id).values_list("pk", "text")),
        "turns": list(Turn.objects.filter(task__workspace_id=workspace_id).values_list("pk", "status")),
    }


@pytest.fixture
def funded(workspace, alice, upstream, no_enqueue):
    from billing.services.wallets import wallet_topup

    access = workspace_access(principal=alice, workspace_id=workspace.pk)
    wallet_topup(access=access, amount=5000)
    return access


@pytest.fixture
def conversation(workspace, bob, no_enqueue):
    from agents.services.tasks import task_create

    return task_create(
        access=workspace_access(principal=bob, workspace_id=workspace.pk), title="Posters", brief="Make 3 posters"
    )


# --- ten at once ------------------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("planner")  # the embedded scripted planner runs the task
def test_ten_parallel_main_messages_with_one_key_make_one_task_and_one_charge(workspace, bob, funded, client_for):
    # when bob's client sends the same quick request ten times at once, with one key
    def send():
        return client_for(bob).post(
            main_url(workspace.pk), {"text": GINGER_CAT}, format="json", HTTP_IDEMPOTENCY_KEY="cat-1"
        )

    responses = race([send for _ in range(10)])

    # then all ten got the same 201 and the same message
    assert not any(isinstance(r, BaseException) for r in responses), responses
    assert {r.status_code for r in responses} == {201}, [r.content[:200] for r in responses]
    bodies = [r.json() for r in responses]
    assert all(body == bodies[0] for body in bodies)
    assert sorted(r.get("Idempotent-Replayed") or "" for r in responses) == [""] + ["true"] * 9
    # and one message was routed: one lightweight task, one inbox message, one turn
    [message] = MainMessage.objects.filter(workspace=workspace)
    assert (bodies[0]["id"], message.route) == (message.pk, Route.LIGHTWEIGHT)
    [task] = Task.objects.filter(workspace=workspace)
    assert InboxMessage.objects.filter(task=task).count() == 1
    assert Turn.objects.filter(task=task).count() == 1

    # when the task runs to rest
    settle(funded, task)

    # then it made one generation job and was charged once
    assert GenerationJob.objects.filter(workspace=workspace).count() == 1
    [order] = Order.objects.filter(workspace_id=workspace.pk)
    assert order.status == OrderStatus.CAPTURED
    assert LedgerEntry.objects.filter(order=order, kind=LedgerKind.CAPTURE).count() == 1


@pytest.mark.django_db(transaction=True)
def test_ten_parallel_task_messages_with_one_key_make_one_inbox_message(workspace, bob, conversation, client_for):
    before = list(InboxMessage.objects.filter(task=conversation).values_list("pk", flat=True))

    # when bob replies in the task ten times at once with one key
    def send():
        return client_for(bob).post(
            task_url(workspace.pk, conversation.pk),
            {"text": "Make the third one warmer"},
            format="json",
            HTTP_IDEMPOTENCY_KEY="reply-7",
        )

    responses = race([send for _ in range(10)])

    # then one message reached the inbox and all ten answers name it
    assert not any(isinstance(r, BaseException) for r in responses), responses
    assert {r.status_code for r in responses} == {201}
    bodies = [r.json() for r in responses]
    assert all(body == bodies[0] for body in bodies)
    new = InboxMessage.objects.filter(task=conversation).exclude(pk__in=before)
    assert [m.pk for m in new] == [bodies[0]["id"]]


# --- one after another ------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_repeated_main_message_gets_the_first_answer_and_changes_nothing(workspace, bob, client_for, no_enqueue):
    client = client_for(bob)
    first = client.post(main_url(workspace.pk), {"text": GINGER_CAT}, format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    assert first.status_code == 201, first.content
    after_first = facts(workspace.pk)

    # when the client retries the same request with the same key
    again = client.post(main_url(workspace.pk), {"text": GINGER_CAT}, format="json", HTTP_IDEMPOTENCY_KEY="k-1")

    # then the same status and body, marked replayed, documented in the schema, and nothing new was made
    assert (again.status_code, again.json()) == (201, first.json())
    assert again["Idempotent-Replayed"] == "true" and "Idempotent-Replayed" not in first
    assert_conforms(again)
    assert facts(workspace.pk) == after_first


@pytest.mark.django_db
@pytest.mark.parametrize("endpoint", ["main", "task"])
def test_the_key_with_another_body_is_409_and_changes_nothing(
    workspace, bob, conversation, client_for, no_enqueue, endpoint
):
    url = main_url(workspace.pk) if endpoint == "main" else task_url(workspace.pk, conversation.pk)
    client = client_for(bob)
    assert client.post(url, {"text": "Make it blue"}, format="json", HTTP_IDEMPOTENCY_KEY="k-2").status_code == 201
    before = facts(workspace.pk)

    # when the same key comes with another text
    response = client.post(url, {"text": "Make it red"}, format="json", HTTP_IDEMPOTENCY_KEY="k-2")

    # then 409 idempotency_key_reuse, documented, and nothing was delivered
    assert_error(response, 409, "idempotency_key_reuse")
    assert_conforms(response)
    assert facts(workspace.pk) == before


@pytest.mark.django_db
def test_the_same_key_on_another_endpoint_is_409(workspace, bob, conversation, client_for, no_enqueue):
    client = client_for(bob)
    body = {"text": "Make it blue"}
    assert client.post(main_url(workspace.pk), body, format="json", HTTP_IDEMPOTENCY_KEY="k-3").status_code == 201
    before = facts(workspace.pk)

    # when the key that sent a Main message comes with the same body to a task
    response = client.post(task_url(workspace.pk, conversation.pk), body, format="json", HTTP_IDEMPOTENCY_KEY="k-3")

    # then it is another request: 409, nothing delivered
    assert_error(response, 409, "idempotency_key_reuse")
    assert facts(workspace.pk) == before


@pytest.mark.django_db
def test_the_same_key_from_another_principal_or_workspace_is_a_request_of_its_own(
    workspace, alice, bob, client_for, no_enqueue
):
    # given bob's message sent with key "k-4"
    body = {"text": GINGER_CAT}
    first = client_for(bob).post(main_url(workspace.pk), body, format="json", HTTP_IDEMPOTENCY_KEY="k-4")
    assert first.status_code == 201
    # and an API key of the workspace, and a workspace of bob's own
    _, raw = issue_api_key(workspace, role=Role.EDITOR)
    own = workspace_create(user=bob, name="Bob's own")

    # when alice, the API key, and bob in his own workspace send the same key and body
    answers = [
        client_for(alice).post(main_url(workspace.pk), body, format="json", HTTP_IDEMPOTENCY_KEY="k-4"),
        key_client(raw).post(main_url(workspace.pk), body, format="json", HTTP_IDEMPOTENCY_KEY="k-4"),
        client_for(bob).post(main_url(own.pk), body, format="json", HTTP_IDEMPOTENCY_KEY="k-4"),
    ]

    # then each made its own message: none was given bob's answer
    assert [a.status_code for a in answers] == [201, 201, 201]
    ids = {first.json()["id"]} | {a.json()["id"] for a in answers}
    assert len(ids) == 4 and not any(a.has_header("Idempotent-Replayed") for a in answers)
    assert MainMessage.objects.filter(workspace=workspace).count() == 3
    assert MainMessage.objects.filter(workspace=own).count() == 1


@pytest.mark.django_db
@pytest.mark.parametrize("key", ["", "k" * 256], ids=["empty", "256-chars"])
def test_a_bad_key_is_400_and_changes_nothing(workspace, bob, client_for, no_enqueue, key):
    response = client_for(bob).post(
        main_url(workspace.pk), {"text": GINGER_CAT}, format="json", HTTP_IDEMPOTENCY_KEY=key
    )

    assert_error(response, 400, "invalid_idempotency_key")
    assert facts(workspace.pk) == {"main": [], "tasks": [], "inbox": [], "turns": []}
    assert not IdempotentRequest.objects.exists()


@pytest.mark.django_db
def test_a_refused_message_keeps_no_key(workspace, bob, conversation, client_for, no_enqueue):
    # given a task that was cancelled
    from agents.models import TaskStatus

    Task.objects.filter(pk=conversation.pk).update(status=TaskStatus.CANCELLED)
    url = task_url(workspace.pk, conversation.pk)

    # when bob posts to it with a key
    response = client_for(bob).post(url, {"text": "Go on"}, format="json", HTTP_IDEMPOTENCY_KEY="k-5")

    # then the refusal, and the key is free: nothing was done under it
    assert_error(response, 409, "task_cancelled")
    assert not IdempotentRequest.objects.exists()


# --- the schema -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/api/v1/workspaces/1/messages/"),
        ("POST", "/api/v1/workspaces/1/tasks/1/messages/"),
        ("POST", "/api/v1/workspaces/1/billing/topup/"),
    ],
)
def test_the_schema_documents_the_header_and_its_409(method, path):
    operation = published_schema().find_operation_by_path(method, path)
    assert operation is not None, path
    definition = operation.definition.raw
    [header] = [p for p in definition["parameters"] if p["name"] == "Idempotency-Key"]
    assert header["in"] == "header" and not header.get("required", False)
    assert "idempotency_key_reuse" in header["description"] and "idempotency_key_in_progress" in header["description"]
    assert "409" in definition["responses"]
