from rest_framework import serializers

from lomote.serializers import StrictSerializer
from workspace.models import ApiKey, Event, Membership, Role, Workspace


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
