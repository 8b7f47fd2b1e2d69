"""WebSocket credentials from the Authorization header: `Token <user token>` or `Bearer lmk_...`.

Browsers use the session cookie (AuthMiddlewareStack); other clients send a header. A header that does not
authenticate leaves an anonymous user, whatever the session says, so a bad credential is never ignored.
`principal_from_scope` authenticates a connection's credentials afresh; the consumer calls it while
connected so a revoked key, a deleted token, a logout or a deactivated user ends the stream.

`origin_allowed(scope)` decides, before anything else, whether the page that opened the handshake may: a browser
sends its cookie to any page's WebSocket, so the Origin is the only thing telling our page from another site's.
"""

from importlib import import_module
from urllib.parse import urlsplit

from channels.auth import get_user
from channels.db import database_sync_to_async
from channels.middleware import BaseMiddleware
from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.http.request import split_domain_port, validate_host
from rest_framework.authtoken.models import Token

from workspace.authentication import ApiKeyPrincipal, principal_for_api_key, raw_key_from_header


@database_sync_to_async
def _principal_for(header: str):
    raw_key = raw_key_from_header(header)
    if raw_key is not None:
        return principal_for_api_key(raw_key) or AnonymousUser()
    scheme, _, credentials = header.partition(" ")
    if scheme.lower() == "token" and credentials.strip():
        token = Token.objects.select_related("user").filter(key=credentials.strip()).first()
        if token is not None and token.user.is_active:
            return token.user
    return AnonymousUser()


def _authorization_header(scope) -> str | None:
    """The Authorization header, None without one; "" (never valid) when sent more than once."""
    values = [value for name, value in scope.get("headers") or [] if name.lower() == b"authorization"]
    if not values:
        return None
    if len(values) > 1:
        return ""  # ambiguous: refuse rather than pick one
    return values[0].decode("latin-1")


async def principal_from_scope(scope):
    """Who the connection's credentials name right now: the Authorization header if sent, else the session."""
    header = _authorization_header(scope)
    if header is not None:
        return await _principal_for(header)
    session_key = getattr(scope.get("session"), "session_key", None)
    if not session_key:
        return AnonymousUser()
    # A fresh store re-reads the session row, so a logout or an expired session counts.
    store = import_module(settings.SESSION_ENGINE).SessionStore(session_key)
    return await get_user({"session": store})


def same_principal(first, second) -> bool:
    if isinstance(first, ApiKeyPrincipal) or isinstance(second, ApiKeyPrincipal):
        return (
            isinstance(first, ApiKeyPrincipal)
            and isinstance(second, ApiKeyPrincipal)
            and first.api_key.pk == second.api_key.pk
        )
    if first is None or second is None or not first.is_authenticated or not second.is_authenticated:
        return False
    return first.pk == second.pk


DEFAULT_PORTS = {"http": 80, "https": 443}
DEBUG_HOSTS = ["localhost", "127.0.0.1", "[::1]"]


def _origin_tuple(origin: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of an http(s) origin, the port made explicit; None for anything else ("null"…)."""
    try:
        parts = urlsplit(origin.strip())
        port = parts.port
    except ValueError:
        return None
    scheme, host = parts.scheme.lower(), (parts.hostname or "").lower()
    if scheme not in DEFAULT_PORTS or not host or parts.path not in ("", "/") or parts.query or parts.username:
        return None
    return scheme, host, port or DEFAULT_PORTS[scheme]


def _header(scope, name: bytes) -> str | None:
    """The header's value, None when it is missing or sent more than once."""
    values = [value for key, value in scope.get("headers") or [] if key.lower() == name]
    return values[0].decode("latin-1") if len(values) == 1 else None


def served_origin(scope) -> tuple[str, str, int] | None:
    """The origin of the page this server serves on the handshake's own host: its scheme (wss → https), its
    Host header, that host one of ALLOWED_HOSTS (else any site pointing its name at us would be "same origin")."""
    host = _header(scope, b"host")
    if not host:
        return None
    domain, _ = split_domain_port(host)
    allowed_hosts = settings.ALLOWED_HOSTS or (DEBUG_HOSTS if settings.DEBUG else [])
    if not domain or not validate_host(domain, allowed_hosts):
        return None
    scheme = "https" if scope.get("scheme") in ("wss", "https") else "http"
    return _origin_tuple(f"{scheme}://{host}")


def origin_allowed(scope) -> bool:
    """Whether the handshake's Origin is the served page's own (scheme, host and port all equal) or one of
    settings.LOMOTE_WS_ALLOWED_ORIGINS. No Origin, several, "null" or any other page: refused."""
    origin = _header(scope, b"origin")
    wanted = _origin_tuple(origin) if origin else None
    if wanted is None:
        return False
    allowed = {_origin_tuple(listed) for listed in settings.LOMOTE_WS_ALLOWED_ORIGINS}
    return wanted == served_origin(scope) or wanted in allowed


class HeaderCredentialsMiddleware(BaseMiddleware):
    async def __call__(self, scope, receive, send):
        header = _authorization_header(scope)
        if header is not None:
            scope = dict(scope, user=await _principal_for(header))
        return await super().__call__(scope, receive, send)
