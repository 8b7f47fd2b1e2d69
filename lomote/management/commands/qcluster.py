"""`manage.py qcluster`: django-q2's, with queues that survive a SIGKILLed worker (lomote.kernel.qcluster_queue)
and workers that load the readers of words as they start (lomote.understanding.warm).

It takes the place of django-q2's command because `lomote` is listed before `django_q` in INSTALLED_APPS.
"""

from django_q import cluster
from django_q.management.commands.qcluster import Command as DjangoQClusterCommand
from django_q.worker import worker

from lomote.kernel.qcluster_queue import PatientQueue
from lomote.understanding.warm import warm_up_in_background


def warmed_worker(*args, **kwargs):
    """django-q2's worker loop, with the words' readers loading beside it: a worker's first turn does not wait for
    the encoder and classifiers to load (they are per process)."""
    warm_up_in_background()
    return worker(*args, **kwargs)


class Command(DjangoQClusterCommand):
    help = "Starts a django-q2 cluster whose workers never wait holding a queue lock (a SIGKILL cannot wedge it)."

    def handle(self, *args, **options):
        cluster.Queue = PatientQueue  # the sentinel builds its task and result queues from this name (fork: inherited)
        cluster.worker = warmed_worker  # the sentinel spawns (and recognises) its workers by this name
        return super().handle(*args, **options)
