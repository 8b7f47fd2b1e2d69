"""Executable Flows: node by node as jobs, a router picking a branch, stale marking (seed 002; seed §10.3)."""

import json

import pytest
from django.conf import settings
from django.db import transaction

from agents.services.flow_runs import flow_run_request
from billing.models import Order
from billing.services.policy import spend_policy_update
from billing.services.wallets import wallet_topup
from tests.support import qcluster as cluster
from tests.support.realtime import worker_env
from workspace.flows import runner
from workspace.flows.authoring import flow_create
from workspace.flows.stale import flow_run_stale
from workspace.models import ArtifactVersion, Event, FlowNodeRun, FlowRun, FlowRunStatus, GenerationJob, NodeStatus
from workspace.selectors import workspace_access
from workspace.services.artifacts import artifact_create
from workspace.services.documents import document_write
from workspace.tasks import generation_work

ROUTED = {
    "nodes": {
        "brief": {"type": "text_input"},
        "route": {
            "type": "router",
            "params": {"routes": {"poster": "poster image picture", "copy": "slogan text words"}, "default": "copy"},
        },
        "poster": {"type": "generate_image", "params": {"prompt": "Retro poster: {input}"}},
        "copy": {"type": "generate_text", "params": {"instructions": "Write a slogan"}},
        "end": {"type": "finish"},
    },
    "edges": [["brief", "route"], ["route", "poster"], ["route", "copy"], ["poster", "end"], ["copy", "end"]],
    "start": "brief",
}


@pytest.fixture
def queue(monkeypatch):
    """Record the runner's enqueues; `drain()` runs them in order, as workers would (no cluster)."""
    sent: list[tuple[str, int]] = []
    monkeypatch.setattr(runner, "_enqueue", lambda function, node_id: sent.append((function, node_id)))

    def drain(limit: int = 50):
        for _ in range(limit):
            if not sent:
                return
            function, node_id = sent.pop(0)
            getattr(runner, function)(node_id)
        raise AssertionError("the run did not settle")

    return drain


def start(**kwargs):
    """Create and begin a run as the spending path does once its paid nodes are held (none are needed here)."""
    with transaction.atomic():
        run, _ = runner.flow_run_create(**kwargs)
        return runner.flow_run_begin(run.pk)


def _statuses(run) -> dict[str, str]:
    return dict(FlowNodeRun.objects.filter(run=run).values_list("node_id", "status"))


@pytest.mark.django_db(transaction=True)
def test_it_runs_the_router_branch_the_input_asks_for_and_skips_the_other(workspace, alice, queue):
    flow = flow_create(workspace_id=workspace.pk, title="Routed", graph=ROUTED, author_user=alice)

    run = start(workspace_id=workspace.pk, artifact_id=flow.pk, inputs={"text": "a catchy slogan"})
    queue()

    run.refresh_from_db()
    assert run.status == FlowRunStatus.DONE
    assert _statuses(run) == {"brief": "done", "route": "done", "copy": "done", "poster": "skipped", "end": "done"}
    # the copy node's offline writer read "Write a slogan" as asking for a title-like line, written from the input
    copy = FlowNodeRun.objects.get(run=run, node_id="copy").output
    assert (copy["writer"], copy["form"], copy["text"]) == ("offline", "title", "A catchy slogan")
    assert run.outputs["text"] == "A catchy slogan" and run.outputs["notes"] == [copy["note"]]
    kinds = [(e.data["node"], e.data["status"]) for e in Event.objects.filter(workspace=workspace, kind="flow.node")]
    assert ("route", "running") in kinds and ("poster", "skipped") in kinds and kinds[-1] == ("end", "done")


@pytest.mark.django_db(transaction=True)
def test_it_marks_exactly_the_outputs_downstream_of_a_changed_artifact_stale(workspace, alice, bob, queue):
    # given a production DAG: the character sheet feeds shot 1 only; the scene feeds both shots
    character = artifact_create(
        workspace_id=workspace.pk, kind="document", title="Character", content="A fox in a red coat."
    )
    graph = {
        "nodes": {
            "brief": {"type": "text_input"},
            "char": {"type": "artifact_input", "params": {"artifact_id": character.pk}},
            "scene": {"type": "generate_text", "params": {"instructions": "Describe the scene"}},
            "shot1": {"type": "generate_text", "params": {"instructions": "Shot 1"}},
            "shot2": {"type": "generate_text", "params": {"instructions": "Shot 2"}},
            "end": {"type": "finish"},
        },
        "edges": [
            ["brief", "char"],
            ["brief", "scene"],
            ["char", "shot1"],
            ["scene", "shot1"],
            ["scene", "shot2"],
            ["shot1", "end"],
            ["shot2", "end"],
        ],
        "start": "brief",
    }
    flow = flow_create(workspace_id=workspace.pk, title="Short film", graph=graph, author_user=alice)
    run = start(workspace_id=workspace.pk, artifact_id=flow.pk, inputs={"text": "autumn forest"})
    queue()
    assert set(_statuses(run).values()) == {"done"}
    assert FlowNodeRun.objects.get(run=run, node_id="char").consumed == {str(character.pk): 1}

    # when the person changes the character
    document_write(
        workspace_id=workspace.pk,
        artifact_id=character.pk,
        base_version=1,
        content="A fox in a blue coat.",
        author_user=bob,
    )

    # then exactly the character node and what depends on it are stale; the scene and shot 2 stay valid
    assert flow_run_stale(FlowRun.objects.get(pk=run.pk)) == ["char", "end", "shot1"]
    assert _statuses(run) == {
        "brief": "done",
        "char": "stale",
        "scene": "done",
        "shot1": "stale",
        "shot2": "done",
        "end": "stale",
    }
    assert Event.objects.filter(workspace=workspace, kind="flow.stale").get().data["nodes"] == ["char", "end", "shot1"]


@pytest.mark.django_db(transaction=True)
def test_it_runs_a_3d_node_into_a_gltf_artifact_through_the_generation_job(workspace, alice, queue, settings):
    # given a funded workspace whose policy lets a 3D asset (150 credits) run without a card, on the procedural
    # provider, and a Flow with a 3D generation node
    settings.LOMOTE_DEFAULT_GENERATION_PROVIDER = "procedural"
    access = workspace_access(principal=alice, workspace_id=workspace.pk)
    wallet_topup(access=access, amount=200)
    spend_policy_update(access=access, no_confirm_threshold=200)
    graph = {
        "nodes": {
            "brief": {"type": "text_input"},
            "model": {"type": "generate_3d", "params": {"prompt": "A low-poly {input}"}},
            "end": {"type": "finish"},
        },
        "edges": [["brief", "model"], ["model", "end"]],
        "start": "brief",
    }
    flow = flow_create(workspace_id=workspace.pk, title="Props", graph=graph, author_user=alice)

    # when it runs: the node submits its job under its key, a worker renders it, the node settles from it
    with transaction.atomic():
        run = flow_run_request(
            workspace_id=workspace.pk, artifact_id=flow.pk, inputs={"text": "red lighthouse"}, started_by=alice
        ).run
    queue()
    job = GenerationJob.objects.get(workspace=workspace)
    assert (job.kind, job.idempotency_key, job.prompt) == (
        "3d",
        f"flow-run:{run.pk}:model:1",
        "A low-poly red lighthouse",
    )
    assert generation_work(job.pk) == "succeeded"
    queue()

    # then the node's output is a 3D artifact whose version is a valid glTF 2.0 asset, paid for once
    run.refresh_from_db()
    assert run.status == FlowRunStatus.DONE, (run.error, _statuses(run))
    node = FlowNodeRun.objects.get(run=run, node_id="model")
    version = ArtifactVersion.objects.get(artifact_id=node.output["artifact"], number=node.output["version"])
    assert (version.artifact.kind, version.media_type) == ("3d", "model/gltf+json")
    with version.file.open("rb") as stored:
        asset = json.loads(stored.read())
    assert asset["asset"]["version"] == "2.0" and asset["meshes"] and asset["accessors"]
    assert run.outputs["artifacts"] == [{"artifact": node.output["artifact"], "version": version.number}]
    (order,) = Order.objects.filter(workspace=workspace)
    assert (order.idempotency_key, order.status, order.amount) == (job.idempotency_key, "captured", 150)


@pytest.mark.django_db
def test_it_refuses_to_run_a_flow_without_an_input_start_node(workspace, alice):
    from lomote.kernel.exceptions import InvalidInput

    flow = flow_create(
        workspace_id=workspace.pk, title="Broken", graph={"nodes": {"end": {"type": "finish"}}, "edges": []}
    )
    with pytest.raises(InvalidInput):
        runner.flow_run_create(workspace_id=workspace.pk, artifact_id=flow.pk, inputs={})
    assert not FlowRun.objects.exists()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_it_runs_a_routed_flow_to_its_finish_node_through_a_real_qcluster(workspace, alice):
    # given a Flow whose router sends a poster request to an image generation node
    flow = flow_create(workspace_id=workspace.pk, title="Routed", graph=ROUTED, author_user=alice)

    # when a funded person runs it on a real cluster (each node a django-q job; the image through job_submit)
    wallet_topup(access=workspace_access(principal=alice, workspace_id=workspace.pk), amount=100)
    env = worker_env(redis_url=None, Q_WORKERS="2")
    with cluster.running(env) as (process, log):
        run = flow_run_request(
            workspace_id=workspace.pk,
            artifact_id=flow.pk,
            inputs={"text": "a retro poster of a lighthouse"},
            started_by=alice,
        ).run
        cluster.wait_for(
            lambda: FlowRun.objects.get(pk=run.pk).status != FlowRunStatus.RUNNING,
            timeout=90,
            process=process,
            log=log,
            what="the flow run to finish",
        )

    # then it reached its finish node through the poster branch, with a real image artifact
    run.refresh_from_db()
    assert run.status == FlowRunStatus.DONE, (run.error, _statuses(run))
    assert _statuses(run) == {"brief": "done", "route": "done", "poster": "done", "copy": "skipped", "end": "done"}
    poster = FlowNodeRun.objects.get(run=run, node_id="poster")
    assert poster.job_id is not None and poster.output["artifact"]
    assert run.outputs["artifacts"] == [{"artifact": poster.output["artifact"], "version": 1}]
    # and its image was paid for once: held when the run began, captured when the job succeeded
    (order,) = Order.objects.filter(workspace=workspace)
    assert (order.idempotency_key, order.status, order.amount) == (f"flow-run:{run.pk}:poster:1", "captured", 40)
    assert settings.Q_CLUSTER["orm"] == "default"
    assert FlowNodeRun.objects.filter(run=run, status=NodeStatus.RUNNING).count() == 0
