"""Creative guides (seed §10.1): know-how an agent loads on demand instead of carrying it in every prompt.

    guides_sync() -> list[BuiltinGuide]                      the shipped guides, one new version per changed file
    guide_create(*, workspace_id, name, purpose, content, author_user) -> Guide
    guide_update(*, workspace_id, name, purpose=…, base_version=…, content=… | edits=…, author_user) -> Guide

Built-in guides ship as Markdown files in workspace/builtin_guides/ (front matter: `name`, `purpose`) and are the
same for every workspace; `guides_sync` runs after every `migrate` (workspace/apps.py) and adds a version only
for a file whose purpose or text changed, so it can run any number of times. A workspace's own guides are
document artifacts (versioned, optimistic writes, change notices) with a name and a one-line purpose on a
`Guide` row; one named like a built-in guide replaces it for that workspace. Reads: workspace/selectors.py.
"""

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.utils.translation import gettext_noop

from lomote.kernel.exceptions import Conflict, InvalidInput, NotFound
from workspace.locks import guide_qs_for_update
from workspace.models import (
    GUIDE_NAME_PATTERN,
    MAX_GUIDE_NAME,
    MAX_GUIDE_PURPOSE,
    ArtifactKind,
    BuiltinGuide,
    Guide,
)
from workspace.services.artifacts import artifact_create
from workspace.services.documents import document_edit, document_write
from workspace.services.events import event_append

BUILTIN_DIR = Path(__file__).resolve().parent.parent / "builtin_guides"
MAX_GUIDE_CHARS = 100_000  # a guide is read into a model's context whole: keep it a guide, not a book
GUIDE_TAG = "guide"
_FRONT_MATTER = re.compile(r"\A---\n(?P<head>.*?)\n---\n(?P<body>.*)\Z", re.S)


def _invalid(field: str, message: str, code: str = "invalid") -> InvalidInput:
    return InvalidInput(message, code=code, details={"fields": {field: [message]}})


def check_name(name: str) -> str:
    if not isinstance(name, str) or not (1 <= len(name) <= MAX_GUIDE_NAME) or not re.match(GUIDE_NAME_PATTERN, name):
        raise _invalid(
            "name",
            f"A guide's name is 1 to {MAX_GUIDE_NAME} lower-case letters, digits and single hyphens "
            "(e.g. poster-layout).",
        )
    return name


def check_purpose(purpose: str) -> str:
    one_line = isinstance(purpose, str) and "\n" not in purpose.strip() and "\r" not in purpose.strip()
    purpose = " ".join(purpose.split()) if one_line else ""
    if not purpose or len(purpose) > MAX_GUIDE_PURPOSE:
        raise _invalid("purpose", f"A guide's purpose is one line of 1 to {MAX_GUIDE_PURPOSE} characters.")
    return purpose


def check_content(content: str) -> str:
    if not isinstance(content, str) or not content.strip():
        raise _invalid("content", "A guide needs its text.")
    if len(content) > MAX_GUIDE_CHARS:
        raise _invalid("content", f"A guide is limited to {MAX_GUIDE_CHARS} characters.")
    return content


# --- built-in guides ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GuideFile:
    name: str
    purpose: str
    content: str

    @property
    def digest(self) -> str:
        return hashlib.sha256(f"{self.purpose}\n{self.content}".encode()).hexdigest()


def guide_file_parse(text: str, *, source: str = "") -> GuideFile:
    """A guide file: `---`, `name: …`, `purpose: …`, `---`, then the Markdown text. Raises ValueError."""
    match = _FRONT_MATTER.match(text.replace("\r\n", "\n"))
    if match is None:
        raise ValueError(f"{source}: a guide file starts with a front matter block between --- lines")
    head = dict(
        (key.strip(), value.strip())
        for key, _, value in (line.partition(":") for line in match.group("head").splitlines() if line.strip())
    )
    try:
        return GuideFile(
            name=check_name(head.get("name", "")),
            purpose=check_purpose(head.get("purpose", "")),
            content=check_content(match.group("body").strip() + "\n"),
        )
    except InvalidInput as exc:
        raise ValueError(f"{source}: {exc.message}") from None


def builtin_files(directory: Path = BUILTIN_DIR) -> list[GuideFile]:
    files = [guide_file_parse(p.read_text(encoding="utf-8"), source=p.name) for p in sorted(directory.glob("*.md"))]
    names = [f.name for f in files]
    if len(set(names)) != len(names):
        raise ValueError(f"two built-in guides share a name: {sorted(names)}")
    return files


def guides_sync(directory: Path = BUILTIN_DIR, *, using: str = "default") -> list[BuiltinGuide]:
    """Record each shipped guide whose purpose or text differs from its latest version, as its next version.

    Idempotent: an unchanged file adds nothing. Two processes syncing at once cannot both add a version: the
    second insert hits (name, version) and is skipped (the other one recorded the same file).
    """
    added = []
    for file in builtin_files(directory):
        shipped = BuiltinGuide.objects.using(using).filter(name=file.name)
        current = shipped.order_by("-version").only("version", "digest").first()
        if current is not None and current.digest == file.digest:
            continue
        version = (current.version if current else 0) + 1
        try:
            with transaction.atomic(using=using):
                added.append(
                    BuiltinGuide.objects.using(using).create(
                        name=file.name, version=version, purpose=file.purpose, content=file.content, digest=file.digest
                    )
                )
        except IntegrityError:
            continue  # another process recorded this version meanwhile
    return added


# --- a workspace's own guides ----------------------------------------------------------------------------------------


def _guide_locked(workspace_id: int, name: str) -> Guide | None:
    return guide_qs_for_update().select_related("artifact").filter(workspace_id=workspace_id, name=name).first()


@transaction.atomic
def guide_create(
    *, workspace_id: int, name: str, purpose: str, content: str, author_user: AbstractBaseUser | None = None
) -> Guide:
    """A new guide of the workspace: its text is version 1 of a new document artifact.

    409 `guide_exists` if the workspace already has a guide of that name (a built-in guide's name is free: the
    workspace's guide replaces it for the workspace). A guide whose document was deleted frees its name.
    """
    name, purpose, content = check_name(name), check_purpose(purpose), check_content(content)
    existing = _guide_locked(workspace_id, name)
    if existing is not None:
        if existing.artifact.deleted_at is None:
            raise Conflict(
                f"This workspace already has a guide named {name!r}; edit it instead.",
                code="guide_exists",
                details={"name": name, "artifact_id": existing.artifact_id},
            )
        existing.delete()  # its document stays deleted, with its versions (provenance still names them)
    artifact = artifact_create(
        workspace_id=workspace_id,
        kind=ArtifactKind.DOCUMENT,
        title=name,
        description=purpose,
        tags=[GUIDE_TAG],
        content=content,
        meta={"guide": name},
        author_user=author_user,
    )
    try:
        with transaction.atomic():
            guide = Guide.objects.create(
                workspace_id=workspace_id, name=name, purpose=purpose, artifact=artifact, created_by=author_user
            )
    except IntegrityError:
        raise Conflict(
            f"A guide named {name!r} was just created.", code="guide_exists", details={"name": name}
        ) from None
    event_append(
        workspace_id=workspace_id,
        kind="guide.created",
        data={"name": name, "purpose": purpose, "artifact": artifact.pk, "version": 1},
    )
    return guide


@transaction.atomic
def guide_update(
    *,
    workspace_id: int,
    name: str,
    purpose: str | None = None,
    base_version: int | None = None,
    content: str | None = None,
    edits: list[dict] | None = None,
    author_user: AbstractBaseUser | None = None,
) -> Guide:
    """Change a workspace guide's purpose and/or its text (a full rewrite or fragment edits on `base_version`,
    as for any document: 409 `stale_version` when it is no longer current). All or nothing.

    A built-in guide is not edited here (409 `builtin_guide`): a workspace adapts it with a guide of its own of
    the same name. Holds the guide row's lock, then the document's.
    """
    if purpose is None and content is None and edits is None:
        message = "Give a new purpose, new content or edits."
        raise InvalidInput(message, details={"fields": {"non_field_errors": [message]}})
    if content is not None and edits is not None:
        raise _invalid("edits", "Give the whole new content or edits, not both.")
    if (content is not None or edits is not None) and base_version is None:
        raise _invalid("base_version", "Name the version your change is based on.")
    guide = _guide_locked(workspace_id, name)
    if guide is None or guide.artifact.deleted_at is not None:
        if BuiltinGuide.objects.filter(name=name).exists():
            raise Conflict(
                f"{name!r} is a built-in guide: create a guide of this workspace with the same name to adapt it.",
                code="builtin_guide",
                details={"name": name},
            )
        raise NotFound(gettext_noop("Guide not found."))
    changed: dict = {}
    if purpose is not None:
        guide.purpose = check_purpose(purpose)
        guide.save(update_fields=["purpose", "updated_at"])
        guide.artifact.description = guide.purpose
        guide.artifact.save(update_fields=["description", "updated_at"])
        changed["purpose"] = guide.purpose
    common = {"workspace_id": workspace_id, "artifact_id": guide.artifact_id, "author_user": author_user}
    if content is not None:
        version = document_write(**common, base_version=base_version, content=check_content(content))
        changed["version"] = version.number
    elif edits is not None:
        version = document_edit(**common, base_version=base_version, edits=edits)
        check_content(version.content)  # raising rolls the edit back with everything else
        changed["version"] = version.number
    event_append(workspace_id=workspace_id, kind="guide.updated", data={"name": name, **changed})
    guide.artifact.refresh_from_db(fields=["current_version", "description", "updated_at"])
    return guide
