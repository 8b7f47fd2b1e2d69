"""What must hold after any amount of killing and restarting, read from the database (persisted facts only).

`invariants(workspace_ids, task_ids)` returns a `Findings`: each list names the offending rows, so a failure
says exactly what went wrong. Empty lists everywhere is a pass.
"""

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import timedelta

from django.conf import settings
from django.db.models import Count
from django.utils import timezone
from django_q.models import OrmQ
from django_q.models import Task as QTask

from agents.models import Card, CardStatus, ChecklistItem, Step, Task, TaskStatus, ToolCall, Turn, TurnStatus
from billing.models import LedgerEntry, LedgerKind, Order, OrderStatus
from billing.services.wallets import wallet_reconcile
from workspace.models import TERMINAL_JOB_STATUSES, ArtifactVersion, Event, GenerationJob, JobStatus, Workspace

TERMINAL = {TaskStatus.DONE, TaskStatus.FAILED, TaskStatus.CANCELLED}
STALE_MARGIN = 30  # seconds past its lease a running turn may not sit
LOST_AFTER = 60  # seconds a generation job's message may wait in a live cluster's own queue


@dataclass
class Findings:
    unsettled: list[str] = field(default_factory=list)  # neither terminal nor waiting on an open card
    # waiting on a generation job whose django-q message a killed process had taken: see `lost_jobs`
    lost_generation_jobs: list[str] = field(default_factory=list)
    # idle with a paid call a killed turn never ran, after the person confirmed the resume card: see `_stranded`
    stranded_after_resume: list[str] = field(default_factory=list)
    stale_running: list[str] = field(default_factory=list)  # running turns past their lease + 30 s
    duplicate_orders: list[str] = field(default_factory=list)
    duplicate_holds: list[str] = field(default_factory=list)
    duplicate_captures: list[str] = field(default_factory=list)
    duplicate_submissions: list[str] = field(default_factory=list)
    orphan_orders: list[str] = field(default_factory=list)  # an order no recorded tool call asked for
    unreconciled: list[str] = field(default_factory=list)
    event_gaps: list[str] = field(default_factory=list)
    generation_overlap: list[str] = field(default_factory=list)  # a step from an older worker after a newer one
    retried_deliveries: list[str] = field(default_factory=list)  # figures, not failures: see `_submissions`
    idle_deliveries: list[str] = field(default_factory=list)
    statuses: dict[str, int] = field(default_factory=dict)
    orders: dict[str, int] = field(default_factory=dict)
    paid_steps: int = 0

    def failures(self) -> dict[str, list[str]]:
        names = [
            "unsettled",
            "lost_generation_jobs",
            "stranded_after_resume",
            "stale_running",
            "duplicate_orders",
            "duplicate_holds",
            "duplicate_captures",
            "duplicate_submissions",
            "orphan_orders",
            "unreconciled",
            "event_gaps",
            "generation_overlap",
        ]
        return {name: getattr(self, name) for name in names if getattr(self, name)}


def _settled(findings: Findings, task_ids: list[int]) -> None:
    findings.statuses, unsettled = task_states(task_ids)
    lost, stranded = lost_jobs(task_ids), stranded_tasks(task_ids)
    for line in unsettled:
        task_id = int(line.split()[1].rstrip(":"))
        if task_id in lost:
            findings.lost_generation_jobs.append(f"{line}: {lost[task_id]}")
        elif task_id in stranded:
            findings.stranded_after_resume.append(f"{line}: {stranded[task_id]}")
        else:
            findings.unsettled.append(line)


def stranded_tasks(task_ids: list[int]) -> dict[int, str]:
    """Idle tasks holding a tool call still `pending` in a turn that was taken over: the killed turn had
    decided it, the next generation never ran it, and its checklist item stays in progress with no card."""
    calls = ToolCall.objects.filter(
        turn__task_id__in=task_ids, turn__task__status=TaskStatus.IDLE, status="pending", turn__generation__gt=1
    ).values_list("turn__task_id", "call_id", "name")
    return {task_id: f"call {call_id} ({name}) never ran" for task_id, call_id, name in calls}


def lost_jobs(task_ids: list[int]) -> dict[int, str]:
    """Tasks waiting on a generation job that nothing will run before the broker's `retry`: the job is still
    submitted, and its django-q message is taken (locked) though no process of ours reported on it.

    That is what a SIGKILLed qcluster worker, pusher or sentinel leaves: the ORM broker hides a message it
    handed out for Q_CLUSTER["retry"] seconds (720 by default). The generation sweeper hands such a job out
    again once it is silent (WorkerProvider.redeliver); this check fails if that did not happen."""
    jobs = {
        f"generation-{pk}": (pk, task_id)
        for pk, task_id in GenerationJob.objects.filter(
            task_id__in=task_ids, status__in=[JobStatus.SUBMITTED, JobStatus.SUBMITTING, JobStatus.RUNNING]
        ).values_list("pk", "task_id")
    }
    lost: dict[int, str] = {}
    now = timezone.now()
    # The broker stamps a message it hands out with lock = now + retry. A live cluster's pusher also takes
    # messages ahead of its workers, so only one handed out over LOST_AFTER seconds ago counts as lost.
    handed_out_before = now - timedelta(seconds=LOST_AFTER) + timedelta(seconds=settings.Q_CLUSTER["retry"])
    for queued in OrmQ.objects.filter(lock__gt=now, lock__lt=handed_out_before):
        try:
            name = queued.task.get("name")
        except Exception:  # noqa: BLE001, S112 - a payload this process cannot read is not a generation job
            continue
        if name in jobs:
            job_id, task_id = jobs[name]
            lost[task_id] = f"job {job_id}'s message hidden until {queued.lock:%H:%M:%S}"
    return lost


def task_states(task_ids: list[int]) -> tuple[dict[str, int], list[str]]:
    """How many tasks are in each state ("waiting (card)" when an open card waits on the person), and the
    tasks that are neither terminal nor waiting on a card."""
    unsettled = []
    open_card_tasks = set(
        Card.objects.filter(task_id__in=task_ids, status=CardStatus.OPEN).values_list("task_id", flat=True)
    )
    statuses = Counter()
    for task_id, status, stop_reason in Task.objects.filter(pk__in=task_ids).values_list("pk", "status", "stop_reason"):
        settled = status in TERMINAL or task_id in open_card_tasks
        statuses[status if status in TERMINAL else f"{status} (card)" if settled else status] += 1
        if not settled:
            unsettled.append(f"task {task_id}: {status} {stop_reason or ''}{_failed_jobs(task_id)}".strip())
    return dict(statuses), unsettled


def _failed_jobs(task_id: int) -> str:
    """Why a task's generations failed, to read in the soak's report."""
    failed = GenerationJob.objects.filter(task_id=task_id, status__in=[JobStatus.FAILED, JobStatus.TIMED_OUT]).order_by(
        "pk"
    )
    said = [f"job {job.pk} {job.status}: {(job.error or {}).get('code', '?')}" for job in failed]
    return f" ({'; '.join(said)})" if said else ""


def _stale(findings: Findings, task_ids: list[int]) -> None:
    cutoff = timezone.now() - timedelta(seconds=STALE_MARGIN)
    stale = Turn.objects.filter(task_id__in=task_ids, status=TurnStatus.RUNNING, lease_expires_at__lt=cutoff)
    findings.stale_running = [f"turn {t.pk} (task {t.task_id}) lease ended {t.lease_expires_at}" for t in stale]


def _money(findings: Findings, workspace_ids: list[int], task_ids: list[int]) -> None:
    orders = list(Order.objects.filter(workspace_id__in=workspace_ids))
    findings.orders = dict(Counter(o.status for o in orders))
    calls = {
        c.call_id: c
        for c in ToolCall.objects.filter(turn__task_id__in=task_ids, call_id__in=[o.idempotency_key for o in orders])
    }
    findings.paid_steps = len({calls[o.idempotency_key].step_id for o in orders if o.idempotency_key in calls})
    # One order per thing bought: a checklist item (or, without one, a prompt) of a task is paid for once.
    bought = Counter()
    for order in orders:
        call = calls.get(order.idempotency_key)
        if call is None:
            findings.orphan_orders.append(f"order {order.pk} key {order.idempotency_key}")
            continue
        if order.status == OrderStatus.RELEASED:
            continue  # released money is not a charge; a later attempt may buy the item again
        item = call.input.get("checklist_position", call.input.get("prompt"))
        bought[(order.task_id, item)] += 1
    findings.duplicate_orders = [f"task {t} item {i}: {n} orders" for (t, i), n in bought.items() if n > 1]
    # The ledger's own rows: one hold and at most one capture per order, and no capture of a released order.
    per_kind = (
        LedgerEntry.objects.filter(order__workspace_id__in=workspace_ids)
        .values("order_id", "kind")
        .annotate(n=Count("id"))
    )
    kinds = defaultdict(set)
    for row in per_kind:
        kinds[row["order_id"]].add(row["kind"])
        if row["n"] > 1 and row["kind"] == LedgerKind.HOLD:
            findings.duplicate_holds.append(f"order {row['order_id']}: {row['n']} holds")
        if row["n"] > 1 and row["kind"] == LedgerKind.CAPTURE:
            findings.duplicate_captures.append(f"order {row['order_id']}: {row['n']} captures")
    for order_id, seen in kinds.items():
        if LedgerKind.CAPTURE in seen and LedgerKind.RELEASE in seen:
            findings.duplicate_captures.append(f"order {order_id}: captured and released")
    for workspace_id in workspace_ids:
        ok, expected, actual = wallet_reconcile(workspace_id)
        if not ok:
            findings.unreconciled.append(f"workspace {workspace_id}: ledger {expected} vs wallet {actual}")
        held = sum(o.amount for o in orders if o.workspace_id == workspace_id and o.status == OrderStatus.HELD)
        if actual["held"] != held:
            findings.unreconciled.append(f"workspace {workspace_id}: wallet holds {actual['held']}, orders {held}")


def _submissions(findings: Findings, workspace_ids: list[int]) -> None:
    """Each generation job reached its provider once: one job per (task, prompt) that did not fail, and one
    django-q job (the procedural provider's "upstream") per generation job, queued or finished without error."""
    jobs = list(GenerationJob.objects.filter(workspace_id__in=workspace_ids))
    live = Counter((j.task_id, j.prompt) for j in jobs if j.status != JobStatus.FAILED)
    findings.duplicate_submissions = [f"task {t}: {n} jobs for {p!r}" for (t, p), n in live.items() if n > 1]
    names = {f"generation-{j.pk}" for j in jobs}
    upstream = defaultdict(set)
    for q_id, name, success, result in QTask.objects.filter(name__in=names).values_list(
        "id", "name", "success", "result"
    ):
        if not success or result == "interrupted":
            # A delivery that raised, or ended quietly, because the database went away under it stored nothing;
            # the sweeper queues a rerun-safe render again (job_work, WorkerProvider.poll). A retry, counted.
            findings.retried_deliveries.append(name)
        elif result in ("settled", "claimed"):
            # A delivery that found its job already finished did nothing (job_work): a sweep that found the job
            # silent just before it finished queued it again. Counted, not a second submission.
            findings.idle_deliveries.append(name)
        else:
            upstream[name].add(q_id)
    finished = {f"generation-{j.pk}" for j in jobs if j.status in TERMINAL_JOB_STATUSES}
    for queued in OrmQ.objects.all():
        try:
            task = queued.task
        except Exception:  # noqa: BLE001, S112 - a payload this process cannot read is not a generation job
            continue
        if task.get("name") in finished:
            findings.idle_deliveries.append(task["name"])  # will find its job finished and do nothing
        elif task.get("name") in names:
            upstream[task["name"]].add(task["id"])
    findings.duplicate_submissions += [
        f"{name}: {len(ids)} upstream submissions" for name, ids in upstream.items() if len(ids) > 1
    ]
    # Whatever ran twice, one job stores one result.
    results = Counter(
        ArtifactVersion.objects.filter(
            artifact__workspace_id__in=workspace_ids, meta__has_key="generation_job"
        ).values_list("meta__generation_job", flat=True)
    )
    findings.duplicate_submissions += [f"job {j}: {n} results stored" for j, n in results.items() if n > 1]
    stored = Counter(j.upstream_id for j in jobs if j.upstream_id)
    findings.duplicate_submissions += [f"upstream id {u} on {n} jobs" for u, n in stored.items() if n > 1]


def _events(findings: Findings, workspace_ids: list[int]) -> None:
    for workspace in Workspace.objects.filter(pk__in=workspace_ids):
        seqs = list(Event.objects.filter(workspace=workspace).order_by("seq").values_list("seq", flat=True))
        if seqs != list(range(1, workspace.last_event_seq + 1)):
            missing = sorted(set(range(1, workspace.last_event_seq + 1)) - set(seqs))
            findings.event_gaps.append(
                f"workspace {workspace.pk}: {len(seqs)} events for last seq {workspace.last_event_seq}, "
                f"missing {missing[:10]}"
            )


def _generations(findings: Findings, task_ids: list[int]) -> None:
    """A turn runs under one generation at a time: in step order, generations never go back, indices have no
    hole, and no step carries a generation newer than its turn's."""
    steps = defaultdict(list)
    for turn_id, index, generation, turn_generation in Step.objects.filter(turn__task_id__in=task_ids).values_list(
        "turn_id", "index", "generation", "turn__generation"
    ):
        steps[turn_id].append((index, generation, turn_generation))
    for turn_id, rows in steps.items():
        rows.sort()
        indices = [r[0] for r in rows]
        generations = [r[1] for r in rows]
        if indices != list(range(indices[0], indices[0] + len(indices))):
            findings.generation_overlap.append(f"turn {turn_id}: step indices {indices}")
        if generations != sorted(generations) or generations[-1] > rows[0][2]:
            findings.generation_overlap.append(f"turn {turn_id}: generations {generations}, turn at {rows[0][2]}")


def invariants(workspace_ids: list[int], task_ids: list[int]) -> Findings:
    findings = Findings()
    _settled(findings, task_ids)
    _stale(findings, task_ids)
    _money(findings, workspace_ids, task_ids)
    _submissions(findings, workspace_ids)
    _events(findings, workspace_ids)
    _generations(findings, task_ids)
    return findings


def broker_backlog() -> dict[str, int]:
    """Messages left in the ORM broker by function: duplicates piling up here are re-enqueue amplification."""
    backlog = Counter()
    for queued in OrmQ.objects.all():
        try:
            backlog[queued.task["func"].rsplit(".", 1)[-1]] += 1
        except Exception:  # noqa: BLE001 - a payload this process cannot read
            backlog["unreadable"] += 1
    return dict(backlog)


def done_items(task_ids: list[int]) -> int:
    return ChecklistItem.objects.filter(task_id__in=task_ids, status="done").count()
