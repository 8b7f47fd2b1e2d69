"""Evidence: the sources memory is extracted from, each with its revocable right to feed memory (DESIGN §8).

A source is recorded once per (workspace, kind, source id) — a replayed consumption or a re-sent hook records
nothing new — and never when its words were forgotten: a tombstone (the hash of the normal form, never the
text) keeps the same content from coming back. Extraction runs later, in a q-job enqueued after the commit
that recorded the evidence (memory/services/extraction.py); `evidence_sweep` re-enqueues what a lost enqueue
or a failed extraction left pending.
"""

import logging
import uuid
from datetime import timedelta
from functools import partial

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django_q.tasks import async_task

from lomote.kernel.queue_revival import messages_revive
from memory.models import Evidence, EvidenceKind, Tombstone
from memory.text import content_hash

logger = logging.getLogger(__name__)

MAX_ATTEMPTS = 5
SWEEP_AFTER = timedelta(minutes=1)  # an enqueued extraction normally runs well within this
SWEEP_BATCH = 500


def tombstoned(*, workspace_id: int, text: str) -> bool:
    """Whether these words (in their normal form) were forgotten in this workspace."""
    return Tombstone.objects.filter(workspace_id=workspace_id, content_hash=content_hash(text)).exists()


def evidence_record(
    *,
    workspace_id: int,
    kind: str,
    source_id: int | str,
    text: str,
    stated_by_id: int | None = None,
    task_id: int | None = None,
) -> Evidence | None:
    """Record a source once; returns its row (the existing one if it was recorded before), or None — nothing
    recorded — when its words were forgotten in this workspace. Runs in the caller's transaction."""
    text = text or ""
    digest = content_hash(text)
    if Tombstone.objects.filter(workspace_id=workspace_id, content_hash=digest).exists():
        return None
    evidence, _ = Evidence.objects.get_or_create(
        workspace_id=workspace_id,
        kind=kind,
        source_id=str(source_id),
        defaults={"text": text, "content_hash": digest, "stated_by_id": stated_by_id, "task_id": task_id},
    )
    return evidence


def evidence_statement_record(*, workspace_id: int, text: str, stated_by_id: int | None) -> Evidence | None:
    """A person's statement made directly to memory (the memory panel, the API): its own source, already
    applied by the caller, so no extraction job runs on it. None when its words were forgotten."""
    evidence = evidence_record(
        workspace_id=workspace_id,
        kind=EvidenceKind.STATEMENT,
        source_id=uuid.uuid4().hex,
        text=text,
        stated_by_id=stated_by_id,
    )
    if evidence is not None:
        evidence.extracted_at = timezone.now()
        evidence.save(update_fields=["extracted_at"])
    return evidence


def extraction_enqueue(evidence_id: int) -> None:
    """Enqueue the extraction of a piece of evidence once the current transaction commits. If the enqueue is
    lost (the process dies, the broker fails), the sweep finds the evidence still pending."""
    transaction.on_commit(lambda: _enqueue(evidence_id))


def _message_name(evidence_id: int) -> str:
    return f"memory-extract-{evidence_id}"


def _enqueue(evidence_id: int) -> None:
    try:
        async_task(
            "memory.tasks.evidence_extract",
            evidence_id,
            group="memory",
            timeout=settings.LOMOTE_TASK_TIMEOUTS["default"],
            task_name=_message_name(evidence_id),
        )
    except Exception:  # noqa: BLE001 - the sweep re-enqueues pending evidence
        logger.warning("enqueue of the extraction of evidence %s failed", evidence_id, exc_info=True)


def evidence_pending():
    """Evidence that still has the right to feed memory, was not extracted yet and has attempts left."""
    return Evidence.objects.filter(
        feeds_memory=True, extracted_at__isnull=True, extraction_attempts__lt=MAX_ATTEMPTS
    ).exclude(text="")


def evidence_sweep(*, now=None) -> list[int]:
    """Revive the extraction of pending evidence older than SWEEP_AFTER (a lost enqueue, a failed extraction:
    its attempts were counted). Returns the ids enqueued again or handed out again. Safe to run anywhere, any number of
    times: extracting evidence that is no longer pending does nothing."""
    cutoff = (now or timezone.now()) - SWEEP_AFTER
    ids = list(
        evidence_pending().filter(created_at__lt=cutoff).order_by("pk").values_list("pk", flat=True)[:SWEEP_BATCH]
    )
    # A message still waiting (a backlog) is left alone: re-enqueueing it at every sweep grew the queue faster
    # than workers drained it. One a dead process took, or a lost one, is revived.
    revived = messages_revive({_message_name(pk): partial(_enqueue, pk) for pk in ids})
    return [int(name.rsplit("-", 1)[1]) for name in revived]
