from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from billing.models import Approval, LedgerEntry, Order, OrderStatus, Quote, SpendPolicy
from billing.selectors import QUOTE_STATUSES
from billing.services.pricing import MAX_ORDER_AMOUNT, OPERATIONS
from billing.services.validation import MAX_ID
from lomote.kernel.serializers import StrictSerializer

# --- output -----------------------------------------------------------------------------------------------


class PolicyOut(serializers.ModelSerializer):
    is_default = serializers.SerializerMethodField(help_text="True until an owner changes the policy.")
    updated_at = serializers.DateTimeField(
        read_only=True, allow_null=True, help_text="When an owner last changed it; null while it is the default."
    )

    class Meta:
        model = SpendPolicy
        fields = ["no_confirm_threshold", "daily_no_confirm_cap", "is_default", "updated_at"]

    def get_is_default(self, policy) -> bool:
        return policy.pk is None


class BalanceOut(serializers.Serializer):
    available = serializers.IntegerField(help_text="Credits that can be spent now.")
    held = serializers.IntegerField(help_text="Credits reserved by orders still running.")
    spent_today = serializers.IntegerField(help_text="Credits held or captured by orders placed today.")
    auto_spent_today = serializers.IntegerField(
        help_text="Of which placed without confirmation (counts against the daily cap)."
    )
    policy = PolicyOut()


class LedgerEntryOut(serializers.ModelSerializer):
    order = serializers.SerializerMethodField()
    created_by = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)

    class Meta:
        model = LedgerEntry
        fields = ["id", "kind", "delta_available", "delta_held", "order", "memo", "created_by", "created_at"]

    def get_order(self, entry) -> dict | None:
        if entry.order is None:
            return None
        order = entry.order
        approval = order.approval
        return {
            "id": order.pk,
            "idempotency_key": order.idempotency_key,
            "operation": order.operation,
            "status": order.status,
            "task": order.task_id,
            # What allowed the spending: a person's approval (who), or the no-confirmation limits.
            "authorisation": order.authorisation,
            "approved_by": approval.approved_by.username if approval is not None else None,
        }


SCOPE_OUT_HELP = (
    "The task's scope (its goal revision) this was made for; empty for none. It authorises spending only "
    "while this is still the task's current scope: a changed goal asks again."
)


class QuoteOut(serializers.ModelSerializer):
    task = serializers.IntegerField(source="task_id", allow_null=True)
    scope = serializers.CharField(read_only=True, help_text=SCOPE_OUT_HELP)
    status = serializers.SerializerMethodField(
        help_text="`open` (can be approved), `approved` (a person approved it) or `expired` (ask for a new one)."
    )

    class Meta:
        model = Quote
        fields = ["id", "operation", "params", "amount", "task", "scope", "status", "expires_at", "created_at"]

    @extend_schema_field(serializers.ChoiceField(choices=QUOTE_STATUSES))
    def get_status(self, quote) -> str:
        # Listed quotes carry the annotation (selectors.quote_list); a quote just created is open.
        return getattr(quote, "status", "open")


class OrderOut(serializers.ModelSerializer):
    task = serializers.IntegerField(source="task_id", allow_null=True)

    class Meta:
        model = Order
        fields = [
            "id",
            "idempotency_key",
            "operation",
            "amount",
            "status",
            "authorisation",
            "task",
            "created_at",
            "settled_at",
        ]


class ApprovalOut(serializers.ModelSerializer):
    quote = serializers.PrimaryKeyRelatedField(read_only=True, allow_null=True)
    task = serializers.IntegerField(source="task_id", allow_null=True)
    approved_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    scope = serializers.CharField(read_only=True, help_text=SCOPE_OUT_HELP)

    class Meta:
        model = Approval
        fields = [
            "id",
            "kind",
            "quote",
            "task",
            "scope",
            "amount",
            "remaining",
            "approved_by",
            "created_at",
            "consumed_at",
        ]


# --- input ------------------------------------------------------------------------------------------------


class QuoteIn(StrictSerializer):
    operation = serializers.ChoiceField(choices=OPERATIONS)
    params = serializers.DictField(
        required=False, default=dict, help_text="Operation parameters: `count` images, video `seconds`, prompt..."
    )
    task = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        max_value=MAX_ID,
        help_text="The task it is for: one of this workspace (another workspace's, or none: 404).",
    )


class ApprovalIn(StrictSerializer):
    quote = serializers.IntegerField(required=False, min_value=1, max_value=MAX_ID, help_text="Approve this quote.")
    task = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_ID,
        help_text="With `budget`: the task it is for, one of this workspace (another workspace's, or none: 404).",
    )
    budget = serializers.IntegerField(
        required=False, min_value=1, max_value=MAX_ORDER_AMOUNT, help_text="With `task`: the ceiling, in credits."
    )

    def validate(self, attrs):
        has_quote = "quote" in attrs
        has_budget = "task" in attrs or "budget" in attrs
        if has_quote == has_budget:
            raise serializers.ValidationError("Send either `quote`, or `task` and `budget`.")
        if has_budget and not ("task" in attrs and "budget" in attrs):
            raise serializers.ValidationError("A budget needs both `task` and `budget`.")
        return attrs


class TopupIn(StrictSerializer):
    amount = serializers.IntegerField(min_value=1, help_text="Credits to add (at most LOMOTE_TOPUP_MAX).")
    memo = serializers.CharField(required=False, allow_blank=True, max_length=300, default="")


class PolicyIn(StrictSerializer):
    no_confirm_threshold = serializers.IntegerField(required=False, min_value=0, max_value=MAX_ORDER_AMOUNT)
    daily_no_confirm_cap = serializers.IntegerField(required=False, min_value=0, max_value=MAX_ORDER_AMOUNT)

    def validate(self, attrs):
        if not attrs:
            raise serializers.ValidationError("Change at least one of the limits.")
        return attrs


class ApprovalQueryIn(serializers.Serializer):
    task = serializers.IntegerField(required=False, min_value=1, max_value=MAX_ID)


class QuoteQueryIn(serializers.Serializer):
    status = serializers.ChoiceField(choices=QUOTE_STATUSES, required=False)


class OrderQueryIn(serializers.Serializer):
    status = serializers.ChoiceField(choices=OrderStatus.choices, required=False)
    task = serializers.IntegerField(required=False, min_value=1, max_value=MAX_ID)
