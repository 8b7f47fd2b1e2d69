"""Which encoder the understanding layer reads a workspace's words through (DESIGN §15).

By default the bundled offline model. A workspace whose model profile sets an embedding model
(agents/services/embedding_endpoint.py) reads through that endpoint instead, so its decisions use the model it
chose: `reads_in_workspace` opens the layer's `encoder_scope` around an entry point (a turn, a message to Main).
The endpoint is looked up only when a decision is first taken inside — most turns of a hosted model take none —
and any failure to look it up or to call it leaves the offline model reading (the layer logs and rests it).
"""

import functools
import logging
from collections.abc import Callable
from typing import Any

from agents.services.embedding_endpoint import embedding_endpoint
from lomote.understanding.encoder import Encoder, RemoteEncoder, encoder_scope
from workspace.search.embedders import EndpointEmbedder

logger = logging.getLogger(__name__)


def understanding_encoder(workspace_id: int | None) -> Encoder | None:
    """The workspace's endpoint as an encoder, or None (no endpoint set, or it could not be looked up)."""
    if workspace_id is None:
        return None
    try:
        endpoint = embedding_endpoint(workspace_id)
    except Exception as exc:  # a broken profile must not break reading: the offline model reads
        logger.warning("embedding endpoint lookup failed for workspace %s: %s", workspace_id, type(exc).__name__)
        return None
    if endpoint is None:
        return None
    embedder = EndpointEmbedder(endpoint)
    return RemoteEncoder(embedder.model_id, embedder.embed)


def reads_in_workspace(workspace_of: Callable[..., int | None]):
    """Decorate an entry point: the decisions taken during the call read through `workspace_of(*args,
    **kwargs)`'s encoder, resolved on the first decision."""

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def entry(*args, **kwargs):
            with encoder_scope(lambda: understanding_encoder(workspace_of(*args, **kwargs))):
                return fn(*args, **kwargs)

        return entry

    return decorate
