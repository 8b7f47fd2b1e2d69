"""The move tables of tool calls and cards (agents/transitions.py): every listed move passes, every other pair of
statuses is refused, and the code that moves those rows reads the table."""

import itertools

import pytest

from agents.models import Card, CardKind, CardStatus, ToolCallStatus
from agents.services.cards import cards_withdraw
from agents.transitions import (
    CARD_MOVES,
    TOOL_CALL_MOVES,
    card_move,
    card_sources,
    tool_call_move_check,
    tool_call_sources,
)
from lomote.kernel.exceptions import Conflict

C, K = ToolCallStatus, CardStatus
TOOL_CALL_ALLOWED = {
    (C.PENDING, C.STARTED),
    (C.PENDING, C.DONE),
    (C.PENDING, C.FAILED),
    (C.STARTED, C.STARTED),
    (C.STARTED, C.DONE),
    (C.STARTED, C.FAILED),
    (C.STARTED, C.UNKNOWN),
}
CARD_ALLOWED = {(K.OPEN, K.RESOLVED), (K.OPEN, K.CANCELLED)}


@pytest.mark.parametrize(("frm", "to"), list(itertools.product(C.values, repeat=2)))
def test_it_lets_a_tool_call_make_exactly_the_listed_moves(frm, to):
    # given every pair of tool call statuses
    allowed = (frm, to) in TOOL_CALL_ALLOWED
    # then the table, its check and its compare-and-set condition agree on the pair
    assert (to in TOOL_CALL_MOVES[frm]) is allowed
    assert (frm in tool_call_sources(to)) is allowed
    if allowed:
        tool_call_move_check(frm, to)
    else:
        with pytest.raises(Conflict) as refused:
            tool_call_move_check(frm, to)
        assert (refused.value.code, refused.value.details) == ("tool_call_state", {"status": frm, "requested": to})


def test_it_builds_the_tool_call_conditions_the_runtime_updates_under():
    # then a call starts from pending or started, a result lands on either, an unknown outcome only on a started one
    assert tool_call_sources(C.STARTED) == ["pending", "started"]
    assert tool_call_sources(C.DONE) == tool_call_sources(C.FAILED) == ["pending", "started"]
    assert tool_call_sources(C.UNKNOWN) == ["started"]
    assert tool_call_sources(C.PENDING) == []


@pytest.mark.parametrize(("frm", "to"), list(itertools.product(K.values, repeat=2)))
def test_it_lets_a_card_make_exactly_the_listed_moves(frm, to):
    # given a card in `frm`
    card = Card(pk=5, kind=CardKind.CONFIRM, status=frm)
    allowed = (frm, to) in CARD_ALLOWED
    assert (to in CARD_MOVES[frm]) is allowed
    assert (frm in card_sources(to)) is allowed
    if allowed:
        # when / then a listed move sets the status
        card_move(card, to)
        assert card.status == to
    else:
        # when / then any other is refused and the card keeps its status
        with pytest.raises(Conflict) as refused:
            card_move(card, to)
        assert (refused.value.code, refused.value.details) == ("card_state", {"status": frm, "requested": to})
        assert card.status == frm


@pytest.mark.django_db
def test_it_withdraws_only_the_cards_the_table_lets_it_cancel(task, monkeypatch):
    # given an open card of the task
    card = Card.objects.create(workspace_id=task.workspace_id, task=task, kind=CardKind.CONFIRM, title="Go on?")
    # when the table lists no move to cancelled
    monkeypatch.setitem(CARD_MOVES, K.OPEN, frozenset({K.RESOLVED}))
    withdrawn = cards_withdraw(task, reason="superseded")
    # then the card is not withdrawn
    card.refresh_from_db()
    assert withdrawn == []
    assert card.status == "open"
