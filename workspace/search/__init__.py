"""Semantic search, one service for everything that searches (tasks, artifacts, memories…).

Embedders, best first: the workspace's OpenAI-compatible endpoint when its profile sets an embedding model
(agents install the resolver: workspace/search/endpoint.py), the offline multilingual sentence encoder shipped
in a PyPI wheel, and a lexical fingerprint when neither can be used (embedders.py). Vectors are rows of
workspace.models.Embedding with the model that made them (store.py); similarity is numpy over the candidates a
caller names (query.py). Public API:

    query_embed(workspace_id=, text=) -> Query
    search(workspace_id=, kind=, text= | query=, candidates=, limit=, exclude=, min_score=) -> list[Hit]
    score_rows(query=, kind=, rows=, texts=) -> dict[id, Hit]          (callers that read rows themselves)
    embeddings_update(workspace_id=, kind=, texts=)                  (on save: invalidate now, embed after commit)
    embeddings_refresh(...) / embeddings_delete(...) / reembed(...)
    source_register(kind, Source(texts=, ids=))
    artifact_search_meaning(workspace_id=, text=, kinds=, limit=) -> list[(Artifact, score)]
"""

from workspace.search.artifacts import ARTIFACT, artifact_search_meaning, artifact_text, on_artifact_saved
from workspace.search.embedders import Embedder, EmbeddingFailed, embedders_for, offline_embedder
from workspace.search.endpoint import EmbeddingEndpoint, endpoint_resolver_install
from workspace.search.query import (
    Hit,
    Query,
    ReembedReport,
    Source,
    embeddings_delete,
    embeddings_refresh,
    embeddings_update,
    query_embed,
    reembed,
    score_rows,
    search,
    source_register,
)
from workspace.search.store import hash_subquery

__all__ = [
    "ARTIFACT",
    "Embedder",
    "EmbeddingEndpoint",
    "EmbeddingFailed",
    "Hit",
    "Query",
    "ReembedReport",
    "Source",
    "artifact_search_meaning",
    "artifact_text",
    "embedders_for",
    "embeddings_delete",
    "embeddings_refresh",
    "embeddings_update",
    "endpoint_resolver_install",
    "offline_embedder",
    "on_artifact_saved",
    "query_embed",
    "reembed",
    "score_rows",
    "search",
    "source_register",
    "hash_subquery",
]
