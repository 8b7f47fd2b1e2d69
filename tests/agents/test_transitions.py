"""The move table of tool calls (agents/transitions.py): every listed move passes, every other pair of
statuses is refused, and the code that moves those rows reads the table."""

import itertools

import pytest

from agents.models import ToolCallStatus
from agents.transitions import TOOL_CALL_MOVES, tool_call_move_check, tool_call_sources
from lomote.exceptions import Conflict

C = ToolCallStatus
TOOL_CALL_ALLOWED = {
    (C.PENDING, C.STARTED),
    (C.PENDING, C.DONE),
    (C.PENDING, C.FAILED),
    (C.STARTED, C.STARTED),
    (C.STARTED, C.DONE),
    (C.STARTED, C.FAILED),
    (C.STARTED, C.UNKNOWN),
}


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
