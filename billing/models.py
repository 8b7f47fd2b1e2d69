"""Billing (DESIGN §6): wallets, an append-only ledger, quotes, approvals, orders and spend policies.

Money is integer credits, never floats. A wallet's `available` and `held` change only in the transaction
that appends the ledger entry explaining the change, so the wallet is always the sum of its ledger
(`billing.services.wallets.wallet_reconcile`). Task ids are plain integers: billing never imports agents.
"""

import hashlib
import json

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from billing.scopes import MAX_SCOPE_LENGTH
from workspace.models import Workspace

SCOPE_HELP = (
    "The task's scope (its goal revision) when this was made, or empty for none: spending authority counts "
    "only while it is the task's current scope (billing/scopes.py)."
)


class Wallet(models.Model):
    """One per workspace, created on its first top-up or order."""

    workspace = models.OneToOneField(Workspace, on_delete=models.CASCADE, related_name="wallet")
    available = models.BigIntegerField(default=0)
    held = models.BigIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(condition=Q(available__gte=0), name="wallet_available_not_negative"),
            models.CheckConstraint(condition=Q(held__gte=0), name="wallet_held_not_negative"),
        ]

    def __str__(self) -> str:
        return f"wallet of {self.workspace_id}: {self.available} available, {self.held} held"


class LedgerKind(models.TextChoices):
    TOPUP = "topup", "Top-up"
    HOLD = "hold", "Hold"
    CAPTURE = "capture", "Capture"
    RELEASE = "release", "Release"
    REFUND = "refund", "Refund"
    ADJUST = "adjust", "Adjustment"


class LedgerEntry(models.Model):
    """One money movement. Append-only: rows are never updated nor deleted by the application."""

    wallet = models.ForeignKey(Wallet, on_delete=models.CASCADE, related_name="entries")
    kind = models.CharField(max_length=16, choices=LedgerKind.choices)
    delta_available = models.BigIntegerField()
    delta_held = models.BigIntegerField()
    # RESTRICT, not PROTECT: an order with ledger entries cannot be deleted alone, but deleting the workspace
    # (which cascades to both) still works.
    order = models.ForeignKey("billing.Order", null=True, blank=True, on_delete=models.RESTRICT, related_name="entries")
    memo = models.CharField(max_length=300, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]
        verbose_name_plural = "ledger entries"
        indexes = [models.Index(fields=["wallet", "-id"], name="ledger_wallet_newest")]
        constraints = [
            # The database's own guarantee that an order is held, captured, released or refunded once.
            models.UniqueConstraint(
                fields=["order", "kind"], condition=Q(order__isnull=False), name="ledger_one_entry_per_order_kind"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.delta_available:+}/{self.delta_held:+} (wallet {self.wallet_id})"

    def save(self, *args, **kwargs):
        if self.pk is not None and not kwargs.get("force_insert"):
            raise ValueError("A ledger entry is immutable once written.")
        super().save(*args, **kwargs)


class OrderStatus(models.TextChoices):
    HELD = "held", "Held"
    CAPTURED = "captured", "Captured"
    RELEASED = "released", "Released"
    REFUNDED = "refunded", "Refunded"


class Authorisation(models.TextChoices):
    """What allowed an order: a person's approval (of its quote or of the task's budget), or the policy."""

    QUOTE = "quote", "Approved quote"
    BUDGET = "budget", "Approved budget"
    AUTO = "auto", "Under the no-confirmation limits"


def order_fingerprint(*, operation: str, target: dict, amount: int) -> str:
    """What a repeated request must match to be the same request (DESIGN §14)."""
    canonical = json.dumps(
        {"amount": amount, "operation": operation, "target": target}, sort_keys=True, separators=(",", ":")
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


class Order(models.Model):
    """A paid operation: held at submission, then captured on success or released on failure.

    Unique per (workspace, idempotency key): the key of a paid tool call is `turn:step:call`, so an old and
    a new worker submitting the same call meet on one order and one hold.
    """

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="orders")
    idempotency_key = models.CharField(max_length=200)
    fingerprint = models.CharField(max_length=64)
    operation = models.CharField(max_length=64)
    target = models.JSONField(default=dict, blank=True)
    amount = models.BigIntegerField()
    status = models.CharField(max_length=16, choices=OrderStatus.choices, default=OrderStatus.HELD)
    authorisation = models.CharField(max_length=16, choices=Authorisation.choices)
    task_id = models.PositiveBigIntegerField(null=True, blank=True)
    approval = models.ForeignKey(
        "billing.Approval", null=True, blank=True, on_delete=models.RESTRICT, related_name="orders"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    settled_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.UniqueConstraint(fields=["workspace", "idempotency_key"], name="order_unique_idempotency_key"),
            models.CheckConstraint(condition=Q(amount__gt=0), name="order_amount_positive"),
        ]
        indexes = [models.Index(fields=["workspace", "authorisation", "created_at"], name="order_ws_auth_day")]

    def __str__(self) -> str:
        return f"order {self.idempotency_key} · {self.operation} · {self.amount} · {self.status}"


class Quote(models.Model):
    """A priced operation, shown to a person before anything is spent."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="quotes")
    operation = models.CharField(max_length=64)
    params = models.JSONField(default=dict, blank=True)
    amount = models.BigIntegerField()
    expires_at = models.DateTimeField()
    task_id = models.PositiveBigIntegerField(null=True, blank=True)
    scope = models.CharField(max_length=MAX_SCOPE_LENGTH, blank=True, default="", help_text=SCOPE_HELP)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]
        constraints = [models.CheckConstraint(condition=Q(amount__gt=0), name="quote_amount_positive")]

    def __str__(self) -> str:
        return f"quote #{self.pk} {self.operation} · {self.amount}"


class ApprovalKind(models.TextChoices):
    QUOTE = "quote", "One quoted operation"
    BUDGET = "budget", "A task's budget"


class Approval(models.Model):
    """A person's recorded decision to allow spending (DESIGN §5): the only source of spending authority.

    A quote approval allows the one order that names its quote; a budget approval allows a task's orders
    up to `amount` in total (`remaining` goes down with each hold and back up when a hold is released).
    Either only while `scope` is unscoped or still the task's current scope: a changed goal asks again.
    """

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="approvals")
    kind = models.CharField(max_length=16, choices=ApprovalKind.choices)
    quote = models.ForeignKey(Quote, null=True, blank=True, on_delete=models.RESTRICT, related_name="approvals")
    task_id = models.PositiveBigIntegerField(null=True, blank=True)
    scope = models.CharField(max_length=MAX_SCOPE_LENGTH, blank=True, default="", help_text=SCOPE_HELP)
    amount = models.BigIntegerField(help_text="The approved ceiling, in credits.")
    remaining = models.BigIntegerField()
    approved_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    consumed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.CheckConstraint(condition=Q(amount__gt=0), name="approval_amount_positive"),
            models.CheckConstraint(
                condition=Q(remaining__gte=0, remaining__lte=F("amount")), name="approval_remaining_in_range"
            ),
            models.CheckConstraint(
                condition=(Q(kind=ApprovalKind.QUOTE, quote__isnull=False))
                | Q(kind=ApprovalKind.BUDGET, quote__isnull=True, task_id__isnull=False),
                name="approval_kind_shape",
            ),
            models.UniqueConstraint(fields=["quote"], condition=Q(quote__isnull=False), name="approval_one_per_quote"),
        ]
        indexes = [models.Index(fields=["workspace", "task_id"], name="approval_ws_task")]

    def __str__(self) -> str:
        return f"approval #{self.pk} {self.kind} · {self.remaining}/{self.amount}"

    @property
    def is_open(self) -> bool:
        return self.consumed_at is None and self.remaining > 0


class SpendPolicy(models.Model):
    """How much may be spent without asking a person: per request, and per day in total."""

    workspace = models.OneToOneField(Workspace, on_delete=models.CASCADE, related_name="spend_policy")
    no_confirm_threshold = models.BigIntegerField(help_text="Largest single order placed without confirmation.")
    daily_no_confirm_cap = models.BigIntegerField(help_text="Total per day of orders placed without confirmation.")
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "spend policies"
        constraints = [
            models.CheckConstraint(condition=Q(no_confirm_threshold__gte=0), name="policy_threshold_not_negative"),
            models.CheckConstraint(condition=Q(daily_no_confirm_cap__gte=0), name="policy_cap_not_negative"),
        ]

    def __str__(self) -> str:
        return f"policy of {self.workspace_id}: ≤{self.no_confirm_threshold} each, ≤{self.daily_no_confirm_cap}/day"

    @classmethod
    def defaults_for(cls, workspace_id: int) -> "SpendPolicy":
        """The policy a workspace has before an owner changes it (unsaved)."""
        return cls(
            workspace_id=workspace_id,
            no_confirm_threshold=settings.LOMOTE_NO_CONFIRM_THRESHOLD,
            daily_no_confirm_cap=settings.LOMOTE_DAILY_NO_CONFIRM_CAP,
        )
