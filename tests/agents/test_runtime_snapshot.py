"""The runtime's one-statement read of a task (agents/runtime/snapshot.py) says what the ORM reads say."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agents.models import (
    Card,
    CardKind,
    CardStatus,
    ChecklistItem,
    ChecklistStatus,
    InboxMessage,
    InboxStatus,
    Task,
)
from agents.runtime.snapshot import _orm_snapshot, _pg_snapshot
from billing.models import Approval, ApprovalKind, Authorisation, Order, OrderStatus
from memory.models import Evidence, EvidenceKind, ForgetRequest, ForgottenTerm, ProfileEntry, ProfileVersion
from workspace.models import Artifact, ArtifactKind, ChangeNotice

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]


def _order(task, key, amount, status):
    return Order.objects.create(
        workspace=task.workspace,
        idempotency_key=key,
        fingerprint=key,
        operation="image",
        amount=amount,
        status=status,
        authorisation=Authorisation.BUDGET,
        task_id=task.pk,
    )


def _budget(task, alice, scope, remaining, consumed=False):
    from django.utils import timezone

    return Approval.objects.create(
        workspace=task.workspace,
        kind=ApprovalKind.BUDGET,
        task_id=task.pk,
        scope=scope,
        amount=100,
        remaining=remaining,
        approved_by=alice,
        consumed_at=timezone.now() if consumed else None,
    )


@pytest.fixture
def busy_task(task, alice, workspace):
    """A task with something in every part the context reads, and things that must stay out."""
    task.goal_revision = 2
    task.waiting_for = {"type": "person", "card": 1}
    task.save(update_fields=["goal_revision", "waiting_for"])
    for position, status in ((2, ChecklistStatus.DONE), (1, ChecklistStatus.PENDING)):
        ChecklistItem.objects.create(
            task=task, position=position, title=f"Item {position}", status=status, evidence="seen", artifacts=[7]
        )
    InboxMessage.objects.create(task=task, author=alice, text="first")
    InboxMessage.objects.create(task=task, author=alice, text="gone", status=InboxStatus.WITHDRAWN)
    InboxMessage.objects.create(task=task, author=alice, text="second")
    for i in range(12):
        Card.objects.create(workspace=workspace, task=task, kind=CardKind.CONFIRM, title=f"Card {i}")
    Card.objects.create(workspace=workspace, task=task, kind=CardKind.CONFIRM, title="old", status=CardStatus.RESOLVED)
    artifact = Artifact.objects.create(workspace=workspace, kind=ArtifactKind.DOCUMENT, title="Doc")
    ChangeNotice.objects.create(
        workspace=workspace, artifact=artifact, task_id=task.pk, from_version=1, to_version=2, summary="changed"
    )
    _order(task, "a", 30, OrderStatus.CAPTURED)
    _order(task, "b", 12, OrderStatus.HELD)
    _order(task, "c", 99, OrderStatus.RELEASED)
    _budget(task, alice, "goal:2", 40)
    _budget(task, alice, "", 5)
    _budget(task, alice, "goal:2", 9, consumed=True)
    _budget(task, alice, "goal:1", 50)  # an earlier goal's budget no longer counts
    ProfileVersion.objects.create(workspace=workspace, number=1)
    profile = ProfileVersion.objects.create(workspace=workspace, number=2)
    ProfileEntry.objects.create(profile=profile, position=2, text="Likes teal")
    ProfileEntry.objects.create(profile=profile, position=1, text="Writes in French")
    evidence = Evidence.objects.create(
        workspace=workspace, kind=EvidenceKind.TASK_MESSAGE, source_id="1", text="x", content_hash="0" * 64
    )
    forget = ForgetRequest.objects.create(workspace=workspace, evidence=evidence)
    ForgottenTerm.objects.create(workspace=workspace, term="abc123", forget=forget)
    return task


def test_the_one_statement_snapshot_reads_what_the_orm_reads(busy_task):
    # when the task is read both ways
    with CaptureQueriesContext(connection) as queries:
        one = _pg_snapshot(busy_task.pk)
    many = _orm_snapshot(busy_task)

    # then the one statement agrees with the ORM on every part, in one query
    assert len(queries) == 1
    assert one.task.pk == busy_task.pk and one.task.goal_revision == 2 and one.task.brief == busy_task.brief
    # every field of the task as the ORM reads it, timestamps to the microsecond
    fields = [f.attname for f in Task._meta.concrete_fields]
    assert {f: getattr(one.task, f) for f in fields} == {f: getattr(many.task, f) for f in fields}
    assert one.task.created_at.tzinfo is not None
    # JSON columns decoded as the ORM decodes them
    assert one.task.waiting_for == many.task.waiting_for == {"type": "person", "card": 1}
    assert one.task.permissions == many.task.permissions and isinstance(one.task.permissions, dict)
    assert one.new_messages == many.new_messages == [(m.pk, m.text) for m in busy_task.inbox.order_by("pk")][::2]
    assert one.checklist == many.checklist and [i["position"] for i in one.checklist] == [1, 2]
    assert one.open_cards == many.open_cards and len(one.open_cards) == 10
    assert one.notices == many.notices and one.notices[0]["summary"] == "changed"
    assert one.spending == many.spending == {"spent": 30, "held": 12, "remaining": 45}
    assert (one.profile_number, one.profile_entries) == (many.profile_number, many.profile_entries)
    assert [text for text, _ in one.profile_entries] == ["Writes in French", "Likes teal"]
    assert one.forgotten_terms == many.forgotten_terms == frozenset({"abc123"})


def test_an_empty_task_reads_as_empty_and_without_a_budget(task):
    one, many = _pg_snapshot(task.pk), _orm_snapshot(task)

    assert one.new_messages == one.checklist == one.open_cards == one.notices == []
    assert one.spending == many.spending == {"spent": 0, "held": 0, "remaining": None}
    assert (one.profile_number, one.profile_entries, one.forgotten_terms) == (0, [], frozenset())
    assert (many.profile_number, many.profile_entries, many.forgotten_terms) == (0, [], frozenset())
