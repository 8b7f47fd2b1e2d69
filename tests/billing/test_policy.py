"""Spend policies: defaults from settings, owners change them, and the daily cap counts what it should."""

from datetime import timedelta

import pytest

from billing.exceptions import ConfirmationRequired
from billing.models import Authorisation, Order, SpendPolicy
from billing.selectors import spend_policy_get, spent_today
from billing.services.approvals import approval_grant
from billing.services.orders import order_release
from billing.services.policy import spend_policy_update
from lomote.kernel.exceptions import InvalidInput, PermissionDenied
from tests.billing.helpers import money
from tests.support.rest import events_of

pytestmark = pytest.mark.django_db


def test_it_uses_the_settings_defaults_until_an_owner_changes_them(workspace, settings):
    # given the settings' defaults and no policy row
    settings.LOMOTE_NO_CONFIRM_THRESHOLD = 30
    settings.LOMOTE_DAILY_NO_CONFIRM_CAP = 90

    # when the policy is read
    policy = spend_policy_get(workspace_id=workspace.pk)

    # then it is the defaults, not saved anywhere
    assert (policy.no_confirm_threshold, policy.daily_no_confirm_cap) == (30, 90)
    assert policy.pk is None and not SpendPolicy.objects.exists()


def test_it_lets_the_owner_change_the_policy_and_records_it(workspace, alice, access_of):
    # when alice lowers the threshold only
    policy = spend_policy_update(access=access_of(alice), no_confirm_threshold=10)

    # then the row exists with her change and the other limit from the defaults, and the log says who did it
    assert (policy.no_confirm_threshold, policy.daily_no_confirm_cap) == (10, 500)
    assert SpendPolicy.objects.get(workspace=workspace).updated_by == alice
    [event] = events_of(workspace.pk, "billing.policy")
    assert event.data["no_confirm_threshold"] == 10 and event.data["before"]["no_confirm_threshold"] == 100
    assert event.data["by"]["username"] == "alice"


def test_it_records_nothing_when_the_policy_does_not_change(workspace, alice, access_of):
    # given the default policy
    before = money()

    # when alice sets the values it already has
    spend_policy_update(access=access_of(alice), no_confirm_threshold=100, daily_no_confirm_cap=500)

    # then nothing was written
    assert money() == before


@pytest.mark.parametrize("who", ["bob", "carol"])
def test_it_refuses_a_policy_change_from_a_non_owner(workspace, request, access_of, who):
    # given an editor or a viewer
    before = money()

    # when they try to raise the threshold
    with pytest.raises(PermissionDenied) as refused:
        spend_policy_update(access=access_of(request.getfixturevalue(who)), no_confirm_threshold=10_000)

    # then 403 role_required and nothing changed
    assert refused.value.code == "role_required"
    assert money() == before


@pytest.mark.parametrize("value", [-1, 10**10, True, 1.5, "5"])
def test_it_refuses_a_bad_limit(workspace, alice, access_of, value):
    before = money()
    with pytest.raises(InvalidInput) as refused:
        spend_policy_update(access=access_of(alice), daily_no_confirm_cap=value)
    assert set(refused.value.details["fields"]) == {"daily_no_confirm_cap"}
    assert money() == before


def test_it_allows_an_order_exactly_at_the_threshold(workspace, fund, set_policy, place):
    # given a threshold of 40
    fund(1000)
    set_policy(threshold=40)

    # when orders of 40 and 41 credits are placed
    at = place("1:0:0", amount=40)
    with pytest.raises(ConfirmationRequired) as above:
        place("2:0:0", amount=41)

    # then the threshold is inclusive
    assert at.authorisation == Authorisation.AUTO
    assert above.value.details["reasons"] == ["threshold"]


def test_it_asks_for_every_order_when_the_threshold_is_zero(workspace, fund, set_policy, place):
    fund(1000)
    set_policy(threshold=0)
    with pytest.raises(ConfirmationRequired) as refused:
        place("1:0:0")
    assert refused.value.details["reasons"] == ["threshold"]


def test_it_counts_only_todays_unconfirmed_spending_against_the_daily_cap(
    workspace, bob, access_of, fund, set_policy, place
):
    # given a 100-credit daily cap, and spending that does not count against it:
    fund(10_000)
    set_policy(threshold=100, cap=100)
    # an unconfirmed order placed yesterday,
    yesterday = place("old:0:0")
    Order.objects.filter(pk=yesterday.pk).update(created_at=yesterday.created_at - timedelta(days=1))
    # an order whose credits came back,
    place("failed:0:0")
    order_release(workspace_id=workspace.pk, idempotency_key="failed:0:0", reason="job failed")
    # and orders a person approved (task 9's budget)
    approval_grant(access=access_of(bob), task_id=9, budget=400)
    for i in range(3):
        place(f"budget:{i}:0", task_id=9, target={"task": 9, "i": i})
    assert spent_today(workspace_id=workspace.pk, auto_only=True) == 0

    # when task 7 places unconfirmed 40-credit orders
    placed = [place("1:0:0"), place("2:0:0")]
    with pytest.raises(ConfirmationRequired) as refused:
        place("3:0:0")

    # then two fit under the cap (80), the third would exceed it (120)
    assert all(o.authorisation == Authorisation.AUTO for o in placed)
    assert refused.value.details["reasons"] == ["daily_cap"]
    assert refused.value.details["auto_spent_today"] == 80


def test_it_applies_a_policy_change_to_the_next_order(workspace, fund, set_policy, place):
    # given an order refused above the threshold
    fund(1000)
    with pytest.raises(ConfirmationRequired):
        place("1:0:0", amount=200)

    # when the owner raises the threshold
    set_policy(threshold=200)

    # then the same order now goes through
    assert place("1:0:0", amount=200).authorisation == Authorisation.AUTO
