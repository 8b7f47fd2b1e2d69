"""Re-running the stale part of a Flow run (issue 18, the short film): a person changes one shot, only what was
made from it is marked stale, and a re-run makes new versions of exactly those outputs — through the same
spending path, one new charge per re-run paid node, no copies beside the old artifacts."""

# ruff: noqa: F811 - the Flow billing suite's fixtures are imported by name and used as arguments

import io

import pytest
from django.core.files.base import ContentFile
from django.db import transaction
from django.urls import reverse
from PIL import Image

from agents.services.flow_runs import flow_run_request
from billing.models import Order
from billing.services.policy import spend_policy_update
from tests.agents.test_flow_billing import _finish_jobs, _money, owner, queue, upstream  # noqa: F401 - fixtures
from tests.support.rest import assert_error
from workspace.flows.authoring import flow_create
from workspace.models import Artifact, FlowNodeRun, FlowRun, FlowRunStatus, GenerationJob, NodeStatus
from workspace.services.uploads import artifact_version_upload

pytestmark = [pytest.mark.django_db(transaction=True)]

FILM = {
    "nodes": {
        "storyboard": {"type": "text_input"},
        "shot1": {"type": "generate_image", "params": {"prompt": "Shot 1, the harbour: {input}"}},
        "shot2": {"type": "generate_image", "params": {"prompt": "Shot 2, the lighthouse: {input}"}},
        "clip1": {"type": "generate_video", "params": {"prompt": "Animate: {input}"}},
        "clip2": {"type": "generate_video", "params": {"prompt": "Animate: {input}"}},
        "cut": {"type": "finish"},
    },
    "edges": [
        ["storyboard", "shot1"],
        ["storyboard", "shot2"],
        ["shot1", "clip1"],
        ["shot2", "clip2"],
        ["clip1", "cut"],
        ["clip2", "cut"],
    ],
    "start": "storyboard",
}


def _rerun_url(workspace, run) -> str:
    return reverse("flow-run-rerun-stale", kwargs={"workspace_id": workspace.pk, "run_id": run.pk})


def _output(run, node_id) -> dict:
    return FlowNodeRun.objects.get(run=run, node_id=node_id).output


def _statuses(run) -> dict[str, str]:
    return dict(run.nodes.values_list("node_id", "status"))


@pytest.fixture
def film(workspace, owner, queue):
    spend_policy_update(access=owner, no_confirm_threshold=500)  # the whole film runs without a card
    flow = flow_create(workspace_id=workspace.pk, title="Lighthouse short", graph=FILM)
    run = flow_run_request(workspace_id=workspace.pk, artifact_id=flow.pk, inputs={"text": "a stormy night"}).run
    queue()
    _finish_jobs(queue)  # the shots
    _finish_jobs(queue)  # the clips
    run.refresh_from_db()
    assert run.status == FlowRunStatus.DONE
    return run


def _png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (32, 48), (200, 90, 40)).save(buffer, "PNG")
    return buffer.getvalue()


def _person_redraws(workspace, alice, run, node_id) -> None:
    artifact = Artifact.objects.get(pk=_output(run, node_id)["artifact"])
    with transaction.atomic():
        artifact_version_upload(
            workspace_id=workspace.pk,
            artifact_id=artifact.pk,
            base_version=artifact.current_version,
            file=ContentFile(_png(), "redrawn.png"),
            author_user=alice,
        )


def test_it_marks_only_the_outputs_made_from_the_changed_shot_and_reruns_them_as_new_versions(
    workspace,
    alice,
    client_for,
    queue,
    film,
):
    # given a finished film: two shots, a clip made from each, 4 paid nodes captured once each
    artifacts_before = Artifact.objects.filter(workspace=workspace).count()
    clip1, clip2 = _output(film, "clip1"), _output(film, "clip2")
    assert FlowNodeRun.objects.get(run=film, node_id="clip2").consumed == {str(_output(film, "shot2")["artifact"]): 1}

    # when the person draws a new version of shot 2
    _person_redraws(workspace, alice, film, "shot2")

    # then only clip 2 and the cut are stale: shot 1, clip 1 and shot 2 itself are current
    assert _statuses(film) == {
        "storyboard": "done",
        "shot1": "done",
        "shot2": "done",
        "clip1": "done",
        "clip2": "stale",
        "cut": "stale",
    }

    # when the person re-runs the stale part over REST
    response = client_for(alice).post(_rerun_url(workspace, film))

    # then it runs at once within the policy, holding one new order: clip 2's second attempt
    assert response.status_code == 201, response.content
    new_orders = Order.objects.filter(workspace=workspace, idempotency_key__endswith=":2")
    assert list(new_orders.values_list("idempotency_key", "status")) == [(f"flow-run:{film.pk}:clip2:2", "held")]
    queue()
    _finish_jobs(queue)

    # and clip 2's artifact got version 2 (built on version 1), with no copy beside it; clip 1 was not touched
    film.refresh_from_db()
    assert film.status == FlowRunStatus.DONE and set(_statuses(film).values()) == {"done"}
    rerun_job = GenerationJob.objects.get(idempotency_key=f"flow-run:{film.pk}:clip2:2")
    assert (rerun_job.artifact_id, rerun_job.base_version) == (clip2["artifact"], 1)
    assert _output(film, "clip2") == {**clip2, "version": 2, "job": rerun_job.pk}
    assert _output(film, "clip1") == clip1
    assert Artifact.objects.filter(workspace=workspace).count() == artifacts_before
    assert Artifact.objects.get(pk=clip1["artifact"]).current_version == 1
    assert GenerationJob.objects.count() == 5  # 4 in the first run, 1 re-run
    assert sorted(Order.objects.values_list("status", flat=True)) == ["captured"] * 5
    assert film.outputs["artifacts"] == [
        {"artifact": clip1["artifact"], "version": 1},
        {"artifact": clip2["artifact"], "version": 2},
    ]
    assert FlowNodeRun.objects.get(run=film, node_id="clip2").consumed == {str(_output(film, "shot2")["artifact"]): 2}


def test_it_refuses_a_rerun_with_nothing_stale_or_while_running_or_elsewhere(
    workspace,
    alice,
    dave,
    client_for,
    queue,
    film,
):
    # nothing changed: nothing to re-run, and nothing happens
    assert_error(client_for(alice).post(_rerun_url(workspace, film)), 409, "nothing_stale")
    assert Order.objects.count() == 4

    # another workspace's member cannot see the run
    response = client_for(dave).post(_rerun_url(workspace, film))
    assert response.status_code in (403, 404)

    # once re-run and still running, a second re-run waits for it to end
    _person_redraws(workspace, alice, film, "shot1")
    assert client_for(alice).post(_rerun_url(workspace, film)).status_code == 201
    assert_error(client_for(alice).post(_rerun_url(workspace, film)), 409, "run_not_settled")
    assert FlowRun.objects.get(pk=film.pk).status == FlowRunStatus.RUNNING
    assert FlowNodeRun.objects.filter(run=film, status=NodeStatus.PENDING).count() == 2
