"""REST for cards and task settings: list, detail, actions, PATCH settings (DESIGN §5, §12).

Every endpoint × every kind of caller, then the action rules a client meets: a bad action is 400, a resolved
card 409, spending approved only by a person (an API key gets 403), a cancelled task's card 409.
"""

from dataclasses import dataclass
from types import SimpleNamespace

import pytest
from django.db import transaction
from django.urls import reverse
from rest_framework.test import APIClient

from agents.locks import task_qs_for_update
from agents.models import Autonomy, Card, CardKind, CardStatus, InboxMessage, MainMessage, Task, TaskStatus
from agents.services.cards import card_open_for_wait
from agents.services.tasks import task_cancel
from billing.models import Approval
from tests.support.rest import assert_error, events_of, issue_api_key, key_client
from tests.support.rest import snapshot as tenancy_snapshot
from tests.support.worlds import (  # noqa: F401 — world_alice… are the fixtures alice…, the world's personas
    built_once,
    person,
    shared_workspace,
    world_alice,
    world_bob,
    world_carol,
    world_dave,
)
from workspace.models import Role, Workspace
from workspace.selectors import workspace_access
from workspace.services.workspaces import workspace_create

pytestmark = pytest.mark.django_db

PERSONAS = ("outsider", "viewer", "editor", "owner", "key_viewer", "key_editor", "key_other")
QUOTE_WAIT = {
    "type": "approval",
    "quote": None,
    "operation": "image.generate",
    "amount": 80,
    "per_item": 40,
    "items": 2,
    "reasons": ["threshold"],
}


def _access(user, workspace):
    return workspace_access(principal=user, workspace_id=workspace.pk)


def _task(user, workspace, title="Posters") -> Task:
    """An idle task with no turn, as one is between two conversations."""
    return Task.objects.create(workspace=workspace, title=title, brief=title, created_by=user)


def _waiting_on(task: Task, waiting_for: dict) -> Card:
    """Make the task wait on the card a suspending turn would open."""
    with transaction.atomic():
        locked = task_qs_for_update().get(pk=task.pk)
        card = card_open_for_wait(locked, waiting_for)
        Task.objects.filter(pk=task.pk).update(status=TaskStatus.WAITING, waiting_for={**waiting_for, "card": card.pk})
    return card


def snapshot() -> dict:
    return {
        **tenancy_snapshot(),
        "tasks": list(Task.objects.order_by("pk").values_list("pk", "status", "autonomy", "permissions")),
        "cards": list(Card.objects.order_by("pk").values_list("pk", "status", "resolution")),
        "inbox": list(InboxMessage.objects.order_by("pk").values_list("pk", "task_id", "text")),
        "approvals": list(Approval.objects.order_by("pk").values_list("pk", "amount")),
    }


def _build_world() -> SimpleNamespace:
    # (turns are recorded, not sent to django-q, as `no_enqueue` does)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("agents.queue._enqueue", lambda turn_id, generation: None)
        return _world_of(*(person(name) for name in ("alice", "bob", "carol", "dave")))


def _world_of(alice, bob, carol, dave) -> SimpleNamespace:
    # given the shared workspace (alice owner, bob editor, carol viewer) with a task waiting on a choice card,
    # dave's own workspace with a task and card of its own, and keys for both workspaces
    workspace = shared_workspace(alice, bob, carol)
    task = _task(bob, workspace)
    card = _waiting_on(task, {"type": "person", "question": "Which palette?", "options": ["Warm", "Cool"]})
    _, key_viewer = issue_api_key(workspace, role=Role.VIEWER, name="viewer key")
    _, key_editor = issue_api_key(workspace, role=Role.EDITOR, name="editor key")
    other = workspace_create(user=dave, name="Dave's place")
    _, key_other = issue_api_key(other, role=Role.EDITOR, name="other key")
    other_task = _task(dave, other, "Dave's task")
    other_card = _waiting_on(other_task, {"type": "person", "question": "Dave's question?"})
    return SimpleNamespace(
        workspace=workspace,
        task=task,
        card=card,
        other_task=other_task,
        other_card=other_card,
        users={"outsider": dave, "viewer": carol, "editor": bob, "owner": alice},
        raw_keys={"key_viewer": key_viewer, "key_editor": key_editor, "key_other": key_other},
    )


# Built once for the module; each test runs in a savepoint rolled back after it, on a deep copy of these objects.
world_built = built_once(_build_world)


@pytest.fixture
def world(world_built, db, no_enqueue):
    return world_built.fresh()


# The personas and the shared workspace are the world's (the conftest's own would be a second alice).
@pytest.fixture
def workspace(world):
    return world.workspace


@pytest.fixture
def client_as(world, client_for):
    def make(persona: str) -> APIClient:
        if persona in world.users:
            return client_for(world.users[persona])
        return key_client(world.raw_keys[persona])

    return make


@dataclass(frozen=True)
class Endpoint:
    name: str
    method: str
    url_name: str
    target: str | None = None  # "card" or "task"
    body: dict | None = None
    event: str | None = None

    def url(self, world, *, workspace_id=None, target_id=None) -> str:
        kwargs = {"workspace_id": world.workspace.pk if workspace_id is None else workspace_id}
        if self.target == "card":
            kwargs["card_id"] = world.card.pk if target_id is None else target_id
        elif self.target == "task":
            kwargs["task_id"] = world.task.pk if target_id is None else target_id
        return reverse(self.url_name, kwargs=kwargs)


CARDS_GET = Endpoint("cards GET", "get", "card-list")
CARD_GET = Endpoint("card GET", "get", "card-detail", target="card")
ACT = Endpoint(
    "actions POST",
    "post",
    "card-actions",
    target="card",
    body={"action": "choose", "option": "2"},
    event="card.resolved",
)
SETTINGS = Endpoint(
    "settings PATCH", "patch", "task-settings", target="task", body={"autonomy": "auto"}, event="task.settings"
)

# fmt: off
MATRIX = [
    #  endpoint   outsider viewer editor owner key_viewer key_editor key_other
    (CARDS_GET,   404,     200,   200,   200,  200,       200,       404),
    (CARD_GET,    404,     200,   200,   200,  200,       200,       404),
    (ACT,         404,     403,   200,   200,  403,       200,       404),
    (SETTINGS,    404,     403,   200,   200,  403,       200,       404),
]
# fmt: on

CASES = [
    pytest.param(endpoint, persona, status, id=f"{endpoint.name}-{persona}")
    for endpoint, *statuses in MATRIX
    for persona, status in zip(PERSONAS, statuses, strict=True)
]


def _call(client, endpoint: Endpoint, url: str, body=None):
    body = endpoint.body if body is None else body
    if body is None:
        return getattr(client, endpoint.method)(url)
    return getattr(client, endpoint.method)(url, body, format="json")


def _effect_of(endpoint: Endpoint, world) -> bool:
    if endpoint is ACT:
        card = Card.objects.get(pk=world.card.pk)
        return card.status == CardStatus.RESOLVED and world.task.inbox.filter(text__contains="chose: Cool").exists()
    if endpoint is SETTINGS:
        return Task.objects.get(pk=world.task.pk).autonomy == Autonomy.AUTO
    raise AssertionError(endpoint.name)


@pytest.mark.parametrize(("endpoint", "persona", "expected"), CASES)
def test_it_answers_each_caller_as_its_role_says(world, client_as, client_for, endpoint, persona, expected):
    # given the database before the request
    before = snapshot()
    seq_before = Workspace.objects.get(pk=world.workspace.pk).last_event_seq

    # when the caller hits the endpoint
    response = _call(client_as(persona), endpoint, endpoint.url(world))

    # then the status is the one the matrix gives, and only an allowed write changed anything
    assert response.status_code == expected, (response.status_code, response.content[:300])
    if expected == 404:
        assert_error(response, 404, "not_found")
        ghost = _call(client_for(world.users["owner"]), endpoint, endpoint.url(world, workspace_id=10**9))
        assert response.json() == ghost.json()
        assert snapshot() == before
    elif expected == 403:
        assert assert_error(response, 403, "role_required")["details"]["required_role"] == Role.EDITOR
        assert snapshot() == before
    elif endpoint.method == "get":
        assert snapshot() == before
    else:
        assert _effect_of(endpoint, world)
        assert endpoint.event in [e.kind for e in events_of(world.workspace.pk) if e.seq > seq_before]


@pytest.mark.parametrize("endpoint", [CARD_GET, ACT, SETTINGS], ids=lambda e: e.name)
def test_it_hides_another_workspaces_card_or_task_behind_the_same_404(world, client_as, endpoint):
    # given a card (or task) id that exists in dave's workspace, and one that exists nowhere
    before = snapshot()
    foreign_id = world.other_card.pk if endpoint.target == "card" else world.other_task.pk
    owner = client_as("owner")

    # when the shared workspace's owner addresses both through the shared workspace
    foreign = _call(owner, endpoint, endpoint.url(world, target_id=foreign_id))
    missing = _call(owner, endpoint, endpoint.url(world, target_id=10**12))

    # then both are the same 404 and nothing changed
    assert_error(foreign, 404, "not_found")
    assert foreign.json() == missing.json()
    assert snapshot() == before


def test_it_shows_a_card_with_the_actions_it_takes(world, client_as):
    # when a member reads the open card
    body = client_as("viewer").get(CARD_GET.url(world)).json()
    # then it shows what it asks, its options and the actions it accepts now
    assert body["kind"] == "choice" and body["status"] == "open" and body["task"] == world.task.pk
    assert body["options"] == [{"id": "1", "label": "Warm"}, {"id": "2", "label": "Cool"}]
    assert body["actions"] == ["choose", "adjust"]
    assert body["resolution"] == {} and body["resolved_by"] is None
    # and the task's detail lists it among its open cards
    detail = client_as("viewer").get(reverse("task-detail", args=[world.workspace.pk, world.task.pk])).json()
    assert [c["id"] for c in detail["cards"]] == [world.card.pk]
    assert detail["waiting_for"]["card"] == world.card.pk


def test_it_filters_the_card_list_by_status_kind_and_task(world, client_as, bob):
    # given a second task with a card, and the first card resolved
    second = _task(bob, world.workspace, "Video")
    quote = _waiting_on(second, QUOTE_WAIT)
    client = client_as("editor")
    assert client.post(ACT.url(world), {"action": "choose", "option": "1"}, format="json").status_code == 200
    url = reverse("card-list", args=[world.workspace.pk])

    # when a member lists them with filters
    everything = client.get(url).json()
    open_ = client.get(url + "?status=open").json()
    first_task = client.get(url + f"?task={world.task.pk}").json()
    quotes = client.get(url + "?kind=quote").json()
    choices = client.get(url + "?kind=choice&status=open").json()
    bad = client.get(url + "?status=maybe")
    bad_kind = client.get(url + "?kind=wish")

    # then each filter holds, and only this workspace's cards are listed, newest first
    assert [c["id"] for c in everything["results"]] == [quote.pk, world.card.pk]
    assert [c["id"] for c in open_["results"]] == [quote.pk]
    assert [c["id"] for c in first_task["results"]] == [world.card.pk]
    assert first_task["results"][0]["resolved_by"] == "bob" and first_task["results"][0]["actions"] == []
    assert [c["id"] for c in quotes["results"]] == [quote.pk]
    assert choices["results"] == []
    assert_error(bad, 400, "invalid")
    assert_error(bad_kind, 400, "invalid")


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"action": "approve"}, "invalid_action"),  # not a quote card
        ({"action": "choose", "option": "9"}, "invalid_option"),
        ({"action": "choose"}, "invalid_option"),
        ({"action": "adjust"}, "text_required"),
        ({"action": "adjust", "text": "   "}, "invalid"),
        ({"action": "explode"}, "invalid"),
        ({"action": "choose", "option": "1", "extra": True}, "invalid"),
        ({"action": "choose", "option": 1}, "invalid"),
        ({"action": "confirm", "budget": 10}, "invalid_action"),
    ],
)
def test_it_refuses_a_bad_action_with_400_and_changes_nothing(world, client_as, body, code):
    before = snapshot()
    response = client_as("editor").post(ACT.url(world), body, format="json")
    assert_error(response, 400, code)
    assert snapshot() == before


def test_it_answers_409_once_the_card_is_resolved(world, client_as):
    # given a card one person already answered
    client = client_as("editor")
    assert client.post(ACT.url(world), {"action": "choose", "option": "1"}, format="json").status_code == 200
    before = snapshot()

    # when another answer arrives
    response = client_as("owner").post(ACT.url(world), {"action": "choose", "option": "2"}, format="json")

    # then 409 card_resolved, with the recorded resolution, and nothing changed
    error = assert_error(response, 409, "card_resolved")
    assert error["details"]["resolution"]["option"] == "1"
    assert snapshot() == before


def test_it_answers_409_for_a_card_of_a_cancelled_task(world, client_as, bob):
    task_cancel(access=_access(bob, world.workspace), task_id=world.task.pk)
    before = snapshot()
    response = client_as("editor").post(ACT.url(world), {"action": "choose", "option": "1"}, format="json")
    assert_error(response, 409, "task_cancelled")
    assert snapshot() == before


def test_it_lets_an_editor_key_choose_but_never_approve_spending(world, client_as, bob):
    # given a task waiting on a quote card
    second = _task(bob, world.workspace, "Video")
    quote = _waiting_on(second, QUOTE_WAIT)
    key = client_as("key_editor")
    url = ACT.url(world, target_id=quote.pk)
    before = snapshot()

    # when an editor API key approves it
    response = key.post(url, {"action": "approve"}, format="json")

    # then 403 person_required and nothing changed — while the same key may answer a choice card
    assert_error(response, 403, "person_required")
    assert snapshot() == before
    assert key.post(ACT.url(world), {"action": "choose", "option": "1"}, format="json").status_code == 200


def test_it_approves_spending_for_a_person_with_the_quoted_or_a_named_budget(world, client_as, bob):
    # given two tasks waiting on quote cards
    first = _task(bob, world.workspace, "Video")
    second = _task(bob, world.workspace, "3D")
    quotes = [_waiting_on(first, QUOTE_WAIT), _waiting_on(second, QUOTE_WAIT)]
    client = client_as("editor")

    # when bob approves one as quoted, and the other with a smaller budget
    quoted = client.post(ACT.url(world, target_id=quotes[0].pk), {"action": "approve"}, format="json")
    named = client.post(ACT.url(world, target_id=quotes[1].pk), {"action": "approve", "budget": 40}, format="json")

    # then each card records the budget granted, and billing holds bob's approvals for those tasks
    assert (quoted.status_code, named.status_code) == (200, 200)
    assert quoted.json()["resolution"]["budget"] == 80 and named.json()["resolution"]["budget"] == 40
    approvals = Approval.objects.order_by("pk")
    assert [(a.task_id, a.amount, a.approved_by.username) for a in approvals] == [
        (first.pk, 80, "bob"),
        (second.pk, 40, "bob"),
    ]


def test_it_declines_spending_and_stops_the_task_with_the_reason(world, client_as, bob):
    second = _task(bob, world.workspace, "Video")
    quote = _waiting_on(second, QUOTE_WAIT)
    response = client_as("editor").post(ACT.url(world, target_id=quote.pk), {"action": "decline"}, format="json")
    assert response.status_code == 200 and response.json()["resolution"]["action"] == "decline"
    second.refresh_from_db()
    assert (second.status, second.stop_reason) == (TaskStatus.IDLE, "spending_declined")
    assert not Approval.objects.exists()


# --- settings -------------------------------------------------------------------------------------------------


def test_it_changes_autonomy_and_permissions_and_shows_them_on_the_task(world, client_as):
    # when an editor narrows the task's permissions and asks for confirmation at every step
    response = client_as("editor").patch(
        SETTINGS.url(world), {"autonomy": "ask", "permissions": {"domains": ["image"]}}, format="json"
    )
    # then the task shows its three separate settings' two task-side values
    assert response.status_code == 200
    body = response.json()
    assert body["autonomy"] == "ask"
    assert body["permissions"] == {"domains": ["image"], "irreversible": True}
    detail = client_as("viewer").get(reverse("task-detail", args=[world.workspace.pk, world.task.pk])).json()
    assert (detail["autonomy"], detail["permissions"]) == ("ask", body["permissions"])


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({}, "invalid"),
        ({"autonomy": "yolo"}, "invalid"),
        ({"permissions": {"domains": ["image", "payments"]}}, "invalid_permissions"),
        ({"permissions": {"budget": 500}}, "invalid_permissions"),
        ({"permissions": {"irreversible": "yes"}}, "invalid_permissions"),
        ({"permissions": "everything"}, "invalid_permissions"),
        ({"autonomy": "auto", "budget": 500}, "invalid"),
    ],
)
def test_it_refuses_bad_settings_with_400_and_changes_nothing(world, client_as, body, code):
    before = snapshot()
    response = client_as("editor").patch(SETTINGS.url(world), body, format="json")
    assert_error(response, 400, code)
    assert snapshot() == before


def test_it_keeps_a_cancelled_tasks_settings(world, client_as, bob):
    task_cancel(access=_access(bob, world.workspace), task_id=world.task.pk)
    response = client_as("editor").patch(SETTINGS.url(world), {"autonomy": "auto"}, format="json")
    assert_error(response, 409, "task_cancelled")
    assert Task.objects.get(pk=world.task.pk).autonomy == Autonomy.CHECKPOINTS


# --- the Router's clarification card ----------------------------------------------------------------------------


def test_it_routes_the_original_message_when_a_clarification_option_is_chosen(world, client_as, bob):
    # given a clarification card the Router opened for an ambiguous message (no task of its own)
    other = _task(bob, world.workspace, "Cat video")
    card = Card.objects.create(
        workspace=world.workspace,
        kind=CardKind.CLARIFY,
        title="Which task do you mean?",
        options=[{"id": f"task:{world.task.pk}", "label": "Posters"}, {"id": f"task:{other.pk}", "label": "Cat"}],
        payload={"text": "make it warmer", "language": "en", "candidates": [world.task.pk, other.pk]},
    )
    url = ACT.url(world, target_id=card.pk)
    client = client_as("editor")

    # when the person answers in words instead of choosing
    refused = client.post(url, {"action": "adjust", "text": "the posters"}, format="json")
    # then 400: a clarification takes one of its options
    assert_error(refused, 400, "invalid_action")

    # when they choose the cat video
    response = client.post(url, {"action": "choose", "option": f"task:{other.pk}"}, format="json")

    # then the card is resolved and the original message reached that task, recorded as routed there
    assert response.status_code == 200 and response.json()["status"] == "resolved"
    assert other.inbox.get().text.startswith("make it warmer")
    assert not world.task.inbox.exists()
    routed = MainMessage.objects.get(card=card)
    assert (routed.task_id, routed.route) == (other.pk, "direct")
