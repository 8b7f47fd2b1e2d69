"""The stored shape of a Flow (seed 002): a JSON graph in the text of each Flow artifact version.

    {"nodes": {"<id>": {"type": "generate_text", "params": {...}, "version": 3}, ...},
     "edges": [["<from>", "<to>"], ...],
     "start": "<id of the one text_input node>"}

`version` is the artifact version in which the node last changed: conflicts are detected per node
(workspace/flows/authoring.py). The graph is a DAG with one start node of an input type and no edge into it.

This module is pure: it imports nothing else from workspace (import-linter checks it); the node type names it
checks against are passed in by its callers, from workspace/flows/nodes.py.
"""

import json
import re
from collections import deque
from collections.abc import Collection
from typing import Any

from lomote.kernel.exceptions import InvalidInput

NODE_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
MAX_NODES = 200
MAX_EDGES = 1000
MAX_PARAMS_BYTES = 20_000

Graph = dict[str, Any]


def _invalid(message: str, **details: Any) -> InvalidInput:
    return InvalidInput(message, code="invalid_flow", details=details)


def graph_load(content: str) -> Graph:
    """The graph stored in a version's text; an empty text is an empty graph (not yet runnable)."""
    if not content.strip():
        return {"nodes": {}, "edges": [], "start": None}
    try:
        graph = json.loads(content)
    except ValueError:
        raise _invalid("This Flow's content is not JSON.") from None
    return graph


def graph_dump(graph: Graph) -> str:
    """Canonical text: the same graph always serialises to the same bytes."""
    edges = sorted({(a, b) for a, b in graph["edges"]})
    return json.dumps(
        {"nodes": graph["nodes"], "edges": [list(e) for e in edges], "start": graph.get("start")},
        sort_keys=True,
        indent=1,
        ensure_ascii=False,
    )


def graph_check(graph: Any, *, types: Collection[str], input_types: Collection[str], runnable: bool = False) -> Graph:
    """Validate the shape, node types (among `types`), edges and acyclicity; with `runnable`, also the start node
    (one node of a type among `input_types`)."""
    if (
        not isinstance(graph, dict)
        or not isinstance(graph.get("nodes"), dict)
        or not isinstance(graph.get("edges", []), list)
    ):
        raise _invalid('A Flow is {"nodes": {id: node}, "edges": [[from, to]], "start": id}.')
    nodes, edges, start = graph["nodes"], graph.get("edges", []), graph.get("start")
    if len(nodes) > MAX_NODES or len(edges) > MAX_EDGES:
        raise _invalid(f"A Flow has at most {MAX_NODES} nodes and {MAX_EDGES} edges.")
    for node_id, node in nodes.items():
        if not NODE_ID.match(node_id):
            raise _invalid(f"Node id {node_id!r}: use 1-64 letters, digits, '_' or '-'.", node=node_id)
        if not isinstance(node, dict) or node.get("type") not in types:
            raise _invalid(f"Node {node_id!r} needs a type among: {', '.join(sorted(types))}.", node=node_id)
        params = node.setdefault("params", {})
        if not isinstance(params, dict) or len(json.dumps(params)) > MAX_PARAMS_BYTES:
            raise _invalid(f"Node {node_id!r}: params are a JSON object of at most {MAX_PARAMS_BYTES} bytes.")
        if set(node) - {"type", "params", "version"}:
            raise _invalid(f"Node {node_id!r} has unknown fields: {sorted(set(node) - {'type', 'params', 'version'})}.")
    for edge in edges:
        if not (isinstance(edge, list | tuple) and len(edge) == 2 and all(e in nodes for e in edge)):
            raise _invalid(f"Edge {edge!r} must join two existing nodes.", edge=edge)
        if edge[0] == edge[1]:
            raise _invalid(f"Edge {edge!r} joins a node to itself.", edge=list(edge))
    if topological_order(graph) is None:
        raise _invalid("A Flow's edges must not form a cycle.")
    if start is not None and start not in nodes:
        raise _invalid(f"The start node {start!r} does not exist.")
    if runnable or start is not None:
        if start is None or nodes[start]["type"] not in input_types:
            raise _invalid(f"A runnable Flow starts at one node of type {' or '.join(sorted(input_types))}.")
        if predecessors(graph, start):
            raise _invalid("No edge may lead into the start node.")
        others = [n for n, node in nodes.items() if node["type"] in input_types and n != start]
        if others:
            raise _invalid(f"A Flow has one input node; also found {others}.")
    return graph


def predecessors(graph: Graph, node_id: str) -> list[str]:
    return sorted({a for a, b in graph["edges"] if b == node_id})


def successors(graph: Graph, node_id: str) -> list[str]:
    return sorted({b for a, b in graph["edges"] if a == node_id})


def topological_order(graph: Graph) -> list[str] | None:
    """Nodes in an order where every edge points forward, or None when there is a cycle."""
    incoming = {n: 0 for n in graph["nodes"]}
    for _, b in {tuple(e) for e in graph["edges"]}:
        incoming[b] += 1
    ready = deque(sorted(n for n, count in incoming.items() if count == 0))
    order = []
    while ready:
        node = ready.popleft()
        order.append(node)
        for nxt in successors(graph, node):
            incoming[nxt] -= 1
            if incoming[nxt] == 0:
                ready.append(nxt)
    return order if len(order) == len(incoming) else None


def downstream(graph: Graph, node_ids: set[str]) -> set[str]:
    """Every node reachable from `node_ids`, those included."""
    seen, frontier = set(node_ids), list(node_ids)
    while frontier:
        for nxt in successors(graph, frontier.pop()):
            if nxt not in seen:
                seen.add(nxt)
                frontier.append(nxt)
    return seen


def nodes_changed(old: Graph, new: Graph) -> list[str]:
    """Node ids added, deleted, or changed (their node version differs) from `old` to `new`."""
    ids = set(old["nodes"]) | set(new["nodes"])
    return sorted(
        n for n in ids if (old["nodes"].get(n) or {}).get("version") != (new["nodes"].get(n) or {}).get("version")
    )
