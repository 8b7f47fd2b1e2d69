"""The runtime's safety net (issue 33 item 1, seed §11.3): a task never stops silently. Whenever a turn ends with
checklist items open, no job in flight and no card open, the runtime opens a card in the same transaction — what it
understood, why it stopped (the model's own words), what it can do instead — and the person's answer goes on."""

import pytest

from agents.models import Card, CardStatus, ChecklistItem, ChecklistStatus, InboxMessage, TaskStatus, Turn
from agents.runtime.loop import turn_run
from agents.services.card_actions import card_act, card_reply
from agents.services.metrics import stalls_count
from tests.agents.conftest import says
from tests.support.cards import access_of, queued_turn
from tests.support.rest import events_of
from workspace.models import GenerationJob, JobStatus

pytestmark = [pytest.mark.django_db(transaction=True)]


@pytest.fixture
def owner(workspace, alice):
    return access_of(alice, workspace)


def _item(task, title="Three Instagram posts about our winter pottery classes", position=1):
    return ChecklistItem.objects.create(task=task, position=position, title=title)


def _stall_card(task) -> Card:
    return Card.objects.get(task=task, payload__source="stalled")


def test_a_planner_that_stops_with_nothing_to_do_leaves_a_card_not_silence(task, tools, script):
    # given an open item and a model that can only say why it cannot make it
    _item(task)
    script([says("Item 1: I know no tool that could make this.")])

    # when its turn ends
    assert turn_run(turn_id=tools.start_turn(task).pk, generation=1) == "no_progress"

    # then the task waits on the runtime's card, which opened before the stop was recorded
    task.refresh_from_db()
    card = _stall_card(task)
    assert (task.status, task.stop_reason) == (TaskStatus.WAITING, "no_progress")
    assert task.waiting_for == {"type": "person", "card": card.pk, "stalled": True}
    assert card.status == CardStatus.OPEN and card.kind == "choice"
    opened = events_of(task.workspace_id, "card.opened")[-1]
    stopped = events_of(task.workspace_id, "task.status")[-1]
    assert opened.data["card"] == card.pk and opened.seq < stopped.seq
    assert stalls_count(workspace_id=task.workspace_id) == 0

    # and it says what it understood, why it stopped in the model's own words, and offers what it can do instead
    assert "Three Instagram posts about our winter pottery classes" in card.title
    assert "What I understood: “Three Instagram posts about our winter pottery classes”." in card.body
    assert "Why I stopped: Item 1: I know no tool that could make this." in card.body
    assert "say it differently" in card.body
    offered = [option["id"] for option in card.options]
    assert len(offered) == 3 and len(set(offered)) == 3
    assert "social_post" in offered, f"a square post is the nearest by meaning: {offered}"
    assert all(option["label"].startswith(("Make it as", "Write it as")) for option in card.options)


def test_choosing_an_offer_replaces_the_item_and_the_task_plans_it_afresh(task, tools, script, owner):
    # given a stall card on the item
    item = _item(task)
    script([says("Item 1: I know no tool that could make this.")])
    turn_run(turn_id=tools.start_turn(task).pk, generation=1)
    card = _stall_card(task)
    option = next(o for o in card.options if o["id"] == "social_post")

    # when the person chooses the square social post
    card_act(access=owner, card_id=card.pk, action="choose", option="social_post")

    # then the item it replaces is skipped, naming the card, and the request reaches the task as the person's words
    item.refresh_from_db()
    assert item.status == ChecklistStatus.SKIPPED
    assert f"card {card.pk}" in item.evidence
    message = InboxMessage.objects.get(task=task, author__isnull=False)
    assert message.text == f"{option['label']}: {item.title}"
    assert message.source != "card_answer"
    # and a turn is queued to plan it
    assert queued_turn(task) is not None


def test_saying_it_differently_replaces_the_item_with_the_person_s_words(task, tools, script, owner):
    item = _item(task, title="A jingle for our podcast")
    script([says("Item 1: I know no tool that could make this.")])
    turn_run(turn_id=tools.start_turn(task).pk, generation=1)
    card = _stall_card(task)

    # when the person types another request on the card
    card_reply(access=owner, card_id=card.pk, text="Then a square cover image for the podcast")

    # then their words are the new request and the old item is set aside
    item.refresh_from_db()
    assert item.status == ChecklistStatus.SKIPPED
    assert InboxMessage.objects.get(task=task, author__isnull=False).text == "Then a square cover image for the podcast"
    card.refresh_from_db()
    assert card.status == CardStatus.RESOLVED


def test_a_task_stopped_at_its_auto_turn_cap_offers_to_go_on_with_the_plan(task, tools, script, owner, settings):
    # given a task that went on by itself as often as allowed
    settings.LOMOTE_MAX_AUTO_TURNS = 0
    item = _item(task, title="Poster 2")
    done = _item(task, title="Poster 1", position=0)

    def progress(index, request):
        done.status = ChecklistStatus.DONE
        done.save()

    script([says("Made poster 1.", ("test_noop", {})), says("Next.")], on_call=progress)
    turn = tools.start_turn(task)
    turn.made_progress = True
    turn.save(update_fields=["made_progress"])

    # when its turn ends with progress and an item left
    assert turn_run(turn_id=turn.pk, generation=1) == "auto_turn_cap"

    # then the card offers to go on; choosing it keeps the plan and starts the next turn
    card = _stall_card(task)
    assert [o["id"] for o in card.options] == ["go_on"]
    assert "Still to do: “Poster 2”." in card.body
    card_act(access=owner, card_id=card.pk, action="choose", option="go_on")
    item.refresh_from_db()
    assert item.status == ChecklistStatus.PENDING
    assert queued_turn(task) is not None


def test_a_failed_turn_says_the_error_and_offers_to_try_again(task, tools, script):
    from agents.exceptions import ModelError

    _item(task, title="Poster")
    model = script([says("never")])
    model.on_call = lambda i, r: (_ for _ in ()).throw(ModelError("The model refused the key.", code="model_auth"))

    assert turn_run(turn_id=tools.start_turn(task).pk, generation=1) == "failed"

    card = _stall_card(task)
    task.refresh_from_db()
    assert (task.status, task.stop_reason) == (TaskStatus.WAITING, "model_auth")
    assert "Why I stopped: The model refused the key." in card.body
    assert [o["label"] for o in card.options] == ["Try again"]


def test_no_second_card_while_the_person_is_already_asked(task, tools, script):
    # given a card of the model's own, still open
    _item(task)
    script([says("Which palette?", ("ask_user", {"question": "Which palette?", "options": ["Warm", "Cool"]}))])
    turn_run(turn_id=tools.start_turn(task).pk, generation=1)
    assert Card.objects.filter(task=task).count() == 1

    # then the runtime adds none of its own
    assert not Card.objects.filter(task=task, payload__source="stalled").exists()


def test_no_card_while_a_generation_job_will_wake_the_task(task, tools, script):
    # given an open item whose job is still running
    _item(task)
    GenerationJob.objects.create(
        workspace=task.workspace,
        kind="image",
        provider="procedural",
        prompt="poster",
        status=JobStatus.RUNNING,
        idempotency_key="k1",
        task_id=task.pk,
    )
    script([says("Waiting for the poster.")])

    # when the turn ends without progress
    assert turn_run(turn_id=tools.start_turn(task).pk, generation=1) == "no_progress"

    # then nobody is asked: the job's settlement wakes the task
    task.refresh_from_db()
    assert task.status == TaskStatus.IDLE
    assert not Card.objects.filter(task=task).exists()
    assert Turn.objects.filter(task=task).count() == 1
