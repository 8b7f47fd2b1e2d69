"""django-q2 jobs of the memory app. Thin: they carry ids and call a service."""

from memory.services import evidence, extraction


def evidence_extract(evidence_id: int) -> str:
    """Extract memories from one piece of evidence (memory/services/extraction.py). A failure is counted on the
    evidence and raised, so the queue records it; the sweep retries it."""
    outcomes = extraction.evidence_extract(evidence_id=evidence_id)
    if outcomes is None:
        return "not pending"
    return ", ".join(o.action for o in outcomes) or "nothing to remember"


def evidence_sweep() -> str:
    """Re-enqueue extractions that were lost or failed (memory/services/evidence.py)."""
    return f"re-enqueued {len(evidence.evidence_sweep())}"
