from django.urls import reverse
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from lomote.kernel.serializers import StrictSerializer
from workspace.models import (
    ApiKey,
    Artifact,
    ArtifactKind,
    ArtifactVersion,
    AssetCollection,
    Event,
    GenerationJob,
    JobStatus,
    Membership,
    Role,
    Workspace,
)


class WorkspaceOut(serializers.ModelSerializer):
    role = serializers.SerializerMethodField(help_text="The caller's role in this workspace.")

    class Meta:
        model = Workspace
        fields = ["id", "name", "created_at", "last_event_seq", "role"]

    def get_role(self, workspace) -> str:
        return self.context["roles"].get(workspace.pk, "")


class WorkspaceIn(StrictSerializer):
    name = serializers.CharField(max_length=120, min_length=1, trim_whitespace=True)


class MembershipOut(serializers.ModelSerializer):
    """A member as the caller may see them: an email address only to the workspace's owners (and each person their
    own), given as context `access` — editors and viewers collaborate by username."""

    username = serializers.CharField(source="user.username", read_only=True)
    email = serializers.SerializerMethodField(
        help_text="The member's email: only owners see the others' (null for editors, viewers and their keys)."
    )
    user_id = serializers.IntegerField(read_only=True)

    class Meta:
        model = Membership
        fields = ["id", "user_id", "username", "email", "role", "created_at"]

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_email(self, membership) -> str | None:
        access = self.context["access"]
        own = access.user is not None and access.user.pk == membership.user_id
        return membership.user.email if access.role == Role.OWNER or own else None


class MembershipCreateIn(StrictSerializer):
    user = serializers.CharField(max_length=254, help_text="Username or email of an existing user.")
    role = serializers.ChoiceField(choices=Role.choices, default=Role.VIEWER)


class MembershipUpdateIn(StrictSerializer):
    role = serializers.ChoiceField(choices=Role.choices)


class ApiKeyOut(serializers.ModelSerializer):
    prefix = serializers.SerializerMethodField()
    is_active = serializers.BooleanField(read_only=True)

    class Meta:
        model = ApiKey
        fields = ["id", "name", "role", "prefix", "is_active", "created_at", "last_used_at", "revoked_at"]

    def get_prefix(self, key) -> str:
        return f"{ApiKey.PREFIX}{key.prefix}"


class ApiKeyCreatedOut(ApiKeyOut):
    key = serializers.SerializerMethodField(help_text="The secret. Shown once, never again.")

    class Meta(ApiKeyOut.Meta):
        fields = [*ApiKeyOut.Meta.fields, "key"]

    def get_key(self, key) -> str:
        return self.context["raw_key"]


class ApiKeyCreateIn(StrictSerializer):
    name = serializers.CharField(max_length=120, min_length=1)
    role = serializers.ChoiceField(choices=Role.api_key_choices(), default=Role.EDITOR)


class EventOut(serializers.ModelSerializer):
    at = serializers.DateTimeField(source="created_at")

    class Meta:
        model = Event
        fields = ["seq", "kind", "data", "at"]


class EventPageOut(serializers.Serializer):
    events = EventOut(many=True)
    last_seq = serializers.IntegerField(help_text="Pass as `after` to continue.")
    has_more = serializers.BooleanField()


class EventQueryIn(StrictSerializer):
    # Sequences are 64-bit: a larger `after` is a client bug, not a position in the log.
    after = serializers.IntegerField(min_value=0, max_value=2**63 - 1, default=0)
    limit = serializers.IntegerField(min_value=1, max_value=500, default=200)


# --- generation jobs and artifacts ---------------------------------------------------------------------------


class GenerationJobOut(serializers.ModelSerializer):
    artifact_id = serializers.IntegerField(
        read_only=True, allow_null=True, help_text="The artifact the result went (or goes) to."
    )
    artifact_version_id = serializers.IntegerField(read_only=True, allow_null=True, help_text="The result, once done.")
    artifact_version_number = serializers.SerializerMethodField()
    source_artifact_id = serializers.IntegerField(
        read_only=True, allow_null=True, help_text="The artifact the result is made from (a sketch, a photo), if any."
    )

    class Meta:
        model = GenerationJob
        fields = [
            "id",
            "kind",
            "provider",
            "prompt",
            "params",
            "status",
            "progress",
            "idempotency_key",
            "task_id",
            "turn_id",
            "artifact_id",
            "artifact_version_id",
            "artifact_version_number",
            "source_artifact_id",
            "error",
            "created_at",
            "submitted_at",
            "last_event_at",
            "finished_at",
        ]

    def get_artifact_version_number(self, job) -> int | None:
        return job.artifact_version.number if job.artifact_version_id else None


class GenerationJobQueryIn(StrictSerializer):
    status = serializers.ChoiceField(choices=JobStatus.choices, required=False)
    task = serializers.IntegerField(min_value=1, max_value=2**63 - 1, required=False)
    limit = serializers.IntegerField(min_value=1, max_value=500, required=False)
    offset = serializers.IntegerField(min_value=0, required=False)


class ArtifactAuthorOut(serializers.Serializer):
    """Who wrote a version: a person (by id and username), a task during one of its turns, or the system."""

    type = serializers.ChoiceField(choices=["user", "task", "system"])
    id = serializers.IntegerField(required=False, help_text="The person's user id (type user).")
    username = serializers.CharField(required=False, help_text="The person's username (type user).")
    task = serializers.IntegerField(required=False, help_text="The authoring task (type task).")
    turn = serializers.IntegerField(required=False, allow_null=True, help_text="The task's turn (type task).")

    def to_representation(self, instance: dict) -> dict:
        # Only the keys this kind of author has (a person has no `turn`, not a null one).
        return {key: value for key, value in instance.items() if key in self.fields}


class ArtifactVersionOut(serializers.ModelSerializer):
    author = ArtifactAuthorOut(read_only=True)
    has_file = serializers.SerializerMethodField()
    file_url = serializers.SerializerMethodField(help_text="Where the version's file (or text) is served.")

    class Meta:
        model = ArtifactVersion
        fields = ["number", "media_type", "meta", "author", "has_file", "file_url", "created_at"]

    def get_has_file(self, version) -> bool:
        return bool(version.file)

    def get_file_url(self, version) -> str:
        artifact = version.artifact
        return reverse(
            "artifact-version-file",
            kwargs={"workspace_id": artifact.workspace_id, "artifact_id": artifact.pk, "number": version.number},
        )


class ArtifactOut(serializers.ModelSerializer):
    versions = serializers.SerializerMethodField()

    class Meta:
        model = Artifact
        fields = [
            "id",
            "kind",
            "title",
            "description",
            "tags",
            "current_version",
            "created_by_task_id",
            "created_at",
            "updated_at",
            "versions",
        ]

    @extend_schema_field(ArtifactVersionOut(many=True))
    def get_versions(self, artifact) -> list[dict]:
        versions = artifact.versions.select_related("author_user").order_by("-number")
        for version in versions:
            version.artifact = artifact
        return ArtifactVersionOut(versions, many=True).data


# --- documents and Flows (OCC writes) ----------------------------------------------------------------------


class ArtifactCreateIn(serializers.Serializer):
    kind = serializers.ChoiceField(choices=["document", "flow"])
    title = serializers.CharField(max_length=300)
    description = serializers.CharField(required=False, allow_blank=True, default="", max_length=5000)
    content = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=2_000_000, trim_whitespace=False
    )
    graph = serializers.JSONField(required=False, help_text='A Flow: {"nodes": {...}, "edges": [...], "start": id}.')


class DocumentWriteIn(serializers.Serializer):
    base_version = serializers.IntegerField(min_value=1, help_text="The version this rewrite is based on.")
    content = serializers.CharField(allow_blank=True, max_length=2_000_000, trim_whitespace=False)


class FragmentEditIn(serializers.Serializer):
    find = serializers.CharField(max_length=20_000, trim_whitespace=False)
    replace = serializers.CharField(allow_blank=True, max_length=200_000, trim_whitespace=False)


class DocumentEditsIn(serializers.Serializer):
    base_version = serializers.IntegerField(min_value=1)
    edits = FragmentEditIn(many=True, allow_empty=False, max_length=100)


class FlowEditsIn(serializers.Serializer):
    base_version = serializers.IntegerField(min_value=1)
    node_edits = serializers.DictField(
        child=serializers.JSONField(),
        required=False,
        default=dict,
        help_text='{node_id: {"params": {...}} | {"delete": true}}',
    )
    add_nodes = serializers.DictField(child=serializers.JSONField(), required=False, default=dict)
    add_edges = serializers.ListField(
        child=serializers.ListField(child=serializers.CharField(), min_length=2, max_length=2),
        required=False,
        default=list,
    )
    remove_edges = serializers.ListField(
        child=serializers.ListField(child=serializers.CharField(), min_length=2, max_length=2),
        required=False,
        default=list,
    )
    start = serializers.CharField(
        required=False, max_length=64, help_text="The input node a run starts at (a text_input with no wire in)."
    )


class ArtifactRenameIn(StrictSerializer):
    title = serializers.CharField(max_length=300, help_text="What the artifact is called.")


class FlowTemplateOut(serializers.Serializer):
    name = serializers.CharField(help_text="Use it with `POST …/flow-templates/{name}/use/`.")
    title = serializers.CharField()
    description = serializers.CharField()
    params_schema = serializers.DictField(help_text="What `params` the template takes, as a JSON Schema.")


class FlowTemplateUseIn(StrictSerializer):
    title = serializers.CharField(
        required=False, max_length=300, help_text="The new Flow's title (default: the template's)."
    )
    params = serializers.DictField(
        required=False, default=dict, help_text="The template's params (its `params_schema`)."
    )


class VersionWrittenOut(serializers.Serializer):
    artifact_id = serializers.IntegerField()
    version = serializers.IntegerField()
    applied = serializers.ListField(child=serializers.CharField(), required=False, help_text="Flow nodes changed.")
    changed_since_base = serializers.ListField(
        child=serializers.CharField(), required=False, help_text="Flow nodes others changed since the base version."
    )


class FlowNodeOut(serializers.Serializer):
    type = serializers.CharField(help_text="The node type.")
    params = serializers.DictField(help_text="Its parameters.")
    version = serializers.IntegerField(required=False, help_text="The Flow version that last changed the node.")


class FlowGraphOut(serializers.Serializer):
    """A Flow version's file: its graph, as stored (workspace/flows/graph.py `graph_dump`)."""

    nodes = serializers.DictField(child=FlowNodeOut(), help_text="Nodes by id.")
    edges = serializers.ListField(
        child=serializers.ListField(child=serializers.CharField(), min_length=2, max_length=2),
        help_text="[from, to] pairs of node ids.",
    )
    start = serializers.CharField(allow_null=True, help_text="The input node a run starts at, once there is one.")


class FlowRunIn(serializers.Serializer):
    inputs = serializers.DictField(required=False, default=dict)


class FlowNodeRunOut(serializers.Serializer):
    node_id = serializers.CharField()
    type = serializers.CharField()
    status = serializers.CharField()
    output = serializers.JSONField(allow_null=True)
    error = serializers.JSONField(allow_null=True)
    job_id = serializers.IntegerField(allow_null=True)


class FlowRunOut(serializers.Serializer):
    id = serializers.IntegerField()
    artifact_id = serializers.IntegerField()
    flow_version = serializers.IntegerField()
    status = serializers.CharField()
    inputs = serializers.JSONField()
    outputs = serializers.JSONField(allow_null=True)
    error = serializers.JSONField(allow_null=True)
    nodes = serializers.SerializerMethodField()
    stale = serializers.SerializerMethodField()
    thread = serializers.SerializerMethodField(
        help_text='The conversation the run reads and answers in: "main", {"task": id}, or null.'
    )
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)

    @extend_schema_field(
        {
            "oneOf": [
                {"type": "string", "enum": ["main"]},
                {"type": "object", "properties": {"task": {"type": "integer"}}, "required": ["task"]},
            ],
            "nullable": True,
        }
    )
    def get_thread(self, run):
        return run.thread_ref

    def get_nodes(self, run) -> list[dict]:
        return FlowNodeRunOut(run.nodes.order_by("pk"), many=True).data

    def get_stale(self, run) -> list[str]:
        return sorted(n.node_id for n in run.nodes.all() if n.status == "stale")


class ArtifactListOut(serializers.ModelSerializer):
    media_type = serializers.CharField(
        source="current_media_type", read_only=True, default="", help_text="Of the current version."
    )

    class Meta:
        model = Artifact
        fields = [
            "id",
            "kind",
            "title",
            "description",
            "tags",
            "current_version",
            "media_type",
            "created_by_task_id",
            "updated_at",
        ]


class VersionFileQueryIn(serializers.Serializer):
    # Not strict: an <img> or a cache-busting link may add parameters of its own.
    download = serializers.BooleanField(
        required=False,
        default=False,
        help_text="`1`/`true`: sent as an attachment named `<title slug>-v<n>.<ext>` instead of inline.",
    )


class ArtifactQueryIn(StrictSerializer):
    kind = serializers.ChoiceField(choices=ArtifactKind.choices, required=False)
    q = serializers.CharField(max_length=200, required=False, allow_blank=True)
    limit = serializers.IntegerField(min_value=1, max_value=500, required=False)
    offset = serializers.IntegerField(min_value=0, required=False)


# --- uploads (multipart) ---------------------------------------------------------------------------------------

UPLOAD_FILE_HELP = (
    "The file. Its kind comes from its content, never its name: PNG, JPEG, WebP or GIF → image; MP4, MOV or "
    "WebM → video; glTF 2 (.glb, or .gltf JSON) → 3d; UTF-8 text → document (its text is the content). A name "
    "or declared type saying another kind is refused (400 `type_mismatch`), other content too (400 "
    "`unsupported_type`), and a file over its kind's limit answers 413 `too_large`."
)


class ArtifactUploadIn(StrictSerializer):
    file = serializers.FileField(help_text=UPLOAD_FILE_HELP)
    title = serializers.CharField(
        max_length=300, required=False, allow_blank=True, default="", help_text="Defaults to the file's name."
    )
    description = serializers.CharField(max_length=5000, required=False, allow_blank=True, default="")
    tags = serializers.ListField(
        child=serializers.CharField(max_length=50), required=False, max_length=20, default=list, help_text="Repeat."
    )


class ArtifactVersionUploadIn(StrictSerializer):
    file = serializers.FileField(help_text=UPLOAD_FILE_HELP + " It must be of the artifact's own kind.")
    base_version = serializers.IntegerField(
        min_value=1, max_value=2**31 - 1, help_text="The version this one replaces; 409 `stale_version` if not current."
    )


# --- asset collections -----------------------------------------------------------------------------------------


class JsonIdField(serializers.IntegerField):
    """An id as a JSON integer: "12", 12.0 and true are refused, not coerced (the JSON type is the contract)."""

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)


def _ids(**kwargs) -> serializers.ListField:
    return serializers.ListField(child=JsonIdField(min_value=1, max_value=2**63 - 1), max_length=500, **kwargs)


class CollectionItemOut(serializers.Serializer):
    artifact = serializers.IntegerField(source="artifact_id")
    position = serializers.IntegerField(help_text="0 is first.")
    kind = serializers.ChoiceField(choices=ArtifactKind.choices, source="artifact.kind")
    title = serializers.CharField(source="artifact.title")
    current_version = serializers.IntegerField(source="artifact.current_version")
    added_at = serializers.DateTimeField()


class CollectionOut(serializers.ModelSerializer):
    items = serializers.SerializerMethodField(help_text="In the collection's order.")

    class Meta:
        model = AssetCollection
        fields = ["id", "name", "description", "items", "created_at", "updated_at"]

    @extend_schema_field(CollectionItemOut(many=True))
    def get_items(self, collection) -> list[dict]:
        return CollectionItemOut(collection.items.all(), many=True).data


class CollectionQueryIn(StrictSerializer):
    limit = serializers.IntegerField(min_value=1, max_value=500, required=False)
    offset = serializers.IntegerField(min_value=0, required=False)


class CollectionCreateIn(StrictSerializer):
    name = serializers.CharField(max_length=200)
    description = serializers.CharField(max_length=5000, required=False, allow_blank=True, default="")
    artifacts = _ids(required=False, default=list, help_text="Artifacts to start with, in order.")


class CollectionUpdateIn(StrictSerializer):
    name = serializers.CharField(max_length=200, required=False)
    description = serializers.CharField(max_length=5000, required=False, allow_blank=True)

    def validate(self, attrs):
        if not attrs:
            raise serializers.ValidationError("Give a new name, a new description, or both.")
        return attrs


class CollectionItemIn(StrictSerializer):
    artifact = JsonIdField(min_value=1, max_value=2**63 - 1)
    position = JsonIdField(
        min_value=0,
        max_value=2**31 - 1,
        required=False,
        help_text="Where to insert it (0 is first); the end if absent.",
    )


class CollectionOrderIn(StrictSerializer):
    artifacts = _ids(help_text="Every artifact of the collection, once, in the new order.")


# --- creative guides -----------------------------------------------------------------------------------------------


class GuideOut(serializers.Serializer):
    name = serializers.CharField()
    purpose = serializers.CharField(help_text="One line: what the guide is for. Tasks see names and purposes only.")
    builtin = serializers.BooleanField(help_text="Shipped with Lomote (read-only); else written in this workspace.")
    version = serializers.IntegerField(help_text="The current version (or the one asked for).")
    artifact_id = serializers.IntegerField(
        allow_null=True, help_text="The document holding a workspace guide's text and versions; null when built in."
    )


class GuideDetailOut(GuideOut):
    content = serializers.CharField(allow_blank=True, help_text="The guide's text (Markdown) at `version`.")


class GuideQueryIn(StrictSerializer):
    version = serializers.IntegerField(min_value=1, max_value=2**31 - 1, required=False)


class GuideCreateIn(StrictSerializer):
    name = serializers.RegexField(
        r"^[a-z0-9]+(?:-[a-z0-9]+)*$",
        max_length=60,
        help_text="Lower-case letters, digits and single hyphens: poster-layout. A built-in guide's name makes this "
        "workspace's own version of it.",
    )
    purpose = serializers.CharField(max_length=200, help_text="One line: what kind of work the guide is for.")
    content = serializers.CharField(max_length=100_000, trim_whitespace=False, help_text="The guide (Markdown).")


class GuideUpdateIn(StrictSerializer):
    purpose = serializers.CharField(max_length=200, required=False)
    base_version = serializers.IntegerField(
        min_value=1, max_value=2**31 - 1, required=False, help_text="The version a text change is based on."
    )
    content = serializers.CharField(max_length=100_000, trim_whitespace=False, required=False)
    edits = FragmentEditIn(many=True, allow_empty=False, max_length=100, required=False)

    def validate(self, attrs):
        if not ({"purpose", "content", "edits"} & set(attrs)):
            raise serializers.ValidationError("Give a new purpose, new content or edits.")
        if "content" in attrs and "edits" in attrs:
            raise serializers.ValidationError({"edits": ["Give the whole new content or edits, not both."]})
        if ("content" in attrs or "edits" in attrs) and "base_version" not in attrs:
            raise serializers.ValidationError({"base_version": ["Name the version your change is based on."]})
        return attrs
