"""Every reaction of billing to something that happened in workspace, in one list (`install`, from
BillingConfig.ready):

- a generation job settled → its order is captured on success, released on failure or timeout;
- a paid Flow node ended without its job → what was held for it is released;
- a paid Flow node is about to submit its job → workspace asks, through its spend-check hook, whether money is
  held for it (`money_held_for`).

Events and hook are declared in workspace/domain_events.py. The handlers run inside the publisher's transaction.
"""

from billing.models import OrderStatus
from billing.selectors import order_find
from billing.services.orders import do_order_capture, do_order_release, order_release
from lomote.kernel import domain_events
from workspace.domain_events import FLOW_NODE_CLOSED, JOB_SETTLED, spend_check_install

RELEASING_STATUSES = {"failed", "timed_out"}


def on_job_settled(*, workspace_id: int, idempotency_key: str | None, status: str, **_) -> None:
    """A generation job finished: capture its order on success, release it on failure or timeout.

    Runs inside the job transition's transaction (the `do_` forms: no savepoint, an error rolls the transition
    back), so it happens once per transition; a repeated publish finds the order already settled and changes
    nothing. A job without an order (free) is ignored.
    """
    if not idempotency_key or (status != "succeeded" and status not in RELEASING_STATUSES):
        return
    order = order_find(workspace_id=workspace_id, idempotency_key=idempotency_key)
    if order is None:
        return
    if status == "succeeded":
        do_order_capture(workspace_id=workspace_id, idempotency_key=idempotency_key, order=order)
    else:
        do_order_release(
            workspace_id=workspace_id, idempotency_key=idempotency_key, reason=f"job {status}", order=order
        )


def on_flow_node_closed(*, workspace_id: int, idempotency_key: str, **_) -> None:
    """A paid Flow node ended without submitting its job (skipped, or failed first): release what was held for
    it. Runs in the runner's transaction; an order already settled, or none, changes nothing."""
    order = order_find(workspace_id=workspace_id, idempotency_key=idempotency_key)
    if order is not None and order.status == OrderStatus.HELD:
        order_release(workspace_id=workspace_id, idempotency_key=idempotency_key, reason="node ended without a job")


def money_held_for(workspace_id: int, idempotency_key: str) -> bool:
    """The spend check a paid Flow node makes before it submits: an order holds (or captured) money for it."""
    order = order_find(workspace_id=workspace_id, idempotency_key=idempotency_key)
    return order is not None and order.status in (OrderStatus.HELD, OrderStatus.CAPTURED)


def install() -> None:
    domain_events.subscribe(JOB_SETTLED)(on_job_settled)
    domain_events.subscribe(FLOW_NODE_CLOSED)(on_flow_node_closed)
    spend_check_install(money_held_for)
