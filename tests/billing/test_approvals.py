"""Approvals: spending authority comes only from a person's recorded action (DESIGN §5)."""

import pytest
from django.db import IntegrityError, transaction

from billing.models import Approval, ApprovalKind
from billing.services.approvals import approval_grant
from billing.services.quotes import quote_create
from lomote.kernel.exceptions import Conflict, InvalidInput, NotFound, PermissionDenied
from tests.billing.helpers import money
from tests.support.race import race
from tests.support.rest import events_of, issue_api_key
from workspace.authentication import ApiKeyPrincipal
from workspace.models import Role
from workspace.selectors import workspace_access
from workspace.services.workspaces import workspace_create


@pytest.fixture
def quote(workspace):
    return quote_create(workspace_id=workspace.pk, operation="video.generate", params={"seconds": 10}, task_id=7)


@pytest.mark.django_db
def test_it_records_who_approved_a_quote(workspace, bob, access_of, quote):
    # when bob approves a 200-credit video quote for task 7
    approval = approval_grant(access=access_of(bob), quote_id=quote.pk)

    # then the approval carries the quote's amount and task, and bob's name, in the record and the log
    assert (approval.kind, approval.amount, approval.remaining, approval.task_id) == (ApprovalKind.QUOTE, 200, 200, 7)
    assert approval.approved_by == bob and approval.consumed_at is None
    [event] = events_of(workspace.pk, "billing.approval")
    assert event.data == {
        "approval": approval.pk,
        "kind": "quote",
        "quote": quote.pk,
        "task": 7,
        "amount": 200,
        "by": {"type": "user", "id": bob.pk, "username": "bob"},
    }


@pytest.mark.django_db
def test_it_never_lets_an_api_key_approve(workspace, quote):
    # given an editor API key — what a script, or an agent holding one, would use
    key, _ = issue_api_key(workspace, role=Role.EDITOR)
    access = workspace_access(principal=ApiKeyPrincipal(api_key=key), workspace_id=workspace.pk)
    before = money()

    # when it approves a quote or a budget
    with pytest.raises(PermissionDenied) as quote_refused:
        approval_grant(access=access, quote_id=quote.pk)
    with pytest.raises(PermissionDenied) as budget_refused:
        approval_grant(access=access, task_id=7, budget=10_000)

    # then 403 person_required, nothing recorded
    assert quote_refused.value.code == budget_refused.value.code == "person_required"
    assert money() == before


@pytest.mark.django_db
def test_it_does_not_let_a_viewer_approve(workspace, carol, access_of, quote):
    before = money()
    with pytest.raises(PermissionDenied) as refused:
        approval_grant(access=access_of(carol), quote_id=quote.pk)
    assert refused.value.code == "role_required"
    assert money() == before


@pytest.mark.django_db
def test_it_hides_another_workspaces_quote(workspace, bob, dave, access_of):
    other = workspace_create(user=dave, name="Dave's place")
    foreign = quote_create(workspace_id=other.pk, operation="3d.generate")
    with pytest.raises(NotFound) as missing:
        approval_grant(access=access_of(bob), quote_id=foreign.pk)
    assert missing.value.code == "quote_not_found"


@pytest.mark.django_db
@pytest.mark.parametrize(
    "kwargs",
    [
        pytest.param({}, id="nothing"),
        pytest.param({"task_id": 7}, id="task-without-budget"),
        pytest.param({"budget": 100}, id="budget-without-task"),
        pytest.param({"quote_id": 1, "task_id": 7, "budget": 100}, id="both-kinds"),
        pytest.param({"task_id": 7, "budget": 0}, id="zero-budget"),
        pytest.param({"task_id": -7, "budget": 10}, id="negative-task"),
    ],
)
def test_it_refuses_a_malformed_approval(workspace, bob, access_of, kwargs):
    before = money()
    with pytest.raises(InvalidInput):
        approval_grant(access=access_of(bob), **kwargs)
    assert money() == before


@pytest.mark.django_db
def test_it_cannot_store_an_approval_without_a_person(workspace, quote):
    # given a write that bypasses the service, as a model-written plan might try
    # when an approval is stored without who approved it
    # then the database refuses it: authority is always someone's recorded action
    with pytest.raises(IntegrityError), transaction.atomic():
        Approval.objects.create(
            workspace=workspace, kind=ApprovalKind.QUOTE, quote=quote, amount=200, remaining=200, approved_by=None
        )


@pytest.mark.django_db
def test_it_refuses_to_approve_a_quote_twice(workspace, alice, bob, access_of, quote):
    # given bob approved the quote
    first = approval_grant(access=access_of(bob), quote_id=quote.pk)
    before = money()

    # when alice approves it too, inside her own transaction
    with transaction.atomic():
        with pytest.raises(Conflict) as refused:
            approval_grant(access=access_of(alice), quote_id=quote.pk)
        # then her transaction is still usable (the unique insert had its own savepoint)
        assert Approval.objects.count() == 1

    # then 409 already_approved naming bob's approval, nothing new
    assert refused.value.code == "already_approved" and refused.value.details["approval"] == first.pk
    assert money() == before


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_it_keeps_one_approval_when_two_people_approve_at_once(workspace, alice, bob, access_of, quote):
    # when alice and bob approve the same quote at the same moment
    results = race(
        [lambda: approval_grant(access=access_of(alice), quote_id=quote.pk)]
        + [lambda: approval_grant(access=access_of(bob), quote_id=quote.pk)]
    )

    # then one approval is recorded, the other person gets already_approved
    assert sorted(type(r).__name__ for r in results) == ["Approval", "Conflict"], results
    conflict = next(r for r in results if isinstance(r, Conflict))
    assert conflict.code == "already_approved"
    assert Approval.objects.count() == 1
    assert len(events_of(workspace.pk, "billing.approval")) == 1
