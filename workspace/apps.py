from django.apps import AppConfig


class WorkspaceConfig(AppConfig):
    name = "workspace"
    verbose_name = "Workspaces"

    def ready(self):
        from workspace import schema  # noqa: F401 - registers the OpenAPI auth extension
