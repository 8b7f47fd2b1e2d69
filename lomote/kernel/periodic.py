"""The one loop behind every periodic command (the runtime watchdog, the generation sweeper).

Each period: close stale database connections, run `sweep()`, sleep until the next period or a stop signal.
A sweep that raises (a database restart, a bug on one row) is logged with its traceback and the loop goes on:
the next period retries, which is what makes these commands the recovery path (DESIGN §3, §4). `--once`
sweeps once, prints the report and lets an error through, for operators and tests.
"""

import logging
import signal
import time
from abc import ABC, abstractmethod
from typing import Any

from django.core.management.base import BaseCommand
from django.db import close_old_connections

logger = logging.getLogger(__name__)
POLL = 0.2  # how often a sleeping loop checks for a stop signal, in seconds


class PeriodicCommand(BaseCommand, ABC):
    """Subclasses set `help` and `name`, and implement `period()` and `sweep()` (which logs its own report)."""

    name = "periodic sweep"

    @abstractmethod
    def period(self) -> float:
        """Seconds between two sweeps."""

    @abstractmethod
    def sweep(self) -> Any:
        """One pass of the work; returns a report (printed by --once)."""

    def add_arguments(self, parser):
        parser.add_argument("--once", action="store_true", help="Sweep once and exit.")

    def handle(self, *args, once: bool = False, **options):
        if once:
            close_old_connections()
            self.stdout.write(str(self.sweep()))
            return
        self.stopping = False
        signal.signal(signal.SIGTERM, self.stop)
        signal.signal(signal.SIGINT, self.stop)
        while not self.stopping:
            self.run_once()
            deadline = time.monotonic() + self.period()
            while not self.stopping and time.monotonic() < deadline:
                time.sleep(POLL)

    def stop(self, *_) -> None:
        self.stopping = True

    def run_once(self) -> bool:
        """One guarded sweep: True if it completed, False if it failed (and was logged)."""
        close_old_connections()
        try:
            self.sweep()
        except Exception:  # noqa: BLE001 - a failed sweep is retried next period; the loop must survive it
            logger.exception("%s failed; retrying in %.0f s", self.name, self.period())
            return False
        return True
