"""Where search vectors live: workspace.models.Embedding rows, one per (workspace, kind, object, model).

A vector is float32 little-endian bytes with its dimension count, so one table serves PostgreSQL and SQLite and
any model size; the similarity itself is computed in Python with numpy (workspace/search/query.py), over the
rows a caller names (never a whole table). Everything here is plain row I/O, scoped to one workspace and kind.

pgvector: where the server has the extension, a `vector` column and an HNSW index per model can be added beside
`vector` and `nearest()`-style queries moved into SQL; the row layout (model id per row, unit vectors, text hash)
already is what that needs. It is not packaged for this Debian release, so it is not used here (README "Search").
"""

import hashlib
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
from django.db.models import OuterRef, Q, Subquery
from django.utils import timezone

from workspace.models import Embedding

CHUNK = 500  # ids per IN (...) list: below SQLite's bound on query parameters


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def to_bytes(matrix: np.ndarray) -> bytes:
    return np.ascontiguousarray(matrix, dtype="<f4").tobytes()


def from_bytes(raw: bytes | memoryview, dims: int) -> np.ndarray:
    """A row's (passages × dims) matrix; an object with no text stored no passage: (0 × dims)."""
    values = np.frombuffer(bytes(raw), dtype="<f4")
    if dims <= 0 or values.shape[0] % dims:
        raise ValueError(f"a stored vector has {values.shape[0]} values, not a multiple of {dims}")
    return values.reshape(-1, dims)


def _chunks(ids: Sequence[int]) -> Iterable[list[int]]:
    ids = list(ids)
    for start in range(0, len(ids), CHUNK):
        yield ids[start : start + CHUNK]


def rows_read(
    *, workspace_id: int, kind: str, model_id: str, object_ids: Sequence[int]
) -> dict[int, tuple[int, bytes, str]]:
    """The stored (dims, vector bytes, text hash) of these objects under one model; absent ones are left out."""
    found: dict[int, tuple[int, bytes, str]] = {}
    for chunk in _chunks(object_ids):
        rows = Embedding.objects.filter(
            workspace_id=workspace_id, kind=kind, model_id=model_id, object_id__in=chunk
        ).values_list("object_id", "dims", "vector", "text_hash")
        for object_id, dims, raw, digest in rows:
            found[object_id] = (dims, bytes(raw), digest)
    return found


def hash_subquery(*, workspace_id: int, kind: str, model_id: str, ref: str = "pk") -> Subquery:
    """A correlated subquery giving the text hash of the outer row's object's row under one model (None when
    absent), for callers that list their candidates in one query: `.annotate(h=hash_subquery(...))`. The
    vectors then come from the cache or `rows_read` (query.score_rows). Served by the unique index."""
    rows = Embedding.objects.filter(workspace_id=workspace_id, kind=kind, model_id=model_id, object_id=OuterRef(ref))
    return Subquery(rows.values("text_hash")[:1])


def hashes_read(*, workspace_id: int, kind: str, model_id: str, object_ids: Sequence[int]) -> dict[int, str]:
    """The text hashes of these objects' rows under one model; objects without a row are left out."""
    found: dict[int, str] = {}
    for chunk in _chunks(object_ids):
        rows = Embedding.objects.filter(
            workspace_id=workspace_id, kind=kind, model_id=model_id, object_id__in=chunk
        ).values_list("object_id", "text_hash")
        found.update(rows)
    return found


def rows_write(*, workspace_id: int, kind: str, model_id: str, items: Sequence[tuple[int, np.ndarray, str]]) -> int:
    """Insert or replace the vectors of these objects under `model_id`: (object id, (passages × dims) matrix,
    text hash) each."""
    now = timezone.now()
    rows = [
        Embedding(
            workspace_id=workspace_id,
            kind=kind,
            object_id=object_id,
            model_id=model_id,
            dims=int(matrix.shape[1]),
            vector=to_bytes(matrix),
            text_hash=digest,
            updated_at=now,
        )
        for object_id, matrix, digest in items
    ]
    if rows:
        Embedding.objects.bulk_create(
            rows,
            update_conflicts=True,
            unique_fields=["workspace", "kind", "object_id", "model_id"],
            update_fields=["dims", "vector", "text_hash", "updated_at"],
        )
    return len(rows)


def rows_invalidate(*, workspace_id: int, kind: str, hashes: Mapping[int, str]) -> int:
    """Delete the rows, under any model, made from another text than the given one (object id → text hash)."""
    deleted = 0
    for chunk in _chunks(list(hashes)):
        outdated = Q()
        for object_id in chunk:
            outdated |= Q(object_id=object_id) & ~Q(text_hash=hashes[object_id])
        deleted += Embedding.objects.filter(outdated, workspace_id=workspace_id, kind=kind).delete()[0]
    return deleted


def rows_delete(
    *, workspace_id: int, kind: str, object_ids: Sequence[int] | None = None, except_model: str | None = None
) -> int:
    """Delete rows of these objects (all of the kind when None), keeping those of `except_model` if given."""
    rows = Embedding.objects.filter(workspace_id=workspace_id, kind=kind)
    if except_model is not None:
        rows = rows.exclude(model_id=except_model)
    if object_ids is None:
        return rows.delete()[0]
    return sum(rows.filter(object_id__in=chunk).delete()[0] for chunk in _chunks(object_ids))


def object_ids_stored(*, workspace_id: int, kind: str) -> set[int]:
    return set(Embedding.objects.filter(workspace_id=workspace_id, kind=kind).values_list("object_id", flat=True))
