"""Search by meaning, for every app: embed a query once, score the objects a caller names, keep vectors current.

- `query_embed` embeds a text with the workspace's best working embedder (endpoint → offline model → words).
  The query's model decides which stored vectors are read: vectors of two models are never compared.
- `search` / `score_rows` score candidates with numpy. A candidate without a vector under the query's model
  (new, written by bulk_create, or stored under an older model) is embedded on the spot, at most FILL_LIMIT per
  call, and its row written, so a model change re-embeds lazily; `manage.py reembed` does it all at once.
- `embeddings_update` is the write side for a save: rows made from an outdated text are deleted in the caller's
  transaction (a crash can never leave a stale vector), and the new vectors are computed after the commit, never
  inside it (a model call takes milliseconds, an endpoint up to its timeout).
- Each kind registers a `Source` (how to read its objects' texts) so that lazy filling and `reembed` can read
  them: workspace registers "artifact" (workspace/search/artifacts.py), agents register "task".

An object's text is embedded as passages — one per line (a task's title, brief, summary; an artifact's title,
description, tags), long lines cut by sentence — and the object scores as its best passage: a short message
("how are the posters going?") meets a title better than a long summary averaged into one vector. A row holds
the object's passage vectors as one (passages × dims) float32 matrix.
"""

import logging
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from django.conf import settings
from django.db import DatabaseError, transaction

from lomote.kernel.deferred import enqueue_with_commit
from workspace.models import Embedding, Workspace
from workspace.search import store
from workspace.search.cache import VECTORS
from workspace.search.embedders import Embedder, EmbeddingFailed, embed_first, embedders_for

logger = logging.getLogger(__name__)

FILL_LIMIT = 256  # objects embedded on the spot by one search; the rest wait for the next search or `reembed`
SCAN_LIMIT = 5000  # candidates one search scores at most (callers pass the most recent first)
REEMBED_BATCH = 256
MAX_PASSAGES = 8  # passages embedded per object: what a title, a brief and a summary need
PASSAGE_CHARS = 400
PASSAGE_SCHEME = "lines/1"  # part of every text hash: a new way of cutting texts re-embeds them
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+")


def passages(text: str) -> list[str]:
    """The pieces of an object's text that are embedded one by one: its non-empty lines, long ones cut at
    sentence ends into pieces of at most PASSAGE_CHARS, duplicates dropped, at most MAX_PASSAGES."""
    pieces: list[str] = []
    for line in (text or "").splitlines():
        line = " ".join(line.split())
        if len(line) <= PASSAGE_CHARS:
            pieces.append(line)
            continue
        current = ""
        for sentence in _SENTENCE_END.split(line):
            if current and len(current) + 1 + len(sentence) > PASSAGE_CHARS:
                pieces.append(current)
                current = ""
            current = f"{current} {sentence}".strip()[:PASSAGE_CHARS]
        pieces.append(current)
    return list(dict.fromkeys(piece for piece in pieces if piece))[:MAX_PASSAGES]


def text_hash(text: str) -> str:
    """What a row records of the text it was made from (and of how that text was cut into passages)."""
    return store.text_hash(f"{PASSAGE_SCHEME}\n{text}")


def embed_objects(embedder: Embedder, texts: Mapping[int, str]) -> dict[int, np.ndarray]:
    """Each object's passage vectors, (passages × dims), in one call to `embedder`; may raise EmbeddingFailed.
    An object whose text has no passage gets a (0 × dims) matrix: it is stored, and matches nothing."""
    pieces = {object_id: passages(text) for object_id, text in texts.items()}
    flat = [piece for object_pieces in pieces.values() for piece in object_pieces]
    matrix = embedder.embed(flat) if flat else np.zeros((0, 0), dtype=np.float32)
    out, start = {}, 0
    for object_id, object_pieces in pieces.items():
        out[object_id] = matrix[start : start + len(object_pieces)]
        start += len(object_pieces)
    return out


# --- sources ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Source:
    """How search reads one kind of object. Both functions are scoped to one workspace.

    texts(workspace_id, ids) → {id: text} for those of `ids` that exist (what is embedded: a task's title, brief
    and summary without what was forgotten; an artifact's title, description and tags);
    ids(workspace_id) → every id of the kind in the workspace (for `reembed`)."""

    texts: Callable[[int, Sequence[int]], dict[int, str]]
    ids: Callable[[int], Iterable[int]]


_sources: dict[str, Source] = {}


def source_register(kind: str, source: Source) -> None:
    """Register (or replace) the source of a kind of object. Kinds are short names: "task", "artifact"…"""
    if not kind or len(kind) > 32:
        raise ValueError("A search kind is a name of 1 to 32 characters.")
    _sources[kind] = source


def sources() -> dict[str, Source]:
    return dict(_sources)


def _texts(kind: str, workspace_id: int, ids: Sequence[int]) -> dict[int, str]:
    source = _sources.get(kind)
    if source is None:
        raise LookupError(f"No search source is registered for {kind!r}.")
    return source.texts(workspace_id, list(ids)) if ids else {}


# --- queries ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Query:
    """A text embedded for one workspace; reuse it for several searches of that workspace."""

    workspace_id: int
    text: str
    embedder: Embedder
    vector: np.ndarray  # a unit row, or empty for a text with nothing to embed (matches nothing)

    @property
    def model_id(self) -> str:
        return self.embedder.model_id

    @property
    def empty(self) -> bool:
        return not self.vector.shape[0] or not np.any(self.vector)


@dataclass(frozen=True)
class Hit:
    object_id: int
    score: float  # on the common scale: 0 unrelated … 1 same meaning (Embedder.score)
    cosine: float  # the model's own cosine, for diagnostics


def query_embed(*, workspace_id: int, text: str) -> Query:
    """Embed `text` with the first embedder of the workspace that works (endpoint, offline model, words)."""
    embedder, vectors = embed_first(embedders_for(workspace_id), [text])
    vector = vectors[0] if vectors.shape[1] else np.zeros(0, dtype=np.float32)
    return Query(workspace_id=workspace_id, text=text, embedder=embedder, vector=vector)


def score_rows(
    *,
    query: Query,
    kind: str,
    rows: Sequence[tuple[int, str | None]],
    texts: Mapping[int, str] | None = None,
    fill_limit: int = FILL_LIMIT,
) -> dict[int, Hit]:
    """Score objects by their rows under the query's model: (object id, the row's text hash, or None for none).

    Callers list their candidates with the hash in the same query (`stored_subquery(..., field="text_hash")`);
    vectors come from the process cache, and only the missing ones from the database. A candidate without a
    row — or, when `texts` is given, whose row was made from another text than texts[id] — is embedded now (the
    first `fill_limit` of them, in the order given) and written back; any others are left out of this call's
    result. Returns every scored object, even at score 0. An object scores as its best passage.
    """
    if query.empty or not rows:
        return {}
    dims = query.vector.shape[0]
    matrices: dict[int, np.ndarray] = {}
    to_fetch: dict[int, str] = {}
    stale: list[int] = []
    known: list[tuple[int, str]] = []
    for object_id, digest in rows:
        if digest is None or (texts is not None and digest != text_hash(texts.get(object_id, ""))):
            stale.append(object_id)
        else:
            known.append((object_id, digest))
    cached = VECTORS.get_many([(query.model_id, digest) for _, digest in known])
    for (object_id, digest), matrix in zip(known, cached, strict=True):
        if matrix is None:
            to_fetch[object_id] = digest
        else:
            matrices[object_id] = matrix
    if to_fetch:
        fetched = store.rows_read(
            workspace_id=query.workspace_id, kind=kind, model_id=query.model_id, object_ids=list(to_fetch)
        )
        for object_id, digest in to_fetch.items():
            row = fetched.get(object_id)
            if row is None or row[2] != digest or len(row[1]) % (4 * dims):
                stale.append(object_id)  # changed since the hashes were read, or another size under one name
                continue
            matrices[object_id] = store.from_bytes(row[1], dims)
            VECTORS.put((query.model_id, digest), matrices[object_id])
    if stale:
        matrices.update(_fill(query=query, kind=kind, ids=stale[:fill_limit], texts=texts))
        if len(stale) > fill_limit:
            logger.info(
                "search: %d %s vectors of workspace %s wait for `reembed` or a later search",
                len(stale) - fill_limit,
                kind,
                query.workspace_id,
            )
    if not matrices:
        return {}
    ids = [i for i in matrices if matrices[i].shape[1:] == (dims,)]
    counts = np.array([matrices[i].shape[0] for i in ids], dtype=np.int64)
    best = np.zeros(len(ids), dtype=np.float32)
    filled = counts > 0
    if filled.any():
        cosines = np.concatenate([matrices[i] for i, n in zip(ids, counts, strict=True) if n]) @ query.vector
        starts = np.concatenate(([0], np.cumsum(counts[filled])[:-1]))
        best[filled] = np.maximum.reduceat(cosines, starts)
    scores = query.embedder.score(best)
    return {i: Hit(object_id=i, score=float(s), cosine=float(c)) for i, s, c in zip(ids, scores, best, strict=True)}


def _fill(*, query: Query, kind: str, ids: list[int], texts: Mapping[int, str] | None) -> dict[int, np.ndarray]:
    """Embed these objects under the query's model (so they compare with it) and store the rows."""
    found = {i: texts[i] for i in ids if i in texts} if texts is not None else _texts(kind, query.workspace_id, ids)
    if not found:
        return {}
    try:
        made = embed_objects(query.embedder, found)
    except EmbeddingFailed as exc:
        logger.info("search: cannot embed %d %s objects now (%s)", len(found), kind, exc)
        return {}
    dims = query.vector.shape[0]
    made = {i: m if m.shape[0] else np.zeros((0, dims), dtype=np.float32) for i, m in made.items()}
    if any(m.shape[1] != dims for m in made.values()):
        logger.warning("search: %s changed size under the same name; not stored", query.model_id)
        return {}
    items = [(i, made[i], text_hash(found[i])) for i in made]
    try:
        # A savepoint: a failed write (a concurrent delete of the workspace…) must not break the caller's
        # transaction; the vectors are still used for this search, and the rows are written by a later one.
        with transaction.atomic():
            _write(workspace_id=query.workspace_id, kind=kind, model_id=query.model_id, items=items)
    except DatabaseError as exc:
        logger.warning("search: could not store %d %s vectors: %s", len(items), kind, type(exc).__name__)
    return made


def _write(*, workspace_id: int, kind: str, model_id: str, items: list[tuple[int, np.ndarray, str]]) -> int:
    """Store rows and keep their vectors at hand: the next search of these texts reads only their hashes."""
    written = store.rows_write(workspace_id=workspace_id, kind=kind, model_id=model_id, items=items)
    for _, matrix, digest in items:
        VECTORS.put((model_id, digest), matrix)
    return written


def search(
    *,
    workspace_id: int,
    kind: str,
    text: str = "",
    query: Query | None = None,
    candidates: Sequence[int] | Mapping[int, str] | None = None,
    limit: int = 20,
    exclude: Iterable[int] = (),
    min_score: float = 0.0,
) -> list[Hit]:
    """The candidates closest in meaning to `text` (or to an embedded `query`), best first, score > min_score.

    `candidates`: the ids to consider, most recent first (at most SCAN_LIMIT are read), or {id: current text}
    when the caller has the texts at hand (then a vector made from another text is redone); None reads the
    kind's source for every id. Ties keep the candidates' order.
    """
    query = query or query_embed(workspace_id=workspace_id, text=text)
    if query.workspace_id != workspace_id:
        raise ValueError("A query is embedded for one workspace and searches that one only.")
    if query.empty:
        return []
    if candidates is None:
        source = _sources.get(kind)
        candidates = list(source.ids(workspace_id))[:SCAN_LIMIT] if source else []
    texts = candidates if isinstance(candidates, Mapping) else None
    excluded = set(exclude)
    ids = [i for i in candidates if i not in excluded][:SCAN_LIMIT]
    hashes = store.hashes_read(workspace_id=workspace_id, kind=kind, model_id=query.model_id, object_ids=ids)
    scored = score_rows(query=query, kind=kind, rows=[(i, hashes.get(i)) for i in ids], texts=texts)
    position = {object_id: n for n, object_id in enumerate(ids)}
    hits = [hit for hit in scored.values() if hit.score > min_score]
    hits.sort(key=lambda hit: (-hit.score, position[hit.object_id]))
    return hits[: max(0, limit)]


# --- writes ----------------------------------------------------------------------------------------------------


def embeddings_refresh(*, workspace_id: int, kind: str, texts: Mapping[int, str], remote: bool = True) -> str:
    """Embed these objects now with the workspace's best working embedder and store the rows; returns its model id.

    An object whose row under that model was made from the same text is not redone. Rows of other models made
    from another text are deleted (they are outdated; a search under that model re-embeds the object).
    `remote=False` skips the workspace's endpoint: saves stay local and bounded, and the first search under the
    endpoint's model embeds what is missing in one request."""
    if not texts:
        return ""
    chain = embedders_for(workspace_id, remote=remote)
    hashes = {object_id: text_hash(text) for object_id, text in texts.items()}
    store.rows_invalidate(workspace_id=workspace_id, kind=kind, hashes=hashes)
    # Which rows are already current can only be known per model; ask the first embedder's, then fall back.
    for embedder in chain:
        try:
            _embed_stale(workspace_id=workspace_id, kind=kind, embedder=embedder, texts=texts, hashes=hashes)
        except EmbeddingFailed as exc:
            logger.info("%s; falling back", exc)
            continue
        return embedder.model_id
    return ""


def _embed_stale(
    *, workspace_id: int, kind: str, embedder: Embedder, texts: Mapping[int, str], hashes: Mapping[int, str]
) -> int:
    """Embed and store the objects whose row under `embedder`'s model was not made from their current text;
    returns how many were written. Raises EmbeddingFailed (nothing written)."""
    current = store.hashes_read(
        workspace_id=workspace_id, kind=kind, model_id=embedder.model_id, object_ids=list(texts)
    )
    todo = [i for i in texts if current.get(i) != hashes[i]]
    if not todo:
        return 0
    made = embed_objects(embedder, {i: texts[i] for i in todo})
    items = [(i, made[i], hashes[i]) for i in todo]
    return _write(workspace_id=workspace_id, kind=kind, model_id=embedder.model_id, items=items)


def embeddings_update(*, workspace_id: int, kind: str, texts: Mapping[int, str], created: bool = False) -> None:
    """The write side of a save: in the caller's transaction, delete the rows made from an older text; after
    its commit, a worker embeds the objects' texts as they then are (`embeddings_follow`, queued with the save:
    lomote/kernel/deferred.py), locally (offline model, else words). A save never waits for a model, nor for a
    network call. Should that job be lost or fail, the next search embeds what it finds missing (`score_rows`).
    `created`: the objects were just inserted, so no row of theirs exists to delete (ids are never reused)."""
    if not texts:
        return
    if not created:
        hashes = {object_id: text_hash(text) for object_id, text in texts.items()}
        store.rows_invalidate(workspace_id=workspace_id, kind=kind, hashes=hashes)
    ids = sorted(texts)
    enqueue_with_commit(
        "workspace.tasks.embeddings_follow_work",
        workspace_id,
        kind,
        ids,
        name=f"embed-{kind}-{workspace_id}-{ids[0]}" + (f"+{len(ids) - 1}" if len(ids) > 1 else ""),
        group="search",
        timeout=settings.LOMOTE_TASK_TIMEOUTS["default"],
        written_with=Embedding,
    )


def embeddings_follow(*, workspace_id: int, kind: str, object_ids: Sequence[int]) -> str:
    """Embed these objects from their current texts, locally (the job `embeddings_update` queues). Objects gone
    meanwhile are skipped; texts read now carry nothing forgotten since. Safe to run twice: an object whose row
    was made from its current text is not redone. Returns the model id used ("" when nothing was left)."""
    return embeddings_refresh(
        workspace_id=workspace_id, kind=kind, texts=_texts(kind, workspace_id, object_ids), remote=False
    )


def embeddings_delete(*, workspace_id: int, kind: str, object_ids: Sequence[int]) -> int:
    """Drop every vector of these objects (deleted objects, forgotten content)."""
    return store.rows_delete(workspace_id=workspace_id, kind=kind, object_ids=list(object_ids))


# --- re-embedding ----------------------------------------------------------------------------------------------


@dataclass
class ReembedReport:
    workspace_id: int
    kind: str
    model_id: str = ""
    objects: int = 0
    embedded: int = 0
    pruned: int = 0
    error: str = ""


def reembed(
    *, workspace_ids: Sequence[int] | None = None, kinds: Sequence[str] | None = None, batch: int = REEMBED_BATCH
) -> list[ReembedReport]:
    """Bring every object of every registered kind under the workspace's current model, then drop the rest.

    Per workspace and kind: objects whose row under the current model is missing or made from another text are
    embedded, `batch` at a time; then rows of other models and rows of objects that no longer exist are
    deleted. One model per workspace and kind: if the best embedder fails part-way (an endpoint going down),
    that kind stops with an error and keeps its other rows, rather than mixing models.
    """
    reports = []
    workspaces = (
        list(workspace_ids)
        if workspace_ids is not None
        else list(Workspace.objects.order_by("pk").values_list("pk", flat=True))
    )
    for kind in kinds or sorted(_sources):
        source = _sources.get(kind)
        if source is None:
            raise LookupError(f"No search source is registered for {kind!r}.")
        for workspace_id in workspaces:
            reports.append(_reembed_one(workspace_id=workspace_id, kind=kind, source=source, batch=batch))
    return reports


def _reembed_one(*, workspace_id: int, kind: str, source: Source, batch: int) -> ReembedReport:
    report = ReembedReport(workspace_id=workspace_id, kind=kind)
    ids = list(source.ids(workspace_id))
    report.objects = len(ids)
    chain = embedders_for(workspace_id)
    embedder: Embedder | None = None
    for start in range(0, len(ids), max(1, batch)):
        chunk = ids[start : start + batch]
        texts = source.texts(workspace_id, chunk)
        hashes = {i: text_hash(t) for i, t in texts.items()}
        if embedder is None:
            embedder = _working(chain, texts)
        try:
            report.embedded += _embed_stale(
                workspace_id=workspace_id, kind=kind, embedder=embedder, texts=texts, hashes=hashes
            )
        except EmbeddingFailed as exc:
            report.error = str(exc)
            report.model_id = embedder.model_id
            return report
    if embedder is None:  # no objects of the kind: every row left is an orphan
        report.pruned = store.rows_delete(workspace_id=workspace_id, kind=kind)
        return report
    report.model_id = embedder.model_id
    report.pruned = store.rows_delete(workspace_id=workspace_id, kind=kind, except_model=embedder.model_id)
    gone = store.object_ids_stored(workspace_id=workspace_id, kind=kind) - set(ids)
    report.pruned += store.rows_delete(workspace_id=workspace_id, kind=kind, object_ids=sorted(gone))
    return report


def _working(chain: Sequence[Embedder], texts: Mapping[int, str]) -> Embedder:
    """The first embedder of `chain` that embeds a sample of these texts."""
    sample = [t for t in texts.values() if t.strip()][:1] or ["search"]
    embedder, _ = embed_first(chain, sample)
    return embedder
