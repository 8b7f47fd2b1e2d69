import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import connection
from django.db.models import OuterRef, Prefetch, Q, QuerySet, Subquery
from django.utils.translation import gettext, gettext_lazy, gettext_noop

from lomote.kernel.exceptions import InvalidInput, NotFound, PermissionDenied
from workspace.authentication import ApiKeyPrincipal
from workspace.models import (
    ApiKey,
    Artifact,
    ArtifactKind,
    ArtifactVersion,
    AssetCollection,
    AssetCollectionItem,
    BuiltinGuide,
    ChangeNotice,
    Event,
    FlowRun,
    GenerationJob,
    Guide,
    Membership,
    Role,
    Workspace,
    role_at_least,
)
from workspace.search import artifact_search_meaning

Principal = AbstractBaseUser | ApiKeyPrincipal


# A role as the refusal names it, in the request's language (the API's message; its code and details stay the same).
ROLE_WORDS = {
    Role.VIEWER.value: gettext_lazy("viewer"),
    Role.EDITOR.value: gettext_lazy("editor"),
    Role.OWNER.value: gettext_lazy("owner"),
}


@dataclass(frozen=True)
class Access:
    """What one principal may do in one workspace. Obtained only through `workspace_access`."""

    workspace: Workspace
    role: str
    user: AbstractBaseUser | None
    api_key: ApiKey | None

    def require(self, role: str) -> "Access":
        if not role_at_least(self.role, role):
            raise PermissionDenied(
                gettext("This needs the %(required)s role; you are %(yours)s.")
                % {"required": ROLE_WORDS.get(str(role), role), "yours": ROLE_WORDS.get(str(self.role), self.role)},
                code="role_required",
                details={"required_role": role, "your_role": self.role},
            )
        return self

    @property
    def actor(self) -> dict:
        if self.api_key is not None:
            return {"type": "api_key", "id": self.api_key.pk, "name": self.api_key.name}
        return {"type": "user", "id": self.user.pk, "username": self.user.get_username()}


def workspace_access(*, principal: Principal, workspace_id: int) -> Access:
    """The caller's access to a workspace. Non-members get NotFound: they learn nothing."""
    if isinstance(principal, ApiKeyPrincipal):
        key = principal.api_key
        if key.workspace_id != workspace_id or not key.is_active:
            raise NotFound(gettext_noop("Workspace not found."))
        return Access(workspace=key.workspace, role=key.role, user=None, api_key=key)
    if principal is None or not principal.is_authenticated:
        raise NotFound(gettext_noop("Workspace not found."))
    membership = (
        Membership.objects.select_related("workspace").filter(workspace_id=workspace_id, user=principal).first()
    )
    if membership is None:
        raise NotFound(gettext_noop("Workspace not found."))
    return Access(workspace=membership.workspace, role=membership.role, user=principal, api_key=None)


def workspace_list(*, principal: Principal) -> QuerySet[Workspace]:
    if isinstance(principal, ApiKeyPrincipal):
        return Workspace.objects.filter(pk=principal.workspace_id)
    return Workspace.objects.filter(memberships__user=principal).distinct()


def role_of(*, principal: Principal, workspace: Workspace) -> str | None:
    if isinstance(principal, ApiKeyPrincipal):
        return principal.api_key.role if principal.workspace_id == workspace.pk else None
    membership = Membership.objects.filter(workspace=workspace, user=principal).only("role").first()
    return membership.role if membership else None


def membership_list(*, access: Access) -> QuerySet[Membership]:
    return Membership.objects.filter(workspace=access.workspace).select_related("user")


def membership_get(*, access: Access, membership_id: int) -> Membership:
    membership = membership_list(access=access).filter(pk=membership_id).first()
    if membership is None:
        raise NotFound(gettext_noop("Member not found."))
    return membership


def api_key_list(*, access: Access) -> QuerySet[ApiKey]:
    return ApiKey.objects.filter(workspace=access.workspace)


def api_key_get(*, access: Access, key_id: int) -> ApiKey:
    key = api_key_list(access=access).filter(pk=key_id).first()
    if key is None:
        raise NotFound(gettext_noop("API key not found."))
    return key


def event_list_after(*, workspace_id: int, after: int, limit: int) -> list[Event]:
    return list(Event.objects.filter(workspace_id=workspace_id, seq__gt=after).order_by("seq")[:limit])


# --- artifacts ---------------------------------------------------------------------------------------------

ARTIFACT_SEARCH_MAX_LIMIT = 50
ARTIFACT_SEARCH_MAX_TERMS = 8
_JSON_LIST_PUNCTUATION = frozenset("[],")
_WORD = re.compile(r"[^\W_]", re.UNICODE)  # a query of punctuation alone means nothing to search by meaning


def artifact_list(*, workspace_id: int) -> QuerySet[Artifact]:
    """The workspace's artifacts that are not deleted, most recently changed first."""
    return Artifact.objects.filter(workspace_id=workspace_id, deleted_at__isnull=True).order_by("-updated_at", "-id")


SOURCE_KINDS = ("image", "video", "document", "3d")  # what a request can start from ("my sketch", "the video I sent")
MAX_SOURCE_CANDIDATES = 20


def source_candidates_list(*, workspace_id: int, limit: int = MAX_SOURCE_CANDIDATES) -> list[dict[str, Any]]:
    """The workspace's files a request may point at ("my sketch", "the photo I just uploaded"), newest first:
    id, kind, title, description, the uploaded file's original name, when it was added and whether a person
    uploaded it (not a task). One query; scoped to the workspace, deleted artifacts left out."""
    first_version = ArtifactVersion.objects.filter(artifact_id=OuterRef("pk"), number=1)
    rows = (
        artifact_list(workspace_id=workspace_id)
        .filter(kind__in=SOURCE_KINDS)
        .annotate(
            upload_name=Subquery(first_version.values("meta__upload__filename")[:1]),
            first_author=Subquery(first_version.values("author_user_id")[:1]),
        )
        .order_by("-created_at", "-id")
        .values("id", "kind", "title", "description", "created_at", "created_by_task_id", "upload_name", "first_author")
    )[: max(1, min(limit, MAX_SOURCE_CANDIDATES))]
    return [
        {
            "id": row["id"],
            "kind": row["kind"],
            "title": row["title"],
            "description": row["description"][:300],
            "filename": row["upload_name"] or "",
            "created_at": row["created_at"],
            "uploaded": row["created_by_task_id"] is None and row["first_author"] is not None,
        }
        for row in rows
    ]


def artifact_get(*, workspace_id: int, artifact_id: int) -> Artifact:
    """One live artifact of the workspace. Another workspace's id, or a deleted artifact, is NotFound."""
    artifact = artifact_list(workspace_id=workspace_id).filter(pk=artifact_id).first()
    if artifact is None:
        raise NotFound(gettext_noop("Artifact not found."))
    return artifact


def artifact_version_get(*, workspace_id: int, artifact_id: int, number: int | None = None) -> ArtifactVersion:
    """A version of a live artifact of the workspace: the current one unless `number` is given."""
    artifact = artifact_get(workspace_id=workspace_id, artifact_id=artifact_id)
    wanted = artifact.current_version if number is None else number
    version = artifact.versions.filter(number=wanted).first()
    if version is None:
        raise NotFound(
            f"This artifact has no version {wanted}.",
            code="version_not_found",
            details={"current_version": artifact.current_version},
        )
    version.artifact = artifact
    return version


def _json_text_needle(term: str) -> str:
    """`term` as it appears inside the stored JSON text of the tags list.

    PostgreSQL renders jsonb as text with non-ASCII characters as they are; SQLite keeps the text Django
    wrote, where they are \\u-escaped. Quotes and backslashes are escaped on both.
    """
    return json.dumps(term, ensure_ascii=connection.vendor == "sqlite")[1:-1]


def artifact_search(
    *, workspace_id: int, query: str, kinds: Iterable[str] | None = None, limit: int = 20
) -> list[Artifact]:
    """Live artifacts whose title, description or tags contain every word of `query`, ignoring case; when none
    does, the artifacts closest in meaning to it (workspace.search: "la photo de chat d'hier", "the photo of my
    cat" → "Cat photo"), best first.

    Words the person typed win when they name artifacts; meaning answers paraphrases and other languages. An
    empty query lists the most recent artifacts. SQLite folds case for ASCII letters only.
    """
    artifacts = artifact_list(workspace_id=workspace_id)
    if kinds:
        kinds = list(kinds)
        unknown = sorted(set(kinds) - set(ArtifactKind.values))
        if unknown:
            raise InvalidInput(f"Unknown artifact kinds: {', '.join(unknown)}.", details={"fields": {"kinds": unknown}})
        artifacts = artifacts.filter(kind__in=kinds)
    for term in (query or "").split()[:ARTIFACT_SEARCH_MAX_TERMS]:
        matches = Q(title__icontains=term) | Q(description__icontains=term)
        # Tags are matched in the list's JSON text, so a term with the list's own punctuation could match
        # the structure instead of a tag: such terms are looked up in titles and descriptions only.
        if not _JSON_LIST_PUNCTUATION.intersection(term):
            matches |= Q(tags__icontains=_json_text_needle(term))
        artifacts = artifacts.filter(matches)
    limit = max(1, min(int(limit), ARTIFACT_SEARCH_MAX_LIMIT))
    found = list(artifacts[:limit])
    if found or not _WORD.search(query or ""):
        return found
    meaning = artifact_search_meaning(workspace_id=workspace_id, text=query, kinds=kinds, limit=limit)
    return [artifact for artifact, _ in meaning]


# --- generation jobs -----------------------------------------------------------------------------------------


def generation_job_list(*, workspace_id: int, status: str | None = None, task_id: int | None = None):
    """The workspace's generation jobs, newest first, optionally of one status or one task."""
    jobs = GenerationJob.objects.filter(workspace_id=workspace_id).select_related("artifact_version")
    if status:
        jobs = jobs.filter(status=status)
    if task_id is not None:
        jobs = jobs.filter(task_id=task_id)
    return jobs.order_by("-created_at", "-id")


def generation_job_get(*, workspace_id: int, job_id: int) -> GenerationJob:
    job = generation_job_list(workspace_id=workspace_id).filter(pk=job_id).first()
    if job is None:
        raise NotFound(gettext_noop("Generation job not found."))
    return job


# --- change notices ------------------------------------------------------------------------------------------


def notices_pending(*, task_id: int, limit: int = 20) -> list[ChangeNotice]:
    """The task's undelivered change notices, oldest first, for the context builder's dynamic tail."""
    return list(
        ChangeNotice.objects.filter(task_id=task_id, delivered_at__isnull=True)
        .select_related("artifact")
        .order_by("created_at", "id")[:limit]
    )


def flow_run_get(*, workspace_id: int, run_id: int) -> FlowRun:
    run = FlowRun.objects.filter(pk=run_id, workspace_id=workspace_id).first()
    if run is None:
        raise NotFound(gettext_noop("Flow run not found."))
    return run


# --- asset collections ---------------------------------------------------------------------------------------


def collection_list(*, workspace_id: int) -> QuerySet[AssetCollection]:
    """The workspace's asset collections, most recently changed first, with their live items prefetched."""
    return (
        AssetCollection.objects.filter(workspace_id=workspace_id)
        .prefetch_related(collection_items_prefetch())
        .order_by("-updated_at", "-id")
    )


def collection_items_prefetch() -> Prefetch:
    """A collection's items in order, each with its artifact; a deleted artifact's item is never shown."""
    return Prefetch(
        "items",
        queryset=AssetCollectionItem.objects.filter(artifact__deleted_at__isnull=True)
        .select_related("artifact")
        .order_by("position"),
    )


def collection_get(*, workspace_id: int, collection_id: int) -> AssetCollection:
    collection = collection_list(workspace_id=workspace_id).filter(pk=collection_id).first()
    if collection is None:
        raise NotFound(gettext_noop("Collection not found."))
    return collection


# --- creative guides (workspace/services/guides.py) ----------------------------------------------------------------

MAX_GUIDES_LISTED = 50  # what a task's context lists at most (names and purposes only)


@dataclass(frozen=True)
class GuideRef:
    """A guide as a workspace sees it: its own, or a built-in one no guide of its own replaces."""

    name: str
    purpose: str
    builtin: bool
    version: int
    artifact_id: int | None = None  # the document holding a workspace guide's text
    content: str | None = None  # only when read


def _builtin_latest() -> QuerySet[BuiltinGuide]:
    newest = BuiltinGuide.objects.filter(name=OuterRef("name")).order_by("-version").values("version")[:1]
    return BuiltinGuide.objects.filter(version=Subquery(newest))


def _workspace_guides(workspace_id: int) -> QuerySet[Guide]:
    return Guide.objects.filter(workspace_id=workspace_id, artifact__deleted_at__isnull=True).select_related("artifact")


def guide_list(*, workspace_id: int) -> list[GuideRef]:
    """Every guide the workspace's tasks can read, by name: its own, then built-in ones of other names."""
    own = {
        g.name: GuideRef(g.name, g.purpose, False, g.artifact.current_version, g.artifact_id)
        for g in _workspace_guides(workspace_id)
    }
    shipped = {
        b.name: GuideRef(b.name, b.purpose, True, b.version)
        for b in _builtin_latest().exclude(name__in=list(own)).only("name", "purpose", "version")
    }
    return [guide for _, guide in sorted({**shipped, **own}.items())]


def guide_index(*, workspace_id: int) -> list[tuple[str, str]]:
    """(name, purpose) of the guides a task's context lists: no text, no version, so the list keeps its bytes
    until a guide is added, renamed or given another purpose (agents/runtime/context.py)."""
    return [(g.name, g.purpose) for g in guide_list(workspace_id=workspace_id)[:MAX_GUIDES_LISTED]]


def guide_get(*, workspace_id: int, name: str, version: int | None = None) -> GuideRef:
    """A guide with its text: the workspace's own of that name, else the built-in one; its current version unless
    `version` is given. NotFound otherwise (`version_not_found` for a version it does not have)."""
    own = _workspace_guides(workspace_id).filter(name=name).first() if isinstance(name, str) else None
    if own is not None:
        number = own.artifact.current_version if version is None else version
        text = own.artifact.versions.filter(number=number).values_list("content", flat=True).first()
        if text is None:
            raise NotFound(f"This guide has no version {number}.", code="version_not_found")
        return GuideRef(own.name, own.purpose, False, number, own.artifact_id, text)
    shipped = BuiltinGuide.objects.filter(name=name)
    shipped = shipped.filter(version=version) if version is not None else shipped.order_by("-version")
    builtin = shipped.first()
    if builtin is None:
        if version is not None and BuiltinGuide.objects.filter(name=name).exists():
            raise NotFound(f"This guide has no version {version}.", code="version_not_found")
        raise NotFound(gettext_noop("Guide not found."))
    return GuideRef(builtin.name, builtin.purpose, True, builtin.version, None, builtin.content)
