"""Running a Flow node by node as django-q jobs (seed 002: request → job → engine → node executors).

    flow_run_start(*, workspace_id, artifact_id, inputs, started_by=None, started_by_task_id=None) -> FlowRun
        Freezes the Flow's current version into a run with one FlowNodeRun per node (all `pending`) and
        enqueues the start node after commit.
    flow_node_work(node_run_id)   the q-job of one node: claim it (pending → running), run its type
                                  outside any transaction, record the output (→ done) or error (→ failed),
                                  then schedule what became ready.
    flow_node_settle(node_run_id) a generation node's job settled: record its artifact (or failure).
    flow_run_stale(run)           see workspace/flows/stale.py.

Scheduling (a production DAG, seed §10.3): a node is ready once every predecessor is terminal and at
least one edge into it is active — its source is done and, for a router, chose it. A node with no active
edge (a branch the router did not take) or with a failed predecessor is `skipped`. Each ready node is its
own q-job, so independent branches run in parallel on as many workers as there are. Every status change
appends a `flow.node` event; the run ends `done` when a finish node is done, else `failed`.

Locks, in this order: the workspace row (event log), the run, its node rows. Delivery is at least once: a
node is claimed with a conditional update, so a second delivery of the same job does nothing; a node left
`running` by a worker that died is claimed again after LOMOTE_TASK_TIMEOUTS["default"].
"""

import logging
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from lomote.exceptions import DomainError, InvalidInput, NotFound
from workspace.flows.graph import graph_check, graph_load, predecessors, successors, topological_order
from workspace.flows.nodes import NodeContext, node_type_get
from workspace.flows.stale import flow_run_stale  # noqa: F401 - part of this module's contract
from workspace.locks import workspace_qs_for_update
from workspace.models import (
    ArtifactKind,
    FlowNodeRun,
    FlowRun,
    FlowRunStatus,
    GenerationJob,
    JobStatus,
    NodeStatus,
)
from workspace.selectors import artifact_version_get
from workspace.services.events import event_append

logger = logging.getLogger(__name__)

JOB_KEY_PREFIX = "flow-run:"
MAX_INPUT_BYTES = 20_000
DONE_LIKE = (NodeStatus.DONE, NodeStatus.STALE)


def _enqueue(function: str, node_run_id: int) -> None:
    from django_q.tasks import async_task

    async_task(
        f"workspace.tasks.{function}",
        node_run_id,
        group="flow",
        timeout=settings.LOMOTE_TASK_TIMEOUTS["default"],
        task_name=f"{function}-{node_run_id}",
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
    event_append(workspace_id=run.workspace_id, kind="flow.node", data=data)


def _lock_workspace(workspace_id: int) -> None:
    list(workspace_qs_for_update().filter(pk=workspace_id).values_list("pk", flat=True))


def _lock_run(run_id: int) -> FlowRun:
    return FlowRun.objects.select_for_update(of=("self",)).get(pk=run_id)


@transaction.atomic
def flow_run_start(
    *,
    workspace_id: int,
    artifact_id: int,
    inputs: dict[str, Any] | None = None,
    started_by=None,
    started_by_task_id: int | None = None,
) -> FlowRun:
    """Start a run of the Flow's current version (module docstring)."""
    import json

    inputs = dict(inputs or {})
    if len(json.dumps(inputs, default=str)) > MAX_INPUT_BYTES:
        raise InvalidInput(
            f"Inputs are limited to {MAX_INPUT_BYTES} bytes of JSON.", details={"fields": {"inputs": []}}
        )
    version = artifact_version_get(workspace_id=workspace_id, artifact_id=artifact_id)
    if version.artifact.kind != ArtifactKind.FLOW:
        raise InvalidInput(f"Artifact {artifact_id} is a {version.artifact.kind}, not a Flow.", code="not_a_flow")
    graph = graph_check(graph_load(version.content), runnable=True)
    _lock_workspace(workspace_id)
    run = FlowRun.objects.create(
        workspace_id=workspace_id,
        artifact_id=artifact_id,
        flow_version=version.number,
        graph=graph,
        inputs=inputs,
        started_by=started_by,
        started_by_task_id=started_by_task_id,
    )
    FlowNodeRun.objects.bulk_create(
        FlowNodeRun(run=run, node_id=node_id, type=graph["nodes"][node_id]["type"])
        for node_id in topological_order(graph)
    )
    event_append(
        workspace_id=workspace_id,
        kind="flow.run",
        data={"run": run.pk, "artifact": artifact_id, "version": version.number, "status": run.status},
    )
    _schedule(_lock_run(run.pk))
    return run


def _schedule(run: FlowRun) -> None:
    """Enqueue the nodes that became ready, skip the unreachable ones, end the run when all are settled.
    Caller holds the workspace row and the run lock."""
    if run.status != FlowRunStatus.RUNNING:
        return
    graph = run.graph
    while True:
        nodes = {n.node_id: n for n in run.nodes.select_for_update(of=("self",)).order_by("pk")}
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
                node.status = NodeStatus.SKIPPED
                node.error = {"code": "upstream_failed", "nodes": failed} if failed else None
                node.finished_at = timezone.now()
                node.save(update_fields=["status", "error", "finished_at", "updated_at"])
                _node_event(run, node)
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
        event_append(
            workspace_id=run.workspace_id,
            kind="flow.run",
            data={"run": run.pk, "artifact": run.artifact_id, "version": run.flow_version, "status": run.status},
        )


def _claim(node_run_id: int) -> bool:
    now = timezone.now()
    abandoned = now - timedelta(seconds=settings.LOMOTE_TASK_TIMEOUTS["default"])
    with transaction.atomic():
        node = FlowNodeRun.objects.select_related("run").filter(pk=node_run_id).first()
        if node is None:
            return False
        _lock_workspace(node.run.workspace_id)
        claimed = (
            FlowNodeRun.objects.filter(pk=node_run_id, enqueued_at__isnull=False, job_id__isnull=True)
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
    )
    try:
        result = node_type_get(node.type).run(ctx)
    except DomainError as exc:
        return _node_finish(node_run_id, NodeStatus.FAILED, error={"code": exc.code, "message": exc.message[:500]})
    except Exception:  # noqa: BLE001 - the node must end; details stay in our log
        logger.exception("flow run %s node %s failed", run.pk, node.node_id)
        return _node_finish(
            node_run_id, NodeStatus.FAILED, error={"code": "node_failed", "message": "The node failed."}
        )
    if result.job_id is not None:
        FlowNodeRun.objects.filter(pk=node_run_id, status=NodeStatus.RUNNING).update(job_id=result.job_id)
        # The job may have settled before its id was stored here; settling twice is harmless.
        return flow_node_settle(node_run_id)
    return _node_finish(node_run_id, NodeStatus.DONE, output=result.output, consumed=result.consumed)


def flow_node_settle(node_run_id: int) -> str:
    """Finish a generation node from its job, if the job has settled; else leave it waiting."""
    node = FlowNodeRun.objects.select_related("run").filter(pk=node_run_id).first()
    if node is None or node.status != NodeStatus.RUNNING:
        return "not_waiting"
    job = GenerationJob.objects.filter(
        workspace_id=node.run.workspace_id, idempotency_key=f"{JOB_KEY_PREFIX}{node.run_id}:{node.node_id}"
    ).first()
    if job is None or not job.is_terminal:
        return "waiting"
    if job.status != JobStatus.SUCCEEDED:
        return _node_finish(node_run_id, NodeStatus.FAILED, error=job.error or {"code": "generation_failed"})
    version = job.artifact_version
    output = {"artifact": job.artifact_id, "version": version.number, "job": job.pk, "text": job.prompt}
    return _node_finish(node_run_id, NodeStatus.DONE, output=output, consumed={})


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
        if not FlowNodeRun.objects.filter(pk=node_run_id, status=NodeStatus.RUNNING).update(**fields):
            return "already_settled"
        node.refresh_from_db()
        _node_event(run, node)
        _schedule(run)
    return status


def on_job_settled(*, idempotency_key: str | None, workspace_id: int, **_: Any) -> None:
    """generation.job_settled: a Flow node's job finished. Only enqueue here — this runs inside the job's
    transaction, holding its locks; the node is settled by its own q-job after commit."""
    if not idempotency_key or not idempotency_key.startswith(JOB_KEY_PREFIX):
        return
    try:
        run_id, node_id = idempotency_key[len(JOB_KEY_PREFIX) :].split(":", 1)
        node_run_id = FlowNodeRun.objects.filter(
            run_id=int(run_id), run__workspace_id=workspace_id, node_id=node_id
        ).values_list("pk", flat=True)[0]
    except (ValueError, IndexError):
        return
    _enqueue_on_commit("flow_node_settle", node_run_id)


def flow_run_get_nodes(run: FlowRun) -> list[FlowNodeRun]:
    return list(run.nodes.order_by("pk"))


__all__ = ["NotFound", "flow_node_settle", "flow_node_work", "flow_run_stale", "flow_run_start", "on_job_settled"]
