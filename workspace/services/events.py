from typing import Any

from django.db import connection

from lomote.events import push_hint_on_commit
from lomote.exceptions import NotFound
from workspace.models import Event, Workspace


def event_append(*, workspace_id: int, kind: str, data: dict[str, Any] | None = None) -> Event:
    """Append an event in the caller's transaction; push a hint once it commits.

    Must run inside `transaction.atomic`: the event commits or rolls back with the change it describes.
    The workspace row stays locked until commit, which keeps sequences gapless and in commit order.
    """
    if not connection.in_atomic_block:
        raise RuntimeError("event_append must run inside the transaction of the change it records")
    table = connection.ops.quote_name(Workspace._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table} SET last_event_seq = last_event_seq + 1 WHERE id = %s RETURNING last_event_seq",  # noqa: S608 - table name from model meta
            [workspace_id],
        )
        row = cursor.fetchone()
    if row is None:
        raise NotFound("Workspace not found.")
    event = Event.objects.create(workspace_id=workspace_id, seq=row[0], kind=kind, data=data or {})
    push_hint_on_commit(workspace_id, event.seq)
    return event
