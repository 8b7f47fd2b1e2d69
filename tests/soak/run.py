"""The chaos soak (issue 17 item 4) and the two-cluster run (item 3) share this driver.

    report = soak(SoakConfig(seconds=60, database_url=..., redis_url=...))
    print(report.text()); assert report.passed, report.failures

What it does, on the database Django is connected to (the pytest test database, or the one `python -m
tests.soak` creates):
1. starts every line of deploy/Procfile.cluster (two daphne, two qclusters, two watchdogs, a sweeper) with
   short leases, so recovery fits in a minute;
2. creates `tasks` tasks across `workspaces` funded workspaces, each asking for two posters: a plan, a quote
   card for its budget, then two paid renders (procedural provider, billed through orders);
3. a scripted person approves every card over REST, through the daphne processes, as the studio would;
4. with `chaos` on: every `kill_every` seconds SIGKILLs a random background process (a qcluster's worker,
   pusher, monitor or sentinel, a watchdog, the sweeper); a process manager's restart follows when a line
   exits. Once, right after a kill, PostgreSQL is restarted (`pg_ctlcluster`); later, Redis is. Either is
   reported "skipped: cannot restart … here" with the reason when this machine does not allow it;
5. then stops the chaos and lets the system drain until every task is terminal or waiting on an open card;
6. checks the invariants in `checks.py` and reports the figures.

Recovery time of a kill: from the SIGKILL until every turn that was running at that moment has finished or
been taken over by a newer generation (so it includes the lease expiry and the watchdog's pick-up).
"""

import random
import time
from dataclasses import dataclass, field

from django.contrib.auth import get_user_model
from django.db import close_old_connections, connections

from agents.models import Task, TaskStatus, Turn, TurnStatus
from agents.services.tasks import task_create
from billing.services.policy import spend_policy_update
from billing.services.wallets import wallet_topup
from tests.soak import checks
from tests.soak.infra import PostgresRestarter, RedisRestarter
from tests.soak.person import ScriptedPerson, session_cookie
from tests.soak.procfile import ProcessSet
from tests.support.servers import free_port
from workspace.selectors import workspace_access
from workspace.services.workspaces import workspace_create

BRIEF = "Make 2 retro posters for the {name} summer fair"


@dataclass
class SoakConfig:
    database_url: str
    redis_url: str
    seconds: float = 60  # how long the chaos lasts (0 with chaos off: just run the tasks)
    tasks: int = 100
    workspaces: int = 4
    chaos: bool = True
    kill_every: float = 3.0
    restart_postgres: bool = True
    restart_redis: bool = True
    drain_timeout: float = 120.0
    lease_seconds: float = 10.0
    person_every: float = 1.0  # seconds between two of the person's rounds over the open cards
    seed: int = 17
    q_workers: int = 2

    def env(self) -> dict[str, str]:
        from tests.support.realtime import worker_env  # imported late: it needs a configured Django

        return worker_env(
            redis_url=self.redis_url or None,
            Q_WORKERS=str(self.q_workers),
            LOMOTE_LEASE_SECONDS=str(self.lease_seconds),
            LOMOTE_WATCHDOG_PERIOD="5",  # recovery ≈ lease + period; each sweep also re-enqueues (see README)
            # Above the queue wait a backlog of tasks causes: the watchdog re-enqueues a turn queued longer than
            # this even while its first message still waits in the broker (see README "Scale-out").
            LOMOTE_QUEUE_STALE_SECONDS="30",
            LOMOTE_GENERATION_SWEEP_PERIOD="2",
            LOMOTE_GENERATION_SILENT_SECONDS="5",
            PYTHONUNBUFFERED="1",
        )


@dataclass
class SoakReport:
    config: SoakConfig
    findings: checks.Findings
    kills: list[tuple[float, str]] = field(default_factory=list)
    recoveries: list[float] = field(default_factory=list)
    unrecovered: int = 0
    postgres: str = "not attempted"
    redis: str = "not attempted"
    supervisor_restarts: list[str] = field(default_factory=list)
    cards_answered: int = 0
    person_errors: int = 0
    items_done: int = 0
    wall: float = 0.0
    drained_in: float | None = None
    backlog: dict[str, int] = field(default_factory=dict)
    logs: str = ""

    @property
    def failures(self) -> dict[str, list[str]]:
        failures = dict(self.findings.failures())
        if self.unrecovered:
            failures["unrecovered kills"] = [f"{self.unrecovered} kills whose running turns never moved on"]
        if self.drained_in is None:
            failures.setdefault("not drained", [f"still busy after {self.config.drain_timeout:g} s"])
        return failures

    @property
    def passed(self) -> bool:
        return not self.failures

    def _p(self, q: float) -> str:
        if not self.recoveries:
            return "n/a"
        ordered = sorted(self.recoveries)
        return f"{ordered[min(len(ordered) - 1, int(q * len(ordered)))]:.1f}s"

    def text(self) -> str:
        f = self.findings
        by_line: dict[str, int] = {}
        for _, name in self.kills:
            by_line[name] = by_line.get(name, 0) + 1
        killed = ", ".join(f"{k} {v}" for k, v in sorted(by_line.items())) or "-"
        lines = [
            f"soak: {self.config.tasks} tasks in {self.config.workspaces} workspaces, chaos {self.config.seconds:g}s, "
            f"wall {self.wall:.0f}s, drained in "
            + (f"{self.drained_in:.0f}s" if self.drained_in is not None else "NEVER"),
            f"  kills: {len(self.kills)} SIGKILLs ({killed}); "
            f"process-manager restarts: {len(self.supervisor_restarts)}",
            f"  restarts: PostgreSQL {self.postgres}; Redis {self.redis}",
            f"  recovery after a kill: p50 {self._p(0.5)}, p95 {self._p(0.95)}, max "
            f"{max(self.recoveries):.1f}s over {len(self.recoveries)} kills"
            if self.recoveries
            else "  recovery: n/a",
            f"  tasks: {f.statuses}; items done {self.items_done}; cards answered {self.cards_answered} "
            f"(person's failed requests, retried: {self.person_errors})",
            f"  orders: {f.orders}; paid steps {f.paid_steps}; "
            f"generation deliveries failed and queued again: {len(f.retried_deliveries)}, "
            f"finding their job already finished: {len(f.idle_deliveries)}",
            f"  left in the broker: {self.backlog or 'nothing'}",
        ]
        for name, rows in self.failures.items():
            lines.append(f"  FAIL {name}: {len(rows)}: {rows[:5]}")
        lines.append("  PASS" if self.passed else "  FAILED")
        return "\n".join(lines)


def _seed(config: SoakConfig) -> tuple[list[int], list[int], object]:
    user = get_user_model().objects.create_user(username="soak-person", email="soak@example.com", password="pw")
    workspace_ids, task_ids = [], []
    for w in range(config.workspaces):
        workspace = workspace_create(user=user, name=f"Soak {w + 1}")
        access = workspace_access(principal=user, workspace_id=workspace.pk)
        wallet_topup(access=access, amount=100_000)
        # Every plan asks the person first: each task opens a budget card the scripted person approves.
        spend_policy_update(access=access, no_confirm_threshold=0, daily_no_confirm_cap=0)
        workspace_ids.append(workspace.pk)
    for t in range(config.tasks):
        workspace_id = workspace_ids[t % len(workspace_ids)]
        access = workspace_access(principal=user, workspace_id=workspace_id)
        task = task_create(access=access, title=f"Posters {t + 1}", brief=BRIEF.format(name=f"Brand {t + 1}"))
        task_ids.append(task.pk)
    return workspace_ids, task_ids, user


def _in_flight(task_ids: list[int]) -> set[tuple[int, int]]:
    return set(Turn.objects.filter(task_id__in=task_ids, status=TurnStatus.RUNNING).values_list("pk", "generation"))


def _still_running(pending: set[tuple[int, int]]) -> set[tuple[int, int]]:
    if not pending:
        return set()
    now = set(
        Turn.objects.filter(pk__in=[p[0] for p in pending], status=TurnStatus.RUNNING).values_list("pk", "generation")
    )
    return pending & now


def _busy(task_ids: list[int]) -> bool:
    """Something is still moving: a turn queued or running, or a task active without a turn yet."""
    return (
        Turn.objects.filter(task_id__in=task_ids, status__in=[TurnStatus.QUEUED, TurnStatus.RUNNING]).exists()
        or Task.objects.filter(pk__in=task_ids, status=TaskStatus.ACTIVE).exists()
    )


def _settled(task_ids: list[int]) -> bool:
    """Nothing left that will move before the broker's `retry`: no turn queued or running, and every task
    terminal, on a card, or in one of the known gaps (failures the checks report, not reasons to wait out the
    drain)."""
    if _busy(task_ids):
        return False
    unsettled = checks.task_states(task_ids)[1]
    if not unsettled:
        return True
    stuck = set(checks.lost_jobs(task_ids)) | set(checks.stranded_tasks(task_ids))
    return all(int(line.split()[1].rstrip(":")) in stuck for line in unsettled)


def _reconnect() -> None:
    """After PostgreSQL restarted, this process's own connections are dead: drop them, Django reopens."""
    for connection in connections.all():
        connection.close_if_unusable_or_obsolete()
        try:
            connection.ensure_connection()
            with connection.cursor() as cursor:
                cursor.execute("SELECT 1")
        except Exception:  # noqa: BLE001 - a dead socket: close it, the next query opens a new one
            connection.close()


def _guarded(action):
    """Run a database read of the driver, surviving the moments the database is down."""
    for _ in range(100):
        try:
            return action()
        except Exception:  # noqa: BLE001 - PostgreSQL restarting: reconnect and try again
            _reconnect()
            time.sleep(0.3)
    return action()


def soak(config: SoakConfig) -> SoakReport:
    rng = random.Random(config.seed)
    started = time.monotonic()
    procs = ProcessSet.from_procfile(config.env(), ports={"WEB1_PORT": free_port(), "WEB2_PORT": free_port()})
    postgres, redis = PostgresRestarter(config.database_url), RedisRestarter(config.redis_url)
    report = SoakReport(config=config, findings=checks.Findings())
    pending: list[tuple[float, set[tuple[int, int]]]] = []  # kills whose in-flight turns have not all moved on
    try:
        procs.start()
        procs.wait_web_ready()
        workspace_ids, task_ids, user = _seed(config)
        person = ScriptedPerson(workspace_ids=workspace_ids, urls=procs.web_urls, session=session_cookie(user))
        chaos_end = time.monotonic() + (config.seconds if config.chaos else 0)
        restart_pg_at = time.monotonic() + config.seconds * 0.35
        restart_redis_at = time.monotonic() + config.seconds * 0.65
        next_kill = time.monotonic() + config.kill_every
        next_round = time.monotonic()
        drain_deadline = None
        while True:
            now = time.monotonic()
            procs.supervise()
            if config.chaos and now < chaos_end and now >= next_kill:
                in_flight = _guarded(lambda: _in_flight(task_ids))
                killed = procs.kill_random_worker(rng)
                if killed is not None:
                    report.kills.append((now - started, killed[0]))
                    pending.append((now, in_flight))
                next_kill = now + config.kill_every
                if config.restart_postgres and report.postgres == "not attempted" and now >= restart_pg_at:
                    # right after a kill: the database goes away while the cluster recovers from it
                    reason = postgres.why_not()
                    if reason:
                        report.postgres = f"skipped: cannot restart PostgreSQL here ({reason})"
                    else:
                        report.postgres = f"restarted once ({postgres.restart():.1f}s down)"
                        _reconnect()
            if config.chaos and now < chaos_end and config.restart_redis and report.redis == "not attempted":
                if now >= restart_redis_at:
                    reason = redis.why_not()
                    report.redis = (
                        f"skipped: cannot restart Redis here ({reason})"
                        if reason
                        else f"restarted once ({redis.restart():.1f}s down)"
                    )
            # The person answers cards while the chaos lasts (throughout, without chaos); after it, what they
            # approved drains and what they did not stays on its card.
            if (not config.chaos or now < chaos_end) and now >= next_round:
                _guarded(person.act_once)
                next_round = now + config.person_every
            still = []
            for killed_at, turns in pending:
                left = _guarded(lambda turns=turns: _still_running(turns))
                if left:
                    still.append((killed_at, left))
                else:
                    report.recoveries.append(time.monotonic() - killed_at)
            pending = still
            if now >= chaos_end:
                drain_deadline = drain_deadline or now + config.drain_timeout
                if _guarded(lambda: _settled(task_ids)) and not pending:
                    report.drained_in = now - chaos_end
                    break
                if now > drain_deadline:
                    break
            time.sleep(0.25)
        report.unrecovered = len(pending)
        close_old_connections()
        report.findings = _guarded(lambda: checks.invariants(workspace_ids, task_ids))
        report.items_done = checks.done_items(task_ids)
        report.backlog = checks.broker_backlog()
        report.cards_answered, report.person_errors = person.acted, person.errors
    finally:
        report.supervisor_restarts = list(procs.restarts)
        report.logs = procs.logs()
        procs.stop()
        report.wall = time.monotonic() - started
    return report
