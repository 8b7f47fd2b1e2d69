"""JOB_SETTLED (`generation.job_settled`) settles the job's order: capture on success, release on failure — once.

The workspace app publishes the event inside the job's transition; billing reacts in that transaction.
"""

import pytest
from django.db import transaction

from billing.models import LedgerEntry, LedgerKind, Order, OrderStatus
from billing.selectors import order_get, wallet_get
from billing.services.wallets import wallet_reconcile
from billing.subscribers import on_flow_node_closed, on_job_settled
from lomote.kernel import domain_events
from tests.billing.helpers import money
from tests.support.race import race
from tests.support.rest import events_of
from workspace.domain_events import FLOW_NODE_CLOSED, JOB_SETTLED, money_held
from workspace.models import GenerationJob, JobStatus
from workspace.services.jobs import job_event_apply
from workspace.services.workspaces import workspace_create

pytestmark = pytest.mark.django_db


def _settled(workspace, status: str, key: str | None = "11:0:0", job_id: int = 5) -> None:
    """Publish as the job transition does: inside its transaction."""
    with transaction.atomic():
        domain_events.publish(JOB_SETTLED, workspace_id=workspace.pk, job_id=job_id, idempotency_key=key, status=status)


def test_it_is_subscribed_once_the_app_is_ready():
    assert on_job_settled in domain_events.subscribers(JOB_SETTLED)
    assert on_flow_node_closed in domain_events.subscribers(FLOW_NODE_CLOSED)


def test_it_answers_the_spend_check_of_a_paid_flow_node_from_the_held_order(workspace, fund, place):
    # given a held order under one job key
    fund(100)
    place("11:0:0")

    # when workspace asks, through its spend-check hook, about that key and about another
    # then money is held for the first only
    assert money_held(workspace.pk, "11:0:0") is True
    assert money_held(workspace.pk, "12:0:0") is False


def test_it_captures_a_succeeded_jobs_order_once(workspace, fund, place):
    # given a held order for the job's call
    fund(100)
    place("11:0:0")

    # when the job's success is published, then published again (a duplicate callback)
    _settled(workspace, "succeeded")
    after_first = money()
    _settled(workspace, "succeeded")

    # then the order is captured once, and the second publish changed nothing
    assert order_get(workspace_id=workspace.pk, idempotency_key="11:0:0").status == OrderStatus.CAPTURED
    assert money() == after_first
    assert LedgerEntry.objects.filter(kind=LedgerKind.CAPTURE).count() == 1
    assert len(events_of(workspace.pk, "billing.capture")) == 1
    wallet = wallet_get(workspace_id=workspace.pk)
    assert (wallet.available, wallet.held) == (60, 0)
    assert wallet_reconcile(workspace.pk).ok


@pytest.mark.parametrize("status", ["failed", "timed_out"])
def test_it_releases_a_failed_or_timed_out_jobs_order_once(workspace, fund, place, status):
    # given a held order for the job's call
    fund(100)
    place("11:0:0")

    # when the job's failure is published twice
    _settled(workspace, status)
    after_first = money()
    _settled(workspace, status)

    # then the credits came back once, with the reason
    assert order_get(workspace_id=workspace.pk, idempotency_key="11:0:0").status == OrderStatus.RELEASED
    assert money() == after_first
    [release] = LedgerEntry.objects.filter(kind=LedgerKind.RELEASE)
    assert release.memo == f"release: job {status}"
    wallet = wallet_get(workspace_id=workspace.pk)
    assert (wallet.available, wallet.held) == (100, 0)


def test_it_keeps_a_capture_when_a_late_failure_arrives(workspace, fund, place):
    # given a job whose success was settled
    fund(100)
    place("11:0:0")
    _settled(workspace, "succeeded")
    before = money()

    # when a failure for the same job is published late
    _settled(workspace, "failed")

    # then the capture stands
    assert money() == before


@pytest.mark.parametrize(
    ("status", "key"),
    [
        pytest.param("succeeded", "free:0:0", id="free-job"),
        pytest.param("succeeded", None, id="no-key"),
        pytest.param("succeeded", "", id="empty-key"),
        pytest.param("running", "11:0:0", id="not-final"),
        pytest.param("exploded", "11:0:0", id="unknown-status"),
    ],
)
def test_it_ignores_jobs_without_an_order_or_not_settled(workspace, fund, place, status, key):
    # given a held order under another key, or this key with a status that settles nothing
    fund(100)
    place("11:0:0")
    before = money()

    # when the event is published
    _settled(workspace, status, key=key)

    # then nothing moved
    assert money() == before


def test_it_settles_nothing_when_the_jobs_transition_rolls_back(workspace, fund, place):
    # given a held order
    fund(100)
    place("11:0:0")
    before = money()

    # when the job transition publishes success and then fails
    with pytest.raises(RuntimeError), transaction.atomic():
        domain_events.publish(
            JOB_SETTLED, workspace_id=workspace.pk, job_id=5, idempotency_key="11:0:0", status="succeeded"
        )
        raise RuntimeError("the job transition failed after publishing")

    # then the capture rolled back with it: it happens once per transition that commits
    assert money() == before
    assert order_get(workspace_id=workspace.pk, idempotency_key="11:0:0").status == OrderStatus.HELD


def test_it_only_settles_the_order_of_the_jobs_workspace(workspace, fund, place, dave):
    # given an order in alice's workspace, and dave's workspace with no orders
    fund(100)
    place("11:0:0")
    other = workspace_create(user=dave, name="Dave's place")
    before = money()

    # when dave's workspace settles a job with the same key
    _settled(other, "succeeded")

    # then alice's order is untouched
    assert money() == before


# --- through the real job transition (workspace.services.jobs) -----------------------------------------


def _job(workspace, key: str = "11:0:0"):
    return GenerationJob.objects.create(
        workspace=workspace,
        kind="image",
        provider="simulated",
        prompt="retro poster",
        status=JobStatus.RUNNING,
        upstream_id=f"up-{key}",
        idempotency_key=key,
        task_id=7,
    )


@pytest.mark.parametrize("status", ["failed", "timed_out"])
def test_it_releases_when_the_job_transition_fails_the_job(workspace, fund, place, status):
    # given a held order and the running job submitted for the same call
    fund(100)
    place("11:0:0")
    job = _job(workspace)

    # when the job's failure is reported, then reported again (a duplicate callback)
    assert job_event_apply(job_id=job.pk, status=status, error={"code": "upstream", "message": "boom"})
    after_first = money()
    assert not job_event_apply(job_id=job.pk, status=status, error={"code": "upstream", "message": "boom"})

    # then the hold was released once, in the transition's transaction
    assert order_get(workspace_id=workspace.pk, idempotency_key="11:0:0").status == OrderStatus.RELEASED
    assert money() == after_first
    assert (wallet_get(workspace_id=workspace.pk).available, wallet_get(workspace_id=workspace.pk).held) == (100, 0)
    assert wallet_reconcile(workspace.pk).ok


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_it_settles_and_places_orders_side_by_side_without_deadlock(workspace, fund, set_policy, place):
    # given ten held orders with running jobs, and a daily cap that is not the point here
    fund(10_000)
    set_policy(cap=100_000)
    jobs = []
    for i in range(10):
        place(f"old:{i}:0")
        jobs.append(_job(workspace, key=f"old:{i}:0"))

    # when the jobs fail while ten new orders are placed, all at once (the transition holds the job and the
    # workspace row before billing takes the wallet; order_place takes the workspace row first too)
    settle = [
        lambda job=job: job_event_apply(job_id=job.pk, status="failed", error={"code": "x", "message": "y"})
        for job in jobs
    ]
    new = [lambda i=i: place(f"new:{i}:0") for i in range(10)]
    results = race(settle + new)

    # then every call finished (no deadlock error), and the ledger reconciles
    assert all(not isinstance(r, Exception) for r in results), [r for r in results if isinstance(r, Exception)]
    assert Order.objects.filter(status=OrderStatus.RELEASED).count() == 10
    assert Order.objects.filter(status=OrderStatus.HELD).count() == 10
    assert wallet_get(workspace_id=workspace.pk).held == 400
    assert wallet_reconcile(workspace.pk).ok
