"""WebSocket credentials from the Authorization header: `Token <user token>` or `Bearer lmk_...`.

Browsers use the session cookie (AuthMiddlewareStack); other clients send a header. A header that does not
authenticate leaves an anonymous user, whatever the session says, so a bad credential is never ignored.
"""

from channels.db import database_sync_to_async
from channels.middleware import BaseMiddleware
from django.contrib.auth.models import AnonymousUser
from rest_framework.authtoken.models import Token

from workspace.authentication import principal_for_api_key, raw_key_from_header


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


class HeaderCredentialsMiddleware(BaseMiddleware):
    async def __call__(self, scope, receive, send):
        headers = dict(scope.get("headers") or [])
        header = headers.get(b"authorization")
        if header is not None:
            scope = dict(scope, user=await _principal_for(header.decode("latin-1")))
        return await super().__call__(scope, receive, send)
