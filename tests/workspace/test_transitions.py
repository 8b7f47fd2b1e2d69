"""The Flow node move table (workspace/transitions.py): every listed move passes, every other pair of statuses is
refused, and the runner's compare-and-set updates read the table."""

import itertools
from datetime import timedelta

import pytest
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from lomote.kernel.exceptions import Conflict
from workspace.flows import runner
from workspace.flows.authoring import flow_create
from workspace.models import FlowNodeRun, NodeStatus
from workspace.transitions import NODE_MOVES, node_move_check, node_sources

N = NodeStatus
ALLOWED = {
    (N.PENDING, N.RUNNING),
    (N.PENDING, N.SKIPPED),
    (N.RUNNING, N.RUNNING),
    (N.RUNNING, N.DONE),
    (N.RUNNING, N.FAILED),
    (N.DONE, N.STALE),
    (N.FAILED, N.PENDING),
    (N.SKIPPED, N.PENDING),
    (N.STALE, N.PENDING),  # re-run on its new inputs
}
ECHO = {
    "nodes": {"brief": {"type": "text_input"}, "end": {"type": "finish"}},
    "edges": [["brief", "end"]],
    "start": "brief",
}


@pytest.mark.parametrize(("frm", "to"), list(itertools.product(N.values, repeat=2)))
def test_it_lets_a_flow_node_make_exactly_the_listed_moves(frm, to):
    allowed = (frm, to) in ALLOWED
    assert (to in NODE_MOVES[frm]) is allowed
    assert (frm in node_sources(to)) is allowed
    if allowed:
        node_move_check(frm, to)
    else:
        with pytest.raises(Conflict) as refused:
            node_move_check(frm, to)
        assert (refused.value.code, refused.value.details) == ("node_state", {"status": frm, "requested": to})


@pytest.fixture
def abandoned(workspace, alice, monkeypatch):
    """A begun run whose start node was claimed by a worker that died long ago."""
    monkeypatch.setattr(runner, "_enqueue", lambda function, node_id: None)
    flow = flow_create(workspace_id=workspace.pk, title="Echo", graph=ECHO, author_user=alice)
    with transaction.atomic():
        run, _ = runner.flow_run_create(workspace_id=workspace.pk, artifact_id=flow.pk, inputs={"text": "hello"})
        runner.flow_run_begin(run.pk)
    long_ago = timezone.now() - timedelta(seconds=settings.LOMOTE_TASK_TIMEOUTS["default"] + 60)
    node = FlowNodeRun.objects.get(run=run, node_id="brief")
    FlowNodeRun.objects.filter(pk=node.pk).update(status=N.RUNNING, started_at=long_ago)
    return node


@pytest.mark.django_db
def test_it_claims_an_abandoned_node_again_only_while_the_table_lists_running_to_running(abandoned, monkeypatch):
    # when a second delivery comes while the table has no running → running
    with monkeypatch.context() as patched:
        patched.setitem(NODE_MOVES, N.RUNNING, frozenset({N.DONE, N.FAILED}))
        refused = runner.flow_node_work(abandoned.pk)
    # then it does not claim the node
    assert refused == "claimed"
    assert FlowNodeRun.objects.get(pk=abandoned.pk).status == N.RUNNING
    # and with the table as it is, it claims the node and runs it
    assert runner.flow_node_work(abandoned.pk) == N.DONE
    assert FlowNodeRun.objects.get(pk=abandoned.pk).status == N.DONE
