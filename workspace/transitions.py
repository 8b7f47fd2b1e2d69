"""The allowed moves of a generation job (DESIGN §4) and of a Flow run's node. Every status change of a
GenerationJob or a FlowNodeRun goes through here.

A job only moves forward, in rank order:

    submitting → submitted → queued → running → succeeded | failed | timed_out

Any higher rank may be reached directly (a provider may report `running` before we stored its id, or
`succeeded` without ever saying `running`). Within `queued` or `running` only the progress moves, and only
up. A terminal job never moves again. Reports arrive duplicated and out of order (webhooks, polling, the
embedded worker), so a report that is not a forward move is not an error: it is ignored.
"""

from lomote.kernel.moves import move_check, move_sources
from workspace.models import JobStatus, NodeStatus

S = JobStatus
JOB_RANK: dict[str, int] = {
    S.SUBMITTING: 0,
    S.SUBMITTED: 1,
    S.QUEUED: 2,
    S.RUNNING: 3,
    S.SUCCEEDED: 4,
    S.FAILED: 4,
    S.TIMED_OUT: 4,
}
_FINISH = frozenset({S.SUCCEEDED, S.FAILED, S.TIMED_OUT})
JOB_MOVES: dict[str, frozenset[str]] = {
    S.SUBMITTING: frozenset({S.SUBMITTED, S.QUEUED, S.RUNNING}) | _FINISH,
    S.SUBMITTED: frozenset({S.QUEUED, S.RUNNING}) | _FINISH,
    S.QUEUED: frozenset({S.QUEUED, S.RUNNING}) | _FINISH,  # queued → queued: the progress rose
    S.RUNNING: frozenset({S.RUNNING}) | _FINISH,
    S.SUCCEEDED: frozenset(),
    S.FAILED: frozenset(),
    S.TIMED_OUT: frozenset(),
}


def job_is_forward(*, status: str, progress: int, to: str, to_progress: int | None) -> bool:
    """Whether a report of `to` (with `to_progress`) moves a job that is at (`status`, `progress`) forward."""
    if to not in JOB_MOVES[status]:
        return False
    if to == status:
        return to_progress is not None and to_progress > progress
    return True


def job_progress_after(*, progress: int, to: str, to_progress: int | None) -> int:
    """The progress a job shows after a forward move: never lower than before, 100 once it succeeded."""
    if to == S.SUCCEEDED:
        return 100
    return max(progress, to_progress or 0)


N = NodeStatus
NODE_MOVES: dict[str, frozenset[str]] = {
    N.PENDING: frozenset({N.RUNNING, N.SKIPPED}),  # skipped: unreachable, or its run was cancelled
    N.RUNNING: frozenset({N.RUNNING, N.DONE, N.FAILED}),  # running → running: claimed again once abandoned
    N.DONE: frozenset({N.STALE}),  # an artifact it consumed has a newer version
    N.FAILED: frozenset({N.PENDING}),  # retried
    N.SKIPPED: frozenset({N.PENDING}),  # retried with the failed node it was skipped for
    N.STALE: frozenset({N.PENDING}),  # re-run on its new inputs
}


def node_sources(to: str) -> list[str]:
    """The statuses a Flow node may reach `to` from: the condition of its compare-and-set updates."""
    return move_sources(NODE_MOVES, to)


def node_move_check(frm: str, to: str) -> None:
    move_check(NODE_MOVES, frm, to, what="a flow node", code="node_state")
