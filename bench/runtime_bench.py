"""`make bench`: what a durable step costs, beside a raw commit and LangGraph's PostgreSQL checkpointer.

One process, one dedicated PostgreSQL database that this script creates, migrates and drops (DESIGN §3,
§14; issue 3, item 9). It measures, in the same run:

(a) raw commit: a single-row INSERT + COMMIT through psycopg, median over 500 after a warm-up.
(b) Lomote: ONE turn of 200 steps through `agents.runtime.loop.turn_run`, with a fixed model (steps 1-199
    call a no-op tool that returns ~1 KB, step 200 answers) installed the way the tests do it, by replacing
    `agents.runtime.loop.provider_for_lease`. Twice: with a read-only tool (Tool.read_only, like read_task_state
    or search_assets: run after its decision commits, its result recorded with the next decision) and with a
    transactional one (like update_checklist: run in its decision's transaction, its result recorded there).
(c) LangGraph: a MessagesState graph whose model node appends a fixed tool-call AIMessage and whose tool node
    appends a ~1 KB ToolMessage; PostgresSaver, durability="sync"; 200 steps in one thread.
Both tools return the same ~1 KB text per step, different for each step (identical results would let the
TOAST compressor shrink LangGraph's whole-list blobs and flatter it).

How:
- Order: one warm-up run each (fresh tables allocate their first pages), ANALYZE (as autovacuum would have on
  a database in use), then the timed runs, Lomote and LangGraph interleaved, then one accounting run each.
- Time per step: a timestamp when step k's decision starts (Lomote: a wrapper around `TurnRunner._step`;
  LangGraph: the model node's first line). Step k lasts until step k+1 starts, the last one until the run
  returns, so it covers the loop's reads, the context, the model, the decision's commit, the tool and its
  result. Timed runs carry no probes. Median over each 10-step window per run, then median over the runs.
- Commits: the accounting run is probed when steps 1, 11 and 191 start and after the end. A probe waits 1.1 s
  and runs one size query on the system's own connection: a backend flushes its statistics when it goes
  idle after a transaction, at most once a second, so that query pushes out everything before it. Then a
  connection to a separate monitor database (so that its own reads are not counted) reads
  `pg_stat_database.xact_commit` and the WAL insert position. What a probe adds by itself is measured with
  probes back to back and subtracted. `xact_commit` counts every transaction, read-only autocommit SELECTs
  included. Write transactions (the ones that flush WAL at commit) are counted exactly from the WAL with
  pg_walinspect: COMMIT records of transactions that touched a block of the bench database, whoever else
  uses the server meanwhile (a temporary replication slot keeps the WAL until then).
- Bytes per step, at the same probes: the bytes of the live rows (sum of pg_column_size: exact) and
  pg_total_relation_size of the system's tables (heap, indexes, TOAST: page-granular, so coarse over 10
  steps). Lomote: agents_step, agents_toolcall, workspace_event, agents_inboxmessage, agents_turn.
  LangGraph: checkpoints, checkpoint_blobs, checkpoint_writes.

Usage: `python -m bench.runtime_bench [--steps 200] [--repeats 3] [--profile]`. DATABASE_URL names the
server; the database used is the one named there if its name contains "bench", else `lomote_bench`.
"""

import argparse
import base64
import hashlib
import os
import platform
import secrets
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `python bench/runtime_bench.py` as well as `python -m bench.runtime_bench`
    sys.path.insert(0, str(ROOT))

import psycopg  # noqa: E402 - after the path set-up above
from psycopg import sql  # noqa: E402

DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/lomote_bench"
WINDOW = 10
RAW_COMMITS = 500
PROBE_IDLE = 1.1  # longer than PostgreSQL's PGSTAT_MIN_INTERVAL (1 s)
BENCH_TOOL = "bench_noop"  # transactional
BENCH_READ_TOOL = "bench_read"  # read-only

LOMOTE_TABLES = ("agents_step", "agents_toolcall", "workspace_event", "agents_inboxmessage", "agents_turn")
LANGGRAPH_TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")

TARGET_COMMITS = 3.0
TARGET_FLAT = 1.3
TARGET_VS_LANGGRAPH_EARLY = 3.0  # issue 17: >= 3x less time per step than LangGraph at steps 1-10
TARGET_VS_LANGGRAPH_LATE = 10.0  # and >= 10x at steps 191-200
TARGET_RAW_MULTIPLE = 5.0  # a step within 5x of a raw INSERT+COMMIT
TARGET_BYTES_FLAT = 1.3


def payload(step: int) -> str:
    """~1 KB of text, different for every step and about as compressible as base64."""
    digest, chunks = str(step).encode(), []
    for _ in range(24):
        digest = hashlib.sha256(digest).digest()
        chunks.append(digest)
    return base64.b64encode(b"".join(chunks))[:1000].decode()


# --- database plumbing ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    url: str
    name: str
    admin_url: str
    monitor_url: str
    monitor_name: str


def target_from(url: str) -> Target:
    parts = urlsplit(url)
    if parts.scheme not in ("postgres", "postgresql"):
        raise SystemExit(f"make bench needs PostgreSQL: DATABASE_URL=postgres://... (got {parts.scheme!r})")
    name = parts.path.lstrip("/")
    if "bench" not in name:  # never drop a database this script did not make for itself
        name = "lomote_bench"
    monitor = f"{name}_monitor"
    return Target(
        url=urlunsplit(parts._replace(path=f"/{name}")),
        name=name,
        admin_url=urlunsplit(parts._replace(path="/postgres")),
        monitor_url=urlunsplit(parts._replace(path=f"/{monitor}")),
        monitor_name=monitor,
    )


def databases_recreate(target: Target) -> None:
    with psycopg.connect(target.admin_url, autocommit=True) as conn:
        for name in (target.name, target.monitor_name):
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def databases_drop(target: Target) -> None:
    with psycopg.connect(target.admin_url, autocommit=True) as conn:
        for name in (target.name, target.monitor_name):
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def size_query(tables: tuple[str, ...]) -> str:
    """One statement (so one transaction): total relation size and live-row bytes of `tables`.

    The table names are this module's constants, never input.
    """
    names = ", ".join(f"'{table}'" for table in tables)
    sizes = f"SELECT sum(pg_total_relation_size(n::regclass)) FROM unnest(ARRAY[{names}]) n"  # noqa: S608
    rows = " + ".join(f"(SELECT coalesce(sum(pg_column_size(t.*)), 0) FROM {table} t)" for table in tables)  # noqa: S608
    return f"SELECT ({sizes})::bigint AS tables, ({rows})::bigint AS row_bytes"


@dataclass(frozen=True)
class Probe:
    xact_commit: int
    lsn: str
    table_bytes: int
    row_bytes: int


class Monitor:
    """Reads the bench database's statistics from another database, so that its own reads are not counted."""

    def __init__(self, target: Target):
        self.target = target
        self.conn = psycopg.connect(target.monitor_url, autocommit=True)
        try:
            self.conn.execute("CREATE EXTENSION IF NOT EXISTS pg_walinspect")
            # Checkpoints recycle WAL segments; a temporary slot keeps them until this connection closes.
            self.conn.execute(
                "SELECT pg_create_physical_replication_slot(%s, true, true)", (f"{target.monitor_name}_{os.getpid()}",)
            )
            self.walinspect = True
        except psycopg.Error:
            self.walinspect = False
        self.db_oid = self.conn.execute("SELECT oid FROM pg_database WHERE datname = %s", (target.name,)).fetchone()[0]

    def probe(self, run_on_app: Callable[[str], tuple[int, int]], tables: tuple[str, ...]) -> Probe:
        time.sleep(PROBE_IDLE)
        table_bytes, row_bytes = run_on_app(size_query(tables))
        time.sleep(0.2)
        self.conn.execute("SELECT pg_stat_clear_snapshot()")
        xact, lsn = self.conn.execute(
            "SELECT xact_commit, pg_current_wal_insert_lsn()::text FROM pg_stat_database WHERE datname = %s",
            (self.target.name,),
        ).fetchone()
        return Probe(int(xact), lsn, int(table_bytes), int(row_bytes))

    def write_commits(self, start: Probe, end: Probe) -> int | None:
        """COMMIT records between two probes of transactions that wrote a block of the bench database."""
        if not self.walinspect:
            return None
        for _ in range(100):  # pg_walinspect reads flushed WAL only; the WAL writer flushes every 200 ms
            (flushed,) = self.conn.execute("SELECT pg_current_wal_flush_lsn() >= %s::pg_lsn", (end.lsn,)).fetchone()
            if flushed:
                break
            time.sleep(0.05)
        (count,) = self.conn.execute(
            """
            WITH r AS (SELECT xid::text AS xid, resource_manager, record_type, block_ref
                       FROM pg_get_wal_records_info(%s::pg_lsn, %s::pg_lsn))
            SELECT count(DISTINCT xid) FROM r
            WHERE resource_manager = 'Transaction' AND record_type LIKE 'COMMIT%%'
              AND xid IN (SELECT xid FROM r WHERE xid <> '0' AND block_ref LIKE %s)
            """,
            (start.lsn, end.lsn, f"%/{self.db_oid}/%"),
        ).fetchone()
        return int(count)

    def close(self) -> None:
        self.conn.close()


def raw_commit_ms(url: str, n: int = RAW_COMMITS) -> float:
    """(a) one-row INSERT + COMMIT, the floor under any durable step."""
    with psycopg.connect(url) as conn:
        conn.execute("CREATE TABLE bench_commit (id bigserial PRIMARY KEY, note text NOT NULL)")
        conn.commit()
        samples = []
        for i in range(n + 50):
            began = time.perf_counter()
            conn.execute("INSERT INTO bench_commit (note) VALUES (%s)", (f"row {i}",))
            conn.commit()
            if i >= 50:
                samples.append((time.perf_counter() - began) * 1000)
        conn.execute("DROP TABLE bench_commit")
        conn.commit()
    return statistics.median(samples)


# --- results ----------------------------------------------------------------------------------------------


@dataclass
class Accounting:
    """Probes at the start of steps 1, 11, 191 and after the end, plus the probe's own cost."""

    probes: dict[str, Probe]
    overhead: int  # xact_commit a probe adds by itself
    write_commits: dict[str, int | None] = field(default_factory=dict)

    def xact_per_step(self, a: str, b: str, steps: int) -> float:
        return (self.probes[b].xact_commit - self.probes[a].xact_commit - self.overhead) / steps

    def writes_per_step(self, a: str, b: str, steps: int) -> float | None:
        count = self.write_commits.get(f"{a}-{b}")
        return None if count is None else count / steps

    def table_bytes_per_step(self, a: str, b: str, steps: int) -> float:
        return (self.probes[b].table_bytes - self.probes[a].table_bytes) / steps

    def row_bytes_per_step(self, a: str, b: str, steps: int) -> float:
        return (self.probes[b].row_bytes - self.probes[a].row_bytes) / steps


def step_durations(starts: dict[int, float], end: float, steps: int) -> list[float]:
    """Milliseconds of steps 1..steps: from each step's start to the next one's (the last: to the end)."""
    marks = [starts[k] for k in range(1, steps + 1)] + [end]
    return [(marks[i + 1] - marks[i]) * 1000 for i in range(steps)]


@dataclass
class Timing:
    runs: list[list[float]] = field(default_factory=list)

    def window_ms(self, first: int, last: int) -> float:
        return statistics.median(statistics.median(run[first - 1 : last]) for run in self.runs)


# --- (b) Lomote -------------------------------------------------------------------------------------------


def django_setup(url: str, steps: int) -> None:
    os.environ["DATABASE_URL"] = url
    os.environ["DJANGO_SETTINGS_MODULE"] = "lomote.settings"
    os.environ["DEBUG"] = "0"  # production mode: no query log in memory
    os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(50))
    os.environ["LOMOTE_MAX_STEPS_PER_TURN"] = str(steps)
    os.environ["LOMOTE_TURN_SLICE_SECONDS"] = "3600"  # one job runs the whole turn
    os.environ["LOG_LEVEL"] = "WARNING"
    os.environ.pop("REDIS_URL", None)  # in-process push hints: no Redis round trip in the figures

    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0, interactive=False)


class LomoteBench:
    def __init__(self, steps: int):
        from django.contrib.auth import get_user_model

        import agents.queue as queue
        import agents.runtime.loop as loop
        from agents.providers.base import ModelResponse, ToolCallIntent, Usage
        from agents.tools import registry as tool_registry
        from agents.tools.base import Tool, ToolArgs, ToolContext, ToolResult
        from workspace.services.workspaces import workspace_create

        self.steps = steps
        self.loop = loop

        class NoArgs(ToolArgs):
            pass

        class BenchNoopTool(Tool):
            """Transactional, idempotent, touches nothing: only the runtime's own writes remain."""

            name = BENCH_TOOL
            description = "Do nothing and return about 1 KB (bench tool)."
            Args = NoArgs

            def run(self, ctx: ToolContext, args: NoArgs) -> ToolResult:
                return ToolResult(content={"ok": True, "note": payload(ctx.step_index)})

        class BenchReadTool(BenchNoopTool):
            """The same, declared read-only."""

            name = BENCH_READ_TOOL
            read_only = True

        usage = Usage(prompt_tokens=100, completion_tokens=20)
        bench = self
        self.tool = BENCH_READ_TOOL  # which tool the fixed model calls

        class FixedModel:
            kind = "bench"

            def complete(self, request):
                k = request.state["step_index"]
                if k < steps:
                    call = ToolCallIntent(id=f"call_{k}", name=bench.tool, arguments={})
                    return ModelResponse(text="", tool_calls=[call], usage=usage, model="bench-fixed-1")
                return ModelResponse(text="Done.", tool_calls=[], usage=usage, model="bench-fixed-1")

        model = FixedModel()
        loop.provider_for_lease = lambda lease: model
        queue._enqueue = lambda turn_id, generation: None  # this process runs the job itself
        self._tools = tool_registry.override(BenchNoopTool, BenchReadTool)
        self._tools.__enter__()

        self.user = get_user_model().objects.create_user(username="bench", password=None)
        self.workspace = workspace_create(user=self.user, name="Bench")
        self._original_step = loop.TurnRunner._step
        self.on_step: Callable[[int], None] = lambda index: None

        def step_hook(runner, task_id, last, last_calls):
            bench.on_step((last.index if last else 0) + 1)
            return bench._original_step(runner, task_id, last, last_calls)

        loop.TurnRunner._step = step_hook

    def _turn(self):
        from django.db import transaction

        from agents.models import Task, TaskStatus
        from agents.services.turns import turn_start

        task = Task.objects.create(
            workspace=self.workspace, title="Bench", brief="No-op steps", created_by=self.user, status=TaskStatus.IDLE
        )
        with transaction.atomic():
            task = Task.objects.select_for_update().get(pk=task.pk)
            return turn_start(task=task, trigger="bench")

    def _run(self) -> float:
        from agents.models import Step

        turn = self._turn()
        outcome = self.loop.turn_run(turn_id=turn.pk, generation=turn.generation, holder="bench")
        end = time.perf_counter()
        made = Step.objects.filter(turn=turn).count()
        if outcome != "answered" or made != self.steps:
            raise SystemExit(f"Lomote run ended {outcome!r} after {made} steps, expected 'answered' after {self.steps}")
        return end

    def timed(self) -> list[float]:
        starts: dict[int, float] = {}
        self.on_step = lambda index: starts.setdefault(index, time.perf_counter())
        end = self._run()
        return step_durations(starts, end, self.steps)

    @staticmethod
    def run_on_app(query: str) -> tuple[int, int]:
        from django.db import connection

        with connection.cursor() as cursor:  # autocommit: one transaction
            cursor.execute(query)
            return cursor.fetchone()

    def accounted(self, monitor: Monitor) -> Accounting:
        probes: dict[str, Probe] = {}
        marks = {1: "1", WINDOW + 1: f"{WINDOW + 1}", self.steps - WINDOW + 1: f"{self.steps - WINDOW + 1}"}

        def on_step(index: int) -> None:
            if index in marks and marks[index] not in probes:
                probes[marks[index]] = monitor.probe(self.run_on_app, LOMOTE_TABLES)

        overhead, probes["start"] = probe_calibrate(monitor, self.run_on_app, LOMOTE_TABLES)
        self.on_step = on_step
        self._run()
        probes["end"] = monitor.probe(self.run_on_app, LOMOTE_TABLES)
        self.on_step = lambda index: None
        return accounting_finish(monitor, probes, overhead, self.steps)

    def close(self) -> None:
        self.loop.TurnRunner._step = self._original_step
        self._tools.__exit__(None, None, None)


def probe_calibrate(monitor: Monitor, run_on_app, tables: tuple[str, ...]) -> tuple[int, Probe]:
    """The transactions a probe adds by itself (its first run may also prepare its statement)."""
    monitor.probe(run_on_app, tables)
    before = monitor.probe(run_on_app, tables)
    after = monitor.probe(run_on_app, tables)
    return after.xact_commit - before.xact_commit, after


def accounting_finish(monitor: Monitor, probes: dict[str, Probe], overhead: int, steps: int) -> Accounting:
    late = str(steps - WINDOW + 1)
    accounting = Accounting(probes=probes, overhead=overhead)
    for a, b in (("1", str(WINDOW + 1)), (late, "end"), ("1", "end")):
        accounting.write_commits[f"{a}-{b}"] = monitor.write_commits(probes[a], probes[b])
    return accounting


# --- (c) LangGraph ----------------------------------------------------------------------------------------


class LangGraphBench:
    def __init__(self, url: str, steps: int):
        from langchain_core.messages import AIMessage, ToolMessage
        from langgraph.checkpoint.postgres import PostgresSaver
        from langgraph.graph import END, START, MessagesState, StateGraph
        from psycopg.rows import dict_row

        self.steps = steps
        # The connection settings PostgresSaver documents for a connection passed in by hand.
        self.conn = psycopg.connect(url, autocommit=True, prepare_threshold=0, row_factory=dict_row)
        self.saver = PostgresSaver(self.conn)
        self.saver.setup()
        self.on_step: Callable[[int], None] = lambda index: None
        self.count = 0
        bench = self

        def model(state: MessagesState):
            bench.count += 1
            k = bench.count
            bench.on_step(k)
            if k < steps:
                call = {"name": BENCH_TOOL, "args": {}, "id": f"call_{k}", "type": "tool_call"}
                return {"messages": [AIMessage(content="", tool_calls=[call])]}
            return {"messages": [AIMessage(content="Done.")]}

        def tool(state: MessagesState):
            call = state["messages"][-1].tool_calls[0]
            k = int(call["id"].removeprefix("call_"))
            return {"messages": [ToolMessage(content=payload(k), tool_call_id=call["id"])]}

        def route(state: MessagesState):
            return "tool" if state["messages"][-1].tool_calls else END

        graph = StateGraph(MessagesState)
        graph.add_node("model", model)
        graph.add_node("tool", tool)
        graph.add_edge(START, "model")
        graph.add_conditional_edges("model", route, ["tool", END])
        graph.add_edge("tool", "model")
        self.graph = graph.compile(checkpointer=self.saver)
        self.thread = 0

    def _run(self) -> float:
        from langchain_core.messages import HumanMessage

        self.thread += 1
        self.count = 0
        config = {"configurable": {"thread_id": f"bench-{self.thread}"}, "recursion_limit": 2 * self.steps + 10}
        state = self.graph.invoke({"messages": [HumanMessage("Go.")]}, config, durability="sync")
        end = time.perf_counter()
        if self.count != self.steps or len(state["messages"]) != 2 * self.steps:
            raise SystemExit(f"LangGraph run made {self.count} steps, expected {self.steps}")
        return end

    def timed(self) -> list[float]:
        starts: dict[int, float] = {}
        self.on_step = lambda index: starts.setdefault(index, time.perf_counter())
        end = self._run()
        return step_durations(starts, end, self.steps)

    def run_on_app(self, query: str) -> tuple[int, int]:
        with self.saver.lock:  # the saver's own connection, between its writes
            row = self.conn.execute(query).fetchone()
        return row["tables"], row["row_bytes"]

    def accounted(self, monitor: Monitor) -> Accounting:
        probes: dict[str, Probe] = {}
        marks = {1: "1", WINDOW + 1: f"{WINDOW + 1}", self.steps - WINDOW + 1: f"{self.steps - WINDOW + 1}"}

        def on_step(index: int) -> None:
            if index in marks:
                probes[marks[index]] = monitor.probe(self.run_on_app, LANGGRAPH_TABLES)

        overhead, probes["start"] = probe_calibrate(monitor, self.run_on_app, LANGGRAPH_TABLES)
        self.on_step = on_step
        self._run()
        probes["end"] = monitor.probe(self.run_on_app, LANGGRAPH_TABLES)
        self.on_step = lambda index: None
        return accounting_finish(monitor, probes, overhead, self.steps)

    def close(self) -> None:
        self.conn.close()


# --- report -----------------------------------------------------------------------------------------------


def fmt(value: float | None, digits: int = 2) -> str:
    return "n/a" if value is None else f"{value:,.{digits}f}"


def ratio(a: float | None, b: float | None) -> str:
    return "n/a" if a is None or b is None or b == 0 else f"{a / b:.2f}×"


def pair(a: float | None, b: float | None, digits: int = 2) -> str:
    return f"{fmt(a, digits)} / {fmt(b, digits)}"


def verdict(ok: bool, miss: str) -> str:
    return "PASS" if ok else f"MISS ({miss})"


def figures_of(timing: Timing, acc: Accounting, steps: int) -> dict[str, float | None]:
    late = str(steps - WINDOW + 1)
    early_w, late_w, all_w = ("1", str(WINDOW + 1)), (late, "end"), ("1", "end")
    return {
        "ms_early": timing.window_ms(1, WINDOW),
        "ms_late": timing.window_ms(steps - WINDOW + 1, steps),
        "writes": acc.writes_per_step(*all_w, steps),
        "writes_early": acc.writes_per_step(*early_w, WINDOW),
        "writes_late": acc.writes_per_step(*late_w, WINDOW),
        "xact": acc.xact_per_step(*all_w, steps),
        "xact_early": acc.xact_per_step(*early_w, WINDOW),
        "xact_late": acc.xact_per_step(*late_w, WINDOW),
        "rows_early": acc.row_bytes_per_step(*early_w, WINDOW),
        "rows_late": acc.row_bytes_per_step(*late_w, WINDOW),
        "tables_early": acc.table_bytes_per_step(*early_w, WINDOW),
        "tables_late": acc.table_bytes_per_step(*late_w, WINDOW),
        "tables_run": acc.probes["end"].table_bytes - acc.probes["start"].table_bytes,
        "probe_overhead": acc.overhead,
    }


def report(*, steps: int, repeats: int, raw_ms: float, lo: dict, tx: dict, lg: dict, server: str) -> str:
    """`lo`: Lomote with the read-only tool, `tx`: with the transactional one, `lg`: LangGraph."""
    early, late = f"1–{WINDOW}", f"{steps - WINDOW + 1}–{steps}"

    def both(key: str) -> str:
        return f"{ratio(lg[key], lo[key])} / {ratio(lg[key], tx[key])}"

    rows = [
        (f"raw INSERT+COMMIT through psycopg, ms/op (median, {repeats + 1}×{RAW_COMMITS})", fmt(raw_ms, 3), "", "", ""),
        (f"ms/step, steps {early}", fmt(lo["ms_early"]), fmt(tx["ms_early"]), fmt(lg["ms_early"]), both("ms_early")),
        (f"ms/step, steps {late}", fmt(lo["ms_late"]), fmt(tx["ms_late"]), fmt(lg["ms_late"]), both("ms_late")),
        (
            f"growth, steps {late} / steps {early}",
            ratio(lo["ms_late"], lo["ms_early"]),
            ratio(tx["ms_late"], tx["ms_early"]),
            ratio(lg["ms_late"], lg["ms_early"]),
            "",
        ),
        (
            f"ms/step in raw commits, steps {early}",
            ratio(lo["ms_early"], raw_ms),
            ratio(tx["ms_early"], raw_ms),
            ratio(lg["ms_early"], raw_ms),
            "",
        ),
        (f"write commits/step (WAL), steps 1–{steps}", fmt(lo["writes"]), fmt(tx["writes"]), fmt(lg["writes"]), ""),
        (
            f"write commits/step, steps {early} / {late}",
            pair(lo["writes_early"], lo["writes_late"]),
            pair(tx["writes_early"], tx["writes_late"]),
            pair(lg["writes_early"], lg["writes_late"]),
            "",
        ),
        (
            f"all transactions/step (xact_commit), steps 1–{steps}",
            fmt(lo["xact"]),
            fmt(tx["xact"]),
            fmt(lg["xact"]),
            "",
        ),
        (
            f"all transactions/step, steps {early} / {late}",
            pair(lo["xact_early"], lo["xact_late"]),
            pair(tx["xact_early"], tx["xact_late"]),
            pair(lg["xact_early"], lg["xact_late"]),
            "",
        ),
        (
            f"live-row bytes/step, steps {early} / {late}",
            pair(lo["rows_early"], lo["rows_late"], 0),
            pair(tx["rows_early"], tx["rows_late"], 0),
            pair(lg["rows_early"], lg["rows_late"], 0),
            f"{ratio(lg['rows_early'], lo['rows_early'])} / {ratio(lg['rows_late'], lo['rows_late'])}",
        ),
        (
            f"table bytes/step (pg_total_relation_size), {early} / {late}",
            pair(lo["tables_early"], lo["tables_late"], 0),
            pair(tx["tables_early"], tx["tables_late"], 0),
            pair(lg["tables_early"], lg["tables_late"], 0),
            f"{ratio(lg['tables_early'], lo['tables_early'])} / {ratio(lg['tables_late'], lo['tables_late'])}",
        ),
        (
            f"table bytes added by one {steps}-step run",
            fmt(lo["tables_run"], 0),
            fmt(tx["tables_run"], 0),
            fmt(lg["tables_run"], 0),
            ratio(lg["tables_run"], lo["tables_run"]),
        ),
    ]
    head = ("", "Lomote, read tool", "Lomote, tx tool", "LangGraph", "LangGraph/Lomote")
    widths = [max(len(row[i]) for row in [head, *rows]) for i in range(len(head))]
    rule = "  ".join("-" * w for w in widths)

    def line(row) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True)))

    out = [
        f"Durable step cost: {steps} steps in one turn (Lomote) / one thread (LangGraph, durability=sync); "
        f"times are medians of {repeats} runs",
        f"PostgreSQL {server}; Python {platform.python_version()}; {os.cpu_count()} CPUs",
        "Lomote's tool is read-only (recorded with the next decision) or transactional (run and recorded in its "
        "decision's transaction); LangGraph/Lomote ratios are read / tx where two are shown.",
        rule,
        line(head),
        rule,
        *(line(row) for row in rows),
        rule,
        "Targets (Lomote):",
    ]
    for name, figures in (("read-only tool", lo), ("transactional tool", tx)):
        out += [f" {name}:", *targets(figures, lg, raw_ms, early, late)]
    out.append(
        f"Probes added {lo['probe_overhead']} / {tx['probe_overhead']} (Lomote) / {lg['probe_overhead']} "
        "(LangGraph) transaction(s) each, subtracted. Write commits: COMMIT records in the WAL of transactions "
        "that touched the bench database."
    )
    return "\n".join(out)


def targets(lo: dict, lg: dict, raw_ms: float, early: str, late: str) -> list[str]:
    growth = lo["ms_late"] / lo["ms_early"]
    raw_multiple = lo["ms_early"] / raw_ms
    faster_early = lg["ms_early"] / lo["ms_early"]
    faster_late = lg["ms_late"] / lo["ms_late"]
    rows_growth = lo["rows_late"] / lo["rows_early"] if lo["rows_early"] else float("inf")
    tables_growth = lo["tables_late"] / lo["tables_early"] if lo["tables_early"] else float("inf")
    writes, xact = lo["writes"], lo["xact"]
    return [
        f"  <= {TARGET_COMMITS:g} commits/step, write transactions: {fmt(writes)} -> "
        + (
            "n/a (pg_walinspect unavailable)"
            if writes is None
            else verdict(writes <= TARGET_COMMITS, f"{writes - TARGET_COMMITS:+.2f}/step")
        ),
        f"  <= {TARGET_COMMITS:g} commits/step, all transactions incl. read-only (xact_commit): {fmt(xact)} -> "
        + verdict(xact <= TARGET_COMMITS, f"{xact - TARGET_COMMITS:+.2f}/step"),
        f"  flat time, steps {late} within {TARGET_FLAT}x of steps {early}: {growth:.2f}x -> "
        + verdict(growth <= TARGET_FLAT, f"{growth / TARGET_FLAT:.2f}x over"),
        f"  >= {TARGET_VS_LANGGRAPH_EARLY:g}x less time/step than LangGraph, steps {early}: {faster_early:.2f}x -> "
        + verdict(faster_early >= TARGET_VS_LANGGRAPH_EARLY, f"{TARGET_VS_LANGGRAPH_EARLY / faster_early:.1f}x short"),
        f"  >= {TARGET_VS_LANGGRAPH_LATE:g}x less time/step than LangGraph, steps {late}: {faster_late:.2f}x -> "
        + verdict(faster_late >= TARGET_VS_LANGGRAPH_LATE, f"{TARGET_VS_LANGGRAPH_LATE / faster_late:.1f}x short"),
        f"  ms/step within {TARGET_RAW_MULTIPLE:g}x of a raw INSERT+COMMIT, steps {early}: {raw_multiple:.2f}x -> "
        + verdict(raw_multiple <= TARGET_RAW_MULTIPLE, f"{raw_multiple / TARGET_RAW_MULTIPLE:.2f}x over"),
        f"  bytes/step independent of history, steps {late} within {TARGET_BYTES_FLAT}x of steps {early}: "
        f"live rows {rows_growth:.2f}x -> "
        + verdict(rows_growth <= TARGET_BYTES_FLAT, f"{rows_growth / TARGET_BYTES_FLAT:.2f}x over")
        + f" (tables {tables_growth:.2f}x, page-granular)",
    ]


# --- main -------------------------------------------------------------------------------------------------


def statistics_refresh() -> None:
    """ANALYZE the bench database (both systems' tables) after the warm-up runs. A database in use has planner
    statistics — autovacuum analyzes a table as it grows — but these tables are minutes old: planned as nearly
    empty, lookups by key into a few hundred rows became sequential scans that grew with every run."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def profile_lomote(bench: LomoteBench, tool: str) -> None:
    import cProfile
    import pstats

    profiler = cProfile.Profile()
    profiler.enable()
    bench.timed()
    profiler.disable()
    print(f"\ncProfile of one Lomote run with {tool} (cumulative, top 40):")
    pstats.Stats(profiler).sort_stats("cumulative").print_stats(40)
    pstats.Stats(profiler).sort_stats("tottime").print_stats(25)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--profile", action="store_true", help="also print a cProfile of one Lomote run")
    parser.add_argument("--keep", action="store_true", help="keep the bench databases afterwards")
    args = parser.parse_args(argv)
    if args.steps < 2 * WINDOW + 1:
        parser.error(f"--steps must be at least {2 * WINDOW + 1}")

    target = target_from(os.environ.get("DATABASE_URL") or DEFAULT_URL)
    databases_recreate(target)
    monitor = None
    try:
        monitor = Monitor(target)
        server = monitor.conn.execute("SHOW server_version").fetchone()[0]
        print(f"bench database {target.name}: raw commits ...", flush=True)
        raw = [raw_commit_ms(target.url)]  # measured again beside each timed repeat: the machine drifts

        django_setup(target.url, args.steps)
        lomote = LomoteBench(args.steps)
        langgraph = LangGraphBench(target.url, args.steps)
        try:
            print("warm-up runs ...", flush=True)
            tools = (BENCH_READ_TOOL, BENCH_TOOL)
            for tool in tools:
                lomote.tool = tool
                lomote.timed()
            langgraph.timed()
            statistics_refresh()
            lomote_time, langgraph_time = {tool: Timing() for tool in tools}, Timing()
            for i in range(args.repeats):
                print(f"timed runs {i + 1}/{args.repeats} ...", flush=True)
                for tool in tools:
                    lomote.tool = tool
                    lomote_time[tool].runs.append(lomote.timed())
                langgraph_time.runs.append(langgraph.timed())
                raw.append(raw_commit_ms(target.url))
            raw_ms = statistics.median(raw)
            print("accounting runs (each probe pauses ~1.3 s) ...", flush=True)
            # A backend reports its transactions at most once a second; one left idle with some unreported
            # reports them 10 s later (PostgreSQL's PGSTAT_IDLE_INTERVAL): LangGraph's last timed steps, ~260
            # transactions, landed in Lomote's last accounting window. One statement each after a pause flushes both.
            time.sleep(PROBE_IDLE)
            lomote.run_on_app("SELECT 0 AS tables, 0 AS row_bytes")
            langgraph.run_on_app("SELECT 0 AS tables, 0 AS row_bytes")
            lomote_figures = {}
            for tool in tools:
                lomote.tool = tool
                lomote_figures[tool] = figures_of(lomote_time[tool], lomote.accounted(monitor), args.steps)
            langgraph_acc = langgraph.accounted(monitor)
            print()
            print(
                report(
                    steps=args.steps,
                    repeats=args.repeats,
                    raw_ms=raw_ms,
                    lo=lomote_figures[BENCH_READ_TOOL],
                    tx=lomote_figures[BENCH_TOOL],
                    lg=figures_of(langgraph_time, langgraph_acc, args.steps),
                    server=server,
                )
            )
            if args.profile:
                for tool in tools:
                    lomote.tool = tool
                    profile_lomote(lomote, tool)
        finally:
            lomote.close()
            langgraph.close()
    finally:
        if monitor is not None:
            monitor.close()
        if "django.db" in sys.modules:
            from django.db import connections

            connections.close_all()
        if not args.keep:
            databases_drop(target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
