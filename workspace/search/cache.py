"""A per-process cache of decoded vectors, keyed by (model id, text hash): what a search reads most.

Fetching vectors is most of a search's cost (1,000 rows of 512-dim passages are ~3 MB of bytea, 30–50 ms to
transfer and decode); their text hashes are a few kilobytes. So a search reads the hashes, takes every vector
it already holds from here, and fetches only the others. The key is content-addressed — a model's vector of
one text never changes — so an entry can never be stale: a changed text has another hash. Bounded in bytes
(settings.LOMOTE_SEARCH_CACHE_MB, default 64), least recently used out first; thread-safe.
"""

import threading
from collections import OrderedDict

import numpy as np
from django.conf import settings

Key = tuple[str, str]  # (model id, text hash)


class VectorCache:
    def __init__(self):
        self._entries: OrderedDict[Key, np.ndarray] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    @staticmethod
    def limit() -> int:
        return int(float(getattr(settings, "LOMOTE_SEARCH_CACHE_MB", 64)) * 1024 * 1024)

    def get(self, key: Key) -> np.ndarray | None:
        with self._lock:
            matrix = self._entries.get(key)
            if matrix is not None:
                self._entries.move_to_end(key)
            return matrix

    def get_many(self, keys: list[Key]) -> list[np.ndarray | None]:
        """Several lookups under one lock acquisition (a search asks for a thousand at once)."""
        with self._lock:
            found = [self._entries.get(key) for key in keys]
            for key, matrix in zip(keys, found, strict=True):
                if matrix is not None:
                    self._entries.move_to_end(key)
            return found

    def put(self, key: Key, matrix: np.ndarray) -> None:
        limit = self.limit()
        if matrix.nbytes > limit:
            return
        matrix = np.array(matrix, dtype=np.float32)  # our own copy, never a view on a caller's buffer
        matrix.setflags(write=False)
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= old.nbytes
            self._entries[key] = matrix
            self._bytes += matrix.nbytes
            while self._bytes > limit and self._entries:
                _, dropped = self._entries.popitem(last=False)
                self._bytes -= dropped.nbytes

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0

    def __len__(self) -> int:
        return len(self._entries)


VECTORS = VectorCache()
