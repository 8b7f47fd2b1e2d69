"""The search rows of memory versions (MemoryIndex): one per ACTIVE version, nothing else.

Recall searches these rows only, so a superseded or forgotten version must lose its row the moment it stops
being active; the services that move versions call `index_put` and `index_drop`. PostgreSQL searches the
rows with a GIN index over their text (migration 0002); SQLite reads them with icontains.
"""

from collections.abc import Iterable

from memory.models import MemoryIndex, MemoryVersion, VersionStatus
from memory.search import index_document


def _indexable(version: MemoryVersion) -> bool:
    return version.status == VersionStatus.ACTIVE and bool(version.content)


def index_put_many(versions: Iterable[MemoryVersion]) -> int:
    """Write (insert or replace) the search rows of active versions in one statement; returns how many.

    A version that is not active, or whose content was erased, gets its row dropped instead: a late or
    replayed call can never put stale or forgotten content back into search. Reads each version's memory
    (for its subject): pass versions with `memory` selected to save a query each.
    """
    versions = list(versions)
    rows = [
        MemoryIndex(version_id=v.pk, workspace_id=v.workspace_id, document=index_document(v.content, v.memory.subject))
        for v in versions
        if _indexable(v)
    ]
    index_drop([v.pk for v in versions if not _indexable(v)])
    if rows:
        MemoryIndex.objects.bulk_create(
            rows, update_conflicts=True, unique_fields=["version"], update_fields=["document", "workspace"]
        )
    return len(rows)


def index_put(version: MemoryVersion) -> bool:
    """Write the search row of `version` (its content and its memory's subject, folded). False if the version
    is not active or has no content: then its row is dropped instead."""
    return index_put_many([version]) == 1


def index_drop(versions: Iterable[MemoryVersion | int]) -> int:
    """Drop the search rows of these versions (rows or ids); returns how many there were."""
    ids = [v.pk if isinstance(v, MemoryVersion) else v for v in versions]
    if not ids:
        return 0
    deleted, _ = MemoryIndex.objects.filter(version_id__in=ids).delete()
    return deleted
