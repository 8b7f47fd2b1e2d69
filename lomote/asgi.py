import json
import os

from django.conf import settings
from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lomote.settings")
if not settings.configured:
    # The web process serves each request on its own thread: its PostgreSQL connections come from a bounded
    # pool (lomote/settings.py). Workers keep one persistent connection per thread; a process whose settings are
    # already loaded (tests importing this module) is left as it is, and so are the processes it starts.
    os.environ.setdefault("LOMOTE_DB_POOL_SIZE", "20")
django_asgi_app = get_asgi_application()  # sets Django up before the routing imports models

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from lomote.routing import websocket_urlpatterns  # noqa: E402
from workspace.ws_auth import HeaderCredentialsMiddleware, origin_allowed  # noqa: E402


class OriginGuard:
    """Refuses a WebSocket handshake from a page that is not ours (workspace.ws_auth.origin_allowed) at once.

    Refused before the session is read and before any consumer runs: a flood of cross-site handshakes costs
    neither the database nor the channel layer.
    """

    def __init__(self, application):
        self.application = application

    async def __call__(self, scope, receive, send):
        if scope["type"] == "websocket" and not origin_allowed(scope):
            message = await receive()
            if message["type"] == "websocket.connect":
                await send({"type": "websocket.close"})
            return None
        return await self.application(scope, receive, send)


def leave_form_bodies_to_django() -> None:
    """Daphne's twisted request parses every multipart or url-encoded POST body itself, all in memory (a 200 MB
    upload read whole, then copied by the email parser), into arguments daphne never uses; and it answers a body
    it cannot parse with a bare 400 instead of our JSON error. Django parses the same body again, streaming it
    to disk under the upload limits (workspace/upload_guard.py): twisted's parse is switched off."""
    try:
        from daphne.http_protocol import WebRequest
    except ImportError:  # served by another ASGI server
        return
    if getattr(WebRequest, "lomote_form_parsing_off", False):
        return
    original = WebRequest.__init__

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("parsePOSTFormSubmission", False)
        original(self, *args, **kwargs)

    WebRequest.__init__ = __init__
    WebRequest.lomote_form_parsing_off = True


def refuse_oversized_bodies_early() -> None:
    """A request announcing a body larger than any request may have (workspace.upload_guard.request_body_limit: the
    largest upload and its form) is answered 413 `too_large` from its headers and the connection closed: daphne
    would otherwise receive and spool the whole body — 300 MB read, then refused — before Django sees it."""
    try:
        from daphne.http_protocol import WebRequest
    except ImportError:  # served by another ASGI server
        return
    if getattr(WebRequest, "lomote_body_limit_on", False):
        return
    from lomote.kernel.exceptions import error_body
    from workspace.services.uploads import upload_request_limit
    from workspace.upload_guard import request_body_limit

    original = WebRequest.gotLength

    def gotLength(self, length):
        limit = request_body_limit()
        if length is None or length <= limit:
            return original(self, length)
        body = json.dumps(
            error_body(
                "too_large",
                f"The request announces {length:,} bytes; uploads are at most {upload_request_limit():,} bytes.",
                {"content_length": length, "max_bytes": upload_request_limit()},
            )
        ).encode()
        head = (
            "HTTP/1.1 413 Content Too Large\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        ).encode()
        self.requestHeaders.removeHeader(b"expect")  # no "100 Continue" after the answer
        original(self, 0)  # an in-memory buffer for what came with the headers; reading stops with the close
        self.channel.transport.write(head + body)
        self.channel.loseConnection()
        return None

    WebRequest.gotLength = gotLength
    WebRequest.lomote_body_limit_on = True


def websocket_app():
    # Origin first (no Origin or a foreign one is refused), then session, then header credentials.
    return OriginGuard(AuthMiddlewareStack(HeaderCredentialsMiddleware(URLRouter(websocket_urlpatterns))))


def warm_up_search() -> None:
    """Load the offline embedding model and the classifiers that read words in the background as the server starts:
    the first message routed or artifact searched would otherwise wait for them inside its request."""
    from lomote.understanding.warm import warm_up_in_background

    warm_up_in_background()


leave_form_bodies_to_django()
refuse_oversized_bodies_early()
warm_up_search()
application = ProtocolTypeRouter({"http": django_asgi_app, "websocket": websocket_app()})
