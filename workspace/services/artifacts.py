"""Artifacts and their immutable versions, with optimistic concurrency (DESIGN §9).

A write names the version it was based on; if someone else's write landed first it is refused with
`stale_version` and the current version, and changes nothing: the writer must re-read. Every write records
an event in the same transaction, and every new version leaves change notices for the other tasks that
had seen the artifact (workspace/services/notices.py) and publishes ARTIFACT_VERSION_ADDED
(workspace/domain_events.py), on which Flow outputs derived from it go stale (workspace/subscribers.py). These
functions open an atomic block of their own, which becomes a savepoint when the caller (a view, or the
agent runtime around a transactional tool) already holds one.

A deletion (`artifact_delete`) is soft and final: `deleted_at` is set and never cleared, and every read
(workspace.selectors.artifact_get / artifact_list / artifact_search) and write here treats the artifact as
absent from then on. Deleting is irreversible, so it is only ever carried out by a confirmation a person
gave (agents/services/artifact_delete.py opens and settles that card).
"""

from pathlib import PurePosixPath
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.core.files import File
from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify
from django.utils.translation import gettext_noop

from lomote.kernel import domain_events
from lomote.kernel.exceptions import Conflict, InvalidInput, NotFound
from workspace.domain_events import ARTIFACT_DELETED, ARTIFACT_VERSION_ADDED
from workspace.locks import artifact_qs_for_update
from workspace.models import Artifact, ArtifactKind, ArtifactVersion
from workspace.services.collections import collections_drop_artifact
from workspace.services.events import event_append
from workspace.services.notices import notices_on_artifact_deleted, notices_on_version_added

MAX_TITLE_CHARS = 300
MAX_TAGS = 20
MAX_TAG_CHARS = 50
MAX_TEXT_CHARS = 2_000_000

DEFAULT_MEDIA_TYPES = {
    ArtifactKind.DOCUMENT: "text/markdown",
    ArtifactKind.FLOW: "application/json",
    ArtifactKind.ASSET_COLLECTION: "application/json",
}


def _invalid(field: str, message: str) -> InvalidInput:
    return InvalidInput(message, details={"fields": {field: [message]}})


def _clean_title(title: str) -> str:
    title = (title or "").strip()
    if not title or len(title) > MAX_TITLE_CHARS:
        raise _invalid("title", f"A title needs 1 to {MAX_TITLE_CHARS} characters.")
    return title


def _clean_tags(tags: list[str] | tuple[str, ...]) -> list[str]:
    """Trimmed, without empties or case-insensitive duplicates, in the order given."""
    cleaned: list[str] = []
    seen: set[str] = set()
    for tag in tags:
        if not isinstance(tag, str):
            raise _invalid("tags", "Tags are strings.")
        tag = tag.strip()
        if not tag or tag.casefold() in seen:
            continue
        if len(tag) > MAX_TAG_CHARS:
            raise _invalid("tags", f"A tag has at most {MAX_TAG_CHARS} characters.")
        seen.add(tag.casefold())
        cleaned.append(tag)
    if len(cleaned) > MAX_TAGS:
        raise _invalid("tags", f"An artifact has at most {MAX_TAGS} tags.")
    return cleaned


def _check_content(content: str) -> None:
    if not isinstance(content, str):
        raise _invalid("content", "Content is text.")
    if len(content) > MAX_TEXT_CHARS:
        raise _invalid("content", f"Content is limited to {MAX_TEXT_CHARS} characters.")


def _check_author(author_user: AbstractBaseUser | None, author_task_id: int | None, author_turn_id: int | None) -> None:
    if author_turn_id is not None and author_task_id is None:
        raise ValueError("An author turn needs its task.")
    if author_user is not None and author_task_id is not None:
        raise ValueError("A version is authored by a person or by a task, not both.")


def _version_meta(meta: dict[str, Any] | None, file: File | None) -> dict[str, Any]:
    meta = dict(meta or {})
    if file is not None:
        meta.setdefault("bytes", file.size)
    return meta


def _new_version(
    artifact: Artifact,
    *,
    number: int,
    content: str,
    file: File | None,
    media_type: str,
    meta: dict[str, Any] | None,
    author_user: AbstractBaseUser | None,
    author_task_id: int | None,
    author_turn_id: int | None,
) -> ArtifactVersion:
    version = ArtifactVersion(
        artifact=artifact,
        number=number,
        content=content,
        media_type=media_type,
        meta=_version_meta(meta, file),
        author_user=author_user,
        author_task_id=author_task_id,
        author_turn_id=author_turn_id,
    )
    if file is not None:
        # Stored by the storage backend before the row is inserted; a rollback leaves an orphan file
        # (never a row pointing at a missing file). Large uploads belong outside the transaction.
        version.file.save(file.name or "file", file, save=False)
    version.save(force_insert=True)
    return version


@transaction.atomic
def artifact_create(
    *,
    workspace_id: int,
    kind: str,
    title: str,
    description: str = "",
    tags: list[str] | tuple[str, ...] = (),
    content: str = "",
    file: File | None = None,
    media_type: str | None = None,
    meta: dict[str, Any] | None = None,
    author_user: AbstractBaseUser | None = None,
    author_task_id: int | None = None,
    author_turn_id: int | None = None,
) -> Artifact:
    """Create an artifact with its version 1, authored by a person (`author_user`) or a task and turn."""
    artifact, _ = artifact_create_with_version(
        workspace_id=workspace_id,
        kind=kind,
        title=title,
        description=description,
        tags=tags,
        content=content,
        file=file,
        media_type=media_type,
        meta=meta,
        author_user=author_user,
        author_task_id=author_task_id,
        author_turn_id=author_turn_id,
    )
    return artifact


def artifact_create_with_version(
    *,
    workspace_id: int,
    kind: str,
    title: str,
    description: str = "",
    tags: list[str] | tuple[str, ...] = (),
    content: str = "",
    file: File | None = None,
    media_type: str | None = None,
    meta: dict[str, Any] | None = None,
    author_user: AbstractBaseUser | None = None,
    author_task_id: int | None = None,
    author_turn_id: int | None = None,
) -> tuple[Artifact, ArtifactVersion]:
    """`artifact_create`, returning the version 1 it wrote as well (not read back). Runs in the caller's
    transaction (`artifact_create`'s, a job report's): no savepoint of its own, a round trip each way saved on a
    callback's path; an error rolls the caller's transaction back with it."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("artifact_create_with_version must run inside the caller's transaction")
    if kind not in ArtifactKind.values:
        raise _invalid("kind", f"Unknown artifact kind {kind!r}.")
    _check_content(content)
    _check_author(author_user, author_task_id, author_turn_id)
    artifact = Artifact.objects.create(
        workspace_id=workspace_id,
        kind=kind,
        title=_clean_title(title),
        description=description or "",
        tags=_clean_tags(tags),
        current_version=1,
        created_by=author_user,
        created_by_task_id=author_task_id,
    )
    version = _new_version(
        artifact,
        number=1,
        content=content,
        file=file,
        media_type=media_type if media_type is not None else DEFAULT_MEDIA_TYPES.get(kind, ""),
        meta=meta,
        author_user=author_user,
        author_task_id=author_task_id,
        author_turn_id=author_turn_id,
    )
    event_append(
        workspace_id=workspace_id,
        kind="artifact.created",
        data={
            "artifact": artifact.pk,
            "kind": artifact.kind,
            "title": artifact.title,
            "version": 1,
            "author": version.author,
        },
    )
    return artifact, version


@transaction.atomic
def artifact_version_add(
    *,
    workspace_id: int,
    artifact_id: int,
    base_version: int,
    content: str = "",
    file: File | None = None,
    media_type: str | None = None,
    meta: dict[str, Any] | None = None,
    author_user: AbstractBaseUser | None = None,
    author_task_id: int | None = None,
    author_turn_id: int | None = None,
) -> ArtifactVersion:
    """Add the next version on top of `base_version`; refuse with `stale_version` if it is not current.

    Takes the artifact row lock, so two writers on the same base cannot both win. Another workspace's
    artifact, or a deleted one, is NotFound.
    """
    _check_content(content)
    _check_author(author_user, author_task_id, author_turn_id)
    artifact = (
        artifact_qs_for_update().filter(pk=artifact_id, workspace_id=workspace_id, deleted_at__isnull=True).first()
    )
    if artifact is None:
        raise NotFound(gettext_noop("Artifact not found."))
    if base_version != artifact.current_version:
        raise Conflict(
            f"Version {base_version} is not the current version of this artifact (it is "
            f"{artifact.current_version}); re-read it and apply your change on the current version.",
            code="stale_version",
            details={"current_version": artifact.current_version, "base_version": base_version},
        )
    if media_type is None:
        previous = artifact.versions.filter(number=artifact.current_version).only("media_type").first()
        media_type = previous.media_type if previous else DEFAULT_MEDIA_TYPES.get(artifact.kind, "")
    number = artifact.current_version + 1
    version = _new_version(
        artifact,
        number=number,
        content=content,
        file=file,
        media_type=media_type,
        meta=meta,
        author_user=author_user,
        author_task_id=author_task_id,
        author_turn_id=author_turn_id,
    )
    artifact.current_version = number
    artifact.save(update_fields=["current_version", "updated_at"])
    event_append(
        workspace_id=workspace_id,
        kind="artifact.version_added",
        data={
            "artifact": artifact.pk,
            "kind": artifact.kind,
            "title": artifact.title,
            "version": number,
            "base_version": base_version,
            "author": version.author,
        },
    )
    # Tasks that saw an older version learn of it at their next cycle; Flow outputs made from it go stale.
    notices_on_version_added(artifact, version)
    domain_events.publish(ARTIFACT_VERSION_ADDED, workspace_id=workspace_id, artifact_id=artifact.pk, version=number)
    return version


@transaction.atomic
def artifact_rename(*, workspace_id: int, artifact_id: int, title: str, renamed_by: AbstractBaseUser | None = None):
    """Give the artifact another title. A title says what people call it, not what it holds: it is not versioned
    (no version, no change notice, nothing goes stale), only logged as `artifact.renamed`. Search follows the
    saved title (workspace/search/artifacts.py). Another workspace's or a deleted artifact is NotFound."""
    title = _clean_title(title)
    artifact = artifact_qs_for_update().filter(pk=artifact_id, workspace_id=workspace_id, deleted_at__isnull=True)
    artifact = artifact.first()
    if artifact is None:
        raise NotFound(gettext_noop("Artifact not found."))
    if artifact.title == title:
        return artifact
    before, artifact.title = artifact.title, title
    artifact.save(update_fields=["title", "updated_at"])
    by = {"type": "user", "id": renamed_by.pk, "username": renamed_by.get_username()} if renamed_by else {}
    event_append(
        workspace_id=workspace_id,
        kind="artifact.renamed",
        data={"artifact": artifact.pk, "kind": artifact.kind, "title": title, "was": before, "by": by},
    )
    return artifact


@transaction.atomic
def artifact_delete(*, workspace_id: int, artifact_id: int, deleted_by: AbstractBaseUser | None = None) -> Artifact:
    """Delete the artifact for good (soft: `deleted_at` is set). Only for a deletion a person confirmed.

    Under the artifact's lock: it leaves every asset collection, every task that had seen it gets a change
    notice naming who deleted it, `artifact.deleted` is appended to the log and ARTIFACT_DELETED published.
    Another workspace's artifact is NotFound; one already deleted is 409 `artifact_deleted`.
    """
    artifact = artifact_qs_for_update().filter(pk=artifact_id, workspace_id=workspace_id).first()
    if artifact is None:
        raise NotFound(gettext_noop("Artifact not found."))
    if artifact.deleted_at is not None:
        raise Conflict(
            "This artifact was already deleted.",
            code="artifact_deleted",
            details={"artifact": artifact.pk, "deleted_at": artifact.deleted_at.isoformat()},
        )
    artifact.deleted_at = timezone.now()
    artifact.save(update_fields=["deleted_at", "updated_at"])
    collections = collections_drop_artifact(artifact=artifact)
    by = deleted_by.get_username() if deleted_by is not None else ""
    notices = notices_on_artifact_deleted(artifact, by=by)
    event_append(
        workspace_id=workspace_id,
        kind="artifact.deleted",
        data={
            "artifact": artifact.pk,
            "kind": artifact.kind,
            "title": artifact.title,
            "version": artifact.current_version,
            "by": {"type": "user", "id": deleted_by.pk, "username": by} if deleted_by is not None else {},
            "collections": collections,
            "tasks_told": [notice.task_id for notice in notices],
        },
    )
    domain_events.publish(ARTIFACT_DELETED, workspace_id=workspace_id, artifact_id=artifact.pk)
    return artifact


# The extension a downloaded version's file gets, from its media type (what the file endpoint serves).
DOWNLOAD_EXTENSIONS = {
    "image/png": "png",
    "image/jpeg": "jpg",
    "image/webp": "webp",
    "image/gif": "gif",
    "video/mp4": "mp4",
    "video/quicktime": "mov",
    "video/webm": "webm",
    "model/gltf-binary": "glb",
    "model/gltf+json": "gltf",
    "text/markdown": "md",
    "text/plain": "txt",
    "application/json": "json",
}
MAX_DOWNLOAD_STEM_CHARS = 80


def version_download_name(version: ArtifactVersion) -> str:
    """A file name a person recognises on disk: `<title slug>-v<n>.<ext>` ("retro-poster-v2.png").

    A title with nothing ASCII to keep (Arabic, emoji) becomes `artifact-<id>`; a media type we do not know keeps
    the stored file's own extension, else `bin`.
    """
    artifact = version.artifact
    stem = slugify(artifact.title)[:MAX_DOWNLOAD_STEM_CHARS].strip("-") or f"artifact-{artifact.pk}"
    extension = DOWNLOAD_EXTENSIONS.get(version.media_type)
    if extension is None:
        stored = PurePosixPath(version.file.name).suffix.lstrip(".").lower() if version.file else ""
        extension = stored if stored.isalnum() and len(stored) <= 8 else "bin"
    return f"{stem}-v{version.number}.{extension}"
