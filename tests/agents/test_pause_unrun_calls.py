"""A turn that ends before its decided calls ran — a pause or cancel, a takeover ended by a resume review —
never runs them: ended turns never resume (found by the resume scenario, issue 18, and the soak, issue 17). Those
calls fail as `not_started` and their checklist items are pending again, so the next turn starts them — an item
left "in progress" is never started twice, and the task stalled with it.
"""

import pytest
from django.db import transaction

from agents.models import ChecklistItem, ChecklistStatus, Step, Task, TaskStatus, ToolCall, ToolCallStatus, Turn
from agents.services.tasks import task_pause
from agents.services.turns import turn_start
from workspace.selectors import workspace_access

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]


def test_a_pause_fails_the_calls_no_worker_started_and_reopens_their_items(workspace, alice):
    # given a running turn whose step decided two posters: item 2's call ran, item 3's had not started yet
    task = Task.objects.create(
        workspace=workspace, title="Posters", brief="3 posters", created_by=alice, status=TaskStatus.ACTIVE
    )
    turn = Turn.objects.create(task=task, number=1, status="running", lease_holder="w:1")
    step = Step.objects.create(turn=turn, index=1, number=1, generation=1, model="m")
    for position in (2, 3):
        ChecklistItem.objects.create(
            task=task, position=position, title=f"Poster {position}", status=ChecklistStatus.IN_PROGRESS
        )
    ran = ToolCall.objects.create(
        turn=turn, step=step, index=1, call_id="1:1:1", name="generate_image",
        input={"prompt": "Poster 2", "checklist_position": 2}, status=ToolCallStatus.DONE, result={"job": 7},
    )  # fmt: skip
    unrun = ToolCall.objects.create(
        turn=turn, step=step, index=2, call_id="1:1:2", name="generate_image",
        input={"prompt": "Poster 3", "checklist_position": 3},
    )  # fmt: skip

    # when the person pauses the task
    task_pause(access=workspace_access(principal=alice, workspace_id=workspace.pk), task_id=task.pk)

    # then the unstarted call failed saying nothing was done, and only its item is pending again
    unrun.refresh_from_db()
    assert unrun.status == ToolCallStatus.FAILED
    assert unrun.error["code"] == "not_started" and "nothing was done" in unrun.error["message"]
    ran.refresh_from_db()
    assert (ran.status, ran.result) == (ToolCallStatus.DONE, {"job": 7})
    statuses = dict(task.checklist.values_list("position", "status"))
    assert statuses == {2: ChecklistStatus.IN_PROGRESS, 3: ChecklistStatus.PENDING}


def test_a_new_turn_closes_the_calls_an_ended_turn_never_started(workspace, alice, monkeypatch):
    # given a turn taken over after a kill and ended by its resume review (suspended: ended turns never resume),
    # whose step had decided poster 3's call that no worker started
    monkeypatch.setattr("agents.services.turns.enqueue_turn", lambda *args, **kwargs: None)
    task = Task.objects.create(
        workspace=workspace, title="Posters", brief="3 posters", created_by=alice, status=TaskStatus.WAITING
    )
    turn = Turn.objects.create(task=task, number=1, status="suspended", stop_reason="resume_review")
    step = Step.objects.create(turn=turn, index=1, number=1, generation=2, model="m")
    ChecklistItem.objects.create(task=task, position=3, title="Poster 3", status=ChecklistStatus.IN_PROGRESS)
    unrun = ToolCall.objects.create(
        turn=turn, step=step, index=2, call_id="1:1:2", name="generate_image",
        input={"prompt": "Poster 3", "checklist_position": 3},
    )  # fmt: skip

    # when the person's confirmation starts the next turn
    with transaction.atomic():
        turn_start(task=Task.objects.select_for_update().get(pk=task.pk), trigger="message")

    # then the stranded call failed as not started and poster 3 is pending again, for the new turn to start
    unrun.refresh_from_db()
    assert (unrun.status, unrun.error["code"]) == (ToolCallStatus.FAILED, "not_started")
    assert task.checklist.get(position=3).status == ChecklistStatus.PENDING
    assert task.turns.count() == 2
