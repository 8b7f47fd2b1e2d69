"""Asking to forget (DESIGN §8, figure 8): the person names a memory or a piece of evidence; forgetting is
irreversible, so it is always confirmed on a card by a person (never an API key), and the card's confirmation
carries it out (memory.services.forget.forget_execute) in the card's own transaction."""

from typing import Any

from django.db import transaction
from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from agents.models import Card
from agents.services.cards import CONFIRM_HANDLERS, card_open_confirm
from memory.models import ForgetRequest, ForgetStatus
from memory.services.forget import (
    forget_cancel,
    forget_card_attach,
    forget_describe,
    forget_execute,
    forget_request,
    forget_target,
)
from workspace.selectors import Access

SOURCE = "memory_forget"
FORGOTTEN_BODY = gettext_lazy("Forgotten: it no longer feeds memory, and what was built on it was erased and rebuilt.")


@transaction.atomic
def memory_forget_ask(
    *, access: Access, memory_id: int | None = None, evidence: dict | None = None
) -> tuple[ForgetRequest, Card | None]:
    """The forget request and the card that confirms it. Asking again for the same thing returns the same
    request (and its card while it waits); once done, there is no card: nothing more happens."""
    target = forget_target(access=access, memory_id=memory_id, evidence=evidence)
    request, new = forget_request(access=access, target=target)
    if not new:
        card = Card.objects.filter(pk=request.card_id).first() if request.card_id else None
        return request, card if request.status == ForgetStatus.AWAITING_CONFIRMATION else None
    card = card_open_confirm(
        workspace_id=access.workspace.pk,
        title=_("Forget this for good?"),
        body=forget_describe(request),
        payload={
            "source": SOURCE,
            "forget": request.pk,
            "reason": "irreversible",
            "language": translation.get_language() or "",
        },
    )
    forget_card_attach(request, card.pk)
    request.card_id = card.pk
    return request, card


class MemoryForget:
    def confirm(self, *, access: Access, card: Card) -> dict[str, Any]:
        done = forget_execute(workspace_id=card.workspace_id, forget_id=card.payload["forget"])
        # The card quoted what it asked to forget: once forgotten, it no longer does.
        # Said in the language the card was asked in (its payload keeps it).
        with translation.override(card.payload.get("language") or None):
            card.body = str(FORGOTTEN_BODY)
        Card.objects.filter(pk=card.pk).update(body=card.body)
        report = done.report or {}
        return {key: report.get(key) for key in ("versions_erased", "versions_rebuilt", "profile_version")}

    def adjust(self, *, access: Access, card: Card, text: str) -> None:
        forget_cancel(workspace_id=card.workspace_id, forget_id=card.payload["forget"])


def register() -> None:
    CONFIRM_HANDLERS[SOURCE] = MemoryForget()
