"""Extraction of one piece of evidence, as a q-job runs it (never inside a turn: DESIGN §8, seed §7.4).

The extractor runs with no transaction open (a model call may take seconds); then one short transaction
locks the workspace and the evidence, checks the evidence still feeds memory and was not extracted meanwhile
(a forget, a duplicate job), applies the candidates and stamps `extracted_at`. Any failure counts an attempt
and leaves `extracted_at` empty, so `evidence_sweep` tries again, up to MAX_ATTEMPTS.
"""

import logging

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from memory.extraction.runner import candidates_extract
from memory.models import Evidence
from memory.services.evidence import evidence_pending
from memory.services.memories import Outcome, candidates_apply, memories_existing
from workspace.locks import workspace_qs_for_update

logger = logging.getLogger(__name__)


def evidence_extract(*, evidence_id: int) -> list[Outcome] | None:
    """Extract and apply the candidates of a pending piece of evidence; None when it is not pending (unknown,
    revoked, already extracted, out of attempts). On failure, counts the attempt and re-raises."""
    evidence = evidence_pending().filter(pk=evidence_id).first()
    if evidence is None:
        return None
    try:
        found, extractor = candidates_extract(
            workspace_id=evidence.workspace_id,
            task_id=evidence.task_id,
            text=evidence.text,
            existing=memories_existing(workspace_id=evidence.workspace_id),
        )
        with transaction.atomic(durable=True):
            workspace_qs_for_update().filter(pk=evidence.workspace_id).first()
            evidence = evidence_pending().select_for_update(of=("self",), no_key=True).filter(pk=evidence_id).first()
            if evidence is None:
                return None
            outcomes = candidates_apply(evidence, found)
            evidence.extracted_at = timezone.now()
            evidence.save(update_fields=["extracted_at"])
    except Exception:
        Evidence.objects.filter(pk=evidence_id, extracted_at__isnull=True).update(
            extraction_attempts=F("extraction_attempts") + 1
        )
        logger.warning("extraction of evidence %s failed; the sweep retries it", evidence_id, exc_info=True)
        raise
    logger.info(
        "evidence %s extracted by the %s extractor: %s",
        evidence_id,
        extractor,
        ", ".join(f"{o.action}" + (f" ({o.reason})" if o.reason else "") for o in outcomes) or "nothing",
    )
    return outcomes
