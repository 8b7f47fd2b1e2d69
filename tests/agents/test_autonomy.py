"""Autonomy, budget and permissions: three separate settings, each enforced by the runtime (DESIGN §5).

Autonomy decides whether the task goes on by itself ("ask" confirms each paid step and each next step);
the budget is a person's approval in billing; permissions say which tool domains may run at all, and
whether irreversible tools may. An irreversible call always waits for a person's confirmation first.
"""

from collections import Counter

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agents.exceptions import ToolPermissionDenied
from agents.models import (
    PERMISSION_DOMAINS,
    Autonomy,
    Card,
    CardStatus,
    ChecklistItem,
    Task,
    TaskStatus,
    ToolCall,
    ToolCallStatus,
)
from agents.runtime.loop import turn_run
from agents.services.card_actions import card_act
from agents.services.inbox import message_post
from agents.services.task_settings import task_settings_update
from agents.tools.base import Tool, ToolArgs, ToolContext, ToolResult
from agents.tools.generation import GenerateVideo
from agents.tools.permissions import check_tool_permission
from agents.tools.registry import DOMAINS, override, tool_get
from billing.models import Approval, Order
from billing.services.wallets import wallet_topup
from lomote.kernel.exceptions import InvalidInput, PermissionDenied
from tests.agents.conftest import says
from tests.support.cards import access_of, complete, queued_turn, run_queued
from tests.support.rest import events_of, issue_api_key
from tests.support.runtime import start_turn
from workspace.authentication import ApiKeyPrincipal
from workspace.models import ApiKey, GenerationJob, Role
from workspace.selectors import workspace_access

pytestmark = [pytest.mark.django_db(transaction=True)]

DELETED: Counter = Counter()


class DeleteNote(Tool):
    """A test-only irreversible tool (think: delete an artifact). Records each real execution."""

    name = "test_delete_note"
    description = "Delete a note for good (test tool)."
    domain = "assets"
    irreversible = True
    required_role = Role.EDITOR

    class Args(ToolArgs):
        note: int

    def run(self, ctx: ToolContext, args: ToolArgs) -> ToolResult:
        DELETED[(args.note, ctx.call_id)] += 1
        return ToolResult(content={"deleted": args.note})


@pytest.fixture
def deleter(tools):
    DELETED.clear()
    with override(DeleteNote):
        yield


@pytest.fixture
def owner(workspace, alice):
    return access_of(alice, workspace)


@pytest.fixture
def funded(owner):
    wallet_topup(access=owner, amount=1000)
    return owner


def with_autonomy(task: Task, autonomy: str) -> Task:
    Task.objects.filter(pk=task.pk).update(autonomy=autonomy)
    task.refresh_from_db()
    return task


def open_cards(task) -> list[Card]:
    return list(Card.objects.filter(task=task, status=CardStatus.OPEN))


DONE_1 = ("update_checklist", {"updates": [{"position": 1, "status": "done", "evidence": "sketched"}]})


@pytest.fixture
def two_steps(task):
    ChecklistItem.objects.create(task=task, position=1, title="Sketch")
    ChecklistItem.objects.create(task=task, position=2, title="Colour")
    return task


# --- autonomy ---------------------------------------------------------------------------------------------------


def test_it_continues_by_itself_under_checkpoints(two_steps, tools, script):
    # given the default autonomy, and a cycle that finishes item 1 of 2
    assert two_steps.autonomy == Autonomy.CHECKPOINTS
    script([says("Sketching.", DONE_1), says("Sketch done.")])
    # when the cycle ends
    result = turn_run(turn_id=tools.start_turn(two_steps).pk, generation=1)
    # then the next cycle is scheduled with nobody asked
    assert result == "auto_continue"
    assert queued_turn(two_steps).trigger == "auto_continue" and not open_cards(two_steps)


def test_it_asks_instead_of_continuing_under_autonomy_ask(two_steps, tools, script, owner):
    # given autonomy "ask", and a cycle that finishes item 1 of 2
    with_autonomy(two_steps, Autonomy.ASK)
    script([says("Sketching.", DONE_1), says("Sketch done.")])

    # when the cycle ends
    result = turn_run(turn_id=tools.start_turn(two_steps).pk, generation=1)

    # then nothing was scheduled: a confirm card asks whether to go on with the next item
    two_steps.refresh_from_db()
    assert result == "checkpoint" and queued_turn(two_steps) is None
    (card,) = open_cards(two_steps)
    assert card.title == "Continue with: Colour?" and card.payload["source"] == "continue"
    assert two_steps.waiting_for == {"type": "person", "card": card.pk, "next_step": True}

    # when the person confirms
    card_act(access=owner, card_id=card.pk, action="confirm")

    # then the task goes on
    assert queued_turn(two_steps).trigger == "message"


def test_it_asks_before_waking_after_a_generation_under_autonomy_ask(two_steps, tools, script, funded, upstream):
    # given autonomy "ask" and a generation the person confirmed, now running
    with_autonomy(two_steps, Autonomy.ASK)
    call = ("generate_image", {"prompt": "sketch", "checklist_position": 1})
    script([says("Generating.", call)])
    turn_run(turn_id=tools.start_turn(two_steps).pk, generation=1)
    card_act(access=funded, card_id=open_cards(two_steps)[0].pk, action="confirm")
    script([says("Generating.", call)])
    assert run_queued(two_steps) == "suspended"

    # when the job completes and an item remains
    complete(GenerationJob.objects.get())

    # then the task did not wake by itself: it waits on a card to continue
    two_steps.refresh_from_db()
    assert queued_turn(two_steps) is None
    (card,) = open_cards(two_steps)
    assert card.payload["source"] == "continue"
    assert (two_steps.status, two_steps.waiting_for["card"]) == (TaskStatus.WAITING, card.pk)


def test_it_confirms_each_paid_step_under_autonomy_ask(task, tools, script, funded, upstream):
    # given autonomy "ask", money in the wallet and a policy that needs no approval for this amount
    with_autonomy(task, Autonomy.ASK)
    call = ("generate_image", {"prompt": "retro poster"})
    script([says("Generating.", call)])

    # when the model asks for a paid generation
    assert turn_run(turn_id=tools.start_turn(task).pk, generation=1) == "suspended"

    # then nothing was held or submitted: a confirm card for exactly that call waits
    assert not Order.objects.exists() and upstream.submissions == 0
    (card,) = open_cards(task)
    assert (card.payload["reason"], card.payload["tool"], card.payload["input"]) == (
        "autonomy_ask",
        "generate_image",
        {"prompt": "retro poster"},
    )

    # when the person confirms, and the model calls it again
    card_act(access=funded, card_id=card.pk, action="confirm")
    script([says("Generating.", call)])
    assert run_queued(task) == "suspended"

    # then it ran once; a further call, even the same, asks again
    assert (Order.objects.count(), upstream.submissions) == (1, 1)
    complete(GenerationJob.objects.get())
    script([says("Another.", call)])
    message_post(access=funded, task_id=task.pk, text="One more")
    assert run_queued(task) == "suspended"
    assert (Order.objects.count(), len(open_cards(task))) == (1, 1)


def test_it_keeps_the_safety_net_out_of_the_way_under_autonomy_auto(task, tools, script):
    # given autonomy "auto" and a checkpoint item the model passes without asking
    with_autonomy(task, Autonomy.AUTO)
    ChecklistItem.objects.create(task=task, position=1, title="Storyboard", needs_confirmation=True)
    script([says("Here it is.")])
    # when its cycle ends
    result = turn_run(turn_id=tools.start_turn(task).pk, generation=1)
    # then the person, who chose not to be asked, is not asked to confirm: the usual no-progress stop applies,
    # with the runtime's card saying the task stopped (never silently)
    assert result == "no_progress"
    assert list(Card.objects.values_list("payload__source", flat=True)) == ["stalled"]


# --- permissions --------------------------------------------------------------------------------------------


def test_it_refuses_a_tool_outside_the_tasks_permissions_when_it_runs(task, tools, script, funded, upstream):
    # given a task allowed images only, and a model that calls the video tool anyway (never loaded, still called)
    task_settings_update(access=funded, task_id=task.pk, permissions={"domains": ["image"]})
    model = script([says("Animating.", ("generate_video", {"prompt": "the cat", "seconds": 5})), says("Sorry.")])

    # when the turn runs
    turn_run(turn_id=tools.start_turn(task).pk, generation=1)

    # then the call was refused at execution: nothing quoted, held or submitted, and the model read why
    refused = ToolCall.objects.get(name="generate_video")
    assert (refused.status, refused.error["code"]) == (ToolCallStatus.FAILED, "tool_forbidden")
    assert refused.error["details"] == {"tool": "generate_video", "domain": "video", "allowed_domains": ["image"]}
    assert not Order.objects.exists() and upstream.submissions == 0 and not Card.objects.exists()
    assert model.requests[1].state["last_results"][0]["error"]["code"] == "tool_forbidden"


def test_it_checks_permissions_without_a_query_when_the_runtime_read_them_with_the_task(task):
    # given contexts with and without the permissions the runtime read along with the task row
    ctx = ToolContext(task.workspace_id, task.pk, 1, 1, "1:1:1", 1, Role.OWNER, permissions={"domains": ["video"]})
    bare = ToolContext(task.workspace_id, task.pk, 1, 1, "1:1:1", 1, Role.OWNER)

    # when a domain tool and a base tool are checked
    with CaptureQueriesContext(connection) as given:
        check_tool_permission(GenerateVideo, ctx)
    with CaptureQueriesContext(connection) as base:
        check_tool_permission(tool_get("read_task_state"), bare)
    with CaptureQueriesContext(connection) as read:
        check_tool_permission(GenerateVideo, bare)

    # then no query is spent when they were given or for base tools, and one reads them otherwise
    assert (len(given), len(base), len(read)) == (0, 0, 1)


def test_it_refuses_irreversible_tools_when_the_person_disallowed_them(task, deleter, script, owner):
    # given a task whose permissions refuse irreversible operations
    task_settings_update(access=owner, task_id=task.pk, permissions={"irreversible": False})
    script([says("Deleting.", ("test_delete_note", {"note": 7})), says("I cannot.")])
    # when the model calls the irreversible tool
    turn_run(turn_id=start_turn(task).pk, generation=1)
    # then it is refused outright, without even a card
    call = ToolCall.objects.get(name="test_delete_note")
    assert (call.status, call.error["code"]) == (ToolCallStatus.FAILED, "tool_forbidden")
    assert not DELETED and not Card.objects.exists()


def test_it_always_asks_before_an_irreversible_tool_and_runs_it_only_after_a_persons_confirmation(
    task, deleter, script, owner, workspace
):
    # given the most autonomous setting, and a model that wants to delete note 7
    with_autonomy(task, Autonomy.AUTO)
    delete = ("test_delete_note", {"note": 7})
    model = script([says("Deleting note 7.", delete)])

    # when the turn runs
    assert turn_run(turn_id=start_turn(task).pk, generation=1) == "suspended"

    # then nothing was deleted: a confirm card names the exact call, and the task waits on it
    task.refresh_from_db()
    assert not DELETED
    (card,) = open_cards(task)
    first_call = ToolCall.objects.get(name="test_delete_note")
    assert first_call.result["status"] == "needs_confirmation" and first_call.result["card"] == card.pk
    assert (card.payload["reason"], card.payload["input"]) == ("irreversible", {"note": 7})
    assert task.waiting_for["card"] == card.pk and task.status == TaskStatus.WAITING

    # when an editor API key tries to confirm it
    key, _ = issue_api_key(workspace, name="script")
    key_access = workspace_access(principal=ApiKeyPrincipal(ApiKey.objects.get(pk=key.pk)), workspace_id=workspace.pk)
    with pytest.raises(PermissionDenied) as refused:
        card_act(access=key_access, card_id=card.pk, action="confirm")
    # then only a person can
    assert refused.value.code == "person_required"

    # when the person confirms, and the model calls it again with the same arguments
    card_act(access=owner, card_id=card.pk, action="confirm")
    model = script([says("Deleting note 7.", delete), says("Deleted.")])
    run_queued(task)

    # then it ran exactly once, for the call that used the confirmation
    second_call = ToolCall.objects.filter(name="test_delete_note").exclude(pk=first_call.pk).get()
    assert dict(DELETED) == {(7, second_call.call_id): 1}
    card.refresh_from_db()
    assert card.resolution["spent_by"] == second_call.call_id
    assert "Call test_delete_note again with the same arguments" in str(model.requests[0].messages)

    # when the model wants to delete it again later
    script([says("Deleting again.", delete)])
    message_post(access=owner, task_id=task.pk, text="Also clean up")
    run_queued(task)

    # then that is a new operation, and it waits for a new confirmation
    assert sum(DELETED.values()) == 1
    assert len(open_cards(task)) == 1 and open_cards(task)[0].pk != card.pk


# --- the three settings --------------------------------------------------------------------------------------


def test_it_keeps_autonomy_budget_and_permissions_apart(task, owner):
    # when the person lets the task run on its own
    task_settings_update(access=owner, task_id=task.pk, autonomy=Autonomy.AUTO)
    # then that approves no spending, and leaves its permissions as they were
    task.refresh_from_db()
    assert task.autonomy == Autonomy.AUTO and not Approval.objects.exists()
    assert task.permissions == {"domains": list(PERMISSION_DOMAINS), "irreversible": True}

    # when they narrow its permissions
    task_settings_update(access=owner, task_id=task.pk, permissions={"domains": ["video", "image", "image"]})
    # then only that key changed (normalised), autonomy stays, and the change is in the event log
    task.refresh_from_db()
    assert task.permissions == {"domains": ["image", "video"], "irreversible": True}
    assert task.autonomy == Autonomy.AUTO
    assert events_of(task.workspace_id, "task.settings")[-1].data["permissions"]["domains"] == ["image", "video"]


@pytest.mark.parametrize(
    "permissions",
    [{"domains": ["image", "telepathy"]}, {"domains": "image"}, {"irreversible": "yes"}, {"spend": 500}, ["image"]],
)
def test_it_refuses_malformed_permissions(task, owner, permissions):
    before = Task.objects.get(pk=task.pk).permissions
    with pytest.raises(InvalidInput) as refused:
        task_settings_update(access=owner, task_id=task.pk, permissions=permissions)
    assert refused.value.code == "invalid_permissions"
    assert Task.objects.get(pk=task.pk).permissions == before


def test_it_lets_only_editors_change_the_settings(task, carol, workspace):
    with pytest.raises(PermissionDenied):
        task_settings_update(access=access_of(carol, workspace), task_id=task.pk, autonomy=Autonomy.AUTO)
    assert Task.objects.get(pk=task.pk).autonomy == Autonomy.CHECKPOINTS


def test_it_lists_every_tool_domain_but_base_as_a_permission():
    assert set(PERMISSION_DOMAINS) == set(DOMAINS) - {"base"}


def test_it_refuses_tool_permission_for_a_domain_outside_the_list():
    ctx = ToolContext(1, 1, 1, 1, "1:1:1", 1, Role.OWNER, permissions={"domains": []})
    with pytest.raises(ToolPermissionDenied):
        check_tool_permission(GenerateVideo, ctx)
