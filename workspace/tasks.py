"""django-q2 jobs of the workspace app. Thin: they carry ids and call a service."""

from workspace.services.generation import job_work


def generation_work(job_id: int) -> str:
    """Render or fetch a generation job's result in a worker (WorkerProvider); reports via job_event_apply."""
    return job_work(job_id=job_id)
