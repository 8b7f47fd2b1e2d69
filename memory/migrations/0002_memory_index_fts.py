# Keyword search over memory search rows (memory/selectors.py: recall) uses this exact expression on PostgreSQL
# (memory/search.py: FTS_DOCUMENT); SQLite has no full-text index and searches with icontains instead.
# fastupdate off: memories are written a few at a time and searched at every recall, and GIN's pending list
# (new entries kept unsorted until a vacuum) makes every search scan it: 6 ms instead of 0.1 ms per word with
# 10,000 fresh rows (bench/memory_bench.py).

from django.db import migrations

FTS_INDEX = "memory_memoryindex_document_fts"


def create_fts_index(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            f"CREATE INDEX {FTS_INDEX} ON memory_memoryindex "
            "USING gin (to_tsvector('simple'::regconfig, COALESCE(document, ''))) WITH (fastupdate = off)"
        )


def drop_fts_index(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"DROP INDEX IF EXISTS {FTS_INDEX}")


class Migration(migrations.Migration):

    dependencies = [
        ('memory', '0001_memory'),
    ]

    operations = [
        migrations.RunPython(create_fts_index, drop_fts_index),
    ]
