"""Memory rows for tests, made with the ORM: the extraction services that normally write them are tested apart."""

from datetime import UTC, datetime

from memory.models import (
    Derivation,
    DerivationRole,
    Evidence,
    EvidenceKind,
    Memory,
    MemoryKind,
    MemoryScope,
    MemoryVersion,
    VersionOperation,
    VersionStatus,
)
from memory.services.index import index_put
from memory.text import content_hash, normalise

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def statement(workspace, text: str, *, task_id: int | None = None) -> Evidence:
    """A statement by the workspace's owner, as evidence."""
    return Evidence.objects.create(
        workspace=workspace,
        kind=EvidenceKind.STATEMENT,
        source_id=f"s{Evidence.objects.count() + 1}",
        task_id=task_id,
        stated_by=workspace.created_by,
        text=text,
        content_hash=content_hash(text),
    )


def remember(
    workspace,
    content: str,
    *,
    subject: str = "",
    kind: str = MemoryKind.PREFERENCE,
    scope: str = MemoryScope.WORKSPACE,
    person=None,
    status: str = VersionStatus.ACTIVE,
    valid_from: datetime = T0,
    valid_to: datetime | None = None,
    memory: Memory | None = None,
) -> MemoryVersion:
    """A memory version stated by the workspace's owner, with its evidence, its link and its search row."""
    if memory is None:
        memory = Memory.objects.create(
            workspace=workspace, scope=scope, person=person, subject=normalise(subject or content)[:200]
        )
    number = memory.versions.count() + 1
    version = MemoryVersion.objects.create(
        workspace=workspace,
        memory=memory,
        number=number,
        kind=kind,
        operation=VersionOperation.ORIGIN if number == 1 else VersionOperation.REFINE,
        status=status,
        content=content if status != VersionStatus.FORGOTTEN else "",
        normalised=normalise(content) if status == VersionStatus.ACTIVE else "",
        valid_from=valid_from,
        valid_to=valid_to,
    )
    evidence = statement(workspace, content)
    Derivation.objects.create(workspace=workspace, role=DerivationRole.ORIGIN, version=version, evidence=evidence)
    index_put(version)
    return version
