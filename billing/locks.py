"""Row locks for the billing app, always taken in primary-key order to avoid deadlocks.

Lock order across apps: the workspace row first (event_append takes it anyway, and the job transition that
settles an order holds it already), then the wallet, then orders and approvals.

FOR NO KEY UPDATE, never FOR UPDATE: see agents/locks.py (a FOR UPDATE lock blocks other transactions'
foreign-key checks at COMMIT and deadlocks them).
"""

from billing.models import Approval, Order, SpendPolicy, Wallet


def wallet_qs_for_update():
    return Wallet.objects.order_by("pk").select_for_update(of=("self",), no_key=True)


def order_qs_for_update():
    return Order.objects.order_by("pk").select_for_update(of=("self",), no_key=True)


def approval_qs_for_update():
    return Approval.objects.order_by("pk").select_for_update(of=("self",), no_key=True)


def spend_policy_qs_for_update():
    return SpendPolicy.objects.order_by("pk").select_for_update(of=("self",), no_key=True)
