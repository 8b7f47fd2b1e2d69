"""The small, stable, versioned profile a workspace's context carries in its prefix (seed §7.1, §7.3).

It holds at most PROFILE_ENTRIES durable things: active preferences and facts of workspace scope — never a
hypothesis the model inferred, never a one-off instruction, never one person's own memory. The best
supported are chosen (the most evidence linked, then the most recent) and listed in memory order, so a new
memory is appended after the existing entries instead of moving them. A rebuild makes a new profile version
only when the entries differ: the number is part of the context prefix's identity, so it must move exactly
when what the prefix says moves.
"""

from typing import NamedTuple

from django.db import IntegrityError, transaction
from django.db.models import Count, Q

from memory.models import (
    Derivation,
    DerivationRole,
    MemoryKind,
    MemoryScope,
    MemoryVersion,
    ProfileEntry,
    ProfileVersion,
    VersionStatus,
)

PROFILE_ENTRIES = 12
PROFILE_KINDS = (MemoryKind.PREFERENCE, MemoryKind.FACT)
_ATTEMPTS = 3  # two rebuilds racing for the same number: the loser re-reads and compares again


class Profile(NamedTuple):
    """The current profile: its version number (0 when there is none yet) and its entries in order."""

    number: int
    entries: list[ProfileEntry]


def profile_current(workspace_id: int) -> Profile:
    """The workspace's current profile in two indexed queries; `Profile(0, [])` before the first version."""
    current = (
        ProfileVersion.objects.filter(workspace_id=workspace_id).order_by("-number").values_list("pk", "number")
    ).first()
    if current is None:
        return Profile(0, [])
    profile_id, number = current
    return Profile(number, list(ProfileEntry.objects.filter(profile_id=profile_id).order_by("position")))


def profile_candidates(workspace_id: int) -> list[MemoryVersion]:
    """The versions the profile should hold now, in entry order (by memory, oldest first)."""
    best = (
        MemoryVersion.objects.filter(
            workspace_id=workspace_id,
            status=VersionStatus.ACTIVE,
            kind__in=PROFILE_KINDS,
            memory__scope=MemoryScope.WORKSPACE,
        )
        .exclude(content="")
        .annotate(support=Count("derived_from", filter=Q(derived_from__evidence__isnull=False)))
        .order_by("-support", "-valid_from", "-pk")[:PROFILE_ENTRIES]
    )
    return sorted(best, key=lambda version: (version.memory_id, version.pk))


def _rebuild(workspace_id: int, reason: str) -> ProfileVersion | None:
    current = ProfileVersion.objects.filter(workspace_id=workspace_id).order_by("-number").first()
    chosen = profile_candidates(workspace_id)
    have = list(current.entries.order_by("position").values_list("version_id", "text")) if current else []
    if [(version.pk, version.content) for version in chosen] == have:
        return current
    profile = ProfileVersion.objects.create(
        workspace_id=workspace_id, number=(current.number if current else 0) + 1, reason=reason[:200]
    )
    entries = ProfileEntry.objects.bulk_create(
        ProfileEntry(profile=profile, version=version, position=position, text=version.content)
        for position, version in enumerate(chosen, start=1)
    )
    Derivation.objects.bulk_create(
        Derivation(
            workspace_id=workspace_id,
            role=DerivationRole.PROFILES,
            profile_entry=entry,
            from_version_id=entry.version_id,
        )
        for entry in entries
    )
    return profile


def profile_rebuild(*, workspace_id: int, reason: str) -> ProfileVersion | None:
    """Bring the profile up to date with the workspace's memories; returns the current version afterwards.

    A new version (number + 1, `reason` recorded) only when the entries differ from the current version's;
    each new entry carries the version's content and a `profiles` derivation to it, so a forget finds it.
    None while the workspace has neither a profile nor anything to put in one. Runs in its own savepoint,
    so it can be called inside a caller's transaction.
    """
    attempt = 1
    while True:
        try:
            with transaction.atomic():
                return _rebuild(workspace_id, reason)
        except IntegrityError:
            if attempt == _ATTEMPTS:
                raise
            attempt += 1
