"""Load the encoder and every trained reader of words before the first message needs them.

A server or worker that starts cold would make a person's first message wait for the encoder (about a second on a
quiet machine) and for each decision's classifier (read from disk when fitted before, see fitted.py). Started in a
background thread as a process starts, this overlaps that wait with the process's own start-up; a message that
arrives meanwhile waits on the same locks, never loads twice.
"""

import logging
import threading
import time

logger = logging.getLogger(__name__)


def warm_up() -> None:
    """Load now, in this thread, what reading words needs. A failure is logged: the first use retries it."""
    from lomote.understanding.classifier import DECISIONS, decision_get
    from lomote.understanding.encoder import encoder_default
    from lomote.understanding.language_id import identifier
    from lomote.understanding.subject import tagger_get

    started = time.monotonic()
    try:
        encoder_default().encode(["warm up"])
        for name in DECISIONS:
            decision_get(name)
        tagger_get()
        identifier()
    except Exception:  # a broken install: the first message reports it where it happens
        logger.exception("understanding warm-up failed")
        return
    logger.info("understanding warmed up in %.2fs", time.monotonic() - started)


def warm_up_in_background() -> threading.Thread:
    thread = threading.Thread(target=warm_up, name="understanding-warm-up", daemon=True)
    thread.start()
    return thread
