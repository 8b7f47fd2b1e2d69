"""`generation.job_settled` settles the job's order: capture on success, release on failure — once.

The workspace app publishes the event inside the job's transition; billing reacts in that transaction.
"""

import pytest
from django.db import transaction

from billing.models import LedgerEntry, LedgerKind, OrderStatus
from billing.selectors import order_get, wallet_get
from billing.services.wallets import wallet_reconcile
from billing.subscribers import on_job_settled
from lomote import domain_events
from tests.billing.helpers import money
from tests.support.rest import events_of
from workspace.services.workspaces import workspace_create

pytestmark = pytest.mark.django_db


def _settled(workspace, status: str, key: str | None = "11:0:0", job_id: int = 5) -> None:
    """Publish as the job transition does: inside its transaction."""
    with transaction.atomic():
        domain_events.publish(
            "generation.job_settled", workspace_id=workspace.pk, job_id=job_id, idempotency_key=key, status=status
        )


def test_it_is_subscribed_once_the_app_is_ready():
    assert on_job_settled in domain_events.subscribers("generation.job_settled")


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
            "generation.job_settled", workspace_id=workspace.pk, job_id=5, idempotency_key="11:0:0", status="succeeded"
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
