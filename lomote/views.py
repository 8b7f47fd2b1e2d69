from django.contrib.auth.decorators import login_required
from django.db import connection
from django.http import HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from lomote.exceptions import error_body


@login_required
def studio(request):
    from workspace.selectors import workspace_list

    workspaces = workspace_list(principal=request.user).order_by("id")
    return render(request, "studio.html", {"workspaces": workspaces})


@login_required
@require_GET
def studio_artifacts(request, workspace_id: int):
    """The canvas grid's first load (the REST API has no artifact list yet); events keep it current after."""
    from lomote.exceptions import NotFound
    from workspace.selectors import artifact_list, workspace_access

    try:
        workspace_access(principal=request.user, workspace_id=workspace_id)
    except NotFound:
        return JsonResponse(error_body("not_found", "Not found."), status=404)
    artifacts = artifact_list(workspace_id=workspace_id).prefetch_related("versions")[:200]
    rows = []
    for artifact in artifacts:
        current = next((v for v in artifact.versions.all() if v.number == artifact.current_version), None)
        rows.append(
            {
                "id": artifact.pk,
                "kind": artifact.kind,
                "title": artifact.title,
                "current_version": artifact.current_version,
                "media_type": current.media_type if current else "",
                "updated_at": artifact.updated_at.isoformat(),
            }
        )
    return JsonResponse({"artifacts": rows})


@require_GET
def healthz(request):
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return JsonResponse({"status": "ok", "database": connection.vendor})


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
