"""The Router's one read-only tool: open a candidate task's details before deciding (seed §3.1, DESIGN §2).

The index gives the Router each task's goal, summary, state and newest artifacts; when two candidates stay close,
`open_task` shows one task's brief, checklist, latest artifacts and the person's latest messages to it. It is
bounded per Main message (settings.LOMOTE_ROUTER_MAX_LOOKUPS, shared by the routing pass and the duplicate
check): past the cap the tool refuses and the Router must decide. It reads only — nothing it returns is an
authorisation, and the runtime checks rights on its own — and it opens only the tasks the Router was shown, in
this workspace, not archived or cancelled: anything else is one "not found", whichever the reason.

Every look-up (opened, not found or refused) is kept in order and recorded on the Main message
(`MainMessage.router_lookups`).
"""

import json
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agents.providers.base import ToolCallIntent, ToolSpec
from agents.services.task_index import task_details_get

LOOKUP_TOOL_NAME = "open_task"

OPENED, NOT_FOUND, REFUSED, INVALID = "opened", "not_found", "refused", "invalid"


class LookupArguments(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task: int = Field(ge=1, le=2**63 - 1, description="The id of a task from the index.")


LOOKUP_TOOL = ToolSpec(
    name=LOOKUP_TOOL_NAME,
    description="Read one task's details (brief, checklist, latest artifacts, the person's latest messages to it) "
    "before deciding, when the index leaves two or more tasks close. Read-only; a few per message at most.",
    parameters={
        "type": "object",
        "properties": {"task": {"type": "integer", "minimum": 1, "description": "The id of a task from the index."}},
        "required": ["task"],
        "additionalProperties": False,
    },
)


def max_lookups() -> int:
    return max(int(settings.LOMOTE_ROUTER_MAX_LOOKUPS), 0)


@dataclass
class Lookups:
    """The look-ups of one Main message: its budget, what was opened, in order. Not thread-shared."""

    workspace_id: int
    cap: int = field(default_factory=max_lookups)
    record: list[dict[str, Any]] = field(default_factory=list)

    @property
    def left(self) -> int:
        return max(self.cap - len(self.record), 0)

    def opened(self) -> list[int]:
        return [entry["task"] for entry in self.record if entry["result"] == OPENED]

    def run(self, call: ToolCallIntent, *, shown: set[int]) -> dict[str, Any]:
        """Answer one `open_task` call: the task's details, or why not. Every call counts against the cap."""
        arguments = call.arguments
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except ValueError:
                arguments = None
        try:
            task_id = LookupArguments.model_validate(arguments).task
        except ValidationError:
            task_id = None
        if self.left <= 0:
            self._note(task_id, REFUSED)
            return {
                "error": "lookup_limit",
                "message": f"No more look-ups for this message (at most {self.cap}). Decide now with route_message.",
            }
        if task_id is None:
            self._note(None, INVALID)
            return {"error": "invalid_arguments", "message": 'Give {"task": <id from the index>}.', **self._left()}
        # Only tasks the Router was shown, and only through the workspace-scoped read: anything else is the same
        # "not found", so an id from another workspace tells the model nothing.
        details = task_details_get(workspace_id=self.workspace_id, task_id=task_id) if task_id in shown else None
        if details is None:
            self._note(task_id, NOT_FOUND)
            return {
                "error": "not_found",
                "message": f"No open task #{task_id} among the candidates of this workspace.",
                **self._left(),
            }
        self._note(task_id, OPENED)
        return {"task": details, **self._left()}

    def _note(self, task_id: int | None, result: str) -> None:
        self.record.append({"task": task_id, "result": result})

    def _left(self) -> dict[str, int]:
        return {"lookups_left": self.left}
