"""Run the django-q messages a test queued, in the test's process, as a worker of the ORM broker would."""

from pydoc import locate

from django_q.models import OrmQ


def run_queued(func: str) -> list:
    """Run and acknowledge every queued message for `func` (a dotted path), oldest first; returns their results.
    Messages they queue in turn are run too."""
    results = []
    while True:
        message = next((m for m in OrmQ.objects.order_by("pk") if m.task.get("func") == func), None)
        if message is None:
            return results
        task = message.task
        OrmQ.objects.filter(pk=message.pk).delete()
        results.append(locate(func)(*task.get("args", ()), **task.get("kwargs", {})))


def queued(func: str) -> list[tuple]:
    """The arguments of every message queued for `func`, oldest first."""
    return [m.task.get("args", ()) for m in OrmQ.objects.order_by("pk") if m.task.get("func") == func]


def run_wakeups() -> list[str]:
    """What a worker does after job reports: each settled job's reaction on its task (agents/queue.py)."""
    return run_queued("agents.tasks.job_settled")


def run_summaries() -> list:
    """What a worker does after turns end: rewrite each task's summary and search row (agents/services/summaries.py)."""
    return run_queued("agents.tasks.summary_refresh")
