"""Make sure a job the database still waits on has exactly one message a worker can take (DESIGN §14).

    acted = messages_revive({"turn-7-g2": lambda: enqueue(...)})

Sweepers call this for work the database says is still owed (a turn still queued, evidence still pending, a
silent render) and name each job by its django-q task name. For each name:
- a message still waiting its turn is left alone: under a backlog, re-enqueueing added a copy at every sweep,
  and the copies grew faster than the workers drained them;
- a message a process took and never finished (its worker, pusher or whole cluster was SIGKILLed) is handed out
  again now — the ORM broker would hide it for Q_CLUSTER["retry"] seconds (12 minutes). The job may then run
  twice if its first worker was only slow, so callers pass only work that is fenced or safe to repeat;
- a missing message (dropped, or acknowledged while the work did not happen) is enqueued again by its callable.
Returns the names it handed out or enqueued. Two sweepers at once: the lock move is conditional on the old lock,
so one hands a message out; both may enqueue a missing one (callers' work is safe to repeat).
"""

from collections.abc import Callable, Mapping

from django.utils import timezone
from django_q.models import OrmQ


def messages_revive(wanted: Mapping[str, Callable[[], object]]) -> list[str]:
    if not wanted:
        return []
    # The wall clock, whatever `now` a (time-travelled) sweep was given: it is what the broker compares locks with.
    now = timezone.now()
    found: set[str] = set()
    acted: list[str] = []
    for message in OrmQ.objects.only("pk", "payload", "lock").iterator():
        name = message.task.get("name")
        if name not in wanted or name in found:
            continue
        found.add(name)
        taken = message.lock is not None and message.lock > now
        if taken and OrmQ.objects.filter(pk=message.pk, lock=message.lock).update(lock=now):
            acted.append(name)
    for name, enqueue in wanted.items():
        if name not in found:
            enqueue()
            acted.append(name)
    return acted
