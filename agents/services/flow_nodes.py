"""The model calls of Flow nodes (workspace/flows/nodes.py): workspace cannot import agents (DESIGN §1), so it
asks through a hook, and agents/subscribers.py installs `generate` and `choose` into it.

A node runs as a task's turn does: on a model lease built from a stored model profile (agents/services/turns.py
`lease_from_profile`), with that profile's encrypted secret, through the provider registry's adapters. Which
profile, and which instructions (seed 002: a node's assistant = preset + model + provider + key):

    params.preset (+ params.preset_version)  an assistant preset (agents/services/presets.py): its instructions,
                                             its model parameters, its profile (else the workspace default)
    params.model_profile                     a profile's name in the workspace, with params.instructions
    neither                                  the workspace's default profile, with params.instructions
    no profile at all                        the embedded stand-in: for text, the offline writer (workspace/flows/
                                             writer.py) with the brand's name and tagline from the workspace's
                                             memories; it says so in its output

The lease is never swapped for another model: a hosted model's error fails the node with the model's error
code, and a router whose model names no route fails the node (workspace decides the code). Only a node whose
lease is the embedded scripted kind answers with the deterministic stand-in (word overlap for a router).
"""

import logging
import time
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from agents.exceptions import ModelError
from agents.models import ModelLease, ModelProfile, ProviderKind
from agents.providers.base import ModelRequest
from agents.providers.registry import provider_for_lease
from agents.services.presets import preset_version_resolve
from agents.services.turns import lease_from_profile
from lomote.kernel.exceptions import DomainError, InvalidInput, NotFound
from lomote.understanding.subject import subject_of
from memory.selectors import workspace_statements
from workspace.flows.nodes import offline_choice, offline_text, route_ids_named
from workspace.flows.writer import Facts

logger = logging.getLogger(__name__)

MAX_ANSWER_EXCERPT = 200
MODEL_NODE_TYPES = ("generate_text", "router")


@dataclass(frozen=True)
class Assistant:
    """What a node's model call runs with (seed 002's RunnableAiAssistant)."""

    lease: ModelLease
    instructions: str
    profile: str | None  # the profile's name; None for the embedded stand-in
    preset: dict[str, int] | None  # {"id", "version"} of the preset version used

    def meta(self, model: str) -> dict[str, Any]:
        """What a node's output records about the call: the exact model, and where its setup came from."""
        return {"model": model, "provider": self.lease.provider, "profile": self.profile, "preset": self.preset}


def _profile_named(workspace_id: int, name: Any) -> ModelProfile:
    if not isinstance(name, str) or not name.strip():
        raise InvalidInput("params.model_profile is the name of a model profile.", code="invalid_params")
    profile = ModelProfile.objects.select_related("secret").filter(workspace_id=workspace_id, name=name).first()
    if profile is None:
        raise NotFound(f"No model profile named {name!r} in this workspace.", code="model_profile_not_found")
    return profile


def assistant_for(workspace_id: int, params: dict[str, Any]) -> Assistant:
    """Resolve a node's preset and model profile into a lease (module docstring). Raises a DomainError the node
    fails with for a bad or missing reference."""
    if "model_lease" in params:
        # An inline lease could aim a workspace's key at any URL; nodes run on the workspace's stored profiles.
        raise InvalidInput(
            "params.model_lease is not supported: name a model profile (params.model_profile) or a preset.",
            code="invalid_params",
        )
    instructions = str(params.get("instructions") or "")
    preset, preset_params, profile = None, {}, None
    if params.get("preset") is not None:
        if instructions or params.get("model_profile"):
            raise InvalidInput(
                "A node with a preset takes its instructions and model from the preset: remove "
                "params.instructions and params.model_profile, or the preset.",
                code="invalid_params",
            )
        version = preset_version_resolve(
            workspace_id=workspace_id, preset_id=params["preset"], version=params.get("preset_version")
        )
        instructions, preset_params, profile = version.instructions, version.params, version.model_profile
        preset = {"id": version.preset_id, "version": version.number}
    elif params.get("model_profile") is not None:
        profile = _profile_named(workspace_id, params["model_profile"])
    if profile is None:
        profile = ModelProfile.objects.select_related("secret").filter(workspace_id=workspace_id, is_default=True)
        profile = profile.first()
    lease = lease_from_profile(profile, params=preset_params)
    return Assistant(lease=lease, instructions=instructions, profile=profile.name if profile else None, preset=preset)


def flow_model_nodes_check(*, workspace_id: int, graph: dict[str, Any]) -> None:
    """Refuse a run whose model nodes name a preset, version or profile that does not resolve (400 with the
    node and the reference's code), before any of its paid nodes is held. A reference that breaks later (a preset
    deleted mid-run) still fails its node when it runs."""
    for node_id, node in sorted(graph["nodes"].items()):
        if node.get("type") not in MODEL_NODE_TYPES:
            continue
        try:
            assistant_for(workspace_id, dict(node.get("params") or {}))
        except DomainError as exc:
            raise InvalidInput(
                f"Node {node_id!r}: {exc.message}", code=exc.code, details={**exc.details, "node": node_id}
            ) from None


def _complete(lease: ModelLease, system: str, user: str) -> tuple[str, str]:
    """One model call, retried on retryable errors within the same bounds as a turn's (agents/runtime/loop.py):
    LOMOTE_MODEL_MAX_ATTEMPTS × LOMOTE_MODEL_TIMEOUT stays below the node job's timeout."""
    request = ModelRequest(
        model=lease.model,
        params={},  # the lease's own params (profile + preset) are the call's
        messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
        tools=[],
        state={"flow_node": True, "instructions": system, "input": user},
    )
    provider = provider_for_lease(lease)
    attempts = settings.LOMOTE_MODEL_MAX_ATTEMPTS
    try:
        for attempt in range(1, attempts + 1):
            try:
                response = provider.complete(request)
                return response.text, response.model
            except ModelError as exc:
                if not exc.retryable or attempt == attempts:
                    raise
                logger.warning("flow node model attempt %s/%s failed (%s); retrying", attempt, attempts, exc.code)
                time.sleep(min(settings.LOMOTE_MODEL_RETRY_BACKOFF * 2 ** (attempt - 1), 10))
    finally:
        close = getattr(provider, "close", None)
        if close is not None:
            close()
    raise AssertionError("unreachable")


def _embedded(lease: ModelLease) -> bool:
    return lease.provider == ProviderKind.SCRIPTED


# The memories the offline writer reads: the brand's name and its tagline, as the workspace stated them.
BRAND_SUBJECTS = ("brand name", "brand")
TAGLINE_SUBJECTS = ("brand tagline",)


def house_facts(workspace_id: int) -> Facts:
    """What the workspace's memories say of its brand, for the offline writer: the name or tagline a statement
    gives, as the subject tagger reads it ("Our brand name is Crumb & Co." → "Crumb & Co")."""
    stated = workspace_statements(workspace_id=workspace_id, subjects=BRAND_SUBJECTS + TAGLINE_SUBJECTS)

    def named(subjects: tuple[str, ...]) -> str:
        return next((found for s in subjects if s in stated and (found := subject_of(stated[s]))), "")

    return Facts(brand=named(BRAND_SUBJECTS), tagline=named(TAGLINE_SUBJECTS))


def generate(workspace_id: int, params: dict[str, Any], prompt: str, material: str = "") -> dict[str, Any]:
    assistant = assistant_for(workspace_id, params)
    if _embedded(assistant.lease):
        answer = offline_text(
            params, prompt, material, instructions=assistant.instructions, facts=house_facts(workspace_id)
        )
        return {**answer, **assistant.meta(answer["model"])}
    text, model = _complete(assistant.lease, assistant.instructions, prompt)
    return {**assistant.meta(model), "text": text}


def choose(workspace_id: int, params: dict[str, Any], text: str, routes: dict[str, str]) -> dict[str, Any]:
    """The route the node's model picks: {"choice": a route id, or None with `named` (the ids its answer named:
    none, or several) and `answer` (an excerpt) — the node then fails}."""
    assistant = assistant_for(workspace_id, params)
    if _embedded(assistant.lease):
        answer = offline_choice(text, routes, params.get("default"))
        return {**assistant.meta(answer["model"]), "choice": answer["choice"], "reason": answer["reason"]}
    listing = "\n".join(f"- {target}: {description}" for target, description in sorted(routes.items()))
    system = (
        f"{assistant.instructions or 'Pick the next step for this input.'}\n"
        f"Answer with exactly one of these ids and nothing else:\n{listing}"
    )
    answer, model = _complete(assistant.lease, system, text)
    named = route_ids_named(answer, routes)
    result = {**assistant.meta(model), "reason": "model", "named": named}
    if len(named) == 1:
        return {**result, "choice": named[0]}
    return {**result, "choice": None, "answer": answer.strip()[:MAX_ANSWER_EXCERPT]}
