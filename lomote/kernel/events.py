"""Push hints for the per-workspace event log (DESIGN §12).

The log in the database is the truth; a push only tells connected consumers to re-read it. Channel layers
are at-most-once, so a lost push costs latency (the consumer's tail catches up), never an event.
"""

import logging
import threading

from asgiref.sync import async_to_sync
from channels.layers import InMemoryChannelLayer, get_channel_layer
from django.db import transaction

logger = logging.getLogger(__name__)

HINT_TYPE = "event.hint"


def workspace_group(workspace_id: int) -> str:
    return f"workspace.{workspace_id}"


_pending = threading.local()


def push_hint_on_commit(workspace_id: int, seq: int) -> None:
    """Push one hint per workspace after the transaction commits, however many events it appended.

    A hint only says "re-read the log from where you are", so the highest sequence is all that matters;
    a value left behind by a rolled-back transaction is at worst a hint with nothing new behind it.
    """
    pending = _pending.__dict__.setdefault("by_workspace", {})
    pending[workspace_id] = max(seq, pending.get(workspace_id, 0))
    transaction.on_commit(lambda: _flush(workspace_id))


def _flush(workspace_id: int) -> None:
    seq = _pending.__dict__.setdefault("by_workspace", {}).pop(workspace_id, None)
    if seq is not None:  # the first callback after a commit pushes; the others find nothing left
        push_hint(workspace_id, seq)


def push_hint(workspace_id: int, seq: int) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    if isinstance(layer, InMemoryChannelLayer) and not layer.groups.get(workspace_group(workspace_id)):
        return  # nobody in this process listens (e.g. a worker process); consumers elsewhere tail the log
    try:
        async_to_sync(layer.group_send)(workspace_group(workspace_id), {"type": HINT_TYPE, "seq": seq})
    except Exception:  # noqa: BLE001 - a hint that cannot be sent is recovered by log tailing
        logger.warning("event push failed for workspace %s seq %s", workspace_id, seq, exc_info=True)
