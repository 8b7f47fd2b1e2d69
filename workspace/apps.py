from django.apps import AppConfig
from django.db.models.signals import post_migrate


def _sync_builtin_guides(sender, using, **kwargs):
    """The shipped guides are data the code brings: every migrate (and test-database flush) records the files'
    current versions, idempotently (workspace/services/guides.py)."""
    from django.db import connections

    from workspace.models import BuiltinGuide
    from workspace.services.guides import guides_sync

    # Not before the table exists (a migrate back to an older state also ends with this signal).
    if BuiltinGuide._meta.db_table in connections[using].introspection.table_names():
        guides_sync(using=using)


class WorkspaceConfig(AppConfig):
    name = "workspace"
    verbose_name = "Workspaces"

    def ready(self):
        from workspace import schema, subscribers  # noqa: F401 - schema registers the OpenAPI auth extension

        subscribers.install()
        post_migrate.connect(_sync_builtin_guides, sender=self, dispatch_uid="workspace.sync_builtin_guides")
