"""Reactions to lower apps' domain events (lomote.kernel.domain_events), registered in AgentsConfig.ready().

Publishers hold their own locks (the job, the workspace row) when they publish, and task writers lock the
task first; so the reaction runs after the publisher's commit, in its own transaction. If the process dies
in between, the watchdog finds the task waiting on settled jobs and does the same, once.
"""

from django.db import transaction

from agents.services.job_results import task_job_settled, task_spending_approved


def on_job_settled(*, job_id: int, task_id: int | None = None, **_) -> None:
    if task_id is not None:
        transaction.on_commit(lambda: task_job_settled(task_id=task_id, job_id=job_id))


def on_approval_granted(*, task_id: int | None = None, **_) -> None:
    if task_id is not None:
        transaction.on_commit(lambda: task_spending_approved(task_id=task_id))
