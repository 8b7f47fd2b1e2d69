"""Spending authority is bound to the task's scope: a changed goal asks again (issue 14).

Agents tell billing a task's current scope through billing.scopes; here a dict stands in for the task's goal
revision. An approval or quote of an earlier scope is simply not used; one named explicitly is a conflict.
"""

from types import SimpleNamespace

import pytest

from billing.exceptions import ConfirmationRequired
from billing.models import Approval, ApprovalKind, Authorisation, LedgerKind, Order, OrderStatus, Quote
from billing.scopes import scope_resolver_install, task_scope
from billing.selectors import budget_remaining, quote_approved_for, quote_open_for, task_spending, wallet_get
from billing.services.approvals import approval_grant
from billing.services.orders import order_release
from billing.services.quotes import quote_create
from lomote.kernel.exceptions import Conflict, NotFound
from tests.billing.helpers import money


@pytest.fixture
def scopes():
    """Task id → current scope, read by the installed resolver; change it to change a task's goal.

    Counts the resolver's calls, and puts back whatever resolver was installed before.
    """
    current: dict[int, str] = {7: "goal:1"}
    calls: list[int] = []

    def resolve(workspace_id: int, task_id: int) -> str | None:
        calls.append(task_id)
        return current.get(task_id)

    previous = scope_resolver_install(resolve)
    yield SimpleNamespace(current=current, calls=calls)
    scope_resolver_install(previous)


@pytest.fixture
def no_resolver():
    previous = scope_resolver_install(None)
    yield
    scope_resolver_install(previous)


@pytest.fixture
def strict(set_policy, fund):
    """100 credits, and a policy that lets nothing through unasked: only an approval can authorise."""
    fund(100)
    set_policy(threshold=0, cap=0)


def _held(workspace) -> tuple[int, int]:
    wallet = wallet_get(workspace_id=workspace.pk)
    return wallet.available, wallet.held


# --- the port -----------------------------------------------------------------------------------------------


def test_it_has_no_scope_without_a_task_or_a_resolver(no_resolver):
    assert task_scope(None, workspace_id=1) == "" and task_scope(7, workspace_id=1) == ""


def test_it_asks_the_resolver_and_reads_an_unknown_task_as_unscoped(scopes):
    assert (task_scope(7, workspace_id=1), task_scope(8, workspace_id=1), task_scope(None, workspace_id=1)) == (
        "goal:1",
        "",
        "",
    )
    assert scopes.calls == [7, 8]


def test_it_refuses_a_scope_too_long_to_store():
    previous = scope_resolver_install(lambda workspace_id, task_id: "x" * 65)
    try:
        with pytest.raises(ValueError, match="at most 64"):
            task_scope(7, workspace_id=1)
    finally:
        scope_resolver_install(previous)


# --- budgets ------------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_it_lets_a_budget_authorise_orders_while_its_scope_is_current(workspace, bob, access_of, strict, scopes, place):
    # given bob approved an 80-credit budget for task 7 while its goal is at revision 1
    approval = approval_grant(access=access_of(bob), task_id=7, budget=80)
    assert (approval.kind, approval.scope) == (ApprovalKind.BUDGET, "goal:1")

    # when the task places a 40-credit order under the same goal
    scopes.calls.clear()
    order = place("11:0:0")

    # then the budget authorised it and 40 credits are held; the scope was resolved once for the order
    assert (order.authorisation, order.approval_id, order.status) == (Authorisation.BUDGET, approval.pk, "held")
    assert Approval.objects.get(pk=approval.pk).remaining == 40
    assert _held(workspace) == (60, 40)
    assert scopes.calls == [7]
    assert budget_remaining(workspace_id=workspace.pk, task_id=7) == 40


@pytest.mark.django_db
def test_it_asks_again_once_the_goal_changed(workspace, bob, access_of, strict, scopes, place):
    # given a budget approved under goal revision 1, partly used
    approval = approval_grant(access=access_of(bob), task_id=7, budget=80)
    first = place("11:0:0")

    # when the goal changes and the task orders again
    scopes.current[7] = "goal:2"
    before = money()
    with pytest.raises(ConfirmationRequired) as refused:
        place("12:0:0")

    # then the order needs a new confirmation, exactly as if no budget had been approved: nothing moved
    assert refused.value.code == "confirmation_required"
    assert "budget" not in refused.value.details["reasons"]
    assert refused.value.details["budget_remaining"] is None
    assert money() == before
    assert list(Order.objects.values_list("idempotency_key", flat=True)) == [first.idempotency_key]
    assert Approval.objects.get(pk=approval.pk).remaining == 40
    assert _held(workspace) == (60, 40)
    # and the old budget no longer counts as the task's budget
    assert budget_remaining(workspace_id=workspace.pk, task_id=7) is None
    assert task_spending(workspace_id=workspace.pk, task_id=7) == {"spent": 0, "held": 40, "remaining": None}


@pytest.mark.django_db
def test_it_lets_a_budget_approved_under_the_new_goal_authorise(workspace, bob, access_of, strict, scopes, place):
    # given a budget of the old goal, and the goal changed
    old = approval_grant(access=access_of(bob), task_id=7, budget=80)
    scopes.current[7] = "goal:2"

    # when bob approves a budget again, under the new goal, and the task orders
    new = approval_grant(access=access_of(bob), task_id=7, budget=50)
    order = place("12:0:0")

    # then only the new budget is drawn from; the old one is left as it was
    assert new.scope == "goal:2"
    assert (order.authorisation, order.approval_id) == (Authorisation.BUDGET, new.pk)
    assert list(Approval.objects.order_by("pk").values_list("pk", "scope", "remaining")) == [
        (old.pk, "goal:1", 80),
        (new.pk, "goal:2", 10),
    ]
    assert budget_remaining(workspace_id=workspace.pk, task_id=7) == 10
    assert _held(workspace) == (60, 40)


@pytest.mark.django_db
def test_it_returns_a_released_hold_to_its_old_budget_without_reviving_it(
    workspace, bob, access_of, strict, scopes, place
):
    # given an order drawn from a goal-1 budget, then the goal changed
    approval = approval_grant(access=access_of(bob), task_id=7, budget=40)
    place("11:0:0")
    scopes.current[7] = "goal:2"

    # when the order's generation fails and its hold is released
    order_release(workspace_id=workspace.pk, idempotency_key="11:0:0", reason="failed")

    # then the money returns to the old budget, which still authorises nothing under the new goal
    assert Approval.objects.get(pk=approval.pk).remaining == 40
    assert _held(workspace) == (100, 0)
    with pytest.raises(ConfirmationRequired):
        place("12:0:0")
    assert Order.objects.filter(idempotency_key="12:0:0").count() == 0


# --- quotes -------------------------------------------------------------------------------------------------


@pytest.fixture
def old_quote(workspace, bob, access_of, scopes):
    """A 40-credit image quote for task 7 made and approved under goal revision 1."""
    quote = quote_create(workspace_id=workspace.pk, operation="image.generate", params={}, task_id=7)
    approval = approval_grant(access=access_of(bob), quote_id=quote.pk)
    assert (quote.scope, approval.scope) == ("goal:1", "goal:1")
    return quote


@pytest.mark.django_db
def test_it_uses_an_approved_quote_of_the_current_goal(workspace, strict, scopes, old_quote, place):
    # given the goal has not changed
    found = quote_approved_for(workspace_id=workspace.pk, task_id=7, operation="image.generate", amount=40)

    # when the task orders naming the quote it found
    order = place("11:0:0", quote_id=found.pk)

    # then the quote's approval authorised it, once
    assert found.pk == old_quote.pk
    assert (order.authorisation, order.approval.quote_id) == (Authorisation.QUOTE, old_quote.pk)
    assert order.approval.consumed_at is not None
    assert _held(workspace) == (60, 40)


@pytest.mark.django_db
def test_it_does_not_offer_an_approved_quote_of_an_earlier_goal(workspace, scopes, old_quote):
    # when the goal changes
    scopes.current[7] = "goal:2"

    # then the approved quote of goal 1 is no longer found for the task
    assert quote_approved_for(workspace_id=workspace.pk, task_id=7, operation="image.generate", amount=40) is None


@pytest.mark.django_db
def test_it_refuses_an_order_naming_a_quote_of_an_earlier_goal(workspace, strict, scopes, old_quote, place):
    # given the goal changed after the quote was approved
    scopes.current[7] = "goal:2"
    before = money()

    # when an order names that quote anyway
    with pytest.raises(Conflict) as refused:
        place("11:0:0", quote_id=old_quote.pk)

    # then 409 quote_out_of_scope, with a message a person can act on; nothing held, the approval unused
    assert (refused.value.status, refused.value.code) == (409, "quote_out_of_scope")
    assert "new quote" in refused.value.message
    assert refused.value.details == {
        "quote": old_quote.pk,
        "task": 7,
        "quote_scope": "goal:1",
        "current_scope": "goal:2",
    }
    assert money() == before
    assert not Order.objects.exists()
    assert Approval.objects.get(quote=old_quote).consumed_at is None
    assert _held(workspace) == (100, 0)


@pytest.mark.django_db
def test_it_does_not_reuse_an_open_quote_of_an_earlier_goal(workspace, scopes):
    # given an open (unapproved) 80-credit quote for task 7 under goal 1
    quote = quote_create(workspace_id=workspace.pk, operation="image.generate", params={"count": 2}, task_id=7)
    found = quote_open_for(workspace_id=workspace.pk, task_id=7, operation="image.generate", amount=80)
    assert found.pk == quote.pk

    # when the goal changes
    scopes.current[7] = "goal:2"

    # then it is not reused: the task asks for a new quote, which carries the new goal
    assert quote_open_for(workspace_id=workspace.pk, task_id=7, operation="image.generate", amount=80) is None
    fresh = quote_create(workspace_id=workspace.pk, operation="image.generate", params={"count": 2}, task_id=7)
    assert fresh.scope == "goal:2"
    assert quote_open_for(workspace_id=workspace.pk, task_id=7, operation="image.generate", amount=80).pk == fresh.pk


@pytest.mark.django_db
def test_it_keeps_a_quote_for_no_task_unscoped(workspace, bob, access_of, fund, scopes, place):
    # given a quote and its approval for no task (an open API request)
    fund(100)
    quote = quote_create(workspace_id=workspace.pk, operation="image.generate", params={})
    approval = approval_grant(access=access_of(bob), quote_id=quote.pk)

    # when the API request orders naming it
    order = place("api:1", task_id=None, quote_id=quote.pk, api_request=True)

    # then nothing was scoped and the approval authorised the order
    assert (quote.scope, approval.scope) == ("", "")
    assert (order.authorisation, order.approval_id) == (Authorisation.QUOTE, approval.pk)


# --- unscoped: before scopes existed, or with no resolver ---------------------------------------------------


@pytest.fixture
def unscoped():
    """A resolver that knows every task but gives none a scope: how billing worked before scopes existed."""
    previous = scope_resolver_install(lambda workspace_id, task_id: "")
    yield
    scope_resolver_install(previous)


@pytest.mark.django_db
def test_it_knows_no_task_without_a_resolver(workspace, bob, access_of, strict, no_resolver, place):
    # given no resolver: billing cannot tell which tasks the workspace has
    before = money()

    # when a person asks for a budget and a quote for task 7
    with pytest.raises(NotFound) as budget:
        approval_grant(access=access_of(bob), task_id=7, budget=40)
    with pytest.raises(NotFound) as quote:
        quote_create(workspace_id=workspace.pk, operation="image.generate", params={}, task_id=7)

    # then both are the 404 of a missing task (fail closed), and nothing was recorded
    assert (budget.value.code, quote.value.code) == ("not_found", "not_found")
    assert budget.value.message == quote.value.message == "Task not found."
    assert money() == before
    # and the task's own orders are still judged, unscoped, by the policy
    with pytest.raises(ConfirmationRequired):
        place("11:0:0")


@pytest.mark.django_db
def test_it_behaves_as_before_with_unscoped_tasks(workspace, bob, access_of, strict, unscoped, place):
    # given a resolver without scopes: a budget and a quote for task 7 are unscoped
    budget = approval_grant(access=access_of(bob), task_id=7, budget=40)
    quote = quote_create(workspace_id=workspace.pk, operation="image.generate", params={}, task_id=7)
    quote_approval = approval_grant(access=access_of(bob), quote_id=quote.pk)
    assert (budget.scope, quote.scope, quote_approval.scope) == ("", "", "")

    # when the task orders twice: once under its budget, once naming its approved quote
    by_budget = place("11:0:0")
    found = quote_approved_for(workspace_id=workspace.pk, task_id=7, operation="image.generate", amount=40)
    by_quote = place("12:0:0", quote_id=found.pk)

    # then both are authorised as they always were, and both hold their credits
    assert (by_budget.authorisation, by_budget.approval_id) == (Authorisation.BUDGET, budget.pk)
    assert (by_quote.authorisation, by_quote.approval_id) == (Authorisation.QUOTE, quote_approval.pk)
    assert budget_remaining(workspace_id=workspace.pk, task_id=7) == 0
    assert _held(workspace) == (20, 80)
    assert list(Order.objects.order_by("pk").values_list("idempotency_key", "status", "authorisation")) == [
        ("11:0:0", OrderStatus.HELD, "budget"),
        ("12:0:0", OrderStatus.HELD, "quote"),
    ]


@pytest.mark.django_db
def test_it_still_counts_unscoped_approvals_once_a_resolver_is_installed(
    workspace, bob, access_of, strict, unscoped, place
):
    # given a budget approved before scopes existed (unscoped)
    budget = approval_grant(access=access_of(bob), task_id=7, budget=80)

    # when a resolver is installed and the task, now at goal revision 3, orders
    scope_resolver_install(lambda workspace_id, task_id: "goal:3")
    order = place("11:0:0")

    # then the unscoped budget still authorises it
    assert (budget.scope, order.authorisation, order.approval_id) == ("", Authorisation.BUDGET, budget.pk)
    assert budget_remaining(workspace_id=workspace.pk, task_id=7) == 40
    [hold] = order.entries.filter(kind=LedgerKind.HOLD)
    assert (hold.delta_available, hold.delta_held) == (-40, 40)
    assert Quote.objects.count() == 0
