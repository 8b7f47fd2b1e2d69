"""What a task does when its generation jobs finish or its spending is approved (DESIGN §4, §5).

The job's own transaction already stored the artifact version, updated the card and settled the money.
Here, in a transaction of its own (task lock first, like every task writer), the result is recorded on
the checklist and the runtime decides — from persisted state, without a model call — whether the task
wakes: only if it was waiting for these jobs, all of them are settled, later checklist items remain, and
continuing is authorised (under autonomy "ask", a confirm card asks a person instead). A lightweight task whose
result landed answers with a RESULT card naming it, and rests (agents/runtime/shortpath.py). A task stopped
meanwhile keeps its state: nothing is recorded, nothing wakes.
"""

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, OuterRef, Subquery

from agents.locks import task_qs_for_update
from agents.models import (
    RUNTIME_NOTE,
    Autonomy,
    ChecklistItem,
    ChecklistStatus,
    InboxStatus,
    Task,
    TaskKind,
    TaskStatus,
    ToolCall,
    Turn,
)
from agents.services.cards import card_open_result, card_open_to_continue, result_artifacts, task_wait_for_card
from agents.services.summaries import task_summary_write
from agents.services.task_status import task_status_set
from agents.services.turns import turn_start
from billing.selectors import approvals_granted_since
from workspace.models import GenerationJob, JobStatus
from workspace.services.events import event_append

OPEN = (ChecklistStatus.PENDING, ChecklistStatus.IN_PROGRESS)


def job_result_record(*, task: Task, job: GenerationJob) -> bool:
    """Put a finished job's result on its checklist item (the task row is locked). Idempotent."""
    # The job's key is the id of the tool call that asked for it; the call names the checklist item.
    call_input = ToolCall.objects.filter(call_id=job.idempotency_key).values_list("input", flat=True).first()
    position = call_input.get("checklist_position") if isinstance(call_input, dict) else None
    if position is None:
        return False
    item = ChecklistItem.objects.filter(task=task, position=position).first()
    if item is None or any(entry.get("job") == job.pk for entry in item.artifacts):
        return False
    entry = {"job": job.pk, "status": job.status}
    if job.status == JobStatus.SUCCEEDED:
        version = job.artifact_version
        entry.update(artifact=job.artifact_id, version=version.number if version else None)
        item.status = ChecklistStatus.DONE
        item.evidence = f"Generated artifact {job.artifact_id} (version {entry['version']}) by job {job.pk}."
    else:
        code = (job.error or {}).get("code", job.status)
        item.evidence = f"Job {job.pk} ended {job.status} ({code}); nothing was charged for it."
    item.artifacts = [*item.artifacts, entry]
    item.save(update_fields=["artifacts", "status", "evidence", "updated_at"])
    event_append(
        workspace_id=task.workspace_id,
        kind="task.checklist",
        data={"task": task.pk, "position": item.position, "status": item.status, "job": job.pk},
    )
    return True


@transaction.atomic
def task_job_settled(*, task_id: int, job_id: int) -> str:
    """Record a settled job on its task and decide whether the task continues. Safe to call repeatedly."""
    task = task_qs_for_update().filter(pk=task_id).first()
    job = GenerationJob.objects.select_related("artifact_version").filter(pk=job_id, task_id=task_id).first()
    if task is None or job is None or not job.is_terminal:
        return "ignored"
    if task.status == TaskStatus.CANCELLED:
        return "cancelled"  # the money was settled with the job; a stopped task stays as it is
    job_result_record(task=task, job=job)
    outcome = decide_after_jobs(task)
    task_summary_write(task)  # a job may finish an item or the whole task with no turn ending
    return outcome


def decide_after_jobs(task: Task) -> str:
    """The task (locked) waits for jobs: once all settled, finish, stop, or continue. Else keep waiting."""
    if task.status != TaskStatus.WAITING or task.waiting_for.get("type") != "jobs":
        return "recorded"
    jobs = list(
        GenerationJob.objects.select_related("artifact_version").filter(
            pk__in=task.waiting_for.get("jobs", []), task_id=task.pk
        )
    )
    awaited = [job.status for job in jobs]
    if any(status not in (JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.TIMED_OUT) for status in awaited):
        return "waiting"
    # Every awaited result goes on its item before deciding: the reaction to an earlier job may have been lost
    # (its worker died right after the commit), and once the task stops waiting nothing would record it.
    for job in jobs:
        job_result_record(task=task, job=job)
    if task.kind == TaskKind.LIGHTWEIGHT:
        return _quick_result(task, jobs)
    if any(status != JobStatus.SUCCEEDED for status in awaited):
        # A failed generation is the person's call: retrying would spend again.
        return _stop(task, TaskStatus.IDLE, "generation_failed")
    if not task.checklist.filter(status__in=OPEN).exists():
        return _stop(task, TaskStatus.DONE, "checklist_complete")
    if task.autonomy == Autonomy.ASK:
        # Going on by itself after a completion needs autonomy beyond "ask": a person confirms the next step.
        task_wait_for_card(task, card_open_to_continue(task), next_step=True)
        return "checkpoint"
    return _continue(task, trigger="jobs_settled")


@transaction.atomic
def task_spending_approved(*, workspace_id: int, task_id: int) -> str:
    """A person of `workspace_id` approved spending for the task: if it was waiting for that, it continues.

    Loaded within that workspace: an approval recorded in one workspace never wakes another's task, whatever
    task id it carries."""
    task = task_qs_for_update().filter(workspace_id=workspace_id, pk=task_id).first()
    if task is None or task.status != TaskStatus.WAITING or task.waiting_for.get("type") != "approval":
        return "ignored"
    task.auto_turns = 0  # a person acted: the auto-continuation budget starts again
    return _continue(task, trigger="approved")


def _quick_result(task: Task, jobs: list[GenerationJob]) -> str:
    """A quick request's result settled (task locked): it answers with a RESULT card naming what was made — no
    model call, no further turn — or, if the job failed, rests saying so (retrying would spend again). A message
    the person sent meanwhile was held for this moment (agents/services/lightweight.py): it starts the next step.
    """
    succeeded = [job for job in jobs if job.status == JobStatus.SUCCEEDED]
    made = [{"artifact": job.artifact_id, "version": _version(job)} for job in succeeded]
    if made:
        card_open_result(task, result_artifacts(task.workspace_id, made))
    if len(succeeded) < len(jobs):
        outcome = _stop(task, TaskStatus.IDLE, "generation_failed")
    else:
        outcome = _stop(task, TaskStatus.DONE, "checklist_complete")
    if task.inbox.filter(status=InboxStatus.PENDING).exclude(source=RUNTIME_NOTE).exists():
        turn_start(task=task, trigger="message")
        return "next_turn"
    return outcome


def _version(job: GenerationJob) -> int | None:
    return job.artifact_version.number if job.artifact_version is not None else None


def _continue(task: Task, *, trigger: str) -> str:
    if task.auto_turns >= settings.LOMOTE_MAX_AUTO_TURNS:
        return _stop(task, TaskStatus.IDLE, "auto_turn_cap")
    task.auto_turns += 1
    task.save(update_fields=["auto_turns"])
    turn_start(task=task, trigger=trigger)
    return "woken"


def _stop(task: Task, status: str, reason: str) -> str:
    task_status_set(task, status, reason=reason, waiting_for={}, summary=False)
    return reason


def tasks_waiting_on_granted_approval():
    """(workspace id, task id) of tasks still waiting for an approval a person already granted: what a lost
    on-commit reaction leaves.

    The wait began when the task's last turn ended; an approval for the task recorded after that is the one
    it waits for (approving a quote card grants the task a budget; the billing API may approve its quote).
    """
    last_end = Turn.objects.filter(task=OuterRef("pk")).order_by("-number").values("finished_at")[:1]
    granted = approvals_granted_since(
        workspace_id=OuterRef("workspace_id"), task_id=OuterRef("pk"), since=OuterRef("waiting_since")
    )
    return (
        Task.objects.filter(status=TaskStatus.WAITING, waiting_for__type="approval")
        .annotate(waiting_since=Subquery(last_end))
        .filter(Exists(granted))
        .values_list("workspace_id", "pk")[:200]
    )


def tasks_waiting_on_settled_jobs():
    """Tasks waiting for jobs that have all settled: what a lost on-commit reaction leaves behind."""
    for task_id, waiting_for in Task.objects.filter(status=TaskStatus.WAITING, waiting_for__type="jobs").values_list(
        "pk", "waiting_for"
    )[:200]:
        jobs = waiting_for.get("jobs", [])
        settled = GenerationJob.objects.filter(
            pk__in=jobs, status__in=[JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.TIMED_OUT]
        )
        if jobs and settled.count() == len(set(jobs)):
            yield task_id, jobs
