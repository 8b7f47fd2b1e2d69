"""Jobs run by real worker processes in tests (a qcluster imports them by dotted path from the repo root)."""

from django.db import transaction

from workspace.services.events import event_append


def append_event(workspace_id: int, kind: str = "job.finished", data: dict | None = None) -> int:
    """Record one event as a worker job would: in its own transaction. Returns its sequence."""
    with transaction.atomic():
        event = event_append(workspace_id=workspace_id, kind=kind, data=data or {})
    return event.seq
