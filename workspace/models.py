import hashlib
import hmac

from django.conf import settings
from django.db import models
from django.db.models import Q


class Role(models.TextChoices):
    VIEWER = "viewer", "Viewer"
    EDITOR = "editor", "Editor"
    OWNER = "owner", "Owner"

    @classmethod
    def api_key_choices(cls) -> list[tuple[str, str]]:
        """API keys act as viewer or editor, never owner."""
        return [(cls.VIEWER.value, cls.VIEWER.label), (cls.EDITOR.value, cls.EDITOR.label)]


ROLE_RANK = {Role.VIEWER: 1, Role.EDITOR: 2, Role.OWNER: 3}


def role_at_least(role: str, required: str) -> bool:
    return ROLE_RANK[Role(role)] >= ROLE_RANK[Role(required)]


class Workspace(models.Model):
    name = models.CharField(max_length=120)
    # No database FK: the event sequence below is updated several times in one transaction, and PostgreSQL
    # re-checks an unchanged foreign key on every update after the first (a locking query on auth_user at
    # commit, per event). SET_NULL is applied by the ORM, as every on_delete is.
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_constraint=False,
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # Last event sequence handed out. Incremented under a row lock held to commit, so sequences are
    # gapless and appear in commit order: a client that saw N can never later miss N-1.
    last_event_seq = models.BigIntegerField(default=0, editable=False)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return self.name


class Membership(models.Model):
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.VIEWER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["workspace", "user"], name="membership_unique_user")]

    def __str__(self) -> str:
        return f"{self.user} · {self.role} in {self.workspace}"


class ApiKey(models.Model):
    """A workspace-scoped credential. Only a SHA-256 digest is stored; the key is shown once.

    Keys are 256-bit random secrets, so a fast digest is enough (no dictionary attack applies); the
    public prefix finds the row without scanning.
    """

    PREFIX = "lmk_"

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=120)
    role = models.CharField(max_length=16, choices=Role.api_key_choices(), default=Role.EDITOR)
    prefix = models.CharField(max_length=16, unique=True)
    digest = models.CharField(max_length=64)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        verbose_name = "API key"

    def __str__(self) -> str:
        return f"{self.name} ({self.PREFIX}{self.prefix}…)"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None

    @staticmethod
    def digest_of(raw_key: str) -> str:
        return hashlib.sha256(raw_key.encode()).hexdigest()

    def matches(self, raw_key: str) -> bool:
        return hmac.compare_digest(self.digest, self.digest_of(raw_key))


class IdempotentRequest(models.Model):
    """A request sent with an `Idempotency-Key` header and the answer it got (workspace/services/idempotency.py).

    One row per (workspace, principal, key), inserted and committed before the work: a repeat finds it and gets
    the stored answer, or 409 when its method, path or body (`fingerprint`) differ. `response_status` is None
    while the first request runs."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    # "user:<id>" or "api_key:<id>": a key belongs to whoever sent it, so two callers never share an answer.
    principal = models.CharField(max_length=40)
    key = models.CharField(max_length=255)
    fingerprint = models.CharField(max_length=64)  # SHA-256 of method, path and canonical JSON body
    request = models.CharField(max_length=300)  # "POST /api/v1/…", for people reading the table
    response_status = models.PositiveSmallIntegerField(null=True, blank=True)
    response_body = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["workspace", "principal", "key"], name="idempotent_request_unique_key"),
        ]

    def __str__(self) -> str:
        return f"{self.principal} {self.key}"

    @property
    def finished(self) -> bool:
        return self.response_status is not None


class Event(models.Model):
    """One entry of a workspace's realtime log: the truth that WebSocket pushes only hint at."""

    # Indexed by event_unique_seq (workspace, seq): a second index on workspace alone costs every event an entry.
    # No database FK: every event is inserted by the statement that takes its sequence from the workspace row it
    # locks (workspace/services/events.py), so the row exists; deletes cascade through the ORM, as all do.
    workspace = models.ForeignKey(
        Workspace, on_delete=models.CASCADE, related_name="events", db_index=False, db_constraint=False
    )
    seq = models.BigIntegerField()
    kind = models.CharField(max_length=64)
    data = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["workspace", "seq"]
        constraints = [
            models.UniqueConstraint(fields=["workspace", "seq"], name="event_unique_seq"),
            models.CheckConstraint(condition=Q(seq__gt=0), name="event_seq_positive"),
        ]

    def __str__(self) -> str:
        return f"#{self.seq} {self.kind}"

    def as_message(self) -> dict:
        return {
            "seq": self.seq,
            "kind": self.kind,
            "data": self.data,
            "at": self.created_at.isoformat(),
        }


class ArtifactKind(models.TextChoices):
    IMAGE = "image", "Image"
    VIDEO = "video", "Video"
    MODEL_3D = "3d", "3D asset"
    DOCUMENT = "document", "Document"
    ASSET_COLLECTION = "asset_collection", "Asset collection"
    FLOW = "flow", "Flow"


# Kinds whose versions hold their content as text (documents; Flows and collections as JSON). The others
# hold a file and describe it in `meta`.
TEXT_ARTIFACT_KINDS = frozenset({ArtifactKind.DOCUMENT, ArtifactKind.FLOW, ArtifactKind.ASSET_COLLECTION})

# The media types a version's file is served with, per kind: what uploads are sniffed as (workspace/sniffing.py),
# what the providers make (a procedural video is an animated WebP or GIF) and the text kinds' own. The API
# schema declares exactly these; a version holding any other type (a webhook provider may name its own, an
# asset collection's JSON has no published shape) is served as UNDECLARED_MEDIA_TYPE.
SERVED_MEDIA_TYPES: dict[str, tuple[str, ...]] = {
    ArtifactKind.IMAGE: ("image/png", "image/jpeg", "image/webp", "image/gif"),
    ArtifactKind.VIDEO: ("video/mp4", "video/quicktime", "video/webm", "image/webp", "image/gif"),
    ArtifactKind.MODEL_3D: ("model/gltf-binary", "model/gltf+json"),
    ArtifactKind.DOCUMENT: ("text/markdown", "text/plain"),
    ArtifactKind.FLOW: ("application/json",),
    ArtifactKind.ASSET_COLLECTION: (),
}
UNDECLARED_MEDIA_TYPE = "application/octet-stream"


class Artifact(models.Model):
    """A work with its own identity, independent of conversations and tasks (DESIGN §9).

    `current_version` is the optimistic-concurrency token: a write names the version it was based on and
    is refused when another write got there first (workspace/services/artifacts.py).
    """

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="artifacts")
    kind = models.CharField(max_length=32, choices=ArtifactKind.choices)
    title = models.CharField(max_length=300)
    description = models.TextField(blank=True)
    tags = models.JSONField(default=list, blank=True)
    current_version = models.PositiveIntegerField(default=0)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # A plain id, not a foreign key: the workspace app never imports agents (dependencies point one way).
    created_by_task_id = models.PositiveBigIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    deleted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-updated_at", "-id"]
        indexes = [
            models.Index(fields=["workspace", "kind"], name="artifact_ws_kind"),
            models.Index(fields=["workspace", "-updated_at"], name="artifact_ws_updated"),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} #{self.pk} {self.title} (v{self.current_version})"

    @property
    def is_deleted(self) -> bool:
        return self.deleted_at is not None

    @property
    def is_text(self) -> bool:
        return self.kind in TEXT_ARTIFACT_KINDS


def artifact_file_path(version: "ArtifactVersion", filename: str) -> str:
    artifact = version.artifact
    return f"artifacts/{artifact.workspace_id}/{artifact.pk}/v{version.number}/{filename}"


class ArtifactVersion(models.Model):
    """One immutable version of an artifact, authored by a person or by a task during one of its turns."""

    artifact = models.ForeignKey(Artifact, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    content = models.TextField(blank=True)
    file = models.FileField(upload_to=artifact_file_path, max_length=500, null=True, blank=True)
    media_type = models.CharField(max_length=100, blank=True)
    meta = models.JSONField(default=dict, blank=True)
    author_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    author_task_id = models.PositiveBigIntegerField(null=True, blank=True)
    author_turn_id = models.PositiveBigIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["artifact", "number"]
        constraints = [
            models.UniqueConstraint(fields=["artifact", "number"], name="artifact_version_unique_number"),
            models.CheckConstraint(condition=Q(number__gt=0), name="artifact_version_number_positive"),
        ]

    def __str__(self) -> str:
        return f"artifact {self.artifact_id} v{self.number}"

    def save(self, *args, **kwargs):
        if self.pk is not None and not kwargs.get("force_insert"):
            raise ValueError("An artifact version is immutable once created.")
        super().save(*args, **kwargs)

    @property
    def author(self) -> dict:
        if self.author_task_id is not None:
            return {"type": "task", "task": self.author_task_id, "turn": self.author_turn_id}
        if self.author_user_id is not None:
            # The person by name as well (the studio shows names, not ids); the same shape as an event's `by`.
            return {"type": "user", "id": self.author_user_id, "username": self.author_user.get_username()}
        return {"type": "system"}


# --- asynchronous generation (DESIGN §4) -------------------------------------------------------------------


class GenerationKind(models.TextChoices):
    IMAGE = "image", "Image"
    VIDEO = "video", "Video"
    MODEL_3D = "3d", "3D asset"


class JobStatus(models.TextChoices):
    SUBMITTING = "submitting", "Submitting"
    SUBMITTED = "submitted", "Submitted"
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"
    TIMED_OUT = "timed_out", "Timed out"


TERMINAL_JOB_STATUSES = frozenset({JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.TIMED_OUT})


class GenerationJob(models.Model):
    """One request to a generation provider, from submission to its result (workspace/transitions.py).

    `idempotency_key` is the caller's stable id for the call (`turn:step:call` for agent tools): a repeated
    submission returns this row and never reaches the provider again. `upstream_id` is the provider's id
    for the job, stored the moment the provider returns it; a row still `submitting` has none, and its
    submission is uncertain. `artifact` is the artifact the result goes to (named at submission to add a
    version to an existing one, else set on success); `artifact_version` is the result itself.
    """

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="generation_jobs")
    kind = models.CharField(max_length=16, choices=GenerationKind.choices)
    provider = models.CharField(max_length=64)
    prompt = models.TextField()
    params = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=16, choices=JobStatus.choices, default=JobStatus.SUBMITTING)
    progress = models.PositiveSmallIntegerField(default=0)
    upstream_id = models.CharField(max_length=200, blank=True)
    idempotency_key = models.CharField(max_length=200)
    # Plain ids, not foreign keys: the workspace app never imports agents (dependencies point one way).
    task_id = models.PositiveBigIntegerField(null=True, blank=True)
    turn_id = models.PositiveBigIntegerField(null=True, blank=True)
    artifact = models.ForeignKey(
        Artifact, null=True, blank=True, on_delete=models.SET_NULL, related_name="generation_jobs"
    )
    # The artifact's current version when the job was submitted to add a version to it: what it derives from.
    base_version = models.PositiveIntegerField(null=True, blank=True)
    artifact_version = models.ForeignKey(
        ArtifactVersion, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    error = models.JSONField(null=True, blank=True)
    last_event_at = models.DateTimeField(null=True, blank=True)
    polled_at = models.DateTimeField(null=True, blank=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["workspace", "idempotency_key"], name="generation_job_unique_key"),
            models.UniqueConstraint(
                fields=["provider", "upstream_id"],
                condition=~Q(upstream_id=""),
                name="generation_job_unique_upstream",
            ),
            models.CheckConstraint(condition=Q(progress__lte=100), name="generation_job_progress_max_100"),
        ]
        indexes = [
            models.Index(fields=["workspace", "status"], name="generation_job_ws_status"),
            models.Index(fields=["workspace", "task_id"], name="generation_job_ws_task"),
            models.Index(fields=["status", "last_event_at"], name="generation_job_status_event"),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} job #{self.pk} via {self.provider} ({self.status})"

    @property
    def is_terminal(self) -> bool:
        return self.status in TERMINAL_JOB_STATUSES

    @property
    def source_artifact_id(self) -> int | None:
        """The workspace's artifact this job makes its result from (a person's sketch or photo), recorded in its
        params at submission; its provenance names it among what the result derives from."""
        source = (self.params or {}).get("source_artifact_id")
        return source if isinstance(source, int) and not isinstance(source, bool) else None


class WebhookDelivery(models.Model):
    """A webhook delivery we accepted. Its id is unique: a replayed delivery finds it and changes nothing."""

    delivery_id = models.CharField(max_length=200, unique=True)
    provider = models.CharField(max_length=64)
    job = models.ForeignKey(GenerationJob, on_delete=models.CASCADE, related_name="webhook_deliveries")
    received_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-received_at", "-id"]
        verbose_name_plural = "webhook deliveries"

    def __str__(self) -> str:
        return f"{self.provider} delivery {self.delivery_id}"


# --- change notices (DESIGN §9) ------------------------------------------------------------------------------


class ArtifactView(models.Model):
    """The version of an artifact a task last saw (read or wrote). Plain task id: workspace never imports agents."""

    artifact = models.ForeignKey(Artifact, on_delete=models.CASCADE, related_name="views")
    viewer_task_id = models.PositiveBigIntegerField()
    seen_version = models.PositiveIntegerField()
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["artifact", "viewer_task_id"]
        constraints = [
            models.UniqueConstraint(fields=["artifact", "viewer_task_id"], name="artifact_view_unique_task"),
        ]

    def __str__(self) -> str:
        return f"task {self.viewer_task_id} saw artifact {self.artifact_id} v{self.seen_version}"


class ChangeNotice(models.Model):
    """Someone else changed an artifact a task had seen: waits, persisted, for that task's next cycle.

    At most one undelivered notice per (artifact, task): a further change widens it (v3 → v5) instead of
    stacking notices. Delivered once the context builder showed it, or once the task saw the new version.
    """

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="change_notices")
    artifact = models.ForeignKey(Artifact, on_delete=models.CASCADE, related_name="change_notices")
    task_id = models.PositiveBigIntegerField()
    from_version = models.PositiveIntegerField()
    to_version = models.PositiveIntegerField()
    summary = models.TextField()
    changed_nodes = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["artifact", "task_id"],
                condition=Q(delivered_at__isnull=True),
                name="change_notice_one_pending",
            ),
        ]
        indexes = [models.Index(fields=["task_id", "delivered_at"], name="change_notice_task_pending")]

    def __str__(self) -> str:
        return f"task {self.task_id}: artifact {self.artifact_id} v{self.from_version} → v{self.to_version}"


# --- executable Flows (seed 002; DESIGN §9) -------------------------------------------------------------------


class FlowRunStatus(models.TextChoices):
    # Created and priced, no node enqueued: waits for its paid nodes to be authorised and held.
    AWAITING_APPROVAL = "awaiting_approval", "Awaiting approval"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"


class FlowThread(models.TextChoices):
    """The conversation a run reads its input from and posts its result back to (agents owns the messages)."""

    NONE = "", "None"
    MAIN = "main", "The workspace's Main thread"
    TASK = "task", "A task's conversation"


class NodeStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"
    STALE = "stale", "Stale"
    SKIPPED = "skipped", "Skipped"


TERMINAL_NODE_STATUSES = frozenset({NodeStatus.DONE, NodeStatus.FAILED, NodeStatus.SKIPPED, NodeStatus.STALE})


class FlowRun(models.Model):
    """One execution of a Flow artifact's version, node by node as django-q jobs (workspace/flows/runner.py)."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="flow_runs")
    artifact = models.ForeignKey(Artifact, on_delete=models.CASCADE, related_name="flow_runs")
    flow_version = models.PositiveIntegerField()
    graph = models.JSONField(help_text="The Flow version's graph, as it was when the run started.")
    inputs = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=20, choices=FlowRunStatus.choices, default=FlowRunStatus.RUNNING)
    outputs = models.JSONField(null=True, blank=True)
    error = models.JSONField(null=True, blank=True)
    started_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    started_by_task_id = models.PositiveBigIntegerField(null=True, blank=True)
    # The caller's key for the request that started the run: a repeat returns this run (workspace-scoped).
    idempotency_key = models.CharField(max_length=200, null=True, blank=True)
    # A run over a conversation: its input is that thread's recent messages, and its result is posted back to
    # it when it ends (agents reacts to FLOW_RUN_ENDED). A task id, not a key: workspace cannot import agents.
    thread = models.CharField(max_length=8, choices=FlowThread.choices, default=FlowThread.NONE, blank=True)
    thread_task_id = models.PositiveBigIntegerField(null=True, blank=True)
    # How many times the run has ended: a retry or a stale re-run ends it again, each end posted once.
    ends = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["workspace", "idempotency_key"],
                condition=Q(idempotency_key__isnull=False),
                name="flow_run_unique_idempotency_key",
            ),
            # A task thread names its task; the others name none.
            models.CheckConstraint(
                condition=Q(thread=FlowThread.TASK, thread_task_id__isnull=False)
                | (~Q(thread=FlowThread.TASK) & Q(thread_task_id__isnull=True)),
                name="flow_run_thread_task",
            ),
        ]

    def __str__(self) -> str:
        return f"flow run #{self.pk} of artifact {self.artifact_id} v{self.flow_version} ({self.status})"

    @property
    def thread_ref(self) -> str | dict[str, int] | None:
        """The thread as the API and the events name it: "main", {"task": id}, or None."""
        if self.thread == FlowThread.MAIN:
            return "main"
        if self.thread == FlowThread.TASK:
            return {"task": self.thread_task_id}
        return None


class FlowNodeRun(models.Model):
    """One node of a run: its status, output, the artifact versions it consumed and the job it waits for."""

    run = models.ForeignKey(FlowRun, on_delete=models.CASCADE, related_name="nodes")
    node_id = models.CharField(max_length=64)
    type = models.CharField(max_length=32)
    status = models.CharField(max_length=16, choices=NodeStatus.choices, default=NodeStatus.PENDING)
    # Set when the scheduler handed the node to the queue; a worker claims it pending → running.
    enqueued_at = models.DateTimeField(null=True, blank=True)
    output = models.JSONField(null=True, blank=True)
    # {"<artifact id>": version} of every artifact version the output derives from (stale marking).
    consumed = models.JSONField(default=dict, blank=True)
    job_id = models.PositiveBigIntegerField(null=True, blank=True)
    # Raised by a retry after a failure: a paid node's order and job are keyed by (run, node, attempt).
    attempt = models.PositiveSmallIntegerField(default=1)
    error = models.JSONField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["run", "id"]
        constraints = [models.UniqueConstraint(fields=["run", "node_id"], name="flow_node_run_unique_node")]
        indexes = [models.Index(fields=["job_id"], name="flow_node_run_job")]

    def __str__(self) -> str:
        return f"run {self.run_id} node {self.node_id} ({self.status})"

    @property
    def job_key(self) -> str:
        """The idempotency key of this attempt's generation job and of its order in billing."""
        return flow_node_job_key(self.run_id, self.node_id, self.attempt)


FLOW_JOB_KEY_PREFIX = "flow-run:"


def flow_node_job_key(run_id: int, node_id: str, attempt: int) -> str:
    return f"{FLOW_JOB_KEY_PREFIX}{run_id}:{node_id}:{attempt}"


class Embedding(models.Model):
    """A search vector of one object (a task, an artifact, a memory…) under one embedding model (workspace/search).

    Rows are keyed by the model that made them: vectors of two models are never compared, and a query under a
    new model re-embeds what it reads (lazily, or all at once with `manage.py reembed`). The vector is float32
    little-endian bytes, so the same row works on PostgreSQL and SQLite; similarity is computed with numpy.
    Rows are derived data: deleting them loses nothing that cannot be recomputed from the objects.
    """

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=32)
    object_id = models.PositiveBigIntegerField()
    model_id = models.CharField(max_length=200)
    dims = models.PositiveIntegerField()
    vector = models.BinaryField()
    text_hash = models.CharField(max_length=64, help_text="Hash of the text embedded: unchanged text is not redone.")
    updated_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["workspace", "kind", "object_id", "model_id"], name="embedding_unique_object_model"
            )
        ]
        # No other index: every read names its objects, and this constraint's index (workspace, kind, object)
        # is what PostgreSQL must use for them; an index led by the model made it scan a workspace per object.

    def __str__(self) -> str:
        return f"{self.kind} {self.object_id} under {self.model_id}"


# --- asset collections (DESIGN §9; issue 15 item 4) -------------------------------------------------------------


class AssetCollection(models.Model):
    """A named, ordered set of the workspace's artifacts: a mood board, the posters to send to the printer.

    The order is its items' positions, 0 to n-1 without gaps, kept by workspace/services/collections.py under
    this row's lock. A deleted artifact leaves every collection in the deletion's transaction.
    """

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="asset_collections")
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at", "-id"]
        indexes = [models.Index(fields=["workspace", "-updated_at"], name="asset_collection_ws_updated")]

    def __str__(self) -> str:
        return f"Collection #{self.pk} {self.name}"


class AssetCollectionItem(models.Model):
    collection = models.ForeignKey(AssetCollection, on_delete=models.CASCADE, related_name="items")
    artifact = models.ForeignKey(Artifact, on_delete=models.CASCADE, related_name="collection_items")
    position = models.PositiveIntegerField()
    added_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    added_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["collection", "position"]
        constraints = [
            models.UniqueConstraint(fields=["collection", "artifact"], name="asset_collection_item_unique_artifact"),
            models.UniqueConstraint(fields=["collection", "position"], name="asset_collection_item_unique_position"),
        ]

    def __str__(self) -> str:
        return f"collection {self.collection_id} #{self.position}: artifact {self.artifact_id}"


# --- creative guides (seed §10.1; issue 19 item 3) ---------------------------------------------------------------

GUIDE_NAME_PATTERN = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"  # a slug: "poster-layout", "video-shot-list"
MAX_GUIDE_NAME = 60
MAX_GUIDE_PURPOSE = 200


class BuiltinGuide(models.Model):
    """One shipped version of a built-in guide (workspace/guides/builtin/*.md), the same for every workspace.

    Rows are only ever added: `guides_sync` (run after every migrate) adds the next version of a guide whose file
    changed, so an output's provenance can still name, and show, the version that informed it.
    """

    name = models.CharField(max_length=MAX_GUIDE_NAME)
    version = models.PositiveIntegerField()
    purpose = models.CharField(max_length=MAX_GUIDE_PURPOSE)
    content = models.TextField()
    digest = models.CharField(
        max_length=64, help_text="SHA-256 of purpose and content: an unchanged file adds nothing."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "version"]
        constraints = [
            models.UniqueConstraint(fields=["name", "version"], name="builtin_guide_unique_version"),
            models.CheckConstraint(condition=Q(version__gt=0), name="builtin_guide_version_positive"),
        ]

    def __str__(self) -> str:
        return f"built-in guide {self.name} v{self.version}"


class Guide(models.Model):
    """A guide written by the workspace's people: a name and a one-line purpose here, its text a document
    artifact, versioned and edited like any document (workspace/services/documents.py). A workspace guide with
    a built-in guide's name is the workspace's own version of it and replaces it for the workspace's tasks."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="guides")
    name = models.CharField(max_length=MAX_GUIDE_NAME)
    purpose = models.CharField(max_length=MAX_GUIDE_PURPOSE)
    artifact = models.OneToOneField(Artifact, on_delete=models.CASCADE, related_name="guide")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["workspace", "name"], name="guide_unique_name")]

    def __str__(self) -> str:
        return f"guide {self.name} (workspace {self.workspace_id})"
