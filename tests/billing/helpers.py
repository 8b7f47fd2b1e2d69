"""Billing test helpers: a snapshot of every money fact, and a thread race on separate connections."""

import threading

from django.db import connections

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


def race(calls, *, timeout: float = 60) -> list:
    """Run each call in its own thread (hence its own database connection), released together.

    Returns each call's result or the exception it raised, in order. Each thread closes its connections,
    so the test database can be dropped afterwards.
    """
    gate = threading.Barrier(len(calls), timeout=timeout)
    results: list = [None] * len(calls)

    def run(index, call):
        try:
            gate.wait()
            results[index] = call()
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            results[index] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i, call)) for i, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=timeout)
    assert not any(thread.is_alive() for thread in threads), "a racing call never finished"
    return results
