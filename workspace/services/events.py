from typing import Any

from django.db import connection
from django.utils import timezone
from django.utils.translation import gettext_noop
from psycopg.types.json import Jsonb

from lomote.kernel.events import push_hint_on_commit
from lomote.kernel.exceptions import NotFound
from workspace.models import Event, Workspace


def event_append(*, workspace_id: int, kind: str, data: dict[str, Any] | None = None) -> Event:
    """Append an event in the caller's transaction; push a hint once it commits.

    Must run inside `transaction.atomic`: the event commits or rolls back with the change it describes.
    The workspace row stays locked until commit, which keeps sequences gapless and in commit order.
    """
    if not connection.in_atomic_block:
        raise RuntimeError("event_append must run inside the transaction of the change it records")
    data = data or {}
    if connection.vendor == "postgresql":
        event = _append_in_one_statement(workspace_id, kind, data)
        push_hint_on_commit(workspace_id, event.seq)
        return event
    table = connection.ops.quote_name(Workspace._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table} SET last_event_seq = last_event_seq + 1 WHERE id = %s RETURNING last_event_seq",  # noqa: S608 - table name from model meta
            [workspace_id],
        )
        row = cursor.fetchone()
    if row is None:
        raise NotFound(gettext_noop("Workspace not found."))
    event = Event.objects.create(workspace_id=workspace_id, seq=row[0], kind=kind, data=data)
    push_hint_on_commit(workspace_id, event.seq)
    return event


def _append_in_one_statement(workspace_id: int, kind: str, data: dict[str, Any]) -> Event:
    """PostgreSQL: take the next sequence and insert the event in one round trip (a data-modifying CTE).

    Events are appended on every runtime step, so the saved round trip is measurable (make bench).
    """
    workspace_table = connection.ops.quote_name(Workspace._meta.db_table)
    event_table = connection.ops.quote_name(Event._meta.db_table)
    now = timezone.now()
    with connection.cursor() as cursor:
        cursor.execute(
            f"WITH next AS (UPDATE {workspace_table} SET last_event_seq = last_event_seq + 1 "  # noqa: S608 - names from model meta
            "WHERE id = %s RETURNING id, last_event_seq) "
            f"INSERT INTO {event_table} (workspace_id, seq, kind, data, created_at) "
            "SELECT id, last_event_seq, %s, %s, %s FROM next RETURNING id, seq",
            [workspace_id, kind, Jsonb(data), now],
        )
        row = cursor.fetchone()
    if row is None:
        raise NotFound(gettext_noop("Workspace not found."))
    return Event(pk=row[0], workspace_id=workspace_id, seq=row[1], kind=kind, data=data, created_at=now)
