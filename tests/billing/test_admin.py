"""Billing in the admin: every page loads; money records are read-only; only the policy is editable."""

import pytest
from django.urls import reverse

from billing.models import Approval, LedgerEntry, Order, Quote, SpendPolicy, Wallet
from billing.services.approvals import approval_grant
from billing.services.quotes import quote_create

pytestmark = pytest.mark.django_db

READ_ONLY = [Wallet, LedgerEntry, Order, Quote, Approval]


@pytest.fixture
def admin_client(client, django_user_model):
    client.force_login(django_user_model.objects.create_superuser("root", "root@example.com", "pw-root"))
    return client


@pytest.fixture
def rows(workspace, bob, access_of, fund, set_policy, place):
    fund(500)
    set_policy(threshold=50)
    quote = quote_create(workspace_id=workspace.pk, operation="image.generate", params={}, task_id=7)
    approval_grant(access=access_of(bob), quote_id=quote.pk)
    place("11:0:0", quote_id=quote.pk)


def _url(model, action: str, *args) -> str:
    return reverse(f"admin:billing_{model._meta.model_name}_{action}", args=args)


@pytest.mark.parametrize("model", [*READ_ONLY, SpendPolicy], ids=lambda m: m.__name__)
def test_it_shows_every_billing_model(admin_client, rows, model):
    # when an operator opens the list and one row
    listing = admin_client.get(_url(model, "changelist"))
    detail = admin_client.get(_url(model, "change", model.objects.first().pk))

    # then both pages load
    assert listing.status_code == 200
    assert detail.status_code == 200


@pytest.mark.parametrize("model", READ_ONLY, ids=lambda m: m.__name__)
def test_it_never_lets_an_operator_add_change_or_delete_money_records(admin_client, rows, model):
    # given a row and what it holds
    row = model.objects.first()

    # when an operator tries to add, change and delete through the admin
    add = admin_client.get(_url(model, "add"))
    change = admin_client.post(_url(model, "change", row.pk), {})
    delete = admin_client.post(_url(model, "delete", row.pk), {"post": "yes"})

    # then all three are refused, and the row is as it was
    assert add.status_code == 403
    assert change.status_code == 403
    assert delete.status_code == 403
    assert model.objects.filter(pk=row.pk).exists()


def test_it_lets_an_operator_edit_the_spend_policy(admin_client, rows, workspace):
    policy = SpendPolicy.objects.get(workspace=workspace)
    response = admin_client.post(
        _url(SpendPolicy, "change", policy.pk),
        {"workspace": workspace.pk, "no_confirm_threshold": 70, "daily_no_confirm_cap": 700},
    )
    assert response.status_code == 302, response.content[:500]
    policy.refresh_from_db()
    assert (policy.no_confirm_threshold, policy.daily_no_confirm_cap) == (70, 700)
