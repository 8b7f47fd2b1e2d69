"""Deleting an artifact (DESIGN §5, §9): irreversible, so always confirmed on a card by a person, never by an API
key alone; the card's confirmation carries it out (workspace.services.artifacts.artifact_delete) in the card's
own transaction. Mirrors the memory forget (agents/services/memory_forget.py).

    artifact_delete_ask(*, access, artifact_id) -> tuple[Card, bool]
        The confirm card for deleting the artifact, and whether it was opened now. Asking again while it is
        open returns the same card. Editors and owners; another workspace's or a deleted artifact is 404.

Confirming deletes it for good (`deleted_at` set): it leaves listings, search and asset collections, and every
task that had seen it finds a change notice naming who deleted it. Adjusting the card keeps the artifact.
"""

from typing import Any

from django.db import transaction
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from agents.models import Card, CardKind, CardStatus
from agents.services.cards import CONFIRM_HANDLERS, card_open_confirm
from lomote.kernel.exceptions import DomainError
from workspace.models import Artifact, ArtifactView, Role
from workspace.selectors import Access, artifact_get
from workspace.services.artifacts import artifact_delete

SOURCE = "artifact_delete"
# The kinds' names as the card says them (ArtifactKind's labels, in the card's language).
KIND_NAMES = {
    "image": gettext_lazy("Image"),
    "video": gettext_lazy("Video"),
    "3d": gettext_lazy("3D asset"),
    "document": gettext_lazy("Document"),
    "asset_collection": gettext_lazy("Asset collection"),
    "flow": gettext_lazy("Flow"),
}


def _describe(artifact: Artifact) -> str:
    versions = artifact.current_version
    tasks = ArtifactView.objects.filter(artifact=artifact).count()
    said = ngettext(
        "%(kind)s “%(title)s” (#%(id)s), %(versions)s version.",
        "%(kind)s “%(title)s” (#%(id)s), %(versions)s versions.",
        versions,
    ) % {
        "kind": str(KIND_NAMES.get(artifact.kind, artifact.get_kind_display())),
        "title": artifact.title,
        "id": artifact.pk,
        "versions": versions,
    }
    said += " " + _(
        "Deleting it cannot be undone: it leaves the canvas, search and its collections, and no task can use it "
        "any more."
    )
    if tasks:
        said += " " + ngettext(
            "%(count)s task used it and will be told.", "%(count)s tasks used it and will be told.", tasks
        ) % {"count": tasks}
    return said


@transaction.atomic
def artifact_delete_ask(*, access: Access, artifact_id: int) -> tuple[Card, bool]:
    """The card a person confirms to delete the artifact (module docstring)."""
    access.require(Role.EDITOR)
    artifact = artifact_get(workspace_id=access.workspace.pk, artifact_id=artifact_id)
    waiting = (
        Card.objects.filter(
            workspace=access.workspace,
            kind=CardKind.CONFIRM,
            status=CardStatus.OPEN,
            payload__source=SOURCE,
            payload__artifact=artifact.pk,
        )
        .order_by("pk")
        .first()
    )
    if waiting is not None:
        return waiting, False
    card = card_open_confirm(
        workspace_id=access.workspace.pk,
        title=_("Delete “%(title)s” for good?") % {"title": artifact.title},
        body=_describe(artifact),
        payload={
            "source": SOURCE,
            "artifact": artifact.pk,
            "title": artifact.title,
            "kind": artifact.kind,
            "reason": "irreversible",
            "asked_by": access.actor,
        },
    )
    return card, True


class ArtifactDelete:
    def confirm(self, *, access: Access, card: Card) -> dict[str, Any]:
        # Only a person gets here: the card's reason is "irreversible" (card_actions._needs_person).
        try:
            artifact = artifact_delete(
                workspace_id=card.workspace_id, artifact_id=card.payload["artifact"], deleted_by=access.user
            )
        except DomainError as error:
            if error.code != "artifact_deleted":
                raise
            # Deleted meanwhile through another card: this confirmation has nothing left to do.
            return {"artifact": card.payload["artifact"], "deleted": False, "already_deleted": True}
        return {"artifact": artifact.pk, "deleted": True, "deleted_at": artifact.deleted_at.isoformat()}

    def adjust(self, *, access: Access, card: Card, text: str) -> None:
        """The person answered something else than "confirm": the artifact stays, and nothing else happens."""


def register() -> None:
    CONFIRM_HANDLERS[SOURCE] = ArtifactDelete()
