"""Document tools (domain "documents"): write a whole document, or edit exact fragments, on a base version.

A write names the version it was based on — `base_version`, or by default the version this task last saw
(read_artifact records it). If someone else saved a newer version meanwhile, the write is refused as a
tool result (`stale_version`, with the current version) telling the model to re-read; the turn goes on.
"""

import re
from typing import Annotated, Any

from pydantic import Field, StringConstraints, model_validator

from agents.exceptions import ToolError
from agents.tools.base import MAX_DB_ID, MAX_VERSION, StrictArgs, Tool, ToolContext, ToolResult
from lomote.kernel.exceptions import DomainError
from workspace.models import ArtifactKind, ArtifactView, Role
from workspace.selectors import artifact_get
from workspace.services.artifacts import MAX_TEXT_CHARS, artifact_create
from workspace.services.documents import MAX_EDITS, document_edit, document_write
from workspace.services.notices import artifact_seen

MAX_TOOL_TEXT = 200_000
Text = Annotated[str, StringConstraints(max_length=MAX_TOOL_TEXT)]


def tool_error(exc: DomainError) -> ToolError:
    """A domain refusal as the tool result the model reads; conflicts say how to recover."""
    message = exc.message
    if exc.code in ("stale_version", "node_conflict") and "re-read" not in message:
        message += " Re-read it with read_artifact, then redo your change on the current version."
    return ToolError(message, code=exc.code, details=exc.details)


def base_version_of(ctx: ToolContext, artifact_id: int, given: int | None) -> int:
    """The version a write is based on: the one given, else the one this task last saw."""
    if given is not None:
        return given
    seen = (
        ArtifactView.objects.filter(artifact_id=artifact_id, viewer_task_id=ctx.task_id)
        .values_list("seen_version", flat=True)
        .first()
    )
    if seen is None:
        raise ToolError(
            f"Read artifact {artifact_id} with read_artifact before changing it (or pass base_version).",
            code="read_first",
            details={"artifact_id": artifact_id},
        )
    return seen


# --- a deterministic outline from a request (the offline planner's documents) --------------------------------

_SECTIONS = (
    (("storyboard", "shot", "plan"), ["Shot 1 — opening", "Shot 2 — the product", "Shot 3 — closing"]),
    (("script", "scénario", "scenario", "screenplay"), ["Scene 1 — setup", "Scene 2 — turn", "Scene 3 — payoff"]),
    (("slogan", "tagline"), ["Candidates", "Tone", "Recommendation"]),
    (("letter", "lettre", "email"), ["Opening", "Body", "Closing"]),
)
_DEFAULT_SECTIONS = ["Goal", "Audience", "Key points", "Next steps"]


def outline_from_prompt(prompt: str) -> tuple[str, str]:
    """A title and a Markdown outline built from the request alone — deterministic, no model involved."""
    first = re.split(r"(?<=[.!?])\s", prompt.strip(), maxsplit=1)[0].strip().rstrip(".!?")
    title = (first[:80].rstrip() + "…") if len(first) > 80 else (first or "Document")
    words = set(re.findall(r"[\wéèàç]+", prompt.lower()))
    sections = next((s for keys, s in _SECTIONS if words.intersection(keys)), _DEFAULT_SECTIONS)
    keywords = [w for w in re.findall(r"[\wéèàç'-]+", prompt) if len(w) > 3][:6]
    lines = [f"# {title}", "", "## Brief", "", prompt.strip(), ""]
    for n, section in enumerate(sections, 1):
        lines += [f"## {section}", ""]
        focus = keywords[(n - 1) % len(keywords)] if keywords else title
        lines += [f"- Focus: {focus}", f"- From the brief: {title}", ""]
    lines += ["---", "_Outline drafted from the request by the offline planner; to be refined._", ""]
    return title, "\n".join(lines)


class WriteDocument(Tool):
    name = "write_document"
    domain = "documents"
    description = (
        "Create a document, or rewrite one completely. To create: `title` and `content` (Markdown), or just "
        "`prompt` to draft an outline from the request. To rewrite: `artifact_id`, the full new `content` and "
        "`base_version` (the version you read; by default the one you last read). If someone changed it since, "
        "the write is refused with stale_version: re-read and redo it. For small changes use edit_document."
    )
    idempotent = False  # a repeated rewrite of the same base is refused as stale; a repeated create duplicates
    required_role = Role.EDITOR

    class Args(StrictArgs):
        title: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=300)] | None = None
        content: Text | None = None
        prompt: Annotated[str, StringConstraints(min_length=1, max_length=4000)] | None = None
        artifact_id: int | None = Field(default=None, ge=1, le=MAX_DB_ID)
        base_version: int | None = Field(default=None, ge=1, le=MAX_VERSION)
        checklist_position: int | None = Field(default=None, ge=1, le=1000)

        @model_validator(mode="after")
        def _what(self):
            if self.content is None and self.prompt is None:
                raise ValueError("give the document's `content` (or a `prompt` to draft it from)")
            if self.content is not None and len(self.content) > MAX_TEXT_CHARS:
                raise ValueError("content is too long")
            return self

    def run(self, ctx: ToolContext, args: Args) -> ToolResult:
        title, content = args.title, args.content
        if content is None:
            drafted_title, content = outline_from_prompt(args.prompt)
            title = title or drafted_title
        author = {"author_task_id": ctx.task_id, "author_turn_id": ctx.turn_id}
        try:
            if args.artifact_id is None:
                artifact = artifact_create(
                    workspace_id=ctx.workspace_id,
                    kind=ArtifactKind.DOCUMENT,
                    title=title or "Document",
                    content=content,
                    **author,
                )
                version, created = 1, True
            else:
                base = base_version_of(ctx, args.artifact_id, args.base_version)
                version = document_write(
                    workspace_id=ctx.workspace_id,
                    artifact_id=args.artifact_id,
                    base_version=base,
                    content=content,
                    **author,
                ).number
                artifact, created = artifact_get(workspace_id=ctx.workspace_id, artifact_id=args.artifact_id), False
        except DomainError as exc:
            raise tool_error(exc) from None
        artifact_seen(workspace_id=ctx.workspace_id, artifact_id=artifact.pk, task_id=ctx.task_id, version=version)
        result: dict[str, Any] = {
            "artifact_id": artifact.pk,
            "title": artifact.title,
            "version": version,
            "created": created,
            "chars": len(content),
        }
        if args.checklist_position is not None:
            result["checklist_position"] = args.checklist_position
        return ToolResult(content=result, artifact_created=True)


class FragmentEdit(StrictArgs):
    find: Annotated[str, StringConstraints(min_length=1, max_length=20_000)] = Field(
        description="Exact text of the base version; must occur exactly once."
    )
    replace: Annotated[str, StringConstraints(max_length=MAX_TOOL_TEXT)]


class EditDocument(Tool):
    name = "edit_document"
    domain = "documents"
    description = (
        "Edit parts of a document: each edit replaces an exact fragment of the version you read (`find`, which "
        "must occur exactly once — include surrounding text if needed) with `replace`. All edits apply together "
        "or none does. Refused with stale_version if the document changed since `base_version` (re-read it), "
        "or fragment_not_found / fragment_not_unique naming the edit."
    )
    idempotent = False
    required_role = Role.EDITOR

    class Args(StrictArgs):
        artifact_id: int = Field(ge=1, le=MAX_DB_ID)
        base_version: int | None = Field(default=None, ge=1, le=MAX_VERSION)
        edits: list[FragmentEdit] = Field(min_length=1, max_length=MAX_EDITS)

    def run(self, ctx: ToolContext, args: Args) -> ToolResult:
        try:
            base = base_version_of(ctx, args.artifact_id, args.base_version)
            version = document_edit(
                workspace_id=ctx.workspace_id,
                artifact_id=args.artifact_id,
                base_version=base,
                edits=[e.model_dump() for e in args.edits],
                author_task_id=ctx.task_id,
                author_turn_id=ctx.turn_id,
            )
        except DomainError as exc:
            raise tool_error(exc) from None
        artifact_seen(
            workspace_id=ctx.workspace_id, artifact_id=args.artifact_id, task_id=ctx.task_id, version=version.number
        )
        return ToolResult(
            content={"artifact_id": args.artifact_id, "version": version.number, "edits_applied": len(args.edits)},
            artifact_created=True,
        )
