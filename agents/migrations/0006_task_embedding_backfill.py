# Tasks created before 0004 have no search row: keyword and vector search (agents/services/task_index.py)
# would never find them. New and edited tasks get theirs from a post_save receiver.

from django.db import migrations

BATCH = 500


def backfill(apps, schema_editor):
    # Only the pure text functions are imported: they take strings, never the current models.
    from agents.language import fold
    from agents.services.task_index import DOCUMENT_CHARS, embed

    Task = apps.get_model("agents", "Task")
    TaskEmbedding = apps.get_model("agents", "TaskEmbedding")
    last = 0
    while True:
        tasks = list(
            Task.objects.filter(pk__gt=last, embedding__isnull=True)
            .order_by("pk")
            .only("pk", "workspace_id", "title", "brief", "summary")[:BATCH]
        )
        if not tasks:
            return
        rows = []
        for task in tasks:
            document = fold("\n".join(p for p in (task.title, task.brief, task.summary) if p))[:DOCUMENT_CHARS]
            rows.append(
                TaskEmbedding(task_id=task.pk, workspace_id=task.workspace_id, document=document, vector=embed(document))
            )
        TaskEmbedding.objects.bulk_create(rows, ignore_conflicts=True)
        last = tasks[-1].pk


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0005_task_autonomy_permissions"),
    ]

    operations = [
        migrations.RunPython(backfill, migrations.RunPython.noop),
    ]
