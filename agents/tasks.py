"""django-q2 jobs. Thin: they carry ids and call the runtime."""

from agents.runtime.loop import turn_run
from agents.services.wakeups import task_job_settled


def run_turn(turn_id: int, generation: int) -> str:
    return turn_run(turn_id=turn_id, generation=generation)


def job_settled(task_id: int, job_id: int) -> str:
    """A generation job of the task settled: record it and decide whether the task goes on (agents/queue.py)."""
    return task_job_settled(task_id=task_id, job_id=job_id)
