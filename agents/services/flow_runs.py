"""Starting a Flow run on the spending path every paid operation takes: quote → policy → order → hold (DESIGN §5).

A run is priced before it starts: the sum of its paid (generation) nodes at billing's prices, whatever
provider a node names. Then, in the transaction that created it:
- the wallet does not cover the total → 402 `insufficient_balance`, and nothing exists (no run, no job);
- a person's request within the no-confirmation threshold and the daily cap, or a task's request its budget
  covers → one order per paid node is held under the node's job key `flow-run:<run>:<node>:<attempt>`,
  and the run begins;
- otherwise (above a limit, or requested through an API key: confirmed one by one) → a `flow.run` quote and
  a quote card; the run waits (`awaiting_approval`) with nothing held and no job. A person approving the
  card holds the orders against that quote and begins the run; declining cancels it.
Each node's job completion then captures its order and a failure releases it (billing's job subscriber);
a node that ends without a job releases its hold. A retried node is a new attempt, so a new order: the
failed attempt's hold was released, and nothing is charged twice.

A repeated request with the same idempotency key returns the same run and card, and places nothing new. A run
whose model node names a preset, version or model profile that does not exist is refused (400, that reference's
code, e.g. `preset_not_found`, with the node) before anything is held.
"""

from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from agents.locks import task_qs_for_update
from agents.models import Card, CardStatus
from agents.services.cards import QUOTE_HANDLERS, card_open_quote, spoken
from agents.services.flow_nodes import flow_model_nodes_check
from agents.services.quote_words import limits_of, things, why_asked
from billing.exceptions import ConfirmationRequired
from billing.models import Approval
from billing.selectors import wallet_get
from billing.services.approvals import approval_grant
from billing.services.orders import OrderItem, orders_place
from billing.services.pricing import COMPOSITE, GENERATION_OPERATIONS, price_describe, price_of
from billing.services.quotes import quote_create
from lomote.kernel.exceptions import NotFound, PaymentRequired
from workspace.flows.runner import (
    PaidNode,
    flow_node_retry,
    flow_run_begin,
    flow_run_cancel,
    flow_run_create,
    flow_run_paid_nodes,
    flow_run_rerun_stale,
)
from workspace.flows.validation import node_types_describe, port_types_describe
from workspace.models import FlowRun, FlowRunStatus, FlowThread, Role
from workspace.selectors import Access

SOURCE = "flow_run"


@dataclass(frozen=True)
class FlowRunRequest:
    run: FlowRun
    card: Card | None  # the quote card the run waits on, if it needs a person's approval
    amount: int  # what its paid nodes cost (held, or quoted)
    created: bool = True


def flow_node_types_list() -> dict[str, Any]:
    """The node types as the editor builds its forms from them (workspace/flows/validation.py), each with its price
    here: a generation node's at billing's price of its operation, the others free (a model node runs on the
    workspace's own model profile, not for credits)."""
    types = []
    for described in node_types_describe():
        kind = described["generates"]
        price = {"paid": False, "operation": None, "credits_default": 0}
        if kind is not None:
            price = {"paid": True, **price_describe(GENERATION_OPERATIONS[kind])}
            if price["unit_param"]:  # the unit is counted in the node's provider parameters
                price["unit_param"] = f"generation_params.{price['unit_param']}"
        types.append({**described, "price": price})
    return {"port_types": port_types_describe(), "node_types": types}


def _items(run: FlowRun, paid: list[PaidNode]) -> list[OrderItem]:
    items = []
    for node in paid:
        operation = GENERATION_OPERATIONS[node.kind]
        items.append(
            OrderItem(
                idempotency_key=node.job_key,
                operation=operation,
                target={"flow_run": run.pk, "node": node.node_id, "artifact": run.artifact_id},
                amount=price_of(operation, node.params),
            )
        )
    return items


def _paid(run: FlowRun) -> list[PaidNode]:
    """Every paid node of the run at its current attempt, whatever its status (for what the run costs)."""
    return flow_run_paid_nodes(run, pending_only=False)


def _quote_params(paid: list[PaidNode]) -> dict[str, Any]:
    return {"items": [{"operation": GENERATION_OPERATIONS[n.kind], "params": n.params} for n in paid]}


def _open_card(run: FlowRun, paid: list[PaidNode], amount: int, refusal: dict[str, Any], created_by) -> Card:
    reasons, limits = list(refusal.get("reasons", [])), limits_of(refusal)
    quote = quote_create(
        workspace_id=run.workspace_id,
        operation=COMPOSITE,
        params=_quote_params(paid),
        task_id=run.started_by_task_id,
        created_by=created_by,
    )
    task = task_qs_for_update().filter(pk=run.started_by_task_id).first() if run.started_by_task_id else None
    nodes = ", ".join(n.node_id for n in paid)
    # In the language of the task that started it, else the one the request came in (the person's, or English).
    with spoken(task) if task is not None else nullcontext():
        body = _("The Flow run #%(run)s has %(things)s (%(nodes)s), %(amount)s credits in all.") % {
            "run": run.pk,
            "things": things(COMPOSITE, len(paid)),
            "nodes": nodes,
            "amount": amount,
        }
        body += why_asked(reasons, limits)
        title = _("Approve %(amount)s credits to run the Flow") % {"amount": amount}
    return card_open_quote(
        workspace_id=run.workspace_id,
        task=task,
        title=title,
        body=body,
        payload={
            "source": SOURCE,
            "run": run.pk,
            "artifact": run.artifact_id,
            "quote": quote.pk,
            "operation": COMPOSITE,
            "amount": amount,
            "items": len(paid),
            "nodes": [n.node_id for n in paid],
            "reasons": reasons,
            "limits": limits,
        },
    )


def _authorise(run: FlowRun, *, api_request: bool, created_by=None) -> FlowRunRequest:
    """Hold the run's paid nodes and begin it, or open the quote card it waits on (module docstring)."""
    paid = flow_run_paid_nodes(run)
    if not paid:
        return FlowRunRequest(run=flow_run_begin(run.pk), card=None, amount=0)
    items = _items(run, paid)
    amount = sum(item.amount for item in items)
    available = wallet_get(workspace_id=run.workspace_id).available
    if available < amount:
        # Refused before anything is asked or held: approving could not make it payable.
        raise PaymentRequired(
            f"The balance ({available} credits) does not cover this run's {amount} credits.",
            code="insufficient_balance",
            details={"available": available, "required": amount, "operation": COMPOSITE, "run": run.pk},
        )
    try:
        with transaction.atomic():
            orders_place(
                workspace_id=run.workspace_id,
                items=items,
                task_id=run.started_by_task_id,
                api_request=api_request,
            )
    except ConfirmationRequired as exc:
        card = _open_card(run, paid, amount, exc.details, created_by)
        return FlowRunRequest(run=run, card=card, amount=amount)
    return FlowRunRequest(run=flow_run_begin(run.pk), card=None, amount=amount)


def _waiting_card(run: FlowRun) -> Card | None:
    return Card.objects.filter(
        workspace_id=run.workspace_id, payload__source=SOURCE, payload__run=run.pk, status=CardStatus.OPEN
    ).first()


@transaction.atomic
def flow_run_request(
    *,
    workspace_id: int,
    artifact_id: int,
    inputs: dict[str, Any] | None = None,
    started_by=None,
    task_id: int | None = None,
    api_request: bool = False,
    idempotency_key: str | None = None,
    thread: str = FlowThread.NONE,
    thread_task_id: int | None = None,
) -> FlowRunRequest:
    """Start a run of the Flow's current version through the spending path (module docstring).

    `started_by` is the person (or None for an API key or a task); `task_id` the task that asked, whose budget
    may cover the run; `api_request` marks the open API, whose paid runs a person always confirms. `thread`
    (with `thread_task_id`) is the conversation a run over a thread answers in (agents/services/flow_threads.py):
    it changes nothing of how the run is authorised."""
    run, created = flow_run_create(
        workspace_id=workspace_id,
        artifact_id=artifact_id,
        inputs=inputs,
        started_by=started_by,
        started_by_task_id=task_id,
        idempotency_key=idempotency_key,
        thread=thread,
        thread_task_id=thread_task_id,
    )
    if not created:
        card = _waiting_card(run)
        amount = card.payload["amount"] if card is not None else sum(i.amount for i in _items(run, _paid(run)))
        return FlowRunRequest(run=run, card=card, amount=amount, created=False)
    # Raising here rolls the new run back: a model node that cannot run refuses the whole run before any spending.
    flow_model_nodes_check(workspace_id=workspace_id, graph=run.graph)
    return _authorise(run, api_request=api_request, created_by=started_by)


@transaction.atomic
def flow_node_retry_request(*, access: Access, run_id: int, node_id: str) -> FlowRunRequest:
    """Retry a failed node (and what it skipped) as a new attempt, priced and authorised like a new run."""
    access.require(Role.EDITOR)
    run = flow_node_retry(workspace_id=access.workspace.pk, run_id=run_id, node_id=node_id)
    return _authorise(run, api_request=access.api_key is not None, created_by=access.user)


@transaction.atomic
def flow_run_rerun_stale_request(*, access: Access, run_id: int) -> FlowRunRequest:
    """Re-run a run's stale nodes on their new inputs, priced and authorised like a new run."""
    access.require(Role.EDITOR)
    run = flow_run_rerun_stale(workspace_id=access.workspace.pk, run_id=run_id)
    return _authorise(run, api_request=access.api_key is not None, created_by=access.user)


class FlowRunQuote:
    """Approving a Flow run's quote card holds its paid nodes against that quote and begins the run."""

    actions = ("approve", "decline")

    def _run(self, card: Card) -> FlowRun:
        run = FlowRun.objects.filter(pk=card.payload.get("run"), workspace_id=card.workspace_id).first()
        if run is None:
            raise NotFound(gettext_noop("The card's Flow run no longer exists."))
        return run

    def approve(self, *, access: Access, card: Card) -> Approval:
        run = self._run(card)
        approval = approval_grant(access=access, quote_id=card.payload["quote"])
        if run.status == FlowRunStatus.AWAITING_APPROVAL:
            orders_place(
                workspace_id=run.workspace_id,
                items=_items(run, flow_run_paid_nodes(run)),
                task_id=run.started_by_task_id,
                quote_id=card.payload["quote"],
            )
            flow_run_begin(run.pk)
        return approval

    def decline(self, *, access: Access, card: Card) -> None:
        flow_run_cancel(self._run(card).pk, reason="spending_declined")


def register() -> None:
    QUOTE_HANDLERS[SOURCE] = FlowRunQuote()
