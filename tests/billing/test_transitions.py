"""The order move table (billing/transitions.py): every listed move happens once through the settlement services,
every other pair of statuses is a no-op that leaves the money alone, and the services read the table."""

import itertools

import pytest

from billing.models import OrderStatus
from billing.services.orders import order_capture, order_refund, order_release
from billing.transitions import ORDER_MOVES, order_sources
from tests.billing.helpers import money

S = OrderStatus
ALLOWED = {(S.HELD, S.CAPTURED), (S.HELD, S.RELEASED), (S.CAPTURED, S.REFUNDED)}
KEY = "11:0:0"


def _settle(workspace, to: str):
    if to == S.CAPTURED:
        return order_capture(workspace_id=workspace.pk, idempotency_key=KEY)
    if to == S.RELEASED:
        return order_release(workspace_id=workspace.pk, idempotency_key=KEY, reason="failed")
    return order_refund(workspace_id=workspace.pk, idempotency_key=KEY, reason="bad result")


# The real moves that bring a new order to each status.
PATHS = {S.HELD: [], S.CAPTURED: [S.CAPTURED], S.RELEASED: [S.RELEASED], S.REFUNDED: [S.CAPTURED, S.REFUNDED]}


@pytest.mark.parametrize(("frm", "to"), list(itertools.product(S.values, repeat=2)))
def test_it_lists_exactly_the_allowed_order_moves(frm, to):
    allowed = (frm, to) in ALLOWED
    assert (to in ORDER_MOVES[frm]) is allowed
    assert (frm in order_sources(to)) is allowed


@pytest.mark.django_db
@pytest.mark.parametrize(("frm", "to"), list(itertools.product(S.values, [S.CAPTURED, S.RELEASED, S.REFUNDED])))
def test_it_settles_an_order_only_by_a_listed_move(workspace, fund, place, frm, to):
    # given an order brought to `frm` by real moves
    fund(100)
    place(KEY)
    for step in PATHS[frm]:
        _settle(workspace, step)
    before = money()
    # when a settlement asks for `to`
    order = _settle(workspace, to)
    # then a listed move happens; any other leaves the order and the money as they were
    if (frm, to) in ALLOWED:
        assert order.status == to
        assert len(money()["ledger"]) == len(before["ledger"]) + 1
    else:
        assert order.status == frm
        assert money() == before


@pytest.mark.django_db
def test_it_captures_nothing_once_the_table_no_longer_lists_the_move(workspace, fund, place, monkeypatch):
    # given a held order, and a table without held → captured
    fund(100)
    place(KEY)
    monkeypatch.setitem(ORDER_MOVES, S.HELD, frozenset({S.RELEASED}))
    before = money()
    # when it is captured
    order = _settle(workspace, S.CAPTURED)
    # then nothing moved
    assert order.status == S.HELD
    assert money() == before
