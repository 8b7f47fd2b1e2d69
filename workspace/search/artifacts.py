"""Artifacts found by meaning: "la photo de chat d'hier" finds the image titled "Cat photo".

What is embedded of an artifact: its title, description and tags (not its content: a version's pixels or text
would need another model, and the title is what people name it by). The source registered here lets search
fill and `reembed` artifacts; `on_artifact_saved` (connected in workspace/subscribers.py) keeps rows current.
"""

from collections.abc import Iterable, Sequence

from django.db.models import QuerySet

from lomote.kernel.exceptions import InvalidInput
from workspace.models import Artifact, ArtifactKind
from workspace.search import store
from workspace.search.query import Query, Source, embeddings_update, query_embed, score_rows, source_register

ARTIFACT = "artifact"
ARTIFACT_SCAN = 2000  # live artifacts scored per search, most recently changed first
CONTENT_FIELDS = frozenset({"title", "description", "tags"})
MAX_RESULTS = 50


def artifact_text(*, title: str, description: str = "", tags: Iterable = ()) -> str:
    """What search reads about an artifact: title, description and tags, one per line."""
    tag_line = ", ".join(str(tag).strip() for tag in tags or () if str(tag).strip())
    return "\n".join(part.strip() for part in (title or "", description or "", tag_line) if part and part.strip())


def _live(workspace_id: int) -> QuerySet[Artifact]:
    return Artifact.objects.filter(workspace_id=workspace_id, deleted_at__isnull=True)


def _texts(workspace_id: int, ids: Sequence[int]) -> dict[int, str]:
    rows = _live(workspace_id).filter(pk__in=list(ids)).values_list("pk", "title", "description", "tags")
    return {pk: artifact_text(title=title, description=description, tags=tags) for pk, title, description, tags in rows}


def _ids(workspace_id: int) -> Iterable[int]:
    return _live(workspace_id).order_by("-updated_at", "-id").values_list("pk", flat=True).iterator()


source_register(ARTIFACT, Source(texts=_texts, ids=_ids))


def artifact_search_meaning(
    *,
    workspace_id: int,
    text: str,
    kinds: Iterable[str] | None = None,
    limit: int = 20,
    query: Query | None = None,
    min_score: float | None = None,
) -> list[tuple[Artifact, float]]:
    """The workspace's live artifacts closest in meaning to `text`, best first, with their scores (0…1).

    Works across languages and paraphrases ("the photo of my cat", "la photo de chat d'hier" → "Cat photo").
    Only hits at or above the model's `related` threshold are returned unless `min_score` says otherwise; ties
    go to the most recently changed. One query reads the ARTIFACT_SCAN most recently changed candidates with
    their rows' text hashes (a saved title drops its outdated rows in the same transaction, see
    `on_artifact_saved`), vectors come from search's cache or one more read; artifacts without a row under the
    query's model are embedded on the spot (bounded).
    """
    artifacts = _live(workspace_id)
    if kinds:
        kinds = list(kinds)
        unknown = sorted(set(kinds) - set(ArtifactKind.values))
        if unknown:
            raise InvalidInput(f"Unknown artifact kinds: {', '.join(unknown)}.", details={"fields": {"kinds": unknown}})
        artifacts = artifacts.filter(kind__in=kinds)
    query = query or query_embed(workspace_id=workspace_id, text=text)
    if query.empty:
        return []
    hashes = store.hash_subquery(workspace_id=workspace_id, kind=ARTIFACT, model_id=query.model_id)
    rows = list(
        artifacts.order_by("-updated_at", "-id")
        .annotate(stored_hash=hashes)
        .values_list("pk", "stored_hash")[:ARTIFACT_SCAN]
    )
    scored = score_rows(query=query, kind=ARTIFACT, rows=rows)
    threshold = query.embedder.related if min_score is None else min_score
    position = {pk: n for n, (pk, _) in enumerate(rows)}
    best = sorted(
        (hit for hit in scored.values() if hit.score >= threshold and hit.score > 0),
        key=lambda hit: (-hit.score, position[hit.object_id]),
    )[: max(1, min(int(limit), MAX_RESULTS))]
    found = Artifact.objects.filter(pk__in=[hit.object_id for hit in best]).in_bulk()
    return [(found[hit.object_id], hit.score) for hit in best if hit.object_id in found]


def on_artifact_saved(
    sender, instance: Artifact, created: bool, update_fields=None, raw: bool = False, **kwargs
) -> None:
    """post_save of Artifact: when its title, description or tags may have changed, its vectors follow (the
    outdated ones go in this transaction, the new ones are computed after the commit)."""
    if raw or (update_fields is not None and not CONTENT_FIELDS & set(update_fields)):
        return
    if instance.deleted_at is not None:
        return
    embeddings_update(
        workspace_id=instance.workspace_id,
        kind=ARTIFACT,
        texts={instance.pk: artifact_text(title=instance.title, description=instance.description, tags=instance.tags)},
        created=created,
    )
