"""What the memory app tells the apps above it, and what it asks of them (DESIGN §1: it never imports them).

Events: published with lomote.kernel.domain_events.publish inside the transaction that moved a memory, and
appended under the same names to the workspace's event log. Payloads carry ids and kinds only, never a
memory's content or subject: the event log outlives a forget, the content must not.

Hooks: work memory needs from a higher app (a model call). The higher app installs its function at start-up,
from its subscribers.install(); until it does, or when the function returns None, memory falls back as the
hook says.

This module imports nothing from memory, so any app may import it.
"""

from collections.abc import Callable
from typing import Any

# --- events ------------------------------------------------------------------------------------------------

MEMORY_CREATED = "memory.created"
"""A statement became a new memory (ORIGIN, version 1).

Payload: workspace_id, memory_id, version_id, number, kind, evidence_id.
Published by memory.services.memories while it holds the workspace row."""

MEMORY_REFINED = "memory.refined"
"""A memory got its next version; the previous one is SUPERSEDED (REFINE).

Payload: workspace_id, memory_id, version_id, number, kind, evidence_id, superseded_version_id.
Published by memory.services.memories while it holds the workspace row and the memory row."""

MEMORY_CONFIRMED = "memory.confirmed"
"""Evidence confirmed a memory's active version; no new version (CONFIRM).

Payload: workspace_id, memory_id, version_id, number, kind, evidence_id.
Published by memory.services.memories while it holds the workspace row."""

MEMORY_FORGOTTEN = "memory.forgotten"
"""A confirmed forget was carried out: evidence revoked, versions erased and rebuilt, the profile moved on,
the forgotten terms recorded (memory.services.forget).

Payload: workspace_id, forget_id. Published by memory.services.forget while it holds the workspace row."""

# --- hooks -------------------------------------------------------------------------------------------------

# Keyword arguments: workspace_id (int), task_id (int | None), text (the evidence's words), language ("en",
# "fr", …), existing (the workspace's active memories: [{"subject", "content", "kind", "scope"}], most recent
# first, bounded). Returns candidate dicts {"content", "subject", "kind", "scope"} for memory to validate one
# by one, or None when no model is available for that workspace (memory then uses its scripted extractor).
# Raising means "try again later": the evidence stays pending and the sweep retries it.
Extractor = Callable[..., list[Any] | None]
_extractor: list[Extractor] = []


def extractor_install(fn: Extractor | None) -> None:
    """Install the model extractor (agents does, from its subscribers). None uninstalls it."""
    _extractor[:] = [fn] if fn is not None else []


def extractor() -> Extractor | None:
    return _extractor[0] if _extractor else None
