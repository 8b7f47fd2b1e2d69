"""Flows as versioned node graphs, with conflicts checked per node (DESIGN §9; seed §9.3).

    flow_create(*, workspace_id, title, graph, author…) -> Artifact
    flow_edit(*, workspace_id, artifact_id, base_version, node_edits=None, add_nodes=None,
              add_edges=None, remove_edges=None, author…) -> FlowEdit

Every node carries the artifact version in which it last changed. An edit names the version it was based
on; a node it touches whose node version differs between that base and the latest version (someone
changed or deleted it since) is a conflict: the request is refused with `node_conflict` (409) naming those
nodes, and nothing is written — the writer re-reads them. Otherwise the edits apply on top of the LATEST
version, whatever else changed meanwhile, and the answer lists the nodes that changed since the base
(`changed_since_base`) so the writer knows what it has not seen. Edges are a set: adding one that exists or
removing one that does not changes nothing. The artifact row lock is held from reading the latest version
to writing the next, so two writers serialise: on different nodes both succeed, on the same node the
second finds the first's node version and is refused.
"""

import copy
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils.translation import gettext_noop

from lomote.kernel.exceptions import Conflict, InvalidInput, NotFound
from workspace.flows.graph import Graph, graph_check, graph_dump, graph_load, nodes_changed
from workspace.flows.nodes import INPUT_TYPES, NODE_TYPES
from workspace.flows.validation import graph_validate
from workspace.locks import artifact_qs_for_update
from workspace.models import Artifact, ArtifactKind, ArtifactVersion
from workspace.services.artifacts import artifact_create, artifact_version_add

NODE_EDIT_KEYS = frozenset({"params", "type", "delete"})


@dataclass
class FlowEdit:
    version: ArtifactVersion
    applied: list[str]
    changed_since_base: list[str] = field(default_factory=list)


def _stamped(graph: Graph, version: int) -> Graph:
    graph = copy.deepcopy(graph)
    graph.setdefault("edges", [])
    graph.setdefault("start", None)
    for node in graph.get("nodes", {}).values():
        if isinstance(node, dict):
            node["version"] = version
    return graph


@transaction.atomic
def flow_create(
    *,
    workspace_id: int,
    title: str,
    graph: Graph | None = None,
    description: str = "",
    tags: list[str] | tuple[str, ...] = (),
    author_user: AbstractBaseUser | None = None,
    author_task_id: int | None = None,
    author_turn_id: int | None = None,
) -> Artifact:
    """A new Flow artifact whose version 1 holds `graph` (every node at node version 1). Every node's params and
    every wire are checked against the node types' declarations (workspace/flows/validation.py)."""
    graph = graph_check(_stamped(graph or {"nodes": {}, "edges": []}, 1), types=NODE_TYPES, input_types=INPUT_TYPES)
    graph_validate(workspace_id=workspace_id, graph=graph)
    return artifact_create(
        workspace_id=workspace_id,
        kind=ArtifactKind.FLOW,
        title=title,
        description=description,
        tags=tags,
        content=graph_dump(graph),
        author_user=author_user,
        author_task_id=author_task_id,
        author_turn_id=author_turn_id,
    )


def _flow_locked(workspace_id: int, artifact_id: int) -> Artifact:
    artifact = (
        artifact_qs_for_update().filter(pk=artifact_id, workspace_id=workspace_id, deleted_at__isnull=True).first()
    )
    if artifact is None:
        raise NotFound(gettext_noop("Artifact not found."))
    if artifact.kind != ArtifactKind.FLOW:
        raise InvalidInput(f"Artifact {artifact_id} is a {artifact.kind}, not a Flow.", code="not_a_flow")
    return artifact


def _edge_list(value: Any, name: str) -> list[tuple[str, str]]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(
        isinstance(e, list | tuple) and len(e) == 2 and all(isinstance(x, str) for x in e) for e in value
    ):
        raise InvalidInput(f"`{name}` is a list of [from, to] node id pairs.", details={"fields": {name: ["invalid"]}})
    return [(a, b) for a, b in value]


@transaction.atomic
def flow_edit(
    *,
    workspace_id: int,
    artifact_id: int,
    base_version: int,
    node_edits: dict[str, dict[str, Any]] | None = None,
    add_nodes: dict[str, dict[str, Any]] | None = None,
    add_edges: list | None = None,
    remove_edges: list | None = None,
    start: str | None = None,
    author_user: AbstractBaseUser | None = None,
    author_task_id: int | None = None,
    author_turn_id: int | None = None,
) -> FlowEdit:
    """Apply node edits made on `base_version` to the latest version (module docstring). Takes the artifact lock.

    `node_edits`: {node_id: {"params": {...}} (replaces the node's params), optionally "type", or
    {"delete": true}}. `add_nodes`: {node_id: {"type", "params"}}. Edges are [from, to] pairs. What the edit
    writes is checked against the node types (400 `invalid_node_params`, `wire_type_mismatch`).
    """
    node_edits, add_nodes = dict(node_edits or {}), dict(add_nodes or {})
    add, remove = _edge_list(add_edges, "add_edges"), _edge_list(remove_edges, "remove_edges")
    if not (node_edits or add_nodes or add or remove or start):
        raise InvalidInput("Nothing to change.", code="empty_edit")
    artifact = _flow_locked(workspace_id, artifact_id)
    if not 1 <= base_version <= artifact.current_version:
        raise NotFound(
            f"This Flow has no version {base_version}.",
            code="version_not_found",
            details={"current_version": artifact.current_version},
        )
    versions = {v.number: v for v in artifact.versions.filter(number__in={base_version, artifact.current_version})}
    base = graph_load(versions[base_version].content)
    latest = graph_load(versions[artifact.current_version].content)

    conflicts, unknown = [], []
    for node_id in sorted(node_edits):
        base_node, latest_node = base["nodes"].get(node_id), latest["nodes"].get(node_id)
        if base_node is None and latest_node is None:
            unknown.append(node_id)
        elif base_node is None or latest_node is None or base_node.get("version") != latest_node.get("version"):
            conflicts.append(node_id)
    conflicts += sorted(n for n in add_nodes if n in latest["nodes"] and n not in conflicts)
    if unknown:
        raise InvalidInput(
            f"No node {', '.join(unknown)} in this Flow.", code="unknown_node", details={"nodes": unknown}
        )
    changed_since_base = nodes_changed(base, latest)
    if conflicts:
        raise Conflict(
            f"Node {', '.join(conflicts)} changed since version {base_version} (the Flow is at version "
            f"{artifact.current_version}); re-read {'it' if len(conflicts) == 1 else 'them'} and redo the edit on "
            "the current version. Nothing was changed.",
            code="node_conflict",
            details={
                "nodes": conflicts,
                "current_version": artifact.current_version,
                "base_version": base_version,
                "changed_since_base": changed_since_base,
            },
        )

    number = artifact.current_version + 1
    graph = copy.deepcopy(latest)
    applied = []
    for node_id, edit in sorted(node_edits.items()):
        if not isinstance(edit, dict) or not edit or set(edit) - NODE_EDIT_KEYS:
            raise InvalidInput(
                f'Node edit for {node_id!r}: {{"params": {{...}}}} (and optionally "type"), or {{"delete": true}}.',
                code="invalid_edit",
                details={"node": node_id},
            )
        if edit.get("delete"):
            del graph["nodes"][node_id]
            graph["edges"] = [e for e in graph["edges"] if node_id not in e]
            if graph.get("start") == node_id:
                graph["start"] = None
        else:
            node = graph["nodes"][node_id]
            if "params" in edit:
                node["params"] = edit["params"]
            if "type" in edit:
                node["type"] = edit["type"]
            node["version"] = number
        applied.append(node_id)
    for node_id, node in sorted(add_nodes.items()):
        if not isinstance(node, dict):
            raise InvalidInput(f"Node {node_id!r} is an object.", code="invalid_flow")
        graph["nodes"][node_id] = {"type": node.get("type"), "params": node.get("params", {}), "version": number}
        applied.append(node_id)
    edges = {tuple(e) for e in graph["edges"]}
    touched = {a for a, _ in add if (a, _) not in edges} | {a for a, _ in remove if (a, _) in edges}
    edges = (edges - set(remove)) | set(add)
    graph["edges"] = [list(e) for e in sorted(edges)]
    # An edge change is a change of the node it leaves: its outgoing wiring is part of what a reader saw.
    for node_id in sorted(touched):
        if node_id in graph["nodes"] and node_id not in applied:
            graph["nodes"][node_id]["version"] = number
            applied.append(node_id)
    if start is not None:
        graph["start"] = start
    graph_check(graph, types=NODE_TYPES, input_types=INPUT_TYPES)
    # What the edit wrote is checked against the node types: the params of the nodes it set or added, the wires
    # it added, and every wire of a node whose type or params changed (an input that now reads an image).
    rewritten = {n for n, e in node_edits.items() if not e.get("delete")} | set(add_nodes)
    wires = set(add) | {(a, b) for a, b in graph["edges"] if a in rewritten or b in rewritten}
    graph_validate(workspace_id=workspace_id, graph=graph, nodes=sorted(rewritten), edges=sorted(wires))
    version = artifact_version_add(
        workspace_id=workspace_id,
        artifact_id=artifact_id,
        base_version=artifact.current_version,
        content=graph_dump(graph),
        meta={"change": "node_edit", "nodes": sorted(applied), "based_on": base_version},
        author_user=author_user,
        author_task_id=author_task_id,
        author_turn_id=author_turn_id,
    )
    return FlowEdit(version=version, applied=sorted(applied), changed_since_base=changed_since_base)
