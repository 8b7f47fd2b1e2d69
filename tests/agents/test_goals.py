"""The goal moves (issue 12 item 5): a follow-up that changes what the task must deliver revises its brief, keeping
the earlier revisions; one that only adds detail does not. Service, tool, runtime fence, and the real runtime
driven by the scripted planner."""

import dataclasses

import pytest
from pydantic import ValidationError

from agents.exceptions import Fenced, ToolError, ToolPermissionDenied
from agents.models import (
    ChecklistItem,
    ChecklistStatus,
    GoalRevision,
    InboxMessage,
    InboxStatus,
    Step,
    TaskStatus,
    ToolCall,
    ToolCallStatus,
    Turn,
    TurnStatus,
)
from agents.providers.base import ModelRequest
from agents.runtime.loop import turn_run
from agents.runtime.toolexec import RunContext, calls_run
from agents.scripted.planner import MODEL_NAME, ScriptedPlanner
from agents.selectors import task_get
from agents.serializers import TaskDetailOut
from agents.services.goals import goal_revise, goal_revisions
from agents.services.inbox import message_post
from agents.services.tasks import task_create
from agents.tools.goals import ReviseGoal
from agents.tools.registry import override
from lomote.kernel.exceptions import InvalidInput
from tests.support.factories import TaskFactory
from tests.support.tooling import call_tool, tool_context
from workspace.models import Event
from workspace.selectors import workspace_access
from workspace.services.workspaces import workspace_create

BRIEF = "Make 3 retro posters for a jazz festival"


@pytest.fixture
def revise_goal():
    with override(ReviseGoal):
        yield


@pytest.fixture
def task(workspace, bob, no_enqueue):
    """A task bob (an editor) created, at goal revision 1, its turn running."""
    access = workspace_access(principal=bob, workspace_id=workspace.pk)
    task = task_create(access=access, title="Posters", brief=BRIEF)
    Turn.objects.filter(task=task).update(status=TurnStatus.RUNNING)
    task.status = TaskStatus.ACTIVE
    task.save(update_fields=["status"])
    return task


def _history(task):
    return [(r.revision, r.brief) for r in goal_revisions(task)]


# --- the service -------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_it_moves_the_goal_and_keeps_the_revisions_before_it(task):
    # when the goal is revised twice
    goal_revise(task, brief="A 10-second video for a jazz festival", reason="a video instead")
    goal_revise(task, brief="A logo for the jazz festival", reason="forget the video, a logo")

    # then the task holds the last brief at revision 3, and every earlier brief is kept
    task.refresh_from_db()
    assert (task.goal_revision, task.brief) == (3, "A logo for the jazz festival")
    assert _history(task) == [
        (1, BRIEF),
        (2, "A 10-second video for a jazz festival"),
        (3, "A logo for the jazz festival"),
    ]
    assert goal_revisions(task)[1].reason == "a video instead"


@pytest.mark.django_db
def test_it_announces_the_revision_and_refreshes_the_routers_search_row(task):
    # when the goal is revised with a long brief
    long_brief = "A 10-second video for the jazz festival opening night. " * 20
    goal_revise(task, brief=long_brief, reason="a video instead")

    # then a realtime event carries the start of the brief, and the Router's search row reads the new brief
    event = Event.objects.get(kind="task.goal_revised", data__task=task.pk)
    assert event.data["revision"] == 2 and event.data["reason"] == "a video instead"
    assert long_brief.startswith(event.data["brief"][:-1]) and len(event.data["brief"]) == 300
    task.embedding.refresh_from_db()
    assert "opening night" in task.embedding.document


@pytest.mark.django_db
@pytest.mark.parametrize("brief", [BRIEF, f"  {BRIEF}\n", BRIEF.replace(" ", "  "), "", "   "])
def test_it_refuses_a_revision_that_changes_nothing(task, brief):
    # when the "new" brief is the current one (whitespace aside) or empty
    with pytest.raises(InvalidInput) as refused:
        goal_revise(task, brief=brief, reason="same again")

    # then no revision was made
    assert refused.value.code in {"brief_unchanged", "brief_empty"}
    task.refresh_from_db()
    assert (task.goal_revision, task.brief, _history(task)) == (1, BRIEF, [(1, BRIEF)])
    assert not Event.objects.filter(kind="task.goal_revised").exists()


@pytest.mark.django_db
def test_it_links_only_a_message_of_the_same_task(task, workspace, bob):
    # given a message of another task
    other = task_create(
        access=workspace_access(principal=bob, workspace_id=workspace.pk), title="Other", brief="A logo"
    )
    foreign = InboxMessage.objects.get(task=other)

    # when a revision names it, it is refused; naming the task's own message links it
    with pytest.raises(InvalidInput):
        goal_revise(task, brief="A video", reason="a video instead", message_id=foreign.pk)
    own = InboxMessage.objects.get(task=task)
    revision = goal_revise(task, brief="A video", reason="a video instead", message_id=own.pk)
    assert revision.message_id == own.pk


@pytest.mark.django_db
def test_it_shows_the_revisions_in_the_task_detail(task, workspace, bob):
    # given a revised goal
    goal_revise(task, brief="A video for a jazz festival", reason="a video instead")

    # when the task detail is serialised
    access = workspace_access(principal=bob, workspace_id=workspace.pk)
    data = TaskDetailOut(task_get(access=access, task_id=task.pk)).data

    # then it shows the current revision and the history, oldest first
    assert data["goal_revision"] == 2 and data["brief"] == "A video for a jazz festival"
    assert [(r["revision"], r["brief"], r["reason"]) for r in data["goal_revisions"]] == [
        (1, BRIEF, ""),
        (2, "A video for a jazz festival", "a video instead"),
    ]


# --- the tool ----------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_tool_revises_the_goal_and_says_to_replan(task, revise_goal):
    # when the task's model calls revise_goal
    result = call_tool(
        "revise_goal", {"brief": "A video for a jazz festival", "reason": "a video instead"}, tool_context(task)
    )

    # then the goal moved, and the result says what it was and what to do next
    assert result.content["goal_revision"] == 2
    assert result.content["previous_brief"] == BRIEF
    assert "Re-plan" in result.content["note"]
    task.refresh_from_db()
    assert task.brief == "A video for a jazz festival"


@pytest.mark.django_db
def test_the_tool_refuses_the_current_brief_as_a_tool_error(task, revise_goal):
    # when the model "revises" the goal to what it already is
    with pytest.raises(ToolError) as refused:
        call_tool("revise_goal", {"brief": BRIEF, "reason": "nothing new"}, tool_context(task))

    # then the model reads a refusal and nothing moved
    assert refused.value.code == "brief_unchanged"
    task.refresh_from_db()
    assert task.goal_revision == 1 and GoalRevision.objects.filter(task=task).count() == 1


@pytest.mark.parametrize(
    "payload",
    [
        {"brief": "A video"},
        {"reason": "a video instead"},
        {"brief": "", "reason": "a video instead"},
        {"brief": "A video", "reason": "   "},
        {"brief": 42, "reason": "a video instead"},
        {"brief": "x" * 20_001, "reason": "a video instead"},
        {"brief": "A video", "reason": "r" * 2_001},
        {"brief": "A video", "reason": "a video instead", "goal_revision": 7},
    ],
)
def test_the_tool_refuses_missing_wrong_or_oversized_arguments(payload):
    with pytest.raises(ValidationError):
        ReviseGoal.Args.model_validate(payload)


@pytest.mark.django_db
def test_a_task_created_by_a_viewer_cannot_revise_its_goal(workspace, carol, revise_goal):
    # given a task created by carol, a viewer of the workspace
    task = TaskFactory(workspace=workspace, created_by=carol, brief=BRIEF, status=TaskStatus.ACTIVE)

    # when its model calls revise_goal
    with pytest.raises(ToolPermissionDenied):
        call_tool("revise_goal", {"brief": "A video", "reason": "a video instead"}, tool_context(task))

    # then nothing moved
    task.refresh_from_db()
    assert (task.goal_revision, task.brief) == (1, BRIEF)


@pytest.mark.django_db
def test_a_call_from_another_workspace_changes_nothing(task, dave, revise_goal):
    # given a tool context naming the task from another workspace (a forged or stale context)
    elsewhere = workspace_create(user=dave, name="Elsewhere")
    ctx = tool_context(task)
    forged = dataclasses.replace(ctx, workspace_id=elsewhere.pk)

    # when the call runs, it reads like a missing task
    with pytest.raises(ToolError) as refused:
        call_tool("revise_goal", {"brief": "A video", "reason": "a video instead"}, forged)

    # then nothing moved
    assert refused.value.code == "not_found"
    task.refresh_from_db()
    assert (task.goal_revision, task.brief) == (1, BRIEF)


def _pending_call(task, *, message=None):
    """A committed step of the task's running turn whose one call is revise_goal; it read `message`."""
    turn = Turn.objects.get(task=task)
    step = Step.objects.create(turn=turn, index=1, number=1, generation=turn.generation, model="test")
    if message is not None:
        InboxMessage.objects.filter(pk=message.pk).update(status=InboxStatus.CONSUMED, consumed_by_step=step)
    return ToolCall.objects.create(
        turn=turn,
        step=step,
        index=1,
        call_id=f"{turn.pk}:1:1",
        name="revise_goal",
        input={"brief": "A video for a jazz festival", "reason": "a video instead"},
        idempotent=True,
    )


@pytest.mark.django_db
def test_the_runtime_records_the_revision_with_the_message_the_step_read(task, revise_goal):
    # given a step that read the person's message and called revise_goal
    message = InboxMessage.objects.get(task=task)
    call = _pending_call(task, message=message)
    turn = call.turn

    # when the runtime runs the call under its fence
    [outcome] = calls_run(RunContext(turn.pk, turn.generation, task.pk, task.workspace_id), [call])

    # then the revision is recorded with the call's result, naming the message that asked for it
    assert outcome.status == ToolCallStatus.DONE
    revision = GoalRevision.objects.get(task=task, revision=2)
    assert revision.message_id == message.pk
    call.refresh_from_db()
    assert call.result["goal_revision"] == 2


@pytest.mark.django_db
def test_a_fenced_out_call_changes_nothing(task, revise_goal):
    # given a pending revise_goal call, then the turn taken over by a newer worker
    call = _pending_call(task)
    turn = call.turn
    Turn.objects.filter(pk=turn.pk).update(generation=turn.generation + 1)

    # when the old worker runs the call
    with pytest.raises(Fenced):
        calls_run(RunContext(turn.pk, turn.generation, task.pk, task.workspace_id), [call])

    # then the goal did not move and the call stays pending for the new worker
    task.refresh_from_db()
    assert (task.goal_revision, task.brief) == (1, BRIEF)
    assert not GoalRevision.objects.filter(task=task, revision=2).exists()
    call.refresh_from_db()
    assert call.status == ToolCallStatus.PENDING


# --- the scripted planner's decision ------------------------------------------------------------------------

PLANNER_TOOLS = ["read_task_state", "update_checklist", "ask_user", "load_tools", "revise_goal"]
FINISHED_POSTER = {"position": 1, "title": "Poster 1 of 3", "status": "done", "evidence": "made", "artifacts": [41]}
PENDING_POSTERS = [{"position": n, "title": f"Poster {n} of 3", "status": "pending"} for n in (2, 3)]


def _decide(message, *, tools=PLANNER_TOOLS, checklist=(FINISHED_POSTER, *PENDING_POSTERS)):
    state = {
        "task": {"id": 7, "title": "Festival", "brief": BRIEF, "language": "en", "goal_revision": 1},
        "checklist": list(checklist),
        "new_messages": [{"id": 9, "text": message}],
        "last_results": [],
        "step_index": 1,
        "tools": list(tools),
    }
    request = ModelRequest(model=MODEL_NAME, params={}, messages=[], tools=[], state=state)
    return [(call.name, call.arguments) for call in ScriptedPlanner().complete(request).tool_calls]


def test_the_planner_revises_the_goal_then_replans_keeping_finished_work():
    # when a message replaces the deliverable
    calls = _decide("Forget the posters, make a video instead")

    # then it revises the goal, skips the posters not made (saying why) and plans the video; the one made stays
    assert calls == [
        (
            "revise_goal",
            {"brief": "Make a video for a jazz festival", "reason": "Forget the posters, make a video instead"},
        ),
        (
            "update_checklist",
            {
                "updates": [
                    {
                        "position": n,
                        "status": "skipped",
                        "evidence": "Skipped: no longer part of the goal (goal revision 2).",
                    }
                    for n in (2, 3)
                ]
            },
        ),
        ("update_checklist", {"items": [{"title": "Video — jazz festival", "needs_confirmation": False}]}),
    ]


def test_the_planner_keeps_the_goal_without_a_revise_goal_tool():
    calls = _decide("Forget the posters, make a video instead", tools=PLANNER_TOOLS[:-1])
    assert "revise_goal" not in [name for name, _ in calls]


def test_the_planner_treats_detail_as_a_change_to_finished_work_not_a_new_goal():
    # when a message asks for a change to the poster already made
    calls = _decide("Make the posters warmer and move the text")

    # then the finished poster is reopened with the change as evidence, and the goal stays
    assert calls == [
        (
            "update_checklist",
            {
                "updates": [
                    {
                        "position": 1,
                        "status": "pending",
                        "evidence": "Revision requested: Make the posters warmer and move the text",
                    }
                ]
            },
        )
    ]


# --- the real runtime, driven by the scripted planner -------------------------------------------------------


def run_queued_turns():
    while turn := Turn.objects.filter(status=TurnStatus.QUEUED).order_by("pk").first():
        turn_run(turn_id=turn.pk, generation=turn.generation)


CONVERSATIONS = {
    "en": {
        "brief": "Make 3 retro posters for a jazz festival",
        "detail": "Make the text bigger",
        "goal": "Actually, forget the posters: make a 10-second video instead",
        "new_brief": "Make a 10-second video for a jazz festival",
        "more_detail": "Use warmer colours",
    },
    "fr": {
        "brief": "Fais trois affiches rétro pour un festival de jazz",
        "detail": "Ajoute un chat",
        "goal": "Finalement, je ne veux plus d'affiches : fais plutôt une vidéo de 10 secondes",
        "new_brief": "Fais une vidéo de 10 secondes pour un festival de jazz",
        "more_detail": "Rends les couleurs plus chaudes",
    },
}


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("language", ["en", "fr"])
def test_the_goal_moves_on_a_goal_changing_follow_up_and_not_on_detail(
    workspace, alice, no_enqueue, revise_goal, language
):
    talk = CONVERSATIONS[language]
    access = workspace_access(principal=alice, workspace_id=workspace.pk)

    # given a task created with a brief, planned and run (it waits for the posters' approval)
    task = task_create(access=access, title="Festival", brief=talk["brief"], language=language)
    run_queued_turns()
    posters = list(ChecklistItem.objects.filter(task=task).values_list("position", flat=True))
    assert len(posters) == 3

    # when the person adds detail, the goal stays
    message_post(access=access, task_id=task.pk, text=talk["detail"])
    run_queued_turns()
    task.refresh_from_db()
    assert (task.goal_revision, task.brief) == (1, talk["brief"])

    # when the person changes what must be delivered
    goal = message_post(access=access, task_id=task.pk, text=talk["goal"])
    run_queued_turns()

    # then the brief is the new goal at revision 2, with revision 1 kept, naming the message that moved it
    task.refresh_from_db()
    assert (task.goal_revision, task.brief) == (2, talk["new_brief"])
    assert _history(task) == [(1, talk["brief"]), (2, talk["new_brief"])]
    assert GoalRevision.objects.get(task=task, revision=2).message_id == goal.pk
    # the posters not made are skipped, saying why, and the video is planned after them
    items = list(ChecklistItem.objects.filter(task=task).order_by("position"))
    old, new = [i for i in items if i.position in posters], [i for i in items if i.position not in posters]
    assert {i.status for i in old} == {ChecklistStatus.SKIPPED}
    assert all("2" in i.evidence for i in old)
    assert len(new) == 1 and ToolCall.objects.filter(turn__task=task, name="generate_video").exists()

    # when the person then adds detail again, the goal stays at revision 2
    message_post(access=access, task_id=task.pk, text=talk["more_detail"])
    run_queued_turns()
    task.refresh_from_db()
    assert (task.goal_revision, GoalRevision.objects.filter(task=task).count()) == (2, 2)
