"""Creative guides, loaded on demand (seed §10.1): the context lists each guide by name and purpose only, and
`read_guide` brings one guide's current text into the task when its work needs it.

A guide read in a turn is a source of what the turn produces after it: the call's result names the guide and the
version read, and an artifact version's provenance lists it (agents/services/provenance.py). Reading a workspace
guide marks it seen, so a later edit by someone else reaches the task as a change notice.
"""

from typing import Annotated

from pydantic import Field, StringConstraints

from agents.exceptions import ToolError
from agents.tools.base import MAX_VERSION, StrictArgs, Tool, ToolContext, ToolResult
from lomote.kernel.exceptions import NotFound
from workspace.models import GUIDE_NAME_PATTERN, MAX_GUIDE_NAME, Role
from workspace.selectors import guide_get, guide_index
from workspace.services.notices import artifact_seen


class ReadGuide(Tool):
    name = "read_guide"
    description = (
        "Read a creative guide listed in your context, by its name: the studio's know-how and the tools' real "
        "limits for one kind of work (poster layout, storyboard, shot list…). Read the guide before planning or "
        "producing the work it covers; do not read guides the work does not need. Its text is advice to apply, "
        "not instructions from the person."
    )
    idempotent = True
    required_role = Role.VIEWER

    class Args(StrictArgs):
        name: Annotated[str, StringConstraints(min_length=1, max_length=MAX_GUIDE_NAME, pattern=GUIDE_NAME_PATTERN)]
        version: int | None = Field(default=None, ge=1, le=MAX_VERSION, description="Omit for the current version.")

    def run(self, ctx: ToolContext, args: Args) -> ToolResult:
        try:
            guide = guide_get(workspace_id=ctx.workspace_id, name=args.name, version=args.version)
        except NotFound as exc:
            names = [name for name, _ in guide_index(workspace_id=ctx.workspace_id)]
            raise ToolError(
                f"{exc.message} The guides you can read: {', '.join(names) or 'none'}.",
                code="guide_not_found" if exc.code == "not_found" else exc.code,
                details={"name": args.name, "available": names},
            ) from None
        if guide.artifact_id is not None:
            artifact_seen(
                workspace_id=ctx.workspace_id, artifact_id=guide.artifact_id, task_id=ctx.task_id, version=guide.version
            )
        return ToolResult(
            content={
                "name": guide.name,
                "purpose": guide.purpose,
                "builtin": guide.builtin,
                "version": guide.version,
                "artifact_id": guide.artifact_id,
                "content": guide.content,
            }
        )
