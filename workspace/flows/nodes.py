"""The registry of Flow node types (seed 002: TextInputNode, GenerateTextNode, RouterNode, FinishNode, …).

Each type turns its params, the run's inputs and its upstream nodes' outputs into an output:

    text_input      the start node: {"text": inputs["text"]}
    artifact_input  the current version of a workspace artifact (params.artifact_id): {"text", "artifact",
                    "version"}; records the version it consumed, so a later change marks it stale
    generate_text   a model call on the upstream text (params.prompt, "{input}" by default) with an assistant:
                    params.preset (+ params.preset_version to pin one), or params.instructions (+ optionally
                    params.model_profile, a profile name); output {"text", "model", "provider", "profile",
                    "preset"}
    generate_image  a generation job through workspace.services.jobs.job_submit; the node waits for
    generate_video  the job and outputs {"artifact", "version", "job"}; records the upstream artifacts' versions
    generate_3d     it was made from, and on a re-run (it was stale) adds a version to its own last artifact
    router          a model picks the next node among the router's successors (params.routes: {node id:
                    description}; same assistant params as generate_text); the other branches are skipped. A
                    model answer naming no route (`router_no_route`) or several (`router_ambiguous_route`)
                    fails the node
    finish          gathers the upstream outputs as the run's result

Model calls: the workspace app cannot import agents (DESIGN §1), so generate_text and router call a hook
that agents installs at start-up (workspace/domain_events.py: `text_hooks_install`; agents/services/
flow_nodes.py). It runs the node on the workspace's model profile, with its secret, like a task's turn; only
when that lease is the embedded scripted kind (no profile configured) does it answer with the deterministic
stand-ins below, which say so in their output (`model: "offline-scripted"`): for text, the offline writer
(workspace/flows/writer.py: a caption, a title, a shot list… written from the input, `writer: "offline"` and a
`note`). Likewise a paid node asks billing, through `spend_check_install`'s hook, whether money is held for its job.
"""

import re
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from django.utils.translation import gettext_noop

from lomote.kernel.exceptions import DomainError, InvalidInput
from workspace import domain_events
from workspace.flows import params as p
from workspace.flows.params import MAX_TEXT, MEDIA, TEXTUAL, Port
from workspace.flows.writer import OFFLINE_MODEL, WRITER_FIELDS, offline_write
from workspace.models import Artifact, ArtifactKind
from workspace.providers.base import IMAGE_FORMATS
from workspace.selectors import artifact_version_get
from workspace.services.jobs import job_submit

# The artifact kinds an artifact_input reads, and the port type its output then carries.
READABLE_KINDS = {ArtifactKind.DOCUMENT: "document", "image": "image", "video": "video", "3d": "3d"}


@dataclass
class NodeContext:
    workspace_id: int
    run_id: int
    node_id: str
    params: dict[str, Any]
    inputs: dict[str, Any]
    upstream: dict[str, dict[str, Any]]  # predecessor id → its output, in id order
    successors: list[str]
    task_id: int | None = None
    job_key: str = ""  # a generation node's job key: flow-run:<run>:<node>:<attempt>
    previous: dict[str, Any] = field(default_factory=dict)  # a re-run node's last output

    def upstream_artifacts(self) -> dict[str, int]:
        """{artifact id: its current version} for each artifact an upstream node output: what this node's result
        is made from, so a new version of one marks it stale (workspace/flows/stale.py)."""
        ids = {int(o["artifact"]) for o in self.upstream.values() if isinstance(o, dict) and o.get("artifact")}
        current = Artifact.objects.filter(pk__in=ids, workspace_id=self.workspace_id, deleted_at__isnull=True)
        return {str(pk): number for pk, number in current.values_list("pk", "current_version")}

    @property
    def text(self) -> str:
        """The upstream texts, joined in predecessor order."""
        texts = [str(o.get("text")) for o in self.upstream.values() if isinstance(o, dict) and o.get("text")]
        return "\n\n".join(texts)[:MAX_TEXT]


@dataclass
class NodeResult:
    output: dict[str, Any] = field(default_factory=dict)
    consumed: dict[str, int] = field(default_factory=dict)
    job_id: int | None = None  # set: the node waits for this generation job


class NodeFailed(DomainError):
    code, default_message = "node_failed", gettext_noop("The node failed.")


# --- model calls -----------------------------------------------------------------------------------------


def offline_text(params: dict[str, Any], prompt: str, material: str, *, instructions: str | None = None, facts=None):
    """The embedded stand-in for a text model: the offline writer (workspace/flows/writer.py), which writes from the
    node's input and says on its output that it wrote it. `instructions` are a preset's, when it has one."""
    said = str(params.get("instructions") or "") if instructions is None else instructions
    template = str(params.get("prompt", "{input}"))
    return offline_write(instructions=said, template=template, prompt=prompt, material=material, facts=facts)


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def offline_choice(text: str, routes: dict[str, str], default: Any = None) -> dict[str, Any]:
    """The embedded stand-in for a router's model: the first route (in id order) sharing a word with the text;
    else `default`, else the first route. Only for a node whose lease is the embedded scripted kind."""
    words = _words(text)
    for target in sorted(routes):
        if words & _words(routes[target]):
            return {"choice": target, "model": OFFLINE_MODEL, "reason": "keyword"}
    return {"choice": default if default in routes else sorted(routes)[0], "model": OFFLINE_MODEL, "reason": "default"}


def route_ids_named(answer: str, routes: dict[str, str]) -> list[str]:
    """The route ids a model's answer names as whole ids (case-insensitive), in id order."""
    return [
        target
        for target in sorted(routes)
        if re.search(rf"(?<![A-Za-z0-9_-]){re.escape(target)}(?![A-Za-z0-9_-])", answer, re.IGNORECASE)
    ]


def _model_params_need_hook(params: dict[str, Any]) -> None:
    if any(params.get(k) is not None for k in ("preset", "model_profile", "model_lease")):
        raise NodeFailed("No model provider is installed to run this node's preset or profile.", code="model_config")


def text_generate(workspace_id: int, params: dict[str, Any], prompt: str, material: str = "") -> dict[str, Any]:
    hook = domain_events.text_hook()
    if hook is None:
        _model_params_need_hook(params)
        return offline_text(params, prompt, material)
    return hook(workspace_id, params, prompt, material)


def branch_choose(workspace_id: int, params: dict[str, Any], text: str, routes: dict[str, str]) -> dict[str, Any]:
    """The route a router node takes. A model answer naming no route, or several, fails the node: it is never
    replaced by a guess."""
    hook = domain_events.choose_hook()
    if hook is None:
        _model_params_need_hook(params)
        return offline_choice(text, routes, params.get("default"))
    answer = hook(workspace_id, params, text, routes)
    if answer.get("choice") in routes:
        return answer
    named = answer.get("named") or []
    details = {"routes": sorted(routes), "named": named, "model": answer.get("model"), "answer": answer.get("answer")}
    if len(named) > 1:
        raise NodeFailed(
            f"The router's model ({answer.get('model')}) named several routes ({', '.join(named)}); it must name "
            f"exactly one of: {', '.join(sorted(routes))}.",
            code="router_ambiguous_route",
            details=details,
        )
    raise NodeFailed(
        f"The router's model ({answer.get('model')}) named none of its routes ({', '.join(sorted(routes))}).",
        code="router_no_route",
        details=details,
    )


def _call_meta(answer: dict[str, Any]) -> dict[str, Any]:
    """What a model node's output records about its call: the exact model and where its setup came from."""
    return {k: answer.get(k) for k in ("model", "provider", "profile", "preset") if k == "model" or k in answer}


# --- node types -------------------------------------------------------------------------------------------


IN_TEXT = Port("in", "Text in", TEXTUAL, "The text of every node wired in, joined in node id order.")


class NodeType(ABC):
    """A node type and its declaration (workspace/flows/params.py): what a form shows and the server checks."""

    name: str
    title: str
    description: str
    Params: type[p.Params] = p.NoParams
    inputs: tuple[Port, ...] = ()
    outputs: tuple[Port, ...] = ()
    generates: str | None = None  # the generation kind of a paid node

    @abstractmethod
    def run(self, ctx: NodeContext) -> NodeResult:
        """Do the node's work from its upstream outputs; a node waiting on a job says so in its result."""


class TextInput(NodeType):
    name = "text_input"
    title = "Text input"
    description = "Where a run starts: the text it is given (`inputs.text`), else the default text."
    Params = p.TextInputParams
    outputs = (Port("out", "Text", ("text",)),)

    def run(self, ctx: NodeContext) -> NodeResult:
        text = ctx.inputs.get("text", ctx.params.get("default", ""))
        if not isinstance(text, str):
            raise NodeFailed("The input `text` must be text.", code="invalid_input")
        return NodeResult(output={"text": text[:MAX_TEXT]})


class ArtifactInput(NodeType):
    name = "artifact_input"
    title = "Artifact"
    description = (
        "The current version of an artifact of the workspace: a document's text, or an image, video or 3D model "
        "with its title and description as its words."
    )
    Params = p.ArtifactInputParams
    # Wires in only order it: the artifact is read once the nodes before it are done (after one that changes it).
    inputs = (Port("after", "After", (*TEXTUAL, *MEDIA), "Optional: read the artifact only once these are done."),)
    outputs = (Port("out", "Artifact", tuple(READABLE_KINDS.values()), "The artifact's kind decides the type."),)

    def run(self, ctx: NodeContext) -> NodeResult:
        artifact_id = ctx.params.get("artifact_id")
        if not isinstance(artifact_id, int):
            raise NodeFailed("artifact_input needs params.artifact_id.", code="invalid_params")
        version = artifact_version_get(workspace_id=ctx.workspace_id, artifact_id=artifact_id)
        artifact = version.artifact
        # A picture's words are what people wrote about it: a text node downstream captions it from them.
        text = version.content if artifact.is_text else _described(artifact)
        return NodeResult(
            output={
                "text": text[:MAX_TEXT],
                "artifact": artifact_id,
                "version": version.number,
                "kind": artifact.kind,
            },
            consumed={str(artifact_id): version.number},
        )


def _described(artifact: Artifact) -> str:
    parts = [artifact.title.strip(), artifact.description.strip()]
    tags = [str(t) for t in artifact.tags or [] if str(t).strip()]
    if tags:
        parts.append(", ".join(tags))
    return ". ".join(part.rstrip(".") for part in parts if part)


class GenerateText(NodeType):
    name = "generate_text"
    title = "Write text"
    description = (
        "Writes text from the text wired in, with the workspace's model (a preset, a profile, or the default). "
        "With no model configured, the offline writer fills a caption, a title, a shot list or a summary from "
        "the input and the workspace's memories, and says so on its output."
    )
    Params = p.GenerateTextParams
    # An image, video or 3D model comes with its words (its prompt, its title): a caption is written from them.
    inputs = (Port("in", "Input", (*TEXTUAL, *MEDIA), "The text of every node wired in, joined in node id order."),)
    outputs = (Port("out", "Text", ("text",)),)

    def run(self, ctx: NodeContext) -> NodeResult:
        prompt = str(ctx.params.get("prompt", "{input}")).replace("{input}", ctx.text) or ctx.text
        answer = text_generate(ctx.workspace_id, ctx.params, prompt, ctx.text)
        # The offline writer says what it wrote and that it wrote it: the studio shows its note on the node.
        written = {key: answer[key] for key in WRITER_FIELDS if key in answer}
        return NodeResult(output={**_call_meta(answer), **written, "text": str(answer["text"])[:MAX_TEXT]})


class GenerateNode(NodeType):
    kind: str
    Params = p.GenerateParams
    # An image wired in is also the job's source (its picture to start from) where the provider can use one.
    inputs = (Port("in", "Input", (*TEXTUAL, "image"), "The words to make it from, and an image to start from."),)

    def __init__(self) -> None:
        self.generates = self.kind
        self.outputs = (Port("out", p.PORT_TYPES[self.kind][0], (self.kind,)),)

    def job_params(self, params: dict[str, Any]) -> dict[str, Any]:
        """The provider parameters of the job: the node's own, over what its format means."""
        own = params.get("generation_params")
        return dict(own) if isinstance(own, dict) else {}

    def run(self, ctx: NodeContext) -> NodeResult:
        prompt = (str(ctx.params.get("prompt", "{input}")).replace("{input}", ctx.text) or ctx.text).strip()
        if not prompt:
            raise NodeFailed("Nothing to generate from: no prompt and no upstream text.", code="invalid_params")
        # Fail closed: a paid generation runs only with money held for this very attempt (billing's check).
        if not domain_events.money_held(ctx.workspace_id, ctx.job_key):
            raise NodeFailed("No payment is held for this generation.", code="payment_not_held")
        # A re-run makes the next version of what this node made before, not a second artifact beside it.
        made_before = ctx.previous.get("artifact")
        if made_before is not None:
            still_there = Artifact.objects.filter(
                workspace_id=ctx.workspace_id, kind=self.kind, deleted_at__isnull=True
            )
            made_before = still_there.filter(pk=made_before).values_list("pk", flat=True).first()
        params = self.job_params(ctx.params)
        if self.kind in SOURCE_KINDS and "source_artifact_id" not in params:
            source = _upstream_image(ctx)
            if source is not None:
                params["source_artifact_id"] = source
        job = job_submit(
            workspace_id=ctx.workspace_id,
            idempotency_key=ctx.job_key,
            kind=self.kind,
            prompt=prompt[:4000],
            params=params,
            provider=ctx.params.get("provider"),
            task_id=ctx.task_id,
            artifact_id=made_before,
        )
        return NodeResult(job_id=job.pk, consumed=ctx.upstream_artifacts())


# The kinds whose provider can start from an existing image (the embedded renderer's `source_artifact_id`).
SOURCE_KINDS = frozenset({"image", "video"})


def _upstream_image(ctx: NodeContext) -> int | None:
    """The first image wired in (in node id order), if it is still a live image of the workspace."""
    ids = [int(o["artifact"]) for o in ctx.upstream.values() if isinstance(o, dict) and o.get("artifact")]
    images = set(
        Artifact.objects.filter(
            pk__in=ids, workspace_id=ctx.workspace_id, kind="image", deleted_at__isnull=True
        ).values_list("pk", flat=True)
    )
    return next((pk for pk in ids if pk in images), None)


class GenerateImage(GenerateNode):
    name, kind = "generate_image", "image"
    title = "Generate image"
    description = "A paid image job made from the words wired in (and an image wired in, as its source)."
    Params = p.GenerateImageParams

    def job_params(self, params: dict[str, Any]) -> dict[str, Any]:
        sized = dict(IMAGE_FORMATS.get(str(params.get("format")), {}))
        return {**sized, **super().job_params(params)}


class GenerateVideo(GenerateNode):
    name, kind = "generate_video", "video"
    title = "Generate video"
    description = "A paid video clip made from the words wired in, animating an image wired in."
    Params = p.GenerateVideoParams


class Generate3D(GenerateNode):
    name, kind = "generate_3d", "3d"
    title = "Generate 3D model"
    description = "A paid 3D model made from the words wired in (an image wired in lends its words)."


class Router(NodeType):
    name = "router"
    title = "Router"
    description = (
        "Reads the text and sends it down one of its outgoing branches, chosen by the model from the routes' "
        "descriptions; the other branches are skipped."
    )
    Params = p.RouterParams
    inputs = (IN_TEXT,)
    outputs = (Port("out", "Choice", ("choice",), "The text, passed to the chosen branch only."),)

    def run(self, ctx: NodeContext) -> NodeResult:
        if not ctx.successors:
            raise NodeFailed("A router needs at least one outgoing edge.", code="invalid_params")
        described = ctx.params.get("routes") or {}
        routes = {target: str(described.get(target, target)) for target in ctx.successors}
        answer = branch_choose(ctx.workspace_id, ctx.params, ctx.text, routes)
        return NodeResult(
            output={**_call_meta(answer), "choice": answer["choice"], "text": ctx.text, "reason": answer.get("reason")}
        )


class Finish(NodeType):
    name = "finish"
    title = "Finish"
    description = "Gathers what is wired in as the run's result: the texts, and the artifacts made."
    inputs = (Port("in", "Results", (*TEXTUAL, *MEDIA), "Everything the run should hand back."),)

    def run(self, ctx: NodeContext) -> NodeResult:
        artifacts = [
            {"artifact": o["artifact"], "version": o.get("version")}
            for o in ctx.upstream.values()
            if isinstance(o, dict) and o.get("artifact")
        ]
        output = {"text": ctx.text, "artifacts": artifacts, "from": sorted(ctx.upstream)}
        # What the offline writer wrote is said so in the result too (a thread's post shows it).
        notes = [o["note"] for o in ctx.upstream.values() if isinstance(o, dict) and o.get("note")]
        if notes:
            output["notes"] = list(dict.fromkeys(notes))
        return NodeResult(output=output)


NODE_TYPES: dict[str, NodeType] = {
    t.name: t
    for t in (
        TextInput(),
        ArtifactInput(),
        GenerateText(),
        GenerateImage(),
        GenerateVideo(),
        Generate3D(),
        Router(),
        Finish(),
    )
}
INPUT_TYPES = frozenset({"text_input"})
# Node types that submit a paid generation job, and its kind.
GENERATION_NODE_KINDS = {t.name: t.kind for t in NODE_TYPES.values() if isinstance(t, GenerateNode)}


def node_type_get(name: str) -> NodeType:
    if name not in NODE_TYPES:
        raise InvalidInput(f"Unknown node type {name!r}.", code="invalid_flow")
    return NODE_TYPES[name]
