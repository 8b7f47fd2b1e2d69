from django.apps import AppConfig


class AgentsConfig(AppConfig):
    name = "agents"

    def ready(self):
        from agents import scripted, subscribers
        from agents.runtime import resumption
        from agents.services import artifact_delete, flow_runs, memory_forget
        from agents.tools import catalog
        from agents.tools import registry as tools

        # The agent tools, from their explicit catalog (no tool module registers itself on import).
        tools.install(catalog.TOOLS)
        # Quote cards whose approval starts a Flow run rather than granting a task budget.
        flow_runs.register()
        # Confirm cards of no task: forgetting a memory is carried out when a person confirms it.
        memory_forget.register()
        # Deleting an artifact is carried out when a person confirms its card.
        artifact_delete.register()
        # Review cards of a resume (DESIGN §11): confirming settles what the verdict left open.
        resumption.install()
        # Every reaction to other apps' events, and the hooks agents answers for workspace.
        subscribers.install()
        # The embedded default's model: the scripted planner and Router, registered by kind (DESIGN §10).
        scripted.install()
