"""Long-term memory with provenance (DESIGN §8, seed §7): evidence → memories (version chains) → episodic
summaries and a small versioned profile, every derived row linked to what it came from, so a forget can find
and erase everything that carried the forgotten content.

Memory sits below agents: sources in agents (Main and task messages, tool calls) are referenced by kind and id,
never by a foreign key into agents.
"""

from django.conf import settings
from django.db import models
from django.db.models import Q

from workspace.models import Workspace


class EvidenceKind(models.TextChoices):
    STATEMENT = "statement", "Stated directly to memory (the memory panel or the API)"
    MAIN_MESSAGE = "main_message", "A person's message to Main"
    TASK_MESSAGE = "task_message", "A person's message in a task"
    ARTIFACT_VERSION = "artifact_version", "A document version"
    TOOL_OUTPUT = "tool_output", "A tool's output"
    WEB = "web", "Web content"
    AGENT_OUTPUT = "agent_output", "The agent's own output"


# What a person said themselves: only these can become facts or preferences about them. Tool output, web
# content and the agent's own words become hypotheses at most (seed §7.1).
PERSON_EVIDENCE = (
    EvidenceKind.STATEMENT,
    EvidenceKind.MAIN_MESSAGE,
    EvidenceKind.TASK_MESSAGE,
    EvidenceKind.ARTIFACT_VERSION,
)


class Evidence(models.Model):
    """A source memory was (or may be) extracted from, with its right to feed memory (revoked by a forget)."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="evidence")
    kind = models.CharField(max_length=32, choices=EvidenceKind.choices)
    source_id = models.CharField(max_length=64, help_text="The source's id in its own table (a message, a version).")
    task_id = models.BigIntegerField(null=True, blank=True)
    stated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    text = models.TextField(blank=True, help_text="The words as stated; erased when forgotten.")
    content_hash = models.CharField(max_length=64, help_text="SHA-256 of the normalised text; kept after erasure.")
    feeds_memory = models.BooleanField(default=True, help_text="Its right to feed memory; a forget revokes it.")
    revoked_at = models.DateTimeField(null=True, blank=True)
    extracted_at = models.DateTimeField(null=True, blank=True, help_text="When extraction last ran on it.")
    extraction_attempts = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["workspace_id", "id"]
        constraints = [
            models.UniqueConstraint(fields=["workspace", "kind", "source_id"], name="evidence_unique_source"),
        ]
        indexes = [models.Index(fields=["workspace", "feeds_memory", "extracted_at"], name="evidence_pending")]
        verbose_name_plural = "evidence"

    def __str__(self) -> str:
        return f"{self.kind} {self.source_id}"

    @property
    def from_person(self) -> bool:
        return self.kind in PERSON_EVIDENCE and self.stated_by_id is not None


class MemoryKind(models.TextChoices):
    PREFERENCE = "preference", "Durable preference"
    INSTRUCTION = "instruction", "One-off instruction"
    FACT = "fact", "Fact stated by the person"
    HYPOTHESIS = "hypothesis", "Hypothesis inferred by the model"


class MemoryScope(models.TextChoices):
    WORKSPACE = "workspace", "The workspace (a brand, a team)"
    PERSON = "person", "One person"


class Memory(models.Model):
    """One remembered thing across its versions: what it is about (`subject`) and who it is for."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="memories")
    scope = models.CharField(max_length=16, choices=MemoryScope.choices, default=MemoryScope.WORKSPACE)
    person = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    subject = models.CharField(max_length=200, help_text="What it is about, normalised (e.g. 'brand main colour').")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["workspace_id", "id"]
        indexes = [models.Index(fields=["workspace", "subject"], name="memory_subject")]

    def __str__(self) -> str:
        return f"memory {self.pk}: {self.subject}"


class VersionStatus(models.TextChoices):
    ACTIVE = "active", "Active"
    SUPERSEDED = "superseded", "Superseded"
    FORGOTTEN = "forgotten", "Forgotten (content erased)"


class VersionOperation(models.TextChoices):
    ORIGIN = "origin", "First statement"
    REFINE = "refine", "Refined by a new statement"
    REEXTRACT = "reextract", "Re-extracted from the evidence that remained after a forget"


class MemoryVersion(models.Model):
    """One version of a memory. A REFINE adds the next version and supersedes this one; a CONFIRM adds no
    version, only a derivation link to the confirming evidence."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    kind = models.CharField(max_length=16, choices=MemoryKind.choices)
    operation = models.CharField(max_length=16, choices=VersionOperation.choices)
    status = models.CharField(max_length=16, choices=VersionStatus.choices, default=VersionStatus.ACTIVE)
    content = models.TextField(blank=True, help_text="Erased when forgotten.")
    normalised = models.CharField(max_length=500, blank=True, help_text="For duplicates; erased when forgotten.")
    # When it holds: a brand that was blue and is now green keeps both versions, each with its period.
    valid_from = models.DateTimeField()
    valid_to = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    erased_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["memory_id", "number"]
        constraints = [
            models.UniqueConstraint(fields=["memory", "number"], name="memory_version_unique_number"),
            models.UniqueConstraint(fields=["memory"], condition=Q(status="active"), name="memory_one_active_version"),
            models.UniqueConstraint(
                fields=["workspace", "normalised"],
                condition=Q(status="active") & ~Q(normalised=""),
                name="memory_active_content_unique",
            ),
        ]
        indexes = [models.Index(fields=["workspace", "status"], name="memory_version_status")]

    def __str__(self) -> str:
        return f"v{self.number} of memory {self.memory_id} ({self.status})"


class EpisodeStatus(models.TextChoices):
    ACTIVE = "active", "Active"
    FORGOTTEN = "forgotten", "Rebuilt without forgotten content"


class Episode(models.Model):
    """What happened in a piece of work (a task), for when the person comes back to it."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="episodes")
    task_id = models.BigIntegerField(null=True, blank=True)
    title = models.CharField(max_length=300)
    summary = models.TextField()
    status = models.CharField(max_length=16, choices=EpisodeStatus.choices, default=EpisodeStatus.ACTIVE)
    period_start = models.DateTimeField()
    period_end = models.DateTimeField()
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["workspace_id", "-period_end", "-id"]

    def __str__(self) -> str:
        return f"episode {self.pk}: {self.title}"


class ProfileVersion(models.Model):
    """The small, stable profile the context's prefix carries. A new version whenever its entries change."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="profile_versions")
    number = models.PositiveIntegerField()
    reason = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["workspace_id", "number"]
        constraints = [models.UniqueConstraint(fields=["workspace", "number"], name="profile_version_unique")]

    def __str__(self) -> str:
        return f"profile v{self.number} of workspace {self.workspace_id}"


class ProfileEntry(models.Model):
    profile = models.ForeignKey(ProfileVersion, on_delete=models.CASCADE, related_name="entries")
    version = models.ForeignKey(MemoryVersion, null=True, on_delete=models.SET_NULL, related_name="profile_entries")
    position = models.PositiveIntegerField()
    text = models.TextField()

    class Meta:
        ordering = ["profile_id", "position"]
        verbose_name_plural = "profile entries"

    def __str__(self) -> str:
        return f"entry {self.position} of profile {self.profile_id}"


class DerivationRole(models.TextChoices):
    ORIGIN = "origin", "First stated in"
    REFINE = "refine", "Refined by"
    CONFIRM = "confirm", "Confirmed by"
    SUPERSEDES = "supersedes", "Supersedes the earlier version"
    SUMMARISES = "summarises", "Summarises"
    PROFILES = "profiles", "Profile entry made from"


class Derivation(models.Model):
    """One provenance link: a memory version, an episode or a profile entry came (partly) from a piece of
    evidence or from an earlier memory version. A forget follows these links to everything it must erase."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    role = models.CharField(max_length=16, choices=DerivationRole.choices)
    # what was derived: exactly one
    version = models.ForeignKey(
        MemoryVersion, null=True, blank=True, on_delete=models.CASCADE, related_name="derived_from"
    )
    episode = models.ForeignKey(Episode, null=True, blank=True, on_delete=models.CASCADE, related_name="derived_from")
    profile_entry = models.ForeignKey(
        ProfileEntry, null=True, blank=True, on_delete=models.CASCADE, related_name="derived_from"
    )
    # from what: exactly one
    evidence = models.ForeignKey(Evidence, null=True, blank=True, on_delete=models.CASCADE, related_name="derivations")
    from_version = models.ForeignKey(
        MemoryVersion, null=True, blank=True, on_delete=models.CASCADE, related_name="derivations"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(
                condition=(
                    Q(version__isnull=False, episode__isnull=True, profile_entry__isnull=True)
                    | Q(version__isnull=True, episode__isnull=False, profile_entry__isnull=True)
                    | Q(version__isnull=True, episode__isnull=True, profile_entry__isnull=False)
                ),
                name="derivation_one_target",
            ),
            models.CheckConstraint(
                condition=Q(evidence__isnull=False, from_version__isnull=True)
                | Q(evidence__isnull=True, from_version__isnull=False),
                name="derivation_one_source",
            ),
        ]

    def __str__(self) -> str:
        target = (
            f"version {self.version_id}"
            if self.version_id
            else f"episode {self.episode_id}"
            if self.episode_id
            else f"profile entry {self.profile_entry_id}"
        )
        source = f"evidence {self.evidence_id}" if self.evidence_id else f"version {self.from_version_id}"
        return f"{target} {self.role} {source}"


class MemoryIndex(models.Model):
    """The search row of an active memory version (keyword search reads it). Dropped when the version is
    superseded or forgotten, so nothing stale or forgotten can be found."""

    version = models.OneToOneField(MemoryVersion, on_delete=models.CASCADE, primary_key=True, related_name="index")
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    document = models.TextField()

    class Meta:
        indexes = [models.Index(fields=["workspace"], name="memory_index_workspace")]

    def __str__(self) -> str:
        return f"index of version {self.version_id}"


class Tombstone(models.Model):
    """A forgotten statement, kept as a hash and never as text: the same content is not extracted again."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    content_hash = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["workspace", "content_hash"], name="tombstone_unique")]

    def __str__(self) -> str:
        return f"tombstone {self.content_hash[:12]}"


class ForgetStatus(models.TextChoices):
    AWAITING_CONFIRMATION = "awaiting_confirmation", "Waiting for the person's confirmation"
    DONE = "done", "Forgotten"
    CANCELLED = "cancelled", "Not confirmed"


class ForgetRequest(models.Model):
    """A person asked to forget a memory or a piece of evidence. Irreversible, so it waits for a confirmation
    card; once done, `report` says what was erased and rebuilt (counts and ids, never the content)."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="forget_requests")
    memory = models.ForeignKey(Memory, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    evidence = models.ForeignKey(Evidence, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    status = models.CharField(max_length=32, choices=ForgetStatus.choices, default=ForgetStatus.AWAITING_CONFIRMATION)
    card_id = models.BigIntegerField(null=True, blank=True, help_text="The confirmation card (agents).")
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    report = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    done_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(memory__isnull=False) | Q(evidence__isnull=False), name="forget_names_a_target"
            ),
        ]

    def __str__(self) -> str:
        return f"forget {self.pk} ({self.status})"


class ForgottenTerm(models.Model):
    """A salted hash of a term of forgotten content (memory/redaction.py): any later context shows a message
    that carries one as removed. Never the text."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    term = models.CharField(max_length=64)
    forget = models.ForeignKey(ForgetRequest, on_delete=models.CASCADE, related_name="terms")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["workspace", "term"], name="forgotten_term_unique")]

    def __str__(self) -> str:
        return f"forgotten term {self.term[:12]}"
