import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lomote.settings")
django_asgi_app = get_asgi_application()  # sets Django up before the routing imports models

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from lomote.routing import websocket_urlpatterns  # noqa: E402
from workspace.ws_auth import HeaderCredentialsMiddleware  # noqa: E402


def websocket_app():
    # Origin first (no Origin or a foreign one is refused), then session, then header credentials.
    return AllowedHostsOriginValidator(
        AuthMiddlewareStack(HeaderCredentialsMiddleware(URLRouter(websocket_urlpatterns)))
    )


application = ProtocolTypeRouter({"http": django_asgi_app, "websocket": websocket_app()})
