"""Running a Flow node by node as django-q jobs (seed 002: request → job → engine → node executors).

    flow_run_create(*, workspace_id, artifact_id, inputs, started_by=None, started_by_task_id=None,
                    idempotency_key=None) -> (FlowRun, created)
        Freezes the Flow's current version into a run with one FlowNodeRun per node (all `pending`), in
        status `awaiting_approval`: nothing is enqueued until its paid nodes are authorised and held (agents'
        flow run request does that through billing, then calls flow_run_begin). A repeated key returns the
        run it created.
    flow_run_begin(run_id)        awaiting_approval → running; enqueues the start node after commit.
    flow_run_cancel(run_id, reason)   awaiting_approval → cancelled (spending declined): nothing ran.
    flow_node_retry(*, workspace_id, run_id, node_id) -> FlowRun
        A failed node and the nodes skipped because of it go back to `pending` with attempt + 1 (a paid
        node's next attempt is a new order and job; the failed one's hold was released), and the run waits
        for authorisation again. Nothing that succeeded runs again.
    flow_run_rerun_stale(*, workspace_id, run_id) -> FlowRun
        The run's stale nodes (an input they consumed changed since) go back to `pending` with attempt + 1 and
        the run waits for authorisation again; the nodes that are still current keep their outputs and do not
        run. A re-run generation node adds a version to the artifact it made before (one artifact per node
        across re-runs, never a copy). 409 `nothing_stale` when no node is stale.
    flow_run_paid_nodes(run)      the pending nodes that will submit a paid generation, with their job keys.
    flow_node_keys_to_submit()    the job keys of all generation nodes that have not submitted yet (billing's
                                  orphaned-hold sweep leaves their money held).
    flow_node_work(node_run_id)   the q-job of one node: claim it (pending → running), run its type
                                  outside any transaction, record the output (→ done) or error (→ failed),
                                  then schedule what became ready.
    flow_node_settle(node_run_id) a generation node's job settled: record its artifact (or failure).
    flow_nodes_revive(now=None) -> list[int]
        The watchdog's part: a node whose q-job message a killed process took (hidden by the broker for its
        `retry`, 12 minutes) or lost is handed out again — a node still pending past LOMOTE_QUEUE_STALE_SECONDS,
        one left running without a job past LOMOTE_TASK_TIMEOUTS["default"] (its worker is gone: the q timeout
        would have killed it), a generation node whose job settled while it still waits.

Outputs made from an artifact version that has since changed are marked stale by workspace/flows/stale.py.

A run over a conversation thread (FlowRun.thread: Main, or a task's) names it in its `flow.run` and `flow.node`
events, and each time it ends (done, failed, or cancelled before it ran) it publishes FLOW_RUN_ENDED with its end
number, in the transaction that ended it: agents posts the result to that thread, once per end.

Scheduling (a production DAG, seed §10.3): a node is ready once every predecessor is terminal and at
least one edge into it is active — its source is done and, for a router, chose it. A node with no active
edge (a branch the router did not take) or with a failed predecessor is `skipped`. Each ready node is its
own q-job, so independent branches run in parallel on as many workers as there are. Every status change
appends a `flow.node` event; the run ends `done` when a finish node is done, else `failed`.

Paid nodes: a generation node's job is keyed `flow-run:<run>:<node>:<attempt>`, and billing holds an order
under that same key before the run begins, so the job's completion captures it and its failure releases it
exactly once. A paid node that ends without a job (skipped, or failed before submitting) publishes the
domain event FLOW_NODE_CLOSED (workspace/domain_events.py) in the same transaction, and billing releases its
hold.

A node moves only as workspace/transitions.py lists (NODE_MOVES); the conditional updates here read it.

Locks, in this order: the workspace row (event log), the run, its node rows. Delivery is at least once: a
node is claimed with a conditional update, so a second delivery of the same job does nothing; a node left
`running` by a worker that died is claimed again after LOMOTE_TASK_TIMEOUTS["default"].
"""

import json
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import CharField, F, Q, QuerySet, Value
from django.db.models.functions import Cast, Concat
from django.utils import timezone
from django.utils.translation import gettext_noop
from django_q.tasks import async_task

from lomote.kernel import domain_events
from lomote.kernel.exceptions import Conflict, DomainError, InvalidInput, NotFound
from lomote.kernel.queue_revival import messages_revive
from workspace.domain_events import FLOW_NODE_CLOSED, FLOW_RUN_ENDED
from workspace.flows.graph import (
    downstream,
    graph_check,
    graph_load,
    predecessors,
    successors,
    topological_order,
)
from workspace.flows.nodes import GENERATION_NODE_KINDS, INPUT_TYPES, NODE_TYPES, NodeContext, node_type_get
from workspace.locks import workspace_qs_for_update
from workspace.models import (
    FLOW_JOB_KEY_PREFIX,
    TERMINAL_JOB_STATUSES,
    ArtifactKind,
    FlowNodeRun,
    FlowRun,
    FlowRunStatus,
    FlowThread,
    GenerationJob,
    JobStatus,
    NodeStatus,
)
from workspace.selectors import artifact_version_get
from workspace.services.events import event_append
from workspace.transitions import node_move_check, node_sources

logger = logging.getLogger(__name__)

MAX_INPUT_BYTES = 20_000
REVIVE_BATCH = 200
DONE_LIKE = (NodeStatus.DONE, NodeStatus.STALE)


def _message_name(function: str, node_run_id: int) -> str:
    return f"{function}-{node_run_id}"


def _enqueue(function: str, node_run_id: int) -> None:
    async_task(
        f"workspace.tasks.{function}",
        node_run_id,
        group="flow",
        timeout=settings.LOMOTE_TASK_TIMEOUTS["default"],
        task_name=_message_name(function, node_run_id),
    )


def _enqueue_on_commit(function: str, node_run_id: int) -> None:
    transaction.on_commit(lambda: _enqueue(function, node_run_id))


def _node_event(run: FlowRun, node: FlowNodeRun) -> None:
    data: dict[str, Any] = {"run": run.pk, "artifact": run.artifact_id, "node": node.node_id, "type": node.type}
    data["status"] = node.status
    if node.status == NodeStatus.DONE and isinstance(node.output, dict):
        data["output"] = {k: v for k, v in node.output.items() if k in ("choice", "artifact", "version", "model")}
    if node.error:
        data["error"] = node.error
    _with_thread(run, data)
    event_append(workspace_id=run.workspace_id, kind="flow.node", data=data)


def _with_thread(run: FlowRun, data: dict[str, Any]) -> dict[str, Any]:
    """A run over a conversation names its thread in its events, so the studio shows it live in that thread."""
    if run.thread:
        data["thread"] = run.thread_ref
    return data


def _lock_workspace(workspace_id: int) -> None:
    list(workspace_qs_for_update().filter(pk=workspace_id).values_list("pk", flat=True))


def _lock_run(run_id: int) -> FlowRun:
    return FlowRun.objects.select_for_update(of=("self",), no_key=True).get(pk=run_id)


def _run_event(run: FlowRun) -> None:
    data = {"run": run.pk, "artifact": run.artifact_id, "version": run.flow_version, "status": run.status}
    event_append(workspace_id=run.workspace_id, kind="flow.run", data=_with_thread(run, data))


def _ended(run: FlowRun) -> None:
    """Count the run's end and tell the apps above, when it runs over a thread (they post its result there).
    Caller holds the workspace row and the run lock, in the transaction that ended it."""
    FlowRun.objects.filter(pk=run.pk).update(ends=F("ends") + 1)
    run.refresh_from_db(fields=["ends"])
    if run.thread:
        domain_events.publish(
            FLOW_RUN_ENDED,
            workspace_id=run.workspace_id,
            run_id=run.pk,
            end=run.ends,
            status=run.status,
            thread=run.thread_ref,
            artifact_id=run.artifact_id,
            outputs=run.outputs,
            error=run.error,
        )


def _same_run(run: FlowRun, artifact_id: int, inputs: dict[str, Any], thread: tuple[str, int | None]) -> FlowRun:
    if run.artifact_id != artifact_id or run.inputs != inputs or (run.thread, run.thread_task_id) != thread:
        raise Conflict(
            "This idempotency key already started a different run.",
            code="idempotency_key_reuse",
            details={"run": run.pk, "idempotency_key": run.idempotency_key},
        )
    return run


def flow_run_create(
    *,
    workspace_id: int,
    artifact_id: int,
    inputs: dict[str, Any] | None = None,
    started_by=None,
    started_by_task_id: int | None = None,
    idempotency_key: str | None = None,
    thread: str = FlowThread.NONE,
    thread_task_id: int | None = None,
) -> tuple[FlowRun, bool]:
    """Freeze the Flow's current version into a run awaiting authorisation (module docstring).

    `thread` (and `thread_task_id` for a task's) names the conversation the run reads and answers in; the
    caller has checked it belongs to the workspace. Returns (run, created). Runs in the caller's transaction
    (a savepoint for the key's unique constraint)."""
    inputs = dict(inputs or {})
    thread_task_id = thread_task_id if thread == FlowThread.TASK else None
    if len(json.dumps(inputs, default=str)) > MAX_INPUT_BYTES:
        raise InvalidInput(
            f"Inputs are limited to {MAX_INPUT_BYTES} bytes of JSON.", details={"fields": {"inputs": []}}
        )
    if idempotency_key is not None and not 0 < len(idempotency_key.strip()) <= 200:
        raise InvalidInput("An idempotency key needs 1 to 200 characters.", details={"fields": {"idempotency_key": []}})
    if idempotency_key is not None:
        existing = FlowRun.objects.filter(workspace_id=workspace_id, idempotency_key=idempotency_key).first()
        if existing is not None:
            return _same_run(existing, artifact_id, inputs, (thread, thread_task_id)), False
    version = artifact_version_get(workspace_id=workspace_id, artifact_id=artifact_id)
    if version.artifact.kind != ArtifactKind.FLOW:
        raise InvalidInput(f"Artifact {artifact_id} is a {version.artifact.kind}, not a Flow.", code="not_a_flow")
    graph = graph_check(graph_load(version.content), types=NODE_TYPES, input_types=INPUT_TYPES, runnable=True)
    _lock_workspace(workspace_id)
    try:
        with transaction.atomic():
            run = FlowRun.objects.create(
                workspace_id=workspace_id,
                artifact_id=artifact_id,
                flow_version=version.number,
                graph=graph,
                inputs=inputs,
                status=FlowRunStatus.AWAITING_APPROVAL,
                started_by=started_by,
                started_by_task_id=started_by_task_id,
                idempotency_key=idempotency_key,
                thread=thread,
                thread_task_id=thread_task_id,
            )
    except IntegrityError:
        existing = FlowRun.objects.get(workspace_id=workspace_id, idempotency_key=idempotency_key)
        return _same_run(existing, artifact_id, inputs, (thread, thread_task_id)), False
    FlowNodeRun.objects.bulk_create(
        FlowNodeRun(run=run, node_id=node_id, type=graph["nodes"][node_id]["type"])
        for node_id in topological_order(graph)
    )
    _run_event(run)
    return run, True


@dataclass(frozen=True)
class PaidNode:
    node_id: str
    kind: str  # the generation kind: image, video…
    params: dict[str, Any]  # the generation params, which decide the price
    job_key: str


def flow_run_paid_nodes(run: FlowRun, *, pending_only: bool = True) -> list[PaidNode]:
    """The run's pending generation nodes: each will submit one paid job under its key (all of them, at their
    current attempt, with `pending_only=False`)."""
    paid = []
    nodes = run.nodes.filter(type__in=GENERATION_NODE_KINDS).order_by("pk")
    for node in nodes.filter(status=NodeStatus.PENDING) if pending_only else nodes:
        params = run.graph["nodes"][node.node_id].get("params") or {}
        generation_params = params.get("generation_params")
        paid.append(
            PaidNode(
                node_id=node.node_id,
                kind=GENERATION_NODE_KINDS[node.type],
                params=dict(generation_params) if isinstance(generation_params, dict) else {},
                job_key=node.job_key,
            )
        )
    return paid


def flow_node_keys_to_submit() -> QuerySet:
    """The job keys of generation nodes that have not submitted yet (pending, or running before their job):
    money held under them is waiting for that job, not orphaned. A values queryset, for `__in` subqueries."""
    return (
        FlowNodeRun.objects.filter(
            type__in=GENERATION_NODE_KINDS,
            status__in=[NodeStatus.PENDING, NodeStatus.RUNNING],
            job_id__isnull=True,
            run__status__in=[FlowRunStatus.AWAITING_APPROVAL, FlowRunStatus.RUNNING],
        )
        .annotate(
            key=Concat(
                Value(FLOW_JOB_KEY_PREFIX),
                Cast("run_id", CharField()),
                Value(":"),
                "node_id",
                Value(":"),
                Cast("attempt", CharField()),
                output_field=CharField(),
            )
        )
        .values("key")
    )


def flow_run_begin(run_id: int) -> FlowRun:
    """awaiting_approval → running, and schedule the start node. The caller holds the transaction and has
    authorised (held) the run's paid nodes; a run already begun is returned as it is."""
    run = FlowRun.objects.get(pk=run_id)
    _lock_workspace(run.workspace_id)
    if not FlowRun.objects.filter(pk=run_id, status=FlowRunStatus.AWAITING_APPROVAL).update(
        status=FlowRunStatus.RUNNING
    ):
        return FlowRun.objects.get(pk=run_id)
    run = _lock_run(run_id)
    _run_event(run)
    _schedule(run)
    return run


def flow_run_cancel(run_id: int, *, reason: str) -> FlowRun:
    """awaiting_approval → cancelled (e.g. the person declined its spending). Nothing of it ran or was held."""
    run = FlowRun.objects.get(pk=run_id)
    _lock_workspace(run.workspace_id)
    now = timezone.now()
    if FlowRun.objects.filter(pk=run_id, status=FlowRunStatus.AWAITING_APPROVAL).update(
        status=FlowRunStatus.CANCELLED, error={"code": reason}, finished_at=now
    ):
        run.refresh_from_db()
        FlowNodeRun.objects.filter(run=run, status__in=node_sources(NodeStatus.SKIPPED)).update(
            status=NodeStatus.SKIPPED, error={"code": reason}, finished_at=now
        )
        _run_event(run)
        _ended(run)
    return FlowRun.objects.get(pk=run_id)


def _back_to_pending(nodes: list[FlowNodeRun], *, keep_output: bool) -> None:
    """A new attempt of each node. A re-run keeps the last output until the new one replaces it: a generation
    node reads the artifact it made from there, to add the next version to it."""
    for node in nodes:
        node_move_check(node.status, NodeStatus.PENDING)
        FlowNodeRun.objects.filter(pk=node.pk).update(
            status=NodeStatus.PENDING,
            attempt=F("attempt") + 1,
            enqueued_at=None,
            job_id=None,
            output=node.output if keep_output else None,
            error=None,
            started_at=None,
            finished_at=None,
            updated_at=timezone.now(),
        )


def _await_again(run: FlowRun, **event: Any) -> FlowRun:
    run.status, run.outputs, run.error, run.finished_at = FlowRunStatus.AWAITING_APPROVAL, None, None, None
    run.save(update_fields=["status", "outputs", "error", "finished_at"])
    data = {"run": run.pk, "artifact": run.artifact_id, "version": run.flow_version, "status": run.status, **event}
    event_append(workspace_id=run.workspace_id, kind="flow.run", data=_with_thread(run, data))
    return run


def _settled_run(workspace_id: int, run_id: int) -> FlowRun:
    """The run, locked, once it has ended (404 elsewhere, 409 `run_not_settled` while it runs or waits)."""
    if not FlowRun.objects.filter(pk=run_id, workspace_id=workspace_id).exists():
        raise NotFound(gettext_noop("Flow run not found."))
    _lock_workspace(workspace_id)
    run = _lock_run(run_id)
    if run.status not in (FlowRunStatus.FAILED, FlowRunStatus.DONE):
        raise Conflict(
            f"The run is {run.status}; wait until it has ended.",
            code="run_not_settled",
            details={"run": run.pk, "status": run.status},
        )
    return run


@transaction.atomic
def flow_run_rerun_stale(*, workspace_id: int, run_id: int) -> FlowRun:
    """Re-run the run's stale nodes on their new inputs (module docstring)."""
    run = _settled_run(workspace_id, run_id)
    stale = list(run.nodes.select_for_update(of=("self",), no_key=True).filter(status=NodeStatus.STALE).order_by("pk"))
    if not stale:
        raise Conflict("No node of this run is stale: its outputs are current.", code="nothing_stale")
    _back_to_pending(stale, keep_output=True)
    return _await_again(run, rerun=[n.node_id for n in stale])


@transaction.atomic
def flow_node_retry(*, workspace_id: int, run_id: int, node_id: str) -> FlowRun:
    """Retry a failed node and what was skipped because of it (module docstring); the run then awaits
    authorisation for the retried paid nodes. 409 `node_not_failed` for a node that did not fail, and
    `run_not_settled` while the run is still running or waiting."""
    run = _settled_run(workspace_id, run_id)
    nodes = {n.node_id: n for n in run.nodes.select_for_update(of=("self",), no_key=True).order_by("pk")}
    node = nodes.get(node_id)
    if node is None:
        raise NotFound(gettext_noop("No such node in this run."), details={"node": node_id})
    if node.status != NodeStatus.FAILED:
        raise Conflict(
            f"Node {node_id} is {node.status}; only a failed node is retried.",
            code="node_not_failed",
            details={"node": node_id, "status": node.status},
        )
    again = [node_id] + sorted(
        n for n in downstream(run.graph, {node_id}) if n != node_id and nodes[n].status == NodeStatus.SKIPPED
    )
    _back_to_pending([nodes[n] for n in again], keep_output=False)
    return _await_again(run, retry=again)


def _closed_without_job(run: FlowRun, node: FlowNodeRun) -> None:
    """A paid node ended without submitting its job: whatever was held for it is given back (billing)."""
    if node.type in GENERATION_NODE_KINDS and node.job_id is None:
        domain_events.publish(FLOW_NODE_CLOSED, workspace_id=run.workspace_id, idempotency_key=node.job_key)


def _schedule(run: FlowRun) -> None:
    """Enqueue the nodes that became ready, skip the unreachable ones, end the run when all are settled.
    Caller holds the workspace row and the run lock."""
    if run.status != FlowRunStatus.RUNNING:
        return
    graph = run.graph
    while True:
        nodes = {n.node_id: n for n in run.nodes.select_for_update(of=("self",), no_key=True).order_by("pk")}
        progressed = False
        for node in nodes.values():
            if node.status != NodeStatus.PENDING or node.enqueued_at is not None:
                continue
            preds = [nodes[p] for p in predecessors(graph, node.node_id)]
            if any(p.status not in (*DONE_LIKE, NodeStatus.FAILED, NodeStatus.SKIPPED) for p in preds):
                continue
            active = [
                p
                for p in preds
                if p.status in DONE_LIKE and (p.type != "router" or (p.output or {}).get("choice") == node.node_id)
            ]
            if preds and (any(p.status == NodeStatus.FAILED for p in preds) or not active):
                failed = [p.node_id for p in preds if p.status == NodeStatus.FAILED]
                node_move_check(node.status, NodeStatus.SKIPPED)
                node.status = NodeStatus.SKIPPED
                node.error = {"code": "upstream_failed", "nodes": failed} if failed else None
                node.finished_at = timezone.now()
                node.save(update_fields=["status", "error", "finished_at", "updated_at"])
                _node_event(run, node)
                _closed_without_job(run, node)
                progressed = True
                continue
            node.enqueued_at = timezone.now()
            node.save(update_fields=["enqueued_at", "updated_at"])
            _enqueue_on_commit("flow_node_work", node.pk)
        if not progressed:
            break
    nodes = list(run.nodes.all())
    if all(n.status in (*DONE_LIKE, NodeStatus.FAILED, NodeStatus.SKIPPED) for n in nodes):
        finishes = [n for n in nodes if n.type == "finish" and n.status in DONE_LIKE]
        run.status = FlowRunStatus.DONE if finishes else FlowRunStatus.FAILED
        run.outputs = finishes[0].output if finishes else None
        if not finishes:
            run.error = {
                "code": "no_finish",
                "failed": sorted(n.node_id for n in nodes if n.status == NodeStatus.FAILED),
            }
        run.finished_at = timezone.now()
        run.save(update_fields=["status", "outputs", "error", "finished_at"])
        _run_event(run)
        _ended(run)


def _claim(node_run_id: int) -> bool:
    now = timezone.now()
    abandoned = now - timedelta(seconds=settings.LOMOTE_TASK_TIMEOUTS["default"])
    with transaction.atomic():
        node = FlowNodeRun.objects.select_related("run").filter(pk=node_run_id).first()
        if node is None:
            return False
        _lock_workspace(node.run.workspace_id)
        # The table says which statuses a claim moves from; a running node only once its worker is gone.
        claimed = (
            FlowNodeRun.objects.filter(pk=node_run_id, enqueued_at__isnull=False, job_id__isnull=True)
            .filter(status__in=node_sources(NodeStatus.RUNNING))
            .filter(Q(status=NodeStatus.PENDING) | Q(status=NodeStatus.RUNNING, started_at__lt=abandoned))
            .update(status=NodeStatus.RUNNING, started_at=now, updated_at=now)
        )
        if claimed:
            node.refresh_from_db()
            _node_event(node.run, node)
        return bool(claimed)


def flow_node_work(node_run_id: int) -> str:
    """The q-job of one node (module docstring). Safe to deliver twice."""
    if not _claim(node_run_id):
        return "claimed"
    node = FlowNodeRun.objects.select_related("run").get(pk=node_run_id)
    run = node.run
    ctx = NodeContext(
        workspace_id=run.workspace_id,
        run_id=run.pk,
        node_id=node.node_id,
        params=dict(run.graph["nodes"][node.node_id].get("params") or {}),
        inputs=run.inputs,
        upstream={
            p.node_id: p.output or {}
            for p in run.nodes.filter(node_id__in=predecessors(run.graph, node.node_id), status__in=DONE_LIKE).order_by(
                "node_id"
            )
        },
        successors=successors(run.graph, node.node_id),
        task_id=run.started_by_task_id,
        job_key=node.job_key,
        previous=node.output or {},
    )
    try:
        result = node_type_get(node.type).run(ctx)
    except DomainError as exc:
        error = {"code": exc.code, "message": exc.message[:500]}
        if exc.details:
            error["details"] = json.loads(json.dumps(exc.details, default=str))
        return _node_finish(node_run_id, NodeStatus.FAILED, error=error)
    except Exception:  # noqa: BLE001 - the node must end; details stay in our log
        logger.exception("flow run %s node %s failed", run.pk, node.node_id)
        return _node_finish(
            node_run_id, NodeStatus.FAILED, error={"code": "node_failed", "message": "The node failed."}
        )
    if result.job_id is not None:
        FlowNodeRun.objects.filter(pk=node_run_id, status=NodeStatus.RUNNING).update(
            job_id=result.job_id, consumed=result.consumed
        )
        # The job may have settled before its id was stored here; settling twice is harmless.
        return flow_node_settle(node_run_id)
    return _node_finish(node_run_id, NodeStatus.DONE, output=result.output, consumed=result.consumed)


def flow_node_settle(node_run_id: int) -> str:
    """Finish a generation node from its job, if the job has settled; else leave it waiting."""
    node = FlowNodeRun.objects.select_related("run").filter(pk=node_run_id).first()
    if node is None or node.status != NodeStatus.RUNNING:
        return "not_waiting"
    job = GenerationJob.objects.filter(workspace_id=node.run.workspace_id, idempotency_key=node.job_key).first()
    if job is None or not job.is_terminal:
        return "waiting"
    if job.status != JobStatus.SUCCEEDED:
        return _node_finish(node_run_id, NodeStatus.FAILED, error=job.error or {"code": "generation_failed"})
    version = job.artifact_version
    output = {"artifact": job.artifact_id, "version": version.number, "job": job.pk, "text": job.prompt}
    return _node_finish(node_run_id, NodeStatus.DONE, output=output)  # what it consumed was stored at submission


def _node_finish(
    node_run_id: int,
    status: str,
    *,
    output: dict[str, Any] | None = None,
    consumed: dict[str, int] | None = None,
    error: dict[str, Any] | None = None,
) -> str:
    with transaction.atomic():
        node = FlowNodeRun.objects.select_related("run").get(pk=node_run_id)
        _lock_workspace(node.run.workspace_id)
        run = _lock_run(node.run_id)
        now = timezone.now()
        fields = {"status": status, "output": output, "error": error, "finished_at": now, "updated_at": now}
        if consumed is not None:
            fields["consumed"] = consumed
        if not FlowNodeRun.objects.filter(pk=node_run_id, status__in=node_sources(status)).update(**fields):
            return "already_settled"
        node.refresh_from_db()
        _node_event(run, node)
        _closed_without_job(run, node)
        _schedule(run)
    return status


def flow_nodes_revive(now: datetime | None = None) -> list[int]:
    """Hand out again the q-jobs of nodes nothing is running (module docstring). Returns the node runs revived.
    Safe anywhere and any number of times: a node is claimed and settled with conditional updates."""
    now = now or timezone.now()
    live = FlowNodeRun.objects.filter(run__status=FlowRunStatus.RUNNING)
    queued = live.filter(
        status=NodeStatus.PENDING,
        enqueued_at__lt=now - timedelta(seconds=settings.LOMOTE_QUEUE_STALE_SECONDS),
    )
    abandoned = live.filter(
        status=NodeStatus.RUNNING,
        job_id__isnull=True,
        started_at__lt=now - timedelta(seconds=settings.LOMOTE_TASK_TIMEOUTS["default"]),
    )
    settled = live.filter(status=NodeStatus.RUNNING, job_id__isnull=False).filter(
        job_id__in=GenerationJob.objects.filter(status__in=TERMINAL_JOB_STATUSES).values("pk")
    )
    owed: dict[str, tuple[str, int]] = {}
    for function, nodes in (("flow_node_work", queued | abandoned), ("flow_node_settle", settled)):
        for node_run_id in nodes.order_by("pk").values_list("pk", flat=True)[:REVIVE_BATCH]:
            owed[_message_name(function, node_run_id)] = (function, node_run_id)
    revived = messages_revive({name: partial(_enqueue, *job) for name, job in owed.items()})
    return sorted({owed[name][1] for name in revived})


def on_job_settled(*, idempotency_key: str | None, workspace_id: int, **_: Any) -> None:
    """JOB_SETTLED (workspace/domain_events.py): a Flow node's job finished. Only enqueue here — this runs
    inside the job's transaction, holding its locks; the node is settled by its own q-job after commit."""
    if not idempotency_key or not idempotency_key.startswith(FLOW_JOB_KEY_PREFIX):
        return
    try:
        run_id, rest = idempotency_key[len(FLOW_JOB_KEY_PREFIX) :].split(":", 1)
        node_id, attempt = rest.rsplit(":", 1)
        node_run_id = FlowNodeRun.objects.filter(
            run_id=int(run_id), run__workspace_id=workspace_id, node_id=node_id, attempt=int(attempt)
        ).values_list("pk", flat=True)[0]
    except (ValueError, IndexError):
        return
    _enqueue_on_commit("flow_node_settle", node_run_id)


def flow_run_get_nodes(run: FlowRun) -> list[FlowNodeRun]:
    return list(run.nodes.order_by("pk"))


__all__ = [
    "NotFound",
    "flow_node_keys_to_submit",
    "flow_node_retry",
    "flow_node_settle",
    "flow_node_work",
    "flow_nodes_revive",
    "flow_run_begin",
    "flow_run_cancel",
    "flow_run_create",
    "flow_run_paid_nodes",
    "flow_run_rerun_stale",
    "on_job_settled",
]
