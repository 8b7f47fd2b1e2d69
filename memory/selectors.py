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
from django.utils.translation import gettext_noop

from lomote.kernel.exceptions import NotFound
from memory.models import (
    Derivation,
    Episode,
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
RANKED_WINDOW = 5 * GOAL_CANDIDATES  # best-ranked search rows checked against recall's rules
STANDING_PREFERENCES = 6  # the person's own durable preferences, newest first
HYPOTHESIS_WEIGHT = 0.5
# What the context spends around each memory: its kind and version id, a bullet, a newline
# ("- [preference, memory version 1234] " is 37 characters).
ITEM_OVERHEAD_TOKENS = 10
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
        raise NotFound(gettext_noop("Memory not found."), code="memory_not_found")
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


def workspace_statements(*, workspace_id: int, subjects: tuple[str, ...]) -> dict[str, str]:
    """What the workspace (not one person) currently holds as true of these subjects ("brand name", "brand
    tagline"): each subject's active fact or preference, as the person wrote it. Never a hypothesis, a one-off
    instruction or a forgotten version."""
    current = (
        MemoryVersion.objects.filter(
            workspace_id=workspace_id,
            status=VersionStatus.ACTIVE,
            kind__in=(MemoryKind.FACT, MemoryKind.PREFERENCE),
            memory__scope=MemoryScope.WORKSPACE,
            memory__subject__in=[normalise(subject) for subject in subjects],
        )
        .exclude(content="")
        .order_by("valid_from", "pk")
        .values_list("memory__subject", "content")
    )
    return dict(current)  # the latest of a subject last, so it wins


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


# The portable path (SQLite) reads with the ORM, several statements; PostgreSQL reads everything in ONE
# statement, the same rules written in SQL: recall runs before every turn, and compiling ORM queries and their
# round trips cost more than the search itself. The tests run both paths against the same expectations.


def _in_profile(workspace_id: int) -> QuerySet[ProfileEntry]:
    """The version ids the current profile carries (the context's prefix shows them already)."""
    latest = ProfileVersion.objects.filter(workspace_id=workspace_id).order_by("-number").values("pk")[:1]
    return ProfileEntry.objects.filter(profile_id=latest, version__isnull=False).order_by().values("version_id")


def _recallable(workspace_id: int, person_id: int | None) -> QuerySet[MemoryVersion]:
    """Active versions with content that recall may show: not instructions, not another person's, not in the
    current profile."""
    scope = Q(memory__scope=MemoryScope.WORKSPACE)
    if person_id is not None:
        scope |= Q(memory__scope=MemoryScope.PERSON, memory__person_id=person_id)
    return (
        MemoryVersion.objects.filter(scope, workspace_id=workspace_id, status=VersionStatus.ACTIVE)
        .exclude(kind=MemoryKind.INSTRUCTION)
        .exclude(content="")
        .exclude(pk__in=_in_profile(workspace_id))
        .order_by()
    )


_FIELDS = ("pk", "memory_id", "kind", "memory__subject", "content")


def _rarity(total: int, found: int) -> float:
    return math.log((total + 1) / (found + 1)) + RARE_FLOOR


def _weight(kind: str) -> float:
    return HYPOTHESIS_WEIGHT if kind == MemoryKind.HYPOTHESIS else 1.0


def _recall_rows_portable(
    workspace_id: int, person_id: int | None, terms: list[str], deadline: _Deadline
) -> tuple[list[tuple], list[tuple]]:
    """(standing, goal) rows of (id, memory id, kind, subject, content), each best first, with the ORM:
    icontains finds candidate search rows, word-prefix matches in Python rank them."""
    standing: list[tuple] = []
    if person_id is not None:
        deadline.arm()
        standing = list(
            _recallable(workspace_id, person_id)
            .filter(memory__scope=MemoryScope.PERSON, kind=MemoryKind.PREFERENCE)
            .order_by("-valid_from", "-pk")
            .values_list(*_FIELDS)[:STANDING_PREFERENCES]
        )
    if not terms:
        return standing, []
    deadline.arm()
    rows = MemoryIndex.objects.filter(workspace_id=workspace_id)
    total = rows.count()
    candidates = rows.filter(reduce(operator.or_, [Q(document__icontains=t) for t in terms]))
    patterns = [re.compile(rf"\b{t}") for t in terms]
    marks = {v: [bool(p.search(doc)) for p in patterns] for v, doc in candidates.values_list("version_id", "document")}
    rarity = [_rarity(total, sum(m[i] for m in marks.values())) for i in range(len(terms))]
    ranks = {v: sum(r for hit, r in zip(m, rarity, strict=True) if hit) for v, m in marks.items()}
    window = sorted(ranks, key=lambda v: (-ranks[v], -v))[:RANKED_WINDOW]
    deadline.arm()
    found = _recallable(workspace_id, person_id).filter(pk__in=window).values_list(*_FIELDS)
    scored = sorted(found, key=lambda row: (-ranks[row[0]] * _weight(row[2]), -row[0]))
    return standing, scored[:GOAL_CANDIDATES]


_RECALL_SQL = """
    WITH profile AS (
        SELECT e.version_id FROM {entry} e
        WHERE e.version_id IS NOT NULL AND e.profile_id = (
            SELECT p.id FROM {profile} p WHERE p.workspace_id = %(workspace)s ORDER BY p.number DESC LIMIT 1
        )
    ),
    found AS MATERIALIZED ({found}),
    weights AS (
        SELECT term, ln(
            ((SELECT count(*) FROM {index} WHERE workspace_id = %(workspace)s) + 1)::float8 / (count(*) + 1)
        ) + %(floor)s AS weight
        FROM found GROUP BY term
    ),
    ranked AS MATERIALIZED (
        SELECT version_id, sum(weight) AS rank FROM found JOIN weights USING (term)
        GROUP BY version_id ORDER BY rank DESC, version_id DESC LIMIT %(window)s
    ),
    goal AS (
        SELECT v.id, v.memory_id, v.kind, m.subject, v.content,
               ranked.rank * (CASE WHEN v.kind = %(hypothesis)s THEN %(hypothesis_weight)s ELSE 1.0 END) AS score
        FROM ranked
        JOIN {version} v ON v.id = ranked.version_id
        JOIN {memory} m ON m.id = v.memory_id
        WHERE v.id = ANY(ARRAY(SELECT version_id FROM ranked))  -- probes the primary key, not every version
          AND v.workspace_id = %(workspace)s AND v.status = %(active)s AND v.kind <> %(instruction)s
          AND v.content <> '' AND v.id NOT IN (SELECT version_id FROM profile)
          AND (m.scope = %(workspace_scope)s OR (m.scope = %(person_scope)s AND m.person_id = %(person)s))
        ORDER BY score DESC, v.id DESC LIMIT %(candidates)s
    ),
    standing AS (
        SELECT v.id, v.memory_id, v.kind, m.subject, v.content, v.valid_from
        FROM {memory} m JOIN {version} v ON v.memory_id = m.id AND v.status = %(active)s
        WHERE m.workspace_id = %(workspace)s AND m.scope = %(person_scope)s AND m.person_id = %(person)s
          AND v.kind = %(preference)s AND v.content <> '' AND v.id NOT IN (SELECT version_id FROM profile)
        ORDER BY v.valid_from DESC, v.id DESC LIMIT %(standing)s
    )
    SELECT 'standing', id, memory_id, kind, subject, content, 0, valid_from FROM standing
    UNION ALL
    SELECT 'goal', id, memory_id, kind, subject, content, score, NULL FROM goal
"""


def _recall_rows_postgresql(
    workspace_id: int, person_id: int | None, terms: list[str], deadline: _Deadline
) -> tuple[list[tuple], list[tuple]]:
    """The same rows in one statement: an index scan per goal term through the GIN index (row ids only, no
    document parsed again), each term's rarity from how many rows it matched, the RANKED_WINDOW best rows,
    then recall's rules on those few by primary key, and the person's standing preferences beside them.

    Only the window is checked against the rules: search rows exist for active versions only and the rules
    drop few (instructions, another person's memories, the profile's dozen), so it leaves GOAL_CANDIDATES in
    practice, where checking every match would join thousands of rows for a goal with a common word.
    """
    tables = {m.__name__.lower(): m._meta.db_table for m in (MemoryIndex, MemoryVersion, Memory)}
    params: dict = {
        "workspace": workspace_id,
        "person": person_id,
        "floor": RARE_FLOOR,
        "window": RANKED_WINDOW,
        "candidates": GOAL_CANDIDATES,
        "standing": STANDING_PREFERENCES,
        "hypothesis": MemoryKind.HYPOTHESIS,
        "hypothesis_weight": HYPOTHESIS_WEIGHT,
        "instruction": MemoryKind.INSTRUCTION,
        "preference": MemoryKind.PREFERENCE,
        "active": VersionStatus.ACTIVE,
        "workspace_scope": MemoryScope.WORKSPACE,
        "person_scope": MemoryScope.PERSON,
    }
    branches = []
    for i, term in enumerate(terms):
        params[f"t{i}"] = f"{term}:*"
        branches.append(
            f"SELECT {i} AS term, version_id FROM {tables['memoryindex']} "  # noqa: S608 - see below
            f"WHERE workspace_id = %(workspace)s AND {FTS_DOCUMENT} @@ to_tsquery('simple', %(t{i})s)"
        )
    sql = _RECALL_SQL.format(
        found=" UNION ALL ".join(branches) or "SELECT 0 AS term, NULL::bigint AS version_id WHERE false",
        index=tables["memoryindex"],
        version=tables["memoryversion"],
        memory=tables["memory"],
        entry=ProfileEntry._meta.db_table,
        profile=ProfileVersion._meta.db_table,
    )  # table names from model meta, term numbers from the terms' count; every value is a parameter
    deadline.arm()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    standing = sorted((r for r in rows if r[0] == "standing"), key=lambda r: (r[7], r[1]), reverse=True)
    goal = sorted((r for r in rows if r[0] == "goal"), key=lambda r: (-r[6], -r[1]))
    return [r[1:6] for r in standing], [r[1:6] for r in goal]


def _is_timeout(error: OperationalError) -> bool:
    cause = error.__cause__
    return getattr(cause, "sqlstate", None) == _QUERY_CANCELED or "interrupted" in str(cause or error)


def _read_in_time(workspace_id: int, person_id: int | None, goal: str, deadline: _Deadline):
    """The standing and goal rows in one transaction (a savepoint inside a caller's), bounded by `deadline`."""
    read = _recall_rows_postgresql if connection.vendor == "postgresql" else _recall_rows_portable
    with transaction.atomic():
        rows = read(workspace_id, person_id, goal_terms(goal), deadline)
        if deadline.replaced is not None:
            # SET LOCAL outlives a released savepoint: give the caller's transaction its own setting back.
            with connection.cursor() as cursor:
                cursor.execute("SELECT set_config('statement_timeout', %s, true)", [deadline.replaced])
    return rows


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


# --- episodes ----------------------------------------------------------------------------------------------


def episode_list(*, access: Access, task_id: int | None = None) -> QuerySet[Episode]:
    """The workspace's episodes, most recent first (one task's with `task_id`), each with its provenance in
    `episode.derived_from`, the evidence and earlier versions read with the links (the REST list's shape)."""
    episodes = Episode.objects.filter(workspace=access.workspace).order_by("-period_end", "-pk")
    if task_id is not None:
        episodes = episodes.filter(task_id=task_id)
    return episodes.prefetch_related(_provenance())
