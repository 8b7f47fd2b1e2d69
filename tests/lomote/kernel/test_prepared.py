"""The runtime's hot statements are prepared once per connection; nothing else is, and Django still sees them."""

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from agents.models import Task
from agents.runtime.snapshot import task_snapshot
from lomote.kernel.prepared import _converted, prepared_cursor, prepared_enabled

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def _prepared_on_server(fragment: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE %s", [f"%{fragment}%"])
        return cursor.fetchone()[0]


@pytest.fixture
def task(workspace, alice):
    return Task.objects.create(workspace=workspace, title="Poster", brief="A warm poster", created_by=alice)


def test_the_snapshot_is_planned_once_and_reused_on_the_connection(task):
    assert prepared_enabled()
    first = task_snapshot(task.pk)
    again = task_snapshot(task.pk)
    assert (first.task.pk, again.task.title) == (task.pk, "Poster")
    assert _prepared_on_server("agents_inboxmessage") == 1  # one statement, reused by the second read


def test_other_queries_are_never_prepared_however_often_they_run(task):
    for _ in range(20):
        assert Task.objects.filter(pk=task.pk, title="Poster").exists()
    assert _prepared_on_server('"agents_task"."title"') == 0


def test_query_logging_still_sees_a_prepared_statement(task):
    with CaptureQueriesContext(connection) as captured:
        task_snapshot(task.pk)
    assert len(captured.captured_queries) == 1
    assert "agents_inboxmessage" in captured.captured_queries[0]["sql"]


def test_a_rolled_back_transaction_leaves_the_statement_usable(task):
    task_snapshot(task.pk)
    with pytest.raises(RuntimeError), transaction.atomic():
        task_snapshot(task.pk)
        raise RuntimeError("roll back")
    Task.objects.filter(pk=task.pk).update(title="Poster v2")
    assert task_snapshot(task.pk).task.title == "Poster v2"


def test_a_statement_longer_than_psycopgs_cache_limit_is_converted_once(task):
    # given a statement over 4 KB (psycopg converts such texts' placeholders anew at every execution)
    long = "SELECT %(a)s::int + %(b)s::int /* " + "x" * 5000 + " */"
    _converted.cache_clear()

    # when it runs three times with different values
    with prepared_cursor() as cursor:
        sums = []
        for a in (1, 2, 3):
            cursor.execute(long, {"a": a, "b": 10})
            sums.append(cursor.fetchone()[0])

    # then each ran with its own values, and its text was converted once
    assert sums == [11, 12, 13]
    info = _converted.cache_info()
    assert (info.misses, info.hits) == (1, 2)
