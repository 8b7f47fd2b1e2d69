import signal
import time

from django.conf import settings
from django.core.management.base import BaseCommand
from django.db import close_old_connections

from agents.runtime.watchdog import watchdog_sweep


class Command(BaseCommand):
    help = "Run the runtime watchdog every LOMOTE_WATCHDOG_PERIOD seconds (several may run at once safely)."

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
            report = watchdog_sweep()
            if once:
                self.stdout.write(str(report))
                return
            deadline = time.monotonic() + settings.LOMOTE_WATCHDOG_PERIOD
            while not stopping and time.monotonic() < deadline:
                time.sleep(0.2)
            if stopping:
                return
