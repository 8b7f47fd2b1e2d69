"""Reads of memory: the memory panel's lists (scoped by an Access), recall for a task's context, "as of".

Visibility: a member sees the workspace's memories and their own person-scope ones, never another person's;
an API key sees the workspace's only.

Recall (DESIGN §8, seed §7.1, §7.4) picks what a task's context gets besides the profile, bounded in tokens
and in time: the person's own durable preferences (the workspace profile does not carry them), then the
active versions whose search rows share words with the task's goal, ranked by how rare the shared words are.
Never a superseded or forgotten version (they have no search row and are filtered anyway), never a one-off
instruction (it belongs to the task it was said in, whose history has it), never what the current profile
already carries (it is in the context's prefix). Hypotheses may come, marked by their kind and ranked at half
weight. A recall that runs out of time returns no memories and `timed_out=True`: the turn goes on without it.
"""

import logging
import math
import operator
import re
import time
from dataclasses import dataclass
from datetime import datetime
from functools import reduce

from django.db import OperationalError, connection, transaction
from django.db.models import Exists, OuterRef, Prefetch, Q, QuerySet

from lomote.kernel.exceptions import NotFound
from memory.models import (
    Derivation,
    Memory,
    MemoryIndex,
    MemoryKind,
    MemoryScope,
    MemoryVersion,
    ProfileEntry,
    ProfileVersion,
    VersionStatus,
)
from memory.search import FTS_DOCUMENT, goal_terms
from memory.text import normalise
from workspace.selectors import Access

logger = logging.getLogger(__name__)

GOAL_CANDIDATES = 40  # ranked goal matches read from the database; the token budget cuts further
STANDING_PREFERENCES = 6  # the person's own durable preferences, newest first
HYPOTHESIS_WEIGHT = 0.5
ITEM_OVERHEAD_TOKENS = 4  # what the context spends around each memory (its kind, a bullet, a newline)
RARE_FLOOR = 0.01  # a word in every memory still counts a little
_QUERY_CANCELED = "57014"  # PostgreSQL's SQLSTATE for a statement cancelled by statement_timeout


# --- the memory panel --------------------------------------------------------------------------------------


def _visible(access: Access, prefix: str = "") -> Q:
    workspace_scope = Q(**{f"{prefix}scope": MemoryScope.WORKSPACE})
    if access.user is None:
        return workspace_scope
    return workspace_scope | Q(**{f"{prefix}scope": MemoryScope.PERSON, f"{prefix}person": access.user})


def _provenance() -> Prefetch:
    return Prefetch(
        "derived_from", queryset=Derivation.objects.select_related("evidence", "from_version").order_by("pk")
    )


def memory_list(
    *,
    access: Access,
    include_superseded: bool = False,
    kind: str | None = None,
    scope: str | None = None,
    subject: str | None = None,
) -> QuerySet[Memory]:
    """The memories the caller may see, most recently changed first, each with its version chain in
    `memory.chain` (oldest first) and each version's provenance in `version.derived_from`.

    By default only memories with an active version, and only that version in the chain; with
    `include_superseded`, every memory and every version (forgotten ones too, their content erased).
    `kind` filters on the active version's kind (on any version's with `include_superseded`); `subject`
    matches the normalised subject as a substring.
    """
    statuses = list(VersionStatus) if include_superseded else [VersionStatus.ACTIVE]
    memories = Memory.objects.filter(_visible(access), workspace=access.workspace)
    shown = MemoryVersion.objects.filter(memory=OuterRef("pk"), status__in=statuses)
    if kind is not None:
        shown = shown.filter(kind=kind)
    if kind is not None or not include_superseded:
        memories = memories.filter(Exists(shown))
    if scope is not None:
        memories = memories.filter(scope=scope)
    if subject:
        memories = memories.filter(subject__contains=normalise(subject))
    chain = MemoryVersion.objects.filter(status__in=statuses).order_by("number").prefetch_related(_provenance())
    return memories.order_by("-updated_at", "-pk").prefetch_related(Prefetch("versions", chain, to_attr="chain"))


def memory_get(*, access: Access, memory_id: int) -> Memory:
    """One memory with its whole version chain in `memory.chain` (superseded and forgotten versions too),
    each version's provenance prefetched. NotFound outside the workspace or for another person's memory."""
    chain = MemoryVersion.objects.order_by("number").prefetch_related(_provenance())
    memory = (
        Memory.objects.filter(_visible(access), workspace=access.workspace, pk=memory_id)
        .prefetch_related(Prefetch("versions", chain, to_attr="chain"))
        .first()
    )
    if memory is None:
        raise NotFound("Memory not found.", code="memory_not_found")
    return memory


def profile_versions(*, access: Access) -> QuerySet[ProfileVersion]:
    """The workspace's profile versions, newest first, with their entries (in order) and each entry's links."""
    entries = ProfileEntry.objects.order_by("position").prefetch_related(_provenance())
    return (
        ProfileVersion.objects.filter(workspace=access.workspace)
        .order_by("-number")
        .prefetch_related(Prefetch("entries", entries))
    )


def as_of(*, workspace_id: int, subject: str, when: datetime, person_id: int | None = None) -> MemoryVersion | None:
    """The version of the memory about `subject` that held at `when` (valid_from <= when < valid_to), or None.

    Superseded versions answer for their own period — a brand that was blue and is now green is blue as of
    last year; forgotten versions never answer. Person-scope memories count only for `person_id`.
    """
    held = Q(valid_from__lte=when) & (Q(valid_to__isnull=True) | Q(valid_to__gt=when))
    in_scope = Q(memory__scope=MemoryScope.WORKSPACE)
    if person_id is not None:
        in_scope |= Q(memory__scope=MemoryScope.PERSON, memory__person_id=person_id)
    return (
        MemoryVersion.objects.filter(held, in_scope, workspace_id=workspace_id, memory__subject=normalise(subject))
        .exclude(status=VersionStatus.FORGOTTEN)
        .select_related("memory")
        .order_by("-valid_from", "-pk")
        .first()
    )


# --- recall ------------------------------------------------------------------------------------------------


def estimate_tokens(text: str) -> int:
    """Tokens as a quarter of the characters, rounded up: memory cannot use agents' estimate (it sits below
    agents), and on prose this is a little above it, so a recall never overruns the budget it was given."""
    return -(-len(text) // 4)


@dataclass(frozen=True)
class RecalledMemory:
    version_id: int
    memory_id: int
    kind: str
    subject: str
    content: str
    found_by: str  # "standing" (the person's own preference) or "goal"
    tokens: int


@dataclass(frozen=True)
class Recall:
    memories: list[RecalledMemory]
    timed_out: bool
    tokens: int = 0

    @property
    def version_ids(self) -> list[int]:
        return [memory.version_id for memory in self.memories]


class _OutOfTime(Exception):
    pass


class _Deadline:
    """The time a recall has left. On PostgreSQL each statement runs under a `statement_timeout` of what is
    left (SET LOCAL: this transaction only); elsewhere the caller's progress handler checks the clock."""

    def __init__(self, timeout_ms: int):
        self.at = time.monotonic() + timeout_ms / 1000
        self.replaced: str | None = None

    def remaining_ms(self) -> int:
        left = math.floor((self.at - time.monotonic()) * 1000)
        if left <= 0:
            raise _OutOfTime
        return left

    def arm(self) -> None:
        """Before a statement: raise if time is up, else bound the statement by what is left. The first time,
        keeps the setting it replaced in `replaced`, for the caller to put back."""
        left = self.remaining_ms()
        if connection.vendor != "postgresql":
            return
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT current_setting('statement_timeout'), set_config('statement_timeout', %s, true)", [str(left)]
            )
            replaced = cursor.fetchone()[0]
        if self.replaced is None:
            self.replaced = replaced


def _recallable(workspace_id: int, person_id: int | None) -> QuerySet[MemoryVersion]:
    """Active versions with content that recall may show: not instructions, not another person's, not in the
    current profile."""
    scope = Q(memory__scope=MemoryScope.WORKSPACE)
    if person_id is not None:
        scope |= Q(memory__scope=MemoryScope.PERSON, memory__person_id=person_id)
    latest = ProfileVersion.objects.filter(workspace_id=workspace_id).order_by("-number").values("pk")[:1]
    in_profile = ProfileEntry.objects.filter(profile_id=latest, version__isnull=False).values("version_id")
    return (
        MemoryVersion.objects.filter(scope, workspace_id=workspace_id, status=VersionStatus.ACTIVE)
        .exclude(kind=MemoryKind.INSTRUCTION)
        .exclude(content="")
        .exclude(pk__in=in_profile)
    )


_FIELDS = ("pk", "memory_id", "kind", "memory__subject", "content")


def _standing(workspace_id: int, person_id: int | None, deadline: _Deadline) -> list[tuple]:
    if person_id is None:
        return []
    deadline.arm()
    rows = (
        _recallable(workspace_id, person_id)
        .filter(memory__scope=MemoryScope.PERSON, kind=MemoryKind.PREFERENCE)
        .order_by("-valid_from", "-pk")
        .values_list(*_FIELDS)[:STANDING_PREFERENCES]
    )
    return list(rows)


def _rarity(total: int, found: int) -> float:
    return math.log((total + 1) / (found + 1)) + RARE_FLOOR


def _weight(kind: str) -> float:
    return HYPOTHESIS_WEIGHT if kind == MemoryKind.HYPOTHESIS else 1.0


def _goal_hits_postgresql(
    workspace_id: int, person_id: int | None, terms: list[str], deadline: _Deadline
) -> list[tuple]:
    """One statement: the workspace's search rows matching any term (GIN index), each term's document
    frequency among them, and the best GOAL_CANDIDATES recallable versions by summed rarity of their terms."""
    versions = _recallable(workspace_id, person_id).values("pk")
    versions_sql, versions_params = versions.query.sql_with_params()
    index = MemoryIndex._meta.db_table
    n = len(terms)
    marks = ", ".join(f"(v @@ to_tsquery('simple', %s))::int AS m{i}" for i in range(n))
    counts = ", ".join(f"sum(m{i}) AS d{i}" for i in range(n))
    rank = " + ".join(f"m{i} * (ln((total + 1.0) / (d{i} + 1.0)) + {RARE_FLOOR})" for i in range(n))
    # Table names come from model meta and the placeholders from `terms`' length; every value is a parameter.
    sql = f"""
        WITH hits AS MATERIALIZED (
            SELECT version_id, {FTS_DOCUMENT} AS v FROM {index}
            WHERE workspace_id = %s AND {FTS_DOCUMENT} @@ to_tsquery('simple', %s)
        ),
        marks AS MATERIALIZED (SELECT version_id, {marks} FROM hits),
        stats AS (SELECT (SELECT count(*) FROM {index} WHERE workspace_id = %s) AS total, {counts} FROM marks)
        SELECT marks.version_id, ({rank}) AS rank
        FROM marks CROSS JOIN stats
        WHERE marks.version_id IN ({versions_sql})
        ORDER BY rank DESC, marks.version_id DESC
        LIMIT %s
    """  # noqa: S608
    params = [workspace_id, " | ".join(f"{t}:*" for t in terms), *(f"{t}:*" for t in terms), workspace_id]
    params += [*versions_params, GOAL_CANDIDATES]
    deadline.arm()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        ranked = cursor.fetchall()
    return _with_content(ranked, deadline)


def _goal_hits_portable(workspace_id: int, person_id: int | None, terms: list[str], deadline: _Deadline) -> list[tuple]:
    """The same ranking where there is no full-text index (SQLite): icontains, then word-prefix matches."""
    deadline.arm()
    rows = MemoryIndex.objects.filter(workspace_id=workspace_id)
    total = rows.count()
    candidates = list(
        rows.filter(reduce(operator.or_, [Q(document__icontains=t) for t in terms])).values_list(
            "version_id", "document"
        )
    )
    patterns = [re.compile(rf"\b{t}") for t in terms]
    marks = {vid: [1 if p.search(document) else 0 for p in patterns] for vid, document in candidates}
    found = [sum(m[i] for m in marks.values()) for i in range(len(terms))]
    rarity = [_rarity(total, f) for f in found]
    deadline.arm()
    allowed = set(_recallable(workspace_id, person_id).filter(pk__in=list(marks)).values_list("pk", flat=True))
    scored = [(vid, sum(m * r for m, r in zip(ms, rarity, strict=True))) for vid, ms in marks.items() if vid in allowed]
    scored = [(vid, rank) for vid, rank in scored if rank > 0]
    ranked = sorted(scored, key=lambda item: (-item[1], -item[0]))[:GOAL_CANDIDATES]
    return _with_content(ranked, deadline)


def _with_content(ranked: list[tuple[int, float]], deadline: _Deadline) -> list[tuple]:
    """The ranked versions' fields, best first, hypotheses at HYPOTHESIS_WEIGHT."""
    if not ranked:
        return []
    deadline.arm()
    rows = {
        row[0]: row for row in MemoryVersion.objects.filter(pk__in=[vid for vid, _ in ranked]).values_list(*_FIELDS)
    }
    weighted = [(rows[vid], float(rank) * _weight(rows[vid][2])) for vid, rank in ranked if vid in rows]
    return [row for row, _ in sorted(weighted, key=lambda item: (-item[1], -item[0][0]))]


def _goal_hits(workspace_id: int, person_id: int | None, goal: str, deadline: _Deadline) -> list[tuple]:
    terms = goal_terms(goal)
    if not terms:
        return []
    search = _goal_hits_postgresql if connection.vendor == "postgresql" else _goal_hits_portable
    return search(workspace_id, person_id, terms, deadline)


def _is_timeout(error: OperationalError) -> bool:
    cause = error.__cause__
    return getattr(cause, "sqlstate", None) == _QUERY_CANCELED or "interrupted" in str(cause or error)


def _read_in_time(workspace_id: int, person_id: int | None, goal: str, deadline: _Deadline):
    """Both reads in one transaction (a savepoint inside a caller's), bounded by `deadline`."""
    with transaction.atomic():
        standing = _standing(workspace_id, person_id, deadline)
        hits = _goal_hits(workspace_id, person_id, goal, deadline)
        if deadline.replaced is not None:
            # SET LOCAL outlives a released savepoint: give the caller's transaction its own setting back.
            with connection.cursor() as cursor:
                cursor.execute("SELECT set_config('statement_timeout', %s, true)", [deadline.replaced])
    return standing, hits


def _with_progress_guard(deadline: _Deadline):
    """Off PostgreSQL: SQLite interrupts a statement whose progress handler returns true."""
    connection.ensure_connection()
    raw = connection.connection
    if not hasattr(raw, "set_progress_handler"):
        return None
    raw.set_progress_handler(lambda: time.monotonic() > deadline.at, 1000)
    return raw


def recall(
    *, workspace_id: int, person_id: int | None = None, goal: str, limit_tokens: int, timeout_ms: int = 200
) -> Recall:
    """The memories a task with this goal should see, within `limit_tokens` (estimate_tokens of each content
    plus ITEM_OVERHEAD_TOKENS) and `timeout_ms`: the person's standing preferences first, then goal matches
    best first; a memory that does not fit is skipped and a smaller one after it may still come.

    Never raises for time: past `timeout_ms` (a statement cancelled on PostgreSQL, interrupted on SQLite, or
    the clock checked between statements) it returns no memories and `timed_out=True`, and logs it.
    """
    deadline = _Deadline(timeout_ms)
    guarded = None if connection.vendor == "postgresql" else _with_progress_guard(deadline)
    try:
        standing, hits = _read_in_time(workspace_id, person_id, goal, deadline)
    except _OutOfTime:
        return _timed_out(workspace_id, timeout_ms)
    except OperationalError as error:
        if not _is_timeout(error):
            raise
        return _timed_out(workspace_id, timeout_ms)
    finally:
        if guarded is not None:
            guarded.set_progress_handler(None, 0)

    chosen: list[RecalledMemory] = []
    seen: set[int] = set()
    left = limit_tokens
    for found_by, rows in (("standing", standing), ("goal", hits)):
        for version_id, memory_id, kind, subject, content in rows:
            cost = estimate_tokens(content) + ITEM_OVERHEAD_TOKENS
            if version_id in seen or cost > left:
                continue
            seen.add(version_id)
            left -= cost
            chosen.append(RecalledMemory(version_id, memory_id, kind, subject, content, found_by, cost))
    return Recall(memories=chosen, timed_out=False, tokens=limit_tokens - left)


def _timed_out(workspace_id: int, timeout_ms: int) -> Recall:
    logger.warning(
        "memory recall timed out after %s ms in workspace %s; the turn goes on without it", timeout_ms, workspace_id
    )
    return Recall(memories=[], timed_out=True)
