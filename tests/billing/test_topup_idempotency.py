"""Idempotency-Key on wallet top-ups (issue 31): a retried top-up credits the wallet once (PostgreSQL, separate
connections for the parallel case)."""

import pytest
from django.urls import reverse

from billing.models import LedgerEntry, LedgerKind
from billing.selectors import balance_get
from tests.support.openapi import assert_conforms
from tests.support.race import race
from tests.support.rest import assert_error

pytestmark = pytest.mark.postgres


def topup_url(workspace_id: int) -> str:
    return reverse("billing-topup", kwargs={"workspace_id": workspace_id})


def credits(workspace_id: int) -> list[tuple]:
    return list(
        LedgerEntry.objects.filter(wallet__workspace_id=workspace_id, kind=LedgerKind.TOPUP).values_list(
            "pk", "delta_available"
        )
    )


@pytest.mark.django_db(transaction=True)
def test_ten_parallel_top_ups_with_one_key_credit_the_wallet_once(workspace, alice, client_for):
    # when alice's client sends one top-up ten times at once, with one key
    def send():
        return client_for(alice).post(
            topup_url(workspace.pk), {"amount": 500, "memo": "March"}, format="json", HTTP_IDEMPOTENCY_KEY="march"
        )

    responses = race([send for _ in range(10)])

    # then one ledger credit, the balance raised once, and all ten answers the same
    assert not any(isinstance(r, BaseException) for r in responses), responses
    assert {r.status_code for r in responses} == {200}
    bodies = [r.json() for r in responses]
    assert all(body == bodies[0] for body in bodies)
    [(_, amount)] = credits(workspace.pk)
    assert amount == 500
    assert balance_get(workspace_id=workspace.pk)["available"] == bodies[0]["available"] == 500


@pytest.mark.django_db
def test_a_repeated_top_up_answers_the_first_balance_and_another_amount_is_409(workspace, alice, client_for):
    client = client_for(alice)
    first = client.post(topup_url(workspace.pk), {"amount": 500}, format="json", HTTP_IDEMPOTENCY_KEY="t-1")
    assert first.status_code == 200, first.content

    # when it is retried with the same key
    again = client.post(topup_url(workspace.pk), {"amount": 500}, format="json", HTTP_IDEMPOTENCY_KEY="t-1")

    # then the first answer, and no second credit
    assert (again.status_code, again.json(), again["Idempotent-Replayed"]) == (200, first.json(), "true")
    assert len(credits(workspace.pk)) == 1

    # when the key comes with another amount
    other = client.post(topup_url(workspace.pk), {"amount": 900}, format="json", HTTP_IDEMPOTENCY_KEY="t-1")

    # then 409, documented, and still one credit of 500
    assert_error(other, 409, "idempotency_key_reuse")
    assert_conforms(other)
    assert [amount for _, amount in credits(workspace.pk)] == [500]
    # while a new key is a new top-up
    assert (
        client.post(topup_url(workspace.pk), {"amount": 900}, format="json", HTTP_IDEMPOTENCY_KEY="t-2").json()[
            "available"
        ]
        == 1400
    )


@pytest.mark.django_db
def test_a_refused_top_up_keeps_no_key(workspace, alice, client_for, settings):
    # given a top-up above the most one may add at once
    client = client_for(alice)
    too_much = settings.LOMOTE_TOPUP_MAX + 1

    # when it is refused, then sent again corrected under the same key
    refused = client.post(topup_url(workspace.pk), {"amount": too_much}, format="json", HTTP_IDEMPOTENCY_KEY="t-3")
    fixed = client.post(topup_url(workspace.pk), {"amount": 100}, format="json", HTTP_IDEMPOTENCY_KEY="t-3")

    # then the refusal kept nothing, and the corrected top-up went through
    assert refused.status_code == 400
    assert fixed.status_code == 200 and fixed.json()["available"] == 100
