from django.conf import settings

from lomote.kernel.periodic import PeriodicCommand
from workspace.services.jobs import jobs_poll_silent


class Command(PeriodicCommand):
    help = (
        "Sweep generation jobs every LOMOTE_GENERATION_SWEEP_PERIOD seconds: fail uncertain submissions, poll "
        "silent jobs, time out overdue ones (several may run at once safely)."
    )
    name = "generation sweep"

    def period(self) -> float:
        return settings.LOMOTE_GENERATION_SWEEP_PERIOD

    def sweep(self):
        return jobs_poll_silent()
