"""Flow nodes whose q-job a killed process took or lost are handed out again by the watchdog (issue 18: a worker
SIGKILLed during the short film's re-run left its node waiting for the broker's 12-minute retry)."""

from datetime import timedelta

import pytest
from django.utils import timezone
from django_q.brokers import get_broker
from django_q.models import OrmQ

from workspace.flows import runner
from workspace.flows.authoring import flow_create
from workspace.models import FlowNodeRun, FlowRunStatus, NodeStatus

pytestmark = pytest.mark.django_db

ECHO = {
    "nodes": {"brief": {"type": "text_input"}, "end": {"type": "finish"}},
    "edges": [["brief", "end"]],
    "start": "brief",
}


def later(seconds: float):
    return timezone.now() + timedelta(seconds=seconds)


@pytest.fixture
def started(workspace, django_capture_on_commit_callbacks):
    """A run begun: its start node pending with its message in the real broker."""
    flow = flow_create(workspace_id=workspace.pk, title="Echo", graph=ECHO)
    OrmQ.objects.all().delete()  # the Flow's search vectors, queued with its save: not what these tests follow
    run, _ = runner.flow_run_create(workspace_id=workspace.pk, artifact_id=flow.pk, inputs={"text": "hi"})
    with django_capture_on_commit_callbacks(execute=True):
        runner.flow_run_begin(run.pk)
    assert OrmQ.objects.count() == 1
    return run


def names() -> list[str]:
    return sorted(m.task["name"] for m in OrmQ.objects.filter(lock__lte=timezone.now()))


def test_a_node_message_a_dead_worker_took_is_handed_out_again(started, settings):
    node = FlowNodeRun.objects.get(run=started, node_id="brief")
    assert get_broker().dequeue()  # taken by a worker that is then killed
    assert runner.flow_nodes_revive(now=later(1)) == []  # not stale yet: maybe a worker is about to claim it

    revived = runner.flow_nodes_revive(now=later(settings.LOMOTE_QUEUE_STALE_SECONDS + 1))

    assert revived == [node.pk] and names() == [f"flow_node_work-{node.pk}"] and OrmQ.objects.count() == 1
    # and the next worker runs it, and the run goes on to its end
    assert runner.flow_node_work(node.pk) == NodeStatus.DONE


def test_a_waiting_node_message_gets_no_copy_and_a_lost_one_is_queued_again(started, settings):
    stale = later(settings.LOMOTE_QUEUE_STALE_SECONDS + 1)
    assert runner.flow_nodes_revive(now=stale) == [] and OrmQ.objects.count() == 1  # still waiting its turn

    OrmQ.objects.all().delete()  # dropped
    node = FlowNodeRun.objects.get(run=started, node_id="brief")
    assert runner.flow_nodes_revive(now=stale) == [node.pk] and OrmQ.objects.count() == 1


def test_a_node_left_running_by_a_dead_worker_runs_again_once_its_worker_must_be_gone(started, settings):
    # given a node a worker claimed, then died running (its message hidden, the node `running`)
    node = FlowNodeRun.objects.get(run=started, node_id="brief")
    assert get_broker().dequeue()
    assert runner._claim(node.pk)
    timeout = settings.LOMOTE_TASK_TIMEOUTS["default"]

    # then it is left alone while that worker may still be running it, and handed out again after the q timeout
    assert runner.flow_nodes_revive(now=later(timeout - 5)) == []
    assert runner.flow_nodes_revive(now=later(timeout + 5)) == [node.pk]
    FlowNodeRun.objects.filter(pk=node.pk).update(started_at=later(-timeout - 5))  # as the clock would say then
    assert runner.flow_node_work(node.pk) == NodeStatus.DONE


def test_nothing_is_revived_for_a_run_that_ended(started, settings):
    started.status = FlowRunStatus.FAILED
    started.save(update_fields=["status"])
    OrmQ.objects.all().delete()
    assert runner.flow_nodes_revive(now=later(settings.LOMOTE_QUEUE_STALE_SECONDS + 1)) == []
