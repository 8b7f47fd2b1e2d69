"""`manage.py qcluster`: django-q2's, with queues that survive a SIGKILLed worker (lomote.kernel.qcluster_queue).

It takes the place of django-q2's command because `lomote` is listed before `django_q` in INSTALLED_APPS.
"""

from django_q import cluster
from django_q.management.commands.qcluster import Command as DjangoQClusterCommand

from lomote.kernel.qcluster_queue import PatientQueue


class Command(DjangoQClusterCommand):
    help = "Starts a django-q2 cluster whose workers never wait holding a queue lock (a SIGKILL cannot wedge it)."

    def handle(self, *args, **options):
        cluster.Queue = PatientQueue  # the sentinel builds its task and result queues from this name (fork: inherited)
        return super().handle(*args, **options)
