"""Saying things to memory in tests, the way the feed does: evidence recorded, then extracted by the job's
service (the scripted extractor, unless a test installs a model extractor)."""

import uuid

from django.db.models import Count

from memory.models import Evidence, EvidenceKind, MemoryIndex, MemoryVersion, VersionStatus
from memory.services.evidence import evidence_record
from memory.services.extraction import evidence_extract


def record(workspace, user, text: str, *, kind: str = EvidenceKind.MAIN_MESSAGE) -> Evidence | None:
    return evidence_record(
        workspace_id=workspace.pk,
        kind=kind,
        source_id=uuid.uuid4().hex,
        text=text,
        stated_by_id=user.pk if user is not None else None,
    )


def said(workspace, user, text: str, *, kind: str = EvidenceKind.MAIN_MESSAGE):
    """(the evidence, the outcomes of its extraction)."""
    evidence = record(workspace, user, text, kind=kind)
    return evidence, evidence_extract(evidence_id=evidence.pk)


def active(workspace) -> list[MemoryVersion]:
    return list(
        MemoryVersion.objects.filter(workspace=workspace, status=VersionStatus.ACTIVE)
        .select_related("memory")
        .order_by("memory_id")
    )


def assert_memory_consistent(workspace) -> None:
    """No two active versions with the same content; every active version searchable, no other."""
    duplicates = (
        MemoryVersion.objects.filter(workspace=workspace, status=VersionStatus.ACTIVE)
        .values("normalised")
        .annotate(n=Count("id"))
        .filter(n__gt=1)
    )
    assert not duplicates.exists()
    indexed = set(MemoryIndex.objects.filter(workspace=workspace).values_list("version_id", flat=True))
    assert indexed == {v.pk for v in active(workspace)}
