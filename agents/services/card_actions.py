"""A person's (or an editor key's) action on a card: validated, authorised and carried to the card's task.

A card is resolved once, by one person's (or, except for money and irreversible operations, one editor
key's) recorded action, under the card's row lock. The answer reaches the task's inbox and starts its next
turn: the person never has to type "continue". Approving spending grants a budget through billing — the only
source of spending authority — and the task wakes through billing's approval reaction, like any approval.
The Router's clarification cards are Main's (agents/main/messages.py `main_card_act`).
"""

from typing import Any

from django.db import transaction
from django.utils.translation import gettext_noop

from agents.locks import card_qs_for_update, task_qs_for_update
from agents.models import RUNTIME_NOTE, Card, CardKind, CardStatus, InboxMessage, Task, TaskStatus
from agents.services.cards import ANSWER, card_allowed_actions, card_resolve, confirm_handler, quote_handler
from agents.services.inbox import message_post
from agents.services.lightweight import do_task_promote
from agents.services.stalls import SOURCE as STALL_SOURCE
from agents.services.stalls import stall_answer
from agents.services.task_status import task_status_set
from billing.services.approvals import approval_grant
from lomote.kernel.exceptions import Conflict, InvalidInput, NotFound, PermissionDenied
from workspace.models import Role
from workspace.selectors import Access
from workspace.services.events import event_append

# The actions whose answer is text the person typed; a confirmation or a choice is their answer to the runtime.
OWN_WORDS = ("adjust", "iterate", ANSWER)


def _locked(*, access: Access, card_id: int) -> tuple[Card, Task | None]:
    """The card and its task, locked in the agents' order (task, then card). NotFound outside the workspace."""
    row = Card.objects.filter(pk=card_id, workspace=access.workspace).values("task_id").first()
    if row is None:
        raise NotFound(gettext_noop("Card not found."))
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
    allowed = card_allowed_actions(card)
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
    if action in ("adjust", "iterate", ANSWER) and not (text and text.strip()):
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
    """Resolve an open card with one action: confirm, adjust (text), choose (option), approve or decline; on a
    quick request's result card, iterate (text: the change, delivered like a message to the task — iterating
    again promotes it) or keep (the task becomes persistent and joins the task list).

    Exactly once: the card row is locked, and a resolved card answers 409 `card_resolved`. The answer goes to
    the task's inbox and starts its next turn; `approve` grants the task a budget (the quote's amount, or
    `budget`) through billing and wakes it; `decline` stops a task waiting for that spending, and the model
    reads why at its next turn. Editors and owners; `approve` and irreversible confirmations by a person only.
    """
    access.require(Role.EDITOR)
    card, task = _locked(access=access, card_id=card_id)
    if card.kind == CardKind.CLARIFY and task is None:
        # Choosing routes the person's original message: Main answers the Router's cards (main_card_act).
        raise InvalidInput(
            "A clarification card is answered through Main.", code="invalid_action", details={"card": card.pk}
        )
    check_card_action(access=access, card=card, task=task, action=action, option=option, text=text, budget=budget)
    resolution: dict[str, Any] = {"action": action, "by": access.actor}
    if action == "choose":
        resolution.update(option=option, label=next(o.get("label") for o in card.options if o.get("id") == option))
    if text:
        resolution["text"] = text.strip()
    handler = quote_handler(card)
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
    confirming = confirm_handler(card)
    if confirming is not None and action == "confirm":
        resolution["outcome"] = confirming.confirm(access=access, card=card)
    elif confirming is not None and action == "adjust":
        confirming.adjust(access=access, card=card, text=resolution["text"])
    card_resolve(card, resolution=resolution, by=access.actor, user=access.user, option=option)
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
    if action == "keep":
        # The person keeps a quick result as a task: it joins the task list, with its history.
        do_task_promote(task, by=access.actor)
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
    if card.payload.get("source") == STALL_SOURCE:
        # The runtime's own card for a task that stopped: the person's answer replaces what it could not do.
        request = stall_answer(card, task)
        if request is not None:
            message_post(access=access, task_id=task.pk, text=request)
            return
    message_post(access=access, task_id=task.pk, text=_answer_text(card), card_answer=action not in OWN_WORDS)


def _answer_text(card: Card) -> str:
    """What the model reads in the task's inbox: the card it answers, and the person's decision."""
    resolution = card.resolution
    action, note = resolution["action"], resolution.get("text", "")
    about = f"[card {card.pk}: {card.title}]"
    if action == "choose":
        return f"{about} The person chose: {resolution['label']}." + (f" {note}" if note else "")
    if action == ANSWER:
        return f"{about} The person answered: {note}"
    if action in ("adjust", "iterate"):
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
    a quote card: typed text never approves spending — only the approve action does; an `iterate` for a result
    card).
    """
    card = Card.objects.filter(pk=card_id, workspace=access.workspace).only("kind", "options").first()
    if card is None:
        raise NotFound(gettext_noop("Card not found."))
    typed = " ".join(text.split()).casefold()
    if card.kind in (CardKind.CHOICE, CardKind.CLARIFY):
        for option in card.options:
            if typed in (str(option.get("label", "")).casefold(), str(option.get("id", "")).casefold()):
                return card_act(access=access, card_id=card_id, action="choose", option=option.get("id"))
    action = {CardKind.QUOTE: "adjust", CardKind.RESULT: "iterate"}.get(card.kind, ANSWER)
    return card_act(access=access, card_id=card_id, action=action, text=text)
