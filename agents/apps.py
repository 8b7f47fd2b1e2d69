from django.apps import AppConfig


class AgentsConfig(AppConfig):
    name = "agents"

    def ready(self):
        from django.db.models.signals import post_save

        from agents import flow_hooks, subscribers
        from agents.models import Task
        from agents.services import flow_runs
        from agents.services.task_index import on_task_saved
        from agents.tools import catalog
        from agents.tools import registry as tools
        from lomote.kernel import domain_events

        # The agent tools, from their explicit catalog (no tool module registers itself on import).
        tools.install(catalog.TOOLS)
        domain_events.subscribe("generation.job_settled")(subscribers.on_job_settled)
        domain_events.subscribe("billing.approval_granted")(subscribers.on_approval_granted)
        # The Router's search rows follow each task's title, brief and summary.
        post_save.connect(on_task_saved, sender=Task, dispatch_uid="agents.task_index")
        # Flow nodes that call a model (workspace cannot import agents: it exposes a hook).
        flow_hooks.install()
        # Quote cards whose approval starts a Flow run rather than granting a task budget.
        flow_runs.register()
