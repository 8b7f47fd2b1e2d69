"""django-q2 jobs. Thin: they carry ids and call the runtime."""

from agents.runtime.loop import turn_run
from agents.services.memory_feed import messages_consumed_record as _messages_consumed_record
from agents.services.summaries import task_summary_refresh
from agents.services.wakeups import task_job_settled


def run_turn(turn_id: int, generation: int) -> str:
    return turn_run(turn_id=turn_id, generation=generation)


def job_settled(task_id: int, job_id: int) -> str:
    """A generation job of the task settled: record it and decide whether the task goes on (agents/queue.py)."""
    return task_job_settled(task_id=task_id, job_id=job_id)


def summary_refresh(task_id: int) -> str | None:
    """A turn ended: rewrite the task's summary and so its search row (agents/services/summaries.py)."""
    return task_summary_refresh(task_id=task_id)


def messages_consumed_record(task_id: int, message_ids: list[int]) -> list[int]:
    """A step consumed a person's messages: record them as memory evidence (agents/services/memory_feed.py)."""
    return _messages_consumed_record(task_id=task_id, message_ids=message_ids)
