"""Row locks never deadlock another transaction's foreign-key checks (agents/locks.py).

The shape found by the resume scenario (issue 18): a person confirms a card — their transaction locks the task,
then appends `card.resolved` to the event log — while a turn opens the next card — its transaction appended its
own event first (holding the workspace's event-log row), inserted the card pointing at the task, and checks that
foreign key at COMMIT (Django's constraints are deferred). Under FOR UPDATE the turn's check waits for the
person's task lock while the person waits for the event-log row: PostgreSQL kills one of them. Under FOR NO KEY
UPDATE the check does not wait, the turn commits, and the person goes on.
"""

import threading

import pytest
from django.db import connection, transaction

from agents.locks import task_qs_for_update
from agents.models import Card, CardKind, Task
from workspace.services.events import event_append

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def test_a_person_locking_the_task_does_not_deadlock_a_turn_inserting_a_card_for_it(workspace, alice):
    task = Task.objects.create(workspace=workspace, title="Posters", brief="", created_by=alice)
    person_has_task, turn_has_log = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def person():
        try:
            with transaction.atomic():
                task_qs_for_update().get(pk=task.pk)  # card_act: the task first
                person_has_task.set()
                assert turn_has_log.wait(10)
                event_append(workspace_id=workspace.pk, kind="card.resolved", data={"task": task.pk})
        except BaseException as exc:  # noqa: BLE001 - reported to the test thread
            errors.append(exc)
        finally:
            connection.close()

    def turn():
        try:
            assert person_has_task.wait(10)
            with transaction.atomic():
                event_append(workspace_id=workspace.pk, kind="card.opened", data={"task": task.pk})
                Card.objects.create(
                    workspace=workspace, task=task, kind=CardKind.CONFIRM, title="Confirm the paid step", payload={}
                )
                turn_has_log.set()
            # COMMIT checked the card's foreign key to the task the person holds
        except BaseException as exc:  # noqa: BLE001 - reported to the test thread
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=person), threading.Thread(target=turn)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)

    # then both committed: no deadlock, one card, both events in the log
    assert errors == []
    assert Card.objects.filter(task=task).count() == 1
    kinds = workspace.events.filter(kind__startswith="card.").order_by("seq").values_list("kind", flat=True)
    assert list(kinds) == ["card.opened", "card.resolved"]
