"""The Router's one read-only tool: open a candidate task's details before deciding (seed §3.1, DESIGN §2).

The index gives the Router each task's goal, summary, state and newest artifacts; when two candidates stay close,
`open_task` shows one task's brief, checklist, latest artifacts and the person's latest messages to it. It is
bounded per Main message (settings.LOMOTE_ROUTER_MAX_LOOKUPS, shared by the routing pass and the duplicate
check): past the cap the tool refuses and the Router must decide. It reads only — nothing it returns is an
authorisation, and the runtime checks rights on its own — and it opens only the tasks the Router was shown, named
by the labels it was given (a label not offered is an invalid call), in this workspace, not archived or
cancelled: anything else is one "not found", whichever the reason.

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

    task: str = Field(min_length=1, max_length=64, description="The label of a task from the index.")


def lookup_tool(labels: list[str]) -> ToolSpec:
    """The tool as offered for one request: the labels of the tasks the Router was shown are its only values."""
    return ToolSpec(
        name=LOOKUP_TOOL_NAME,
        description="Read one task's details (brief, checklist, latest artifacts, the person's latest messages to "
        "it) before deciding, when the index leaves two or more tasks close. Read-only; a few per message at most.",
        parameters={
            "type": "object",
            "properties": {
                "task": {"type": "string", "enum": list(labels), "description": "The label of a task from the index."}
            },
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

    def run(self, call: ToolCallIntent, *, shown: dict[str, int]) -> dict[str, Any]:
        """Answer one `open_task` call: the task's details, or why not. Every call counts against the cap.
        `shown` maps the labels the Router was offered to their tasks; any other label is an invalid call."""
        arguments = call.arguments
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except ValueError:
                arguments = None
        try:
            label = LookupArguments.model_validate(arguments).task
        except ValidationError:
            label = None
        task_id = shown.get(label) if label is not None and call.error is None else None
        if self.left <= 0:
            self._note(task_id, REFUSED)
            return {
                "error": "lookup_limit",
                "message": f"No more look-ups for this message (at most {self.cap}). Decide now with route_message.",
            }
        if task_id is None:
            self._note(None, INVALID)
            return {
                "error": "invalid_arguments",
                "message": 'Give {"task": <label of a task from the index>}.',
                **self._left(),
            }
        # Only through the workspace-scoped read, and only tasks still open: anything else is one "not found".
        details = task_details_get(workspace_id=self.workspace_id, task_id=task_id)
        if details is None:
            self._note(task_id, NOT_FOUND)
            return {"error": "not_found", "message": f"No open task {label!r} in this workspace.", **self._left()}
        self._note(task_id, OPENED)
        # The model names tasks by label only: the id stays here.
        shown_details = {"label": label, **{key: value for key, value in details.items() if key != "id"}}
        return {"task": shown_details, **self._left()}

    def _note(self, task_id: int | None, result: str) -> None:
        self.record.append({"task": task_id, "result": result})

    def _left(self) -> dict[str, int]:
        return {"lookups_left": self.left}
