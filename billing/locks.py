"""Row locks for the billing app, always taken in primary-key order to avoid deadlocks.

Lock order across apps: the workspace row first (event_append takes it anyway, and the job transition that
settles an order holds it already), then the wallet, then orders and approvals.
"""

from billing.models import Approval, Order, SpendPolicy, Wallet


def wallet_qs_for_update():
    return Wallet.objects.order_by("pk").select_for_update(of=("self",))


def order_qs_for_update():
    return Order.objects.order_by("pk").select_for_update(of=("self",))


def approval_qs_for_update():
    return Approval.objects.order_by("pk").select_for_update(of=("self",))


def spend_policy_qs_for_update():
    return SpendPolicy.objects.order_by("pk").select_for_update(of=("self",))
