"""A decision's fenced write in ONE statement: task lock, fence, the last step's read-only results, step, pending
calls and the events (issue 17).

Through the ORM the decision cost five round trips inside its transaction (lock the task for the calls that run in
it, renew-and-check the turn, insert the step, bulk-insert the calls, append the event). Here data-modifying CTEs
do it in one: every insert reads from the fence's UPDATE, so when the turn is no longer ours (another generation,
not running) or its task is no longer active, the statement inserts nothing and the caller raises Fenced. Locks
are taken in every writer's order: the task (when its calls need it), the turn, then the workspace row for the
event sequence.

Raw SQL because the ORM cannot chain an UPDATE's RETURNING into INSERTs. Names come from the models' meta;
values are parameters. Other databases take the ORM path (`_orm_write`).
"""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any

from django.db import connection
from django.db.models import F
from django.utils import timezone
from psycopg.types.json import Jsonb

from agents.exceptions import Fenced
from agents.fencing import fence_turn, lease_deadline, task_lock_for_tools
from agents.models import Step, Task, TaskStatus, ToolCall, ToolCallStatus, Turn, TurnStatus
from agents.runtime.snapshot import (
    TaskSnapshot,
    json_value,
    model_from_json,
    snapshot_column,
    snapshot_from_json,
    snapshot_params,
)
from lomote.kernel.events import push_hint_on_commit
from lomote.kernel.prepared import prepared_cursor
from workspace.models import ApiKey, Event, Membership, Role, Workspace
from workspace.services.events import event_append


@dataclass(frozen=True)
class Written:
    step: Step
    calls: list[ToolCall]
    lease_expires: datetime
    task: Task | None = None  # locked for the decision's transactional calls (decision_write's task_id)
    snapshot: TaskSnapshot | None = None  # the task as the next step reads it (decision_write's `snapshot`)


STEP_COLUMNS = (
    "index",
    "number",
    "generation",
    "text",
    "decision",
    "model",
    "prompt_tokens",
    "cached_prompt_tokens",
    "completion_tokens",
    "prefix_hash",
    "context_tokens",
    "visible_tools",
    "memory",
)
JSON_STEP_COLUMNS = {"decision", "visible_tools", "memory"}


def _q(name: str) -> str:
    return connection.ops.quote_name(name)


def _event_ctes(*, after: str, kind: str) -> str:
    """`next_seq` and `new_event`: the workspace event log's append (workspace/services/events.py), done only when
    the CTE `after` wrote a row — so a fenced-out writer appends nothing. `kind` is SQL: a parameter or a literal."""
    workspace, event = _q(Workspace._meta.db_table), _q(Event._meta.db_table)
    return f"""next_seq AS (
      UPDATE {workspace} SET last_event_seq = last_event_seq + 1
      WHERE id = %(workspace)s AND EXISTS (SELECT 1 FROM {after})
      RETURNING id, last_event_seq
    ), new_event AS (
      INSERT INTO {event} (workspace_id, seq, kind, data, created_at)
      SELECT id, last_event_seq, {kind}, %(data)s, %(now)s FROM next_seq
      RETURNING seq
    )"""  # noqa: S608 - names from model meta, values are parameters


@lru_cache(maxsize=4)
def _decision_sql(lock_task: bool, snapshot: bool) -> str:
    turn, step, call = _q(Turn._meta.db_table), _q(Step._meta.db_table), _q(ToolCall._meta.db_table)
    workspace, event = _q(Workspace._meta.db_table), _q(Event._meta.db_table)
    step_cols = ", ".join(_q(c) for c in STEP_COLUMNS)
    step_vals = ", ".join(f"%({c})s" for c in STEP_COLUMNS)
    # With `lock_task`, the statement first locks the task (agents.fencing.task_lock_for_tools, with what a
    # tool's checks read): the fence's EXISTS on `locked` is an uncorrelated sub-plan, evaluated once before the
    # turn's row is read, so the locks are taken in every writer's order — task, turn, workspace.
    locked, active = "", ""
    if lock_task:
        locked = f"locked AS ({_task_lock_select()}), "
        active = "AND EXISTS (SELECT 1 FROM locked WHERE locked.status = %(active)s)"
    task_row = f", (SELECT {_task_lock_json()} FROM locked)" if lock_task else ", NULL"  # noqa: S608
    # With `snapshot`, the next step's read of the task (agents/runtime/snapshot.py) as the statement's last
    # column: it sees the database as the statement began, which is what the next step would read, since this
    # statement writes nothing the snapshot reads (turn, steps, calls, workspace and events are not part of it).
    # `results`: the outcomes of the last step's read-only calls (run after that decision committed) are recorded
    # here, each still pending — the fence fails otherwise, so they are recorded all together or not at all.
    # They are all one step's calls: matching on that step as well lets the planner's one plan for every
    # execution look them up by index, where `id = ANY(array of unknown length)` alone made it scan a young
    # table (0.2 ms, make bench).
    # The events (their `tool_call.finished`, then this step's `step.committed`) take consecutive sequence
    # numbers from one update of the workspace row.
    return f"""
    WITH {locked}fence AS (
      UPDATE {turn} SET lease_expires_at = %(expires)s
      WHERE id = %(turn)s AND generation = %(generation)s AND status = %(running)s {active}
        AND NOT EXISTS (SELECT 1 FROM {call}
                        WHERE step_id = %(result_step)s AND id = ANY(%(result_ids)s) AND status <> %(pending)s)
      RETURNING id
    ), results AS (
      UPDATE {call} c SET status = r.status, result = r.result, error = r.error,
                          started_generation = %(generation)s, started_at = r.started_at,
                          finished_at = r.finished_at, attempts = c.attempts + 1
      FROM fence, jsonb_to_recordset(%(results)s) AS r(id bigint, status text, result jsonb, error jsonb,
                                                        started_at timestamptz, finished_at timestamptz)
      WHERE c.step_id = %(result_step)s AND c.id = ANY(%(result_ids)s) AND c.id = r.id
      RETURNING c.id
    ), new_step AS (
      INSERT INTO {step} (turn_id, {step_cols}, created_at)
      SELECT fence.id, {step_vals}, %(now)s FROM fence
      RETURNING id
    ), new_calls AS (
      INSERT INTO {call} (turn_id, step_id, "index", call_id, provider_call_id, name, input, idempotent, status,
                          result, error, attempts, started_generation, started_at, finished_at)
      SELECT %(turn)s, new_step.id, c.i, c.call_id, c.provider_call_id, c.name, c.input, c.idempotent,
             %(pending)s, NULL, NULL, 0, NULL, NULL, NULL
      FROM new_step, jsonb_to_recordset(%(calls)s) AS c(i int, call_id text, provider_call_id text, name text,
                                                          input jsonb, idempotent boolean)
      RETURNING id, "index"
    ), next_seq AS (
      UPDATE {workspace} SET last_event_seq = last_event_seq + %(event_count)s
      WHERE id = %(workspace)s AND EXISTS (SELECT 1 FROM new_step)
      RETURNING id, last_event_seq
    ), new_events AS (
      INSERT INTO {event} (workspace_id, seq, kind, data, created_at)
      SELECT n.id, n.last_event_seq - %(event_count)s + e.ord, e.kind, e.data, %(now)s
      FROM next_seq n, ROWS FROM (jsonb_to_recordset(%(events)s) AS (kind text, data jsonb))
                       WITH ORDINALITY AS e(kind, data, ord)
      RETURNING seq
    )
    SELECT (SELECT id FROM new_step),
           (SELECT json_agg(json_build_array("index", id)) FROM new_calls),
           (SELECT max(seq) FROM new_events){task_row}, {snapshot_column() if snapshot else "NULL"}
    """  # noqa: S608 - names from model meta, values are parameters


def decision_write(
    *,
    turn_id: int,
    generation: int,
    workspace_id: int,
    step_fields: dict[str, Any],
    calls: list[dict[str, Any]],
    event: dict[str, Any],
    task_id: int | None = None,
    results: Sequence[ToolCall] = (),
    snapshot: bool = False,
) -> Written:
    """Record a decision under the fence, in the caller's transaction (or as its own: the statement is atomic).
    Raises Fenced (nothing written) when the turn is no longer this generation's. `calls`: index, call_id,
    provider_call_id, name, input, idempotent.

    With `task_id`, the task is locked first in the same statement, and must be active, for the calls that run
    in this transaction (`Written.task`: agents.fencing.task_lock_for_tools' columns and acting role).
    `results`: the last step's read-only calls, run since it committed, with their outcomes set on them; they
    must still be pending in the log, and are recorded with their `tool_call.finished` events before this
    step's own. With `snapshot` (and `task_id`), the statement also returns the task's snapshot for the next
    step (`Written.snapshot`; PostgreSQL only): for a decision that is the whole of its transaction and whose
    calls change nothing (read-only), so that what the next step reads is what the statement saw.
    """
    finished = [
        {
            "kind": "tool_call.finished",
            "data": {"task": event["task"], "turn": turn_id, "call": c.call_id, "name": c.name, "status": c.status},
        }
        for c in results
    ]
    if connection.vendor != "postgresql":
        task = task_lock_for_tools(task_id) if task_id is not None else None
        return _orm_write(turn_id, generation, workspace_id, step_fields, calls, event, task, results, finished)
    now, expires = timezone.now(), lease_deadline()
    events = [*finished, {"kind": "step.committed", "data": event}]
    params = {
        **{c: Jsonb(step_fields[c]) if c in JSON_STEP_COLUMNS else step_fields[c] for c in STEP_COLUMNS},
        "expires": expires,
        "turn": turn_id,
        "generation": generation,
        "running": TurnStatus.RUNNING,
        "now": now,
        "pending": ToolCallStatus.PENDING,
        "calls": Jsonb([{**c, "i": c["index"]} for c in calls]),
        "result_ids": [c.pk for c in results],
        "result_step": results[0].step_id if results else None,
        "results": Jsonb([_result_row(c) for c in results]),
        "workspace": workspace_id,
        "event_count": len(events),
        "events": Jsonb(events),
    }
    snapshot = snapshot and task_id is not None
    if task_id is not None:
        params.update(task=task_id, viewer=Role.VIEWER.value, active=TaskStatus.ACTIVE)
    if snapshot:
        params.update(snapshot_params(task_id))
    with prepared_cursor() as cursor:
        cursor.execute(_decision_sql(task_id is not None, snapshot), params)
        step_id, call_ids, seq, task_row, next_read = cursor.fetchone()
    if step_id is None:
        raise Fenced()
    push_hint_on_commit(workspace_id, seq)
    step = Step(pk=step_id, turn_id=turn_id, created_at=now, **step_fields)
    step._state.adding, step._state.db = False, connection.alias
    ids = dict(call_ids or [])
    made = []
    for c in calls:
        call = ToolCall(
            pk=ids[c["index"]],
            turn_id=turn_id,
            step_id=step_id,
            status=ToolCallStatus.PENDING,
            result=None,
            error=None,
            attempts=0,
            **c,
        )
        call._state.adding, call._state.db = False, connection.alias
        made.append(call)
    return Written(
        step=step,
        calls=made,
        lease_expires=expires,
        task=_locked_task(task_row) if task_row else None,
        snapshot=snapshot_from_json(next_read) if next_read else None,
    )


def _result_row(call: ToolCall) -> dict[str, Any]:
    return {
        "id": call.pk,
        "status": call.status,
        "result": call.result,
        "error": call.error,
        "started_at": call.started_at.isoformat(),
        "finished_at": call.finished_at.isoformat(),
    }


def _orm_write(turn_id, generation, workspace_id, step_fields, calls, event, task, results, finished) -> Written:
    expires = fence_turn(turn_id, generation)
    for call, notice in zip(results, finished, strict=True):
        recorded = ToolCall.objects.filter(pk=call.pk, status=ToolCallStatus.PENDING).update(
            status=call.status,
            result=call.result,
            error=call.error,
            started_generation=generation,
            started_at=call.started_at,
            finished_at=call.finished_at,
            attempts=F("attempts") + 1,
        )
        if recorded != 1:
            raise Fenced()
        event_append(workspace_id=workspace_id, **notice)
    step = Step.objects.create(turn_id=turn_id, **step_fields)
    made = ToolCall.objects.bulk_create([ToolCall(turn_id=turn_id, step=step, **c) for c in calls])
    event_append(workspace_id=workspace_id, kind="step.committed", data=event)
    return Written(step=step, calls=made, lease_expires=expires, task=task)


@lru_cache(maxsize=2)
def _result_sql(snapshot: bool) -> str:
    call = _q(ToolCall._meta.db_table)
    # The call's compare-and-set (toolexec._write) and its `tool_call.finished` event in one statement: the
    # event is appended only when the update matched. With `snapshot`, the next step's read of the task as well
    # (see decision_write): it sees the transaction's earlier statements, the tool's own writes among them.
    return f"""
    WITH done AS (
      UPDATE {call} SET status = %(status)s, result = %(result)s, error = %(error)s,
                        started_generation = %(generation)s, started_at = %(started_at)s,
                        finished_at = %(now)s, attempts = %(attempts)s
      WHERE id = %(call)s AND status = ANY(%(sources)s)
        AND NOT (status = %(started)s AND started_generation IS NOT NULL AND started_generation < %(generation)s)
      RETURNING id
    ), {_event_ctes(after="done", kind="'tool_call.finished'")}
    SELECT (SELECT count(*) FROM done), (SELECT seq FROM new_event), {snapshot_column() if snapshot else "NULL"}
    """  # noqa: S608 - names from model meta, values are parameters


def call_result_write(
    *,
    call_id: int,
    sources: list[str],
    status: str,
    result: dict | None,
    error: dict | None,
    generation: int,
    started_at: datetime | None,
    attempts: int,
    workspace_id: int,
    event: dict[str, Any],
    snapshot_of: int | None = None,
) -> tuple[int, TaskSnapshot | None]:
    """PostgreSQL: record a call's outcome if it is still in one of `sources` (and not started by a newer
    generation) and append its `tool_call.finished` event, in one statement. Returns the rows updated (0 or 1),
    and with `snapshot_of` (a task id) that task's snapshot for the next step, read by the same statement: for
    the last write of a step's transaction (toolexec.calls_run_in_decision)."""
    now = timezone.now()
    params = {
        "status": status,
        "result": None if result is None else Jsonb(result),
        "error": None if error is None else Jsonb(error),
        "generation": generation,
        "started_at": started_at or now,
        "now": now,
        "attempts": attempts,
        "call": call_id,
        "sources": list(sources),
        "started": ToolCallStatus.STARTED,
        "workspace": workspace_id,
        "data": Jsonb(event),
    }
    if snapshot_of is not None:
        params.update(snapshot_params(snapshot_of))
    with prepared_cursor() as cursor:
        cursor.execute(_result_sql(snapshot_of is not None), params)
        updated, seq, next_read = cursor.fetchone()
    if seq is not None:
        push_hint_on_commit(workspace_id, seq)
    return updated, snapshot_from_json(next_read) if updated and next_read else None


TASK_LOCK_COLUMNS = ("id", "workspace_id", "status", "created_by_id", "created_by_key_id", "permissions", "autonomy")


@lru_cache(maxsize=1)
def _task_lock_select() -> str:
    """agents.fencing.task_lock_for_tools as one SELECT: the columns a tool's checks read and the acting role
    (agents.selectors.with_acting_role: the creator's current role in the workspace, else the active role of
    the API key that started it, else viewer)."""
    task, membership, key = _q(Task._meta.db_table), _q(Membership._meta.db_table), _q(ApiKey._meta.db_table)
    columns = ", ".join(f"t.{_q(c)}" for c in TASK_LOCK_COLUMNS)
    return f"""
    SELECT {columns},
           coalesce((SELECT m.role FROM {membership} m
                     WHERE m.workspace_id = t.workspace_id AND m.user_id = t.created_by_id LIMIT 1),
                    (SELECT k.role FROM {key} k
                     WHERE k.workspace_id = t.workspace_id AND k.id = t.created_by_key_id AND k.revoked_at IS NULL),
                    %(viewer)s) AS acting_role
    FROM {task} t WHERE t.id = %(task)s
    FOR NO KEY UPDATE OF t
    """  # noqa: S608 - names from model meta, values are parameters


@lru_cache(maxsize=1)
def _task_lock_json() -> str:
    """A `locked` row (`_task_lock_select`) as one json array, decoded by `_locked_task`."""
    return "json_build_array(" + ", ".join(f"locked.{_q(c)}" for c in (*TASK_LOCK_COLUMNS, "acting_role")) + ")"


@lru_cache(maxsize=1)
def _task_lock_statement() -> str:
    return f"WITH locked AS ({_task_lock_select()}) SELECT {_task_lock_json()} FROM locked"  # noqa: S608


def _locked_task(value) -> Task:
    """The Task of a `_task_lock_json` value: its columns, then the acting role."""
    *columns, role = json_value(value)
    task = model_from_json(Task, TASK_LOCK_COLUMNS, columns)
    task.acting_role = role
    return task


def task_lock_for_decision(task_id: int) -> Task:
    """agents.fencing.task_lock_for_tools as one plain statement, for a decision that must lock the task before
    its own statement (one that reads inbox messages: those are locked after the turn). The ORM compiled that
    annotated locking query anew at every step, a measurable part of a step's CPU (make bench)."""
    if connection.vendor != "postgresql":
        return task_lock_for_tools(task_id)
    with prepared_cursor() as cursor:
        cursor.execute(_task_lock_statement(), {"task": task_id, "viewer": Role.VIEWER.value})
        row = cursor.fetchone()
    if row is None:
        raise Task.DoesNotExist(f"Task {task_id} does not exist.")
    task = _locked_task(row[0])
    if task.status != TaskStatus.ACTIVE:
        raise Fenced()
    return task
