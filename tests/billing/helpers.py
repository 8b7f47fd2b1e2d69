"""Billing test helpers: a snapshot of every money fact (the thread race is tests.support.race)."""

from billing.models import Approval, LedgerEntry, Order, Quote, SpendPolicy, Wallet
from workspace.models import Event


def money() -> dict[str, list[tuple]]:
    """Every persisted billing fact, plus the billing events: what a refused request must leave alone."""
    return {
        "wallets": list(Wallet.objects.order_by("pk").values_list("pk", "workspace_id", "available", "held")),
        "ledger": list(LedgerEntry.objects.order_by("pk").values_list("pk", "kind", "delta_available", "delta_held")),
        "orders": list(Order.objects.order_by("pk").values_list("pk", "idempotency_key", "status", "amount")),
        "approvals": list(Approval.objects.order_by("pk").values_list("pk", "remaining", "consumed_at")),
        "quotes": list(Quote.objects.order_by("pk").values_list("pk", "amount")),
        "policies": list(SpendPolicy.objects.order_by("pk").values_list("pk", "no_confirm_threshold")),
        "events": list(Event.objects.filter(kind__startswith="billing.").order_by("pk").values_list("pk", "kind")),
    }
