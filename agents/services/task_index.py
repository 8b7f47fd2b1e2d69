"""The Router's bounded view of a workspace's tasks (DESIGN §2, seed §3.1).

The Router never reads every task. It gets an index of at most RECENT_K + CANDIDATES_M entries: the tasks
most recently active, plus candidates for older work found by keyword search and by semantic search over task
texts (title, brief, summary). Each entry is cut to fixed field lengths, so the rendered prompt is bounded
whatever the number of tasks; a growing workspace widens the search, not the context.

Semantic search is workspace.search: the workspace's embedding endpoint if its profile sets one, else the
offline multilingual sentence encoder, else a lexical fingerprint — so "affiches rétro pour le café" finds the
task "Retro posters for the coffee shop". One query reads the SEMANTIC_SCAN most recently changed tasks with
their stored vectors; numpy scores them. Similarities are on search's common scale (0 unrelated … 1 same
meaning) whatever the model. Keyword search stays in SQL over every task (the TaskEmbedding rows' documents).

Reads are scoped to one workspace. Writes (`task_embeddings_refresh`) follow a task's title, brief or summary
(a post_save receiver registered in agents/subscribers.py): its keyword row in the same transaction, its
vectors after the commit (outdated ones are deleted in the transaction). What a person asked to forget is left
out of both.
"""

import math
import operator
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from functools import reduce

from django.contrib.postgres.search import SearchQuery, SearchVector
from django.db import connection
from django.db.models import Count, F, FloatField, IntegerField, OuterRef, Q, QuerySet, Subquery, Value, Window
from django.db.models.expressions import Case, When
from django.db.models.functions import Coalesce, RowNumber

from agents.language import STOP_WORDS, content_terms, fold, words
from agents.models import ChecklistItem, ChecklistStatus, InboxMessage, InboxStatus, Task, TaskEmbedding, TaskStatus
from agents.services.forgotten import Redactor, without_forgotten
from workspace.models import GenerationJob
from workspace.search import (
    Hit,
    Query,
    Source,
    embeddings_update,
    hash_subquery,
    query_embed,
    reembed,
    score_rows,
    source_register,
)
from workspace.search.lexical import hashed_vector
from workspace.selectors import artifact_list

TASK = "task"  # the kind of the tasks' rows in workspace search
RECENT_K = 12  # most recently active tasks, always shown
CANDIDATES_M = 8  # older tasks found by keyword or semantic search
SEMANTIC_SCAN = 5000  # most recently changed tasks scored by one semantic search (keyword search covers all)
DUPLICATE_SCAN = 50  # in-progress tasks compared before a persistent task is created
DUPLICATES_SHOWN = 3
DIMENSIONS = 256  # of the keyword rows' lexical fingerprint (TaskEmbedding.vector)
ARTIFACTS_PER_TASK = 3
MAX_QUERY_TERMS = 12
SHOWN_SIMILARITY = 0.1  # below this, similarity is noise and is not shown to the Router
DOCUMENT_CHARS = 4000
LABEL_WORDS, LABEL_CHARS = 3, 32  # a task's label for the Router: its title's first content words

# Field lengths in the rendered index: what bounds the Router's prompt.
TITLE_CHARS, GOAL_CHARS, SUMMARY_CHARS, STATE_CHARS, ARTIFACT_TITLE_CHARS = 80, 160, 200, 80, 40

IN_PROGRESS = (TaskStatus.IDLE, TaskStatus.ACTIVE, TaskStatus.WAITING, TaskStatus.PAUSED)
CONTENT_FIELDS = frozenset({"title", "brief", "summary"})


# --- what is indexed --------------------------------------------------------------------------------------


def embed(text: str) -> list[float]:
    """The lexical fingerprint of `text` (workspace/search/lexical.py over its content words), L2-normalised.

    Stored in TaskEmbedding.vector beside the keyword document. Empty text gives zeros."""
    return hashed_vector(content_terms(text[:DOCUMENT_CHARS]))


def cosine(a: list[float], b: list[float]) -> float:
    """Cosine of two vectors from `embed` (both unit length, so their dot product)."""
    return sum(x * y for x, y in zip(a, b, strict=True))


def task_text(task: Task) -> str:
    """What semantic search reads about a task: its title, brief and summary as written (accents kept)."""
    return "\n".join(part for part in (task.title, task.brief, task.summary) if part)[:DOCUMENT_CHARS]


def task_document(task: Task) -> str:
    """What keyword search reads about a task: its text, folded (lower case, no accents)."""
    return fold(task_text(task))


def searchable_text(task: Task, redact: Redactor) -> str:
    """The task's text without what the person asked to forget, line by line: a summary sentence that carries
    a forgotten term goes, its title and brief stay findable."""
    lines = (without_forgotten(line, redact) for line in task_text(task).splitlines())
    return "\n".join(line for line in lines if line.strip())


def _task_texts(workspace_id: int, ids: list[int]) -> dict[int, str]:
    """The search source of tasks: their searchable texts."""
    tasks = Task.objects.filter(workspace_id=workspace_id, pk__in=ids).only("pk", "title", "brief", "summary")
    redact = Redactor(workspace_id).refresh()
    return {task.pk: searchable_text(task, redact) for task in tasks}


def _task_ids(workspace_id: int) -> Iterable[int]:
    return (
        Task.objects.filter(workspace_id=workspace_id).order_by("-updated_at", "-id").values_list("pk", flat=True)
    ).iterator()


source_register(TASK, Source(texts=_task_texts, ids=_task_ids))


def task_embeddings_refresh(*, tasks: Iterable[Task]) -> int:
    """Write (insert or replace) the keyword rows of these tasks in one statement, and have their vectors follow
    (outdated ones deleted now, new ones computed after the commit). Returns how many tasks."""
    tasks = list(tasks)
    # What a person asked to forget is never searchable again (agents/services/forgotten.py).
    redactors = {ws: Redactor(ws).refresh() for ws in {t.workspace_id for t in tasks}}
    texts = [searchable_text(t, redactors[t.workspace_id]) for t in tasks]
    rows = [
        TaskEmbedding(task_id=t.pk, workspace_id=t.workspace_id, document=fold(text), vector=embed(fold(text)))
        for t, text in zip(tasks, texts, strict=True)
    ]
    if rows:
        TaskEmbedding.objects.bulk_create(
            rows, update_conflicts=True, unique_fields=["task"], update_fields=["document", "vector", "updated_at"]
        )
    for workspace_id in redactors:
        mine = {t.pk: text for t, text in zip(tasks, texts, strict=True) if t.workspace_id == workspace_id}
        embeddings_update(workspace_id=workspace_id, kind=TASK, texts=mine)
    return len(rows)


def task_embedding_refresh(*, task: Task) -> None:
    task_embeddings_refresh(tasks=[task])


def task_embeddings_backfill(*, workspace_id: int | None = None, batch: int = 500) -> int:
    """Give every task its search rows: keyword rows for tasks without one, `batch` at a time (tasks made by
    bulk_create, old data), then vectors under the workspace's current model for every task lacking one.
    Returns how many keyword rows were written."""
    done = 0
    while True:
        missing = Task.objects.filter(embedding__isnull=True).order_by("pk")
        if workspace_id is not None:
            missing = missing.filter(workspace_id=workspace_id)
        chunk = list(missing.only("pk", "workspace_id", "title", "brief", "summary")[:batch])
        if not chunk:
            break
        done += task_embeddings_refresh(tasks=chunk)
    workspaces = [workspace_id] if workspace_id is not None else None
    reembed(workspace_ids=workspaces, kinds=[TASK], batch=batch)
    return done


def on_task_saved(sender, instance: Task, created: bool, update_fields=None, raw: bool = False, **kwargs) -> None:
    """post_save of Task: refresh its search rows when what it is about may have changed.

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


def _scan(query: Query, tasks: QuerySet[Task], *, limit: int = SEMANTIC_SCAN) -> dict[int, Hit]:
    """Score the first `limit` of `tasks` (most recently changed first) against `query`: one query lists them
    with their rows' text hashes, the vectors come from search's cache (or one more read for those it lacks).

    Tasks without a vector under the query's model (new, bulk-created, or indexed under another model) are
    embedded on the spot by workspace search, a bounded number per call."""
    hashes = hash_subquery(workspace_id=query.workspace_id, kind=TASK, model_id=query.model_id)
    rows = tasks.order_by("-updated_at", "-id").annotate(stored_hash=hashes).values_list("pk", "stored_hash")
    return score_rows(query=query, kind=TASK, rows=list(rows[:limit]))


def _best(scored: dict[int, Hit], *, limit: int, exclude: Iterable[int] = (), threshold: float = 0.0):
    excluded = set(exclude)
    hits = [h for h in scored.values() if h.object_id not in excluded and h.score > 0 and h.score >= threshold]
    hits.sort(key=lambda h: (-h.score, -h.object_id))
    return [(h.object_id, h.score) for h in hits[:limit]]


def task_search_similar(
    *, workspace_id: int, text: str, limit: int = CANDIDATES_M, exclude: Iterable[int] = ()
) -> list[tuple[int, float]]:
    """Tasks closest in meaning to `text`: (task id, similarity 0…1) best first, similarity > 0.

    Scores the SEMANTIC_SCAN most recently changed tasks of the workspace (all of them below that size)."""
    query = query_embed(workspace_id=workspace_id, text=text)
    if query.empty:
        return []
    exclude = list(exclude)
    tasks = Task.objects.filter(workspace_id=workspace_id).exclude(pk__in=exclude)
    return _best(_scan(query, tasks), limit=limit)


def task_duplicates_find(
    *, workspace_id: int, text: str, threshold: float | None = None, limit: int = DUPLICATES_SHOWN
) -> list[tuple[int, float]]:
    """In-progress tasks that look like the same goal as `text`: (task id, similarity ≥ threshold) closest first.

    Only the DUPLICATE_SCAN most recently active in-progress tasks are compared (seed §3.1): a goal the
    person left long ago is found by the index's search instead, and the cost stays fixed. The threshold is
    the embedding model's own (`Embedder.duplicate`) unless given.
    """
    query = query_embed(workspace_id=workspace_id, text=text)
    if query.empty:
        return []
    threshold = query.embedder.duplicate if threshold is None else threshold
    tasks = Task.objects.filter(workspace_id=workspace_id, status__in=IN_PROGRESS, archived_at__isnull=True)
    return _best(_scan(query, tasks, limit=DUPLICATE_SCAN), limit=limit, threshold=threshold)


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
    similarity: float = 0.0  # semantic similarity with the message: 0 unrelated … 1 same meaning (any model)
    label: str = ""  # how the Router names the task (TaskIndex gives it): the model never sees task ids

    def as_prompt(self) -> dict:
        """The entry as the Router reads it; every field is cut to a fixed length."""
        return {
            "id": self.id,
            "label": self.label,
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
        parts = [f'[{self.label}] "{self.title}" ({"; ".join(f for f in facts if f)})']
        if self.goal and fold(self.goal) != fold(self.title):
            parts.append(f"goal: {self.goal}")
        if self.summary:
            parts.append(f"summary: {self.summary}")
        if self.artifacts:
            parts.append("artifacts: " + ", ".join(f"#{i} {title}" for i, title in self.artifacts))
        return " | ".join(parts)


def task_label(title: str) -> str:
    """A task's short name for the Router: the first content words of its title ("retro-posters-coffee"). Small
    local models pick a task far more reliably by a name that says what it is than by a number (issue 35)."""
    terms = [w for w in words(title) if w not in STOP_WORDS] or words(title)
    return "-".join(terms[:LABEL_WORDS])[:LABEL_CHARS].strip("-") or "task"


def task_labels(tasks: Iterable[tuple[int, str]], *, taken: dict[int, str] | None = None) -> dict[int, str]:
    """Labels unique among `tasks` (id, title) and `taken` (already given, kept as they are). A repeated name
    gets -2, -3… in id order, so the same tasks always get the same labels."""
    labels = dict(taken or {})
    used = set(labels.values())
    for task_id, title in sorted(tasks):
        if task_id in labels:
            continue
        base = task_label(title)
        label, n = base, 1
        while label in used:
            n += 1
            label = f"{base}-{n}"
        labels[task_id] = label
        used.add(label)
    return labels


@dataclass
class TaskIndex:
    entries: list[IndexEntry]

    def __post_init__(self) -> None:
        labels = task_labels((entry.id, entry.title) for entry in self.entries)
        for entry in self.entries:
            entry.label = labels[entry.id]

    def labels(self, *, more: Iterable[tuple[int, str]] = ()) -> dict[int, str]:
        """Task id → label for the index's tasks, and for `more` tasks (id, title) shown beside it, which never
        change a label the index gave."""
        return task_labels(more, taken={entry.id: entry.label for entry in self.entries})

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
    tasks that are neither archived nor cancelled. Candidates = the best of keyword and semantic search among
    the others (archived ones included, marked: the person may be pointing at one, and must then be told).
    Every entry carries its semantic similarity with `text` (0 unrelated … 1 same meaning).
    """
    recent = list(
        Task.objects.filter(workspace_id=workspace_id, archived_at__isnull=True)
        .exclude(status=TaskStatus.CANCELLED)
        .order_by("-updated_at", "-id")
        .values_list("pk", flat=True)[:RECENT_K]
    )
    keyword = task_search_keyword(workspace_id=workspace_id, text=text, limit=CANDIDATES_M, exclude=recent)
    # One semantic scan scores the recent tasks too: their similarity is shown in the index.
    query = query_embed(workspace_id=workspace_id, text=text)
    scored = {} if query.empty else _scan(query, Task.objects.filter(workspace_id=workspace_id))
    similar = _best(scored, limit=CANDIDATES_M, exclude=recent)
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
    unscored = [task_id for task_id in tasks if task_id not in scored]
    if unscored and not query.empty:  # keyword finds older than the semantic scan reaches: score those few
        scored.update(_scan(query, Task.objects.filter(workspace_id=workspace_id, pk__in=unscored)))
    entries = []
    for task_id in ids:
        task = tasks.get(task_id)
        if task is None:
            continue
        hit = scored.get(task.pk)
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
                similarity=hit.score if hit is not None else 0.0,
            )
        )
    return TaskIndex(entries=entries)


# --- a candidate's details, read on demand ----------------------------------------------------------------

# What one look-up shows (seed §3.1: "once a candidate is identified, it can read the details on demand"). Fixed
# counts and lengths: a look-up costs the same whatever the task's history.
DETAIL_BRIEF_CHARS, DETAIL_SUMMARY_CHARS = 600, 400
DETAIL_CHECKLIST, DETAIL_ITEM_CHARS = 12, 120
DETAIL_ARTIFACTS, DETAIL_DESCRIPTION_CHARS = 6, 160
DETAIL_MESSAGES, DETAIL_MESSAGE_CHARS = 5, 240
PERSON_SOURCES = ("person", "api_key")


def task_details_get(*, workspace_id: int, task_id: int) -> dict | None:
    """A task's details for the Router: brief, summary, state, checklist, latest artifacts, the person's latest
    messages to it — bounded, read-only, without what the person asked to forget.

    None for anything the Router may not open: a task of another workspace, an archived or cancelled task, an
    id that does not exist. The caller cannot tell these apart, so another workspace's ids reveal nothing.
    """
    task = (
        Task.objects.filter(workspace_id=workspace_id, pk=task_id, archived_at__isnull=True)
        .exclude(status=TaskStatus.CANCELLED)
        .annotate(
            checklist_total=_checklist_count(),
            checklist_done=_checklist_count(status=ChecklistStatus.DONE),
        )
        .first()
    )
    if task is None:
        return None
    redact = Redactor(workspace_id).refresh()
    items = ChecklistItem.objects.filter(task=task).order_by("position").values_list("position", "title", "status")
    # Those it created, then those its generation jobs made (both live only), newest first.
    made = GenerationJob.objects.filter(workspace_id=workspace_id, task_id=task.pk, artifact__isnull=False)
    artifacts = (
        artifact_list(workspace_id=workspace_id)
        .filter(Q(created_by_task_id=task.pk) | Q(pk__in=made.values("artifact_id")))
        .values_list("pk", "kind", "title", "description", "current_version")[:DETAIL_ARTIFACTS]
    )
    messages = (
        InboxMessage.objects.filter(
            task=task, source__in=PERSON_SOURCES, status__in=(InboxStatus.PENDING, InboxStatus.CONSUMED)
        )
        .order_by("-pk")
        .values_list("text", flat=True)[:DETAIL_MESSAGES]
    )
    return {
        "id": task.pk,
        "title": redact.text(_cut(task.title, TITLE_CHARS)),
        "status": task.status,
        "kind": task.kind,
        "state": _state(task),
        "brief": redact.text(_cut(task.brief, DETAIL_BRIEF_CHARS)),
        "summary": redact.text(_cut(task.summary, DETAIL_SUMMARY_CHARS)),
        "checklist": [
            {"position": position, "title": redact.text(_cut(title, DETAIL_ITEM_CHARS)), "status": status}
            for position, title, status in items[:DETAIL_CHECKLIST]
        ],
        "artifacts": [
            {
                "id": pk,
                "kind": kind,
                "title": redact.text(_cut(title, ARTIFACT_TITLE_CHARS)),
                "description": redact.text(_cut(description, DETAIL_DESCRIPTION_CHARS)),
                "version": version,
            }
            for pk, kind, title, description, version in artifacts
        ],
        # Oldest first, as a conversation reads.
        "recent_messages": [redact.text(_cut(text, DETAIL_MESSAGE_CHARS)) for text in reversed(list(messages))],
    }


def task_index_forget(*, workspace_id: int) -> int:
    """After a forget: rewrite the search rows of the workspace's tasks that carried what was forgotten (their
    vectors made from it are deleted in the forget's transaction, and redone without it after the commit)."""
    redact = Redactor(workspace_id).refresh()
    if not redact:
        return 0
    tasks = Task.objects.filter(workspace_id=workspace_id).only("pk", "workspace_id", "title", "brief", "summary")
    # The text as written, not only the folded document: forgotten terms keep their accents.
    carrying = [task for task in tasks if redact.carries(task_text(task)) or redact.carries(task_document(task))]
    return task_embeddings_refresh(tasks=carrying)
