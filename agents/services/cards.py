"""Cards: the decisions shown to a person, kept as persisted state (DESIGN §5, seed §8.3). This module opens,
withdraws and resolves them and gates calls on them; what a person's action does is card_actions.py, and
the Router's clarification cards belong to Main (agents/main/messages.py).

A card is opened by the runtime, never by what a model wrote:
- when a turn suspends for a person (`ask_user` → a choice or confirm card) or for a spending approval
  (a quote card: approve / adjust / decline);
- by the safety net, when a cycle ends at a checklist item that needs confirmation and nobody was asked;
- instead of continuing by itself, when the task's autonomy is "ask";
- before an irreversible tool call (always), or a paid one under "ask": the confirmation is for exactly
  that tool with exactly those arguments, and one confirmation lets one call run.

A card is resolved once (`card_resolve`, under the card's row lock), by one recorded action.
"""

import hashlib
import json
from typing import Any, Protocol

from django.db import transaction
from django.db.models import Q
from django.utils import timezone, translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from agents.locks import card_qs_for_update
from agents.models import (
    Autonomy,
    Card,
    CardKind,
    CardStatus,
    ChecklistItem,
    ChecklistStatus,
    Task,
    TaskStatus,
    Turn,
)
from agents.services.quote_words import things, why_asked
from agents.services.task_status import task_status_set
from agents.transitions import card_move, card_sources
from billing.models import Approval
from workspace.models import Artifact
from workspace.selectors import Access
from workspace.services.events import event_append

OPEN_ITEMS = (ChecklistStatus.PENDING, ChecklistStatus.IN_PROGRESS)

# What a person can do with each kind of open card.
ACTIONS: dict[str, tuple[str, ...]] = {
    CardKind.CONFIRM: ("confirm", "adjust"),
    CardKind.CHOICE: ("choose", "adjust"),
    CardKind.CLARIFY: ("choose",),
    CardKind.QUOTE: ("approve", "adjust", "decline"),
    # A quick request's result: iterate on it (text: what to change) or keep it as a persistent task.
    CardKind.RESULT: ("iterate", "keep"),
}
PUBLIC_ACTIONS = ("confirm", "adjust", "choose", "approve", "decline", "iterate", "keep")
# A free-text reply to a confirm or choice card (card_reply); for a quote card a reply is an `adjust`, never an
# approval, and a clarification card takes only one of its options.
ANSWER = "answer"
# Resolutions that settle a checkpoint: after them the safety net does not ask about the same item again.
# `adjust` does not: the person asked for changes, so the adjusted proposal is asked about anew.
SETTLING_ACTIONS = ("confirm", "choose", ANSWER)

QUOTE_OPTIONS = [
    {"id": "approve", "label": gettext_lazy("Approve")},
    {"id": "adjust", "label": gettext_lazy("Adjust the plan")},
    {"id": "decline", "label": gettext_lazy("Decline")},
]
MAX_TITLE = 300


class QuoteHandler(Protocol):
    """What approving or declining a quote card means when it is not a task's budget (e.g. a Flow run's)."""

    actions: tuple[str, ...]

    def approve(self, *, access: Access, card: Card) -> Approval: ...

    def decline(self, *, access: Access, card: Card) -> None: ...


# payload["source"] → its handler; registered explicitly by the services that open such cards (AgentsConfig).
QUOTE_HANDLERS: dict[str, QuoteHandler] = {}


class ConfirmHandler(Protocol):
    """What confirming (or adjusting) a confirm card means when the card is not a task's: e.g. forgetting a
    memory. `confirm` runs in the card's transaction, before the card is resolved: if it raises, nothing is."""

    def confirm(self, *, access: Access, card: Card) -> dict[str, Any]: ...

    def adjust(self, *, access: Access, card: Card, text: str) -> None: ...


CONFIRM_HANDLERS: dict[str, ConfirmHandler] = {}


def confirm_handler(card: Card) -> ConfirmHandler | None:
    return CONFIRM_HANDLERS.get(card.payload.get("source", "")) if card.kind == CardKind.CONFIRM else None


def quote_handler(card: Card) -> QuoteHandler | None:
    return QUOTE_HANDLERS.get(card.payload.get("source", "")) if card.kind == CardKind.QUOTE else None


def _allowed(card: Card) -> tuple[str, ...]:
    handler = quote_handler(card)
    return handler.actions if handler is not None else ACTIONS.get(card.kind, ())


def card_allowed_actions(card: Card) -> tuple[str, ...]:
    """What the card's kind (or its quote handler) accepts, whatever its status."""
    return _allowed(card)


def card_actions(card: Card) -> tuple[str, ...]:
    """The actions an open card accepts; none once it is resolved or cancelled."""
    return _allowed(card) if card.status == CardStatus.OPEN else ()


def card_data(card: Card) -> dict[str, Any]:
    return {
        "card": card.pk,
        "task": card.task_id,
        "kind": card.kind,
        "status": card.status,
        "title": card.title,
        "source": card.payload.get("source", ""),
    }


def spoken(task: Task | None):
    """What a card says is said in its task's language (the person's, detected on their first message)."""
    return translation.override(task.language if task is not None and task.language else None)


def _title(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_TITLE else text[: MAX_TITLE - 1] + "…"


# --- opening ----------------------------------------------------------------------------------------------


def card_open(
    task: Task | None,
    *,
    kind: str,
    title: str,
    payload: dict[str, Any],
    body: str = "",
    options: list[dict[str, str]] | None = None,
    turn: Turn | None = None,
    supersede: bool = True,
    workspace_id: int | None = None,
) -> Card:
    """Create an open card for the task (its row locked by the caller), or for no task in `workspace_id`, and
    record the event.

    Earlier open cards of the task from other turns are cancelled: their question was overtaken (the person
    wrote instead of answering, the model asked again), and answering them now would answer the wrong thing.
    """
    if supersede and task is not None:
        cards_withdraw(task, reason="superseded", keep_turn=turn)
    workspace_id = task.workspace_id if task is not None else workspace_id
    card = Card.objects.create(
        workspace_id=workspace_id,
        task=task,
        turn=turn,
        kind=kind,
        title=_title(title),
        body=body,
        options=[
            {**option, "label": str(option["label"])} if "label" in option else option for option in options or []
        ],
        payload=payload,
    )
    event_append(workspace_id=workspace_id, kind="card.opened", data=card_data(card))
    return card


def card_open_quote(
    *, workspace_id: int, task: Task | None, title: str, body: str, payload: dict[str, Any], turn: Turn | None = None
) -> Card:
    """A quote card for spending that a registered QuoteHandler settles (payload["source"] names it). The
    task, if any, is locked by the caller; its earlier cards stay (this is not a new question to it)."""
    handler = QUOTE_HANDLERS[payload["source"]]
    options = [o for o in QUOTE_OPTIONS if o["id"] in handler.actions]
    return card_open(
        task,
        kind=CardKind.QUOTE,
        title=title,
        body=body,
        options=options,
        payload=payload,
        turn=turn,
        supersede=False,
        workspace_id=workspace_id,
    )


def card_open_confirm(*, workspace_id: int, title: str, body: str, payload: dict[str, Any]) -> Card:
    """A confirm card of no task that a registered ConfirmHandler settles (payload["source"] names it)."""
    if payload.get("source") not in CONFIRM_HANDLERS:
        raise ValueError(f"no confirm handler for {payload.get('source')!r}")
    return card_open(
        None, kind=CardKind.CONFIRM, title=title, body=body, payload=payload, supersede=False, workspace_id=workspace_id
    )


def cards_withdraw(task: Task, *, reason: str, keep_turn: Turn | None = None) -> list[Card]:
    """Cancel the task's open cards (the task row is locked), except those opened in `keep_turn`.

    For cards nobody should answer any more: overtaken by a newer question, or their task was cancelled.
    """
    stale = Card.objects.filter(task=task, status=CardStatus.OPEN)
    if keep_turn is not None:
        stale = stale.filter(~Q(turn=keep_turn) | Q(turn__isnull=True))
    withdrawn = list(
        card_qs_for_update().filter(pk__in=stale.values("pk"), status__in=card_sources(CardStatus.CANCELLED))
    )
    for card in withdrawn:
        card_move(card, CardStatus.CANCELLED)
        card.resolved_at, card.resolution = timezone.now(), {"withdrawn": reason}
        card.save(update_fields=["status", "resolved_at", "resolution"])
        event_append(workspace_id=task.workspace_id, kind="card.cancelled", data={**card_data(card), "reason": reason})
    return withdrawn


def _current_item(task: Task) -> ChecklistItem | None:
    return task.checklist.filter(status__in=OPEN_ITEMS).order_by("position").first()


def _item_link(item: ChecklistItem | None) -> dict[str, Any]:
    return {"checklist_item": item.pk, "checklist_position": item.position} if item is not None else {}


def card_open_for_wait(task: Task, waiting_for: dict[str, Any], *, turn: Turn | None = None) -> Card | None:
    """Open the card a suspending task waits on (the task row is locked). None for waits without a person.

    A "person" wait becomes a choice card (with options) or a confirm card; asked while the task stands at a
    checklist item needing confirmation, the card is linked to that item. An "approval" wait becomes a
    quote card. A wait that already names its card (a confirmation asked before a call) reuses it.
    """
    if waiting_for.get("card"):
        return Card.objects.filter(pk=waiting_for["card"], task=task).first()
    with spoken(task):
        return _card_for_wait(task, waiting_for, turn=turn)


def _card_for_wait(task: Task, waiting_for: dict[str, Any], *, turn: Turn | None) -> Card | None:
    if waiting_for.get("type") == "person":
        question = str(waiting_for.get("question") or _("The agent needs your answer."))
        labels = [str(label) for label in waiting_for.get("options") or []]
        options = [{"id": str(n), "label": label} for n, label in enumerate(labels, start=1)]
        item = _current_item(task)
        link = _item_link(item) if item is not None and item.needs_confirmation else {}
        return card_open(
            task,
            kind=CardKind.CHOICE if options else CardKind.CONFIRM,
            title=question,
            body=question if len(question) > MAX_TITLE else "",
            options=options,
            payload={"source": "ask_user", "question": question, **link},
            turn=turn,
        )
    if waiting_for.get("type") == "approval":
        amount, items = waiting_for.get("amount"), waiting_for.get("items") or 1
        operation, per_item = waiting_for.get("operation", ""), waiting_for.get("per_item")
        reasons = list(waiting_for.get("reasons") or [])
        limits = dict(waiting_for.get("limits") or {})
        bought = things(operation, items)
        return card_open(
            task,
            kind=CardKind.QUOTE,
            title=_("Approve %(amount)s credits for %(things)s") % {"amount": amount, "things": bought},
            body=_("%(things)s at %(each)s credits each, %(amount)s credits in all.")
            % {"things": bought, "each": per_item, "amount": amount}
            + why_asked(reasons, limits),
            options=QUOTE_OPTIONS,
            payload={
                "source": "approval",
                "quote": waiting_for.get("quote"),
                "operation": operation,
                "amount": amount,
                "per_item": per_item,
                "items": items,
                "reasons": reasons,
                "limits": limits,
            },
            turn=turn,
        )
    return None


def result_artifacts(workspace_id: int, entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What a RESULT card shows of each artifact made (entries carry `artifact` and `version`): its id, version,
    kind and title, in the order made; one made twice is shown once, at its last version; deleted ones are left out.
    """
    latest: dict[int, Any] = {}
    for entry in entries:
        latest.pop(entry["artifact"], None)
        latest[entry["artifact"]] = entry.get("version")
    artifacts = Artifact.objects.filter(workspace_id=workspace_id, pk__in=list(latest), deleted_at__isnull=True)
    found = artifacts.in_bulk()
    return [
        {"artifact": a.pk, "version": version, "kind": a.kind, "title": a.title}
        for pk, version in latest.items()
        if (a := found.get(pk)) is not None
    ]


def card_open_result(task: Task, artifacts: list[dict[str, Any]], *, turn: Turn | None = None) -> Card:
    """A lightweight task's answer (the task row is locked): its result, named, with what the person can do next.

    The artifacts stay ordinary artifacts (on the canvas, reachable from this card); the task stays out of the
    task list unless the person keeps it or iterates on it again (agents/services/lightweight.py). Opening it
    withdraws the task's earlier open cards, an earlier result's included: that result was iterated on.
    """
    names = ", ".join(f"“{a['title']}” (#{a['artifact']}, v{a['version']})" for a in artifacts)
    with spoken(task):
        return card_open(
            task,
            kind=CardKind.RESULT,
            title=_("Ready: %(title)s") % {"title": task.title},
            body=_("Made %(names)s. Ask for a change to make a new version, or keep this as a task.") % {"names": names}
            if artifacts
            else _("Nothing was made."),
            options=[{"id": "iterate", "label": _("Iterate")}, {"id": "keep", "label": _("Keep as a task")}],
            payload={"source": "lightweight", "artifacts": artifacts},
            turn=turn,
        )


def checkpoint_unasked(task: Task) -> ChecklistItem | None:
    """The checklist item the task stands at, when it needs a confirmation nobody was asked for.

    The task stands at its first open item. It counts as asked when a card of the task is open, or a card
    linked to that item was confirmed or answered. Under autonomy "auto" the person chose not to be asked.
    """
    if task.autonomy == Autonomy.AUTO:
        return None
    item = _current_item(task)
    if item is None or not item.needs_confirmation:
        return None
    asked = Card.objects.filter(task=task).filter(
        Q(status=CardStatus.OPEN)
        | Q(
            status=CardStatus.RESOLVED,
            payload__checklist_item=item.pk,
            resolution__action__in=SETTLING_ACTIONS,
        )
    )
    return None if asked.exists() else item


def card_open_safety_net(task: Task, item: ChecklistItem, *, turn: Turn | None = None) -> Card:
    """The model stopped at a checkpoint without asking: the runtime asks for it (the task row is locked)."""
    with spoken(task):
        return card_open(
            task,
            kind=CardKind.CONFIRM,
            title=_("Confirm before the agent goes on: %(item)s") % {"item": item.title},
            body=_(
                "This step needs your confirmation before it is carried out. Confirm to let the agent go on, or "
                "adjust to tell it what to change."
            ),
            payload={"source": "safety_net", **_item_link(item)},
            turn=turn,
        )


def card_open_to_continue(task: Task, *, turn: Turn | None = None) -> Card:
    """Autonomy "ask": instead of continuing by itself, the task asks whether to go on (task row locked)."""
    item = _current_item(task)
    with spoken(task):
        title = (
            _("Continue with: %(item)s?") % {"item": item.title}
            if item is not None
            else _("Continue with the next step?")
        )
        return card_open(
            task,
            kind=CardKind.CONFIRM,
            title=title,
            body=_("This task asks before each next step. Confirm to let it go on, or adjust to change the plan."),
            payload={"source": "continue", **_item_link(item)},
            turn=turn,
        )


def task_wait_for_card(task: Task, card: Card, **flags: Any) -> None:
    """Make the task (locked) wait for a person's action on `card`."""
    waiting_for = {"type": "person", "card": card.pk, **flags}
    task_status_set(task, TaskStatus.WAITING, reason="checkpoint", waiting_for=waiting_for, summary=False)


# --- confirmation before a call ---------------------------------------------------------------------------


def _fingerprint(tool: str, arguments: Any) -> str:
    canonical = json.dumps({"tool": tool, "input": arguments}, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def card_gate_call(
    *,
    workspace_id: int,
    task_id: int,
    turn_id: int | None,
    call_id: str,
    tool: str,
    arguments: Any,
    irreversible: bool,
) -> dict[str, Any] | None:
    """None when a person confirmed exactly this call (tool and arguments); otherwise the wait to suspend on.

    A confirmation lets one call run: the call that uses it is recorded on the card, so a recovery re-run of
    that same call id passes again, and any other call asks anew. While a card for the same tool and
    arguments is open, it is reused rather than asked twice.
    """
    fingerprint = _fingerprint(tool, arguments)
    with transaction.atomic():
        cards = card_qs_for_update().filter(task_id=task_id, kind=CardKind.CONFIRM, payload__fingerprint=fingerprint)
        open_card = None
        for card in cards.filter(status__in=[CardStatus.OPEN, CardStatus.RESOLVED]):
            if card.status == CardStatus.OPEN:
                open_card = open_card or card
                continue
            if card.resolution.get("action") != "confirm":
                continue
            spent_by = card.resolution.get("spent_by")
            if spent_by == call_id:
                return None
            if spent_by is None:
                card.resolution = {**card.resolution, "spent_by": call_id}
                card.save(update_fields=["resolution"])
                return None
        if open_card is None:
            task = Task.objects.get(pk=task_id)
            with spoken(task):
                if irreversible:
                    title, reason = _("Confirm %(tool)s — it cannot be undone") % {"tool": tool}, "irreversible"
                else:
                    title, reason = _("Confirm the paid step %(tool)s") % {"tool": tool}, "autonomy_ask"
                body = _("The agent wants to run %(tool)s with %(input)s.") % {
                    "tool": tool,
                    "input": json.dumps(arguments, ensure_ascii=False, sort_keys=True, default=str),
                }
            open_card = card_open(
                task,
                kind=CardKind.CONFIRM,
                title=title,
                body=body,
                payload={
                    "source": "confirm_call",
                    "reason": reason,
                    "call": call_id,
                    "tool": tool,
                    "input": arguments,
                    "fingerprint": fingerprint,
                },
                turn=Turn.objects.filter(pk=turn_id).first() if turn_id else None,
                supersede=False,
            )
        checklist_item_unstart(task_id, arguments)
    return {"type": "person", "card": open_card.pk, "call": call_id, "reason": open_card.payload.get("reason")}


def checklist_item_unstart(task_id: int, arguments: Any) -> None:
    """Nothing started for the checklist item a call was for (gated by a confirmation, or never run): it is
    pending again, so a later turn starts it — an item left "in progress" is never started twice."""
    position = arguments.get("checklist_position") if isinstance(arguments, dict) else None
    if isinstance(position, int):
        ChecklistItem.objects.filter(task_id=task_id, position=position, status=ChecklistStatus.IN_PROGRESS).update(
            status=ChecklistStatus.PENDING
        )


def card_resolve(card: Card, *, resolution: dict[str, Any], by: str, user=None, option: str | None = None) -> Card:
    """Resolve an open card (its row locked by the caller) with the recorded `resolution`, once, and publish it.

    The one place a card becomes resolved: a person's action on a task's card (card_actions.py) and Main's
    clarification answers both end here.
    """
    card_move(card, CardStatus.RESOLVED)
    card.resolution = resolution
    card.resolved_by, card.resolved_at = user, timezone.now()
    card.save(update_fields=["status", "resolution", "resolved_by", "resolved_at"])
    event_append(
        workspace_id=card.workspace_id,
        kind="card.resolved",
        data={**card_data(card), "action": resolution["action"], "option": option, "by": by},
    )
    return card
