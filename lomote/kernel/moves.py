"""Reading a move table: {from status: the statuses it may move to}, one per aggregate in its app's
`transitions.py`. The table is the one statement of which moves exist; the code that moves a row either
checks the move first or builds its compare-and-set filter (`status__in`) from the table.
"""

from collections.abc import Collection, Mapping

from lomote.kernel.exceptions import Conflict

MoveTable = Mapping[str, Collection[str]]


def move_allowed(moves: MoveTable, frm: str, to: str) -> bool:
    return to in moves[frm]


def move_check(moves: MoveTable, frm: str, to: str, *, what: str, code: str) -> None:
    """Raise Conflict `code` unless the table lets a `what` go from `frm` to `to`."""
    if not move_allowed(moves, frm, to):
        raise Conflict(f"{what} cannot go from {frm} to {to}", code=code, details={"status": frm, "requested": to})


def move_sources(moves: MoveTable, to: str) -> list[str]:
    """The statuses a row may move to `to` from (sorted): the `status__in` of a compare-and-set update."""
    return sorted(frm for frm, tos in moves.items() if to in tos)
