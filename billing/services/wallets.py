"""Wallets: locking, moving money through the ledger, top-ups, reconciliation."""

from typing import NamedTuple

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import connection, transaction
from django.db.models import Sum
from django.db.models.functions import Coalesce
from django.utils.translation import gettext_noop

from billing.locks import wallet_qs_for_update
from billing.models import LedgerEntry, LedgerKind, Order, Wallet
from billing.services.validation import check_credits, check_text
from lomote.kernel.exceptions import NotFound
from workspace.locks import workspace_qs_for_update
from workspace.models import Role, Workspace
from workspace.selectors import Access
from workspace.services.events import event_append


def do_workspace_lock(workspace_id: int) -> None:
    """Lock the workspace row: the first lock of every billing write (see billing/locks.py)."""
    if not workspace_qs_for_update().filter(pk=workspace_id).values_list("pk", flat=True):
        raise NotFound(gettext_noop("Workspace not found."))


def do_wallet_lock(workspace_id: int) -> Wallet:
    """Lock the workspace row, then its wallet (created on first use), and return the locked wallet.

    Must run inside a transaction. The workspace row comes first because `event_append` locks it too, and
    a job transition that settles an order already holds it when billing runs: taking the wallet first
    would let an order placement and a settlement deadlock.
    """
    if connection.vendor == "postgresql":
        wallet = _both_locked(workspace_id)
    else:
        do_workspace_lock(workspace_id)
        wallet = wallet_qs_for_update().filter(workspace_id=workspace_id).first()
    if wallet is None:
        # Under the workspace lock nobody else can be creating this wallet; the new row is ours until commit.
        wallet = Wallet.objects.create(workspace_id=workspace_id)
    return wallet


def _both_locked(workspace_id: int) -> Wallet | None:
    """PostgreSQL: the workspace row, then its wallet, locked in one round trip (on a callback's and a paid
    step's path). The materialized CTE is scanned, and so locks the workspace, before the lateral subquery locks
    the wallet: the same order as the two statements. NotFound without a workspace; None without a wallet (the
    workspace is locked all the same)."""
    workspace_table = connection.ops.quote_name(Workspace._meta.db_table)
    wallet_table = connection.ops.quote_name(Wallet._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"WITH ws AS MATERIALIZED (SELECT id FROM {workspace_table} WHERE id = %s FOR NO KEY UPDATE) "  # noqa: S608 - names from model meta
            "SELECT ws.id, w.id, w.available, w.held, w.created_at, w.updated_at FROM ws LEFT JOIN LATERAL "
            f"(SELECT * FROM {wallet_table} WHERE workspace_id = ws.id FOR NO KEY UPDATE) w ON true",
            [workspace_id],
        )
        row = cursor.fetchone()
    if row is None:
        raise NotFound(gettext_noop("Workspace not found."))
    if row[1] is None:
        return None
    fields = ["id", "workspace_id", "available", "held", "created_at", "updated_at"]
    return Wallet.from_db(connection.alias, fields, [row[1], workspace_id, *row[2:]])


def do_ledger_append(
    wallet: Wallet,
    *,
    kind: str,
    delta_available: int = 0,
    delta_held: int = 0,
    order: Order | None = None,
    memo: str = "",
    created_by: AbstractBaseUser | None = None,
) -> LedgerEntry:
    """Move money: apply the deltas to the locked `wallet` and append the entry that explains them.

    The caller holds the wallet lock (`do_wallet_lock`) and its transaction; wallet and ledger commit
    together or not at all, which is what keeps `wallet_reconcile` true.
    """
    wallet.available += delta_available
    wallet.held += delta_held
    wallet.save(update_fields=["available", "held", "updated_at"])
    return LedgerEntry.objects.create(
        wallet=wallet,
        kind=kind,
        delta_available=delta_available,
        delta_held=delta_held,
        order=order,
        memo=memo[:300],
        created_by=created_by,
    )


@transaction.atomic
def wallet_topup(*, access: Access, amount: int, memo: str = "") -> Wallet:
    """Add credits to the workspace's wallet. Owners only (API keys are never owners)."""
    access.require(Role.OWNER)
    check_credits(amount, field="amount", maximum=settings.LOMOTE_TOPUP_MAX)
    memo = check_text(memo, field="memo", max_length=300, allow_blank=True)
    workspace_id = access.workspace.pk
    wallet = do_wallet_lock(workspace_id)
    entry = do_ledger_append(
        wallet, kind=LedgerKind.TOPUP, delta_available=amount, memo=memo or "top-up", created_by=access.user
    )
    event_append(
        workspace_id=workspace_id,
        kind="billing.topup",
        data={
            "entry": entry.pk,
            "amount": amount,
            "available": wallet.available,
            "held": wallet.held,
            "by": access.actor,
        },
    )
    return wallet


class Reconciliation(NamedTuple):
    ok: bool
    expected: dict[str, int]  # sums over the ledger
    actual: dict[str, int]  # the wallet's balances


def wallet_reconcile(workspace_id: int) -> Reconciliation:
    """Compare the wallet with the sum of its ledger. Unpacks as (ok, expected, actual).

    One SQL statement reads both, so a movement committing meanwhile cannot make them look different.
    """
    row = (
        Wallet.objects.filter(workspace_id=workspace_id)
        .annotate(
            ledger_available=Coalesce(Sum("entries__delta_available"), 0),
            ledger_held=Coalesce(Sum("entries__delta_held"), 0),
        )
        .values("available", "held", "ledger_available", "ledger_held")
        .first()
    )
    if row is None:  # no wallet yet, hence no ledger either (entries belong to a wallet)
        return Reconciliation(True, {"available": 0, "held": 0}, {"available": 0, "held": 0})
    expected = {"available": row["ledger_available"], "held": row["ledger_held"]}
    actual = {"available": row["available"], "held": row["held"]}
    return Reconciliation(expected == actual, expected, actual)
