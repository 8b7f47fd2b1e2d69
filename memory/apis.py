"""REST API v1 for memory (DESIGN §8, issue 13 item 5): memories with their version chains and provenance, a
person stating, correcting and confirming one, the profile and its versions, episodes.

Forgetting is asked at `…/memories/forget/` (agents: it opens the confirmation card a person confirms). Views
parse, check the role, call a selector or service, and serialize; every answer is read after the write, with
the workspace's forgotten terms in the serializers' context so nothing a forget erased is shown again.
"""

from django.db import transaction
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.response import Response

from lomote.kernel.exceptions import Conflict, NotFound, PermissionDenied
from lomote.kernel.serializers import error_responses, validated
from memory import selectors, serializers
from memory.models import MemoryKind, MemoryScope
from memory.services.forget import forgotten_terms_of
from memory.services.memories import memory_confirm, memory_correct, memory_state
from workspace.apis import WorkspaceApi
from workspace.models import Role
from workspace.selectors import Access


def _context(access: Access) -> dict:
    return {"forgotten": forgotten_terms_of(access.workspace.pk), "workspace_id": access.workspace.pk}


def _memory_body(access: Access, memory_id: int) -> dict:
    memory = selectors.memory_get(access=access, memory_id=memory_id)
    return serializers.MemoryOut(memory, context=_context(access)).data


# --- memories ---------------------------------------------------------------------------------------------


class MemoryListCreateApi(WorkspaceApi):
    serializer_class = serializers.MemoryOut

    @extend_schema(
        operation_id="memories_list",
        description="The memories the caller may see (the workspace's, and a person's own), most recently changed "
        "first, each with its scope, subject, current version (kind, content, validity period) and that version's "
        "provenance: the sources it was stated, refined or confirmed in (kind, source id, task, who said it) and "
        "the earlier version it supersedes. `include=superseded` lists superseded and forgotten versions too, and "
        "memories with nothing active left; a forgotten version shows its status and dates, never its content. "
        "`kind` filters on the current version's kind (on any version's with `include=superseded`), `subject` "
        "on words of the subject.",
        parameters=[
            OpenApiParameter("kind", str, enum=MemoryKind.values, description="Only memories of this kind."),
            OpenApiParameter("scope", str, enum=MemoryScope.values, description="Only memories of this scope."),
            OpenApiParameter("subject", str, description="Only memories whose subject contains these words."),
            OpenApiParameter("include", str, enum=["superseded"], description="Superseded and forgotten versions too."),
        ],
        responses={200: serializers.MemoryOut(many=True), **error_responses(400, 404)},
    )
    def get(self, request, workspace_id):
        access = self.access()
        query = validated(serializers.MemoryQueryIn, request.query_params.dict())
        memories = selectors.memory_list(
            access=access,
            include_superseded=query.get("include") == "superseded",
            kind=query.get("kind"),
            scope=query.get("scope"),
            subject=query.get("subject"),
        )
        page = self.paginate_queryset(memories)
        return self.get_paginated_response(serializers.MemoryOut(page, many=True, context=_context(access)).data)

    @extend_schema(
        operation_id="memories_create",
        description="A person states a memory directly. It is decided like anything they say: the same words as "
        "an active memory confirm it, the same subject refines it (its next version), anything else starts a new "
        "memory; the answer is the memory it landed in. Editors and owners; an API key states the workspace's "
        "memories for the person who made it, never a person-scope one (403 `api_key_scope`). 409 `forgotten` "
        "for words this workspace asked to forget, `memory_duplicate` when another memory already says it.",
        request=serializers.MemoryStateIn,
        responses={201: serializers.MemoryOut, **error_responses(400, 403, 404, 409)},
    )
    def post(self, request, workspace_id):
        access = self.access().require(Role.EDITOR)
        data = validated(serializers.MemoryStateIn, request.data)
        if data["scope"] == MemoryScope.PERSON and access.user is None:
            raise PermissionDenied(
                "A person's own memory is stated by that person, not through an API key.", code="api_key_scope"
            )
        with transaction.atomic(durable=True):
            memory = memory_state(access=access, content=data["content"], kind=data["kind"], scope=data["scope"])
            try:
                body = _memory_body(access, memory.pk)
            except NotFound:
                # The words are another person's own memory: say no more than that they are taken (rolled back).
                raise Conflict("Another memory already says this.", code="memory_duplicate") from None
        return Response(body, status=status.HTTP_201_CREATED)


class MemoryDetailApi(WorkspaceApi):
    serializer_class = serializers.MemoryOut

    @extend_schema(
        operation_id="memories_retrieve",
        description="One memory with its whole version chain, oldest first (superseded and forgotten versions "
        "too; forgotten ones without content), each version with its provenance. 404 for another workspace's "
        "memory or another person's own.",
        responses={200: serializers.MemoryOut, **error_responses(404)},
    )
    def get(self, request, workspace_id, memory_id):
        return Response(_memory_body(self.access(), memory_id))


class MemoryCorrectApi(WorkspaceApi):
    serializer_class = serializers.MemoryOut

    @extend_schema(
        operation_id="memories_correct",
        description="Correct a memory: its next version says `content` (REFINE; the current one becomes "
        "superseded, its period closed), linked to this statement of the person's. The same words as now only "
        "confirm it. Editors and owners. 404 for a memory the caller cannot see; 409 `memory_forgotten` for a "
        "forgotten one, `memory_duplicate` when another memory says it, `forgotten` for forgotten words.",
        request=serializers.MemoryCorrectIn,
        responses={200: serializers.MemoryOut, **error_responses(400, 403, 404, 409)},
    )
    def post(self, request, workspace_id, memory_id):
        access = self.access().require(Role.EDITOR)
        selectors.memory_get(access=access, memory_id=memory_id)  # 404 unless the caller may see it
        data = validated(serializers.MemoryCorrectIn, request.data)
        memory_correct(access=access, memory_id=memory_id, content=data["content"], kind=data.get("kind"))
        return Response(_memory_body(access, memory_id))


class MemoryConfirmApi(WorkspaceApi):
    serializer_class = serializers.MemoryOut

    @extend_schema(
        operation_id="memories_confirm",
        description="Confirm a memory as it stands (CONFIRM): no new version, a link to the person's "
        "confirmation. A model's hypothesis stays one; correct it to make it a fact. Editors and owners. 404 for "
        "a memory the caller cannot see; 409 `memory_forgotten` for a forgotten one.",
        request=None,
        responses={200: serializers.MemoryOut, **error_responses(400, 403, 404, 409)},
    )
    def post(self, request, workspace_id, memory_id):
        access = self.access().require(Role.EDITOR)
        selectors.memory_get(access=access, memory_id=memory_id)
        validated(serializers.NoBodyIn, request.data)
        memory_confirm(access=access, memory_id=memory_id)
        return Response(_memory_body(access, memory_id))


# --- profile and episodes ---------------------------------------------------------------------------------


class ProfileApi(WorkspaceApi):
    serializer_class = serializers.ProfileOut

    @extend_schema(
        operation_id="memory_profile_retrieve",
        description="The workspace's current profile — the small, stable summary every task's context starts "
        "with: its version number (0 before the first), why it moved, and its entries in order, each with the "
        "memory version it shows and that link. A new version whenever an entry changes (a memory stated, "
        "corrected, confirmed or forgotten).",
        responses={200: serializers.ProfileOut, **error_responses(404)},
    )
    def get(self, request, workspace_id):
        access = self.access()
        current = selectors.profile_versions(access=access).first()
        if current is None:
            return Response({"number": 0, "reason": "", "created_at": None, "entries": []})
        return Response(serializers.ProfileVersionOut(current, context=_context(access)).data)


class ProfileVersionListApi(WorkspaceApi):
    serializer_class = serializers.ProfileVersionOut

    @extend_schema(
        operation_id="memory_profile_versions_list",
        description="Every version of the profile, newest first, with its entries; an entry a forget erased "
        "keeps its place with no text.",
        responses={200: serializers.ProfileVersionOut(many=True), **error_responses(400, 404)},
    )
    def get(self, request, workspace_id):
        access = self.access()
        validated(serializers.PageQueryIn, request.query_params.dict())
        page = self.paginate_queryset(selectors.profile_versions(access=access))
        data = serializers.ProfileVersionOut(page, many=True, context=_context(access)).data
        return self.get_paginated_response(data)


class EpisodeListApi(WorkspaceApi):
    serializer_class = serializers.EpisodeOut

    @extend_schema(
        operation_id="memory_episodes_list",
        description="Episodic summaries — what happened in a piece of work — most recent first, each with its "
        "task, period and the sources and memory versions it drew on. `task` keeps one task's.",
        parameters=[OpenApiParameter("task", int, description="Only this task's episode.")],
        responses={200: serializers.EpisodeOut(many=True), **error_responses(400, 404)},
    )
    def get(self, request, workspace_id):
        access = self.access()
        query = validated(serializers.EpisodeQueryIn, request.query_params.dict())
        page = self.paginate_queryset(selectors.episode_list(access=access, task_id=query.get("task")))
        data = serializers.EpisodeOut(page, many=True, context=_context(access)).data
        return self.get_paginated_response(data)
