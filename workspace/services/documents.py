"""Documents: full rewrites and exact-fragment edits, both on a named base version (DESIGN §9; seed §9.3).

    document_write(*, workspace_id, artifact_id, base_version, content, author…) -> ArtifactVersion
    document_edit(*, workspace_id, artifact_id, base_version, edits, author…) -> ArtifactVersion

A base that is not the current version is refused with `stale_version` (409, with the current version)
and changes nothing. An edit is {"find": exact text, "replace": text}; every `find` must occur exactly
once in the base content and no two may overlap, else the whole request is refused and the first
offending edit named (`fragment_not_found`, `fragment_not_unique`, `fragment_overlap`, 409, with
`details.edit` and `details.find`). The edits are then applied at the places they were found in the base,
all at once: the result does not depend on their order.
"""

from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils.translation import gettext_noop

from lomote.kernel.exceptions import Conflict, InvalidInput, NotFound
from workspace.locks import artifact_qs_for_update
from workspace.models import Artifact, ArtifactKind, ArtifactVersion
from workspace.services.artifacts import artifact_version_add

MAX_EDITS = 100
MAX_FRAGMENT_CHARS = 20_000


@dataclass(frozen=True)
class Edit:
    find: str
    replace: str

    @classmethod
    def of(cls, value: Any, index: int) -> "Edit":
        if isinstance(value, Edit):
            return value
        if not isinstance(value, dict) or set(value) != {"find", "replace"}:
            raise _edit_invalid(index, 'An edit is {"find": exact text, "replace": text}.')
        find, replace = value["find"], value["replace"]
        if not isinstance(find, str) or not isinstance(replace, str):
            raise _edit_invalid(index, "`find` and `replace` are text.")
        return cls(find=find, replace=replace)


def _edit_invalid(index: int, message: str) -> InvalidInput:
    return InvalidInput(message, code="invalid_edit", details={"edit": index, "fields": {"edits": [message]}})


def _fragment_conflict(code: str, index: int, edit: Edit, message: str, **extra: Any) -> Conflict:
    return Conflict(message, code=code, details={"edit": index, "find": edit.find[:500], **extra})


def edits_apply(content: str, edits: list[Edit] | list[dict]) -> str:
    """`content` with every edit applied where its fragment occurs (once) in `content`; pure, all-or-nothing.

    Raises InvalidInput for malformed edits and Conflict naming the first edit whose fragment is missing,
    repeated or overlaps an earlier one.
    """
    if not isinstance(edits, list) or not edits:
        raise InvalidInput("Give at least one edit.", code="invalid_edit", details={"fields": {"edits": ["empty"]}})
    if len(edits) > MAX_EDITS:
        raise InvalidInput(f"At most {MAX_EDITS} edits at once.", code="invalid_edit", details={"edit": MAX_EDITS})
    parsed = [Edit.of(edit, index) for index, edit in enumerate(edits)]
    spans: list[tuple[int, int, int]] = []
    for index, edit in enumerate(parsed):
        if not edit.find:
            raise _edit_invalid(index, "`find` cannot be empty: it must locate exactly one place.")
        if len(edit.find) > MAX_FRAGMENT_CHARS or len(edit.replace) > MAX_FRAGMENT_CHARS * 10:
            raise _edit_invalid(index, "This fragment is too long.")
        at = content.find(edit.find)
        if at < 0:
            raise _fragment_conflict(
                "fragment_not_found",
                index,
                edit,
                f"Edit {index}: its `find` text does not occur in the base version; re-read the document.",
            )
        occurrences = _count_overlapping(content, edit.find)
        if occurrences > 1:
            raise _fragment_conflict(
                "fragment_not_unique",
                index,
                edit,
                f"Edit {index}: its `find` text occurs {occurrences} times; include more surrounding text so it "
                "occurs exactly once.",
                occurrences=occurrences,
            )
        spans.append((at, at + len(edit.find), index))
    spans.sort()
    for (_, end, first), (start, _, second) in zip(spans, spans[1:], strict=False):
        if start < end:
            index = max(first, second)
            raise _fragment_conflict(
                "fragment_overlap",
                index,
                parsed[index],
                f"Edit {index} overlaps edit {min(first, second)}; merge them into one edit.",
                overlaps=min(first, second),
            )
    pieces, cursor = [], 0
    for start, end, index in spans:
        pieces += [content[cursor:start], parsed[index].replace]
        cursor = end
    pieces.append(content[cursor:])
    return "".join(pieces)


def _count_overlapping(text: str, fragment: str) -> int:
    """Occurrences of `fragment`, overlapping ones included ("aa" occurs twice in "aaa")."""
    count, at = 0, text.find(fragment)
    while at >= 0:
        count += 1
        at = text.find(fragment, at + 1)
    return count


def _document_locked(workspace_id: int, artifact_id: int) -> Artifact:
    artifact = (
        artifact_qs_for_update().filter(pk=artifact_id, workspace_id=workspace_id, deleted_at__isnull=True).first()
    )
    if artifact is None:
        raise NotFound(gettext_noop("Artifact not found."))
    if artifact.kind != ArtifactKind.DOCUMENT:
        raise InvalidInput(
            f"Artifact {artifact_id} is a {artifact.kind}, not a document.",
            code="not_a_document",
            details={"kind": artifact.kind},
        )
    return artifact


def stale_version(artifact: Artifact, base_version: int) -> Conflict:
    return Conflict(
        f"Version {base_version} is not the current version of this artifact (it is {artifact.current_version}); "
        "re-read it and apply your change on the current version.",
        code="stale_version",
        details={"current_version": artifact.current_version, "base_version": base_version},
    )


@transaction.atomic
def document_write(
    *,
    workspace_id: int,
    artifact_id: int,
    base_version: int,
    content: str,
    author_user: AbstractBaseUser | None = None,
    author_task_id: int | None = None,
    author_turn_id: int | None = None,
) -> ArtifactVersion:
    """Replace the document's text with `content` as the version after `base_version` (module docstring)."""
    _document_locked(workspace_id, artifact_id)
    return artifact_version_add(
        workspace_id=workspace_id,
        artifact_id=artifact_id,
        base_version=base_version,
        content=content,
        meta={"change": "rewrite"},
        author_user=author_user,
        author_task_id=author_task_id,
        author_turn_id=author_turn_id,
    )


@transaction.atomic
def document_edit(
    *,
    workspace_id: int,
    artifact_id: int,
    base_version: int,
    edits: list[dict] | list[Edit],
    author_user: AbstractBaseUser | None = None,
    author_task_id: int | None = None,
    author_turn_id: int | None = None,
) -> ArtifactVersion:
    """Apply fragment edits to `base_version`, which must be current, as the next version (module docstring).

    Holds the artifact row lock from the version check to the write.
    """
    artifact = _document_locked(workspace_id, artifact_id)
    if base_version != artifact.current_version:
        raise stale_version(artifact, base_version)
    base = artifact.versions.get(number=base_version)
    content = edits_apply(base.content, edits)
    return artifact_version_add(
        workspace_id=workspace_id,
        artifact_id=artifact_id,
        base_version=base_version,
        content=content,
        meta={"change": "edit", "edits": len(edits)},
        author_user=author_user,
        author_task_id=author_task_id,
        author_turn_id=author_turn_id,
    )
