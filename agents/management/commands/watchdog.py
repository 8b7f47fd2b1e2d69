from django.conf import settings

from agents.runtime.watchdog import watchdog_sweep
from lomote.kernel.periodic import PeriodicCommand


class Command(PeriodicCommand):
    help = "Run the runtime watchdog every LOMOTE_WATCHDOG_PERIOD seconds (several may run at once safely)."
    name = "watchdog sweep"

    def period(self) -> float:
        return settings.LOMOTE_WATCHDOG_PERIOD

    def sweep(self):
        return watchdog_sweep()
