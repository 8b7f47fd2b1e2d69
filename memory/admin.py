"""The operators' view of memory: every model listed, nothing edited or deleted here.

Memory is written by its services (statements, extraction, forget), which keep the version chains, the
derivation links, the profile and the search rows consistent; an edit here would break what a forget relies on
to find everything derived, and a delete would skip the tombstones and the profile's new version. A person's
forget goes through the confirmation card. What a forget erased shows as erased.
"""

from django.contrib import admin
from django.db.models import OuterRef, Subquery

from memory.models import (
    Derivation,
    Episode,
    Evidence,
    ForgetRequest,
    ForgottenTerm,
    Memory,
    MemoryIndex,
    MemoryVersion,
    ProfileEntry,
    ProfileVersion,
    Tombstone,
    VersionStatus,
)

ERASED = "(erased)"
EXCERPT = 120


def _excerpt(text: str) -> str:
    return text if len(text) <= EXCERPT else text[: EXCERPT - 1] + "…"


class ReadOnlyAdmin(admin.ModelAdmin):
    """Viewable by operators; no add, change or delete (see the module docstring)."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class ReadOnlyInline(admin.TabularInline):
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


# --- evidence and derivations -------------------------------------------------------------------------------


@admin.register(Evidence)
class EvidenceAdmin(ReadOnlyAdmin):
    list_display = [
        "id",
        "workspace",
        "kind",
        "source_id",
        "task_id",
        "stated_by",
        "feeds_memory",
        "words",
        "created_at",
    ]
    list_filter = ["kind", "feeds_memory", "created_at"]
    search_fields = ["source_id", "workspace__name", "stated_by__username"]
    list_select_related = ["workspace", "stated_by"]
    ordering = ["-id"]
    fields = [
        "workspace",
        "kind",
        "source_id",
        "task_id",
        "stated_by",
        "words",
        "content_hash",
        "feeds_memory",
        "revoked_at",
        "extracted_at",
        "extraction_attempts",
        "created_at",
    ]
    readonly_fields = fields

    @admin.display(description="Text")
    def words(self, evidence):
        return ERASED if not evidence.feeds_memory else _excerpt(evidence.text)


@admin.register(Derivation)
class DerivationAdmin(ReadOnlyAdmin):
    list_display = ["id", "workspace", "role", "target", "source", "created_at"]
    list_filter = ["role", "created_at"]
    search_fields = ["workspace__name"]
    list_select_related = ["workspace"]
    ordering = ["-id"]

    @admin.display(description="Derived")
    def target(self, derivation):
        if derivation.version_id:
            return f"memory version {derivation.version_id}"
        if derivation.episode_id:
            return f"episode {derivation.episode_id}"
        return f"profile entry {derivation.profile_entry_id}"

    @admin.display(description="From")
    def source(self, derivation):
        if derivation.evidence_id:
            return f"evidence {derivation.evidence_id}"
        return f"memory version {derivation.from_version_id}"


class DerivationInline(ReadOnlyInline):
    model = Derivation
    fk_name = "version"
    fields = ["role", "evidence", "from_version", "created_at"]
    readonly_fields = fields
    verbose_name_plural = "derived from"


# --- memories -----------------------------------------------------------------------------------------------


def _version_content(version: MemoryVersion) -> str:
    return ERASED if version.status == VersionStatus.FORGOTTEN else _excerpt(version.content)


class MemoryVersionInline(ReadOnlyInline):
    model = MemoryVersion
    fields = ["number", "kind", "operation", "status", "shown_content", "valid_from", "valid_to", "erased_at"]
    readonly_fields = fields
    ordering = ["number"]

    @admin.display(description="Content")
    def shown_content(self, version):
        return _version_content(version)


@admin.register(Memory)
class MemoryAdmin(ReadOnlyAdmin):
    list_display = ["id", "workspace", "scope", "person", "subject", "status", "updated_at"]
    list_filter = ["scope", "updated_at"]
    search_fields = ["subject", "workspace__name", "person__username"]
    list_select_related = ["workspace", "person"]
    ordering = ["-id"]
    inlines = [MemoryVersionInline]

    def get_queryset(self, request):
        latest = MemoryVersion.objects.filter(memory=OuterRef("pk")).order_by("-number").values("status")[:1]
        return super().get_queryset(request).annotate(latest_status=Subquery(latest))

    @admin.display(description="Status", ordering="latest_status")
    def status(self, memory):
        return memory.latest_status or "—"


@admin.register(MemoryVersion)
class MemoryVersionAdmin(ReadOnlyAdmin):
    list_display = ["id", "workspace", "memory", "number", "kind", "operation", "status", "shown_content", "valid_from"]
    list_filter = ["status", "kind", "operation", "created_at"]
    search_fields = ["memory__subject", "workspace__name"]
    list_select_related = ["workspace", "memory"]
    ordering = ["-id"]
    fields = [
        "workspace",
        "memory",
        "number",
        "kind",
        "operation",
        "status",
        "shown_content",
        "valid_from",
        "valid_to",
        "created_at",
        "erased_at",
    ]
    readonly_fields = fields
    inlines = [DerivationInline]

    @admin.display(description="Content")
    def shown_content(self, version):
        return _version_content(version)


@admin.register(MemoryIndex)
class MemoryIndexAdmin(ReadOnlyAdmin):
    list_display = ["version", "workspace"]
    search_fields = ["workspace__name"]
    list_select_related = ["workspace", "version"]


# --- episodes and the profile -------------------------------------------------------------------------------


@admin.register(Episode)
class EpisodeAdmin(ReadOnlyAdmin):
    list_display = ["id", "workspace", "task_id", "title", "status", "period_start", "period_end"]
    list_filter = ["status", "period_end"]
    search_fields = ["title", "workspace__name"]
    list_select_related = ["workspace"]
    ordering = ["-id"]


def _entry_text(entry: ProfileEntry) -> str:
    return _excerpt(entry.text) if entry.text else ERASED


class ProfileEntryInline(ReadOnlyInline):
    model = ProfileEntry
    fields = ["position", "shown_text", "version"]
    readonly_fields = fields

    @admin.display(description="Text")
    def shown_text(self, entry):
        return _entry_text(entry)


@admin.register(ProfileVersion)
class ProfileVersionAdmin(ReadOnlyAdmin):
    list_display = ["id", "workspace", "number", "reason", "created_at"]
    list_filter = ["created_at"]
    search_fields = ["workspace__name", "reason"]
    list_select_related = ["workspace"]
    ordering = ["-id"]
    inlines = [ProfileEntryInline]


@admin.register(ProfileEntry)
class ProfileEntryAdmin(ReadOnlyAdmin):
    list_display = ["id", "workspace", "profile", "position", "shown_text", "version"]
    search_fields = ["profile__workspace__name"]
    list_select_related = ["profile__workspace"]
    ordering = ["-id"]
    fields = ["profile", "position", "shown_text", "version"]
    readonly_fields = fields

    @admin.display(description="Workspace")
    def workspace(self, entry):
        return entry.profile.workspace

    @admin.display(description="Text")
    def shown_text(self, entry):
        return _entry_text(entry)


# --- forgetting -------------------------------------------------------------------------------------------


@admin.register(ForgetRequest)
class ForgetRequestAdmin(ReadOnlyAdmin):
    list_display = ["id", "workspace", "status", "memory", "evidence", "card_id", "requested_by", "created_at"]
    list_filter = ["status", "created_at"]
    search_fields = ["workspace__name", "requested_by__username"]
    list_select_related = ["workspace", "requested_by"]
    ordering = ["-id"]


@admin.register(Tombstone)
class TombstoneAdmin(ReadOnlyAdmin):
    list_display = ["id", "workspace", "content_hash", "created_at"]
    search_fields = ["content_hash", "workspace__name"]
    list_select_related = ["workspace"]
    ordering = ["-id"]


@admin.register(ForgottenTerm)
class ForgottenTermAdmin(ReadOnlyAdmin):
    list_display = ["id", "workspace", "forget", "term"]
    search_fields = ["workspace__name"]
    list_select_related = ["workspace", "forget"]
    ordering = ["-id"]
