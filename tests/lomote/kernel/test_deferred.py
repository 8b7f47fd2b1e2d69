"""Work queued with the write that calls for it (lomote/kernel/deferred.py)."""

import pytest
from django.db import transaction
from django_q.conf import Conf
from django_q.models import OrmQ

from lomote.kernel.deferred import enqueue_with_commit
from workspace.models import Workspace

pytestmark = pytest.mark.django_db(transaction=True)


def names() -> list[str]:
    return sorted(m.task["name"] for m in OrmQ.objects.all())


def defer(name: str, written_with=Workspace) -> None:
    enqueue_with_commit("math.floor", 1.5, name=name, group="test", timeout=30, written_with=written_with)


def test_it_writes_the_message_in_the_transaction_on_the_orm_broker():
    # when work is queued inside a transaction that then commits
    with transaction.atomic():
        defer("follow-1")
        # then the message is already there, in the transaction, before any commit hook ran
        assert names() == ["follow-1"]
    assert names() == ["follow-1"]


def test_a_rolled_back_write_leaves_no_message():
    # when the transaction that queued the work fails
    with pytest.raises(RuntimeError), transaction.atomic():
        defer("follow-2")
        raise RuntimeError("rolled back")
    # then the work is gone with it
    assert names() == []


def test_it_queues_after_the_commit_when_the_broker_cannot_join_the_transaction(monkeypatch):
    # given a broker that cannot join the transaction (another broker, or another database)
    monkeypatch.setattr(Conf, "SYNC", False)
    monkeypatch.setattr("lomote.kernel.deferred.broker_in_database_of", lambda model: False)
    # when work is queued inside a transaction
    with transaction.atomic():
        defer("follow-3")
        # then nothing is sent before the commit, and the message exists once it committed
        assert names() == []
    assert names() == ["follow-3"]


def test_a_failed_enqueue_after_the_commit_is_logged_not_raised(monkeypatch, caplog):
    # given a broker that refuses the message after the commit
    monkeypatch.setattr("lomote.kernel.deferred.broker_in_database_of", lambda model: False)

    def refuse(*args, **kwargs):
        raise ConnectionError("broker down")

    monkeypatch.setattr("lomote.kernel.deferred.async_task", refuse)
    # when work is queued and the transaction commits
    with transaction.atomic():
        defer("follow-4")
    # then the caller's commit stands, and the loss is logged for the caller's sweep to make good
    assert names() == []
    assert "enqueue of math.floor follow-4 failed" in caplog.text
