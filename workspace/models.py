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
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
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


class Event(models.Model):
    """One entry of a workspace's realtime log: the truth that WebSocket pushes only hint at."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="events")
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
