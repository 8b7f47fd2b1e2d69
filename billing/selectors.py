"""Reads for the billing app. Nothing here writes: a workspace without a wallet or policy reads as defaults."""

from datetime import datetime

from django.db.models import Case, Exists, OuterRef, Q, QuerySet, Sum, Value, When
from django.utils import timezone
from django.utils.translation import gettext_noop

from billing.models import (
    Approval,
    ApprovalKind,
    Authorisation,
    LedgerEntry,
    Order,
    OrderStatus,
    Quote,
    SpendPolicy,
    Wallet,
)
from billing.scopes import in_scope, task_scope
from lomote.kernel.exceptions import NotFound

# Orders whose money is reserved or spent; released and refunded ones gave it back.
SPENDING_STATUSES = (OrderStatus.HELD, OrderStatus.CAPTURED)


def day_start(now: datetime | None = None) -> datetime:
    """Midnight of the current day in the project's time zone: when daily caps start over."""
    return timezone.localtime(now).replace(hour=0, minute=0, second=0, microsecond=0)


def wallet_get(*, workspace_id: int) -> Wallet:
    """The workspace's wallet, or an unsaved empty one (wallets are created on first use)."""
    return Wallet.objects.filter(workspace_id=workspace_id).first() or Wallet(workspace_id=workspace_id)


def spend_policy_get(*, workspace_id: int) -> SpendPolicy:
    """The workspace's policy, or the settings' defaults (unsaved) until an owner changes it."""
    policy = SpendPolicy.objects.filter(workspace_id=workspace_id).first()
    return policy or SpendPolicy.defaults_for(workspace_id)


def spent_today(*, workspace_id: int, auto_only: bool = False) -> int:
    """Credits held or captured by orders placed today (only those placed without confirmation if asked)."""
    orders = Order.objects.filter(workspace_id=workspace_id, created_at__gte=day_start(), status__in=SPENDING_STATUSES)
    if auto_only:
        orders = orders.filter(authorisation=Authorisation.AUTO)
    return orders.aggregate(total=Sum("amount"))["total"] or 0


def balance_get(*, workspace_id: int) -> dict:
    wallet = wallet_get(workspace_id=workspace_id)
    return {
        "available": wallet.available,
        "held": wallet.held,
        "spent_today": spent_today(workspace_id=workspace_id),
        "auto_spent_today": spent_today(workspace_id=workspace_id, auto_only=True),
        "policy": spend_policy_get(workspace_id=workspace_id),
    }


def ledger_list(*, workspace_id: int) -> QuerySet[LedgerEntry]:
    """The workspace's ledger, newest first."""
    return (
        LedgerEntry.objects.filter(wallet__workspace_id=workspace_id)
        .select_related("order__approval__approved_by", "created_by")
        .order_by("-id")
    )


def order_find(*, workspace_id: int, idempotency_key: str) -> Order | None:
    return Order.objects.filter(workspace_id=workspace_id, idempotency_key=idempotency_key).first()


def order_get(*, workspace_id: int, idempotency_key: str) -> Order:
    order = order_find(workspace_id=workspace_id, idempotency_key=idempotency_key)
    if order is None:
        raise NotFound(gettext_noop("Order not found."), code="order_not_found")
    return order


def order_list(*, workspace_id: int, task_id: int | None = None, status: str | None = None) -> QuerySet[Order]:
    """The workspace's orders, newest first; optionally one task's, or those in one status (`held`: the holds)."""
    orders = Order.objects.filter(workspace_id=workspace_id).order_by("-id")
    if status is not None:
        orders = orders.filter(status=status)
    return orders if task_id is None else orders.filter(task_id=task_id)


# Where a quote stands: `approved` once a person approved it, else `expired` past its expiry, else `open`.
QUOTE_STATUSES = ("open", "approved", "expired")


def quote_list(*, workspace_id: int, status: str | None = None) -> QuerySet[Quote]:
    """The workspace's quotes, newest first, each annotated with its `status`; optionally only those in one."""
    now = timezone.now()
    quotes = (
        Quote.objects.filter(workspace_id=workspace_id)
        .annotate(approved=Exists(Approval.objects.filter(quote=OuterRef("pk"))))
        .annotate(
            status=Case(
                When(approved=True, then=Value("approved")),
                When(expires_at__lte=now, then=Value("expired")),
                default=Value("open"),
            )
        )
        .order_by("-id")
    )
    return quotes if status is None else quotes.filter(status=status)


def quote_get(*, workspace_id: int, quote_id: int) -> Quote:
    """A quote of this workspace; another workspace's quote is NotFound, like a missing one."""
    quote = quote_list(workspace_id=workspace_id).filter(pk=quote_id).first()
    if quote is None:
        raise NotFound(gettext_noop("Quote not found."), code="quote_not_found")
    return quote


def approval_list(*, workspace_id: int, task_id: int | None = None) -> QuerySet[Approval]:
    approvals = Approval.objects.filter(workspace_id=workspace_id).select_related("approved_by").order_by("-id")
    return approvals if task_id is None else approvals.filter(task_id=task_id)


def approvals_granted_since(*, workspace_id, task_id, since) -> QuerySet[Approval]:
    """Approvals for a task recorded at or after `since` (values or OuterRef expressions, for subqueries).

    Regardless of scope, on purpose: it finds tasks to wake (for many tasks at once, where no per-task scope
    can be resolved), and waking is harmless — the woken task's order goes through order_place, which counts
    only approvals of the task's current scope and asks again otherwise.
    """
    return Approval.objects.filter(workspace_id=workspace_id, task_id=task_id, created_at__gte=since)


def budget_remaining(*, workspace_id: int, task_id: int) -> int | None:
    """What a task may still spend under its approved budgets; None when no budget was approved for the
    task's current scope (one approved for an earlier goal no longer counts)."""
    budgets = Approval.objects.filter(
        workspace_id=workspace_id,
        kind=ApprovalKind.BUDGET,
        task_id=task_id,
        scope__in=in_scope(task_scope(task_id, workspace_id=workspace_id)),
    )
    if not budgets.exists():
        return None
    return budgets.filter(consumed_at__isnull=True).aggregate(total=Sum("remaining"))["total"] or 0


def task_spending(*, workspace_id: int, task_id: int) -> dict[str, int | None]:
    """What a task has spent (captured), holds (reserved for work under way) and may still spend (None: no
    approved budget, so each paid step is asked for or allowed by the policy), in one query for the orders."""
    totals = Order.objects.filter(workspace_id=workspace_id, task_id=task_id).aggregate(
        spent=Sum("amount", filter=Q(status=OrderStatus.CAPTURED)),
        held=Sum("amount", filter=Q(status=OrderStatus.HELD)),
    )
    return {
        "spent": totals["spent"] or 0,
        "held": totals["held"] or 0,
        "remaining": budget_remaining(workspace_id=workspace_id, task_id=task_id),
    }


def quote_open_for(*, workspace_id: int, task_id: int, operation: str, amount: int) -> Quote | None:
    """An unexpired, not yet approved quote of the task for the same operation and amount (to reuse it),
    made under the task's current scope: a quote for an earlier goal is not shown to a person again."""
    return (
        Quote.objects.filter(
            workspace_id=workspace_id,
            task_id=task_id,
            scope__in=in_scope(task_scope(task_id, workspace_id=workspace_id)),
            operation=operation,
            amount=amount,
            expires_at__gt=timezone.now(),
            approvals__isnull=True,
        )
        .order_by("-id")
        .first()
    )


def quote_approved_for(*, workspace_id: int, task_id: int, operation: str, amount: int) -> Quote | None:
    """The oldest quote of the task for `operation` whose approval is unused and covers `amount`, among those
    of the task's current scope (order_place refuses a quote of an earlier one)."""
    scopes = in_scope(task_scope(task_id, workspace_id=workspace_id))
    return (
        Quote.objects.filter(
            workspace_id=workspace_id,
            task_id=task_id,
            operation=operation,
            scope__in=scopes,
            approvals__scope__in=scopes,
            approvals__kind=ApprovalKind.QUOTE,
            approvals__consumed_at__isnull=True,
            approvals__remaining__gte=amount,
        )
        .order_by("id")
        .first()
    )
