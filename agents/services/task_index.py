"""The Router's bounded view of a workspace's tasks (DESIGN §2, seed §3.1).

The Router never reads every task. It gets an index of at most RECENT_K + CANDIDATES_M entries: the tasks
most recently active, plus candidates for older work found by keyword search and by vector similarity over
task documents (title, brief, summary). Each entry is cut to fixed field lengths, so the rendered prompt is
bounded whatever the number of tasks; a growing workspace widens the search, not the context.

The vectors are LEXICAL, not semantic: feature hashing of words, word pairs and character n-grams into 256
signed buckets, L2-normalised (no model may be downloaded). They find tasks sharing words and word pieces
("affiches" ~ "affiche", "poster" ~ "posters"); they do not know that "poster" and "flyer" are related.
Similarity is computed by the database — in SQL over `real[]` on PostgreSQL, by a registered function on
SQLite — ordered and limited there, so only the top rows ever reach Python. The search is exact (every task
of the workspace is scored; about 40 ms for 20,000 tasks on PostgreSQL), not an approximate index.

Reads are scoped to one workspace; the write here (`task_embedding_refresh`) keeps each task's row current
when its title, brief or summary change (a post_save receiver registered in AgentsConfig.ready()).
"""

import hashlib
import json
import math
import operator
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from functools import reduce

from django.contrib.postgres.search import SearchQuery, SearchVector
from django.db import connection
from django.db.models import Count, F, FloatField, IntegerField, OuterRef, Q, Subquery, Value, Window
from django.db.models.expressions import Case, RawSQL, When
from django.db.models.functions import Coalesce, RowNumber

from agents.language import content_terms, fold
from agents.models import ChecklistItem, ChecklistStatus, Task, TaskEmbedding, TaskStatus
from agents.services.forgotten import Redactor, without_forgotten
from workspace.models import GenerationJob
from workspace.selectors import artifact_list

RECENT_K = 12  # most recently active tasks, always shown
CANDIDATES_M = 8  # older tasks found by keyword or vector search
DUPLICATE_SCAN = 50  # in-progress tasks compared before a persistent task is created
DUPLICATE_THRESHOLD = 0.6  # cosine at or above which a new request looks like an existing task
DUPLICATES_SHOWN = 3
DIMENSIONS = 256
ARTIFACTS_PER_TASK = 3
MAX_QUERY_TERMS = 12
SHOWN_SIMILARITY = 0.1  # below this, lexical similarity is noise and is not shown to the Router
DOCUMENT_CHARS = 4000

# Field lengths in the rendered index: what bounds the Router's prompt.
TITLE_CHARS, GOAL_CHARS, SUMMARY_CHARS, STATE_CHARS, ARTIFACT_TITLE_CHARS = 80, 160, 200, 80, 40

IN_PROGRESS = (TaskStatus.IDLE, TaskStatus.ACTIVE, TaskStatus.WAITING, TaskStatus.PAUSED)
CONTENT_FIELDS = frozenset({"title", "brief", "summary"})


# --- the lexical embedding --------------------------------------------------------------------------------


def _bucket(feature: str) -> tuple[int, float]:
    """A stable bucket and sign for a feature (Python's hash() is salted per process, so not that)."""
    digest = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "big")
    return digest % DIMENSIONS, 1.0 if (digest >> 32) & 1 else -1.0


def embed(text: str) -> list[float]:
    """The lexical vector of `text`: hashed words, word pairs and character 3/4-grams, L2-normalised.

    Character n-grams make word forms overlap ("warm"/"warmer", "affiche"/"affiches") and each word's grams
    share one unit of weight, so a long word counts no more than a short one. Empty text gives zeros.
    """
    vector = [0.0] * DIMENSIONS
    terms = content_terms(text[:DOCUMENT_CHARS])

    def add(feature: str, weight: float) -> None:
        index, sign = _bucket(feature)
        vector[index] += sign * weight

    for term in terms:
        add("w:" + term, 1.0)
        padded = f"#{term}#"
        grams = [padded[i : i + n] for n in (3, 4) for i in range(len(padded) - n + 1)]
        for gram in grams:
            add("c:" + gram, 1.0 / math.sqrt(len(grams)))
    for first, second in zip(terms, terms[1:], strict=False):
        add(f"b:{first} {second}", 0.5)
    norm = math.sqrt(sum(x * x for x in vector))
    return [round(x / norm, 6) for x in vector] if norm else vector


def cosine(a: list[float], b: list[float]) -> float:
    """Cosine of two vectors from `embed` (both unit length, so their dot product)."""
    return sum(x * y for x, y in zip(a, b, strict=True))


def task_document(task: Task) -> str:
    """What search reads about a task: its title, brief and summary, folded (lower case, no accents)."""
    return fold("\n".join(part for part in (task.title, task.brief, task.summary) if part))[:DOCUMENT_CHARS]


def task_embeddings_refresh(*, tasks: Iterable[Task]) -> int:
    """Write (insert or replace) the search rows of these tasks in one statement. Returns how many."""
    tasks = list(tasks)
    # What a person asked to forget is never searchable again (agents/services/forgotten.py).
    redactors = {ws: Redactor(ws).refresh() for ws in {t.workspace_id for t in tasks}}
    documents = [without_forgotten(task_document(t), redactors[t.workspace_id]) for t in tasks]
    rows = [
        TaskEmbedding(task_id=t.pk, workspace_id=t.workspace_id, document=document, vector=embed(document))
        for t, document in zip(tasks, documents, strict=True)
    ]
    if rows:
        TaskEmbedding.objects.bulk_create(
            rows, update_conflicts=True, unique_fields=["task"], update_fields=["document", "vector", "updated_at"]
        )
    return len(rows)


def task_embedding_refresh(*, task: Task) -> None:
    task_embeddings_refresh(tasks=[task])


def task_embeddings_backfill(*, workspace_id: int | None = None, batch: int = 500) -> int:
    """Give every task without a search row one, `batch` at a time (tasks made by bulk_create, old data)."""
    done = 0
    while True:
        missing = Task.objects.filter(embedding__isnull=True).order_by("pk")
        if workspace_id is not None:
            missing = missing.filter(workspace_id=workspace_id)
        chunk = list(missing.only("pk", "workspace_id", "title", "brief", "summary")[:batch])
        if not chunk:
            return done
        done += task_embeddings_refresh(tasks=chunk)


def on_task_saved(sender, instance: Task, created: bool, update_fields=None, raw: bool = False, **kwargs) -> None:
    """post_save of Task: refresh its search row when what it is about may have changed.

    Saves naming only other fields (status moves in the runtime's hot path) cost nothing here. Writes through
    `QuerySet.update()` send no signal: code changing a title or summary that way calls the refresh itself.
    """
    if raw or (update_fields is not None and not CONTENT_FIELDS & set(update_fields)):
        return
    task_embedding_refresh(task=instance)


# --- search -----------------------------------------------------------------------------------------------


def query_terms(text: str) -> list[str]:
    """The distinct content words of a message, first come first kept, at most MAX_QUERY_TERMS."""
    return list(dict.fromkeys(content_terms(text)))[:MAX_QUERY_TERMS]


def _frequencies(workspace_id: int, terms: list[str]) -> tuple[int, list[int]]:
    """How many task documents the workspace has, and how many contain each term, in one query."""
    if connection.vendor == "postgresql":
        table = connection.ops.quote_name(TaskEmbedding._meta.db_table)
        document = "to_tsvector('simple'::regconfig, COALESCE(document, ''))"  # the GIN index's expression
        counts = [f"(SELECT count(*) FROM {table} WHERE workspace_id = %s)"]  # noqa: S608 - name from model meta
        counts += [
            f"(SELECT count(*) FROM {table} WHERE workspace_id = %s AND {document} @@ to_tsquery('simple', %s))"  # noqa: S608
            for _ in terms
        ]
        params: list = [workspace_id]
        for term in terms:
            params += [workspace_id, f"{term}:*"]
        with connection.cursor() as cursor:
            cursor.execute("SELECT " + ", ".join(counts), params)
            total, *found = cursor.fetchone()
        return total, found
    counted = TaskEmbedding.objects.filter(workspace_id=workspace_id).aggregate(
        total=Count("pk"), **{f"t{i}": Count("pk", filter=Q(document__icontains=t)) for i, t in enumerate(terms)}
    )
    return counted["total"], [counted[f"t{i}"] for i in range(len(terms))]


def task_search_keyword(
    *, workspace_id: int, text: str, limit: int = CANDIDATES_M, exclude: Iterable[int] = ()
) -> list[tuple[int, float]]:
    """Tasks whose title, brief or summary, or whose artifacts' titles, share words with `text`.

    Returns (task id, rank) best first. The rank sums the rarity (inverse document frequency) of the words
    matched, so "poster" in three tasks outweighs "text" in every one of them. PostgreSQL: full-text search
    ('simple' configuration, prefix matches, GIN index from migration 0004); elsewhere: icontains.
    """
    terms = query_terms(text)
    if not terms:
        return []
    total, found = _frequencies(workspace_id, terms)
    weights = [math.log((total + 1) / (df + 1)) + 0.01 for df in found]
    exclude = list(exclude)
    documents = TaskEmbedding.objects.filter(workspace_id=workspace_id).exclude(task_id__in=exclude)
    artifacts = artifact_list(workspace_id=workspace_id).filter(created_by_task_id__isnull=False)
    artifacts = artifacts.exclude(created_by_task_id__in=exclude)
    if connection.vendor == "postgresql":
        # Terms are [a-z0-9]+ after folding, so nothing in them is tsquery syntax.
        queries = [SearchQuery(f"{t}:*", search_type="raw", config="simple") for t in terms]
        any_term = SearchQuery(" | ".join(f"{t}:*" for t in terms), search_type="raw", config="simple")
        documents = documents.annotate(found=SearchVector("document", config="simple")).filter(found=any_term)
        artifacts = artifacts.annotate(found=SearchVector("title", config="simple")).filter(found=any_term)
        matches = [Q(found=q) for q in queries]
        title_matches = matches
    else:
        matches = [Q(document__icontains=t) for t in terms]
        title_matches = [Q(title__icontains=t) for t in terms]
        documents = documents.filter(reduce(operator.or_, matches))
        artifacts = artifacts.filter(reduce(operator.or_, title_matches))

    def rank(conditions: list[Q]):
        return reduce(
            operator.add,
            [
                Case(When(condition, then=Value(weight)), default=Value(0.0), output_field=FloatField())
                for condition, weight in zip(conditions, weights, strict=True)
            ],
        )

    hits = documents.annotate(rank=rank(matches)).order_by("-rank", "-task_id").values_list("task_id", "rank")[:limit]
    artifact_hits = (
        artifacts.annotate(rank=rank(title_matches))
        .order_by("-rank", "-id")
        .values_list("created_by_task_id", "rank")[:limit]
    )
    best: dict[int, float] = {}
    for task_id, rank in [*hits, *artifact_hits]:
        best[task_id] = max(best.get(task_id, 0.0), float(rank))
    ranked = sorted(best.items(), key=lambda item: (-item[1], -item[0]))
    # An artifact's task may be archived, or gone: keep only tasks that still exist in the workspace.
    alive = set(
        Task.objects.filter(workspace_id=workspace_id, pk__in=[i for i, _ in ranked]).values_list("pk", flat=True)
    )
    return [(i, r) for i, r in ranked if i in alive][:limit]


def _sqlite_dot(stored: str, sparse: str) -> float:
    vector = json.loads(stored)
    return sum(vector[i] * value for i, value in json.loads(sparse))


def _similarity_sql(vector: list[float]) -> RawSQL:
    """The database computes each row's dot product with `vector` (cosine: both are unit length).

    Only the message's non-zero buckets enter the expression (a short message fills a few dozen of 256), as
    plain arithmetic on array elements: 25 times faster on PostgreSQL than unnesting every row's array.
    """
    column = f'"{TaskEmbedding._meta.db_table}"."vector"'
    sparse = [(i, value) for i, value in enumerate(vector) if value]
    if connection.vendor == "postgresql":
        terms = " + ".join(f"{column}[%s] * %s" for _ in sparse)  # PostgreSQL arrays count from 1
        return RawSQL(f"({terms})", [p for i, value in sparse for p in (i + 1, value)])  # noqa: S611 - column from model meta
    connection.ensure_connection()
    connection.connection.create_function("lomote_dot", 2, _sqlite_dot, deterministic=True)
    return RawSQL(f"lomote_dot({column}, %s)", (json.dumps(sparse),))  # noqa: S611 - column from model meta


def task_search_similar(
    *, workspace_id: int, text: str, limit: int = CANDIDATES_M, exclude: Iterable[int] = ()
) -> list[tuple[int, float]]:
    """Tasks whose documents are lexically closest to `text`: (task id, cosine) best first, cosine > 0.

    Exact search: the database scores every task of the workspace and returns the top `limit` rows.
    """
    vector = embed(text)
    if not any(vector):
        return []
    rows = (
        TaskEmbedding.objects.filter(workspace_id=workspace_id)
        .exclude(task_id__in=list(exclude))
        .annotate(similarity=_similarity_sql(vector))
        .filter(similarity__gt=0)
        .order_by("-similarity", "-task_id")
        .values_list("task_id", "similarity")[:limit]
    )
    return [(task_id, float(similarity)) for task_id, similarity in rows]


def task_duplicates_find(
    *, workspace_id: int, text: str, threshold: float = DUPLICATE_THRESHOLD, limit: int = DUPLICATES_SHOWN
) -> list[tuple[int, float]]:
    """In-progress tasks that look like the same goal as `text`: (task id, cosine ≥ threshold) closest first.

    Only the DUPLICATE_SCAN most recently active in-progress tasks are compared (seed §3.1): a goal the
    person left long ago is found by the index's search instead, and the cost stays fixed.
    """
    vector = embed(text)
    if not any(vector):
        return []
    recent = (
        Task.objects.filter(workspace_id=workspace_id, status__in=IN_PROGRESS, archived_at__isnull=True)
        .order_by("-updated_at", "-id")
        .values_list("pk", flat=True)[:DUPLICATE_SCAN]
    )
    tasks = Task.objects.filter(pk__in=list(recent)).select_related("embedding")
    scored = []
    for task in tasks:
        stored = getattr(task, "embedding", None)
        other = stored.vector if stored is not None else embed(task_document(task))
        similarity = cosine(vector, other)
        if similarity >= threshold:
            scored.append((task.pk, similarity))
    return sorted(scored, key=lambda item: (-item[1], -item[0]))[:limit]


# --- the index --------------------------------------------------------------------------------------------


def _cut(text: str, limit: int) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


@dataclass
class IndexEntry:
    id: int
    title: str
    goal: str
    summary: str
    status: str
    kind: str
    state: str
    artifacts: list[tuple[int, str]]
    last_activity: datetime
    archived: bool
    found_by: list[str] = field(default_factory=list)  # recent, keyword, vector
    similarity: float = 0.0  # lexical cosine with the message

    def as_prompt(self) -> dict:
        """The entry as the Router reads it; every field is cut to a fixed length."""
        return {
            "id": self.id,
            "title": self.title,
            "goal": self.goal,
            "summary": self.summary,
            "status": "archived" if self.archived else self.status,
            "kind": self.kind,
            "state": self.state,
            "artifacts": [[artifact_id, title] for artifact_id, title in self.artifacts],
            "last_activity": self.last_activity.strftime("%Y-%m-%d %H:%M"),
            "found_by": self.found_by,
            "similarity": round(self.similarity, 2),
        }

    def render(self) -> str:
        # Defaults are left out (persistent, found among the recent, no real similarity): fewer tokens, less noise.
        found = [source for source in self.found_by if source != "recent"]
        facts = [
            "lightweight" if self.kind == "lightweight" else "",
            "ARCHIVED" if self.archived else "",
            self.state,
            self.last_activity.strftime("%Y-%m-%d %H:%M"),
            "found by " + "+".join(found) if found else "",
            f"similarity {self.similarity:.2f}" if self.similarity >= SHOWN_SIMILARITY else "",
        ]
        parts = [f'[#{self.id}] "{self.title}" ({"; ".join(f for f in facts if f)})']
        if self.goal and fold(self.goal) != fold(self.title):
            parts.append(f"goal: {self.goal}")
        if self.summary:
            parts.append(f"summary: {self.summary}")
        if self.artifacts:
            parts.append("artifacts: " + ", ".join(f"#{i} {title}" for i, title in self.artifacts))
        return " | ".join(parts)


@dataclass
class TaskIndex:
    entries: list[IndexEntry]

    def ids(self) -> list[int]:
        return [entry.id for entry in self.entries]

    def get(self, task_id: int) -> IndexEntry | None:
        return next((entry for entry in self.entries if entry.id == task_id), None)

    def as_prompt(self) -> list[dict]:
        return [entry.as_prompt() for entry in self.entries]

    def render(self) -> str:
        """One line per task, empty fields left out: the Router's view of the workspace."""
        return "\n".join(entry.render() for entry in self.entries) if self.entries else "(no tasks yet)"


def _state(task: Task) -> str:
    parts = [task.status]
    if task.stop_reason:
        parts.append(task.stop_reason)
    if task.waiting_for:
        parts.append("waiting for " + ", ".join(sorted(map(str, task.waiting_for))))
    if task.checklist_total:
        parts.append(f"checklist {task.checklist_done}/{task.checklist_total} done")
    return _cut("; ".join(parts), STATE_CHARS)


def task_artifacts_recent(*, workspace_id: int, task_ids: list[int]) -> dict[int, list[tuple[int, str]]]:
    """Up to ARTIFACTS_PER_TASK artifacts per task, newest first: those it created, then those its jobs made."""
    newest_first = [F("updated_at").desc(), F("id").desc()]
    created = (
        artifact_list(workspace_id=workspace_id)
        .filter(created_by_task_id__in=task_ids)
        .annotate(n=Window(RowNumber(), partition_by=F("created_by_task_id"), order_by=newest_first))
        .filter(n__lte=ARTIFACTS_PER_TASK)
        .values_list("created_by_task_id", "id", "title")
    )
    made_by_jobs = (
        GenerationJob.objects.filter(
            workspace_id=workspace_id, task_id__in=task_ids, artifact__isnull=False, artifact__deleted_at__isnull=True
        )
        .annotate(n=Window(RowNumber(), partition_by=F("task_id"), order_by=[F("created_at").desc(), F("id").desc()]))
        .filter(n__lte=ARTIFACTS_PER_TASK)
        .values_list("task_id", "artifact_id", "artifact__title")
    )
    refs: dict[int, list[tuple[int, str]]] = {}
    for task_id, artifact_id, title in [*created, *made_by_jobs]:
        mine = refs.setdefault(task_id, [])
        if len(mine) < ARTIFACTS_PER_TASK and all(artifact_id != seen for seen, _ in mine):
            mine.append((artifact_id, _cut(title, ARTIFACT_TITLE_CHARS)))
    return refs


def _checklist_count(**filters) -> Coalesce:
    counted = (
        ChecklistItem.objects.filter(task=OuterRef("pk"), **filters)
        .order_by()
        .values("task")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return Coalesce(Subquery(counted, output_field=IntegerField()), 0)


def task_index_get(*, workspace_id: int, text: str) -> TaskIndex:
    """The bounded index the Router reads for `text`: recent tasks first, then search candidates by score.

    At most RECENT_K + CANDIDATES_M entries whatever the number of tasks. Recent = the most recently changed
    tasks that are neither archived nor cancelled. Candidates = the best of keyword and vector search among
    the others (archived ones included, marked: the person may be pointing at one, and must then be told).
    """
    recent = list(
        Task.objects.filter(workspace_id=workspace_id, archived_at__isnull=True)
        .exclude(status=TaskStatus.CANCELLED)
        .order_by("-updated_at", "-id")
        .values_list("pk", flat=True)[:RECENT_K]
    )
    keyword = task_search_keyword(workspace_id=workspace_id, text=text, limit=CANDIDATES_M, exclude=recent)
    similar = task_search_similar(workspace_id=workspace_id, text=text, limit=CANDIDATES_M, exclude=recent)
    # Merge the two lists by their normalised scores; a task found by both comes first.
    top_rank = max((rank for _, rank in keyword), default=0.0) or 1.0
    merged: dict[int, float] = {}
    found_by: dict[int, list[str]] = {task_id: ["recent"] for task_id in recent}
    for task_id, rank in keyword:
        merged[task_id] = merged.get(task_id, 0.0) + rank / top_rank
        found_by.setdefault(task_id, []).append("keyword")
    for task_id, similarity in similar:
        merged[task_id] = merged.get(task_id, 0.0) + similarity
        found_by.setdefault(task_id, []).append("vector")
    candidates = [i for i, _ in sorted(merged.items(), key=lambda item: (-item[1], -item[0]))][:CANDIDATES_M]
    ids = recent + candidates

    tasks = {
        task.pk: task
        for task in Task.objects.filter(workspace_id=workspace_id, pk__in=ids)
        .select_related("embedding")
        .annotate(
            checklist_total=_checklist_count(),
            checklist_done=_checklist_count(status=ChecklistStatus.DONE),
        )
    }
    missing = [task for task in tasks.values() if not hasattr(task, "embedding")]
    if missing:  # made without the receiver (bulk_create, old rows): index them now, it is at most 20 rows
        task_embeddings_refresh(tasks=missing)
    refs = task_artifacts_recent(workspace_id=workspace_id, task_ids=list(tasks))
    message_vector = embed(text)
    entries = []
    for task_id in ids:
        task = tasks.get(task_id)
        if task is None:
            continue
        vector = task.embedding.vector if hasattr(task, "embedding") else embed(task_document(task))
        entries.append(
            IndexEntry(
                id=task.pk,
                title=_cut(task.title, TITLE_CHARS),
                goal=_cut(task.brief, GOAL_CHARS),
                summary=_cut(task.summary, SUMMARY_CHARS),
                status=task.status,
                kind=task.kind,
                state=_state(task),
                artifacts=refs.get(task.pk, []),
                last_activity=task.updated_at,
                archived=task.is_archived,
                found_by=found_by.get(task.pk, []),
                similarity=cosine(message_vector, vector) if any(message_vector) else 0.0,
            )
        )
    return TaskIndex(entries=entries)


def task_index_forget(*, workspace_id: int) -> int:
    """After a forget: rewrite the search rows of the workspace's tasks that carried what was forgotten."""
    redact = Redactor(workspace_id).refresh()
    carrying = [
        row.task_id
        for row in TaskEmbedding.objects.filter(workspace_id=workspace_id).only("task_id", "document")
        if redact.carries(row.document)
    ]
    tasks = Task.objects.filter(pk__in=carrying).only("pk", "workspace_id", "title", "brief", "summary")
    return task_embeddings_refresh(tasks=tasks)
