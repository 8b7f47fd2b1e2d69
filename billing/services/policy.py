"""Spend policies: how much may be spent without asking a person. Owners change them."""

from django.db import transaction

from billing.locks import spend_policy_qs_for_update
from billing.models import SpendPolicy
from billing.services.pricing import MAX_ORDER_AMOUNT
from billing.services.validation import check_credits
from billing.services.wallets import do_workspace_lock
from workspace.models import Role
from workspace.selectors import Access
from workspace.services.events import event_append


@transaction.atomic
def spend_policy_update(
    *, access: Access, no_confirm_threshold: int | None = None, daily_no_confirm_cap: int | None = None
) -> SpendPolicy:
    """Change the no-confirmation threshold and/or daily cap. A limit of 0 means every order needs approval."""
    access.require(Role.OWNER)
    changes = {}
    if no_confirm_threshold is not None:
        changes["no_confirm_threshold"] = check_credits(
            no_confirm_threshold, field="no_confirm_threshold", minimum=0, maximum=MAX_ORDER_AMOUNT
        )
    if daily_no_confirm_cap is not None:
        changes["daily_no_confirm_cap"] = check_credits(
            daily_no_confirm_cap, field="daily_no_confirm_cap", minimum=0, maximum=MAX_ORDER_AMOUNT
        )
    workspace_id = access.workspace.pk
    # Same lock order as orders (workspace row first): an order being placed sees the old or the new policy,
    # never half of a change.
    do_workspace_lock(workspace_id)
    policy = spend_policy_qs_for_update().filter(workspace_id=workspace_id).first()
    if policy is None:
        policy = SpendPolicy.defaults_for(workspace_id)
    before = {"no_confirm_threshold": policy.no_confirm_threshold, "daily_no_confirm_cap": policy.daily_no_confirm_cap}
    after = {**before, **changes}
    if after == before:
        return policy  # nothing to record; a workspace on the defaults stays on them
    for name, value in changes.items():
        setattr(policy, name, value)
    policy.updated_by = access.user
    policy.save()
    event_append(workspace_id=workspace_id, kind="billing.policy", data={**after, "before": before, "by": access.actor})
    return policy
