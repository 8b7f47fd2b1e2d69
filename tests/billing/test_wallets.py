"""Wallets: owners top up, every movement is a ledger entry, and the balance reconciles with the ledger."""

import pytest
from django.db import IntegrityError, transaction

from billing.models import Approval, LedgerEntry, LedgerKind, Order, Quote, Wallet
from billing.selectors import wallet_get
from billing.services.approvals import approval_grant
from billing.services.orders import order_capture, order_release
from billing.services.quotes import quote_create
from billing.services.wallets import wallet_reconcile, wallet_topup
from lomote.kernel.exceptions import InvalidInput, PermissionDenied
from tests.billing.helpers import money
from tests.support.rest import events_of, issue_api_key
from workspace.authentication import ApiKeyPrincipal
from workspace.models import Role
from workspace.selectors import workspace_access
from workspace.services.workspaces import workspace_delete

pytestmark = pytest.mark.django_db


def test_it_creates_the_wallet_on_the_first_top_up(workspace, alice, access_of):
    # given a workspace without a wallet, which reads as empty
    assert not Wallet.objects.exists()
    assert (wallet_get(workspace_id=workspace.pk).available, wallet_get(workspace_id=workspace.pk).held) == (0, 0)

    # when alice tops it up
    wallet = wallet_topup(access=access_of(alice), amount=250, memo="October")

    # then the wallet exists with the credits, explained by one ledger entry and one event
    assert (wallet.available, wallet.held) == (250, 0)
    [entry] = LedgerEntry.objects.all()
    assert (entry.kind, entry.delta_available, entry.delta_held, entry.memo, entry.created_by) == (
        LedgerKind.TOPUP,
        250,
        0,
        "October",
        alice,
    )
    [event] = events_of(workspace.pk, "billing.topup")
    assert event.data["amount"] == 250 and event.data["available"] == 250
    assert event.data["by"] == {"type": "user", "id": alice.pk, "username": "alice"}


@pytest.mark.parametrize("who", ["bob", "carol"])
def test_it_lets_only_owners_top_up(workspace, request, access_of, who):
    before = money()
    with pytest.raises(PermissionDenied) as refused:
        wallet_topup(access=access_of(request.getfixturevalue(who)), amount=100)
    assert refused.value.code == "role_required"
    assert money() == before


def test_it_never_lets_an_api_key_top_up(workspace):
    # given an editor key (keys are never owners)
    key, _ = issue_api_key(workspace, role=Role.EDITOR)
    access = workspace_access(principal=ApiKeyPrincipal(api_key=key), workspace_id=workspace.pk)
    before = money()

    # when it tops up
    with pytest.raises(PermissionDenied):
        wallet_topup(access=access, amount=100)

    # then nothing changed
    assert money() == before


@pytest.mark.parametrize("amount", [0, -1, 1_000_001, True, 2.5, "10", None])
def test_it_refuses_a_bad_top_up_amount(workspace, alice, access_of, amount):
    before = money()
    with pytest.raises(InvalidInput) as refused:
        wallet_topup(access=access_of(alice), amount=amount)
    assert set(refused.value.details["fields"]) == {"amount"}
    assert money() == before


def test_it_reconciles_after_every_kind_of_movement(workspace, fund, place):
    # given top-ups, holds, a capture and a release
    fund(300)
    place("1:0:0")
    place("2:0:0")
    place("3:0:0")
    order_capture(workspace_id=workspace.pk, idempotency_key="1:0:0")
    order_release(workspace_id=workspace.pk, idempotency_key="2:0:0", reason="job failed")
    fund(20)

    # when the wallet is reconciled
    ok, expected, actual = wallet_reconcile(workspace.pk)

    # then the ledger explains the wallet exactly: 320 in, 40 spent, 40 still held
    assert ok
    assert expected == actual == {"available": 240, "held": 40}


def test_it_reports_a_wallet_changed_behind_the_ledgers_back(workspace, fund):
    # given a wallet whose balance someone edited directly
    fund(100)
    Wallet.objects.filter(workspace=workspace).update(available=1_000)

    # when it is reconciled
    ok, expected, actual = wallet_reconcile(workspace.pk)

    # then the difference shows
    assert not ok
    assert expected == {"available": 100, "held": 0} and actual == {"available": 1_000, "held": 0}


def test_it_reconciles_a_workspace_without_a_wallet(workspace):
    assert wallet_reconcile(workspace.pk) == (True, {"available": 0, "held": 0}, {"available": 0, "held": 0})


def test_it_keeps_ledger_entries_immutable(workspace, fund):
    # given a ledger entry
    fund(100)
    entry = LedgerEntry.objects.get()

    # when someone edits and saves it
    entry.delta_available = 1_000_000

    # then it is refused
    with pytest.raises(ValueError, match="immutable"):
        entry.save()


def test_it_lets_the_database_refuse_a_negative_balance(workspace, fund):
    # given 100 credits
    fund(100)

    # when a write bypasses the services and drives the balance below zero
    with pytest.raises(IntegrityError), transaction.atomic():
        Wallet.objects.filter(workspace=workspace).update(available=-1)

    # then the database refused it
    assert wallet_get(workspace_id=workspace.pk).available == 100


def test_it_deletes_a_workspaces_billing_with_the_workspace(workspace, alice, bob, access_of, fund, place):
    # given a workspace with a wallet, ledger, quote, approvals and orders
    fund(500)
    quote = quote_create(workspace_id=workspace.pk, operation="image.generate", task_id=7)
    approval_grant(access=access_of(bob), quote_id=quote.pk)
    place("1:0:0", quote_id=quote.pk)
    approval_grant(access=access_of(bob), task_id=8, budget=100)
    place("2:0:0", task_id=8, target={"task": 8})

    # when its owner deletes it
    workspace_delete(access=access_of(alice))

    # then its billing records go with it (the ledger's protection of orders does not block that)
    for model in (Wallet, LedgerEntry, Order, Quote, Approval):
        assert not model.objects.exists(), model
