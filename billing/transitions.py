"""The allowed moves of an order (DESIGN §4, §6). Every status change of an Order goes through here.

An order is created `held`; it is then captured (the operation succeeded) or released (it failed, or never
ran), and a captured order may be refunded. Each move happens once: a settlement that finds the order
anywhere else is a no-op (billing/services/orders.py).
"""

from billing.models import OrderStatus
from lomote.kernel.moves import move_sources

S = OrderStatus
ORDER_MOVES: dict[str, frozenset[str]] = {
    S.HELD: frozenset({S.CAPTURED, S.RELEASED}),
    S.CAPTURED: frozenset({S.REFUNDED}),
    S.RELEASED: frozenset(),
    S.REFUNDED: frozenset(),
}


def order_sources(to: str) -> list[str]:
    """The statuses an order may reach `to` from: the condition of its compare-and-set update."""
    return move_sources(ORDER_MOVES, to)
