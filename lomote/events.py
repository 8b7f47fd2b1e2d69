"""Push hints for the per-workspace event log (DESIGN §12).

The log in the database is the truth; a push only tells connected consumers to re-read it. Channel layers
are at-most-once, so a lost push costs latency (the consumer's tail catches up), never an event.
"""

import logging

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

logger = logging.getLogger(__name__)

HINT_TYPE = "event.hint"


def workspace_group(workspace_id: int) -> str:
    return f"workspace.{workspace_id}"


def push_hint(workspace_id: int, seq: int) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        async_to_sync(layer.group_send)(workspace_group(workspace_id), {"type": HINT_TYPE, "seq": seq})
    except Exception:  # noqa: BLE001 - a hint that cannot be sent is recovered by log tailing
        logger.warning("event push failed for workspace %s seq %s", workspace_id, seq, exc_info=True)
