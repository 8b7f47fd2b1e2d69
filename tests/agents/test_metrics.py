"""Stalls measured from stored facts (agents/services/metrics.py; issue 10, item 7).

A stall is a moment a task stopped short (not done, cancelled or failed) with checklist items open and no card
open for the person. Each case runs real turns with a fixed model and reads only what was stored.
"""

from datetime import timedelta

import pytest
from django.utils import timezone

from agents.models import ChecklistItem, TaskStatus
from agents.runtime.loop import turn_run
from agents.services.card_actions import card_act
from agents.services.metrics import stalls_count, stalls_list
from agents.services.tasks import task_pause
from billing.services.wallets import wallet_topup
from tests.agents.conftest import says
from tests.support.cards import access_of, run_queued
from workspace.providers import registry
from workspace.providers.simulated import SimulatedUpstream

pytestmark = [pytest.mark.django_db(transaction=True)]


@pytest.fixture
def owner(workspace, alice):
    return access_of(alice, workspace)


@pytest.fixture
def poster(task):
    ChecklistItem.objects.create(task=task, position=1, title="Poster 1 of 1")
    return task


def ask(question, options=None):
    return ("ask_user", {"question": question, **({"options": options} if options else {})})


def test_it_counts_a_task_that_stopped_with_open_items_and_no_card(poster):
    from django.db import transaction

    from agents.locks import task_qs_for_update
    from agents.services.task_status import task_status_set

    # given a stop made outside a turn's ending (the runtime's own endings always ask: tests/agents/test_stalls.py)
    before = timezone.now()
    with transaction.atomic():
        task_status_set(task_qs_for_update().get(pk=poster.pk), TaskStatus.IDLE, reason="attempt_cap")
    # then that stop is a stall: the task, when, why, and how much was left
    [stall] = stalls_list(workspace_id=poster.workspace_id)
    assert (stall.task_id, stall.status, stall.reason, stall.open_items) == (poster.pk, "idle", "attempt_cap", 1)
    assert before <= stall.at <= timezone.now()
    assert stalls_count(workspace_id=poster.workspace_id) == 1
    # and `since` leaves out what came before it
    assert stalls_count(workspace_id=poster.workspace_id, since=stall.at + timedelta(microseconds=1)) == 0


def test_a_turn_that_stops_with_open_items_is_never_a_stall(poster, tools, script):
    # given a model that only talks about the open item (no tool, no question)
    script([says("I am still thinking about the palette.")])
    # when its turn ends
    assert turn_run(turn_id=tools.start_turn(poster).pk, generation=1) == "no_progress"
    # then the runtime asked the person before recording the stop: nothing stalled
    assert poster.cards.filter(payload__source="stalled").count() == 1
    assert stalls_list(workspace_id=poster.workspace_id) == []


def test_it_does_not_count_a_stop_with_a_card_open_for_the_person(poster, tools, script):
    # given a model that asks the person at the open item
    script([says("Which palette?", ask("Which palette?", ["Warm", "Cool"]))])
    # when its turn ends waiting on the card
    assert turn_run(turn_id=tools.start_turn(poster).pk, generation=1) == "suspended"
    # then nothing stalled: the person has a card to answer
    poster.refresh_from_db()
    assert poster.status == TaskStatus.WAITING
    assert stalls_list(workspace_id=poster.workspace_id) == []


def test_a_stop_after_the_card_was_answered_is_asked_about_again(poster, tools, script, owner):
    # given the person answered the model's card
    script([says("Which palette?", ask("Which palette?", ["Warm", "Cool"])), says("Warm it is.")])
    turn_run(turn_id=tools.start_turn(poster).pk, generation=1)
    card = poster.cards.get()
    card_act(access=owner, card_id=card.pk, action="choose", option="1")
    # when the next turn stops without progress and without asking
    assert run_queued(poster) == "no_progress"
    # then the runtime's own card asks the person (the answered card was not open any more): no stall
    assert poster.cards.filter(payload__source="stalled", status="open").count() == 1
    assert stalls_list(workspace_id=poster.workspace_id) == []


def test_it_does_not_count_a_task_waiting_for_its_generation_jobs(poster, tools, script, owner, settings):
    # given a funded workspace and a provider that accepts jobs and has not answered yet
    settings.LOMOTE_DEFAULT_GENERATION_PROVIDER = "simulated"
    wallet_topup(access=owner, amount=1000)
    script([says("Making it.", ("generate_image", {"prompt": "retro poster", "checklist_position": 1}))])
    with registry.override("simulated", SimulatedUpstream(deliver=lambda headers, body: 200)):
        # when the turn submits the job and suspends
        assert turn_run(turn_id=tools.start_turn(poster).pk, generation=1) == "suspended"
    # then the task waits for the job (the runtime wakes it), which is not a stall
    poster.refresh_from_db()
    assert poster.waiting_for["type"] == "jobs"
    assert stalls_list(workspace_id=poster.workspace_id) == []


def test_it_does_not_count_a_pause_the_person_asked_for(poster, owner):
    # when the person pauses a task that has work left
    task_pause(access=owner, task_id=poster.pk)
    # then that stop is theirs, not a stall
    poster.refresh_from_db()
    assert poster.status == TaskStatus.PAUSED
    assert stalls_list(workspace_id=poster.workspace_id) == []


def test_it_does_not_count_a_finished_task(task, tools, script):
    # given a model that plans one item and finishes it in the same turn
    script(
        [
            says("Planning.", ("update_checklist", {"items": [{"title": "Outline"}]})),
            says("Done.", ("update_checklist", {"updates": [{"position": 1, "status": "done"}]})),
            says("All done."),
        ]
    )
    # when the turn ends
    assert turn_run(turn_id=tools.start_turn(task).pk, generation=1) == "done"
    # then nothing stalled
    assert stalls_list(workspace_id=task.workspace_id) == []
