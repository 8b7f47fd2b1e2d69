"""The registry of Flow node types (seed 002: TextInputNode, GenerateTextNode, RouterNode, FinishNode, …).

Each type turns its params, the run's inputs and its upstream nodes' outputs into an output:

    text_input      the start node: {"text": inputs["text"]}
    artifact_input  the current version of a workspace artifact (params.artifact_id): {"text", "artifact",
                    "version"}; records the version it consumed, so a later change marks it stale
    generate_text   an assistant preset (params.instructions + params.model_lease) applied to the upstream
                    text, through the text hook (below)
    generate_image  a generation job through workspace.services.jobs.job_submit; the node waits for
    generate_video  the job and outputs {"artifact", "version", "job"}; records the upstream artifacts' versions
                    it was made from, and on a re-run (it was stale) adds a version to its own last artifact
    router          a model picks the next node among the router's successors (params.routes: {node id:
                    description}); the other branches are skipped
    finish          gathers the upstream outputs as the run's result

Model calls: the workspace app cannot import agents (DESIGN §1), so generate_text and router call a hook
that agents installs at start-up (workspace/domain_events.py: `text_hooks_install`). Without one — offline, or
a preset without a model lease — the built-in deterministic stand-in is used, and says so in its output
(`model: "offline-scripted"`). Likewise a paid node asks billing, through `spend_check_install`'s hook, whether
money is held for its job.
"""

import re
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from lomote.kernel.exceptions import DomainError, InvalidInput
from workspace import domain_events
from workspace.models import Artifact
from workspace.selectors import artifact_version_get
from workspace.services.jobs import job_submit

OFFLINE_MODEL = "offline-scripted"
MAX_TEXT = 20_000


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
    code, default_message = "node_failed", "The node failed."


# --- model calls -----------------------------------------------------------------------------------------


def _offline_text(preset: dict[str, Any], prompt: str) -> dict[str, Any]:
    instructions = str(preset.get("instructions") or "Write").strip()
    body = " ".join(prompt.split())[:2000]
    return {"text": f"{instructions}: {body}" if body else instructions, "model": OFFLINE_MODEL}


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def _offline_choice(preset: dict[str, Any], text: str, routes: dict[str, str]) -> dict[str, Any]:
    """The first route (in id order) sharing a word with the text; else params.default, else the first."""
    words = _words(text)
    for target in sorted(routes):
        if words & _words(routes[target]):
            return {"choice": target, "model": OFFLINE_MODEL, "reason": "keyword"}
    default = preset.get("default")
    return {"choice": default if default in routes else sorted(routes)[0], "model": OFFLINE_MODEL, "reason": "default"}


def text_generate(preset: dict[str, Any], prompt: str) -> dict[str, Any]:
    hook = domain_events.text_hook()
    answer = hook(preset, prompt) if hook is not None else None
    return answer if answer is not None else _offline_text(preset, prompt)


def branch_choose(preset: dict[str, Any], text: str, routes: dict[str, str]) -> dict[str, Any]:
    hook = domain_events.choose_hook()
    answer = hook(preset, text, routes) if hook is not None else None
    if answer is None or answer.get("choice") not in routes:
        return _offline_choice(preset, text, routes)
    return answer


# --- node types -------------------------------------------------------------------------------------------


class NodeType(ABC):
    name: str

    @abstractmethod
    def run(self, ctx: NodeContext) -> NodeResult:
        """Do the node's work from its upstream outputs; a node waiting on a job says so in its result."""


class TextInput(NodeType):
    name = "text_input"

    def run(self, ctx: NodeContext) -> NodeResult:
        text = ctx.inputs.get("text", ctx.params.get("default", ""))
        if not isinstance(text, str):
            raise NodeFailed("The input `text` must be text.", code="invalid_input")
        return NodeResult(output={"text": text[:MAX_TEXT]})


class ArtifactInput(NodeType):
    name = "artifact_input"

    def run(self, ctx: NodeContext) -> NodeResult:
        artifact_id = ctx.params.get("artifact_id")
        if not isinstance(artifact_id, int):
            raise NodeFailed("artifact_input needs params.artifact_id.", code="invalid_params")
        version = artifact_version_get(workspace_id=ctx.workspace_id, artifact_id=artifact_id)
        return NodeResult(
            output={"text": version.content[:MAX_TEXT], "artifact": artifact_id, "version": version.number},
            consumed={str(artifact_id): version.number},
        )


class GenerateText(NodeType):
    name = "generate_text"

    def run(self, ctx: NodeContext) -> NodeResult:
        prompt = str(ctx.params.get("prompt", "{input}")).replace("{input}", ctx.text) or ctx.text
        answer = text_generate(ctx.params, prompt)
        return NodeResult(output={"text": str(answer["text"])[:MAX_TEXT], "model": answer.get("model")})


class _Generate(NodeType):
    kind: str

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
        job = job_submit(
            workspace_id=ctx.workspace_id,
            idempotency_key=ctx.job_key,
            kind=self.kind,
            prompt=prompt[:4000],
            params=dict(ctx.params.get("generation_params") or {}),
            provider=ctx.params.get("provider"),
            task_id=ctx.task_id,
            artifact_id=made_before,
        )
        return NodeResult(job_id=job.pk, consumed=ctx.upstream_artifacts())


class GenerateImage(_Generate):
    name, kind = "generate_image", "image"


class GenerateVideo(_Generate):
    name, kind = "generate_video", "video"


class Router(NodeType):
    name = "router"

    def run(self, ctx: NodeContext) -> NodeResult:
        if not ctx.successors:
            raise NodeFailed("A router needs at least one outgoing edge.", code="invalid_params")
        described = ctx.params.get("routes") or {}
        routes = {target: str(described.get(target, target)) for target in ctx.successors}
        answer = branch_choose(ctx.params, ctx.text, routes)
        return NodeResult(
            output={
                "choice": answer["choice"],
                "text": ctx.text,
                "model": answer.get("model"),
                "reason": answer.get("reason"),
            }
        )


class Finish(NodeType):
    name = "finish"

    def run(self, ctx: NodeContext) -> NodeResult:
        artifacts = [
            {"artifact": o["artifact"], "version": o.get("version")}
            for o in ctx.upstream.values()
            if isinstance(o, dict) and o.get("artifact")
        ]
        return NodeResult(output={"text": ctx.text, "artifacts": artifacts, "from": sorted(ctx.upstream)})


NODE_TYPES: dict[str, NodeType] = {
    t.name: t
    for t in (TextInput(), ArtifactInput(), GenerateText(), GenerateImage(), GenerateVideo(), Router(), Finish())
}
INPUT_TYPES = frozenset({"text_input"})
# Node types that submit a paid generation job, and its kind.
GENERATION_NODE_KINDS = {t.name: t.kind for t in NODE_TYPES.values() if isinstance(t, _Generate)}


def node_type_get(name: str) -> NodeType:
    if name not in NODE_TYPES:
        raise InvalidInput(f"Unknown node type {name!r}.", code="invalid_flow")
    return NODE_TYPES[name]
