"""The runtime's safety net (seed §11.3, DESIGN §3): a task never stops silently.

Whenever a turn ends with checklist items open, no generation job in flight and no card open for the person, the
runtime opens a card in the same transaction, whatever the model did or failed to do. The card says what the task
understood (its open items), why it stopped (the model's own last words, else the stop reason in words), what it can
do instead (the nearest things the embedded default makes, ranked by the understanding layer's `kind` decision) and
takes the person's words ("say it differently").

Two kinds of stop, two answers:
- the model could not go on with the items (`no_progress`, a quick task that only answered): choosing an option or
  typing words *replaces* those items — they are skipped, naming the card, and the person's request goes to the task
  as their own words, so the model plans it afresh;
- the task stopped at a limit or on a failure (`auto_turn_cap`, a step or token limit, a model error): "Go on" / "Try
  again" starts the next turn with the plan as it was.
The stall count of DESIGN §11 is 0 by construction: the card opens before the status event that records the stop.
"""

from typing import Any

from django.utils import translation
from django.utils.translation import gettext as _

from agents.models import Card, CardKind, CardStatus, ChecklistItem, ChecklistStatus, Step, Task, TaskStatus, Turn
from agents.services.cards import card_open
from agents.services.task_status import task_status_set
from lomote.understanding import decide
from workspace.models import TERMINAL_JOB_STATUSES, GenerationJob
from workspace.services.events import event_append

OPEN = (ChecklistStatus.PENDING, ChecklistStatus.IN_PROGRESS)
SOURCE = "stalled"
# Stops after which the model could not do the items as asked: the person's answer replaces them.
COULD_NOT = ("no_progress", "answered")
# What the embedded default makes, as the understanding layer's kind labels, in the order offered when the
# decision ranks nothing makeable (agents/tools/generation.py makes the images in their formats).
MAKEABLE = ("image", "poster", "logo", "social_post", "story_cover", "banner", "video", "model_3d", "document")
FALLBACK = ("image", "video", "document")
CHOICES = 3
MAX_WORDS = 400


def _offers() -> dict[str, str]:
    # Translated where called (under the task's language), so each entry is read in that language.
    return {
        "image": _("Make it as an image"),
        "poster": _("Make it as a poster"),
        "logo": _("Make it as a logo"),
        "social_post": _("Make it as a square social post"),
        "story_cover": _("Make it as a story cover (9:16)"),
        "banner": _("Make it as a wide banner"),
        "video": _("Make it as a short video"),
        "model_3d": _("Make it as a 3D model"),
        "document": _("Write it as a document"),
    }


def _reasons() -> dict[str, str]:
    return {
        "no_progress": _("I could not find a way to do this with the tools I have."),
        "answered": _("I answered, but made nothing for it."),
        "auto_turn_cap": _("I went on by myself as many times as allowed, and stopped to check with you."),
    }


def task_stop(task: Task, turn: Turn | None, *, reason: str, **status: Any) -> Card | None:
    """Stop the task (locked) for `reason`: idle, unless items are open with nothing in flight and nobody asked —
    then it waits on the runtime's card, which opens first. `status`: task_status_set's other arguments."""
    card = stall_card_open(task, turn, reason=reason)
    if card is None:
        task_status_set(task, TaskStatus.IDLE, reason=reason, waiting_for={}, **status)
    else:
        waiting_for = {"type": "person", "card": card.pk, "stalled": True}
        task_status_set(task, TaskStatus.WAITING, reason=reason, waiting_for=waiting_for, **status)
    return card


def stall_card_open(task: Task, turn: Turn | None, *, reason: str) -> Card | None:
    """Open the card for a task about to stop with open items (its row locked, in the stop's transaction); None
    when the person is already asked, a job will wake the task, or nothing is left to do."""
    items = list(task.checklist.filter(status__in=OPEN).order_by("position"))
    if not items:
        return None
    if Card.objects.filter(task=task, status=CardStatus.OPEN).exists():
        return None
    in_flight = GenerationJob.objects.filter(workspace_id=task.workspace_id, task_id=task.pk).exclude(
        status__in=TERMINAL_JOB_STATUSES
    )
    if in_flight.exists():
        return None
    with translation.override(task.language or "en"):
        return _open(task, turn, reason=reason, items=items)


def _open(task: Task, turn: Turn | None, *, reason: str, items: list[ChecklistItem]) -> Card:
    could_not = reason in COULD_NOT
    titles = "; ".join(f"“{item.title}”" for item in items[:5]) + (" …" if len(items) > 5 else "")
    words = _own_words(turn)
    why = words or _reasons().get(reason) or _("It stopped (%(reason)s).") % {"reason": reason.replace("_", " ")}
    if could_not:
        labels = _nearest(" ".join(item.title for item in items))
        offers = _offers()
        options = [{"id": label, "label": offers[label]} for label in labels]
        title = _("I could not go on with %(items)s") % {"items": titles}
        body = "\n".join(
            [
                _("What I understood: %(items)s.") % {"items": titles},
                _("Why I stopped: %(why)s") % {"why": why},
                _("Choose what I should make instead, or say it differently in your own words."),
            ]
        )
    else:
        options = [{"id": "go_on", "label": _("Try again") if turn and turn.error else _("Go on")}]
        title = _("Stopped before finishing %(items)s") % {"items": titles}
        body = "\n".join(
            [
                _("Still to do: %(items)s.") % {"items": titles},
                _("Why I stopped: %(why)s") % {"why": why},
                _("Go on with the plan as it is, or tell me what to change."),
            ]
        )
    return card_open(
        task,
        kind=CardKind.CHOICE,
        title=title,
        body=body,
        options=options,
        payload={
            "source": SOURCE,
            "reason": reason,
            "replaces": could_not,
            "items": [item.pk for item in items],
            "subject": " ".join(item.title for item in items)[:MAX_WORDS],
        },
        turn=turn,
    )


def _own_words(turn: Turn | None) -> str:
    """The model's last words to the person in this turn, or its error's message."""
    if turn is None:
        return ""
    if turn.error:
        return str(turn.error.get("message") or "")[:MAX_WORDS]
    text = Step.objects.filter(turn=turn).exclude(text="").order_by("-index").values_list("text", flat=True).first()
    return " ".join((text or "").split())[:MAX_WORDS]


def _nearest(text: str) -> list[str]:
    """The kinds of work nearest to what was asked, by meaning: the kind decision's ranking, makeable ones first."""
    ranking = [label for label, _p in decide("kind", text).ranking if label in MAKEABLE]
    for label in FALLBACK:
        if label not in ranking:
            ranking.append(label)
    return ranking[:CHOICES]


def stall_answer(card: Card, task: Task) -> str | None:
    """A person answered a stall card (the task locked): the request the task receives as their own words, or None
    for "go on", which the usual card answer carries. Items the answer replaces are skipped, naming the card."""
    resolution, payload = card.resolution, card.payload
    action = resolution.get("action")
    if action == "choose" and resolution.get("option") == "go_on":
        return None
    if not payload.get("replaces"):
        return None
    request = resolution.get("text", "")
    if action == "choose":
        label = str(resolution.get("label") or "")
        request = f"{label}: {payload.get('subject', '')}" + (f" — {request}" if request else "")
    replaced = ChecklistItem.objects.filter(task=task, pk__in=payload.get("items") or [], status__in=OPEN)
    for item in replaced:
        item.status = ChecklistStatus.SKIPPED
        item.evidence = (item.evidence + "\n" if item.evidence else "") + (
            f"Replaced by what the person asked on card {card.pk}."
        )
        item.save(update_fields=["status", "evidence", "updated_at"])
        event_append(
            workspace_id=task.workspace_id,
            kind="task.checklist",
            data={"task": task.pk, "position": item.position, "status": item.status, "card": card.pk},
        )
    return request.strip() or None
