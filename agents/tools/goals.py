"""revise_goal: the task's model records that the person changed what the task must deliver (issue 12 item 5).

A base tool, transactional: the runtime runs it inside the fenced transaction that records its result, so the
new brief, its revision and the call's result commit together or not at all.
"""

from typing import Annotated

from pydantic import StringConstraints

from agents.exceptions import ToolError
from agents.locks import task_qs_for_update
from agents.models import QUIET_SOURCES, InboxMessage
from agents.services.goals import MAX_BRIEF_CHARS, MAX_REASON_CHARS, goal_revise
from agents.tools.base import StrictArgs, Tool, ToolContext, ToolResult
from lomote.kernel.exceptions import InvalidInput
from workspace.models import Role


class ReviseGoal(Tool):
    name = "revise_goal"
    description = (
        "Record that the person changed WHAT this task must deliver: another kind of work (a video instead of "
        "posters), another subject or purpose, or a goal they restated. `brief` replaces the task's brief: write "
        "the whole new goal in the person's language, keeping what still holds from the old brief. `reason` "
        "says what they asked, in their words. The goal revision moves on and earlier briefs are kept. Do NOT use "
        "it for added detail or a change to the work itself (warmer colours, bigger text, one more element): the "
        "goal stays. Afterwards re-plan the checklist for the new goal with update_checklist."
    )
    idempotent = True  # a repeat finds the brief already set and changes nothing
    required_role = Role.EDITOR

    class Args(StrictArgs):
        brief: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_BRIEF_CHARS)]
        reason: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_REASON_CHARS)]

    def run(self, ctx: ToolContext, args: Args) -> ToolResult:
        # The runtime's fence already holds the task lock; taking it here too serialises any other caller.
        task = task_qs_for_update().filter(pk=ctx.task_id, workspace_id=ctx.workspace_id).first()
        if task is None:
            raise ToolError("This task no longer exists.", code="not_found")
        if task.is_stopped:
            raise ToolError(f"The task is {task.status}; its goal can no longer change.", code="task_stopped")
        previous = task.brief
        try:
            revision = goal_revise(task, brief=args.brief, reason=args.reason, message_id=_asking_message(ctx))
        except InvalidInput as exc:
            raise ToolError(exc.message, code=exc.code, details=exc.details) from None
        return ToolResult(
            content={
                "goal_revision": revision.revision,
                "brief": revision.brief,
                "previous_brief": previous,
                "note": "The goal changed. Re-plan the checklist for it; items already done stay as they are.",
            }
        )


def _asking_message(ctx: ToolContext) -> int | None:
    """The newest message from a person (or an API key) that the step making this call read, if any: the
    message that asked for the change, as far as the runtime can tell."""
    return (
        InboxMessage.objects.filter(
            task_id=ctx.task_id, consumed_by_step__turn_id=ctx.turn_id, consumed_by_step__index=ctx.step_index
        )
        .exclude(source__in=QUIET_SOURCES)
        .order_by("-pk")
        .values_list("pk", flat=True)
        .first()
    )
