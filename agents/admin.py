"""Operators' view of tasks and the runtime log.

The log (turns, steps, tool calls, model leases) is append-only: shown, never added or edited here. State
changes of tasks and inboxes go through the services, which lock, fence workers out and record events, so
those fields are read-only too. Provider secrets are never shown: not the value, not the ciphertext.
"""

from django import forms
from django.contrib import admin
from django.db import models

from agents.models import (
    AssistantPreset,
    AssistantPresetVersion,
    Card,
    ChecklistItem,
    InboxMessage,
    MainMessage,
    ModelLease,
    ModelProfile,
    ProviderSecret,
    Step,
    Task,
    ToolCall,
    Turn,
)
from agents.services.presets import preset_admin_save, preset_fields_check
from lomote.kernel.exceptions import InvalidInput


class ReadOnlyAdmin(admin.ModelAdmin):
    """For append-only rows: visible to operators, never added or edited through the admin."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class ChecklistItemInline(admin.TabularInline):
    model = ChecklistItem
    extra = 0
    fields = ["position", "title", "status", "needs_confirmation", "evidence", "updated_at"]
    readonly_fields = fields
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Task)
class TaskAdmin(admin.ModelAdmin):
    list_display = ["id", "title", "workspace", "kind", "status", "stop_reason", "language", "updated_at"]
    list_filter = ["status", "kind", "language", "updated_at"]
    search_fields = ["title", "brief", "summary", "workspace__name"]
    list_select_related = ["workspace"]
    raw_id_fields = ["workspace", "model_profile", "created_by"]
    # Status moves go through agents.services.tasks (locks, fencing, events); the admin only shows them.
    readonly_fields = [
        "status",
        "stop_reason",
        "waiting_for",
        "auto_turns",
        "autonomy",  # autonomy and permissions change through the settings service, which records the event
        "permissions",
        "goal_revision",
        "basis",  # what the work relies on; moved by turns and a person's review of a resume (DESIGN §11)
        "created_by",
        "created_at",
        "updated_at",
    ]
    inlines = [ChecklistItemInline]

    def has_add_permission(self, request):
        return False  # created through the services, which queue the first turn and record the event


@admin.register(ChecklistItem)
class ChecklistItemAdmin(admin.ModelAdmin):
    list_display = ["id", "task", "position", "title", "status", "needs_confirmation", "updated_at"]
    list_filter = ["status", "needs_confirmation"]
    search_fields = ["title", "evidence", "task__title"]
    list_select_related = ["task"]
    raw_id_fields = ["task"]


@admin.register(ProviderSecret)
class ProviderSecretAdmin(admin.ModelAdmin):
    """Name and owner only. The ciphertext is excluded from every page and never loaded."""

    list_display = ["id", "name", "workspace", "created_at"]
    list_filter = ["created_at"]
    search_fields = ["name", "workspace__name"]
    list_select_related = ["workspace"]
    fields = ["name", "workspace", "created_at"]
    exclude = ["ciphertext"]
    readonly_fields = ["workspace", "created_at"]

    def get_queryset(self, request):
        return super().get_queryset(request).defer("ciphertext")

    def has_add_permission(self, request):
        return False  # a secret is stored encrypted by the service; the admin cannot encrypt


@admin.register(ModelProfile)
class ModelProfileAdmin(admin.ModelAdmin):
    list_display = ["id", "name", "workspace", "provider", "model", "base_url", "is_default", "created_at"]
    list_filter = ["provider", "is_default"]
    search_fields = ["name", "model", "base_url", "workspace__name"]
    list_select_related = ["workspace"]
    raw_id_fields = ["workspace", "secret"]
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}


class AssistantPresetVersionInline(admin.TabularInline):
    model = AssistantPresetVersion
    extra = 0
    fields = ["number", "name", "instructions", "params", "model_profile", "created_by", "created_at"]
    readonly_fields = fields
    can_delete = False
    ordering = ["-number"]

    def has_add_permission(self, request, obj=None):
        return False


class AssistantPresetForm(forms.ModelForm):
    class Meta:
        model = AssistantPreset
        fields = ["workspace", "name", "instructions", "params", "model_profile"]

    def clean(self):
        cleaned = super().clean()
        workspace = cleaned.get("workspace") or getattr(self.instance, "workspace", None)
        if workspace is not None:
            values = {f: cleaned.get(f) for f in ("name", "instructions", "params") if f in cleaned}
            profile = cleaned.get("model_profile")
            values["model_profile_id"] = profile.pk if profile is not None else None
            try:
                preset_fields_check(workspace.pk, values)
            except InvalidInput as exc:  # the API's own rules, shown on the form instead of a server error
                raise forms.ValidationError(exc.message) from None
        return cleaned


@admin.register(AssistantPreset)
class AssistantPresetAdmin(admin.ModelAdmin):
    """Presets are edited like through the API: every change saved here is a new version (its inline)."""

    list_display = ["id", "name", "workspace", "version", "model_profile", "updated_at"]
    search_fields = ["name", "instructions", "workspace__name"]
    list_select_related = ["workspace", "model_profile"]
    raw_id_fields = ["workspace", "model_profile"]
    fields = ["workspace", "name", "instructions", "params", "model_profile", "version", "created_by", "updated_at"]
    readonly_fields = ["version", "created_by", "updated_at"]
    inlines = [AssistantPresetVersionInline]
    form = AssistantPresetForm

    def get_readonly_fields(self, request, obj=None):
        # A preset never moves to another workspace: its versions and the nodes naming it belong to this one.
        return [*self.readonly_fields, "workspace"] if obj is not None else self.readonly_fields

    def save_model(self, request, obj, form, change):
        preset_admin_save(preset=obj, user=request.user, created=not change)


class StepInline(admin.TabularInline):
    model = Step
    extra = 0
    fields = ["index", "generation", "model", "prompt_tokens", "cached_prompt_tokens", "completion_tokens"]
    readonly_fields = fields
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(Turn)
class TurnAdmin(ReadOnlyAdmin):
    list_display = [
        "id",
        "task",
        "number",
        "status",
        "trigger",
        "generation",
        "attempts",
        "lease_holder",
        "lease_expires_at",
        "created_at",
        "finished_at",
    ]
    list_filter = ["status", "trigger", "made_progress", "created_at"]
    search_fields = ["task__title", "lease_holder", "stop_reason"]
    list_select_related = ["task"]
    ordering = ["-id"]
    inlines = [StepInline]


@admin.register(ModelLease)
class ModelLeaseAdmin(ReadOnlyAdmin):
    list_display = ["id", "turn", "provider", "model", "base_url", "uses_secret", "created_at"]
    list_filter = ["provider", "model"]
    search_fields = ["model", "base_url", "turn__task__title"]
    list_select_related = ["turn"]
    fields = ["turn", "provider", "model", "base_url", "params", "uses_secret", "created_at"]
    readonly_fields = fields
    ordering = ["-id"]

    @admin.display(boolean=True, description="Secret")
    def uses_secret(self, lease):
        return lease.secret_id is not None


@admin.register(Step)
class StepAdmin(ReadOnlyAdmin):
    list_display = [
        "id",
        "turn",
        "index",
        "generation",
        "model",
        "prompt_tokens",
        "cached_prompt_tokens",
        "completion_tokens",
        "created_at",
    ]
    list_filter = ["model", "created_at"]
    search_fields = ["model", "text", "turn__task__title"]
    list_select_related = ["turn"]
    ordering = ["-id"]


@admin.register(ToolCall)
class ToolCallAdmin(ReadOnlyAdmin):
    list_display = ["id", "call_id", "step", "name", "status", "idempotent", "attempts", "started_at", "finished_at"]
    list_filter = ["status", "idempotent", "name"]
    search_fields = ["call_id", "provider_call_id", "name"]
    list_select_related = ["step"]
    ordering = ["-id"]


@admin.register(InboxMessage)
class InboxMessageAdmin(ReadOnlyAdmin):
    """Read-only: withdrawing or replacing goes through the inbox service, which checks it is still pending."""

    list_display = ["id", "task", "source", "status", "author", "consumed_by_step", "created_at", "consumed_at"]
    list_filter = ["status", "source", "created_at"]
    search_fields = ["text", "task__title", "author__username"]
    list_select_related = ["task", "author", "consumed_by_step"]
    ordering = ["-id"]


@admin.register(Card)
class CardAdmin(ReadOnlyAdmin):
    """Read-only: a card is resolved only by a person's action through the cards service (once, under its lock)."""

    list_display = ["id", "workspace", "task", "kind", "status", "title", "resolved_by", "created_at", "resolved_at"]
    list_filter = ["kind", "status", "created_at"]
    search_fields = ["title", "body", "task__title"]
    list_select_related = ["workspace", "task", "resolved_by"]
    ordering = ["-id"]


@admin.register(MainMessage)
class MainMessageAdmin(ReadOnlyAdmin):
    """Read-only: how each message to Main was routed, and which tasks the Router opened before deciding."""

    list_display = ["id", "workspace", "route", "task", "refusal", "router_model", "lookups_opened", "created_at"]
    list_filter = ["route", "refusal", "created_at"]
    search_fields = ["text", "task__title"]
    list_select_related = ["workspace", "task"]
    raw_id_fields = ["workspace", "author", "task", "card", "inbox_message"]
    ordering = ["-id"]

    @admin.display(description="tasks opened")
    def lookups_opened(self, obj: MainMessage) -> str:
        return ", ".join(f"#{e.get('task')} {e.get('result')}" for e in obj.router_lookups) or "—"
