"""Tasks and the durable runtime's log (DESIGN §3): turns, steps, tool calls, inbox, model leases.

The log is append-only and keyed by (turn, step, index); state is derived from it, never re-serialised whole.
Every write a worker makes is fenced on (turn, generation) — see agents/fencing.py.
"""

import json

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q

from lomote.kernel.endpoints import EndpointRefused, endpoint_check
from workspace.models import FlowRun, Workspace


class TaskKind(models.TextChoices):
    LIGHTWEIGHT = "lightweight", "Lightweight"
    PERSISTENT = "persistent", "Persistent"


class TaskStatus(models.TextChoices):
    IDLE = "idle", "Idle"  # nothing to do until the person says something
    ACTIVE = "active", "Active"  # a turn is queued or running
    WAITING = "waiting", "Waiting"  # suspended on an external event or a person's answer
    PAUSED = "paused", "Paused"
    CANCELLED = "cancelled", "Cancelled"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


class Autonomy(models.TextChoices):
    """How far a task goes on by itself (DESIGN §5). Separate from its budget (billing) and permissions."""

    ASK = "ask", "Ask before each paid step and before continuing"
    CHECKPOINTS = "checkpoints", "Ask at checkpoints and when billing requires"
    AUTO = "auto", "Continue without asking, within the budget"


# The tool domains a person can allow or refuse a task (base tools are always allowed).
PERMISSION_DOMAINS = ("image", "video", "3d", "documents", "flows", "assets")


def default_permissions() -> dict:
    """Every domain; irreversible tools allowed, but each call still waits for a person's confirmation."""
    return {"domains": list(PERMISSION_DOMAINS), "irreversible": True}


class Task(models.Model):
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="tasks")
    kind = models.CharField(max_length=16, choices=TaskKind.choices, default=TaskKind.PERSISTENT)
    status = models.CharField(max_length=16, choices=TaskStatus.choices, default=TaskStatus.IDLE)
    title = models.CharField(max_length=200)
    brief = models.TextField(blank=True)
    language = models.CharField(max_length=16, default="en")
    summary = models.TextField(blank=True)
    goal_revision = models.PositiveIntegerField(default=1)
    # What the work in progress relies on (DESIGN §11): {"goal_revision", "config_version", "config"}, set when
    # a turn starts and when a person accepts a change; a resume compares it with the present.
    basis = models.JSONField(default=dict, blank=True)
    stop_reason = models.CharField(max_length=64, blank=True)
    waiting_for = models.JSONField(default=dict, blank=True)
    # Consecutive turns started by the runtime itself (no person in between); capped by settings.
    auto_turns = models.PositiveIntegerField(default=0)
    autonomy = models.CharField(max_length=16, choices=Autonomy.choices, default=Autonomy.CHECKPOINTS)
    # What the task may do: {"domains": [...], "irreversible": bool}. Checked at every tool execution.
    permissions = models.JSONField(default=default_permissions, blank=True)
    model_profile = models.ForeignKey(
        "agents.ModelProfile", null=True, blank=True, on_delete=models.SET_NULL, related_name="tasks"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # A task an integrator started with an API key acts with that key's role while the key is active
    # (agents.selectors.task_role); never with more than the key was given.
    created_by_key = models.ForeignKey(
        "workspace.ApiKey", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # Archived = put away by the person: a finished or cancelled task that routing must not reopen. Messages
    # aimed at it are refused with an explanation (DESIGN §2, pre-execution validation).
    archived_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-updated_at", "-id"]
        indexes = [models.Index(fields=["workspace", "status", "-updated_at"], name="task_ws_status")]

    def __str__(self) -> str:
        return f"#{self.pk} {self.title}"

    @property
    def is_stopped(self) -> bool:
        return self.status in (TaskStatus.CANCELLED, TaskStatus.DONE, TaskStatus.FAILED)

    @property
    def is_archived(self) -> bool:
        return self.archived_at is not None


class VectorField(models.Field):
    """A fixed-size float vector: `real[]` on PostgreSQL, so similarity is computed in SQL; JSON text elsewhere."""

    description = "Fixed-size float vector"

    def __init__(self, *args, dimensions: int, **kwargs):
        self.dimensions = dimensions
        super().__init__(*args, **kwargs)

    def deconstruct(self):
        name, path, args, kwargs = super().deconstruct()
        kwargs["dimensions"] = self.dimensions
        return name, path, args, kwargs

    def db_type(self, connection):
        return "real[]" if connection.vendor == "postgresql" else "text"

    def from_db_value(self, value, expression, connection):
        if value is None or isinstance(value, list):
            return value
        return json.loads(value)

    def get_db_prep_value(self, value, connection, prepared=False):
        if value is None:
            return None
        value = [float(x) for x in value]
        if len(value) != self.dimensions:
            raise ValueError(f"expected {self.dimensions} dimensions, got {len(value)}")
        return value if connection.vendor == "postgresql" else json.dumps(value)


class TaskEmbedding(models.Model):
    """What the Router's search reads about a task (agents/services/task_index.py), one row per task.

    `vector` is a LEXICAL fingerprint (hashed words and character n-grams), not a semantic embedding: no model
    is downloaded. It finds tasks that share words and word pieces with a message, not paraphrases.
    """

    task = models.OneToOneField(Task, on_delete=models.CASCADE, primary_key=True, related_name="embedding")
    # Denormalised so searches filter on this table alone.
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    document = models.TextField(help_text="Title, brief and summary as keyword search reads them.")
    vector = VectorField(dimensions=256)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"embedding of task {self.task_id}"


class ChecklistStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    IN_PROGRESS = "in_progress", "In progress"
    DONE = "done", "Done"
    SKIPPED = "skipped", "Skipped"


# An item's evidence after a person asked to change its result: the next turn makes a new version of it.
REVISION_PREFIX = "Revision requested: "


class ChecklistItem(models.Model):
    """One item of a task's execution checklist: the persisted plan that decides auto-continuation."""

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="checklist")
    position = models.PositiveIntegerField()
    title = models.CharField(max_length=300)
    status = models.CharField(max_length=16, choices=ChecklistStatus.choices, default=ChecklistStatus.PENDING)
    needs_confirmation = models.BooleanField(default=False)
    evidence = models.TextField(blank=True)
    artifacts = models.JSONField(default=list, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["task_id", "position"]
        constraints = [models.UniqueConstraint(fields=["task", "position"], name="checklist_unique_position")]

    def __str__(self) -> str:
        return f"{self.position}. {self.title} [{self.status}]"

    @property
    def is_open(self) -> bool:
        return self.status in (ChecklistStatus.PENDING, ChecklistStatus.IN_PROGRESS)


class ProviderSecret(models.Model):
    """A provider API key, encrypted at rest; decrypted only inside a provider adapter."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="provider_secrets")
    name = models.CharField(max_length=120)
    ciphertext = models.BinaryField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["workspace", "name"], name="provider_secret_unique_name")]

    def __str__(self) -> str:
        return f"{self.name} (encrypted)"


class ProviderKind(models.TextChoices):
    SCRIPTED = "scripted", "Scripted planner (offline, not an LLM)"
    OPENAI_COMPAT = "openai_compat", "OpenAI-compatible endpoint"
    REPLAY = "replay", "Replay (fixed outputs, tests)"


DEFAULT_CONTEXT_TOKENS = 128_000  # a 128k model, the common size of current chat models


class ModelProfile(models.Model):
    """A workspace's choice of model. A turn copies it into an immutable ModelLease when it starts."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="model_profiles")
    name = models.CharField(max_length=120)
    provider = models.CharField(max_length=32, choices=ProviderKind.choices, default=ProviderKind.SCRIPTED)
    model = models.CharField(max_length=200, default="lomote-scripted-planner-1")
    base_url = models.URLField(blank=True)
    params = models.JSONField(default=dict, blank=True)
    secret = models.ForeignKey(ProviderSecret, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    # The model's context window in tokens; a task's context budget is derived from it (agents/runtime/budget.py).
    context_tokens = models.PositiveIntegerField(default=DEFAULT_CONTEXT_TOKENS)
    is_default = models.BooleanField(default=False)
    # What the endpoint did when the runtime forced a tool call (agents/providers/openai_compat.py): {"base_url",
    # "model", "refused": the tool_choice forms it refused, "worked": the one it took}. Learned by the adapter, not
    # set by people; it applies only while the profile still points at that endpoint and model.
    tool_choice_support = models.JSONField(default=dict, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["workspace", "name"], name="model_profile_unique_name"),
            models.UniqueConstraint(
                fields=["workspace"], condition=Q(is_default=True), name="model_profile_one_default"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name}: {self.provider}/{self.model}"

    @classmethod
    def tool_choice_recalled(cls, pk: int, *, base_url: str, model: str) -> dict | None:
        """What was learned about forcing tool calls on this profile, if it was learned on this endpoint and model."""
        support = cls.objects.filter(pk=pk).values_list("tool_choice_support", flat=True).first()
        if not support or support.get("base_url") != base_url or support.get("model") != model:
            return None
        return support

    @classmethod
    def tool_choice_remember(cls, pk: int, *, base_url: str, model: str, refused: list[str], worked: str) -> None:
        # One UPDATE, no lock: two workers learning the same fact at once write the same value.
        support = {"base_url": base_url, "model": model, "refused": refused, "worked": worked}
        cls.objects.filter(pk=pk).update(tool_choice_support=support)

    def clean(self):
        # The admin's form saves profiles too: the same endpoint check as the model_profile command.
        super().clean()
        if self.base_url:
            try:
                endpoint_check(self.base_url)
            except EndpointRefused as refused:
                raise ValidationError({"base_url": refused.message}) from None


class AssistantPreset(models.Model):
    """A stored preset for one model call (seed 002's AiAssistant): instructions, model parameters and the model
    profile it runs on (none: the workspace's default profile). Flow nodes refer to it by id (the latest version,
    or a pinned one). Every edit makes a new AssistantPresetVersion; `version` is the current one's number."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="assistant_presets")
    name = models.CharField(max_length=120)
    instructions = models.TextField(blank=True)
    params = models.JSONField(default=dict, blank=True)
    model_profile = models.ForeignKey(
        ModelProfile, null=True, blank=True, on_delete=models.PROTECT, related_name="assistant_presets"
    )
    version = models.PositiveIntegerField(default=1)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["workspace_id", "name"]
        constraints = [models.UniqueConstraint(fields=["workspace", "name"], name="assistant_preset_unique_name")]

    def __str__(self) -> str:
        return f"{self.name} v{self.version}"


class AssistantPresetVersion(models.Model):
    """One version of a preset, as it was saved: immutable, so a node pinned to it always runs the same preset."""

    preset = models.ForeignKey(AssistantPreset, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    name = models.CharField(max_length=120)
    instructions = models.TextField(blank=True)
    params = models.JSONField(default=dict, blank=True)
    model_profile = models.ForeignKey(
        ModelProfile, null=True, blank=True, on_delete=models.PROTECT, related_name="assistant_preset_versions"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["preset_id", "number"]
        constraints = [
            models.UniqueConstraint(fields=["preset", "number"], name="assistant_preset_version_unique_number")
        ]

    def __str__(self) -> str:
        return f"{self.name} v{self.number}"


class TurnStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    COMPLETED = "completed", "Completed"  # the model answered without asking for more tools
    SUSPENDED = "suspended", "Suspended"  # ended waiting for an external event or a person
    STOPPED = "stopped", "Stopped"  # paused, capped, or no progress: state kept, resumable
    CANCELLED = "cancelled", "Cancelled"
    FAILED = "failed", "Failed"


ACTIVE_TURN_STATUSES = (TurnStatus.QUEUED, TurnStatus.RUNNING)


class Turn(models.Model):
    """One run of a task's worker. `generation` is the fencing token: a takeover increments it."""

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="turns")
    number = models.PositiveIntegerField()
    status = models.CharField(max_length=16, choices=TurnStatus.choices, default=TurnStatus.QUEUED)
    trigger = models.CharField(max_length=64, default="message")
    generation = models.PositiveIntegerField(default=1)
    lease_holder = models.CharField(max_length=200, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    # Our own attempt counter: django-q2 does not count attempts of hard-killed workers (DESIGN §14).
    attempts = models.PositiveIntegerField(default=0)
    enqueued_at = models.DateTimeField(null=True, blank=True)
    checkpoint = models.JSONField(default=dict, blank=True)
    stop_reason = models.CharField(max_length=64, blank=True)
    error = models.JSONField(default=dict, blank=True)
    made_progress = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["task_id", "number"]
        constraints = [
            models.UniqueConstraint(fields=["task", "number"], name="turn_unique_number"),
            # At most one queued or running turn per task.
            models.UniqueConstraint(
                fields=["task"], condition=Q(status__in=["queued", "running"]), name="turn_one_active_per_task"
            ),
        ]
        indexes = [
            # The watchdog reads running turns (few) and filters their leases. lease_expires_at stays out of
            # every index: each step renews it, and an update that changes no indexed column is a HOT update
            # (no new index entries; agents/runtime/steplog.py, make bench).
            models.Index(fields=["status"], name="turn_status"),
        ]

    def __str__(self) -> str:
        return f"turn {self.pk} of task {self.task_id} (gen {self.generation}, {self.status})"

    @property
    def is_active(self) -> bool:
        return self.status in ACTIVE_TURN_STATUSES


class ModelLease(models.Model):
    """The exact provider, model and parameters of a turn. Immutable; never a silent fallback."""

    turn = models.OneToOneField(Turn, on_delete=models.CASCADE, related_name="model_lease")
    # The profile it was copied from: where its adapter remembers what the endpoint accepts (the lease's own
    # fields, not the profile's, fix the model).
    profile = models.ForeignKey(ModelProfile, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    provider = models.CharField(max_length=32, choices=ProviderKind.choices)
    model = models.CharField(max_length=200)
    base_url = models.URLField(blank=True)
    params = models.JSONField(default=dict, blank=True)
    secret = models.ForeignKey(ProviderSecret, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    context_tokens = models.PositiveIntegerField(default=DEFAULT_CONTEXT_TOKENS)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.provider}/{self.model}"

    def save(self, *args, **kwargs):
        if self.pk is not None and not kwargs.get("force_insert"):
            raise ValueError("A model lease is immutable once created.")
        super().save(*args, **kwargs)


class Step(models.Model):
    """One model inference and the tool calls it proposed, committed in one transaction before any tool runs."""

    # Indexed by step_unique_index (turn, index): a second index on turn alone costs every step an entry.
    # No database FK: the decision statement (agents/runtime/steplog.py) inserts the step from the turn row it
    # locks, so the turn exists; a deferred FK check would lock it again at every commit (make bench: about a
    # fifth of a step). Deletes cascade through the ORM, as every on_delete does.
    turn = models.ForeignKey(Turn, on_delete=models.CASCADE, related_name="steps", db_index=False, db_constraint=False)
    index = models.PositiveIntegerField()
    # The step's place in its task (1, 2, … across turns): what read_history and history segments count in.
    number = models.PositiveIntegerField(default=0)
    generation = models.PositiveIntegerField(help_text="The generation of the worker that committed it.")
    text = models.TextField(blank=True, help_text="What the model said to the person.")
    decision = models.JSONField(default=dict, help_text="The model's tool-call intents, as returned.")
    model = models.CharField(max_length=200, help_text="The model that produced this decision.")
    prompt_tokens = models.PositiveIntegerField(default=0)
    cached_prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    # What the model was shown (DESIGN §7): the hash of the stable prefix, our token estimate of the whole
    # request, and the tools it could call, in the order it saw them.
    prefix_hash = models.CharField(max_length=64, blank=True)
    context_tokens = models.PositiveIntegerField(default=0)
    visible_tools = models.JSONField(default=list, blank=True)
    # The long-term memory it was shown (DESIGN §8): {"profile_version", "versions": [memory version ids],
    # "recall": "ok" | "timed_out" | "failed"} — what a forget follows to the outputs that relied on it.
    memory = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["turn_id", "index"]
        constraints = [models.UniqueConstraint(fields=["turn", "index"], name="step_unique_index")]

    def __str__(self) -> str:
        return f"step {self.turn_id}:{self.index}"


class ContextSegment(models.Model):
    """A summary of a run of a task's oldest steps (whole steps, never a call without its result), appended after
    the earlier ones when the history passes its high-water mark. The steps themselves stay in the log.

    When the summaries themselves grow too large, one new segment re-summarises them from step 1 on: it covers
    theirs, and the context shows only segments no later one covers (agents/runtime/history.py)."""

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="context_segments")
    number = models.PositiveIntegerField()
    from_step = models.PositiveIntegerField(help_text="The first step number it covers.")
    to_step = models.PositiveIntegerField(help_text="The last step number it covers.")
    summary = models.TextField()
    tokens = models.PositiveIntegerField(default=0, help_text="Estimated tokens of the summary as shown.")
    source_tokens = models.PositiveIntegerField(default=0, help_text="Estimated tokens of the steps it replaced.")
    summariser = models.CharField(max_length=200, help_text="The model that wrote it, or 'extractive'.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["task_id", "number"]
        constraints = [models.UniqueConstraint(fields=["task", "number"], name="context_segment_unique_number")]

    def __str__(self) -> str:
        return f"segment {self.number} of task {self.task_id} (steps {self.from_step}–{self.to_step})"


class GoalRevision(models.Model):
    """One version of what a task must deliver. Revision 1 is the brief it was created with; a follow-up that
    changes the deliverable adds the next one (a follow-up that only adds detail does not)."""

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="goal_revisions")
    revision = models.PositiveIntegerField()
    brief = models.TextField()
    reason = models.TextField(blank=True, help_text="Why the goal moved, in the words that moved it.")
    message = models.ForeignKey(
        "agents.InboxMessage", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["task_id", "revision"]
        constraints = [models.UniqueConstraint(fields=["task", "revision"], name="goal_revision_unique")]

    def __str__(self) -> str:
        return f"goal revision {self.revision} of task {self.task_id}"


class ToolCallStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    STARTED = "started", "Started"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"
    UNKNOWN = "unknown", "Outcome unknown"


FINISHED_CALL_STATUSES = (ToolCallStatus.DONE, ToolCallStatus.FAILED, ToolCallStatus.UNKNOWN)


class ToolCall(models.Model):
    """A tool call with a stable id `turn:step:index`, logged `started` before it runs."""

    # No database FKs (see Step.turn): the decision statement inserts the calls from the step it inserts.
    turn = models.ForeignKey(Turn, on_delete=models.CASCADE, related_name="tool_calls", db_constraint=False)
    # Indexed by toolcall_unique_index (step, index): a second index on step alone costs every step an entry.
    step = models.ForeignKey(
        Step, on_delete=models.CASCADE, related_name="tool_calls", db_index=False, db_constraint=False
    )
    index = models.PositiveIntegerField()
    call_id = models.CharField(max_length=64)  # unique by toolcall_unique_call_id (no LIKE index beside it)
    provider_call_id = models.CharField(max_length=200, blank=True, help_text="The id the model gave the call.")
    name = models.CharField(max_length=100)
    input = models.JSONField(default=dict)
    idempotent = models.BooleanField(default=False)
    status = models.CharField(max_length=16, choices=ToolCallStatus.choices, default=ToolCallStatus.PENDING)
    result = models.JSONField(null=True, blank=True)
    error = models.JSONField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    started_generation = models.PositiveIntegerField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["turn_id", "step_id", "index"]
        constraints = [
            models.UniqueConstraint(fields=["step", "index"], name="toolcall_unique_index"),
            models.UniqueConstraint(fields=["call_id"], name="toolcall_unique_call_id"),
        ]

    def __str__(self) -> str:
        return f"{self.call_id} {self.name} [{self.status}]"

    @property
    def is_finished(self) -> bool:
        return self.status in FINISHED_CALL_STATUSES


class InboxStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    CONSUMED = "consumed", "Consumed"
    WITHDRAWN = "withdrawn", "Withdrawn"
    REPLACED = "replaced", "Replaced"


# The source of an inbox message the runtime writes for the model (e.g. "the person declined the quote"):
# read at the task's next turn with everything else, but never a reason to start one.
RUNTIME_NOTE = "runtime"
# The source of a Flow run's result posted to a task's conversation (agents/services/flow_threads.py): the person
# sees it in the thread and the model reads it at the task's next turn, but, like a runtime note, it never starts
# one and is not the person's words (no memory evidence, never "the message that asked").
FLOW_RESULT = "flow"
QUIET_SOURCES = (RUNTIME_NOTE, FLOW_RESULT)
# The source of a person's answer to a card that carries none of their own words ("[card 4: …] The person
# confirmed; go on.", a choice): it starts the task's next turn like a message, but the person is answering the
# runtime, not iterating on a quick result nor asking for a change to it (agents/services/lightweight.py).
CARD_ANSWER = "card"


class InboxMessage(models.Model):
    """A message to a task. Delivered is not executed: `consumed_by_step` records when the model read it."""

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="inbox")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    source = models.CharField(max_length=32, default="person")
    text = models.TextField()
    status = models.CharField(max_length=16, choices=InboxStatus.choices, default=InboxStatus.PENDING)
    consumed_by_step = models.ForeignKey(
        Step, null=True, blank=True, on_delete=models.SET_NULL, related_name="consumed_messages"
    )
    replaces = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="replaced_by"
    )
    # A Flow run's result (source FLOW_RESULT): which run, and which of its ends — posted once per end.
    flow_run = models.ForeignKey(FlowRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    flow_run_end = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    consumed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["task_id", "id"]
        indexes = [models.Index(fields=["task", "status"], name="inbox_task_status")]
        constraints = [
            models.UniqueConstraint(
                fields=["flow_run", "flow_run_end"],
                condition=Q(flow_run__isnull=False),
                name="inbox_flow_run_end_once",
            )
        ]

    def __str__(self) -> str:
        return f"inbox {self.pk} → task {self.task_id} [{self.status}]"


class CardKind(models.TextChoices):
    CONFIRM = "confirm", "Confirm or adjust"
    CHOICE = "choice", "Choose an option"
    CLARIFY = "clarify", "Clarification"
    QUOTE = "quote", "Quote approval"
    RESULT = "result", "Result of a quick request"


class CardStatus(models.TextChoices):
    OPEN = "open", "Open"
    RESOLVED = "resolved", "Resolved"
    CANCELLED = "cancelled", "Cancelled"


class Card(models.Model):
    """A decision shown to a person (DESIGN §5): a persisted checkpoint, resolved only by a person's action."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="cards")
    task = models.ForeignKey(Task, null=True, blank=True, on_delete=models.CASCADE, related_name="cards")
    turn = models.ForeignKey(Turn, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    kind = models.CharField(max_length=16, choices=CardKind.choices)
    status = models.CharField(max_length=16, choices=CardStatus.choices, default=CardStatus.OPEN)
    title = models.CharField(max_length=300)
    body = models.TextField(blank=True)
    options = models.JSONField(default=list, blank=True, help_text='[{"id": "...", "label": "..."}]')
    payload = models.JSONField(default=dict, blank=True, help_text="What the card is about (quote, candidates…).")
    resolution = models.JSONField(default=dict, blank=True)
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    resolved_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["workspace", "status"], name="card_ws_status")]

    def __str__(self) -> str:
        return f"card {self.pk} {self.kind} [{self.status}]"


class Route(models.TextChoices):
    DIRECT = "direct", "Direct (explicit target)"
    ANSWER = "answer", "Answered by Main"
    LIGHTWEIGHT = "lightweight", "Lightweight task"
    FOLLOW_UP = "follow_up", "Follow-up of an existing task"
    NEW_TASK = "new_task", "New task"
    CLARIFY = "clarify", "Clarification asked"
    # Not a person's message: a Flow run's result posted to Main. Never routed, never memory evidence.
    FLOW = "flow", "A Flow run's result"


class MainMessage(models.Model):
    """A message the person sent to Main, and how it was routed (DESIGN §2)."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="main_messages")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    text = models.TextField()
    language = models.CharField(max_length=16, default="en")
    route = models.CharField(max_length=16, choices=Route.choices)
    task = models.ForeignKey(Task, null=True, blank=True, on_delete=models.SET_NULL, related_name="main_messages")
    card = models.ForeignKey(Card, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    candidates = models.JSONField(default=list, blank=True)
    reply = models.TextField(blank=True, help_text="Main's own answer, when it answered itself.")
    route_reason = models.CharField(
        max_length=500, blank=True, help_text="Why it went where it went, in words: the Router's own reason."
    )
    router_model = models.CharField(max_length=200, blank=True)
    router_prompt_chars = models.PositiveIntegerField(default=0)
    # The tasks the Router opened before deciding, in order: [{"task": id, "result": opened | not_found |
    # refused | invalid}] (agents/main/lookups.py). Read-only look-ups; recorded so a routing can be audited.
    router_lookups = models.JSONField(default=list, blank=True)
    # How the Router's answer was read (agents/main/router.py RouterResult.call): {"call_format": "structured" |
    # "fenced_json" | "hermes" | "bare_json" | "mistral", "repaired", "tool_choice", "error"}; {} for the scripted one.
    router_call = models.JSONField(default=dict, blank=True)
    # Sent through the open API (an API key): paid operations it leads to are confirmed one by one (DESIGN §5).
    api_request = models.BooleanField(default=False)
    # The key that sent it (shown by its name in the chat; null for a person, or once the key is deleted).
    api_key = models.ForeignKey("workspace.ApiKey", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    # Why nothing ran although a target was found (task archived or cancelled, artifact deleted, card closed).
    refusal = models.CharField(max_length=32, blank=True)
    inbox_message = models.ForeignKey(
        InboxMessage, null=True, blank=True, on_delete=models.SET_NULL, related_name="+", help_text="What it became."
    )
    # Route FLOW: the run whose result this is, and which of its ends — posted once per end.
    flow_run = models.ForeignKey(FlowRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    flow_run_end = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["workspace_id", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["flow_run", "flow_run_end"],
                condition=Q(flow_run__isnull=False),
                name="main_flow_run_end_once",
            )
        ]

    def __str__(self) -> str:
        return f"main message {self.pk} → {self.route}"
