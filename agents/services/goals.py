"""A task's goal and its revisions (issue 12 item 5, seed §6.4): what the task must deliver, kept in view.

Revision 1 is the brief the task was created with (task_create). A follow-up that changes what must be delivered
replaces the brief and adds the next revision; the earlier ones stay, so the history of the goal is shown and a
superseded brief can be traced. A follow-up that only adds detail changes no revision.
"""

from django.db import transaction

from agents.locks import task_locked
from agents.models import GoalRevision, InboxMessage, Task, TaskStatus
from agents.services.cards import cards_withdraw
from agents.services.task_status import task_status_set
from lomote.kernel.exceptions import InvalidInput
from workspace.models import Role
from workspace.selectors import Access
from workspace.services.events import event_append

# As long as a brief given at creation (agents.serializers.MAX_TEXT).
MAX_BRIEF_CHARS = 20_000
MAX_REASON_CHARS = 2_000
EVENT_TEXT_CHARS = 300  # a realtime event carries the start of the texts; the task detail has them whole


def goal_revise(task: Task, *, brief: str, reason: str, message_id: int | None = None) -> GoalRevision:
    """Make `brief` the task's goal as its next revision, `reason` saying why (in the words that moved it).

    The caller holds the task's row lock inside its transaction (a fenced tool transaction). `message_id` names
    the inbox message of this task that asked for the change, if any. Refuses an empty brief and one that only
    repeats the current brief: no revision without a change.
    """
    brief, reason = brief.strip(), " ".join(reason.split())
    if not brief:
        raise InvalidInput("The new brief is empty.", code="brief_empty")
    if len(brief) > MAX_BRIEF_CHARS or len(reason) > MAX_REASON_CHARS:
        raise InvalidInput(
            f"A brief holds at most {MAX_BRIEF_CHARS} characters and a reason {MAX_REASON_CHARS}.", code="too_long"
        )
    if " ".join(brief.split()) == " ".join(task.brief.split()):
        raise InvalidInput(
            "This is already the task's brief: the goal did not change, so no revision was made.",
            code="brief_unchanged",
            details={"goal_revision": task.goal_revision},
        )
    if message_id is not None and not InboxMessage.objects.filter(pk=message_id, task=task).exists():
        raise InvalidInput("That message is not one of this task's.", code="message_not_found")
    task.goal_revision += 1
    task.brief = brief
    # Naming "brief" lets the post_save subscriber refresh the Router's search row for the task.
    task.save(update_fields=["brief", "goal_revision", "updated_at"])
    revision = GoalRevision.objects.create(
        task=task, revision=task.goal_revision, brief=brief, reason=reason, message_id=message_id
    )
    event_append(
        workspace_id=task.workspace_id,
        kind="task.goal_revised",
        data={
            "task": task.pk,
            "revision": revision.revision,
            "brief": _start(brief),
            "reason": _start(reason),
        },
    )
    return revision


@transaction.atomic
def goal_revise_by_person(*, access: Access, task_id: int, brief: str, reason: str = "") -> GoalRevision:
    """A person rewrites what the task must deliver (editors and owners). Work planned for the old goal is
    reviewed before it goes on: a resume sees the new revision (DESIGN §11), and spending approved for the old
    goal is asked for again (billing scopes approvals by goal revision)."""
    access.require(Role.EDITOR)
    task = task_locked(access=access, task_id=task_id)
    revision = goal_revise(task, brief=brief, reason=reason or f"Rewritten by {access.actor}.")
    # Questions asked for the old goal — above all a quote, whose approval would now fund the new one — are
    # withdrawn; a task that waited on one waits for the person's next word instead.
    withdrawn = cards_withdraw(task, reason="goal_changed")
    if withdrawn and task.status == TaskStatus.WAITING and task.waiting_for.get("type") in ("person", "approval"):
        task_status_set(task, TaskStatus.IDLE, reason="goal_changed", waiting_for={})
    return revision


def goal_revisions(task: Task) -> list[GoalRevision]:
    """Every revision of the task's goal, the first (its brief at creation) first."""
    return list(GoalRevision.objects.filter(task=task).order_by("revision"))


def _start(text: str) -> str:
    return text if len(text) <= EVENT_TEXT_CHARS else text[: EVENT_TEXT_CHARS - 1] + "…"
