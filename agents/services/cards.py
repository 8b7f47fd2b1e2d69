"""Cards: the decisions shown to a person, kept as persisted state (DESIGN §5, seed §8.3).

A card is opened by the runtime, never by what a model wrote:
- when a turn suspends for a person (`ask_user` → a choice or confirm card) or for a spending approval
  (a quote card: approve / adjust / decline);
- by the safety net, when a cycle ends at a checklist item that needs confirmation and nobody was asked;
- instead of continuing by itself, when the task's autonomy is "ask";
- before an irreversible tool call (always), or a paid one under "ask": the confirmation is for exactly
  that tool with exactly those arguments, and one confirmation lets one call run.

A card is resolved once, by one person's (or, except for money and irreversible operations, one editor
key's) recorded action, under the card's row lock. The answer reaches the task's inbox and starts its next
turn: the person never has to type "continue". Approving spending grants a budget through billing — the only
source of spending authority — and the task wakes through billing's approval reaction, like any approval.
"""

import hashlib
import json
from typing import Any, Protocol

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from agents.locks import card_qs_for_update, task_qs_for_update
from agents.models import (
    RUNTIME_NOTE,
    Autonomy,
    Card,
    CardKind,
    CardStatus,
    ChecklistItem,
    ChecklistStatus,
    InboxMessage,
    Task,
    TaskStatus,
    Turn,
)
from agents.services.inbox import message_post
from agents.services.task_status import task_status_set
from agents.transitions import card_move, card_sources
from billing.models import Approval
from billing.services.approvals import approval_grant
from lomote.kernel.exceptions import Conflict, InvalidInput, NotFound, PermissionDenied
from workspace.models import Role
from workspace.selectors import Access
from workspace.services.events import event_append

OPEN_ITEMS = (ChecklistStatus.PENDING, ChecklistStatus.IN_PROGRESS)

# What a person can do with each kind of open card.
ACTIONS: dict[str, tuple[str, ...]] = {
    CardKind.CONFIRM: ("confirm", "adjust"),
    CardKind.CHOICE: ("choose", "adjust"),
    CardKind.CLARIFY: ("choose",),
    CardKind.QUOTE: ("approve", "adjust", "decline"),
}
PUBLIC_ACTIONS = ("confirm", "adjust", "choose", "approve", "decline")
# A free-text reply to a confirm or choice card (card_reply); for a quote card a reply is an `adjust`, never an
# approval, and a clarification card takes only one of its options.
ANSWER = "answer"
# Resolutions that settle a checkpoint: after them the safety net does not ask about the same item again.
# `adjust` does not: the person asked for changes, so the adjusted proposal is asked about anew.
SETTLING_ACTIONS = ("confirm", "choose", ANSWER)

QUOTE_OPTIONS = [
    {"id": "approve", "label": "Approve"},
    {"id": "adjust", "label": "Adjust the plan"},
    {"id": "decline", "label": "Decline"},
]
MAX_TITLE = 300


class QuoteHandler(Protocol):
    """What approving or declining a quote card means when it is not a task's budget (e.g. a Flow run's)."""

    actions: tuple[str, ...]

    def approve(self, *, access: Access, card: Card) -> Approval: ...

    def decline(self, *, access: Access, card: Card) -> None: ...


# payload["source"] → its handler; registered explicitly by the services that open such cards (AgentsConfig).
QUOTE_HANDLERS: dict[str, QuoteHandler] = {}


def _handler(card: Card) -> QuoteHandler | None:
    return QUOTE_HANDLERS.get(card.payload.get("source", "")) if card.kind == CardKind.QUOTE else None


def _allowed(card: Card) -> tuple[str, ...]:
    handler = _handler(card)
    return handler.actions if handler is not None else ACTIONS.get(card.kind, ())


def card_actions(card: Card) -> tuple[str, ...]:
    """The actions an open card accepts; none once it is resolved or cancelled."""
    return _allowed(card) if card.status == CardStatus.OPEN else ()


def _card_data(card: Card) -> dict[str, Any]:
    return {
        "card": card.pk,
        "task": card.task_id,
        "kind": card.kind,
        "status": card.status,
        "title": card.title,
        "source": card.payload.get("source", ""),
    }


def _title(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_TITLE else text[: MAX_TITLE - 1] + "…"


# --- opening ----------------------------------------------------------------------------------------------


def _open(
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
        options=options or [],
        payload=payload,
    )
    event_append(workspace_id=workspace_id, kind="card.opened", data=_card_data(card))
    return card


def card_open_quote(
    *, workspace_id: int, task: Task | None, title: str, body: str, payload: dict[str, Any], turn: Turn | None = None
) -> Card:
    """A quote card for spending that a registered QuoteHandler settles (payload["source"] names it). The
    task, if any, is locked by the caller; its earlier cards stay (this is not a new question to it)."""
    handler = QUOTE_HANDLERS[payload["source"]]
    options = [o for o in QUOTE_OPTIONS if o["id"] in handler.actions]
    return _open(
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
        event_append(workspace_id=task.workspace_id, kind="card.cancelled", data={**_card_data(card), "reason": reason})
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
    if waiting_for.get("type") == "person":
        question = str(waiting_for.get("question") or "The agent needs your answer.")
        labels = [str(label) for label in waiting_for.get("options") or []]
        options = [{"id": str(n), "label": label} for n, label in enumerate(labels, start=1)]
        item = _current_item(task)
        link = _item_link(item) if item is not None and item.needs_confirmation else {}
        return _open(
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
        body = f"{items} × {operation} at {per_item} credits each, {amount} credits in all."
        if reasons:
            body += f" A person's approval is needed because of: {', '.join(map(str, reasons))}."
        return _open(
            task,
            kind=CardKind.QUOTE,
            title=f"Approve {amount} credits for {operation}",
            body=body,
            options=QUOTE_OPTIONS,
            payload={
                "source": "approval",
                "quote": waiting_for.get("quote"),
                "operation": operation,
                "amount": amount,
                "per_item": per_item,
                "items": items,
                "reasons": reasons,
            },
            turn=turn,
        )
    return None


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
    return _open(
        task,
        kind=CardKind.CONFIRM,
        title=f"Confirm before the agent goes on: {item.title}",
        body="This step needs your confirmation before it is carried out. Confirm to let the agent go on, or "
        "adjust to tell it what to change.",
        payload={"source": "safety_net", **_item_link(item)},
        turn=turn,
    )


def card_open_to_continue(task: Task, *, turn: Turn | None = None) -> Card:
    """Autonomy "ask": instead of continuing by itself, the task asks whether to go on (task row locked)."""
    item = _current_item(task)
    title = f"Continue with: {item.title}?" if item is not None else "Continue with the next step?"
    return _open(
        task,
        kind=CardKind.CONFIRM,
        title=title,
        body="This task asks before each next step. Confirm to let it go on, or adjust to change the plan.",
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
            if irreversible:
                title, reason = f"Confirm {tool} — it cannot be undone", "irreversible"
            else:
                title, reason = f"Confirm the paid step {tool}", "autonomy_ask"
            open_card = _open(
                task,
                kind=CardKind.CONFIRM,
                title=title,
                body=f"The agent wants to run {tool} with "
                f"{json.dumps(arguments, ensure_ascii=False, sort_keys=True, default=str)}.",
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
    return {"type": "person", "card": open_card.pk, "call": call_id, "reason": open_card.payload.get("reason")}


# --- acting -----------------------------------------------------------------------------------------------


def _locked(*, access: Access, card_id: int) -> tuple[Card, Task | None]:
    """The card and its task, locked in the agents' order (task, then card). NotFound outside the workspace."""
    row = Card.objects.filter(pk=card_id, workspace=access.workspace).values("task_id").first()
    if row is None:
        raise NotFound("Card not found.")
    task = task_qs_for_update().filter(pk=row["task_id"]).first() if row["task_id"] else None
    card = card_qs_for_update().get(pk=card_id)
    return card, task


def _needs_person(card: Card, action: str) -> bool:
    """Money and irreversible operations are authorised only by a person's own action, never by a key."""
    return action == "approve" or (action == "confirm" and card.payload.get("reason") == "irreversible")


def check_card_action(
    *,
    access: Access,
    card: Card,
    task: Task | None,
    action: str,
    option: str | None,
    text: str | None,
    budget: int | None,
) -> None:
    """Validate and authorise an action on a locked card; raise the error the caller should see."""
    allowed = _allowed(card)
    if action not in allowed and not (action == ANSWER and card.kind in (CardKind.CONFIRM, CardKind.CHOICE)):
        raise InvalidInput(
            f"A {card.kind} card takes {', '.join(allowed)}; not {action!r}.",
            code="invalid_action",
            details={"allowed": list(allowed), "action": action},
        )
    if action == "choose" and option not in {o.get("id") for o in card.options}:
        raise InvalidInput(
            "Choose one of the card's options.",
            code="invalid_option",
            details={"options": [o.get("id") for o in card.options], "option": option},
        )
    if action in ("adjust", ANSWER) and not (text and text.strip()):
        raise InvalidInput("Say what to change.", code="text_required", details={"action": action})
    if budget is not None and action != "approve":
        raise InvalidInput("A budget goes only with approve.", code="invalid", details={"action": action})
    if _needs_person(card, action) and (access.user is None or access.api_key is not None):
        raise PermissionDenied(
            "Only a person can approve spending or confirm an irreversible operation; API keys cannot.",
            code="person_required",
            details={"required": "person", "action": action},
        )
    if task is not None and task.status == TaskStatus.CANCELLED:
        raise Conflict("This card's task was cancelled.", code="task_cancelled", details={"task": task.pk})
    if card.status != CardStatus.OPEN:
        raise Conflict(
            "This card was already resolved." if card.status == CardStatus.RESOLVED else "This card was withdrawn.",
            code="card_resolved" if card.status == CardStatus.RESOLVED else "card_cancelled",
            details={"status": card.status, "resolution": card.resolution},
        )


@transaction.atomic
def card_act(
    *,
    access: Access,
    card_id: int,
    action: str,
    option: str | None = None,
    text: str | None = None,
    budget: int | None = None,
) -> Card:
    """Resolve an open card with one action: confirm, adjust (text), choose (option), approve or decline.

    Exactly once: the card row is locked, and a resolved card answers 409 `card_resolved`. The answer goes to
    the task's inbox and starts its next turn; `approve` grants the task a budget (the quote's amount, or
    `budget`) through billing and wakes it; `decline` stops a task waiting for that spending, and the model
    reads why at its next turn. Editors and owners; `approve` and irreversible confirmations by a person only.
    """
    access.require(Role.EDITOR)
    card, task = _locked(access=access, card_id=card_id)
    check_card_action(access=access, card=card, task=task, action=action, option=option, text=text, budget=budget)
    if card.kind == CardKind.CLARIFY and task is None:
        # The Router's clarification: choosing routes the person's original message (agents.services.main).
        from agents.services.main import main_clarification_apply

        main_clarification_apply(access=access, card_id=card.pk, option_id=option)
        card.refresh_from_db()
        return card
    resolution: dict[str, Any] = {"action": action, "by": access.actor}
    if action == "choose":
        resolution.update(option=option, label=next(o.get("label") for o in card.options if o.get("id") == option))
    if text:
        resolution["text"] = text.strip()
    handler = _handler(card)
    if action == "approve" and handler is not None:
        if budget is not None and budget != card.payload.get("amount"):
            raise InvalidInput(
                "This spending is approved at its quoted amount.",
                code="invalid",
                details={"amount": card.payload.get("amount"), "budget": budget},
            )
        approval = handler.approve(access=access, card=card)
        resolution.update(approval=approval.pk, budget=approval.amount)
    elif action == "approve" and "api_request" in card.payload.get("reasons", []) and budget is None:
        # Work asked through the API is approved step by step: this approves exactly the quoted step.
        approval = approval_grant(access=access, quote_id=card.payload["quote"])
        resolution.update(approval=approval.pk, budget=approval.amount)
    elif action == "approve":
        amount = budget if budget is not None else card.payload.get("amount")
        approval = approval_grant(access=access, task_id=task.pk if task else None, budget=amount)
        resolution.update(approval=approval.pk, budget=approval.amount)
    if action == "decline" and handler is not None:
        handler.decline(access=access, card=card)
    card_move(card, CardStatus.RESOLVED)
    card.resolution = resolution
    card.resolved_by, card.resolved_at = access.user, timezone.now()
    card.save(update_fields=["status", "resolution", "resolved_by", "resolved_at"])
    event_append(
        workspace_id=card.workspace_id,
        kind="card.resolved",
        data={**_card_data(card), "action": action, "option": option, "by": access.actor},
    )
    if task is None:
        return card
    _deliver(access=access, card=card, task=task)
    return card


def _deliver(*, access: Access, card: Card, task: Task) -> None:
    """Carry the resolution to the task (locked): a person acted, so the auto-continuation count restarts."""
    action = card.resolution["action"]
    task.auto_turns = 0
    task.save(update_fields=["auto_turns"])
    if action == "approve":
        _note(
            task,
            f"[card {card.pk}] The person approved a budget of {card.resolution['budget']} credits "
            f"for {card.payload.get('operation') or 'this plan'}. Go on with the plan.",
        )
        # The task wakes the way every approval wakes it — billing's approval_granted reaction, after commit
        # (and the watchdog's sweep if that reaction is lost) — never by a second path of its own.
        return
    if action == "decline":
        _note(
            task,
            f"[card {card.pk}] The person declined spending {card.payload.get('amount')} credits for "
            f"{card.payload.get('operation')}. Nothing was spent. Do not try it again; ask what they want instead.",
        )
        if task.status == TaskStatus.WAITING and task.waiting_for.get("type") == "approval":
            task_status_set(task, TaskStatus.IDLE, reason="spending_declined", waiting_for={})
        return
    message_post(access=access, task_id=task.pk, text=_answer_text(card))


def _answer_text(card: Card) -> str:
    """What the model reads in the task's inbox: the card it answers, and the person's decision."""
    resolution = card.resolution
    action, note = resolution["action"], resolution.get("text", "")
    about = f"[card {card.pk}: {card.title}]"
    if action == "choose":
        return f"{about} The person chose: {resolution['label']}." + (f" {note}" if note else "")
    if action == ANSWER:
        return f"{about} The person answered: {note}"
    if action == "adjust":
        return f"{about} The person asked for changes: {note}"
    if card.payload.get("source") == "confirm_call":
        return f"{about} The person confirmed. Call {card.payload.get('tool')} again with the same arguments to run it."
    return f"{about} The person confirmed; go on." + (f" {note}" if note else "")


def _note(task: Task, text: str) -> InboxMessage:
    """A runtime note for the model: read at the task's next turn, never a reason to start one."""
    message = InboxMessage.objects.create(task=task, source=RUNTIME_NOTE, text=text)
    event_append(
        workspace_id=task.workspace_id,
        kind="inbox.posted",
        data={"task": task.pk, "message": message.pk, "status": message.status, "source": RUNTIME_NOTE},
    )
    return message


def card_reply(*, access: Access, card_id: int, text: str) -> Card:
    """A free-text reply to a card (the Main entry point's `card` target).

    Typing one of a choice card's options chooses it; any other reply is the person's answer (an `adjust` for
    a quote card: typed text never approves spending — only the approve action does).
    """
    card = Card.objects.filter(pk=card_id, workspace=access.workspace).only("kind", "options").first()
    if card is None:
        raise NotFound("Card not found.")
    typed = " ".join(text.split()).casefold()
    if card.kind in (CardKind.CHOICE, CardKind.CLARIFY):
        for option in card.options:
            if typed in (str(option.get("label", "")).casefold(), str(option.get("id", "")).casefold()):
                return card_act(access=access, card_id=card_id, action="choose", option=option.get("id"))
    action = "adjust" if card.kind == CardKind.QUOTE else ANSWER
    return card_act(access=access, card_id=card_id, action=action, text=text)
