"""API-key authentication for REST and WebSocket clients.

A key acts for one workspace with its own role (viewer or editor); it is never a user and never an owner.
"""

from dataclasses import dataclass

from django.utils import timezone
from rest_framework import authentication, exceptions

from workspace.models import ApiKey


@dataclass(frozen=True)
class ApiKeyPrincipal:
    api_key: ApiKey
    is_authenticated: bool = True
    is_anonymous: bool = False
    is_active: bool = True
    is_staff: bool = False
    is_superuser: bool = False
    pk: None = None
    id: None = None

    @property
    def workspace_id(self) -> int:
        return self.api_key.workspace_id

    def __str__(self) -> str:
        return f"api-key:{self.api_key.prefix}"


def principal_for_api_key(raw_key: str) -> ApiKeyPrincipal | None:
    """The principal for an active key, or None. Compares digests in constant time."""
    if not raw_key.startswith(ApiKey.PREFIX):
        return None
    prefix = raw_key[len(ApiKey.PREFIX) :].split("_", 1)[0]
    key = ApiKey.objects.filter(prefix=prefix, revoked_at__isnull=True).select_related("workspace").first()
    if key is None or not key.matches(raw_key):
        return None
    # Coarse last-used stamp; a conditional update keeps this a cheap, lock-free write.
    now = timezone.now()
    if key.last_used_at is None or (now - key.last_used_at).total_seconds() > 60:
        ApiKey.objects.filter(pk=key.pk).update(last_used_at=now)
    return ApiKeyPrincipal(api_key=key)


def raw_key_from_header(value: str) -> str | None:
    scheme, _, credentials = value.partition(" ")
    if scheme.lower() == "bearer" and credentials.strip().startswith(ApiKey.PREFIX):
        return credentials.strip()
    return None


class ApiKeyAuthentication(authentication.BaseAuthentication):
    """`Authorization: Bearer lmk_...` or `X-Api-Key: lmk_...`."""

    def authenticate(self, request):
        raw = raw_key_from_header(request.META.get("HTTP_AUTHORIZATION", ""))
        raw = raw or request.META.get("HTTP_X_API_KEY") or None
        if raw is None:
            return None
        principal = principal_for_api_key(raw)
        if principal is None:
            raise exceptions.AuthenticationFailed("Invalid or revoked API key.", code="invalid_api_key")
        return principal, principal.api_key

    def authenticate_header(self, request):
        return 'Bearer realm="api"'
