from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.db.models.functions import Coalesce
from django.utils import timezone

from agents.models import Turn, TurnStatus
from workspace.services.events import event_append


def lease_claim(*, turn_id: int, generation: int, holder: str) -> bool:
    """Take a queued turn for this generation (`lease_claim_turn`). False: someone else has it or a newer
    generation exists — the job is then a no-op. (Cancel and pause end queued turns themselves.)"""
    return lease_claim_turn(turn_id=turn_id, generation=generation, holder=holder) is not None


def lease_claim_turn(*, turn_id: int, generation: int, holder: str) -> Turn | None:
    """Take a queued turn for this generation with one conditional UPDATE; the claimed turn with its task as the
    claim's transaction read them (the runner starts from it instead of reading them again), or None.

    The UPDATE filters on the turn row only: PostgreSQL re-checks such conditions against the row a
    concurrent claimer just wrote, whereas a join or subquery would be checked against the old snapshot
    and let two claimers win.
    """
    now = timezone.now()
    with transaction.atomic():
        claimed = Turn.objects.filter(pk=turn_id, generation=generation, status=TurnStatus.QUEUED).update(
            status=TurnStatus.RUNNING,
            lease_holder=holder[:200],
            lease_expires_at=now + timedelta(seconds=settings.LOMOTE_LEASE_SECONDS),
            attempts=F("attempts") + 1,
            started_at=Coalesce(F("started_at"), now),
        )
        if claimed != 1:
            return None
        turn = Turn.objects.select_related("task").get(pk=turn_id)
        event_append(
            workspace_id=turn.task.workspace_id,
            kind="turn.running",
            data={"task": turn.task_id, "turn": turn_id, "generation": generation, "attempt": turn.attempts},
        )
    return turn
