"""task_status_set: the one place a task's status moves — checked, saved, its event appended, its summary written."""

import pytest

from agents.models import ChecklistItem, ChecklistStatus, TaskStatus
from agents.services.task_status import task_status_set
from lomote.kernel.exceptions import Conflict
from workspace.models import Event

pytestmark = pytest.mark.django_db


def _active(task):
    task.status = TaskStatus.ACTIVE
    task.save(update_fields=["status"])
    return task


def _status_events(task):
    return list(Event.objects.filter(workspace_id=task.workspace_id, kind="task.status").values_list("data", flat=True))


def test_it_saves_the_move_and_appends_its_event_with_the_open_items(task):
    # given an active task with one open and one finished checklist item
    _active(task)
    ChecklistItem.objects.create(task=task, position=1, title="Poster", status=ChecklistStatus.DONE)
    ChecklistItem.objects.create(task=task, position=2, title="Teaser", status=ChecklistStatus.PENDING)
    wait = {"type": "person", "card": 7}
    # when
    moved = task_status_set(task, TaskStatus.WAITING, reason="checkpoint", waiting_for=wait)
    # then the row holds the move, the summary says what it waits for, and one event records it
    task.refresh_from_db()
    assert moved is True
    assert (task.status, task.stop_reason, task.waiting_for) == ("waiting", "checkpoint", wait)
    assert task.summary.endswith("Waiting.")
    assert _status_events(task) == [
        {"task": task.pk, "status": "waiting", "stop_reason": "checkpoint", "waiting_for": wait, "open_items": 1}
    ]


def test_it_keeps_the_stored_wait_unless_given_one(task):
    # given a task waiting for a person
    _active(task)
    task_status_set(task, TaskStatus.WAITING, reason="checkpoint", waiting_for={"type": "person", "card": 3})
    # when a person pauses it (no wait given)
    task_status_set(task, TaskStatus.PAUSED, reason="paused_by_person")
    # then the wait it had stays on the row
    task.refresh_from_db()
    assert (task.status, task.waiting_for) == ("paused", {"type": "person", "card": 3})


def test_it_leaves_the_summary_to_the_caller_when_asked(task):
    # given
    summary_before = task.summary
    # when
    task_status_set(task, TaskStatus.DONE, reason="checklist_complete", summary=False)
    # then
    task.refresh_from_db()
    assert (task.status, task.summary) == ("done", summary_before)


def test_it_saves_the_other_fields_named(task):
    # given the caller changed the auto-turn count in memory, and a field it does not name
    task.auto_turns, task.title = 4, "Not saved"
    # when
    task_status_set(task, TaskStatus.ACTIVE, also_save=("auto_turns",))
    # then only the named field is saved with the move
    task.refresh_from_db()
    assert (task.status, task.auto_turns, task.title) == ("active", 4, "Retro posters")


def test_it_records_nothing_when_the_task_already_stands_there(task):
    # given an active task waiting for nothing
    task_status_set(task, TaskStatus.ACTIVE, waiting_for={})
    # when the same move is asked again
    moved = task_status_set(task, TaskStatus.ACTIVE, waiting_for={})
    # then nothing more is recorded
    assert moved is False
    assert len(_status_events(task)) == 1


def test_it_records_a_new_wait_under_the_same_status_and_reason(task):
    # given a task waiting for one card
    _active(task)
    task_status_set(task, TaskStatus.WAITING, reason="checkpoint", waiting_for={"type": "person", "card": 1})
    # when it now waits for another
    moved = task_status_set(task, TaskStatus.WAITING, reason="checkpoint", waiting_for={"type": "person", "card": 2})
    # then the new wait is saved and recorded
    task.refresh_from_db()
    assert moved is True
    assert task.waiting_for == {"type": "person", "card": 2}
    assert [e["waiting_for"]["card"] for e in _status_events(task)] == [1, 2]


def test_it_refuses_a_move_the_table_does_not_allow_and_changes_nothing(task):
    # given a cancelled task
    task_status_set(task, TaskStatus.CANCELLED, reason="cancelled_by_person", waiting_for={})
    # when something tries to wake it
    with pytest.raises(Conflict) as refused:
        task_status_set(task, TaskStatus.ACTIVE, waiting_for={})
    # then the move is refused with the task's state, and neither the row nor the log changed
    task.refresh_from_db()
    assert refused.value.code == "task_state"
    assert refused.value.details == {"status": "cancelled", "requested": "active"}
    assert task.status == "cancelled"
    assert [e["status"] for e in _status_events(task)] == ["cancelled"]
