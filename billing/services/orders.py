"""Orders: hold at submission, capture on success, release on failure — each exactly once (DESIGN §4, §6).

Allowed moves (billing/transitions.py): (none) → held → captured → refunded, and held → released. Every move
is a conditional update on the current status plus one ledger entry and one workspace event, in one
transaction.

Locks, always in this order: the workspace row, the wallet, then approvals (billing/locks.py). All writes
for one workspace's money therefore run one at a time, which is what makes the caps and budgets hold
under concurrency: the checks read state no one else can change until this transaction ends.
"""

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone
from django.utils.translation import gettext_noop

from billing.exceptions import ConfirmationRequired
from billing.locks import approval_qs_for_update
from billing.models import (
    Approval,
    ApprovalKind,
    Authorisation,
    LedgerKind,
    Order,
    OrderStatus,
    Quote,
    Wallet,
    order_fingerprint,
)
from billing.scopes import in_scope, task_scope
from billing.selectors import order_find, quote_get, spend_policy_get, spent_today
from billing.services.pricing import COMPOSITE, MAX_COMPOSITE_ITEMS, MAX_ORDER_AMOUNT, PRICES
from billing.services.validation import check_credits, check_id, check_json_object, check_text
from billing.services.wallets import do_ledger_append, do_wallet_lock
from billing.transitions import order_sources
from lomote.kernel.exceptions import Conflict, InvalidInput, NotFound, PaymentRequired
from workspace.flows.runner import flow_node_keys_to_submit
from workspace.models import GenerationJob
from workspace.services.events import event_append

MAX_TARGET_BYTES = 4 * 1024


def _same_request(order: Order, fingerprint: str) -> Order:
    """The existing order for a repeated key, or 409 when the repeat asks for something else."""
    if order.fingerprint != fingerprint:
        raise Conflict(
            "This idempotency key was already used for a different request.",
            code="idempotency_key_reuse",
            details={"order": order.pk, "idempotency_key": order.idempotency_key},
        )
    return order


def _check_quote(
    *, workspace_id: int, quote_id: int, operation: str, amount: int, task_id: int | None, scope: str
) -> Quote:
    """The quote the caller named, if it prices this order and was made under the task's current `scope`."""
    try:
        quote = quote_get(workspace_id=workspace_id, quote_id=quote_id)
    except NotFound:
        raise InvalidInput(
            "No such quote in this workspace.", code="quote_mismatch", details={"quote": quote_id}
        ) from None
    if quote.operation != operation or amount > quote.amount or (quote.task_id not in (None, task_id)):
        raise InvalidInput(
            "The order does not match its quote (operation, task, or an amount above the quoted one).",
            code="quote_mismatch",
            details={"quote": quote.pk, "quoted_amount": quote.amount, "quoted_operation": quote.operation},
        )
    if quote.scope not in in_scope(scope):
        # Named explicitly, an outdated quote is the caller's mistake to see, not a silent fresh confirmation
        # (which would point the person at this very quote again).
        raise Conflict(
            "This quote was made for an earlier version of the task's goal; ask for a new quote.",
            code="quote_out_of_scope",
            details={"quote": quote.pk, "task": task_id, "quote_scope": quote.scope, "current_scope": scope},
        )
    return quote


def _authorise(
    *,
    workspace_id: int,
    operation: str,
    amount: int,
    task_id: int | None,
    scope: str,
    quote: Quote | None,
    api_request: bool,
) -> tuple[str, Approval | None]:
    """Who allowed this order, decided before anything moves. Raises ConfirmationRequired if nobody did.

    One rule a person can predict (DESIGN §5): a cost within the workspace's no-confirmation limits (the
    per-request threshold and the daily cap) never asks, whether or not a budget was approved for its task; an
    approved task budget lets more through (what is left of it pays for an order even above the limits), it
    never lowers them. So, in order: (1) a person approved its quote; (2) a person approved a budget for its task
    that still covers it; (3) the policy lets it through unasked. Only a cost above both asks — and always one
    requested through the open API, which is confirmed one by one. The caller holds the wallet lock.

    The refusal names each limit that asked and by how much it is exceeded (`over_by`), so the card can say it.
    Only approvals made under the task's current `scope` (or unscoped ones) count: a budget approved for an
    earlier goal is as if it were never given (billing/scopes.py).
    """
    scopes = in_scope(scope)
    if quote is not None:
        approval = (
            approval_qs_for_update()
            .filter(
                workspace_id=workspace_id,
                kind=ApprovalKind.QUOTE,
                quote=quote,
                scope__in=scopes,
                consumed_at__isnull=True,
            )
            .first()
        )
        if approval is not None and approval.remaining >= amount:
            return Authorisation.QUOTE, approval

    budget_remaining = None
    if task_id is not None and not api_request:
        budgets = list(
            approval_qs_for_update().filter(
                workspace_id=workspace_id, kind=ApprovalKind.BUDGET, task_id=task_id, scope__in=scopes
            )
        )
        open_budgets = sorted((a for a in budgets if a.is_open), key=lambda a: a.pk)
        covering = next((a for a in open_budgets if a.remaining >= amount), None)
        if covering is not None:
            return Authorisation.BUDGET, covering
        if budgets:
            budget_remaining = sum(a.remaining for a in open_budgets)

    policy = spend_policy_get(workspace_id=workspace_id)
    auto_spent = spent_today(workspace_id=workspace_id, auto_only=True)
    over_by: dict[str, int] = {}
    if amount > policy.no_confirm_threshold:
        over_by["threshold"] = amount - policy.no_confirm_threshold
    if auto_spent + amount > policy.daily_no_confirm_cap:
        over_by["daily_cap"] = auto_spent + amount - policy.daily_no_confirm_cap
    if not over_by and not api_request:
        return Authorisation.AUTO, None
    if budget_remaining is not None:
        # Not a limit of its own: the task's budget would have let it through, had enough of it been left.
        over_by["budget"] = amount - budget_remaining
    reasons = (["api_request"] if api_request else []) + list(over_by)
    raise ConfirmationRequired(
        f"Approval needed before spending {amount} credits on {operation}.",
        details={
            "amount": amount,
            "operation": operation,
            "reasons": reasons,
            "over_by": over_by,
            "quote": quote.pk if quote is not None else None,
            "task": task_id,
            "no_confirm_threshold": policy.no_confirm_threshold,
            "daily_no_confirm_cap": policy.daily_no_confirm_cap,
            "auto_spent_today": auto_spent,
            "budget_remaining": budget_remaining,
        },
    )


def _consume(approval: Approval, amount: int) -> None:
    """Draw `amount` from the locked approval. A quote approval is used up by its one order."""
    approval.remaining -= amount
    if approval.kind == ApprovalKind.QUOTE or approval.remaining == 0:
        approval.consumed_at = timezone.now()
    approval.save(update_fields=["remaining", "consumed_at"])


def _event(order: Order, kind: str, wallet: Wallet, **extra: Any) -> None:
    event_append(
        workspace_id=order.workspace_id,
        kind=kind,
        data={
            "order": order.pk,
            "idempotency_key": order.idempotency_key,
            "operation": order.operation,
            "amount": order.amount,
            "task": order.task_id,
            "status": order.status,
            "available": wallet.available,
            "held": wallet.held,
            **extra,
        },
    )


@dataclass(frozen=True)
class OrderItem:
    """One paid operation of a request: its idempotency key, what it buys, and its price."""

    idempotency_key: str
    operation: str
    target: dict[str, Any]
    amount: int


@transaction.atomic
def order_place(
    *,
    workspace_id: int,
    idempotency_key: str,
    operation: str,
    target: dict[str, Any],
    amount: int,
    task_id: int | None = None,
    quote_id: int | None = None,
    api_request: bool = False,
) -> Order:
    """Hold `amount` credits for a paid operation, once per (workspace, idempotency key).

    A repeat with the same key and the same operation, target and amount returns the existing order with no
    second hold; the same key with anything different is 409 `idempotency_key_reuse`. Before anything moves:
    ConfirmationRequired (402 `confirmation_required`) unless a person's approval or the spend policy allows
    it, then PaymentRequired (402 `insufficient_balance`) unless the wallet covers it. Either error changes
    nothing. `quote_id` names the quote shown for this operation (its approval authorises the order; a quote
    made for an earlier scope of the task is 409 `quote_out_of_scope`);
    `api_request` marks operations requested through the open API, which always need a person's approval.
    """
    item = OrderItem(idempotency_key=idempotency_key, operation=operation, target=target, amount=amount)
    (order,) = _place(
        workspace_id=workspace_id,
        operation=operation,
        items=[item],
        task_id=task_id,
        quote_id=quote_id,
        api_request=api_request,
    )
    return order


@transaction.atomic
def orders_place(
    *,
    workspace_id: int,
    items: list[OrderItem],
    task_id: int | None = None,
    quote_id: int | None = None,
    api_request: bool = False,
) -> list[Order]:
    """Hold several paid operations requested as one (a Flow run's paid nodes), all or nothing.

    Authorised once for their total — by the approval of a `flow.run` quote, the task's budget, or the policy
    (the total within the per-request threshold and the daily cap) — and covered by the wallet as a whole;
    then one order and one hold per item, under its own key. A repeat with the same keys returns the
    existing orders; keys already used for anything else are 409 `idempotency_key_reuse`.
    """
    if not 0 < len(items) <= MAX_COMPOSITE_ITEMS:
        raise InvalidInput(f"A request holds 1 to {MAX_COMPOSITE_ITEMS} orders.")
    return _place(
        workspace_id=workspace_id,
        operation=COMPOSITE,
        items=items,
        task_id=task_id,
        quote_id=quote_id,
        api_request=api_request,
    )


def _checked(item: OrderItem) -> tuple[OrderItem, str]:
    if item.operation not in PRICES:
        message = f"Unknown operation {item.operation!r}."
        raise InvalidInput(message, details={"fields": {"operation": [message]}})
    checked = OrderItem(
        idempotency_key=check_text(item.idempotency_key, field="idempotency_key", max_length=200),
        operation=item.operation,
        target=check_json_object(item.target, field="target", max_bytes=MAX_TARGET_BYTES),
        amount=check_credits(item.amount, field="amount", maximum=MAX_ORDER_AMOUNT),
    )
    return checked, order_fingerprint(operation=checked.operation, target=checked.target, amount=checked.amount)


def _replayed(workspace_id: int, items: list[tuple[OrderItem, str]]) -> list[Order] | None:
    """The orders a repeated request already placed, or None if it is new. A partial match is a conflict."""
    keys = [item.idempotency_key for item, _ in items]
    found = {key: order for key in keys if (order := order_find(workspace_id=workspace_id, idempotency_key=key))}
    if not found:
        return None
    if len(found) != len(keys):
        raise Conflict(
            "Some of these idempotency keys were already used for a different request.",
            code="idempotency_key_reuse",
            details={"idempotency_keys": sorted(found)},
        )
    return [_same_request(found[item.idempotency_key], fingerprint) for item, fingerprint in items]


def _place(
    *,
    workspace_id: int,
    operation: str,
    items: list[OrderItem],
    task_id: int | None,
    quote_id: int | None,
    api_request: bool,
) -> list[Order]:
    checked = [_checked(item) for item in items]
    task_id = check_id(task_id, field="task")
    quote_id = check_id(quote_id, field="quote")

    # A replay (an old and a new worker submitting the same call) returns without taking any lock.
    existing = _replayed(workspace_id, checked)
    if existing is not None:
        return existing

    wallet = do_wallet_lock(workspace_id)
    # Read again under the lock: a racer with the same key may have committed while this one waited.
    existing = _replayed(workspace_id, checked)
    if existing is not None:
        return existing

    total = sum(item.amount for item, _ in checked)
    if total > MAX_ORDER_AMOUNT:
        raise InvalidInput(f"A request may hold at most {MAX_ORDER_AMOUNT} credits.")
    # Once per request: the resolver may read the task, and every check below must see the same answer.
    scope = task_scope(task_id, workspace_id=workspace_id)
    quote = None
    if quote_id is not None:
        quote = _check_quote(
            workspace_id=workspace_id,
            quote_id=quote_id,
            operation=operation,
            amount=total,
            task_id=task_id,
            scope=scope,
        )
    authorisation, approval = _authorise(
        workspace_id=workspace_id,
        operation=operation,
        amount=total,
        task_id=task_id,
        scope=scope,
        quote=quote,
        api_request=api_request,
    )
    if wallet.available < total:
        raise PaymentRequired(
            f"The balance ({wallet.available} credits) does not cover {total} credits.",
            code="insufficient_balance",
            details={"available": wallet.available, "required": total, "operation": operation},
        )

    orders = []
    for item, fingerprint in checked:
        try:
            # Savepoint: a duplicate key raises IntegrityError, which must not break the caller's transaction
            # (DESIGN §14). Only a writer that skipped the wallet lock can get here second.
            with transaction.atomic():
                order = Order.objects.create(
                    workspace_id=workspace_id,
                    idempotency_key=item.idempotency_key,
                    fingerprint=fingerprint,
                    operation=item.operation,
                    target=item.target,
                    amount=item.amount,
                    status=OrderStatus.HELD,
                    authorisation=authorisation,
                    task_id=task_id,
                    approval=approval,
                )
        except IntegrityError:
            found = order_find(workspace_id=workspace_id, idempotency_key=item.idempotency_key)
            if found is None or len(checked) > 1:
                raise
            return [_same_request(found, fingerprint)]
        orders.append(order)

    if approval is not None:
        _consume(approval, total)
    for order in orders:
        do_ledger_append(
            wallet,
            kind=LedgerKind.HOLD,
            delta_available=-order.amount,
            delta_held=order.amount,
            order=order,
            memo=f"hold for {order.operation}",
        )
        _event(order, "billing.hold", wallet, authorisation=authorisation, approval=order.approval_id)
    return orders


def _settle(
    *,
    workspace_id: int,
    idempotency_key: str,
    to: str,
    kind: str,
    delta_available: int,
    delta_held: int,
    event: str,
    reason: str = "",
    order: Order | None = None,
) -> Order:
    """Move an order to `to` exactly once, from where the move table allows; any other status is a no-op.
    `order`: the caller already read it (it is read again under the compare-and-set)."""
    order = order if order is not None else order_find(workspace_id=workspace_id, idempotency_key=idempotency_key)
    if order is None:
        raise NotFound(gettext_noop("Order not found."), code="order_not_found")
    sources = order_sources(to)
    if order.status not in sources:
        return order
    wallet = do_wallet_lock(workspace_id)
    # Compare-and-set: of two settlements racing for this order, one updates a row, the other none.
    settled_at = timezone.now()
    moved = Order.objects.filter(pk=order.pk, status__in=sources).update(status=to, settled_at=settled_at)
    if moved != 1:
        order.refresh_from_db()
        return order
    order.status, order.settled_at = to, settled_at  # what the update wrote: no need to read it back
    do_ledger_append(
        wallet,
        kind=kind,
        delta_available=delta_available * order.amount,
        delta_held=delta_held * order.amount,
        order=order,
        memo=(f"{kind}: {reason}" if reason else kind),
    )
    if to == OrderStatus.RELEASED and order.approval_id is not None:
        approval = approval_qs_for_update().get(pk=order.approval_id)
        if approval.kind == ApprovalKind.BUDGET:
            # Money given back returns to the task's budget; a quote approval stays used (one action).
            approval.remaining += order.amount
            approval.consumed_at = None
            approval.save(update_fields=["remaining", "consumed_at"])
    _event(order, event, wallet, **({"reason": reason} if reason else {}))
    return order


@transaction.atomic
def order_capture(*, workspace_id: int, idempotency_key: str, order: Order | None = None) -> Order:
    """Charge a held order (the operation succeeded). Once: a repeat, or an order not held, is a no-op.
    `order`: the order of that key, when the caller has just read it (not read a second time)."""
    return do_order_capture(workspace_id=workspace_id, idempotency_key=idempotency_key, order=order)


def do_order_capture(*, workspace_id: int, idempotency_key: str, order: Order | None = None) -> Order:
    """`order_capture` in the caller's transaction, without a savepoint of its own (a job report's: any error
    rolls the report back with it, so a savepoint would only cost two round trips on the callback's path)."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("do_order_capture must run inside the caller's transaction")
    return _settle(
        workspace_id=workspace_id,
        idempotency_key=idempotency_key,
        to=OrderStatus.CAPTURED,
        kind=LedgerKind.CAPTURE,
        delta_available=0,
        delta_held=-1,
        event="billing.capture",
        order=order,
    )


@transaction.atomic
def order_release(*, workspace_id: int, idempotency_key: str, reason: str, order: Order | None = None) -> Order:
    """Give a held order's credits back (failed, timed out, uncertain). Once, like capture."""
    return do_order_release(workspace_id=workspace_id, idempotency_key=idempotency_key, reason=reason, order=order)


def do_order_release(*, workspace_id: int, idempotency_key: str, reason: str, order: Order | None = None) -> Order:
    """`order_release` in the caller's transaction, without a savepoint of its own (like `do_order_capture`)."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("do_order_release must run inside the caller's transaction")
    return _settle(
        workspace_id=workspace_id,
        idempotency_key=idempotency_key,
        to=OrderStatus.RELEASED,
        kind=LedgerKind.RELEASE,
        delta_available=1,
        delta_held=-1,
        event="billing.release",
        reason=check_text(reason, field="reason", max_length=200),
        order=order,
    )


@transaction.atomic
def order_refund(*, workspace_id: int, idempotency_key: str, reason: str) -> Order:
    """Give a captured order's credits back (an operator's decision). Once; other statuses are a no-op."""
    return _settle(
        workspace_id=workspace_id,
        idempotency_key=idempotency_key,
        to=OrderStatus.REFUNDED,
        kind=LedgerKind.REFUND,
        delta_available=1,
        delta_held=0,
        event="billing.refund",
        reason=check_text(reason, field="reason", max_length=200),
    )


def orders_release_orphaned(*, now: datetime | None = None) -> list[int]:
    """Release holds whose generation job never came to exist (the process died between hold and submit).

    A hold is placed before its job is submitted under the same key; a held order older than
    LOMOTE_ORPHAN_HOLD_SECONDS with no job of that key will never be settled by a job, so its money comes
    back by rule (DESIGN §4). Runs from the runtime watchdog; each release is conditional and exactly once.
    """
    now = now or timezone.now()
    before = now - timedelta(seconds=settings.LOMOTE_ORPHAN_HOLD_SECONDS)
    jobs = GenerationJob.objects.filter(
        workspace_id=OuterRef("workspace_id"), idempotency_key=OuterRef("idempotency_key")
    )
    orphans = (
        Order.objects.filter(status=OrderStatus.HELD, created_at__lt=before)
        .exclude(Exists(jobs))
        # A Flow run holds for all its paid nodes when it begins; a node still to run will submit its job.
        .exclude(idempotency_key__in=flow_node_keys_to_submit())
        .values_list("workspace_id", "idempotency_key", "pk")[:200]
    )
    released = []
    for workspace_id, key, pk in list(orphans):
        order = order_release(workspace_id=workspace_id, idempotency_key=key, reason="no_job_submitted")
        if order.status == OrderStatus.RELEASED:
            released.append(pk)
    return released
