from django.contrib.auth.decorators import login_required
from django.db import connection
from django.http import HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET

from lomote.kernel.exceptions import error_body


@login_required
def studio(request):
    from workspace.selectors import workspace_list

    workspaces = workspace_list(principal=request.user).order_by("id")
    return render(request, "studio.html", {"workspaces": workspaces})


@login_required
@require_GET
@require_GET
def healthz(request):
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return JsonResponse({"status": "ok", "database": connection.vendor})


@csrf_exempt  # a path that matches no API route answers the same JSON 404 to a POST, not the CSRF page
def api_not_found(request, *args, **kwargs):
    return JsonResponse(error_body("not_found", "Not found."), status=404)


def handler404(request, exception=None):
    if request.path.startswith("/api/"):
        return JsonResponse(error_body("not_found", "Not found."), status=404)
    return HttpResponse("Not found.", status=404, content_type="text/plain")


def handler500(request):
    if request.path.startswith("/api/"):
        return JsonResponse(error_body("server_error", "Something went wrong on our side."), status=500)
    return HttpResponse("Server error.", status=500, content_type="text/plain")
