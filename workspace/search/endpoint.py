"""Which OpenAI-compatible endpoint embeds a workspace's texts: a port that a higher app fills in.

The workspace's model profiles (and their encrypted keys) belong to agents, which workspace cannot import (the
layers contract). So agents install a resolver here at start-up (agents/subscribers.py), mapping a workspace id
to its embedding endpoint, or None when its profile sets no embedding model. Without a resolver, or when it
fails, search uses the offline model: an endpoint is an improvement, never a requirement.
"""

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class EmbeddingEndpoint:
    """An OpenAI-compatible `/embeddings` endpoint. The key is kept out of repr(), so out of logs and tracebacks."""

    base_url: str
    api_key: str = field(repr=False)
    model: str

    @property
    def host(self) -> str:
        return urlsplit(self.base_url).hostname or "?"


EndpointResolver = Callable[[int], EmbeddingEndpoint | None]

_resolver: EndpointResolver | None = None


def endpoint_resolver_install(fn: EndpointResolver | None) -> EndpointResolver | None:
    """Install the function giving a workspace's embedding endpoint, or remove it with None; returns the one it
    replaced, so a test can put it back. `fn(workspace_id)` may read the database; it is called once per search
    or refresh, and returns None when the workspace has no endpoint configured."""
    global _resolver
    previous, _resolver = _resolver, fn
    return previous


def endpoint_for(workspace_id: int) -> EmbeddingEndpoint | None:
    """The workspace's embedding endpoint, or None (no resolver, none configured, or the resolver failed)."""
    if _resolver is None:
        return None
    try:
        endpoint = _resolver(workspace_id)
    except Exception as exc:  # a broken profile must not break search: it falls back to the offline model
        logger.warning("embedding endpoint resolver failed for workspace %s: %s", workspace_id, type(exc).__name__)
        return None
    if endpoint is not None and not isinstance(endpoint, EmbeddingEndpoint):
        raise TypeError(f"An embedding endpoint resolver returns an EmbeddingEndpoint or None, not {type(endpoint)}.")
    return endpoint
