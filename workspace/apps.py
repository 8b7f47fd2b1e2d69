from django.apps import AppConfig


class WorkspaceConfig(AppConfig):
    name = "workspace"
    verbose_name = "Workspaces"

    def ready(self):
        from workspace import schema, subscribers  # noqa: F401 - schema registers the OpenAPI auth extension

        subscribers.install()
