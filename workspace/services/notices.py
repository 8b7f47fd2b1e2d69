"""Change notices (DESIGN §9; seed §9.2): who saw which version, and what changed since for each task.

    artifact_seen(*, workspace_id, artifact_id, task_id, version) -> None
        A task read (or wrote) `version`: remember the highest version it has seen, and deliver its pending
        notice about this artifact if that version covers it.
    notices_on_version_added(artifact, version) -> list[ChangeNotice]
        Called by artifact_version_add in the writer's transaction: every OTHER task that saw an older
        version gets a persisted notice ("Storyboard v3 → v4: shot2 changed; re-read first"), one pending
        notice per (artifact, task), widened by later changes. The writing task has seen what it wrote.
        Notices never wake a task: the runtime shows them at the task's next cycle.
    notices_on_artifact_deleted(artifact, *, by) -> list[ChangeNotice]
        Called by artifact_delete in its transaction: every task that saw the artifact, at any version, gets a
        notice that it is gone ("Image “Cat photo” (#12) was deleted by alice…"), replacing a pending one.
    notices_mark_delivered(*, task_id, ids) -> int

Reads: `workspace.selectors.notices_pending(task_id=...)`.
"""

import difflib
import re

from django.db import IntegrityError, transaction
from django.utils import timezone

from workspace.flows.graph import graph_load, nodes_changed
from workspace.models import Artifact, ArtifactKind, ArtifactVersion, ArtifactView, ChangeNotice

HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*\S)\s*$")
MAX_SUMMARY_CHARS = 400


def artifact_seen(*, workspace_id: int, artifact_id: int, task_id: int, version: int) -> None:
    """Record that `task_id` saw `version` of the artifact (never lowers what it saw). Caller's transaction."""
    if not Artifact.objects.filter(pk=artifact_id, workspace_id=workspace_id).exists():
        return
    with transaction.atomic():
        views = ArtifactView.objects.filter(artifact_id=artifact_id, viewer_task_id=task_id)
        if not views.filter(seen_version__gte=version).exists() and not views.update(seen_version=version):
            try:
                with transaction.atomic():
                    ArtifactView.objects.create(artifact_id=artifact_id, viewer_task_id=task_id, seen_version=version)
            except IntegrityError:  # a concurrent first read by the same task
                views.filter(seen_version__lt=version).update(seen_version=version)
        ChangeNotice.objects.filter(
            artifact_id=artifact_id, task_id=task_id, delivered_at__isnull=True, to_version__lte=version
        ).update(delivered_at=timezone.now())


def notices_on_version_added(artifact: Artifact, version: ArtifactVersion) -> list[ChangeNotice]:
    """Leave a notice for every other task that saw an older version (module docstring). Caller holds the
    artifact lock, in the writer's transaction."""
    author_task = version.author_task_id
    if author_task is not None:
        artifact_seen(
            workspace_id=artifact.workspace_id, artifact_id=artifact.pk, task_id=author_task, version=version.number
        )
    viewers = (
        ArtifactView.objects.filter(artifact=artifact, seen_version__lt=version.number)
        .exclude(viewer_task_id=author_task)
        .order_by("viewer_task_id")
    )
    notices = []
    for view in viewers:
        pending = ChangeNotice.objects.filter(artifact=artifact, task_id=view.viewer_task_id, delivered_at__isnull=True)
        notice = pending.first()
        from_version = notice.from_version if notice is not None else view.seen_version
        summary, changed_nodes = change_summary(artifact, from_version, version)
        if notice is None:
            notice = ChangeNotice.objects.create(
                workspace_id=artifact.workspace_id,
                artifact=artifact,
                task_id=view.viewer_task_id,
                from_version=from_version,
                to_version=version.number,
                summary=summary,
                changed_nodes=changed_nodes,
            )
        else:
            notice.to_version, notice.summary, notice.changed_nodes = version.number, summary, changed_nodes
            notice.save(update_fields=["to_version", "summary", "changed_nodes", "updated_at"])
        notices.append(notice)
    return notices


def notices_on_artifact_deleted(artifact: Artifact, *, by: str) -> list[ChangeNotice]:
    """Tell every task that saw the artifact that it was deleted (module docstring). Caller holds the artifact
    lock, in the deletion's transaction."""
    who = by or "a person"
    summary = (
        f"{artifact.get_kind_display()} “{artifact.title}” (#{artifact.pk}) was deleted by {who}: it can no "
        "longer be read, changed or used as a source; do not rely on it, and tell the person if your work needed it."
    )
    if len(summary) > MAX_SUMMARY_CHARS:
        summary = summary[: MAX_SUMMARY_CHARS - 1] + "…"
    notices = []
    for view in ArtifactView.objects.filter(artifact=artifact).order_by("viewer_task_id"):
        notice = ChangeNotice.objects.filter(
            artifact=artifact, task_id=view.viewer_task_id, delivered_at__isnull=True
        ).first()
        if notice is None:
            notice = ChangeNotice.objects.create(
                workspace_id=artifact.workspace_id,
                artifact=artifact,
                task_id=view.viewer_task_id,
                from_version=view.seen_version,
                to_version=artifact.current_version,
                summary=summary,
            )
        else:
            notice.to_version, notice.summary, notice.changed_nodes = artifact.current_version, summary, []
            notice.save(update_fields=["to_version", "summary", "changed_nodes", "updated_at"])
        notices.append(notice)
    return notices


def _by(version: ArtifactVersion) -> str:
    author = version.author
    if author["type"] == "task":
        return f"by task {author['task']}"
    return "by a person" if author["type"] == "user" else "by the system"


def change_summary(artifact: Artifact, from_version: int, to: ArtifactVersion) -> tuple[str, list[str]]:
    """A one-line summary of what changed from `from_version` to `to`, and the Flow nodes that changed."""
    old = artifact.versions.filter(number=from_version).first()
    head = f"{artifact.get_kind_display()} “{artifact.title}” (#{artifact.pk}) v{from_version} → v{to.number} {_by(to)}"
    changed_nodes: list[str] = []
    if artifact.kind == ArtifactKind.FLOW:
        try:
            changed_nodes = nodes_changed(graph_load(old.content if old else ""), graph_load(to.content))
        except Exception:  # noqa: BLE001 - a malformed stored graph still gets a notice, without node detail
            changed_nodes = []
        what = (
            f"node{'s' if len(changed_nodes) != 1 else ''} {', '.join(changed_nodes)} changed"
            if changed_nodes
            else "edited"
        )
    elif artifact.is_text:
        what = _text_change(old.content if old else "", to.content)
    else:
        what = "a new rendition"
    summary = f"{head}: {what}; re-read it before relying on it."
    if len(summary) > MAX_SUMMARY_CHARS:
        summary = summary[: MAX_SUMMARY_CHARS - 1] + "…"
    return summary, changed_nodes


def _text_change(old: str, new: str) -> str:
    old_lines, new_lines = old.splitlines(), new.splitlines()
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    changes = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    if not changes:
        return "no text change"
    changed = sum(max(i2 - i1, j2 - j1) for _, i1, i2, j1, j2 in changes)
    sections = []
    for _, _, _, j1, j2 in changes:
        heading = _heading_before(new_lines, max(j1, min(j2, len(new_lines)) - 1) if j2 > j1 else j1)
        if heading and heading not in sections:
            sections.append(heading)
    where = f" in {', '.join(f'“{s}”' for s in sections[:3])}" if sections else ""
    return f"{changed} line{'s' if changed != 1 else ''} changed{where}"


def _heading_before(lines: list[str], index: int) -> str | None:
    for line in reversed(lines[: index + 1]):
        match = HEADING.match(line)
        if match:
            return match.group(1)[:60]
    return None


def notices_mark_delivered(*, task_id: int, ids: list[int]) -> int:
    """Mark these pending notices of the task as shown to it (the context builder, after including them)."""
    return ChangeNotice.objects.filter(task_id=task_id, pk__in=list(ids), delivered_at__isnull=True).update(
        delivered_at=timezone.now()
    )
