"""Everything a decision reads about its task, in ONE statement (DESIGN §3, §7; issue 17).

A step's context needs the task row, its pending inbox, checklist, open cards, undelivered change notices,
spending and budget, the workspace's current profile, its forgotten terms and the guides it can load. Through the
ORM that is ten round trips and a read-only transaction around them; here it is one SELECT whose subqueries all read
the same snapshot, so it needs no transaction of its own (autocommit: one statement, one consistent view). It comes
back as one JSON value (`snapshot_column`), which the last write statement of a step also returns for the next
one when nothing after it changes what it reads (agents/runtime/steplog.py): that step then reads nothing before
its model call.

Raw SQL because the ORM cannot nest these aggregates as JSON into one row. Table and column names come from
the models' meta; only values are parameters. On another database (SQLite in local runs) the same facts are
read through the ORM (`_orm_snapshot`), which is also what the PostgreSQL query must agree with
(tests/agents/test_runtime_snapshot.py).
"""

import json
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from django.db import connection

from agents.models import Card, CardStatus, ChecklistItem, InboxMessage, InboxStatus, Task
from agents.selectors import GOAL_SCOPE_PREFIX
from billing.models import Approval, ApprovalKind, Order, OrderStatus
from billing.selectors import task_spending
from lomote.kernel.prepared import prepared_cursor
from memory.models import ForgottenTerm, ProfileEntry, ProfileVersion
from memory.services.forget import forgotten_terms_of
from memory.services.profile import profile_current
from workspace.models import Artifact, BuiltinGuide, ChangeNotice, Guide
from workspace.selectors import MAX_GUIDES_LISTED, guide_index, notices_pending

MAX_OPEN_CARDS = 10
MAX_NOTICES = 20


@dataclass(frozen=True)
class TaskSnapshot:
    task: Task
    new_messages: list[tuple[int, str]]  # the pending inbox, oldest first
    checklist: list[dict[str, Any]]  # by position
    open_cards: list[dict[str, Any]]  # the first MAX_OPEN_CARDS open cards, by id
    notices: list[dict[str, Any]]  # undelivered change notices, oldest first
    spending: dict[str, int | None]  # spent, held, remaining (None: no budget for the current scope)
    profile_number: int = 0
    profile_entries: list[tuple[str, int | None]] = field(default_factory=list)  # (text, memory version id)
    forgotten_terms: frozenset[str] = frozenset()
    guides: list[tuple[str, str]] = field(default_factory=list)  # (name, purpose) of the guides it can load


def task_snapshot(task_id: int) -> TaskSnapshot:
    if connection.vendor == "postgresql":
        return _pg_snapshot(task_id)
    return _orm_snapshot(Task.objects.get(pk=task_id))


def json_value(value) -> Any:
    # psycopg decodes `json` itself; be indifferent to a loader that hands back text.
    return json.loads(value) if isinstance(value, str) else value


def _t(model) -> str:
    return connection.ops.quote_name(model._meta.db_table)


@lru_cache(maxsize=1)
def _task_columns() -> tuple[tuple[str, ...], tuple[str, ...]]:
    fields = Task._meta.concrete_fields
    return tuple(f.attname for f in fields), tuple(f.column for f in fields)


@lru_cache(maxsize=1)
def snapshot_expression() -> str:
    """The snapshot of the task row `t` as ONE json array: the task's columns, then each part of the context.

    One json value rather than a row of columns: the client decodes it with one json.loads, where a row made the
    driver set up a loader per column (and Django's Python timestamptz loader parse each timestamp) — a
    measurable part of a step (make bench). Parameters are prefixed `snap_` so that they cannot meet those of a
    statement that embeds it (`snapshot_column`)."""
    _, columns = _task_columns()
    task_cols = ", ".join(f"t.{connection.ops.quote_name(c)}" for c in columns)
    # Each subquery is correlated on the task row `t`; json_agg over an empty set is NULL, read as [].
    return f"""json_build_array(json_build_array({task_cols}),
      (SELECT json_agg(json_build_array(m.id, m.text) ORDER BY m.id)
         FROM {_t(InboxMessage)} m WHERE m.task_id = t.id AND m.status = %(snap_pending)s),
      (SELECT json_agg(json_build_object('position', c.position, 'title', c.title, 'status', c.status,
                                         'needs_confirmation', c.needs_confirmation, 'evidence', c.evidence,
                                         'artifacts', c.artifacts) ORDER BY c.position)
         FROM {_t(ChecklistItem)} c WHERE c.task_id = t.id),
      (SELECT json_agg(json_build_object('card', k.id, 'kind', k.kind, 'title', k.title) ORDER BY k.id)
         FROM (SELECT id, kind, title FROM {_t(Card)} WHERE task_id = t.id AND status = %(snap_open)s
               ORDER BY id LIMIT {MAX_OPEN_CARDS}) k),
      (SELECT json_agg(json_build_object('id', n.id, 'artifact', n.artifact_id, 'from_version', n.from_version,
                                         'to_version', n.to_version, 'changed_nodes', n.changed_nodes,
                                         'summary', n.summary) ORDER BY n.created_at, n.id)
         FROM (SELECT * FROM {_t(ChangeNotice)} WHERE task_id = t.id AND delivered_at IS NULL
               ORDER BY created_at, id LIMIT {MAX_NOTICES}) n),
      (SELECT json_build_array(coalesce(sum(o.amount) FILTER (WHERE o.status = %(snap_captured)s), 0),
                               coalesce(sum(o.amount) FILTER (WHERE o.status = %(snap_held)s), 0))
         FROM {_t(Order)} o WHERE o.workspace_id = t.workspace_id AND o.task_id = t.id),
      -- billing.selectors.budget_remaining: budgets of the task's current scope (agents.selectors.goal_scope_of)
      (SELECT CASE WHEN count(*) = 0 THEN NULL
                   ELSE coalesce(sum(a.remaining) FILTER (WHERE a.consumed_at IS NULL), 0) END
         FROM {_t(Approval)} a
         WHERE a.workspace_id = t.workspace_id AND a.kind = %(snap_budget)s AND a.task_id = t.id
           AND a.scope IN ('', %(snap_scope_prefix)s || t.goal_revision)),
      -- memory.services.profile.profile_current: the latest version and its entries
      (SELECT json_build_array(p.number,
                 (SELECT json_agg(json_build_array(e.text, e.version_id) ORDER BY e.position)
                    FROM {_t(ProfileEntry)} e WHERE e.profile_id = p.id))
         FROM {_t(ProfileVersion)} p WHERE p.workspace_id = t.workspace_id ORDER BY p.number DESC LIMIT 1),
      (SELECT array_agg(f.term) FROM {_t(ForgottenTerm)} f WHERE f.workspace_id = t.workspace_id),
      -- workspace.selectors.guide_index: the workspace's own guides, and the latest built-in ones of other names
      (SELECT json_agg(json_build_array(x.name, x.purpose) ORDER BY x.name COLLATE "C")
         FROM (SELECT u.name, u.purpose FROM (
                 SELECT g.name, g.purpose FROM {_t(Guide)} g JOIN {_t(Artifact)} a ON a.id = g.artifact_id
                  WHERE g.workspace_id = t.workspace_id AND a.deleted_at IS NULL
                 UNION ALL
                 SELECT b.name, b.purpose FROM {_t(BuiltinGuide)} b
                  WHERE b.version = (SELECT max(b2.version) FROM {_t(BuiltinGuide)} b2 WHERE b2.name = b.name)
                    AND NOT EXISTS (SELECT 1 FROM {_t(Guide)} g2 JOIN {_t(Artifact)} a2 ON a2.id = g2.artifact_id
                                     WHERE g2.workspace_id = t.workspace_id AND g2.name = b.name
                                       AND a2.deleted_at IS NULL)
               ) u ORDER BY u.name COLLATE "C" LIMIT {MAX_GUIDES_LISTED}) x))"""  # noqa: S608 - names from model meta


@lru_cache(maxsize=1)
def snapshot_column() -> str:
    """The snapshot of task %(snap_task)s as a scalar subquery: a statement's column (NULL when there is no
    such task), here and in the write statements that also read the next step's snapshot (steplog)."""
    return f"(SELECT {snapshot_expression()} FROM {_t(Task)} t WHERE t.id = %(snap_task)s)"  # noqa: S608


@lru_cache(maxsize=1)
def _snapshot_sql() -> str:
    return f"SELECT {snapshot_column()}"  # one text object, converted and prepared once (lomote/kernel/prepared.py)


def snapshot_params(task_id: int) -> dict[str, Any]:
    """The parameters of `snapshot_column()`."""
    return {
        "snap_task": task_id,
        "snap_pending": InboxStatus.PENDING.value,
        "snap_open": CardStatus.OPEN.value,
        "snap_captured": OrderStatus.CAPTURED.value,
        "snap_held": OrderStatus.HELD.value,
        "snap_budget": ApprovalKind.BUDGET.value,
        "snap_scope_prefix": GOAL_SCOPE_PREFIX,
    }


@lru_cache(maxsize=16)
def _fields_by_attname(model) -> dict[str, Any]:
    return {f.attname: f for f in model._meta.concrete_fields}


def model_from_json(model, attnames, values) -> Any:
    """A model instance from decoded JSON values of its columns: JSON columns arrive as values already, timestamps
    as ISO 8601 text (each field's `to_python` gives its Python type)."""
    fields = _fields_by_attname(model)
    converted = [
        None if value is None else fields[name].to_python(value) for name, value in zip(attnames, values, strict=True)
    ]
    return model.from_db(connection.alias, list(attnames), converted)


def snapshot_from_json(value) -> TaskSnapshot:
    """A TaskSnapshot from `snapshot_expression()`'s value."""
    task, inbox, checklist, cards, notices, orders, remaining, profile, terms, guides = json_value(value)
    spent, held = orders
    number, entries = profile or (0, None)
    return TaskSnapshot(
        task=model_from_json(Task, _task_columns()[0], task),
        new_messages=[(pk, text) for pk, text in inbox or []],
        checklist=checklist or [],
        open_cards=cards or [],
        notices=notices or [],
        spending={"spent": int(spent), "held": int(held), "remaining": None if remaining is None else int(remaining)},
        profile_number=number,
        profile_entries=[(text, version) for text, version in entries or []],
        forgotten_terms=frozenset(terms or ()),
        guides=[(name, purpose) for name, purpose in guides or []],
    )


def _pg_snapshot(task_id: int) -> TaskSnapshot:
    with prepared_cursor() as cursor:
        cursor.execute(_snapshot_sql(), snapshot_params(task_id))
        (value,) = cursor.fetchone()
    if value is None:
        raise Task.DoesNotExist(f"Task {task_id} does not exist.")
    return snapshot_from_json(value)


def _orm_snapshot(task: Task) -> TaskSnapshot:
    """The same facts through the ORM: several queries (other databases, and the reference for the test)."""
    checklist = [
        {
            "position": i.position,
            "title": i.title,
            "status": i.status,
            "needs_confirmation": i.needs_confirmation,
            "evidence": i.evidence,
            "artifacts": i.artifacts,
        }
        for i in ChecklistItem.objects.filter(task=task).order_by("position")
    ]
    cards = Card.objects.filter(task=task, status=CardStatus.OPEN).order_by("pk")[:MAX_OPEN_CARDS]
    notices = [
        {
            "id": n.pk,
            "artifact": n.artifact_id,
            "from_version": n.from_version,
            "to_version": n.to_version,
            "changed_nodes": n.changed_nodes,
            "summary": n.summary,
        }
        for n in notices_pending(task_id=task.pk, limit=MAX_NOTICES)
    ]
    profile = profile_current(task.workspace_id)
    return TaskSnapshot(
        task=task,
        new_messages=list(
            InboxMessage.objects.filter(task=task, status=InboxStatus.PENDING).order_by("id").values_list("id", "text")
        ),
        checklist=checklist,
        open_cards=[{"card": c.pk, "kind": c.kind, "title": c.title} for c in cards],
        notices=notices,
        spending=task_spending(workspace_id=task.workspace_id, task_id=task.pk),
        profile_number=profile.number,
        profile_entries=[(entry.text, entry.version_id) for entry in profile.entries],
        forgotten_terms=forgotten_terms_of(task.workspace_id),
        guides=guide_index(workspace_id=task.workspace_id),
    )
