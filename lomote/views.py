import secrets

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.db import connection
from django.http import HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils.translation import gettext, ngettext
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET

from lomote.kernel.exceptions import error_body


def studio_content_security_policy(request, nonce: str) -> str:
    """What the studio page may load: its own origin's scripts (the inline import map by its nonce), styles,
    images, media and API; its WebSocket on the same host; images also from blob: and data: (the model thumbnails
    it draws). data: and blob: are allowed to connect because three.js fetches a glTF's embedded buffers and
    images through them — URLs that carry their content and reach no server. Nothing from another origin."""
    websocket = f"{'wss' if request.is_secure() else 'ws'}://{request.get_host()}"
    return "; ".join(
        (
            "default-src 'self'",
            f"script-src 'self' 'nonce-{nonce}'",
            "style-src 'self'",
            "img-src 'self' blob: data:",
            f"connect-src 'self' {websocket} data: blob:",
            "object-src 'none'",
            "base-uri 'none'",
            "form-action 'self'",
            "frame-ancestors 'none'",
        )
    )


@login_required
def studio(request):
    from workspace.selectors import workspace_list

    workspaces = workspace_list(principal=request.user).order_by("id")
    nonce = secrets.token_urlsafe(18)  # a new one per response: an injected script cannot know it
    response = render(request, "studio.html", {"workspaces": workspaces, "csp_nonce": nonce})
    response["Content-Security-Policy"] = studio_content_security_policy(request, nonce)
    return response


def login_locked_out(request, original_response=None, credentials=None):
    """What a login form answers while its username or address is locked out (django-axes, lomote/settings.py):
    429, saying why and for how long, with a Retry-After header."""
    minutes = max(1, round(settings.AXES_COOLOFF_TIME.total_seconds() / 60))
    message = ngettext(
        "Too many failed logins for this username or from this address. Logging in is paused for %(minutes)s "
        "minute; each further attempt starts the pause again. If you have forgotten your password, ask the "
        "workspace owner or an administrator.",
        "Too many failed logins for this username or from this address. Logging in is paused for %(minutes)s "
        "minutes; each further attempt starts the pause again. If you have forgotten your password, ask the "
        "workspace owner or an administrator.",
        minutes,
    ) % {"minutes": minutes}
    response = render(request, "registration/locked_out.html", {"message": message}, status=429)
    response["Retry-After"] = str(int(settings.AXES_COOLOFF_TIME.total_seconds()))
    return response


@login_required
@require_GET
@require_GET
def healthz(request):
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return JsonResponse({"status": "ok", "database": connection.vendor})


@csrf_exempt  # a path that matches no API route answers the same JSON 404 to a POST, not the CSRF page
def api_not_found(request, *args, **kwargs):
    return JsonResponse(error_body("not_found", gettext("Not found.")), status=404)


def handler404(request, exception=None):
    if request.path.startswith("/api/"):
        return JsonResponse(error_body("not_found", gettext("Not found.")), status=404)
    return HttpResponse("Not found.", status=404, content_type="text/plain")


def handler500(request):
    if request.path.startswith("/api/"):
        return JsonResponse(error_body("server_error", gettext("Something went wrong on our side.")), status=500)
    return HttpResponse("Server error.", status=500, content_type="text/plain")
