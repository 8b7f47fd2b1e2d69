"""Orders: one hold per idempotency key, authorisation before the side effect, capture/release exactly once.

DESIGN §4–§6, §14; TESTING "idempotency key race", "key reuse, other body", and "50 concurrent charges
against a small budget never overspend; the ledger reconciles to the balance".
"""

import threading
from unittest import mock

import pytest
from django.db import transaction

from billing.exceptions import ConfirmationRequired
from billing.models import Approval, Authorisation, LedgerEntry, LedgerKind, Order, OrderStatus, Wallet
from billing.selectors import budget_remaining, wallet_get
from billing.services import orders as orders_module
from billing.services.approvals import approval_grant
from billing.services.orders import order_capture, order_refund, order_release
from billing.services.quotes import quote_create
from billing.services.wallets import wallet_reconcile, wallet_topup
from lomote.kernel.exceptions import Conflict, InvalidInput, NotFound, PaymentRequired
from tests.billing.helpers import money
from tests.support.race import race
from tests.support.rest import events_of
from workspace.models import Event
from workspace.selectors import workspace_access
from workspace.services.events import event_append
from workspace.services.workspaces import workspace_create


def _balance(workspace) -> tuple[int, int]:
    wallet = wallet_get(workspace_id=workspace.pk)
    return wallet.available, wallet.held


def _holds(workspace) -> list[LedgerEntry]:
    return list(LedgerEntry.objects.filter(wallet__workspace=workspace, kind=LedgerKind.HOLD))


# --- placing and idempotency --------------------------------------------------------------------------------


@pytest.mark.django_db
def test_it_holds_the_amount_and_records_why(workspace, fund, place):
    # given 100 credits
    fund(100)

    # when a 40-credit image is ordered for task 7
    order = place("11:0:0")

    # then 40 credits move from available to held, with one ledger entry and one event, and it reconciles
    assert order.status == OrderStatus.HELD and order.amount == 40 and order.task_id == 7
    assert order.authorisation == Authorisation.AUTO
    assert _balance(workspace) == (60, 40)
    [hold] = _holds(workspace)
    assert (hold.delta_available, hold.delta_held, hold.order_id) == (-40, 40, order.pk)
    [event] = events_of(workspace.pk, "billing.hold")
    assert event.data["order"] == order.pk and event.data["idempotency_key"] == "11:0:0"
    assert (event.data["available"], event.data["held"], event.data["authorisation"]) == (60, 40, "auto")
    assert wallet_reconcile(workspace.pk).ok


@pytest.mark.django_db
def test_it_returns_the_same_order_for_a_repeated_request(workspace, fund, place):
    # given an order placed once
    fund(100)
    first = place("11:0:0")
    before = money()

    # when the same call is submitted again (an old and a new worker, or a retry)
    second = place("11:0:0")

    # then it is the same order, and nothing else moved: one hold, one event
    assert second.pk == first.pk
    assert money() == before
    assert len(_holds(workspace)) == 1
    assert _balance(workspace) == (60, 40)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "change",
    [
        pytest.param({"amount": 80}, id="other-amount"),
        pytest.param({"target": {"task": 7, "prompt_hash": "other"}}, id="other-target"),
        pytest.param({"operation": "3d.generate"}, id="other-operation"),
    ],
)
def test_it_refuses_a_key_reused_for_another_request(workspace, fund, place, change):
    # given an order under key 11:0:0
    fund(500)
    first = place("11:0:0")
    before = money()

    # when the same key comes back with a different amount, target or operation
    with pytest.raises(Conflict) as refused:
        place("11:0:0", **change)

    # then 409 idempotency_key_reuse naming the existing order, and nothing new
    assert refused.value.status == 409
    assert refused.value.code == "idempotency_key_reuse"
    assert refused.value.details["order"] == first.pk
    assert money() == before


@pytest.mark.django_db
def test_it_keeps_idempotency_keys_per_workspace(workspace, fund, place, dave):
    # given an order under key 11:0:0 in alice's workspace, and dave's funded workspace
    fund(100)
    mine = place("11:0:0")
    other = workspace_create(user=dave, name="Dave's place")
    wallet_topup(access=workspace_access(principal=dave, workspace_id=other.pk), amount=100)

    # when dave's workspace uses the same key
    theirs = place("11:0:0", workspace_id=other.pk)

    # then it is a separate order charged to dave's wallet
    assert theirs.pk != mine.pk and theirs.workspace_id == other.pk
    assert _balance(other) == (60, 40) and _balance(workspace) == (60, 40)


@pytest.mark.django_db
def test_it_returns_the_existing_order_when_its_insert_loses_the_race(workspace, fund, place):
    # given an order committed under key 11:0:0, and a second request that did not see it (as if the
    # winner committed between its checks and its insert)
    fund(100)
    first = place("11:0:0")
    before = money()

    # when the second request inserts inside a caller's transaction, which then goes on with other work
    with mock.patch.object(orders_module, "order_find", side_effect=[None, None, first]):
        with transaction.atomic():
            second = place("11:0:0")
            # the caller's transaction is still usable after the collision (the insert had its savepoint)
            event = event_append(workspace_id=workspace.pk, kind="test.after")

    # then it gets the existing order, nothing moved twice, and the caller's own write is kept
    assert second.pk == first.pk
    assert money() == before
    assert Event.objects.filter(pk=event.pk).exists()


@pytest.mark.django_db
def test_it_answers_409_when_the_insert_collides_with_another_request(workspace, fund, place):
    # given an order committed under key 11:0:0, and a second request for another amount that did not see it
    fund(500)
    first = place("11:0:0")
    before = money()

    # when the second request's insert collides
    with mock.patch.object(orders_module, "order_find", side_effect=[None, None, first]):
        with pytest.raises(Conflict) as refused:
            place("11:0:0", amount=80)

    # then 409 idempotency_key_reuse, nothing changed
    assert refused.value.code == "idempotency_key_reuse"
    assert money() == before


# --- real contention: PostgreSQL, one connection per thread --------------------------------------------------


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("collide", [False, True], ids=["lock-decides", "insert-collides"])
def test_it_creates_one_order_when_two_callers_race_on_one_key(workspace, fund, place, collide):
    # given a funded workspace; with `collide`, each caller's two look-ups before its insert are blinded, so
    # the loser's insert really hits the unique constraint (as a writer that skipped the lock would)
    fund(100)
    real_find = orders_module.order_find
    seen = threading.local()
    lookups: list[str] = []

    def blinded_find(**kwargs):
        seen.calls = getattr(seen, "calls", 0) + 1
        lookups.append(threading.current_thread().name)
        return None if seen.calls <= 2 else real_find(**kwargs)

    # when two callers place the same order at once, each in its own transaction that also records an event
    def caller(name):
        def call():
            with transaction.atomic():
                order = place("11:0:0")
                event_append(workspace_id=workspace.pk, kind="test.caller", data={"name": name})
            return order

        return call

    with mock.patch.object(orders_module, "order_find", side_effect=blinded_find if collide else real_find):
        results = race([caller("a"), caller("b")])

    # then both callers got the one order, there is one hold, and both callers' transactions committed
    for result in results:
        assert isinstance(result, Order), result
    assert results[0].pk == results[1].pk
    assert Order.objects.filter(workspace=workspace, idempotency_key="11:0:0").count() == 1
    assert len(_holds(workspace)) == 1
    assert _balance(workspace) == (60, 40)
    assert sorted(e.data["name"] for e in events_of(workspace.pk, "test.caller")) == ["a", "b"]
    assert wallet_reconcile(workspace.pk).ok
    if collide:
        # then the loser really collided: two blinded look-ups each, plus the loser's look-up after its insert
        assert len(lookups) == 5


def _outcomes(results) -> dict[str, int]:
    counts: dict[str, int] = {}
    for result in results:
        key = result.code if isinstance(result, Exception) and hasattr(result, "code") else type(result).__name__
        counts[key] = counts.get(key, 0) + 1
    return counts


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("limit", "expected"),
    [
        pytest.param("balance", {"Order": 10, "insufficient_balance": 40}, id="balance-400"),
        pytest.param("budget", {"Order": 5, "confirmation_required": 45}, id="budget-200"),
        pytest.param("daily_cap", {"Order": 7, "confirmation_required": 43}, id="daily-cap-280"),
    ],
)
def test_it_never_overspends_under_50_concurrent_orders(
    workspace, alice, access_of, fund, set_policy, place, limit, expected
):
    # given a small limit: 400 credits in the wallet, or a 200-credit budget for task 7, or a 280-credit daily cap
    if limit == "balance":
        fund(400)
        set_policy(threshold=100, cap=1_000_000)
    elif limit == "budget":
        fund(10_000)
        set_policy(threshold=0)
        approval_grant(access=access_of(alice), task_id=7, budget=200)
    else:
        fund(10_000)
        set_policy(threshold=100, cap=280)

    # when 50 workers each place a different 40-credit order at the same moment
    results = race([lambda i=i: place(f"turn:{i}:0") for i in range(50)])

    # then exactly as many as the limit allows were held, the rest refused, and nothing else moved
    assert _outcomes(results) == expected
    held = expected["Order"] * 40
    assert Order.objects.filter(workspace=workspace, status=OrderStatus.HELD).count() == expected["Order"]
    assert wallet_get(workspace_id=workspace.pk).held == held
    assert len(_holds(workspace)) == expected["Order"]
    assert len(events_of(workspace.pk, "billing.hold")) == expected["Order"]
    if limit == "budget":
        assert Approval.objects.get().remaining == 0
    # then the wallet is exactly the sum of its ledger
    ok, ledger, wallet = wallet_reconcile(workspace.pk)
    assert ok, (ledger, wallet)


# --- authorisation -------------------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("amount", "auto_spent", "api_request", "reasons"),
    [
        pytest.param(120, 0, False, ["threshold"], id="above-threshold"),
        pytest.param(80, 440, False, ["daily_cap"], id="above-daily-cap"),
        pytest.param(120, 440, False, ["threshold", "daily_cap"], id="both"),
        pytest.param(40, 0, True, ["api_request"], id="open-api"),
    ],
)
def test_it_requires_confirmation_and_changes_nothing(workspace, fund, place, amount, auto_spent, api_request, reasons):
    # given the default policy (100 per request, 500 a day) and `auto_spent` credits already spent unasked today
    fund(10_000)
    for i in range(auto_spent // 40):
        place(f"earlier:{i}", amount=40)
    before = money()

    # when an order is placed
    with pytest.raises(ConfirmationRequired) as refused:
        place("11:0:0", amount=amount, api_request=api_request)

    # then 402 confirmation_required with what to approve and why, and nothing moved
    error = refused.value
    assert (error.status, error.code) == (402, "confirmation_required")
    assert error.details["amount"] == amount and error.details["operation"] == "image.generate"
    assert error.details["reasons"] == reasons
    assert error.details["quote"] is None and error.details["task"] == 7
    assert error.details["no_confirm_threshold"] == 100 and error.details["daily_no_confirm_cap"] == 500
    assert error.details["auto_spent_today"] == auto_spent
    assert money() == before


@pytest.mark.django_db
def test_it_lets_an_approved_quote_through_once(workspace, alice, bob, access_of, fund, place):
    # given bob approved a 120-credit quote (3 images) for task 7, above the 100-credit threshold
    fund(1000)
    quote = quote_create(workspace_id=workspace.pk, operation="image.generate", params={"count": 3}, task_id=7)
    approval = approval_grant(access=access_of(bob), quote_id=quote.pk)

    # when the order names the quote
    order = place("11:0:0", amount=120, quote_id=quote.pk)

    # then it is held on the strength of the approval, which is now used up
    assert order.authorisation == Authorisation.QUOTE and order.approval_id == approval.pk
    approval.refresh_from_db()
    assert approval.consumed_at is not None and approval.remaining == 0
    # then another order naming the same quote needs a new approval
    with pytest.raises(ConfirmationRequired) as refused:
        place("12:0:0", amount=120, quote_id=quote.pk)
    assert refused.value.details["quote"] == quote.pk
    assert refused.value.details["reasons"] == ["threshold"]


@pytest.mark.django_db
def test_it_accepts_an_approved_quote_for_an_open_api_request(workspace, bob, access_of, fund, place):
    # given a person approved a quote for a request made through the open API
    fund(100)
    quote = quote_create(workspace_id=workspace.pk, operation="image.generate", params={})
    approval_grant(access=access_of(bob), quote_id=quote.pk)

    # when the API request places its order naming the quote
    order = place("api:1", task_id=None, quote_id=quote.pk, api_request=True)

    # then it is held: the open API is confirmed one by one, and this one was
    assert order.authorisation == Authorisation.QUOTE


@pytest.mark.django_db
@pytest.mark.parametrize(
    "change",
    [
        pytest.param({"amount": 80}, id="more-than-quoted"),
        pytest.param({"operation": "3d.generate", "amount": 40}, id="other-operation"),
        pytest.param({"task_id": 8}, id="other-task"),
    ],
)
def test_it_refuses_an_order_that_does_not_match_its_quote(workspace, bob, access_of, fund, place, change):
    # given an approved 40-credit image quote for task 7
    fund(1000)
    quote = quote_create(workspace_id=workspace.pk, operation="image.generate", params={}, task_id=7)
    approval_grant(access=access_of(bob), quote_id=quote.pk)
    before = money()

    # when an order names it for something else
    with pytest.raises(InvalidInput) as refused:
        place("11:0:0", quote_id=quote.pk, **change)

    # then 400 quote_mismatch, and the approval is still unused
    assert refused.value.code == "quote_mismatch"
    assert money() == before


@pytest.mark.django_db
def test_it_draws_a_task_budget_and_then_lets_the_policy_through(workspace, bob, access_of, fund, set_policy, place):
    # given bob approved a 100-credit budget for task 7, and the policy lets 40-credit orders through
    fund(1000)
    set_policy(threshold=50, cap=500)
    approval = approval_grant(access=access_of(bob), task_id=7, budget=100)

    # when the task places three 40-credit orders
    first, second, third = place("1:0:0"), place("2:0:0"), place("3:0:0")

    # then two are drawn from the budget; the third, more than what is left of it, is within the workspace's
    # limits and goes through unasked: an approved budget adds to the limits, it never lowers them
    assert first.authorisation == second.authorisation == Authorisation.BUDGET
    assert (third.authorisation, third.approval_id, third.status) == (Authorisation.AUTO, None, OrderStatus.HELD)
    approval.refresh_from_db()
    assert approval.remaining == 20 and approval.consumed_at is None


@pytest.mark.django_db
def test_it_lets_a_cost_within_the_limits_through_whether_or_not_a_budget_was_approved(
    workspace, bob, access_of, fund, set_policy, place
):
    # given the two situations under one policy (50 credits per operation, 100 a day): a logo task with
    # no budget, and a poster task whose 80-credit budget is partly used (20 left)
    fund(1000)
    set_policy(threshold=50, cap=100)
    approval_grant(access=access_of(bob), task_id=8, budget=80)
    place("1:0:0", task_id=8, target={"task": 8}, amount=60)

    # when the logo task spends 40 credits, and the poster task 40 credits for a revision
    logo = place("2:0:0", task_id=7, target={"task": 7}, amount=40)
    revision = place("3:0:0", task_id=8, target={"task": 8}, amount=40)

    # then neither asks: both are within the workspace's no-confirmation limits
    assert (logo.authorisation, revision.authorisation) == (Authorisation.AUTO, Authorisation.AUTO)
    assert budget_remaining(workspace_id=workspace.pk, task_id=8) == 20


@pytest.mark.django_db
def test_it_lets_an_approved_budget_pay_above_the_limits(workspace, bob, access_of, fund, set_policy, place):
    # given a threshold of 25 credits and a 100-credit budget for task 7
    fund(1000)
    set_policy(threshold=25, cap=100)
    approval = approval_grant(access=access_of(bob), task_id=7, budget=100)

    # when the task places a 40-credit order, above the threshold
    order = place("1:0:0")

    # then the budget pays for it without asking
    assert (order.authorisation, order.approval_id) == (Authorisation.BUDGET, approval.pk)


@pytest.mark.django_db
def test_it_asks_only_above_both_and_names_each_limit_and_its_excess(
    workspace, bob, access_of, fund, set_policy, place
):
    # given 25 credits per operation and 100 a day, 72 of which were spent unasked, and a budget with 15 left
    fund(1000)
    set_policy(threshold=25, cap=100)
    place("1:0:0", task_id=8, target={"task": 8}, amount=24)
    place("2:0:0", task_id=8, target={"task": 8}, amount=24)
    place("3:0:0", task_id=8, target={"task": 8}, amount=24)
    approval_grant(access=access_of(bob), task_id=7, budget=55)
    place("4:0:0", amount=40)
    before = money()

    # when the task places another 40-credit order
    with pytest.raises(ConfirmationRequired) as refused:
        place("5:0:0", amount=40)

    # then it asks, naming each limit it passes and by how much; nothing was held
    details = refused.value.details
    assert details["reasons"] == ["threshold", "daily_cap", "budget"]
    assert details["over_by"] == {"threshold": 15, "daily_cap": 12, "budget": 25}
    assert (details["amount"], details["no_confirm_threshold"], details["daily_no_confirm_cap"]) == (40, 25, 100)
    assert (details["auto_spent_today"], details["budget_remaining"]) == (72, 15)
    assert money() == before


@pytest.mark.django_db
def test_it_refuses_an_order_the_balance_does_not_cover(workspace, bob, access_of, fund, place):
    # given 30 credits and an approved budget for task 7
    fund(30)
    approval_grant(access=access_of(bob), task_id=7, budget=100)
    before = money()

    # when a 40-credit order is placed
    with pytest.raises(PaymentRequired) as refused:
        place("11:0:0")

    # then 402 insufficient_balance with what is missing, and nothing moved (the budget is not drawn)
    assert (refused.value.status, refused.value.code) == (402, "insufficient_balance")
    assert refused.value.details == {"available": 30, "required": 40, "operation": "image.generate"}
    assert money() == before


@pytest.mark.django_db
def test_it_asks_for_confirmation_before_checking_the_balance(workspace, place):
    # given an empty wallet
    # when an order above the threshold is placed
    with pytest.raises(ConfirmationRequired):
        place("11:0:0", amount=400)
    # then the person is asked first: approving it is the decision; topping up comes after


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("change", "field"),
    [
        pytest.param({"amount": 0}, "amount", id="zero"),
        pytest.param({"amount": -40}, "amount", id="negative"),
        pytest.param({"amount": True}, "amount", id="bool"),
        pytest.param({"amount": 40.0}, "amount", id="float"),
        pytest.param({"amount": "40"}, "amount", id="string"),
        pytest.param({"amount": 10**12}, "amount", id="huge"),
        pytest.param({"operation": "mine.bitcoin"}, "operation", id="unknown-operation"),
        pytest.param({"target": ["x"]}, "target", id="target-not-object"),
        pytest.param({"target": {"blob": "x" * 5000}}, "target", id="target-too-big"),
        pytest.param({"task_id": 0}, "task", id="task-zero"),
        pytest.param({"quote_id": "1"}, "quote", id="quote-string"),
    ],
)
def test_it_refuses_bad_input_before_anything_moves(workspace, fund, place, change, field):
    # given a funded workspace
    fund(100)
    before = money()

    # when an order carries a bad value
    with pytest.raises(InvalidInput) as refused:
        place("11:0:0", **change)

    # then 400 on that field, nothing written
    assert set(refused.value.details["fields"]) == {field}
    assert money() == before


@pytest.mark.django_db
@pytest.mark.parametrize("key", ["", "   ", "k" * 201, None, 11])
def test_it_refuses_a_bad_idempotency_key(workspace, fund, place, key):
    fund(100)
    with pytest.raises(InvalidInput) as refused:
        place(key)
    assert set(refused.value.details["fields"]) == {"idempotency_key"}


# --- settling ------------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_it_captures_once(workspace, fund, place):
    # given a held order
    fund(100)
    order = place("11:0:0")

    # when it is captured twice
    first = order_capture(workspace_id=workspace.pk, idempotency_key="11:0:0")
    second = order_capture(workspace_id=workspace.pk, idempotency_key="11:0:0")

    # then it is charged once: held goes to zero, available stays, one capture entry, one event
    assert first.pk == second.pk == order.pk
    assert second.status == OrderStatus.CAPTURED and second.settled_at is not None
    assert _balance(workspace) == (60, 0)
    captures = LedgerEntry.objects.filter(order=order, kind=LedgerKind.CAPTURE)
    assert [(e.delta_available, e.delta_held) for e in captures] == [(0, -40)]
    assert len(events_of(workspace.pk, "billing.capture")) == 1
    assert wallet_reconcile(workspace.pk).ok


@pytest.mark.django_db
def test_it_releases_once(workspace, fund, place):
    # given a held order
    fund(100)
    order = place("11:0:0")

    # when it is released twice
    order_release(workspace_id=workspace.pk, idempotency_key="11:0:0", reason="job failed")
    again = order_release(workspace_id=workspace.pk, idempotency_key="11:0:0", reason="job failed")

    # then the credits came back once
    assert again.status == OrderStatus.RELEASED
    assert _balance(workspace) == (100, 0)
    releases = LedgerEntry.objects.filter(order=order, kind=LedgerKind.RELEASE)
    assert [(e.delta_available, e.delta_held, e.memo) for e in releases] == [(40, -40, "release: job failed")]
    [event] = events_of(workspace.pk, "billing.release")
    assert event.data["reason"] == "job failed"
    assert wallet_reconcile(workspace.pk).ok


@pytest.mark.django_db
@pytest.mark.parametrize("first", ["capture", "release"])
def test_it_never_moves_a_settled_order_the_other_way(workspace, fund, place, first):
    # given an order captured (or released)
    fund(100)
    place("11:0:0")
    settle = {
        "capture": lambda: order_capture(workspace_id=workspace.pk, idempotency_key="11:0:0"),
        "release": lambda: order_release(workspace_id=workspace.pk, idempotency_key="11:0:0", reason="failed"),
    }
    settle[first]()
    before = money()

    # when the opposite settlement arrives late
    order = settle["release" if first == "capture" else "capture"]()

    # then it is a no-op that returns the order as it is
    assert order.status == (OrderStatus.CAPTURED if first == "capture" else OrderStatus.RELEASED)
    assert money() == before


@pytest.mark.django_db
def test_it_gives_a_released_order_back_to_the_task_budget(workspace, bob, access_of, fund, place):
    # given a 40-credit budget for task 7, used up by one order
    fund(100)
    approval = approval_grant(access=access_of(bob), task_id=7, budget=40)
    place("11:0:0")
    approval.refresh_from_db()
    assert (approval.remaining, approval.consumed_at is not None) == (0, True)

    # when that order's job fails
    order_release(workspace_id=workspace.pk, idempotency_key="11:0:0", reason="job failed")

    # then the budget can pay for the retry
    approval.refresh_from_db()
    assert (approval.remaining, approval.consumed_at) == (40, None)
    assert place("12:0:0").authorisation == Authorisation.BUDGET


@pytest.mark.django_db
def test_it_refunds_a_captured_order_once(workspace, fund, place):
    # given a captured order
    fund(100)
    place("11:0:0")
    order_capture(workspace_id=workspace.pk, idempotency_key="11:0:0")

    # when it is refunded twice
    order_refund(workspace_id=workspace.pk, idempotency_key="11:0:0", reason="bad result")
    order = order_refund(workspace_id=workspace.pk, idempotency_key="11:0:0", reason="bad result")

    # then the credits came back once
    assert order.status == OrderStatus.REFUNDED
    assert _balance(workspace) == (100, 0)
    assert LedgerEntry.objects.filter(order=order, kind=LedgerKind.REFUND).count() == 1
    assert wallet_reconcile(workspace.pk).ok


@pytest.mark.django_db
@pytest.mark.parametrize("settle", [order_capture, order_release])
def test_it_answers_not_found_for_an_unknown_order(workspace, settle):
    kwargs = {"reason": "failed"} if settle is order_release else {}
    with pytest.raises(NotFound) as missing:
        settle(workspace_id=workspace.pk, idempotency_key="nope", **kwargs)
    assert missing.value.code == "order_not_found"


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_it_captures_once_when_two_settlements_race(workspace, fund, place):
    # given a held order
    fund(100)
    place("11:0:0")

    # when a duplicate completion callback and the poller capture it at the same moment
    results = race([lambda: order_capture(workspace_id=workspace.pk, idempotency_key="11:0:0")] * 2)

    # then one capture entry and one event; the wallet reconciles
    assert all(isinstance(r, Order) and r.status == OrderStatus.CAPTURED for r in results), results
    assert LedgerEntry.objects.filter(kind=LedgerKind.CAPTURE).count() == 1
    assert len(events_of(workspace.pk, "billing.capture")) == 1
    assert Wallet.objects.get(workspace=workspace).held == 0
    assert wallet_reconcile(workspace.pk).ok
