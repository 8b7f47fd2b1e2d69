"""Billing in the admin: operators see every movement; money only moves through the services.

Balances, orders, the ledger, quotes and approvals are read-only here: a balance changed by hand would no
longer reconcile with the ledger, and spending authority must come from a person's action in the product.
Only the spend policy is editable.
"""

from django.contrib import admin

from billing.models import Approval, LedgerEntry, Order, Quote, SpendPolicy, Wallet


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class LedgerEntryInline(admin.TabularInline):
    model = LedgerEntry
    fields = ["id", "kind", "delta_available", "delta_held", "order", "memo", "created_by", "created_at"]
    readonly_fields = fields
    ordering = ["-id"]
    extra = 0
    max_num = 0
    show_change_link = True
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("order", "created_by")


@admin.register(Wallet)
class WalletAdmin(ReadOnlyAdmin):
    list_display = ["id", "workspace", "available", "held", "updated_at"]
    search_fields = ["workspace__name"]
    list_select_related = ["workspace"]
    inlines = [LedgerEntryInline]


@admin.register(LedgerEntry)
class LedgerEntryAdmin(ReadOnlyAdmin):
    """Append-only: visible to operators, never added, changed or deleted here."""

    list_display = [
        "id",
        "wallet",
        "kind",
        "delta_available",
        "delta_held",
        "order",
        "memo",
        "created_by",
        "created_at",
    ]
    list_filter = ["kind", "created_at"]
    search_fields = ["wallet__workspace__name", "memo", "order__idempotency_key"]
    list_select_related = ["wallet__workspace", "order", "created_by"]
    ordering = ["-id"]


@admin.register(Order)
class OrderAdmin(ReadOnlyAdmin):
    list_display = [
        "id",
        "workspace",
        "idempotency_key",
        "operation",
        "amount",
        "status",
        "authorisation",
        "task_id",
        "created_at",
        "settled_at",
    ]
    list_filter = ["status", "authorisation", "operation", "created_at"]
    search_fields = ["idempotency_key", "workspace__name"]
    list_select_related = ["workspace"]
    ordering = ["-id"]


@admin.register(Quote)
class QuoteAdmin(ReadOnlyAdmin):
    list_display = [
        "id",
        "workspace",
        "operation",
        "amount",
        "task_id",
        "scope",
        "created_by",
        "expires_at",
        "created_at",
    ]
    list_filter = ["operation", "created_at"]
    search_fields = ["workspace__name"]
    list_select_related = ["workspace", "created_by"]
    ordering = ["-id"]


@admin.register(Approval)
class ApprovalAdmin(ReadOnlyAdmin):
    list_display = [
        "id",
        "workspace",
        "kind",
        "quote",
        "task_id",
        "scope",
        "amount",
        "remaining",
        "approved_by",
        "consumed_at",
    ]
    list_filter = ["kind", ("consumed_at", admin.EmptyFieldListFilter), "created_at"]
    search_fields = ["workspace__name", "approved_by__username"]
    list_select_related = ["workspace", "approved_by"]
    ordering = ["-id"]


@admin.register(SpendPolicy)
class SpendPolicyAdmin(admin.ModelAdmin):
    list_display = ["id", "workspace", "no_confirm_threshold", "daily_no_confirm_cap", "updated_by", "updated_at"]
    search_fields = ["workspace__name"]
    list_select_related = ["workspace", "updated_by"]
    readonly_fields = ["updated_by", "updated_at"]
    autocomplete_fields = ["workspace"]

    def save_model(self, request, obj, form, change):
        obj.updated_by = request.user
        super().save_model(request, obj, form, change)
