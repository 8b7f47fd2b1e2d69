"""A Flow's paid nodes take the same spending path as agent tools: quote → policy → order → hold → capture/release.

The run is priced before it starts; within the spend policy it holds and runs, above it (or through an API key)
it waits on a quote card with nothing held and no job; without funds it is refused. Each paid node's job is
keyed (run, node, attempt) like its order, so a completion captures exactly its hold, a failure releases it,
and a retry after a failure is a new attempt that never charges twice.
"""

import pytest
from django.urls import reverse

from agents.models import Card, CardKind, CardStatus
from agents.services.card_actions import card_act
from agents.services.flow_runs import flow_run_request
from billing.models import Order
from billing.services.orders import orders_release_orphaned
from billing.services.policy import spend_policy_update
from billing.services.wallets import wallet_reconcile, wallet_topup
from tests.support.cards import access_of, complete
from tests.support.rest import assert_error, issue_api_key, key_client
from workspace.flows import runner
from workspace.flows.authoring import flow_create
from workspace.models import FlowNodeRun, FlowRun, FlowRunStatus, GenerationJob, NodeStatus
from workspace.providers import registry
from workspace.providers.simulated import SimulatedUpstream
from workspace.services.jobs import job_event_apply

pytestmark = [pytest.mark.django_db(transaction=True)]

TWO_IMAGES = {
    "nodes": {
        "brief": {"type": "text_input"},
        # A node may name any provider: the price is the operation's, whoever renders it.
        "cover": {"type": "generate_image", "params": {"prompt": "Cover: {input}", "provider": "simulated"}},
        "back": {"type": "generate_image", "params": {"prompt": "Back: {input}"}},
        "end": {"type": "finish"},
    },
    "edges": [["brief", "cover"], ["brief", "back"], ["cover", "end"], ["back", "end"]],
    "start": "brief",
}
ROUTED = {
    "nodes": {
        "brief": {"type": "text_input"},
        "route": {"type": "router", "params": {"routes": {"poster": "poster image", "copy": "slogan words"}}},
        "poster": {"type": "generate_image", "params": {"prompt": "Poster: {input}"}},
        "copy": {"type": "generate_text", "params": {"instructions": "Write a slogan"}},
        "end": {"type": "finish"},
    },
    "edges": [["brief", "route"], ["route", "poster"], ["route", "copy"], ["poster", "end"], ["copy", "end"]],
    "start": "brief",
}


@pytest.fixture(autouse=True)
def upstream(settings):
    settings.LOMOTE_DEFAULT_GENERATION_PROVIDER = "simulated"
    with registry.override("simulated", SimulatedUpstream(deliver=lambda headers, body: 200)) as simulated:
        yield simulated


@pytest.fixture
def queue(monkeypatch):
    """Record the runner's enqueues; `drain()` runs them in order, as workers would."""
    sent: list[tuple[str, int]] = []
    monkeypatch.setattr(runner, "_enqueue", lambda function, node_run_id: sent.append((function, node_run_id)))

    def drain():
        while sent:
            function, node_run_id = sent.pop(0)
            getattr(runner, function)(node_run_id)

    return drain


@pytest.fixture
def owner(workspace, alice):
    access = access_of(alice, workspace)
    wallet_topup(access=access, amount=1000)
    return access


def _flow(workspace, graph=TWO_IMAGES):
    return flow_create(workspace_id=workspace.pk, title="Poster pair", graph=graph)


def _runs_url(workspace, flow) -> str:
    return reverse("artifact-flow-runs", kwargs={"workspace_id": workspace.pk, "artifact_id": flow.pk})


def _money(workspace):
    ok, _, actual = wallet_reconcile(workspace.pk)
    assert ok
    return actual["available"], actual["held"]


def _finish_jobs(drain, status="succeeded"):
    for job in GenerationJob.objects.filter(status__in=["submitted", "queued", "running"]).order_by("pk"):
        if status == "succeeded":
            complete(job)
        else:
            job_event_apply(job_id=job.pk, status=status, error={"code": "upstream_error", "message": "boom"})
    drain()


def test_it_holds_every_paid_node_and_runs_within_the_policy_then_captures_each_once(
    workspace, alice, owner, client_for, queue
):
    # given a Flow with two image nodes (40 credits each) and the default policy (threshold 100, cap 500)
    flow = _flow(workspace)

    # when the owner runs it through REST
    response = client_for(alice).post(_runs_url(workspace, flow), {"inputs": {"text": "jazz"}}, format="json")

    # then it started at once: 80 credits held as two orders keyed by (run, node, attempt), no card
    assert response.status_code == 201, response.content
    body = response.json()
    run = FlowRun.objects.get(pk=body["id"])
    assert (body["status"], body["cost"], body["card"]) == ("running", 80, None)
    orders = Order.objects.filter(workspace=workspace).order_by("idempotency_key")
    assert [(o.idempotency_key, o.status, o.amount, o.authorisation) for o in orders] == [
        (f"flow-run:{run.pk}:back:1", "held", 40, "auto"),
        (f"flow-run:{run.pk}:cover:1", "held", 40, "auto"),
    ]
    assert _money(workspace) == (920, 80)
    assert not Card.objects.exists()

    # when the nodes run and their jobs succeed (each job under its node's key)
    queue()
    assert sorted(GenerationJob.objects.values_list("idempotency_key", flat=True)) == [
        o.idempotency_key for o in orders
    ]
    _finish_jobs(queue)

    # then the run is done and each order was captured once
    run.refresh_from_db()
    assert run.status == FlowRunStatus.DONE
    assert sorted(Order.objects.values_list("status", flat=True)) == ["captured", "captured"]
    assert _money(workspace) == (920, 0)


def test_it_waits_on_a_quote_card_for_an_api_key_and_runs_once_a_person_approves(
    workspace, alice, owner, client_for, queue
):
    # given an editor API key and a Flow with two image nodes, within the policy a person would have
    flow = _flow(workspace)
    _, raw = issue_api_key(workspace, name="script")
    script = key_client(raw)

    # when the key starts a run, with an idempotency key
    response = script.post(
        _runs_url(workspace, flow), {"inputs": {"text": "jazz"}}, format="json", HTTP_IDEMPOTENCY_KEY="nightly-1"
    )

    # then 202: the run waits on a quote card for 80 credits; nothing is held and no job exists
    assert response.status_code == 202, response.content
    body = response.json()
    run = FlowRun.objects.get(pk=body["id"])
    assert (run.status, body["cost"]) == (FlowRunStatus.AWAITING_APPROVAL, 80)
    card = Card.objects.get(pk=body["card"]["id"])
    assert (card.kind, card.task_id, card.payload["amount"], card.payload["reasons"]) == (
        CardKind.QUOTE,
        None,
        80,
        ["api_request"],
    )
    assert body["card"]["actions"] == ["approve", "decline"]
    assert not Order.objects.exists() and not GenerationJob.objects.exists()
    queue()
    assert not GenerationJob.objects.exists()

    # when the key tries to approve its own card, then a person approves it
    assert_error(
        script.post(
            reverse("card-actions", kwargs={"workspace_id": workspace.pk, "card_id": card.pk}),
            {"action": "approve"},
            format="json",
        ),
        403,
        "person_required",
    )
    assert not Order.objects.exists()
    card_act(access=owner, card_id=card.pk, action="approve")

    # then both nodes are held against the approved quote, the run runs, and each job is captured once
    assert sorted(Order.objects.values_list("authorisation", "status")) == [("quote", "held"), ("quote", "held")]
    queue()
    assert GenerationJob.objects.count() == 2
    _finish_jobs(queue)
    assert sorted(Order.objects.values_list("status", flat=True)) == ["captured", "captured"]
    assert _money(workspace) == (920, 0)
    run.refresh_from_db()
    assert run.status == FlowRunStatus.DONE

    # when the same request is sent again with the same key
    again = script.post(
        _runs_url(workspace, flow), {"inputs": {"text": "jazz"}}, format="json", HTTP_IDEMPOTENCY_KEY="nightly-1"
    )

    # then it is the same run, and nothing new was created, held or charged
    assert again.status_code == 200 and again.json()["id"] == run.pk
    assert FlowRun.objects.count() == 1 and Order.objects.count() == 2 and GenerationJob.objects.count() == 2
    assert Card.objects.count() == 1
    assert _money(workspace) == (920, 0)


def test_it_refuses_a_run_without_funds_before_any_run_card_or_job_exists(workspace, alice, client_for, queue):
    # given a workspace with 50 credits and a Flow costing 80
    wallet_topup(access=access_of(alice, workspace), amount=50)
    flow = _flow(workspace)

    # when the owner runs it
    response = client_for(alice).post(_runs_url(workspace, flow), {"inputs": {"text": "jazz"}}, format="json")

    # then 402 insufficient_balance, and nothing exists
    error = assert_error(response, 402, "insufficient_balance")
    assert (error["details"]["required"], error["details"]["available"]) == (80, 50)
    assert not FlowRun.objects.exists() and not Card.objects.exists()
    assert not Order.objects.exists() and not GenerationJob.objects.exists()


def test_it_asks_a_person_above_the_threshold_and_declining_cancels_the_run(workspace, owner, queue):
    # given a threshold below the run's price
    spend_policy_update(access=owner, no_confirm_threshold=50)
    flow = _flow(workspace)

    # when the owner starts it
    started = flow_run_request(workspace_id=workspace.pk, artifact_id=flow.pk, inputs={"text": "x"}, started_by=None)

    # then it waits on a card, for the threshold, which it names with the excess
    assert started.card is not None and started.card.payload["reasons"] == ["threshold"]
    amount = started.amount
    assert started.card.payload["limits"]["over_by"] == {"threshold": amount - 50}
    assert started.card.body.endswith(
        f" A person approves it because {amount} credits is {amount - 50} over the 50-credit no-confirmation limit "
        "per operation."
    )

    # when the person declines
    card_act(access=owner, card_id=started.card.pk, action="decline")

    # then the run is cancelled with the reason, its nodes never ran, nothing was held
    run = FlowRun.objects.get(pk=started.run.pk)
    assert (run.status, run.error) == (FlowRunStatus.CANCELLED, {"code": "spending_declined"})
    queue()
    assert set(FlowNodeRun.objects.filter(run=run).values_list("status", flat=True)) == {NodeStatus.SKIPPED}
    assert not Order.objects.exists() and not GenerationJob.objects.exists()
    assert Card.objects.get().status == CardStatus.RESOLVED


def test_it_releases_the_hold_of_a_branch_the_router_skipped(workspace, owner, queue):
    # given a routed Flow whose image branch costs 40, held when the run begins
    flow = _flow(workspace, ROUTED)
    started = flow_run_request(workspace_id=workspace.pk, artifact_id=flow.pk, inputs={"text": "a catchy slogan"})
    assert Order.objects.get().status == "held"

    # when the router picks the text branch
    queue()

    # then the image node was skipped and its hold given back at once
    run = FlowRun.objects.get(pk=started.run.pk)
    assert run.status == FlowRunStatus.DONE
    assert FlowNodeRun.objects.get(run=run, node_id="poster").status == NodeStatus.SKIPPED
    order = Order.objects.get()
    assert order.status == "released"
    assert _money(workspace) == (1000, 0)


def test_it_never_charges_twice_when_a_failed_node_is_retried(workspace, alice, owner, client_for, queue):
    # given a run whose two image jobs were submitted
    flow = _flow(workspace)
    run = flow_run_request(workspace_id=workspace.pk, artifact_id=flow.pk, inputs={"text": "jazz"}).run
    queue()
    cover = GenerationJob.objects.get(idempotency_key=f"flow-run:{run.pk}:cover:1")
    back = GenerationJob.objects.get(idempotency_key=f"flow-run:{run.pk}:back:1")

    # when the cover's job fails and the back's succeeds
    job_event_apply(job_id=cover.pk, status="failed", error={"code": "upstream_error", "message": "boom"})
    complete(back)
    queue()

    # then the run failed at the cover; its hold was released, the back's captured
    run.refresh_from_db()
    assert run.status == FlowRunStatus.FAILED
    assert dict(Order.objects.values_list("idempotency_key", "status")) == {
        f"flow-run:{run.pk}:cover:1": "released",
        f"flow-run:{run.pk}:back:1": "captured",
    }

    # when the person retries the failed node through REST (twice: the second finds the run running)
    url = reverse("flow-node-retry", kwargs={"workspace_id": workspace.pk, "run_id": run.pk, "node_id": "cover"})
    response = client_for(alice).post(url)
    assert response.status_code == 201, response.content
    assert response.json()["cost"] == 40
    assert_error(client_for(alice).post(url), 409, "run_not_settled")
    queue()
    retried = GenerationJob.objects.get(idempotency_key=f"flow-run:{run.pk}:cover:2")
    complete(retried)
    queue()

    # then only the cover ran again, as attempt 2, and each image was charged once: 80 in all
    run.refresh_from_db()
    assert run.status == FlowRunStatus.DONE
    assert FlowNodeRun.objects.get(run=run, node_id="cover").attempt == 2
    assert FlowNodeRun.objects.get(run=run, node_id="back").attempt == 1
    assert GenerationJob.objects.filter(idempotency_key__startswith=f"flow-run:{run.pk}:back").count() == 1
    captured = Order.objects.filter(status="captured")
    assert sum(o.amount for o in captured) == 80 and captured.count() == 2
    assert _money(workspace) == (920, 0)


def test_it_refuses_a_retry_of_a_node_that_did_not_fail(workspace, alice, owner, client_for, queue):
    flow = _flow(workspace)
    run = flow_run_request(workspace_id=workspace.pk, artifact_id=flow.pk, inputs={"text": "jazz"}).run
    queue()
    _finish_jobs(queue)
    url = reverse("flow-node-retry", kwargs={"workspace_id": workspace.pk, "run_id": run.pk, "node_id": "cover"})
    before = list(Order.objects.values_list("pk", "status"))

    assert_error(client_for(alice).post(url), 409, "node_not_failed")
    missing = reverse("flow-node-retry", kwargs={"workspace_id": workspace.pk, "run_id": run.pk, "node_id": "nope"})
    assert_error(client_for(alice).post(missing), 404, "not_found")
    assert list(Order.objects.values_list("pk", "status")) == before


def test_it_fails_a_paid_node_closed_when_nothing_was_held_for_it(workspace, owner, queue):
    # given a run begun by hand, bypassing the spending path
    flow = _flow(workspace)
    from django.db import transaction

    with transaction.atomic():
        run, _ = runner.flow_run_create(workspace_id=workspace.pk, artifact_id=flow.pk, inputs={"text": "x"})
        runner.flow_run_begin(run.pk)

    # when its nodes run
    queue()

    # then no paid generation ran: both image nodes failed for want of a hold
    assert not GenerationJob.objects.exists()
    errors = {n.node_id: (n.error or {}).get("code") for n in FlowNodeRun.objects.filter(run=run)}
    assert errors["cover"] == errors["back"] == "payment_not_held"


def test_it_keeps_the_holds_of_nodes_still_to_run_out_of_the_orphan_sweep(workspace, owner, settings):
    from datetime import timedelta

    from django.utils import timezone

    # given a run whose holds are older than the orphan timeout, its nodes not yet run (no enqueue happened)
    flow = _flow(workspace)
    flow_run_request(workspace_id=workspace.pk, artifact_id=flow.pk, inputs={"text": "x"})
    later = timezone.now() + timedelta(seconds=settings.LOMOTE_ORPHAN_HOLD_SECONDS + 1)

    # when the orphan sweep runs
    released = orders_release_orphaned(now=later)

    # then the holds stay: those nodes will still submit their jobs
    assert released == []
    assert set(Order.objects.values_list("status", flat=True)) == {"held"}


def test_it_suspends_a_task_whose_run_flow_needs_approval_and_the_approval_starts_the_run(
    workspace, owner, task, tools, script, queue
):
    from agents.runtime.loop import turn_run
    from tests.agents.conftest import says
    from tests.support.cards import queued_turn

    # given every order needs a person's approval, and a model that runs a Flow with two image nodes
    spend_policy_update(access=owner, no_confirm_threshold=0)
    flow = _flow(workspace)
    script([says("Running the poster Flow.", ("run_flow", {"artifact_id": flow.pk, "inputs": {"text": "jazz"}}))])

    # when the task's turn calls run_flow
    assert turn_run(turn_id=tools.start_turn(task).pk, generation=1) == "suspended"

    # then the task waits on the run's quote card; the run waits too, nothing held, no job
    task.refresh_from_db()
    card = Card.objects.get(task=task, status=CardStatus.OPEN)
    assert (task.waiting_for["type"], task.waiting_for["card"]) == ("approval", card.pk)
    assert (card.payload["source"], card.payload["amount"]) == ("flow_run", 80)
    run = FlowRun.objects.get()
    assert (run.status, run.started_by_task_id) == (FlowRunStatus.AWAITING_APPROVAL, task.pk)
    assert not Order.objects.exists()

    # when the person approves
    card_act(access=owner, card_id=card.pk, action="approve")

    # then the nodes are held for the task, the run runs, and the task woke by itself
    assert set(Order.objects.values_list("task_id", "status")) == {(task.pk, "held")}
    assert FlowRun.objects.get().status == FlowRunStatus.RUNNING
    assert queued_turn(task).trigger == "approved"
    queue()
    assert GenerationJob.objects.filter(task_id=task.pk).count() == 2
