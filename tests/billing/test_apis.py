"""Billing REST: the tenancy matrix, bad input, the 402 body, and what each endpoint answers.

Outsiders learn nothing (the 404 is the one a nonexistent workspace gets); insufficient roles get 403; API
keys never approve spending; a refused request changes nothing.
"""

from dataclasses import dataclass
from datetime import timedelta
from types import SimpleNamespace

import pytest
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from billing.models import Approval, ApprovalKind, LedgerEntry, Quote, SpendPolicy
from billing.services.quotes import quote_create
from tests.billing.helpers import money
from tests.support.rest import assert_error, issue_api_key, key_client
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
from workspace.services.workspaces import workspace_create

pytestmark = pytest.mark.django_db

PERSONAS = ("outsider", "viewer", "editor", "owner", "key_viewer", "key_editor", "key_other")


@dataclass(frozen=True)
class Endpoint:
    name: str
    method: str
    url_name: str
    body: dict | None = None

    def url(self, workspace_id: int) -> str:
        return reverse(self.url_name, kwargs={"workspace_id": workspace_id})


BALANCE_GET = Endpoint("balance GET", "get", "billing-balance")
LEDGER_GET = Endpoint("ledger GET", "get", "billing-ledger")
QUOTES_GET = Endpoint("quotes GET", "get", "billing-quotes")
QUOTES_POST = Endpoint(
    "quotes POST", "post", "billing-quotes", {"operation": "video.generate", "params": {"seconds": 4}}
)
ORDERS_GET = Endpoint("orders GET", "get", "billing-orders")
APPROVALS_GET = Endpoint("approvals GET", "get", "billing-approvals")
APPROVALS_POST = Endpoint("approvals POST", "post", "billing-approvals", {"task": 7, "budget": 300})
TOPUP_POST = Endpoint("topup POST", "post", "billing-topup", {"amount": 500})
POLICY_GET = Endpoint("policy GET", "get", "billing-policy")
POLICY_PATCH = Endpoint("policy PATCH", "patch", "billing-policy", {"no_confirm_threshold": 20})

# fmt: off
# Expected status per caller. 403 is `role_required`, except API keys approving (`person_required`).
MATRIX = [
    #  endpoint        outsider viewer editor owner key_viewer key_editor key_other
    (BALANCE_GET,      404,     200,   200,   200,  200,       200,       404),
    (LEDGER_GET,       404,     200,   200,   200,  200,       200,       404),
    (QUOTES_GET,       404,     200,   200,   200,  200,       200,       404),
    (QUOTES_POST,      404,     403,   201,   201,  403,       201,       404),
    (ORDERS_GET,       404,     200,   200,   200,  200,       200,       404),
    (APPROVALS_GET,    404,     200,   200,   200,  200,       200,       404),
    (APPROVALS_POST,   404,     403,   201,   201,  403,       403,       404),
    (TOPUP_POST,       404,     403,   403,   200,  403,       403,       404),
    (POLICY_GET,       404,     200,   200,   200,  200,       200,       404),
    (POLICY_PATCH,     404,     403,   403,   200,  403,       403,       404),
]
# fmt: on

CASES = [
    pytest.param(endpoint, persona, status, id=f"{endpoint.name}-{persona}")
    for endpoint, *statuses in MATRIX
    for persona, status in zip(PERSONAS, statuses, strict=True)
]


def _build_world() -> SimpleNamespace:
    # given the shared workspace (alice owner, bob editor, carol viewer) with a viewer and an editor key,
    # and dave's own workspace with its own key
    alice, bob, carol, dave = (person(name) for name in ("alice", "bob", "carol", "dave"))
    workspace = shared_workspace(alice, bob, carol)
    _, key_viewer = issue_api_key(workspace, role=Role.VIEWER, name="viewer key")
    _, key_editor = issue_api_key(workspace, role=Role.EDITOR, name="editor key")
    other = workspace_create(user=dave, name="Dave's place")
    _, key_other = issue_api_key(other, role=Role.EDITOR, name="other key")
    return SimpleNamespace(
        workspace=workspace,
        other=other,
        users={"outsider": dave, "viewer": carol, "editor": bob, "owner": alice},
        raw_keys={"key_viewer": key_viewer, "key_editor": key_editor, "key_other": key_other},
    )


# Built once for the module; each test runs in a savepoint rolled back after it, on a deep copy of these objects.
world_built = built_once(_build_world)


@pytest.fixture
def world(world_built, db):
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


def _call(client: APIClient, endpoint: Endpoint, url: str, body: dict | None = None):
    body = endpoint.body if body is None else body
    if body is None:
        return getattr(client, endpoint.method)(url)
    return getattr(client, endpoint.method)(url, body, format="json")


def _missing_workspace_id() -> int:
    return (Workspace.objects.order_by("-pk").values_list("pk", flat=True).first() or 0) + 1000


# --- tenancy ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("endpoint", "persona", "expected"), CASES)
def test_it_answers_each_caller_as_its_role_says(world, client_as, client_for, endpoint, persona, expected):
    # given the money facts before the request
    before = money()

    # when the caller hits the endpoint
    response = _call(client_as(persona), endpoint, endpoint.url(world.workspace.pk))

    # then the status is the one the matrix gives
    assert response.status_code == expected, (response.status_code, response.content[:300])
    if expected == 404:
        # then an outsider learns nothing: the very answer the owner gets for a workspace that does not exist
        assert_error(response, 404, "not_found")
        ghost = _call(client_for(world.users["owner"]), endpoint, endpoint.url(_missing_workspace_id()))
        assert response.json() == ghost.json()
        assert money() == before
    elif expected == 403:
        code = "person_required" if endpoint is APPROVALS_POST and persona == "key_editor" else "role_required"
        assert_error(response, 403, code)
        assert money() == before
    elif endpoint.method == "get":
        assert money() == before
    else:
        # then the write happened and is in the event log
        assert money() != before


def test_it_persists_what_each_write_does(world, client_as):
    # when the owner or an editor makes each write
    owner, editor = client_as("owner"), client_as("editor")
    quote = _call(editor, QUOTES_POST, QUOTES_POST.url(world.workspace.pk))
    approval = _call(editor, APPROVALS_POST, APPROVALS_POST.url(world.workspace.pk))
    topup = _call(owner, TOPUP_POST, TOPUP_POST.url(world.workspace.pk))
    policy = _call(owner, POLICY_PATCH, POLICY_PATCH.url(world.workspace.pk))

    # then each effect is in the database, and each answer describes it
    assert quote.json()["amount"] == 80 and Quote.objects.get().amount == 80  # 4 seconds at 20
    stored = Approval.objects.get()
    assert (stored.kind, stored.task_id, stored.amount, stored.approved_by) == (
        ApprovalKind.BUDGET,
        7,
        300,
        world.users["editor"],
    )
    assert approval.json()["approved_by"] == "bob" and approval.json()["remaining"] == 300
    assert topup.json()["available"] == 500
    assert LedgerEntry.objects.get().created_by == world.users["owner"]
    assert policy.json()["no_confirm_threshold"] == 20 and policy.json()["is_default"] is False
    assert SpendPolicy.objects.get().no_confirm_threshold == 20


@pytest.mark.parametrize("path", ["balance", "ledger", "quotes", "orders", "approvals", "topup", "policy"])
def test_it_answers_404_for_a_workspace_id_too_large_for_the_database(client_for, alice, workspace, path):
    response = client_for(alice).get(f"/api/v1/workspaces/{'9' * 30}/billing/{path}/")
    assert_error(response, 404, "not_found")


# --- reading ---------------------------------------------------------------------------------------------


def test_it_shows_the_balance_with_todays_spending_and_the_policy(world, client_as, fund, place):
    # given 500 credits, one 40-credit order held today without confirmation
    fund(500)
    place("11:0:0")

    # when a viewer reads the balance
    body = client_as("viewer").get(BALANCE_GET.url(world.workspace.pk)).json()

    # then it shows the wallet, today's spending and the default policy
    assert body == {
        "available": 460,
        "held": 40,
        "spent_today": 40,
        "auto_spent_today": 40,
        "policy": {"no_confirm_threshold": 100, "daily_no_confirm_cap": 500, "is_default": True, "updated_at": None},
    }


def test_it_lists_the_ledger_newest_first_in_pages(world, client_as, fund, place):
    # given a top-up, a hold and another top-up
    fund(100, memo="first")
    place("11:0:0")
    fund(50, memo="second")

    # when the ledger is read two entries at a time
    page = client_as("viewer").get(LEDGER_GET.url(world.workspace.pk), {"limit": 2}).json()

    # then the newest come first, the hold names its order, and there is a next page
    assert page["count"] == 3 and page["next"]
    assert [(e["kind"], e["delta_available"], e["delta_held"]) for e in page["results"]] == [
        ("topup", 50, 0),
        ("hold", -40, 40),
    ]
    assert page["results"][0]["memo"] == "second" and page["results"][0]["created_by"] == "alice"
    assert page["results"][1]["order"]["idempotency_key"] == "11:0:0"
    assert page["results"][1]["order"]["status"] == "held"
    # and says what allowed it: under the no-confirmation limits, nobody's approval
    assert (page["results"][1]["order"]["authorisation"], page["results"][1]["order"]["approved_by"]) == ("auto", None)


def test_it_names_who_approved_what_the_agent_spent_in_the_ledger(world, client_as, fund, place):
    from billing.services.approvals import approval_grant
    from billing.services.quotes import quote_create
    from workspace.selectors import workspace_access

    # given a 200-credit video quote for task 7, approved by bob, and the order placed under it
    fund(500)
    quote = quote_create(workspace_id=world.workspace.pk, operation="video.generate", params={"seconds": 10}, task_id=7)
    approval_grant(
        access=workspace_access(principal=world.users["editor"], workspace_id=world.workspace.pk), quote_id=quote.pk
    )
    place("12:0:0", operation="video.generate", amount=quote.amount, quote_id=quote.pk)

    # when the ledger is read
    hold = client_as("viewer").get(LEDGER_GET.url(world.workspace.pk)).json()["results"][0]

    # then the hold was made by no person, and names the approval that allowed it
    assert (hold["kind"], hold["created_by"]) == ("hold", None)
    assert (hold["order"]["authorisation"], hold["order"]["approved_by"], hold["order"]["task"]) == ("quote", "bob", 7)


def test_it_lists_the_holds_and_each_tasks_orders(world, client_as, fund, place):
    from billing.services.orders import order_capture

    # given three orders: two held (tasks 7 and 8), one captured (task 7), and dave's own held order
    fund(500)
    place("11:0:0")
    place("12:0:0", task_id=8, target={"task": 8})
    place("13:0:0")
    order_capture(workspace_id=world.workspace.pk, idempotency_key="13:0:0")
    quote_create(workspace_id=world.other.pk, operation="3d.generate")
    viewer, url = client_as("viewer"), ORDERS_GET.url(world.workspace.pk)

    # when a viewer lists the holds, task 7's orders, and everything
    holds = viewer.get(url, {"status": "held"}).json()
    task7 = viewer.get(url, {"task": 7}).json()
    everything = viewer.get(url).json()

    # then each list holds what it says, newest first, in this workspace only
    assert [(o["idempotency_key"], o["task"], o["amount"]) for o in holds["results"]] == [
        ("12:0:0", 8, 40),
        ("11:0:0", 7, 40),
    ]
    assert [(o["idempotency_key"], o["status"]) for o in task7["results"]] == [
        ("13:0:0", "captured"),
        ("11:0:0", "held"),
    ]
    assert everything["count"] == 3 and everything["results"][0]["authorisation"] == "auto"
    assert_error(viewer.get(url, {"status": "lost"}), 400, "invalid")
    assert_error(viewer.get(url, {"task": "x"}), 400, "invalid")


def test_it_lists_quotes_by_where_they_stand(world, client_as):
    # given an open quote, an approved one, an expired one, and dave's open quote
    editor, url = client_as("editor"), QUOTES_GET.url(world.workspace.pk)
    open_ = quote_create(workspace_id=world.workspace.pk, operation="image.generate", task_id=7)
    approved = quote_create(workspace_id=world.workspace.pk, operation="image.generate", params={"count": 2})
    editor.post(APPROVALS_POST.url(world.workspace.pk), {"quote": approved.pk}, format="json")
    expired = quote_create(workspace_id=world.workspace.pk, operation="3d.generate")
    Quote.objects.filter(pk=expired.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    quote_create(workspace_id=world.other.pk, operation="3d.generate")

    # when a viewer lists them, all and by status
    everything = client_as("viewer").get(url).json()
    by_status = {s: client_as("viewer").get(url, {"status": s}).json() for s in ("open", "approved", "expired")}

    # then each says where it stands, and each filter lists only those
    assert [(q["id"], q["status"]) for q in everything["results"]] == [
        (expired.pk, "expired"),
        (approved.pk, "approved"),
        (open_.pk, "open"),
    ]
    assert [q["id"] for q in by_status["open"]["results"]] == [open_.pk]
    assert by_status["open"]["results"][0]["task"] == 7
    assert [q["id"] for q in by_status["approved"]["results"]] == [approved.pk]
    assert [q["id"] for q in by_status["expired"]["results"]] == [expired.pk]
    assert_error(client_as("viewer").get(url, {"status": "maybe"}), 400, "invalid")


def test_it_lists_approvals_of_one_task(world, client_as):
    # given budgets for tasks 7 and 8
    editor = client_as("editor")
    url = APPROVALS_GET.url(world.workspace.pk)
    editor.post(url, {"task": 7, "budget": 100}, format="json")
    editor.post(url, {"task": 8, "budget": 200}, format="json")

    # when the approvals of task 8 are listed
    body = editor.get(url, {"task": 8}).json()

    # then only task 8's
    assert [(a["task"], a["amount"]) for a in body["results"]] == [(8, 200)]
    assert_error(editor.get(url, {"task": "x"}), 400, "invalid")


def test_it_approves_a_quote_once_and_not_after_it_expires(world, client_as):
    # given a quote for 3 images
    editor = client_as("editor")
    quote = editor.post(
        QUOTES_POST.url(world.workspace.pk), {"operation": "image.generate", "params": {"count": 3}}, format="json"
    ).json()
    assert quote["amount"] == 120

    # when it is approved twice
    url = APPROVALS_POST.url(world.workspace.pk)
    first = editor.post(url, {"quote": quote["id"]}, format="json")
    second = client_as("owner").post(url, {"quote": quote["id"]}, format="json")

    # then the first approval stands and the second is 409 already_approved
    assert first.status_code == 201 and first.json()["kind"] == "quote" and first.json()["amount"] == 120
    error = assert_error(second, 409, "already_approved")
    assert error["details"]["approval"] == first.json()["id"]

    # when an expired quote is approved
    stale = quote_create(workspace_id=world.workspace.pk, operation="3d.generate")
    Quote.objects.filter(pk=stale.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    before = money()
    response = editor.post(url, {"quote": stale.pk}, format="json")

    # then 409 quote_expired, nothing approved
    assert_error(response, 409, "quote_expired")
    assert money() == before


def test_it_hides_another_workspaces_quote_behind_a_404(world, client_as):
    # given a quote in dave's workspace
    foreign = quote_create(workspace_id=world.other.pk, operation="3d.generate")
    before = money()

    # when bob approves it through his own workspace
    response = client_as("editor").post(APPROVALS_POST.url(world.workspace.pk), {"quote": foreign.pk}, format="json")

    # then it does not exist for him
    assert_error(response, 404, "quote_not_found")
    assert money() == before


# --- bad input -------------------------------------------------------------------------------------------


BAD_BODIES = [
    (QUOTES_POST, {"operation": "mine.bitcoin"}, "operation"),
    (QUOTES_POST, {"operation": "image.generate", "params": ["x"]}, "params"),
    (QUOTES_POST, {"operation": "image.generate", "params": {"count": 99}}, "params"),
    (QUOTES_POST, {"operation": "video.generate", "params": {"seconds": "5"}}, "params"),
    (QUOTES_POST, {"operation": "image.generate", "params": {"prompt": "x" * 9000}}, "params"),
    (QUOTES_POST, {"operation": "image.generate", "task": 0}, "task"),
    (QUOTES_POST, {"operation": "image.generate", "price": 1}, "price"),
    (QUOTES_POST, {}, "operation"),
    (APPROVALS_POST, {}, "non_field_errors"),
    (APPROVALS_POST, {"quote": 1, "task": 7, "budget": 10}, "non_field_errors"),
    (APPROVALS_POST, {"budget": 100}, "non_field_errors"),
    (APPROVALS_POST, {"task": 7}, "non_field_errors"),
    (APPROVALS_POST, {"task": 7, "budget": 0}, "budget"),
    (APPROVALS_POST, {"task": 7, "budget": -5}, "budget"),
    (APPROVALS_POST, {"task": 7, "budget": 10**12}, "budget"),
    (APPROVALS_POST, {"task": 10**19, "budget": 10}, "task"),
    (APPROVALS_POST, {"task": 7, "budget": 10, "approved_by": "alice"}, "approved_by"),
    (TOPUP_POST, {}, "amount"),
    (TOPUP_POST, {"amount": 0}, "amount"),
    (TOPUP_POST, {"amount": -100}, "amount"),
    (TOPUP_POST, {"amount": 1.5}, "amount"),
    (TOPUP_POST, {"amount": "lots"}, "amount"),
    (TOPUP_POST, {"amount": 10**7}, "amount"),
    (TOPUP_POST, {"amount": 10, "memo": 5}, "memo"),
    (TOPUP_POST, {"amount": 10, "available": 10**6}, "available"),
    (POLICY_PATCH, {}, "non_field_errors"),
    (POLICY_PATCH, {"no_confirm_threshold": -1}, "no_confirm_threshold"),
    (POLICY_PATCH, {"daily_no_confirm_cap": 10**12}, "daily_no_confirm_cap"),
    (POLICY_PATCH, {"no_confirm_threshold": None}, "no_confirm_threshold"),
    (POLICY_PATCH, {"threshold": 5}, "threshold"),
]


@pytest.mark.parametrize(
    ("endpoint", "body", "field"),
    [pytest.param(e, b, f, id=f"{e.name}-{i}") for i, (e, b, f) in enumerate(BAD_BODIES)],
)
def test_it_answers_bad_input_with_400_and_changes_nothing(world, client_as, endpoint, body, field):
    # given the money facts before the request
    before = money()

    # when the owner sends a bad body
    response = _call(client_as("owner"), endpoint, endpoint.url(world.workspace.pk), body)

    # then 400 naming the field, nothing written
    error = assert_error(response, 400, "invalid")
    assert field in error["details"]["fields"], error
    assert money() == before


@pytest.mark.parametrize("endpoint", [QUOTES_POST, APPROVALS_POST, TOPUP_POST, POLICY_PATCH], ids=lambda e: e.name)
@pytest.mark.parametrize("body", ['{"amount": ', "[1, 2]", '"text"'], ids=["truncated", "list", "string"])
def test_it_answers_malformed_or_non_object_json_with_400(world, client_as, endpoint, body):
    before = money()
    response = getattr(client_as("owner"), endpoint.method)(
        endpoint.url(world.workspace.pk), data=body, content_type="application/json"
    )
    assert response.status_code == 400, response.content
    assert set(response.json()) == {"error"}
    assert money() == before


# --- the 402 body ----------------------------------------------------------------------------------------


def _post_order(user, workspace, client_for, **data):
    return client_for(user).post(reverse("test-paid", kwargs={"workspace_id": workspace.pk}), data, format="json")


@pytest.mark.urls("tests.billing.urls")
def test_it_answers_confirmation_required_with_a_402_the_client_can_act_on(workspace, alice, fund, client_for):
    # given a funded workspace
    fund(1000)
    before = money()

    # when a paid request comes through the open API
    response = _post_order(alice, workspace, client_for, key="api:1", amount=40, api=True)

    # then 402 confirmation_required in the one error shape, with what to approve and why
    error = assert_error(response, 402, "confirmation_required")
    assert error["details"]["amount"] == 40
    assert error["details"]["operation"] == "image.generate"
    assert error["details"]["reasons"] == ["api_request"]
    assert "quote" in error["details"]
    assert money() == before


@pytest.mark.urls("tests.billing.urls")
def test_it_answers_insufficient_balance_with_a_402_and_the_shortfall(workspace, alice, client_for):
    # given an empty wallet
    before = money()

    # when a small order is placed
    response = _post_order(alice, workspace, client_for, key="turn:1:0", amount=40, api=False)

    # then 402 insufficient_balance with what is available and what is required
    error = assert_error(response, 402, "insufficient_balance")
    assert error["details"] == {"available": 0, "required": 40, "operation": "image.generate"}
    assert money() == before
