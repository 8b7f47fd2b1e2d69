from django.apps import AppConfig


class WorkspaceConfig(AppConfig):
    name = "workspace"
    verbose_name = "Workspaces"

    def ready(self):
        from lomote.kernel import domain_events
        from workspace import schema  # noqa: F401 - registers the OpenAPI auth extension
        from workspace.flows.runner import on_job_settled
        from workspace.services.jobs import JOB_SETTLED

        # A Flow's generation node waits for its job: same app, but through the event like any subscriber.
        domain_events.subscribe(JOB_SETTLED)(on_job_settled)
