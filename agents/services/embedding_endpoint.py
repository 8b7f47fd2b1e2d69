"""A workspace's embedding endpoint, for workspace search (installed by agents/subscribers.py).

A model profile sets one with `params["embedding_model"]` (e.g. "text-embedding-3-small", "nomic-embed-text"
on Ollama): its OpenAI-compatible base URL and encrypted key then serve embeddings too. The workspace's default
profile is preferred, then any other that sets one. The key is revealed here, right before workspace's adapter
builds its client, and is held by nothing else (EmbeddingEndpoint keeps it out of repr and logs).
"""

from agents.models import ModelProfile, ProviderKind
from agents.providers.openai_compat import KEYLESS_PLACEHOLDER
from agents.secrets import secret_reveal
from workspace.search import EmbeddingEndpoint

EMBEDDING_MODEL_PARAM = "embedding_model"


def embedding_endpoint(workspace_id: int) -> EmbeddingEndpoint | None:
    """The workspace's embedding endpoint, or None when no OpenAI-compatible profile sets an embedding model."""
    profiles = (
        ModelProfile.objects.filter(workspace_id=workspace_id, provider=ProviderKind.OPENAI_COMPAT)
        .exclude(base_url="")
        .select_related("secret")
        .order_by("-is_default", "pk")
    )
    for profile in profiles:
        model = (profile.params or {}).get(EMBEDDING_MODEL_PARAM)
        if isinstance(model, str) and model.strip():
            key = secret_reveal(profile.secret) if profile.secret is not None else KEYLESS_PLACEHOLDER
            return EmbeddingEndpoint(base_url=profile.base_url, api_key=key, model=model.strip())
    return None
