from django.urls import reverse
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from lomote.serializers import StrictSerializer
from workspace.models import (
    ApiKey,
    Artifact,
    ArtifactVersion,
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
    username = serializers.CharField(source="user.username", read_only=True)
    email = serializers.CharField(source="user.email", read_only=True)
    user_id = serializers.IntegerField(read_only=True)

    class Meta:
        model = Membership
        fields = ["id", "user_id", "username", "email", "role", "created_at"]


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


class ArtifactVersionOut(serializers.ModelSerializer):
    author = serializers.DictField(read_only=True, help_text='{"type": "user"|"task"|"system", ...}')
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
        versions = artifact.versions.order_by("-number")
        for version in versions:
            version.artifact = artifact
        return ArtifactVersionOut(versions, many=True).data
