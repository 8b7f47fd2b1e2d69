"""django-q2 jobs of the workspace app. Thin: they carry ids and call a service."""

from workspace.flows import runner
from workspace.search.query import embeddings_follow
from workspace.services.jobs import job_work


def generation_work(job_id: int) -> str:
    """Render or fetch a generation job's result in a worker (WorkerProvider); reports via job_event_apply."""
    return job_work(job_id=job_id)


def flow_node_work(node_run_id: int) -> str:
    """Run one node of a Flow run (workspace/flows/runner.py)."""
    return runner.flow_node_work(node_run_id)


def flow_node_settle(node_run_id: int) -> str:
    """Record a Flow generation node's settled job (workspace/flows/runner.py)."""
    return runner.flow_node_settle(node_run_id)


def embeddings_follow_work(workspace_id: int, kind: str, object_ids: list[int]) -> str:
    """Embed saved objects after their save committed (workspace/search/query.py `embeddings_update`)."""
    return embeddings_follow(workspace_id=workspace_id, kind=kind, object_ids=object_ids)
