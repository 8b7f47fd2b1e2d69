import logging
import signal
import time

from django.conf import settings
from django.core.management.base import BaseCommand
from django.db import close_old_connections

from workspace.services.generation import jobs_poll_silent

logger = logging.getLogger(__name__)


class Command(BaseCommand):
    help = (
        "Sweep generation jobs every LOMOTE_GENERATION_SWEEP_PERIOD seconds: fail uncertain submissions, poll "
        "silent jobs, time out overdue ones (several may run at once safely)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--once", action="store_true", help="Sweep once and exit.")

    def handle(self, *args, once: bool, **options):
        stopping = False

        def stop(*_):
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        while True:
            close_old_connections()
            try:
                sweep = jobs_poll_silent()
            except Exception:  # noqa: BLE001 - a failed sweep (database restart, say) is retried next period
                if once:
                    raise
                logger.exception("generation sweep failed")
            else:
                if once:
                    self.stdout.write(str(sweep))
                    return
            deadline = time.monotonic() + settings.LOMOTE_GENERATION_SWEEP_PERIOD
            while not stopping and time.monotonic() < deadline:
                time.sleep(0.2)
            if stopping:
                return
