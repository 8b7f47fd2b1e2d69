"""A finished task becomes an episode in memory (DESIGN §8, seed §7.1): what happened in that piece of work, for
when the person comes back to it — linked to the person's statements made in the task and the memories the task
was shown, so a forget finds it."""

from django.utils import timezone

from agents.models import Step, Task
from agents.services.forgotten import Redactor, without_forgotten
from memory.models import Evidence, MemoryVersion
from memory.services.episodes import episode_write

MAX_STEPS_READ = 200  # the memories shown: read from the task's latest steps


def task_episode_write(task: Task) -> None:
    """Write (or rewrite) the task's episode from its summary, within the caller's transaction."""
    redact = Redactor(task.workspace_id).refresh()
    summary = without_forgotten(task.summary or task.brief or task.title, redact)
    evidence_ids = list(
        Evidence.objects.filter(workspace_id=task.workspace_id, task_id=task.pk, feeds_memory=True).values_list(
            "pk", flat=True
        )
    )
    shown = Step.objects.filter(turn__task=task).order_by("-pk").values_list("memory", flat=True)[:MAX_STEPS_READ]
    version_ids = sorted({v for memory in shown for v in (memory or {}).get("versions", [])})
    version_ids = list(
        MemoryVersion.objects.filter(workspace_id=task.workspace_id, pk__in=version_ids).values_list("pk", flat=True)
    )
    episode_write(
        workspace_id=task.workspace_id,
        task_id=task.pk,
        title=without_forgotten(task.title, redact) or f"Task {task.pk}",
        summary=summary or f"Task {task.pk} was done.",
        period_start=task.created_at,
        period_end=timezone.now(),
        evidence_ids=evidence_ids,
        version_ids=version_ids,
    )
