"""The model calls of Flow nodes (workspace/flows/nodes.py): workspace cannot import agents (DESIGN §1), so it
asks through a hook, and agents/subscribers.py installs these two functions into it. A node's preset is its
params: `instructions` plus a `model_lease` {"provider", "model", "base_url"?, "params"?} resolved exactly (no
fallback to another model). A preset without a lease returns None, and the node uses the offline stand-in,
which says so in its output.
"""

from types import SimpleNamespace
from typing import Any

from agents.providers.base import ModelRequest
from agents.providers.registry import provider_for_lease


def _lease(preset: dict[str, Any]) -> SimpleNamespace | None:
    lease = preset.get("model_lease")
    if not isinstance(lease, dict) or not lease.get("provider") or not lease.get("model"):
        return None
    return SimpleNamespace(
        provider=str(lease["provider"]),
        model=str(lease["model"]),
        base_url=str(lease.get("base_url") or ""),
        params=dict(lease.get("params") or {}),
        secret=None,
        secret_id=None,
    )


def _complete(lease: SimpleNamespace, system: str, user: str) -> tuple[str, str]:
    response = provider_for_lease(lease).complete(
        ModelRequest(
            model=lease.model,
            params=lease.params,
            messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
            tools=[],
            state={"flow_node": True, "instructions": system, "input": user},
        )
    )
    return response.text, response.model


def generate(preset: dict[str, Any], prompt: str) -> dict[str, Any] | None:
    lease = _lease(preset)
    if lease is None:
        return None
    text, model = _complete(lease, str(preset.get("instructions") or ""), prompt)
    return {"text": text, "model": model}


def choose(preset: dict[str, Any], text: str, routes: dict[str, str]) -> dict[str, Any] | None:
    lease = _lease(preset)
    if lease is None:
        return None
    listing = "\n".join(f"- {target}: {description}" for target, description in sorted(routes.items()))
    system = f"{preset.get('instructions') or 'Pick the next step.'}\nAnswer with exactly one of these ids:\n{listing}"
    answer, model = _complete(lease, system, text)
    picked = next((t for t in sorted(routes, key=len, reverse=True) if t in answer), None)
    return {"choice": picked, "model": model, "reason": "model"} if picked else None
