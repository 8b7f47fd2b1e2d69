"""REST API v1 for tenancy, the event log, generation jobs and artifacts (read side).

Views parse, call a selector or service, and serialize.
"""

import json
from collections.abc import Callable
from typing import Any

from django.db.models import OuterRef, Subquery
from django.http import FileResponse, HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.generics import GenericAPIView
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response

from lomote.kernel.exceptions import PermissionDenied
from lomote.kernel.serializers import ErrorSerializer, error_responses, validated
from workspace import selectors, serializers
from workspace.authentication import ApiKeyPrincipal
from workspace.flows import templates as flow_templates
from workspace.flows.authoring import flow_create, flow_edit
from workspace.models import SERVED_MEDIA_TYPES, UNDECLARED_MEDIA_TYPE, ArtifactVersion, JobStatus, Role
from workspace.services import collections as collection_services
from workspace.services import guides as guide_services
from workspace.services import idempotency
from workspace.services import workspaces as services
from workspace.services.artifacts import artifact_create, artifact_rename, version_download_name
from workspace.services.documents import document_edit, document_write
from workspace.services.uploads import artifact_upload, artifact_version_upload
from workspace.upload_guard import UploadParsing

WORKSPACE_ID = OpenApiParameter("workspace_id", int, OpenApiParameter.PATH)

# The header of the operations that answer through `WorkspaceApi.idempotent` (workspace/services/idempotency.py).
IDEMPOTENCY_KEY = OpenApiParameter(
    idempotency.HEADER,
    str,
    location=OpenApiParameter.HEADER,
    required=False,
    description=f"1–{idempotency.MAX_KEY_CHARS} printable characters, yours in this workspace for "
    f"{int(idempotency.KEEP.total_seconds() // 3600)} hours. A repeat with the same key, method, path and "
    "body does nothing again and gets the first answer (same status and body, header "
    "`Idempotent-Replayed: true`), waiting for it while the first request runs: parallel repeats make one "
    "effect. 409 `idempotency_key_reuse` when the key was used for another request; 409 "
    "`idempotency_key_in_progress` when the first has not finished in time; 400 `invalid_idempotency_key` for "
    "an empty key or a longer one. A refused first request keeps nothing: the key may be sent again.",
)
IDEMPOTENCY_DESCRIPTION = (
    f" Send `{idempotency.HEADER}` to make a retry return the first answer instead of doing the work again."
)


class WorkspaceApi(GenericAPIView):
    """Base for endpoints under /workspaces/<workspace_id>/: resolves access once per request."""

    def access(self):
        return selectors.workspace_access(principal=self.request.user, workspace_id=int(self.kwargs["workspace_id"]))

    def idempotent(self, access, respond: Callable[[], Response]) -> Response:
        """`respond()` once per `Idempotency-Key` of the caller (workspace/services/idempotency.py); a repeat gets
        the stored answer. Without the header, simply `respond()`. The view has checked the role and the body."""
        request = self.request
        key = request.headers.get(idempotency.HEADER)
        if key is None:
            return respond()

        def call() -> tuple[int, Any]:
            response = respond()
            # The body as rendered, so the first answer and every replay are the same bytes' worth of JSON.
            return response.status_code, json.loads(JSONRenderer().render(response.data))

        answer = idempotency.idempotent_call(
            access=access,
            key=key,
            fingerprint=idempotency.request_fingerprint(method=request.method, path=request.path, body=request.data),
            request=f"{request.method} {request.path}",
            call=call,
        )
        response = Response(answer.body, status=answer.status)
        if answer.replayed:
            response["Idempotent-Replayed"] = "true"
        return response


def _workspace_out(workspace, principal) -> dict:
    role = selectors.role_of(principal=principal, workspace=workspace)
    return serializers.WorkspaceOut(workspace, context={"roles": {workspace.pk: role}}).data


class WorkspaceListCreateApi(GenericAPIView):
    serializer_class = serializers.WorkspaceOut

    @extend_schema(operation_id="workspaces_list", responses={200: serializers.WorkspaceOut(many=True)})
    def get(self, request):
        workspaces = selectors.workspace_list(principal=request.user).order_by("id")
        page = self.paginate_queryset(workspaces)
        roles = {w.pk: selectors.role_of(principal=request.user, workspace=w) for w in page}
        return self.get_paginated_response(serializers.WorkspaceOut(page, many=True, context={"roles": roles}).data)

    @extend_schema(
        operation_id="workspaces_create",
        request=serializers.WorkspaceIn,
        responses={201: serializers.WorkspaceOut, **error_responses(400, 401, 403)},
    )
    def post(self, request):
        if isinstance(request.user, ApiKeyPrincipal):
            raise PermissionDenied("API keys act inside one workspace; they cannot create one.", code="api_key_scope")
        data = validated(serializers.WorkspaceIn, request.data)
        workspace = services.workspace_create(user=request.user, name=data["name"])
        return Response(_workspace_out(workspace, request.user), status=status.HTTP_201_CREATED)


class WorkspaceDetailApi(WorkspaceApi):
    serializer_class = serializers.WorkspaceOut

    @extend_schema(
        operation_id="workspaces_retrieve", responses={200: serializers.WorkspaceOut, **error_responses(404)}
    )
    def get(self, request, workspace_id):
        access = self.access()
        return Response(_workspace_out(access.workspace, request.user))

    @extend_schema(
        operation_id="workspaces_update",
        request=serializers.WorkspaceIn,
        responses={200: serializers.WorkspaceOut, **error_responses(400, 403, 404)},
    )
    def patch(self, request, workspace_id):
        access = self.access().require(Role.OWNER)
        data = validated(serializers.WorkspaceIn, request.data)
        workspace = services.workspace_update(access=access, name=data["name"])
        return Response(_workspace_out(workspace, request.user))

    @extend_schema(operation_id="workspaces_destroy", responses={204: None, **error_responses(403, 404)})
    def delete(self, request, workspace_id):
        services.workspace_delete(access=self.access())
        return Response(status=status.HTTP_204_NO_CONTENT)


class MemberListCreateApi(WorkspaceApi):
    serializer_class = serializers.MembershipOut

    @extend_schema(
        operation_id="members_list", responses={200: serializers.MembershipOut(many=True), **error_responses(404)}
    )
    def get(self, request, workspace_id):
        access = self.access()
        page = self.paginate_queryset(selectors.membership_list(access=access).order_by("id"))
        return self.get_paginated_response(serializers.MembershipOut(page, many=True, context={"access": access}).data)

    @extend_schema(
        operation_id="members_create",
        request=serializers.MembershipCreateIn,
        responses={201: serializers.MembershipOut, **error_responses(400, 403, 404, 409)},
    )
    def post(self, request, workspace_id):
        access = self.access().require(Role.OWNER)
        data = validated(serializers.MembershipCreateIn, request.data)
        membership = services.membership_add(access=access, user_identifier=data["user"], role=data["role"])
        return Response(
            serializers.MembershipOut(membership, context={"access": access}).data, status=status.HTTP_201_CREATED
        )


class MemberDetailApi(WorkspaceApi):
    serializer_class = serializers.MembershipOut

    @extend_schema(operation_id="members_retrieve", responses={200: serializers.MembershipOut, **error_responses(404)})
    def get(self, request, workspace_id, membership_id):
        access = self.access()
        membership = selectors.membership_get(access=access, membership_id=membership_id)
        return Response(serializers.MembershipOut(membership, context={"access": access}).data)

    @extend_schema(
        operation_id="members_update",
        request=serializers.MembershipUpdateIn,
        responses={200: serializers.MembershipOut, **error_responses(400, 403, 404, 409)},
    )
    def patch(self, request, workspace_id, membership_id):
        access = self.access().require(Role.OWNER)
        selectors.membership_get(access=access, membership_id=membership_id)
        data = validated(serializers.MembershipUpdateIn, request.data)
        membership = services.membership_update_role(access=access, membership_id=membership_id, role=data["role"])
        return Response(serializers.MembershipOut(membership, context={"access": access}).data)

    @extend_schema(operation_id="members_destroy", responses={204: None, **error_responses(403, 404, 409)})
    def delete(self, request, workspace_id, membership_id):
        services.membership_remove(access=self.access(), membership_id=membership_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


class ApiKeyListCreateApi(WorkspaceApi):
    serializer_class = serializers.ApiKeyOut

    @extend_schema(
        operation_id="api_keys_list", responses={200: serializers.ApiKeyOut(many=True), **error_responses(403, 404)}
    )
    def get(self, request, workspace_id):
        access = self.access().require(Role.OWNER)
        page = self.paginate_queryset(selectors.api_key_list(access=access).order_by("id"))
        return self.get_paginated_response(serializers.ApiKeyOut(page, many=True).data)

    @extend_schema(
        operation_id="api_keys_create",
        request=serializers.ApiKeyCreateIn,
        responses={201: serializers.ApiKeyCreatedOut, **error_responses(400, 403, 404)},
    )
    def post(self, request, workspace_id):
        access = self.access().require(Role.OWNER)
        data = validated(serializers.ApiKeyCreateIn, request.data)
        key, raw = services.api_key_create(access=access, name=data["name"], role=data["role"])
        body = serializers.ApiKeyCreatedOut(key, context={"raw_key": raw}).data
        return Response(body, status=status.HTTP_201_CREATED, headers={"Cache-Control": "no-store"})


class ApiKeyDetailApi(WorkspaceApi):
    serializer_class = serializers.ApiKeyOut

    @extend_schema(
        operation_id="api_keys_retrieve", responses={200: serializers.ApiKeyOut, **error_responses(403, 404)}
    )
    def get(self, request, workspace_id, key_id):
        access = self.access().require(Role.OWNER)
        return Response(serializers.ApiKeyOut(selectors.api_key_get(access=access, key_id=key_id)).data)

    @extend_schema(
        operation_id="api_keys_revoke",
        description="Revoke the key. It stops working at once; the record stays for the audit trail.",
        responses={200: serializers.ApiKeyOut, **error_responses(403, 404)},
    )
    def delete(self, request, workspace_id, key_id):
        key = services.api_key_revoke(access=self.access(), key_id=key_id)
        return Response(serializers.ApiKeyOut(key).data)


class EventListApi(WorkspaceApi):
    serializer_class = serializers.EventPageOut

    @extend_schema(
        operation_id="events_list",
        description="Events with a sequence above `after`, oldest first. Replays what a client missed.",
        parameters=[
            OpenApiParameter("after", int, description="Last sequence seen (0 for the start)."),
            OpenApiParameter("limit", int, description="At most this many events (1-500, default 200)."),
        ],
        responses={200: serializers.EventPageOut, **error_responses(400, 404)},
    )
    def get(self, request, workspace_id):
        access = self.access()
        query = validated(serializers.EventQueryIn, request.query_params.dict())
        events = selectors.event_list_after(
            workspace_id=access.workspace.pk, after=query["after"], limit=query["limit"] + 1
        )
        has_more = len(events) > query["limit"]
        events = events[: query["limit"]]
        last_seq = events[-1].seq if events else query["after"]
        body = {"events": serializers.EventOut(events, many=True).data, "last_seq": last_seq, "has_more": has_more}
        return Response(body)


class GenerationJobListApi(WorkspaceApi):
    serializer_class = serializers.GenerationJobOut

    @extend_schema(
        operation_id="generation_jobs_list",
        description="The workspace's generation jobs, newest first, with their status and progress (0-100).",
        parameters=[
            OpenApiParameter("status", str, enum=JobStatus.values, description="Only jobs with this status."),
            OpenApiParameter("task", int, description="Only jobs submitted by this task."),
        ],
        responses={200: serializers.GenerationJobOut(many=True), **error_responses(400, 404)},
    )
    def get(self, request, workspace_id):
        access = self.access()
        query = validated(serializers.GenerationJobQueryIn, request.query_params.dict())
        jobs = selectors.generation_job_list(
            workspace_id=access.workspace.pk, status=query.get("status"), task_id=query.get("task")
        )
        page = self.paginate_queryset(jobs)
        return self.get_paginated_response(serializers.GenerationJobOut(page, many=True).data)


class GenerationJobDetailApi(WorkspaceApi):
    serializer_class = serializers.GenerationJobOut

    @extend_schema(
        operation_id="generation_jobs_retrieve",
        description="One job: status, progress, the artifact version it produced, or its error.",
        responses={200: serializers.GenerationJobOut, **error_responses(404)},
    )
    def get(self, request, workspace_id, job_id):
        job = selectors.generation_job_get(workspace_id=self.access().workspace.pk, job_id=job_id)
        return Response(serializers.GenerationJobOut(job).data)


class ArtifactDetailApi(WorkspaceApi):
    serializer_class = serializers.ArtifactOut

    @extend_schema(
        operation_id="artifacts_retrieve",
        description="An artifact with its versions, newest first; each names the URL of its file.",
        responses={200: serializers.ArtifactOut, **error_responses(404)},
    )
    def get(self, request, workspace_id, artifact_id):
        artifact = selectors.artifact_get(workspace_id=self.access().workspace.pk, artifact_id=artifact_id)
        return Response(serializers.ArtifactOut(artifact).data)

    @extend_schema(
        operation_id="artifacts_rename",
        description="Rename the artifact (a Flow, a document, an image…). The title is not versioned: no new "
        "version, nothing goes stale; `artifact.renamed` is logged. Editors and owners.",
        request=serializers.ArtifactRenameIn,
        responses={200: serializers.ArtifactOut, **error_responses(400, 403, 404)},
    )
    def patch(self, request, workspace_id, artifact_id):
        access = self.access().require(Role.EDITOR)
        data = validated(serializers.ArtifactRenameIn, request.data)
        artifact = artifact_rename(
            workspace_id=access.workspace.pk, artifact_id=artifact_id, title=data["title"], renamed_by=access.user
        )
        return Response(serializers.ArtifactOut(artifact).data)


# A .gltf is a JSON document; what the sniffer requires of one (workspace/sniffing.py).
GLTF_JSON = {
    "type": "object",
    "description": "A glTF 2.0 document (JSON).",
    "properties": {"asset": {"type": "object", "properties": {"version": {"type": "string"}}, "required": ["version"]}},
    "required": ["asset"],
}


def _version_file_responses() -> dict:
    """Every media type a version's file comes in (SERVED_MEDIA_TYPES), each with what its body is."""
    bodies = {
        "application/json": serializers.FlowGraphOut,
        "model/gltf+json": GLTF_JSON,
        "text/markdown": str,
        "text/plain": str,
    }
    served = {media_type for kind_types in SERVED_MEDIA_TYPES.values() for media_type in kind_types}
    served.add(UNDECLARED_MEDIA_TYPE)
    return {(200, media_type): bodies.get(media_type, OpenApiTypes.BINARY) for media_type in sorted(served)}


def _served_as(version: ArtifactVersion) -> str:
    """The media type the file endpoint sends: the version's own when its kind is declared to serve it."""
    if version.media_type in SERVED_MEDIA_TYPES.get(version.artifact.kind, ()):
        return version.media_type
    return UNDECLARED_MEDIA_TYPE


class ArtifactVersionFileApi(WorkspaceApi):
    """The bytes of one version: its stored file, or its text for documents and Flows."""

    def perform_content_negotiation(self, request, force=False):
        # The file itself bypasses renderers; errors are JSON whatever the client accepts (an <img> asks for
        # image/*, which would otherwise turn a 404 into a 406).
        renderer = JSONRenderer()
        return renderer, renderer.media_type

    @extend_schema(
        operation_id="artifacts_version_file",
        description="Served inline, members only, in the media type of its kind: an image as image/png, "
        "image/jpeg, image/webp or image/gif; a video as video/mp4, video/quicktime, video/webm, or an animated "
        "image/webp or image/gif; a 3D model as model/gltf-binary or model/gltf+json; a document as "
        "text/markdown or text/plain (UTF-8); a Flow as application/json, its graph. A version stored with any "
        f"other type (from an outside provider, or an asset collection's JSON) comes as {UNDECLARED_MEDIA_TYPE}.",
        parameters=[
            OpenApiParameter(
                "download",
                bool,
                OpenApiParameter.QUERY,
                required=False,
                description="`1` (or `true`): sent with `Content-Disposition: attachment; "
                'filename="<title slug>-v<n>.<ext>"` (e.g. `retro-poster-v2.png`), so a browser saves the '
                "original file under a name a person recognises. Default: inline.",
            )
        ],
        responses={**_version_file_responses(), **error_responses(400, 404)},
    )
    def get(self, request, workspace_id, artifact_id, number):
        access = self.access()
        query = validated(serializers.VersionFileQueryIn, request.query_params.dict())
        version = selectors.artifact_version_get(
            workspace_id=access.workspace.pk, artifact_id=artifact_id, number=number
        )
        media_type = _served_as(version)
        if version.file:
            response = FileResponse(version.file.open("rb"), content_type=media_type)
            filename = version.file.name.rsplit("/", 1)[-1]
        else:
            charset = "" if media_type == UNDECLARED_MEDIA_TYPE else "; charset=utf-8"
            response = HttpResponse(version.content.encode(), content_type=f"{media_type}{charset}")
            filename = f"v{version.number}"
        if query["download"]:
            response["Content-Disposition"] = f'attachment; filename="{version_download_name(version)}"'
        else:
            response["Content-Disposition"] = f'inline; filename="{filename}"'
        # What a person uploaded or a provider sent is never run as a page of ours.
        response["X-Content-Type-Options"] = "nosniff"
        response["Content-Security-Policy"] = "default-src 'none'; sandbox"
        response["Cache-Control"] = "private, max-age=3600"
        return response


def _author(access) -> dict:
    return {"author_user": access.user}


class ArtifactCreateApi(WorkspaceApi):
    serializer_class = serializers.ArtifactOut

    @extend_schema(
        operation_id="artifacts_list",
        description="The workspace's live artifacts, most recently changed first; `kind` and `q` (every word in "
        "the title, description or tags) narrow it.",
        parameters=[
            OpenApiParameter("kind", str, description="image, video, 3d, document, asset_collection or flow."),
            OpenApiParameter("q", str, description="Words that must all appear."),
        ],
        responses={200: serializers.ArtifactListOut(many=True), **error_responses(400, 404)},
    )
    def get(self, request, workspace_id):
        access = self.access()
        query = validated(serializers.ArtifactQueryIn, request.query_params.dict())
        artifacts = selectors.artifact_list(workspace_id=access.workspace.pk).annotate(
            current_media_type=Subquery(
                ArtifactVersion.objects.filter(artifact=OuterRef("pk"), number=OuterRef("current_version")).values(
                    "media_type"
                )[:1]
            )
        )
        if query.get("kind"):
            artifacts = artifacts.filter(kind=query["kind"])
        if query.get("q"):
            found = selectors.artifact_search(
                workspace_id=access.workspace.pk,
                query=query["q"],
                kinds=[query["kind"]] if query.get("kind") else None,
                limit=500,
            )
            artifacts = artifacts.filter(pk__in=[a.pk for a in found])
        page = self.paginate_queryset(artifacts)
        return self.get_paginated_response(serializers.ArtifactListOut(page, many=True).data)

    @extend_schema(
        operation_id="artifacts_create",
        description="Create a document (`content`) or a Flow (`graph`) at version 1. A Flow's node params and wires "
        "are checked against its node types (`GET …/flow-node-types/`): 400 `invalid_node_params` (`details.node`, "
        "`details.field`), 400 `wire_type_mismatch` (`details.from`, `details.to`), 404 for an artifact_input naming "
        "an artifact the workspace does not have.",
        request=serializers.ArtifactCreateIn,
        responses={201: serializers.ArtifactOut, **error_responses(400, 403, 404)},
    )
    def post(self, request, workspace_id):
        access = self.access().require(Role.EDITOR)
        data = validated(serializers.ArtifactCreateIn, request.data)
        common = {"workspace_id": access.workspace.pk, "title": data["title"], "description": data["description"]}
        if data["kind"] == "flow":
            artifact = flow_create(**common, graph=data.get("graph"), **_author(access))
        else:
            artifact = artifact_create(**common, kind="document", content=data["content"], **_author(access))
        return Response(serializers.ArtifactOut(artifact).data, status=status.HTTP_201_CREATED)


class DocumentApi(WorkspaceApi):
    serializer_class = serializers.VersionWrittenOut

    @extend_schema(
        operation_id="documents_write",
        description="Rewrite the whole document on `base_version`; 409 `stale_version` (with `current_version`) "
        "if it is no longer current.",
        request=serializers.DocumentWriteIn,
        responses={200: serializers.VersionWrittenOut, **error_responses(400, 403, 404, 409)},
    )
    def put(self, request, workspace_id, artifact_id):
        access = self.access().require(Role.EDITOR)
        data = validated(serializers.DocumentWriteIn, request.data)
        version = document_write(workspace_id=access.workspace.pk, artifact_id=artifact_id, **data, **_author(access))
        return Response({"artifact_id": artifact_id, "version": version.number})


class DocumentEditsApi(WorkspaceApi):
    serializer_class = serializers.VersionWrittenOut

    @extend_schema(
        operation_id="documents_edit",
        description="Replace exact, unique fragments of `base_version`, all or none. 409 `stale_version`, "
        "`fragment_not_found`, `fragment_not_unique` or `fragment_overlap` (with `details.edit`).",
        request=serializers.DocumentEditsIn,
        responses={200: serializers.VersionWrittenOut, **error_responses(400, 403, 404, 409)},
    )
    def post(self, request, workspace_id, artifact_id):
        access = self.access().require(Role.EDITOR)
        data = validated(serializers.DocumentEditsIn, request.data)
        version = document_edit(
            workspace_id=access.workspace.pk,
            artifact_id=artifact_id,
            base_version=data["base_version"],
            edits=[dict(e) for e in data["edits"]],
            **_author(access),
        )
        return Response({"artifact_id": artifact_id, "version": version.number})


class FlowEditsApi(WorkspaceApi):
    serializer_class = serializers.VersionWrittenOut

    @extend_schema(
        operation_id="flows_edit",
        description="Edit nodes made on `base_version`; applied on the latest version. 409 `node_conflict` "
        "(`details.nodes`) for nodes changed since the base; the answer lists `changed_since_base`. The params of "
        "the nodes it sets or adds and the wires it adds or re-types are checked against the node types: 400 "
        "`invalid_node_params` naming the node and field, 400 `wire_type_mismatch` naming both ends. `start` names "
        "the input node a run starts at.",
        request=serializers.FlowEditsIn,
        responses={200: serializers.VersionWrittenOut, **error_responses(400, 403, 404, 409)},
    )
    def post(self, request, workspace_id, artifact_id):
        access = self.access().require(Role.EDITOR)
        data = validated(serializers.FlowEditsIn, request.data)
        edit = flow_edit(workspace_id=access.workspace.pk, artifact_id=artifact_id, **data, **_author(access))
        body = {
            "artifact_id": artifact_id,
            "version": edit.version.number,
            "applied": edit.applied,
            "changed_since_base": edit.changed_since_base,
        }
        return Response(body)


class FlowRunDetailApi(WorkspaceApi):
    serializer_class = serializers.FlowRunOut

    @extend_schema(
        operation_id="flow_runs_retrieve",
        description="A run with each node's status and output, and the nodes whose outputs went stale.",
        responses={200: serializers.FlowRunOut, **error_responses(404)},
    )
    def get(self, request, workspace_id, run_id):
        run = selectors.flow_run_get(workspace_id=self.access().workspace.pk, run_id=run_id)
        return Response(serializers.FlowRunOut(run).data)


def _template_out(template: flow_templates.FlowTemplate) -> dict:
    return {
        "name": template.name,
        "title": str(template.title),
        "description": str(template.description),
        "params_schema": template.params_schema(),
    }


class FlowTemplateListApi(WorkspaceApi):
    serializer_class = serializers.FlowTemplateOut
    pagination_class = None  # a few templates, declared in code

    @extend_schema(
        operation_id="flow_templates_list",
        description="Flows to start from: each with the params it takes, as a JSON Schema.",
        responses={200: serializers.FlowTemplateOut(many=True), **error_responses(404)},
    )
    def get(self, request, workspace_id):
        self.access()
        return Response([_template_out(t) for t in flow_templates.flow_templates_list()])


class FlowTemplateUseApi(WorkspaceApi):
    serializer_class = serializers.ArtifactOut

    @extend_schema(
        operation_id="flow_templates_use",
        description="Make a new Flow of this workspace from the template, with its `params` (400 "
        "`invalid_template_params` naming the field; 404 `template_not_found`; 404 for a collection the workspace "
        "does not have; 400 `no_product_photos` for a collection without images). The Flow is checked against the "
        "node types like any other, and is the workspace's own from then on. Editors and owners."
        + IDEMPOTENCY_DESCRIPTION,
        parameters=[IDEMPOTENCY_KEY],
        request=serializers.FlowTemplateUseIn,
        responses={201: serializers.ArtifactOut, **error_responses(400, 403, 404, 409)},
    )
    def post(self, request, workspace_id, name):
        access = self.access().require(Role.EDITOR)
        data = validated(serializers.FlowTemplateUseIn, request.data)
        return self.idempotent(access, lambda: self._use(access, name, data))

    def _use(self, access, name: str, data: dict) -> Response:
        artifact = flow_templates.flow_template_use(
            workspace_id=access.workspace.pk,
            name=name,
            title=data.get("title"),
            params=data["params"],
            **_author(access),
        )
        return Response(serializers.ArtifactOut(artifact).data, status=status.HTTP_201_CREATED)


# --- uploads -------------------------------------------------------------------------------------------------

UPLOAD_ERRORS = {
    **error_responses(400, 403, 404),
    413: OpenApiResponse(ErrorSerializer, description="`too_large`: the request or the file is over its limit."),
    415: OpenApiResponse(ErrorSerializer, description="The body is not `multipart/form-data`."),
}


class ArtifactUploadApi(UploadParsing, WorkspaceApi):
    serializer_class = serializers.ArtifactOut

    @extend_schema(
        operation_id="artifacts_upload",
        description="Upload a file as a new artifact at version 1 (multipart/form-data). The kind is decided from "
        "the content alone: an image, a video, a glTF 3D model or a text document. Editors and owners.",
        request={"multipart/form-data": serializers.ArtifactUploadIn},
        responses={201: serializers.ArtifactOut, **UPLOAD_ERRORS},
    )
    def post(self, request, workspace_id):
        access = self.access().require(Role.EDITOR)
        data = validated(serializers.ArtifactUploadIn, request.data)
        artifact = artifact_upload(workspace_id=access.workspace.pk, **data, **_author(access))
        return Response(serializers.ArtifactOut(artifact).data, status=status.HTTP_201_CREATED)


class ArtifactVersionUploadApi(UploadParsing, WorkspaceApi):
    serializer_class = serializers.ArtifactOut

    @extend_schema(
        operation_id="artifacts_upload_version",
        description="Upload a file as the artifact's next version, on `base_version` (409 `stale_version`, with "
        "`current_version`, when another write got there first). The file must be of the artifact's kind "
        "(400 `type_mismatch`); a document's new text replaces the old.",
        request={"multipart/form-data": serializers.ArtifactVersionUploadIn},
        responses={201: serializers.ArtifactOut, 409: ErrorSerializer, **UPLOAD_ERRORS},
    )
    def post(self, request, workspace_id, artifact_id):
        access = self.access().require(Role.EDITOR)
        data = validated(serializers.ArtifactVersionUploadIn, request.data)
        artifact_version_upload(workspace_id=access.workspace.pk, artifact_id=artifact_id, **data, **_author(access))
        artifact = selectors.artifact_get(workspace_id=access.workspace.pk, artifact_id=artifact_id)
        return Response(serializers.ArtifactOut(artifact).data, status=status.HTTP_201_CREATED)


# --- asset collections ------------------------------------------------------------------------------------------


def _collection_out(access, collection_id: int) -> dict:
    """The collection as committed, with its live items in order."""
    collection = selectors.collection_get(workspace_id=access.workspace.pk, collection_id=collection_id)
    return serializers.CollectionOut(collection).data


class CollectionListCreateApi(WorkspaceApi):
    serializer_class = serializers.CollectionOut

    @extend_schema(
        operation_id="collections_list",
        description="The workspace's asset collections, most recently changed first, each with its artifacts in order.",
        responses={200: serializers.CollectionOut(many=True), **error_responses(400, 404)},
    )
    def get(self, request, workspace_id):
        access = self.access()
        validated(serializers.CollectionQueryIn, request.query_params.dict())
        page = self.paginate_queryset(selectors.collection_list(workspace_id=access.workspace.pk))
        return self.get_paginated_response(serializers.CollectionOut(page, many=True).data)

    @extend_schema(
        operation_id="collections_create",
        description="Create a collection, optionally with artifacts in order (400 `duplicate_artifacts`; 404 "
        "for an artifact that is not a live one of this workspace). Editors and owners.",
        request=serializers.CollectionCreateIn,
        responses={201: serializers.CollectionOut, **error_responses(400, 403, 404)},
    )
    def post(self, request, workspace_id):
        access = self.access().require(Role.EDITOR)
        data = validated(serializers.CollectionCreateIn, request.data)
        collection = collection_services.collection_create(
            workspace_id=access.workspace.pk,
            name=data["name"],
            description=data["description"],
            artifact_ids=data["artifacts"],
            created_by=access.user,
        )
        return Response(_collection_out(access, collection.pk), status=status.HTTP_201_CREATED)


class CollectionDetailApi(WorkspaceApi):
    serializer_class = serializers.CollectionOut

    @extend_schema(
        operation_id="collections_retrieve", responses={200: serializers.CollectionOut, **error_responses(404)}
    )
    def get(self, request, workspace_id, collection_id):
        return Response(_collection_out(self.access(), collection_id))

    @extend_schema(
        operation_id="collections_update",
        description="Rename the collection or change its description.",
        request=serializers.CollectionUpdateIn,
        responses={200: serializers.CollectionOut, **error_responses(400, 403, 404)},
    )
    def patch(self, request, workspace_id, collection_id):
        access = self.access().require(Role.EDITOR)
        data = validated(serializers.CollectionUpdateIn, request.data)
        collection_services.collection_update(workspace_id=access.workspace.pk, collection_id=collection_id, **data)
        return Response(_collection_out(access, collection_id))

    @extend_schema(
        operation_id="collections_destroy",
        description="Delete the collection; its artifacts stay.",
        responses={204: None, **error_responses(403, 404)},
    )
    def delete(self, request, workspace_id, collection_id):
        access = self.access().require(Role.EDITOR)
        collection_services.collection_delete(workspace_id=access.workspace.pk, collection_id=collection_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


class CollectionItemsApi(WorkspaceApi):
    serializer_class = serializers.CollectionOut

    @extend_schema(
        operation_id="collections_add_item",
        description="Add an artifact at the end, or at `position` (0 is first). 409 `already_in_collection`; "
        "404 for an artifact that is not a live one of this workspace.",
        request=serializers.CollectionItemIn,
        responses={200: serializers.CollectionOut, **error_responses(400, 403, 404, 409)},
    )
    def post(self, request, workspace_id, collection_id):
        access = self.access().require(Role.EDITOR)
        data = validated(serializers.CollectionItemIn, request.data)
        collection_services.collection_item_add(
            workspace_id=access.workspace.pk,
            collection_id=collection_id,
            artifact_id=data["artifact"],
            position=data.get("position"),
            added_by=access.user,
        )
        return Response(_collection_out(access, collection_id))


class CollectionItemDetailApi(WorkspaceApi):
    serializer_class = serializers.CollectionOut

    @extend_schema(
        operation_id="collections_remove_item",
        description="Take the artifact out of the collection (the artifact stays). 404 `not_in_collection`.",
        responses={200: serializers.CollectionOut, **error_responses(403, 404)},
    )
    def delete(self, request, workspace_id, collection_id, artifact_id):
        access = self.access().require(Role.EDITOR)
        collection_services.collection_item_remove(
            workspace_id=access.workspace.pk, collection_id=collection_id, artifact_id=artifact_id
        )
        return Response(_collection_out(access, collection_id))


class CollectionOrderApi(WorkspaceApi):
    serializer_class = serializers.CollectionOut

    @extend_schema(
        operation_id="collections_reorder",
        description="The full new order: every artifact of the collection once, and nothing else (400 "
        "`order_mismatch` with `missing`, `unexpected` and `current`; 400 `duplicate_artifacts`).",
        request=serializers.CollectionOrderIn,
        responses={200: serializers.CollectionOut, **error_responses(400, 403, 404)},
    )
    def put(self, request, workspace_id, collection_id):
        access = self.access().require(Role.EDITOR)
        data = validated(serializers.CollectionOrderIn, request.data)
        collection_services.collection_reorder(
            workspace_id=access.workspace.pk, collection_id=collection_id, artifact_ids=data["artifacts"]
        )
        return Response(_collection_out(access, collection_id))


# --- creative guides ------------------------------------------------------------------------------------------------


def _guide_out(access, name: str, version: int | None = None) -> dict:
    guide = selectors.guide_get(workspace_id=access.workspace.pk, name=name, version=version)
    return serializers.GuideDetailOut(guide).data


class GuideListCreateApi(WorkspaceApi):
    serializer_class = serializers.GuideOut
    pagination_class = None  # built-in and workspace guides, merged by name: a short list

    @extend_schema(
        operation_id="guides_list",
        description="The guides this workspace's tasks can load, by name: its own, and the built-in ones no guide "
        "of its own replaces. Names and purposes, without their text.",
        responses={200: serializers.GuideOut(many=True), **error_responses(404)},
    )
    def get(self, request, workspace_id):
        access = self.access()
        return Response(serializers.GuideOut(selectors.guide_list(workspace_id=access.workspace.pk), many=True).data)

    @extend_schema(
        operation_id="guides_create",
        description="Write a guide for this workspace: its text becomes version 1 of a document artifact. 409 "
        "`guide_exists` for a name the workspace already uses. Editors and owners.",
        request=serializers.GuideCreateIn,
        responses={201: serializers.GuideDetailOut, **error_responses(400, 403, 404, 409)},
    )
    def post(self, request, workspace_id):
        access = self.access().require(Role.EDITOR)
        data = validated(serializers.GuideCreateIn, request.data)
        guide = guide_services.guide_create(workspace_id=access.workspace.pk, **data, **_author(access))
        return Response(_guide_out(access, guide.name), status=status.HTTP_201_CREATED)


class GuideDetailApi(WorkspaceApi):
    serializer_class = serializers.GuideDetailOut

    @extend_schema(
        operation_id="guides_retrieve",
        description="A guide with its text, at its current version or `version`.",
        parameters=[OpenApiParameter("version", int, description="An earlier version.")],
        responses={200: serializers.GuideDetailOut, **error_responses(400, 404)},
    )
    def get(self, request, workspace_id, name):
        access = self.access()
        query = validated(serializers.GuideQueryIn, request.query_params.dict())
        return Response(_guide_out(access, name, query.get("version")))

    @extend_schema(
        operation_id="guides_update",
        description="Change a workspace guide's purpose and/or its text: the whole `content`, or `edits` (exact, "
        "unique fragments), on `base_version` — a new version of its document; 409 `stale_version` when that is "
        "no longer current, `fragment_not_found`… as for documents. 409 `builtin_guide` for a built-in guide "
        "(write a guide of the same name instead). Editors and owners.",
        request=serializers.GuideUpdateIn,
        responses={200: serializers.GuideDetailOut, **error_responses(400, 403, 404, 409)},
    )
    def patch(self, request, workspace_id, name):
        access = self.access().require(Role.EDITOR)
        data = validated(serializers.GuideUpdateIn, request.data)
        if "edits" in data:
            data["edits"] = [dict(e) for e in data["edits"]]
        guide_services.guide_update(workspace_id=access.workspace.pk, name=name, **data, **_author(access))
        return Response(_guide_out(access, name))
