"""A Flow's nodes checked against their types' declarations (workspace/flows/params.py; issue 34 item 2).

    node_types_describe() -> list[dict]        each type: ports, params as a JSON Schema, what it generates
    graph_validate(*, workspace_id, graph, nodes=None, edges=None)
        the params of `nodes` (default: all) and the wires `edges` (default: all), or the first refusal:
        400 `invalid_node_params`  {"node", "type", "field", "errors": [{"field", "message", "code"}]}
        400 `wire_type_mismatch`   {"edge": [from, to], "from": {"node", "type", "port", "types"},
                                    "to": {"node", "type", "port", "accepts"}}
        404 `not_found`            an artifact_input naming an artifact this workspace does not have (the same
                                   answer whether it exists elsewhere or nowhere)

workspace/flows/authoring.py calls it on every create (the whole graph) and edit (the nodes and wires the edit
touches: a Flow stored before its types declared their params still edits node by node). Runs do not re-check:
each node keeps its own checks when it runs, so an older stored Flow still runs as it did.

A node's params are the pydantic model's, then what the fields allow one by one but not together, then the
generation provider's own check of `generation_params` (the same one a job submission makes). A provider this
deployment has not configured is not an error here: the run says so, with the provider's code.
"""

import copy
from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.utils.translation import gettext_noop
from pydantic import ValidationError

from lomote.kernel.exceptions import DomainError, InvalidInput, NotFound
from workspace.flows.graph import Graph
from workspace.flows.nodes import NODE_TYPES, READABLE_KINDS, GenerateNode, NodeType
from workspace.flows.params import PORT_TYPES, ModelParams
from workspace.models import Artifact
from workspace.providers import registry

NOT_CONFIGURED = "provider_not_configured"


def _inlined(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with its `$defs` references replaced by what they name: a form builder reads it top down."""
    defs = schema.pop("$defs", {})

    def walk(value: Any) -> Any:
        if isinstance(value, dict):
            ref = value.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                named = copy.deepcopy(defs[ref.rsplit("/", 1)[1]])
                return walk({**named, **{k: v for k, v in value.items() if k != "$ref"}})
            return {key: walk(item) for key, item in value.items()}
        if isinstance(value, list):
            return [walk(item) for item in value]
        return value

    return walk(schema)


def params_schema(node_type: NodeType) -> dict[str, Any]:
    schema = _inlined(node_type.Params.model_json_schema())
    schema["title"] = f"{node_type.title} parameters"
    if isinstance(node_type, GenerateNode):
        # The providers a node may name: those this deployment registers.
        schema["properties"]["provider"]["anyOf"][0]["enum"] = registry.provider_names()
    return schema


def node_types_describe() -> list[dict[str, Any]]:
    """Every node type as `GET …/flow-node-types/` shows it (without prices: billing adds them)."""
    return [
        {
            "name": node_type.name,
            "title": node_type.title,
            "description": node_type.description,
            "inputs": [port.describe(side="input") for port in node_type.inputs],
            "outputs": [port.describe(side="output") for port in node_type.outputs],
            "params_schema": params_schema(node_type),
            "generates": node_type.generates,
        }
        for node_type in NODE_TYPES.values()
    ]


def port_types_describe() -> list[dict[str, str]]:
    return [{"name": name, "title": title, "description": text} for name, (title, text) in PORT_TYPES.items()]


# --- params ------------------------------------------------------------------------------------------------


def _field(loc: Iterable[Any]) -> str:
    return ".".join(str(part) for part in loc) or "params"


def _params_invalid(node_id: str, type_name: str, errors: list[dict[str, str]]) -> InvalidInput:
    first = errors[0]
    return InvalidInput(
        f"Node {node_id!r} ({type_name}): `{first['field']}`: {first['message']}",
        code="invalid_node_params",
        details={"node": node_id, "type": type_name, "field": first["field"], "errors": errors},
    )


def _artifact_read(workspace_id: int, node_id: str, artifact_id: int | None) -> Artifact | None:
    if artifact_id is None:
        return None
    artifact = Artifact.objects.filter(pk=artifact_id, workspace_id=workspace_id, deleted_at__isnull=True).first()
    if artifact is None:
        raise NotFound(gettext_noop("Artifact not found."), details={"node": node_id, "field": "artifact_id"})
    return artifact


def _provider_errors(node_type: GenerateNode, params: dict[str, Any]) -> list[dict[str, str]]:
    """What the node's generation provider says of its job parameters, as field errors."""
    name = params.get("provider")
    if name is not None and not registry.provider_known(name):
        known = ", ".join(registry.provider_names())
        return [{"field": "provider", "message": f"No generation provider is called {name!r} (known: {known}).",
                 "code": "unknown_provider"}]  # fmt: skip
    try:
        provider = registry.provider_get(name or settings.LOMOTE_DEFAULT_GENERATION_PROVIDER)
        provider.check(node_type.kind, node_type.job_params(params))
    except DomainError as refused:
        if refused.code == NOT_CONFIGURED:
            return []
        fields = (refused.details.get("fields") or {}).get("params")
        if isinstance(fields, dict) and fields:
            return [
                {"field": f"generation_params.{key}", "message": " ".join(map(str, messages)), "code": refused.code}
                for key, messages in sorted(fields.items())
            ]
        return [{"field": "provider", "message": refused.message, "code": refused.code}]
    return []


def node_params_check(*, workspace_id: int, node_id: str, node: dict[str, Any]) -> None:
    """Refuse the node's params unless its type accepts them (module docstring)."""
    node_type = NODE_TYPES[node["type"]]
    params = node.get("params") or {}
    try:
        parsed = node_type.Params.model_validate(params, strict=True)
    except ValidationError as invalid:
        errors = [
            {"field": _field(error["loc"]), "message": error["msg"], "code": error["type"]}
            for error in invalid.errors(include_url=False)
        ]
        raise _params_invalid(node_id, node_type.name, errors) from None
    errors = []
    if isinstance(parsed, ModelParams):
        errors = [{"field": f, "message": m, "code": "invalid_combination"} for f, m in parsed.cross_errors()]
    elif isinstance(node_type, GenerateNode):
        errors = _provider_errors(node_type, params)
    elif node_type.name == "artifact_input":
        artifact = _artifact_read(workspace_id, node_id, params.get("artifact_id"))
        if artifact is not None and artifact.kind not in READABLE_KINDS:
            errors = [
                {
                    "field": "artifact_id",
                    "message": f"Artifact {artifact.pk} is a {artifact.kind}; this node reads a document, an image, "
                    "a video or a 3D model.",
                    "code": "unreadable_kind",
                }
            ]
    if errors:
        raise _params_invalid(node_id, node_type.name, errors)


# --- wires -------------------------------------------------------------------------------------------------


def _output_types(workspace_id: int, graph: Graph, node_id: str, cache: dict[int, str]) -> list[str]:
    """What the node's output may carry: its type's declaration, narrowed to its artifact's kind for an input."""
    node = graph["nodes"][node_id]
    node_type = NODE_TYPES[node["type"]]
    types = [t for port in node_type.outputs for t in port.types]
    artifact_id = (node.get("params") or {}).get("artifact_id") if node_type.name == "artifact_input" else None
    if isinstance(artifact_id, int):
        if artifact_id not in cache:
            found = Artifact.objects.filter(pk=artifact_id, workspace_id=workspace_id).values_list("kind", flat=True)
            cache[artifact_id] = next(iter(found), "")
        kind = READABLE_KINDS.get(cache[artifact_id])
        types = [kind] if kind else types
    return types


def _said(types: list[str]) -> str:
    return types[0] if len(types) == 1 else ", ".join(types[:-1]) + " or " + types[-1]


def wire_check(*, workspace_id: int, graph: Graph, edge: tuple[str, str], cache: dict[int, str]) -> None:
    a, b = edge
    source, target = NODE_TYPES[graph["nodes"][a]["type"]], NODE_TYPES[graph["nodes"][b]["type"]]
    types = _output_types(workspace_id, graph, a, cache)
    accepts = [t for port in target.inputs for t in port.types]
    if set(types) & set(accepts):
        return
    if not types:
        reason = f"{a} ({source.title}) has no output: it ends the Flow."
    elif not accepts:
        reason = f"{b} ({target.title}) takes no input: it is where a run starts."
    else:
        reason = f"{a} ({source.title}) outputs {_said(types)}, and {b} ({target.title}) reads {_said(accepts)}."
    raise InvalidInput(
        f"The wire {a} → {b} is refused: {reason}",
        code="wire_type_mismatch",
        details={
            "edge": [a, b],
            "from": {"node": a, "type": source.name, "port": _port(source.outputs), "types": types},
            "to": {"node": b, "type": target.name, "port": _port(target.inputs), "accepts": accepts},
        },
    )


def _port(ports: tuple) -> str | None:
    return ports[0].name if ports else None


def graph_validate(
    *,
    workspace_id: int,
    graph: Graph,
    nodes: Iterable[str] | None = None,
    edges: Iterable[tuple[str, str]] | None = None,
) -> None:
    """Check the params of `nodes` and the wires `edges` of a graph graph_check accepted (module docstring)."""
    for node_id in sorted(graph["nodes"] if nodes is None else nodes):
        node_params_check(workspace_id=workspace_id, node_id=node_id, node=graph["nodes"][node_id])
    cache: dict[int, str] = {}
    for edge in sorted({tuple(e) for e in (graph["edges"] if edges is None else edges)}):
        wire_check(workspace_id=workspace_id, graph=graph, edge=edge, cache=cache)
