"""Billing fixtures: accesses for the personas, a funded workspace, a policy, and order_place with defaults."""

import pytest

from billing.scopes import scope_resolver_install
from billing.services.orders import order_place
from billing.services.policy import spend_policy_update
from billing.services.wallets import wallet_topup
from workspace.selectors import workspace_access

# Billing's tests stand in for agents: every workspace has the tasks 1 to 99, none with a scope (test_scopes.py
# installs its own goal revisions). Any other id is a task the workspace does not have.
KNOWN_TASKS = range(1, 100)


@pytest.fixture(autouse=True)
def tasks():
    previous = scope_resolver_install(lambda workspace_id, task_id: "" if task_id in KNOWN_TASKS else None)
    yield KNOWN_TASKS
    scope_resolver_install(previous)


@pytest.fixture
def access_of(workspace):
    """The access a member has to `workspace`, as the API would resolve it."""

    def make(user, workspace_id=None):
        return workspace_access(principal=user, workspace_id=workspace_id or workspace.pk)

    return make


@pytest.fixture
def fund(access_of, alice):
    """Top up `workspace` (as alice, its owner) with `amount` credits."""

    def top_up(amount: int, *, memo: str = "test credits"):
        return wallet_topup(access=access_of(alice), amount=amount, memo=memo)

    return top_up


@pytest.fixture
def set_policy(access_of, alice):
    def change(*, threshold: int | None = None, cap: int | None = None):
        return spend_policy_update(access=access_of(alice), no_confirm_threshold=threshold, daily_no_confirm_cap=cap)

    return change


@pytest.fixture
def place(workspace):
    """order_place on `workspace` with sensible defaults: one 40-credit image for task 7."""

    def call(key: str = "11:0:0", **overrides):
        kwargs = {
            "workspace_id": workspace.pk,
            "idempotency_key": key,
            "operation": "image.generate",
            "target": {"task": 7, "prompt_hash": "abc"},
            "amount": 40,
            "task_id": 7,
        }
        kwargs.update(overrides)
        return order_place(**kwargs)

    return call
