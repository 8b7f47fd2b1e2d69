"""Memory's REST shapes: memories with their version chains and provenance, the profile, episodes.

What a forget erased never comes back through here: a forgotten version shows its status and dates with no
content, a revoked source its kind and ids with no text, an erased profile entry no text; and a subject or a
source's words that carry one of the workspace's forgotten terms (memory/redaction.py) are left out too. The
views pass those terms in the context as `forgotten` (with `workspace_id`).
"""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from lomote.kernel.serializers import StrictSerializer
from memory.extraction.candidate import MAX_CONTENT_CHARS
from memory.models import (
    Derivation,
    Episode,
    Evidence,
    Memory,
    MemoryKind,
    MemoryScope,
    MemoryVersion,
    ProfileEntry,
    ProfileVersion,
    VersionStatus,
)
from memory.services.forget import carries_forgotten
from memory.services.memories import PERSON_KINDS


def _shown(text: str, context: dict) -> str | None:
    """The text, or None when it was erased or carries a forgotten term."""
    if not text:
        return None
    if carries_forgotten(text, context.get("forgotten", frozenset()), context.get("workspace_id", 0)):
        return None
    return text


# --- provenance ---------------------------------------------------------------------------------------------


class EvidenceOut(serializers.ModelSerializer):
    text = serializers.SerializerMethodField(
        help_text="The source's words as memory received them; null once revoked (a forget erases them) or empty."
    )
    stated_by = serializers.IntegerField(
        source="stated_by_id", allow_null=True, read_only=True, help_text="The person who said it (user id)."
    )
    revoked = serializers.SerializerMethodField(help_text="Whether a forget took its right to feed memory.")

    class Meta:
        model = Evidence
        fields = ["id", "kind", "source_id", "task_id", "stated_by", "created_at", "revoked", "revoked_at", "text"]
        read_only_fields = fields
        extra_kwargs = {
            "source_id": {"help_text": "The source's id in its own list: a Main or task message, a version…"},
            "task_id": {"help_text": "The task it was said in, if any (a task message's task)."},
        }

    def get_revoked(self, evidence) -> bool:
        return not evidence.feeds_memory

    def get_text(self, evidence) -> str | None:
        return _shown(evidence.text, self.context) if evidence.feeds_memory else None


class VersionRefOut(serializers.ModelSerializer):
    """An earlier (or the profiled) memory version, by reference: its content is in the memory's chain."""

    memory = serializers.IntegerField(source="memory_id", read_only=True)

    class Meta:
        model = MemoryVersion
        fields = ["id", "memory", "number", "status"]
        read_only_fields = fields


class DerivationOut(serializers.ModelSerializer):
    evidence = EvidenceOut(allow_null=True, read_only=True, help_text="The source, when it came from one.")
    from_version = VersionRefOut(
        allow_null=True, read_only=True, help_text="The earlier version it came from (supersedes, profiles)."
    )

    class Meta:
        model = Derivation
        fields = ["id", "role", "evidence", "from_version", "created_at"]
        read_only_fields = fields


# --- memories -----------------------------------------------------------------------------------------------


class MemoryVersionOut(serializers.ModelSerializer):
    content = serializers.SerializerMethodField(help_text="What it says; null once forgotten (erased).")
    derivations = DerivationOut(
        source="derived_from", many=True, read_only=True, help_text="Where this version came from, oldest first."
    )

    class Meta:
        model = MemoryVersion
        fields = [
            "id",
            "number",
            "kind",
            "operation",
            "status",
            "content",
            "valid_from",
            "valid_to",
            "created_at",
            "erased_at",
            "derivations",
        ]
        read_only_fields = fields
        extra_kwargs = {
            "valid_from": {"help_text": "When it started to hold."},
            "valid_to": {"help_text": "When a later version (or a forget) ended it; null while it holds."},
        }

    def get_content(self, version) -> str | None:
        return None if version.status == VersionStatus.FORGOTTEN else (version.content or None)


class MemoryOut(serializers.ModelSerializer):
    subject = serializers.SerializerMethodField(
        help_text="What it is about (normalised words); null when it carries something forgotten."
    )
    person = serializers.IntegerField(
        source="person_id", allow_null=True, read_only=True, help_text="Whose own memory it is (person scope)."
    )
    current = serializers.SerializerMethodField(help_text="The active version; null once forgotten.")
    versions = serializers.SerializerMethodField(
        help_text="The version chain, oldest first: the active version only, unless `include=superseded` (or "
        "the detail) asks for superseded and forgotten versions too."
    )

    class Meta:
        model = Memory
        fields = ["id", "scope", "person", "subject", "current", "versions", "created_at", "updated_at"]
        read_only_fields = fields

    def get_subject(self, memory) -> str | None:
        return _shown(memory.subject, self.context)

    @extend_schema_field(MemoryVersionOut(allow_null=True))
    def get_current(self, memory):
        active = next((v for v in memory.chain if v.status == VersionStatus.ACTIVE), None)
        return MemoryVersionOut(active, context=self.context).data if active is not None else None

    @extend_schema_field(MemoryVersionOut(many=True))
    def get_versions(self, memory):
        return MemoryVersionOut(memory.chain, many=True, context=self.context).data


class PageQueryIn(StrictSerializer):
    """The pagination parameters, checked so a bad value is a 400 rather than silently the default."""

    limit = serializers.IntegerField(min_value=1, max_value=500, required=False)
    offset = serializers.IntegerField(min_value=0, required=False)


class MemoryQueryIn(PageQueryIn):
    kind = serializers.ChoiceField(choices=MemoryKind.choices, required=False)
    scope = serializers.ChoiceField(choices=MemoryScope.choices, required=False)
    subject = serializers.CharField(max_length=200, required=False)
    include = serializers.ChoiceField(choices=["superseded"], required=False)


class MemoryStateIn(StrictSerializer):
    content = serializers.CharField(max_length=MAX_CONTENT_CHARS, help_text="The statement, as it should read.")
    kind = serializers.ChoiceField(
        choices=PERSON_KINDS,
        help_text="`preference` (durable), `instruction` (one-off) or `fact`; hypotheses are the model's only.",
    )
    scope = serializers.ChoiceField(
        choices=MemoryScope.choices,
        default=MemoryScope.WORKSPACE,
        help_text="`workspace` (everyone's: a brand, a team) or `person` (yours alone).",
    )


class MemoryCorrectIn(StrictSerializer):
    content = serializers.CharField(max_length=MAX_CONTENT_CHARS, help_text="What the memory should say now.")
    kind = serializers.ChoiceField(
        choices=PERSON_KINDS,
        required=False,
        help_text="Its kind from now on; kept when left out (a corrected hypothesis becomes a fact).",
    )


class NoBodyIn(StrictSerializer):
    """Actions take no fields; sending some is a mistake worth reporting."""


# --- profile and episodes -----------------------------------------------------------------------------------


class ProfileEntryOut(serializers.ModelSerializer):
    text = serializers.SerializerMethodField(help_text="What the profile says; null once a forget erased it.")
    version = serializers.IntegerField(
        source="version_id", allow_null=True, read_only=True, help_text="The memory version it shows."
    )
    memory = serializers.SerializerMethodField(help_text="The memory of that version.")
    derivations = DerivationOut(source="derived_from", many=True, read_only=True)

    class Meta:
        model = ProfileEntry
        fields = ["position", "text", "version", "memory", "derivations"]
        read_only_fields = fields

    def get_text(self, entry) -> str | None:
        return _shown(entry.text, self.context)

    def get_memory(self, entry) -> int | None:
        # From the prefetched `profiles` link, whose earlier version is read with it: no query per entry.
        return next((d.from_version.memory_id for d in entry.derived_from.all() if d.from_version_id), None)


class ProfileVersionOut(serializers.ModelSerializer):
    entries = ProfileEntryOut(many=True, read_only=True)

    class Meta:
        model = ProfileVersion
        fields = ["number", "reason", "created_at", "entries"]
        read_only_fields = fields
        extra_kwargs = {"reason": {"help_text": "Why it moved: memory changed, corrected, confirmed, forget…"}}


class ProfileOut(serializers.Serializer):
    number = serializers.IntegerField(help_text="The current version's number; 0 before the first one.")
    reason = serializers.CharField(allow_blank=True)
    created_at = serializers.DateTimeField(allow_null=True)
    entries = ProfileEntryOut(many=True)


class EpisodeOut(serializers.ModelSerializer):
    task = serializers.IntegerField(source="task_id", allow_null=True, read_only=True)
    title = serializers.SerializerMethodField(help_text="Null when it carries something forgotten.")
    summary = serializers.SerializerMethodField(
        help_text="What happened in the work; null when it carries something forgotten since it was written."
    )
    derivations = DerivationOut(source="derived_from", many=True, read_only=True)

    class Meta:
        model = Episode
        fields = [
            "id",
            "task",
            "title",
            "summary",
            "status",
            "period_start",
            "period_end",
            "created_at",
            "updated_at",
            "derivations",
        ]
        read_only_fields = fields
        extra_kwargs = {"status": {"help_text": "`forgotten`: rewritten without what a forget erased."}}

    def get_title(self, episode) -> str | None:
        return _shown(episode.title, self.context)

    def get_summary(self, episode) -> str | None:
        return _shown(episode.summary, self.context)


class EpisodeQueryIn(PageQueryIn):
    task = serializers.IntegerField(min_value=1, max_value=2**63 - 1, required=False)
