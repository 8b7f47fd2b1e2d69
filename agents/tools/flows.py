"""Flow tools (domain "flows"): edit nodes with per-node conflict detection, and run a Flow as jobs.

An edit to a node someone changed since the version the model read is refused for that node
(`node_conflict`, naming the nodes to re-read); otherwise the edits apply on the latest version and the
result lists the nodes that changed since the base, which the model has not seen yet.
"""

from typing import Any, Literal

from pydantic import Field, model_validator

from agents.services.flow_runs import flow_run_request
from agents.tools.base import MAX_DB_ID, MAX_VERSION, StrictArgs, Tool, ToolContext, ToolResult
from agents.tools.documents import base_version_of, tool_error
from agents.tools.generation import api_requested
from lomote.kernel.exceptions import DomainError
from workspace.flows.authoring import flow_edit
from workspace.models import Role
from workspace.services.notices import artifact_seen


class NodeEdit(StrictArgs):
    params: dict[str, Any] | None = Field(default=None, description="The node's new params (replaces them all).")
    type: str | None = Field(default=None, max_length=32)
    delete: Literal[True] | None = None

    @model_validator(mode="after")
    def _one(self):
        if self.delete and (self.params is not None or self.type is not None):
            raise ValueError("a node is either deleted or edited")
        if not self.delete and self.params is None and self.type is None:
            raise ValueError('give "params" (and optionally "type"), or "delete": true')
        return self


class NewNode(StrictArgs):
    type: str = Field(max_length=32)
    params: dict[str, Any] = Field(default_factory=dict)


Edge = tuple[str, str]


class EditFlowNodes(Tool):
    name = "edit_flow_nodes"
    domain = "flows"
    description = (
        'Edit a Flow\'s nodes: `node_edits` {node_id: {"params": {...}}} or {node_id: {"delete": true}}, '
        '`add_nodes` {node_id: {"type", "params"}}, `add_edges` / `remove_edges` [[from, to]]. Based on '
        "`base_version` (by default the version you last read). A node someone changed since is refused with "
        "node_conflict naming it: re-read and redo. Other edits apply on the latest version; the result lists "
        "`changed_since_base`, the nodes changed by others that you have not seen."
    )
    idempotent = False
    required_role = Role.EDITOR

    class Args(StrictArgs):
        artifact_id: int = Field(ge=1, le=MAX_DB_ID)
        base_version: int | None = Field(default=None, ge=1, le=MAX_VERSION)
        node_edits: dict[str, NodeEdit] = Field(default_factory=dict, max_length=100)
        add_nodes: dict[str, NewNode] = Field(default_factory=dict, max_length=100)
        add_edges: list[Edge] = Field(default_factory=list, max_length=200)
        remove_edges: list[Edge] = Field(default_factory=list, max_length=200)

    def run(self, ctx: ToolContext, args: Args) -> ToolResult:
        try:
            base = base_version_of(ctx, args.artifact_id, args.base_version)
            edit = flow_edit(
                workspace_id=ctx.workspace_id,
                artifact_id=args.artifact_id,
                base_version=base,
                node_edits={n: e.model_dump(exclude_none=True) for n, e in args.node_edits.items()},
                add_nodes={n: e.model_dump() for n, e in args.add_nodes.items()},
                add_edges=[list(e) for e in args.add_edges],
                remove_edges=[list(e) for e in args.remove_edges],
                author_task_id=ctx.task_id,
                author_turn_id=ctx.turn_id,
            )
        except DomainError as exc:
            raise tool_error(exc) from None
        # The task now holds the new version, but NOT what others changed: `changed_since_base` says what to read.
        if not edit.changed_since_base:
            artifact_seen(
                workspace_id=ctx.workspace_id,
                artifact_id=args.artifact_id,
                task_id=ctx.task_id,
                version=edit.version.number,
            )
        content = {
            "artifact_id": args.artifact_id,
            "version": edit.version.number,
            "applied": edit.applied,
            "changed_since_base": edit.changed_since_base,
        }
        if edit.changed_since_base:
            content["note"] = (
                f"Nodes {', '.join(edit.changed_since_base)} were changed by someone else since version {base}; "
                "read the Flow before relying on them."
            )
        return ToolResult(content=content, artifact_created=True)


class RunFlow(Tool):
    name = "run_flow"
    domain = "flows"
    description = (
        'Run a Flow\'s current version with `inputs` (e.g. {"text": "..."} for its text_input start node). '
        "Nodes run as background jobs; the result gives the run id and each node's status."
    )
    idempotent = False
    required_role = Role.EDITOR
    paid = True  # its generation nodes are priced and held through billing before any job

    class Args(StrictArgs):
        artifact_id: int = Field(ge=1, le=MAX_DB_ID)
        inputs: dict[str, Any] = Field(default_factory=dict)

    def run(self, ctx: ToolContext, args: Args) -> ToolResult:
        try:
            # Keyed by the call id: a recovery re-run of this call finds its run instead of starting another.
            started = flow_run_request(
                workspace_id=ctx.workspace_id,
                artifact_id=args.artifact_id,
                inputs=args.inputs,
                task_id=ctx.task_id,
                api_request=api_requested(ctx.task_id),
                idempotency_key=ctx.call_id,
            )
        except DomainError as exc:
            raise tool_error(exc) from None
        run = started.run
        nodes = {n.node_id: n.status for n in run.nodes.all()}
        content = {
            "run": run.pk,
            "flow_version": run.flow_version,
            "status": run.status,
            "nodes": nodes,
            "cost": started.amount,
        }
        if started.card is None:
            return ToolResult(content=content, job_submitted=True)
        waiting = {
            "type": "approval",
            "card": started.card.pk,
            "quote": started.card.payload["quote"],
            "run": run.pk,
            "operation": started.card.payload["operation"],
            "amount": started.amount,
            "reasons": started.card.payload["reasons"],
        }
        content["message"] = "A person must approve this run's spending first; it starts by itself once approved."
        return ToolResult(content={**content, **waiting}, suspend=waiting)
