"""A person's own files become artifacts with versions (DESIGN §9; issue 15 item 4).

    artifact_upload(*, workspace_id, file, title="", description="", tags=(), author_user=None) -> Artifact
        A new artifact at version 1 from an uploaded file: an image (PNG, JPEG, WebP, GIF), a video (MP4, MOV,
        WebM), a glTF 3D model (.glb or .gltf) or a UTF-8 text document (its text becomes the document's
        content). The kind is decided from the content alone (workspace/sniffing.py).
    artifact_version_upload(*, workspace_id, artifact_id, base_version, file, author_user=None) -> ArtifactVersion
        The artifact's next version from a file of the same kind, on `base_version` (409 `stale_version`
        otherwise, like every artifact write).
    upload_check(file) -> CheckedUpload
        What both run first, before any write: 413 `too_large` over the kind's limit
        (settings.LOMOTE_UPLOAD_MAX_BYTES, or LOMOTE_UPLOAD_MAX_PIXELS for an image, however small the file
        announcing them); 400 `unsupported_type` when the content is none of the kinds above, is damaged, or
        is a glTF naming a file outside itself (details.found `external_uri`: only data: URIs are taken);
        400 `type_mismatch` when the file's name or declared type says one kind and the content is another (a
        PNG named .mp4). Nothing is stored then.
    upload_request_limit() -> int
        The largest file any kind takes: a request announcing or sending more is refused while it is read.

`file` is a Django File: an UploadedFile from a request (its name and content type are what the client
claimed) or a ContentFile from code (the demo's photo). The versions are written by workspace/services/
artifacts.py, so they record their events and leave change notices like any other write; their `meta` holds
what the content said (size in pixels, duration…) and `upload` (the original name, declared type, bytes and
SHA-256).
"""

import hashlib
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.files import File
from django.utils.text import slugify
from django.utils.translation import gettext_noop

from lomote.kernel.exceptions import DomainError, InvalidInput
from workspace.models import Artifact, ArtifactVersion
from workspace.selectors import artifact_get
from workspace.services.artifacts import MAX_TITLE_CHARS, artifact_create, artifact_version_add
from workspace.sniffing import (
    DOCUMENT,
    OTHER,
    Sniffed,
    TooBig,
    Unrecognised,
    declared_kinds,
    extension_of,
    sniff,
)

KIND_LABELS = {"image": "an image", "video": "a video", "3d": "a 3D model", "document": "a text document"}
CLAIM_LABELS = {**KIND_LABELS, OTHER: "a format not taken here"}
MARKDOWN_EXTENSIONS = {"md", "markdown", "mdown", "mkd"}
MAX_NAME_CHARS = 200


class UploadTooLarge(DomainError):
    status, code, default_message = (
        413,
        "too_large",
        gettext_noop("The file is larger than uploads of its kind may be."),
    )


def upload_limits() -> dict[str, int]:
    """Bytes accepted per artifact kind (settings.LOMOTE_UPLOAD_MAX_BYTES)."""
    return dict(settings.LOMOTE_UPLOAD_MAX_BYTES)


def upload_request_limit() -> int:
    return max(upload_limits().values())


@dataclass(frozen=True)
class CheckedUpload:
    sniffed: Sniffed
    size: int
    original_name: str
    declared_type: str
    sha256: str

    @property
    def kind(self) -> str:
        return self.sniffed.kind

    @property
    def stored_name(self) -> str:
        """A name of ours for the stored file: the original's stem, made safe, with the content's extension."""
        stem = slugify(PurePosixPath(self.original_name).stem)[:80] or "upload"
        return f"{stem}.{self.sniffed.extension}"

    @property
    def media_type(self) -> str:
        if self.kind == DOCUMENT and (
            extension_of(self.original_name) in MARKDOWN_EXTENSIONS or self.declared_type.startswith("text/markdown")
        ):
            return "text/markdown"
        return self.sniffed.media_type

    @property
    def default_title(self) -> str:
        stem = PurePosixPath(self.original_name).stem if extension_of(self.original_name) else self.original_name
        title = " ".join(stem.replace("_", " ").split())
        return title[:MAX_TITLE_CHARS] or "Upload"

    def meta(self) -> dict[str, Any]:
        return {
            **self.sniffed.meta,
            "upload": {
                "filename": self.original_name,
                "declared_type": self.declared_type,
                "bytes": self.size,
                "sha256": self.sha256,
            },
        }


def _clean(text: str, limit: int) -> str:
    """Client-given text we keep for the record: without NUL or surrogates (PostgreSQL stores neither)."""
    text = "".join(c for c in (text or "") if c != "\0" and not 0xD800 <= ord(c) <= 0xDFFF)
    return text[:limit]


def _sha256(file: File) -> str:
    digest = hashlib.sha256()
    for chunk in file.chunks():
        digest.update(chunk)
    return digest.hexdigest()


def _compatible(sniffed: Sniffed, claimed: str) -> bool:
    # A .gltf is JSON: a name or type saying "JSON" (a document) claims nothing against it.
    return claimed == sniffed.kind or (sniffed.media_type == "model/gltf+json" and claimed == DOCUMENT)


def _claims_sentence(claims: list[tuple[str, str]]) -> str:
    """ "The file name (.mp4) and the declared type (video/mp4) say it is a video"."""
    kinds = {kind for kind, _ in claims}
    if len(kinds) == 1:
        sources = " and ".join(source for _, source in claims)
        return f"{sources} say{'' if len(claims) > 1 else 's'} it is {CLAIM_LABELS[claims[0][0]]}"
    return ", ".join(f"{source} says it is {CLAIM_LABELS[kind]}" for kind, source in claims)


def upload_check(file: File) -> CheckedUpload:
    """Check the file against its content (module docstring); raise the error the person should see."""
    size = int(file.size or 0)
    original_name = _clean(PurePosixPath((file.name or "").replace("\\", "/")).name, MAX_NAME_CHARS)
    declared_type = _clean(getattr(file, "content_type", "") or "", 100).strip().lower()
    limits = upload_limits()
    if size > max(limits.values()):
        raise UploadTooLarge(
            f"The file has {size:,} bytes; uploads are at most {max(limits.values()):,} bytes.",
            details={"bytes": size, "max_bytes": max(limits.values()), "limits": limits},
        )
    claims = declared_kinds(original_name, declared_type)
    file.seek(0)
    try:
        sniffed = sniff(
            file,
            size=size,
            max_text_bytes=limits.get(DOCUMENT, 0),
            max_pixels=settings.LOMOTE_UPLOAD_MAX_PIXELS,
        )
    except TooBig as error:
        raise UploadTooLarge(error.message, details={"kind": error.kind, "bytes": size, **error.details}) from None
    except Unrecognised as error:
        raise InvalidInput(
            f"This file cannot be uploaded. {error.message}",
            code="unsupported_type",
            details={"found": error.found, "claimed": [{"kind": k, "by": what} for k, what in claims]},
        ) from None
    mismatched = [(kind, what) for kind, what in claims if not _compatible(sniffed, kind)]
    if mismatched:
        said = _claims_sentence(mismatched)
        raise InvalidInput(
            f"{said[0].upper()}{said[1:]}, but the content is {KIND_LABELS[sniffed.kind]} ({sniffed.media_type}). "
            "Rename the file to match what it is, or upload the file you meant.",
            code="type_mismatch",
            details={
                "detected": {"kind": sniffed.kind, "media_type": sniffed.media_type},
                "claimed": [{"kind": k, "by": what} for k, what in mismatched],
            },
        )
    if size > limits[sniffed.kind]:
        raise UploadTooLarge(
            f"{KIND_LABELS[sniffed.kind].capitalize()} is at most {limits[sniffed.kind]:,} bytes; this file has "
            f"{size:,}.",
            details={"kind": sniffed.kind, "bytes": size, "max_bytes": limits[sniffed.kind]},
        )
    return CheckedUpload(
        sniffed=sniffed, size=size, original_name=original_name, declared_type=declared_type, sha256=_sha256(file)
    )


def _content(checked: CheckedUpload, file: File) -> dict[str, Any]:
    """What artifact_create / artifact_version_add store: a document's text, or the file under our name."""
    common = {"media_type": checked.media_type, "meta": checked.meta()}
    if checked.kind == DOCUMENT:
        return {**common, "content": checked.sniffed.text or ""}
    file.seek(0)
    file.name = checked.stored_name
    return {**common, "file": file}


def artifact_upload(
    *,
    workspace_id: int,
    file: File,
    title: str = "",
    description: str = "",
    tags: list[str] | tuple[str, ...] = (),
    author_user: AbstractBaseUser | None = None,
) -> Artifact:
    """A new artifact at version 1 from `file` (module docstring). The title defaults to the file's name."""
    checked = upload_check(file)
    return artifact_create(
        workspace_id=workspace_id,
        kind=checked.kind,
        title=title.strip() or checked.default_title,
        description=description,
        tags=tags,
        author_user=author_user,
        **_content(checked, file),
    )


def artifact_version_upload(
    *,
    workspace_id: int,
    artifact_id: int,
    base_version: int,
    file: File,
    author_user: AbstractBaseUser | None = None,
) -> ArtifactVersion:
    """The artifact's next version from `file`, of the artifact's own kind, on `base_version`."""
    artifact = artifact_get(workspace_id=workspace_id, artifact_id=artifact_id)
    if artifact.kind not in KIND_LABELS:
        raise InvalidInput(
            f"A {artifact.get_kind_display().lower()} gets its versions from its editor, not from a file.",
            code="unsupported_type",
            details={"artifact_kind": artifact.kind},
        )
    checked = upload_check(file)
    if checked.kind != artifact.kind:
        raise InvalidInput(
            f"This artifact is {KIND_LABELS[artifact.kind]}; the file is {KIND_LABELS[checked.kind]} "
            f"({checked.sniffed.media_type}). A new version keeps its artifact's kind.",
            code="type_mismatch",
            details={
                "artifact_kind": artifact.kind,
                "detected": {"kind": checked.kind, "media_type": checked.sniffed.media_type},
            },
        )
    content = _content(checked, file)
    content["meta"] = {**content["meta"], "change": f"uploaded {checked.original_name or 'a file'}"[:200]}
    return artifact_version_add(
        workspace_id=workspace_id,
        artifact_id=artifact.pk,
        base_version=base_version,
        author_user=author_user,
        **content,
    )
