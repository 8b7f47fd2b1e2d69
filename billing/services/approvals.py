"""Approvals: a person's recorded decision to allow spending — the only source of spending authority.

Never granted from anything a model wrote or a tool returned (DESIGN §5): the grant needs an editor or owner
acting as themselves, so an API key (which a script or an agent could hold) cannot approve.
"""

from django.db import IntegrityError, transaction
from django.utils import timezone

from billing.domain_events import APPROVAL_GRANTED
from billing.models import Approval, ApprovalKind
from billing.scopes import check_task_scope
from billing.selectors import quote_get
from billing.services.pricing import MAX_ORDER_AMOUNT
from billing.services.validation import check_credits, check_id
from lomote.kernel import domain_events
from lomote.kernel.exceptions import Conflict, InvalidInput, PermissionDenied
from workspace.models import Role
from workspace.selectors import Access
from workspace.services.events import event_append


def _check_person(access: Access) -> None:
    access.require(Role.EDITOR)
    if access.user is None or access.api_key is not None:
        raise PermissionDenied(
            "Only a person can approve spending; API keys cannot.",
            code="person_required",
            details={"required": "person"},
        )


@transaction.atomic
def approval_grant(
    *, access: Access, quote_id: int | None = None, task_id: int | None = None, budget: int | None = None
) -> Approval:
    """Approve one quote (`quote_id`), or a budget for a task (`task_id` and `budget`). Editors and owners.

    A quote can be approved once (409 `already_approved`) and not after it expired (409 `quote_expired`).
    Budgets for one task add up; each order of the task draws from the oldest budget that covers it.
    A quote's approval keeps the quote's scope; a budget takes the task's current scope. Either authorises
    orders only while that is still the task's scope (billing/scopes.py). A task the workspace does not have
    (another workspace's included) is NotFound, exactly like a missing one: nothing is granted, no task wakes.
    """
    _check_person(access)
    workspace_id = access.workspace.pk
    if quote_id is not None and (task_id is not None or budget is not None):
        raise InvalidInput("Approve either a quote, or a task's budget, not both.")
    if quote_id is not None:
        quote = quote_get(workspace_id=workspace_id, quote_id=quote_id)
        if quote.expires_at <= timezone.now():
            raise Conflict(
                "This quote has expired; ask for a new one.",
                code="quote_expired",
                details={"quote": quote.pk, "expired_at": quote.expires_at.isoformat()},
            )
        fields = {
            "kind": ApprovalKind.QUOTE,
            "quote": quote,
            "task_id": quote.task_id,
            "scope": quote.scope,
            "amount": quote.amount,
        }
    else:
        if task_id is None or budget is None:
            raise InvalidInput("Name a quote, or a task and a budget.")
        task_id = check_id(task_id, field="task")
        fields = {
            "kind": ApprovalKind.BUDGET,
            "quote": None,
            "task_id": task_id,
            "scope": check_task_scope(task_id, workspace_id=workspace_id),
            "amount": check_credits(budget, field="budget", maximum=MAX_ORDER_AMOUNT),
        }
    try:
        # Savepoint: the unique constraint settles two people approving one quote at once, and the
        # IntegrityError must not break the caller's transaction (DESIGN §14).
        with transaction.atomic():
            approval = Approval.objects.create(
                workspace_id=workspace_id, remaining=fields["amount"], approved_by=access.user, **fields
            )
    except IntegrityError:
        existing = Approval.objects.filter(quote_id=quote_id).first()
        raise Conflict(
            "This quote is already approved.",
            code="already_approved",
            details={"approval": existing.pk if existing else None},
        ) from None
    event_append(
        workspace_id=workspace_id,
        kind="billing.approval",
        data={
            "approval": approval.pk,
            "kind": approval.kind,
            "quote": approval.quote_id,
            "task": approval.task_id,
            "amount": approval.amount,
            "by": access.actor,
        },
    )
    # Agents wake a task that was waiting for this approval (a higher app; it subscribes).
    domain_events.publish(
        APPROVAL_GRANTED, workspace_id=workspace_id, task_id=approval.task_id, approval_id=approval.pk
    )
    return approval
