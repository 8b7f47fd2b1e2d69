"""Every reaction of agents to something that happened elsewhere, in one list (`install`, from AgentsConfig.ready).

- a generation job settled (workspace) → the task waiting on it wakes (wakeups.task_job_settled), in a worker: the
  report that settled it (a provider's webhook) only queues that, with its own commit;
- spending was approved (billing) → the task waiting for that approval wakes (wakeups.task_spending_approved);
- a task's title, brief or summary was saved → the Router's search row for it follows (task_index);
- a memory was forgotten (memory) → the tasks' search rows drop what carried it (task_index_forget);
- a Flow run over a conversation thread ended (workspace) → its result is posted in that thread, in the
  transaction that ended the run, once per end (flow_threads.flow_result_post);
- a Flow node calls a model (workspace asks through its text hooks) → the model providers answer (flow_nodes);
- memory extracts memories from evidence (its extractor hook) → the task's model reads it (memory_feed).

Publishers hold their own locks (the job, the workspace row) when they publish, and task writers lock the
task first; so the wake-ups run after the publisher's commit, in their own transaction. A settled job's reaction
is queued in the job's own transaction (lomote/kernel/deferred.py): a job report costs its own writes, not the
task's summary, episode and search rows. If a reaction is lost all the same (another broker, a process dying
after an on-commit), the watchdog finds the task waiting on settled jobs or granted approvals and does it, once.
"""

from django.db import transaction
from django.db.models.signals import post_save

from agents.models import Task
from agents.queue import job_settled_enqueue
from agents.selectors import goal_scope_of
from agents.services import flow_nodes, memory_feed
from agents.services.embedding_endpoint import embedding_endpoint
from agents.services.flow_threads import flow_result_post
from agents.services.task_index import on_task_saved, task_index_forget
from agents.services.wakeups import task_spending_approved
from billing.domain_events import APPROVAL_GRANTED
from billing.scopes import scope_resolver_install
from lomote.kernel import domain_events
from memory.domain_events import MEMORY_FORGOTTEN, extractor_install
from workspace.domain_events import FLOW_RUN_ENDED, JOB_SETTLED, text_hooks_install
from workspace.search import endpoint_resolver_install


def on_job_settled(*, job_id: int, task_id: int | None = None, **_) -> None:
    if task_id is not None:
        job_settled_enqueue(task_id=task_id, job_id=job_id)


def on_approval_granted(*, workspace_id: int, task_id: int | None = None, **_) -> None:
    if task_id is not None:
        transaction.on_commit(lambda: task_spending_approved(workspace_id=workspace_id, task_id=task_id))


def on_memory_forgotten(*, workspace_id: int, **_) -> None:
    # In the forget's transaction: the Router's search rows stop carrying it at the same moment.
    task_index_forget(workspace_id=workspace_id)


def on_flow_run_ended(**payload) -> None:
    # In the run's transaction: the result is in its thread exactly when the run is seen ended.
    flow_result_post(**payload)


def goal_scope(workspace_id: int, task_id: int) -> str | None:
    """A task's spending scope for billing: approvals hold for the goal revision they were given for.

    None when the workspace has no such task (another workspace's included): billing answers 404 for it."""
    revision = (
        Task.objects.filter(workspace_id=workspace_id, pk=task_id).values_list("goal_revision", flat=True).first()
    )
    return None if revision is None else goal_scope_of(revision)


def install() -> None:
    # Billing binds approvals to this scope: a changed goal asks for spending again (DESIGN §11).
    scope_resolver_install(goal_scope)
    endpoint_resolver_install(embedding_endpoint)  # workspace search embeds with the profile's embedding model
    domain_events.subscribe(JOB_SETTLED)(on_job_settled)
    domain_events.subscribe(APPROVAL_GRANTED)(on_approval_granted)
    domain_events.subscribe(FLOW_RUN_ENDED)(on_flow_run_ended)
    # A Django signal, kept deliberately: it follows every save of those fields, the admin's included, and
    # saves naming only other fields (the runtime's status moves) return at once.
    post_save.connect(on_task_saved, sender=Task, dispatch_uid="agents.task_index")
    text_hooks_install(generate=flow_nodes.generate, choose=flow_nodes.choose)
    extractor_install(memory_feed.model_extractor)
    domain_events.subscribe(MEMORY_FORGOTTEN)(on_memory_forgotten)
