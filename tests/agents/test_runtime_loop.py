"""The turn loop's decisions (DESIGN §3, figure 9) and its limits, driven by a fixed model."""

import pytest

from agents.exceptions import ModelError
from agents.models import ChecklistItem, ChecklistStatus, Step, TaskStatus, ToolCall, ToolCallStatus, Turn, TurnStatus
from agents.runtime.loop import turn_run
from tests.agents.conftest import says

pytestmark = [pytest.mark.django_db(transaction=True)]


def test_it_stops_at_the_step_cap_with_a_reason(task, tools, script, settings):
    # given a model that asks for a tool forever
    settings.LOMOTE_MAX_STEPS_PER_TURN = 5
    script([says("Again.", ("test_noop", {}))])
    turn = tools.start_turn(task)
    # when the turn runs
    assert turn_run(turn_id=turn.pk, generation=1) == "step_cap"
    # then it stopped after 5 steps, with the reason on the turn and the task
    turn.refresh_from_db()
    task.refresh_from_db()
    assert Step.objects.filter(turn=turn).count() == 5
    assert (turn.status, turn.stop_reason) == (TurnStatus.STOPPED, "step_cap")
    assert (task.status, task.stop_reason) == (TaskStatus.IDLE, "step_cap")


def test_it_stops_at_the_token_cap(task, tools, script, settings):
    settings.LOMOTE_MAX_TOKENS_PER_TURN = 500
    script([says("Again.", ("test_noop", {}), prompt_tokens=200)])
    turn = tools.start_turn(task)
    assert turn_run(turn_id=turn.pk, generation=1) == "token_cap"
    assert Step.objects.filter(turn=turn).count() == 3  # 3 × 220 tokens crosses 500


def test_it_turns_invalid_arguments_into_an_error_result_and_goes_on(task, tools, script):
    # given a model that calls a tool with fields it does not have, and one that does not exist
    model = script([says("Trying.", ("test_noop", {"amount": -500}), ("no_such_tool", {})), says("Understood.")])
    turn = tools.start_turn(task)
    # when the turn runs
    assert turn_run(turn_id=turn.pk, generation=1) == "answered"
    # then both calls failed with errors the model read, and the turn carried on
    bad_args, unknown = ToolCall.objects.filter(turn=turn).order_by("index")
    assert (bad_args.status, bad_args.error["code"]) == (ToolCallStatus.FAILED, "invalid_arguments")
    assert (unknown.status, unknown.error["code"]) == (ToolCallStatus.FAILED, "unknown_tool")
    assert [r["status"] for r in model.requests[1].state["last_results"]] == ["failed", "failed"]
    assert tools.EXECUTIONS[("test_noop", bad_args.call_id)] == 0


def test_it_retries_a_retryable_model_error_within_its_own_bound(task, tools, script, settings):
    # given a model that times out every time
    settings.LOMOTE_MODEL_MAX_ATTEMPTS = 3
    settings.LOMOTE_MODEL_RETRY_BACKOFF = 0
    model = script([says("never")])

    def timeout(index, request):
        raise ModelError("timed out", code="model_timeout", retryable=True)

    model.on_call = timeout
    turn = tools.start_turn(task)
    # when the turn runs
    outcome = turn_run(turn_id=turn.pk, generation=1)
    # then it tried exactly 3 times, committed nothing, and failed the turn with the code
    turn.refresh_from_db()
    assert outcome == "failed"
    assert len(model.requests) == 3
    assert not Step.objects.filter(turn=turn).exists()
    assert (turn.status, turn.error["code"]) == (TurnStatus.FAILED, "model_timeout")


def test_it_does_not_retry_a_non_retryable_model_error(task, tools, script):
    model = script([says("never")])
    model.on_call = lambda i, r: (_ for _ in ()).throw(ModelError("bad key", code="model_auth", retryable=False))
    turn = tools.start_turn(task)
    assert turn_run(turn_id=turn.pk, generation=1) == "failed"
    assert len(model.requests) == 1


def test_it_continues_by_itself_while_progress_is_made_and_stops_when_none_is(task, tools, script):
    # given a checklist of three items and a model that makes progress in its first turn, then stalls
    for position, title in enumerate(["Poster 1", "Poster 2", "Poster 3"], start=1):
        ChecklistItem.objects.create(task=task, position=position, title=title)

    def finish_next_item(index, request):
        open_items = ChecklistItem.objects.filter(task=task, status=ChecklistStatus.PENDING).order_by("position")
        if index in (0, 2) and open_items:  # the "work" of the first two turns
            item = open_items.first()
            item.status = ChecklistStatus.DONE
            item.save()

    script([says("Did one.", ("test_charge", {})), says("Turn over.")], on_call=finish_next_item)
    first = tools.start_turn(task)

    # when the first turn ends having made progress
    assert turn_run(turn_id=first.pk, generation=1) == "auto_continue"
    # then a second turn was queued with no "continue" from the person
    second = Turn.objects.get(task=task, number=2)
    assert (second.trigger, second.status) == ("auto_continue", TurnStatus.QUEUED)

    # when later turns run without progress (the model only talks)
    script([says("I have nothing new.")])
    assert turn_run(turn_id=second.pk, generation=1) == "no_progress"
    task.refresh_from_db()
    # (never silently: it waits on the runtime's card, tests/agents/test_stalls.py)
    assert (task.status, task.stop_reason, task.waiting_for["stalled"]) == (TaskStatus.WAITING, "no_progress", True)


def test_it_finishes_the_task_when_the_checklist_is_complete(task, tools, script):
    ChecklistItem.objects.create(task=task, position=1, title="Poster", status=ChecklistStatus.DONE)
    script([says("All posters are done.")])
    turn = tools.start_turn(task)
    assert turn_run(turn_id=turn.pk, generation=1) == "done"
    task.refresh_from_db()
    assert (task.status, task.stop_reason) == (TaskStatus.DONE, "checklist_complete")


def test_it_shows_a_change_notice_once_in_the_next_decision(task, tools, script, alice):
    from django.db import transaction

    from workspace.models import ChangeNotice
    from workspace.services.artifacts import artifact_create, artifact_version_add
    from workspace.services.notices import artifact_seen

    # given a storyboard the task read at v1, which the person then changed
    with transaction.atomic():
        board = artifact_create(
            workspace_id=task.workspace_id,
            kind="document",
            title="Storyboard",
            content="Shot 1\nShot 2",
            author_user=alice,
        )
        artifact_seen(workspace_id=task.workspace_id, artifact_id=board.pk, task_id=task.pk, version=1)
        artifact_version_add(
            workspace_id=task.workspace_id,
            artifact_id=board.pk,
            base_version=1,
            content="Shot 1\nShot 2 (night)",
            author_user=alice,
        )
    notice = ChangeNotice.objects.get(task_id=task.pk)
    model = script([says("Re-reading.", ("test_noop", {})), says("Done.")])
    turn = tools.start_turn(task)

    # when the turn runs two decisions
    assert turn_run(turn_id=turn.pk, generation=1) == "answered"

    # then the first decision saw the notice in its dynamic tail, and it was delivered, not repeated
    first, second = model.requests
    assert [n["id"] for n in first.state["notices"]] == [notice.pk]
    assert notice.summary in first.messages[-1]["content"]
    assert second.state["notices"] == []
    notice.refresh_from_db()
    assert notice.delivered_at is not None
