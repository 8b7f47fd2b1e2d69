import os
from urllib.parse import urlparse

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
from channels.security.websocket import OriginValidator  # noqa: E402

from lomote.routing import websocket_urlpatterns  # noqa: E402
from workspace.ws_auth import HeaderCredentialsMiddleware  # noqa: E402


def _parsed_origin(scope):
    origin = None
    for name, value in scope.get("headers") or []:
        if name == b"origin":
            try:
                origin = urlparse(value.decode("latin1"))
            except UnicodeDecodeError:
                origin = None
    return origin


class AllowedHostsOriginValidator(OriginValidator):
    """channels' `AllowedHostsOriginValidator`, refusing the handshake itself.

    channels refuses through a consumer that first opens a channel-layer receive (a Redis connection); a
    flood of cross-site handshakes should cost the layer nothing.
    """

    def __init__(self, application):
        allowed_hosts = settings.ALLOWED_HOSTS
        if settings.DEBUG and not allowed_hosts:
            allowed_hosts = ["localhost", "127.0.0.1", "[::1]"]
        super().__init__(application, allowed_hosts)

    async def __call__(self, scope, receive, send):
        if scope["type"] == "websocket" and not self.valid_origin(_parsed_origin(scope)):
            message = await receive()
            if message["type"] == "websocket.connect":
                await send({"type": "websocket.close"})
            return None
        return await super().__call__(scope, receive, send)


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


def websocket_app():
    # Origin first (no Origin or a foreign one is refused), then session, then header credentials.
    return AllowedHostsOriginValidator(
        AuthMiddlewareStack(HeaderCredentialsMiddleware(URLRouter(websocket_urlpatterns)))
    )


def warm_up_search() -> None:
    """Load the offline embedding model in the background as the server starts (1.5–3 s): the first message
    routed or artifact searched would otherwise wait for it inside its request."""
    import threading

    from workspace.search.embedders import offline_embedder

    threading.Thread(target=offline_embedder, name="search-warm-up", daemon=True).start()


leave_form_bodies_to_django()
warm_up_search()
application = ProtocolTypeRouter({"http": django_asgi_app, "websocket": websocket_app()})
