from django.contrib import admin

from workspace.models import (
    ApiKey,
    Artifact,
    ArtifactVersion,
    AssetCollection,
    AssetCollectionItem,
    BuiltinGuide,
    Event,
    GenerationJob,
    Guide,
    IdempotentRequest,
    Membership,
    WebhookDelivery,
    Workspace,
)


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Workspace)
class WorkspaceAdmin(admin.ModelAdmin):
    list_display = ["id", "name", "created_by", "created_at", "last_event_seq", "member_count"]
    search_fields = ["name", "created_by__username"]
    list_filter = ["created_at"]
    readonly_fields = ["last_event_seq", "created_at"]
    inlines = [MembershipInline]

    @admin.display(description="Members")
    def member_count(self, workspace):
        return workspace.memberships.count()


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["id", "workspace", "user", "role", "created_at"]
    list_filter = ["role", "created_at"]
    search_fields = ["workspace__name", "user__username", "user__email"]
    list_select_related = ["workspace", "user"]
    autocomplete_fields = ["workspace", "user"]


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    """Operators may revoke keys but never see or set a secret (only its digest exists)."""

    list_display = ["id", "name", "workspace", "role", "prefix", "created_at", "last_used_at", "revoked_at"]
    list_filter = ["role", ("revoked_at", admin.EmptyFieldListFilter), "created_at"]
    search_fields = ["name", "prefix", "workspace__name"]
    list_select_related = ["workspace"]
    readonly_fields = ["prefix", "digest", "created_by", "created_at", "last_used_at"]
    fields = ["workspace", "name", "role", "prefix", "digest", "created_by", "created_at", "last_used_at", "revoked_at"]

    def has_add_permission(self, request):
        return False  # keys are created through the API, which shows the secret once


@admin.register(Event)
class EventAdmin(admin.ModelAdmin):
    """The event log is append-only: visible to operators, never edited."""

    list_display = ["id", "workspace", "seq", "kind", "created_at"]
    list_filter = ["kind", "created_at"]
    search_fields = ["kind", "workspace__name"]
    list_select_related = ["workspace"]
    ordering = ["-id"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class ArtifactVersionInline(admin.TabularInline):
    """Versions are immutable: listed for operators, never edited here."""

    model = ArtifactVersion
    extra = 0
    fields = ["number", "media_type", "file", "author_user", "author_task_id", "author_turn_id", "created_at"]
    readonly_fields = fields
    ordering = ["-number"]
    show_change_link = True
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Artifact)
class ArtifactAdmin(admin.ModelAdmin):
    list_display = ["id", "title", "kind", "workspace", "current_version", "created_by", "updated_at", "deleted_at"]
    list_filter = ["kind", ("deleted_at", admin.EmptyFieldListFilter), "updated_at"]
    search_fields = ["title", "description", "workspace__name"]
    list_select_related = ["workspace", "created_by"]
    # A deletion is confirmed by a person on its card and is final (workspace.services.artifacts.artifact_delete).
    readonly_fields = ["current_version", "created_by", "created_by_task_id", "created_at", "updated_at", "deleted_at"]
    autocomplete_fields = ["workspace"]
    inlines = [ArtifactVersionInline]

    def has_add_permission(self, request):
        return False  # created through the services, which write version 1 and the event


@admin.register(ArtifactVersion)
class ArtifactVersionAdmin(admin.ModelAdmin):
    """Read-only: a new version is added through the services, which check the base version."""

    list_display = ["id", "artifact", "number", "media_type", "author_user", "author_task_id", "created_at"]
    list_filter = ["artifact__kind", "media_type", "created_at"]
    search_fields = ["artifact__title", "artifact__workspace__name", "media_type"]
    list_select_related = ["artifact", "author_user"]
    ordering = ["-id"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class WebhookDeliveryInline(admin.TabularInline):
    model = WebhookDelivery
    extra = 0
    fields = ["delivery_id", "provider", "received_at"]
    readonly_fields = fields
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(GenerationJob)
class GenerationJobAdmin(admin.ModelAdmin):
    """Jobs move only through their reports (job_event_apply): operators look, they do not edit."""

    list_display = ["id", "workspace", "kind", "provider", "status", "progress", "task_id", "created_at", "finished_at"]
    list_filter = ["status", "kind", "provider", "created_at"]
    search_fields = ["idempotency_key", "upstream_id", "prompt", "workspace__name"]
    list_select_related = ["workspace"]
    ordering = ["-id"]
    inlines = [WebhookDeliveryInline]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(admin.ModelAdmin):
    """The record of accepted deliveries (replay protection): read-only."""

    list_display = ["id", "delivery_id", "provider", "job", "received_at"]
    list_filter = ["provider", "received_at"]
    search_fields = ["delivery_id", "job__upstream_id"]
    list_select_related = ["job"]
    ordering = ["-id"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(IdempotentRequest)
class IdempotentRequestAdmin(admin.ModelAdmin):
    """Requests sent with an Idempotency-Key and their stored answers (replay protection): read-only. A row with
    no status is a first request still running, or one whose outcome is unknown until the key expires."""

    list_display = ["id", "workspace", "principal", "key", "request", "response_status", "created_at", "finished_at"]
    list_filter = ["response_status", "created_at"]
    search_fields = ["key", "principal", "request"]
    list_select_related = ["workspace"]
    ordering = ["-id"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class AssetCollectionItemInline(admin.TabularInline):
    """The order is kept by the services (positions 0..n-1 under the collection's lock): shown, not edited here."""

    model = AssetCollectionItem
    extra = 0
    fields = ["position", "artifact", "added_by", "added_at"]
    readonly_fields = fields
    ordering = ["position"]
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(AssetCollection)
class AssetCollectionAdmin(admin.ModelAdmin):
    list_display = ["id", "name", "workspace", "item_count", "created_by", "updated_at"]
    list_filter = ["updated_at"]
    search_fields = ["name", "description", "workspace__name"]
    list_select_related = ["workspace", "created_by"]
    readonly_fields = ["workspace", "created_by", "created_at", "updated_at"]
    inlines = [AssetCollectionItemInline]

    def has_add_permission(self, request):
        return False  # created through the API, which checks every artifact and records the event

    @admin.display(description="Artifacts")
    def item_count(self, collection):
        return collection.items.count()


@admin.register(BuiltinGuide)
class BuiltinGuideAdmin(admin.ModelAdmin):
    """Shipped with the code (workspace/builtin_guides/): read-only here, a changed file is the next version."""

    list_display = ["name", "version", "purpose", "created_at"]
    search_fields = ["name", "purpose"]
    readonly_fields = ["name", "version", "purpose", "content", "digest", "created_at"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(Guide)
class GuideAdmin(admin.ModelAdmin):
    """A workspace's guide: its text and versions are its document artifact's."""

    list_display = ["name", "workspace", "purpose", "artifact", "updated_at"]
    search_fields = ["name", "purpose", "workspace__name"]
    list_select_related = ["workspace", "artifact"]
    readonly_fields = ["workspace", "name", "artifact", "created_by", "created_at", "updated_at"]

    def has_add_permission(self, request):
        return False  # written through the API, which versions the text and records the event
