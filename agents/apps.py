from django.apps import AppConfig


class AgentsConfig(AppConfig):
    name = "agents"

    def ready(self):
        from agents import subscribers
        from agents.tools import generation  # noqa: F401 - registers the generation tools
        from lomote import domain_events

        domain_events.subscribe("generation.job_settled")(subscribers.on_job_settled)
        domain_events.subscribe("billing.approval_granted")(subscribers.on_approval_granted)
