"""Episodic summaries: what happened in a piece of work, for when the person comes back to it (seed §7.1).

One episode per task, written when the task finishes and rewritten in place when it finishes again. Each
episode is linked (`summarises`) to the evidence and memory versions it drew on, so a forget that reaches
any of them finds the episode and rebuilds it.
"""

from collections.abc import Iterable
from datetime import datetime

from django.db import transaction
from django.db.models import QuerySet

from lomote.kernel.exceptions import InvalidInput
from memory.models import Derivation, DerivationRole, Episode, Evidence, MemoryVersion

TITLE_CHARS = 300


def _ids_in_workspace(model, workspace_id: int, ids: list[int], what: str) -> None:
    found = set(model.objects.filter(workspace_id=workspace_id, pk__in=ids).values_list("pk", flat=True))
    unknown = [i for i in ids if i not in found]
    if unknown:
        raise InvalidInput(
            f"Unknown {what} for this workspace: {unknown}.", code="unknown_source", details={what: unknown}
        )


def episode_write(
    *,
    workspace_id: int,
    task_id: int,
    title: str,
    summary: str,
    period_start: datetime,
    period_end: datetime,
    evidence_ids: Iterable[int] = (),
    version_ids: Iterable[int] = (),
) -> Episode:
    """Write the episode of `task_id`: create it, or update the existing one in place (title, summary, period).

    Derivation links are added, never removed: a rewritten summary may still carry what an earlier one drew
    on, and a link too many only makes a forget rebuild the episode, where a link too few would let
    forgotten content survive in it. Evidence and versions must belong to the workspace (InvalidInput).
    """
    title = " ".join(title.split())[:TITLE_CHARS]
    if not title:
        raise InvalidInput("An episode needs a title.", code="episode_title_required")
    if period_end < period_start:
        raise InvalidInput("An episode cannot end before it starts.", code="episode_period_invalid")
    evidence_ids = sorted(set(evidence_ids))
    version_ids = sorted(set(version_ids))
    _ids_in_workspace(Evidence, workspace_id, evidence_ids, "evidence")
    _ids_in_workspace(MemoryVersion, workspace_id, version_ids, "versions")

    with transaction.atomic():
        episode = (
            Episode.objects.select_for_update(no_key=True)
            .filter(workspace_id=workspace_id, task_id=task_id)
            .order_by("pk")
            .first()
        )
        if episode is None:
            episode = Episode.objects.create(
                workspace_id=workspace_id,
                task_id=task_id,
                title=title,
                summary=summary,
                period_start=period_start,
                period_end=period_end,
            )
            linked: set[tuple[int | None, int | None]] = set()
        else:
            episode.title, episode.summary = title, summary
            episode.period_start, episode.period_end = period_start, period_end
            episode.save(update_fields=["title", "summary", "period_start", "period_end", "updated_at"])
            linked = set(
                Derivation.objects.filter(episode=episode, role=DerivationRole.SUMMARISES).values_list(
                    "evidence_id", "from_version_id"
                )
            )
        sources = [(i, None) for i in evidence_ids] + [(None, i) for i in version_ids]
        Derivation.objects.bulk_create(
            Derivation(
                workspace_id=workspace_id,
                role=DerivationRole.SUMMARISES,
                episode=episode,
                evidence_id=evidence_id,
                from_version_id=version_id,
            )
            for evidence_id, version_id in sources
            if (evidence_id, version_id) not in linked
        )
    return episode


def episodes_for(*, workspace_id: int, task_id: int | None = None) -> QuerySet[Episode]:
    """The workspace's episodes, most recent first (one task's when `task_id` is given), with their links."""
    episodes = Episode.objects.filter(workspace_id=workspace_id).order_by("-period_end", "-pk")
    if task_id is not None:
        episodes = episodes.filter(task_id=task_id)
    return episodes.prefetch_related("derived_from")
