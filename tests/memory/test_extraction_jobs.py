"""Evidence and its extraction job: recorded once, a model extractor's junk refused item by item, failures
retried by the sweep."""

from datetime import timedelta

import pytest
from django.utils import timezone

from memory import domain_events, tasks
from memory.models import Evidence, EvidenceKind, MemoryVersion
from memory.services.evidence import MAX_ATTEMPTS, evidence_record, evidence_sweep, extraction_enqueue
from memory.services.extraction import evidence_extract
from memory.services.memories import Action
from tests.memory.statements import active, record

pytestmark = pytest.mark.django_db


@pytest.fixture
def model_extractor():
    """Install a model extractor for the test: `model_extractor(fn)`; the one before comes back after."""
    previous = domain_events.extractor()
    yield domain_events.extractor_install
    domain_events.extractor_install(previous)


@pytest.fixture
def enqueued(monkeypatch):
    sent: list[int] = []
    monkeypatch.setattr("memory.services.evidence._enqueue", sent.append)
    return sent


def test_it_records_a_source_once(workspace, alice):
    # when
    first = evidence_record(
        workspace_id=workspace.pk, kind=EvidenceKind.TASK_MESSAGE, source_id=7, text="Our tone is playful.", task_id=3
    )
    again = evidence_record(
        workspace_id=workspace.pk, kind=EvidenceKind.TASK_MESSAGE, source_id="7", text="something else"
    )

    # then
    assert again.pk == first.pk and again.text == "Our tone is playful."
    assert Evidence.objects.filter(workspace=workspace).count() == 1


def test_a_bad_candidate_among_good_ones_loses_nothing_else(workspace, alice, model_extractor):
    # given: a model that answers with junk between two good candidates
    good = {"content": "Our tone is playful", "subject": "Brand tone", "kind": "fact", "scope": "workspace"}
    junk = [
        "a string, not a candidate",
        {"content": "", "subject": "x", "kind": "fact"},
        {"content": "Gold everywhere", "subject": "accent colour", "kind": "wish"},
        {"subject": "no content", "kind": "preference"},
        None,
        {"content": "x" * 5000, "subject": "long", "kind": "fact"},
    ]
    also_good = {"content": "I prefer serif fonts", "subject": "font", "kind": "PREFERENCE", "scope": "person"}
    model_extractor(lambda **_: [good, *junk, also_good])
    evidence = record(workspace, alice, "anything: the model decides")

    # when
    outcomes = evidence_extract(evidence_id=evidence.pk)

    # then
    assert [o.action for o in outcomes] == [Action.ORIGIN] + [Action.INVALID] * len(junk) + [Action.ORIGIN]
    assert all(o.reason for o in outcomes[1:-1])
    assert "kind" in outcomes[3].reason
    assert {(v.memory.subject, v.content) for v in active(workspace)} == {
        ("brand tone", "Our tone is playful"),
        ("font", "I prefer serif fonts"),
    }
    evidence.refresh_from_db()
    assert evidence.extracted_at is not None


def test_a_model_without_an_answer_hands_over_to_the_scripted_extractor(workspace, alice, model_extractor):
    # given
    calls = []
    model_extractor(lambda **kwargs: calls.append(kwargs))  # returns None: no model for this workspace
    said_before = record(workspace, alice, "Our logo is a fox.")
    evidence_extract(evidence_id=said_before.pk)
    evidence = record(workspace, alice, "Notre ton est décontracté.")

    # when
    [outcome] = evidence_extract(evidence_id=evidence.pk)

    # then
    assert outcome.action == Action.ORIGIN
    assert calls[-1]["language"] == "fr" and calls[-1]["workspace_id"] == workspace.pk
    assert calls[-1]["existing"] == [
        {"subject": "brand logo", "content": "Our logo is a fox", "kind": "fact", "scope": "workspace"}
    ]


def test_a_failed_extraction_is_retried_by_the_sweep(workspace, alice, model_extractor, enqueued):
    # given: a model that fails once
    failures = [RuntimeError("model timed out")]

    def flaky(**_):
        if failures:
            raise failures.pop()
        return None

    model_extractor(flaky)
    evidence = record(workspace, alice, "Our tone is playful.")

    # when
    with pytest.raises(RuntimeError):
        tasks.evidence_extract(evidence.pk)
    evidence.refresh_from_db()
    too_early = evidence_sweep()
    Evidence.objects.filter(pk=evidence.pk).update(created_at=timezone.now() - timedelta(minutes=2))
    swept = evidence_sweep()
    result = tasks.evidence_extract(evidence.pk)

    # then
    assert (evidence.extraction_attempts, evidence.extracted_at) == (1, None)
    assert too_early == [] and swept == [evidence.pk] and enqueued == [evidence.pk]
    assert result == "origin"
    assert MemoryVersion.objects.filter(workspace=workspace).count() == 1
    assert tasks.evidence_extract(evidence.pk) == "not pending"  # a duplicate job does nothing
    assert evidence_sweep() == []  # extracted: no longer pending


def test_the_sweep_gives_up_after_the_last_attempt(workspace, alice, enqueued):
    # given
    evidence = record(workspace, alice, "Our tone is playful.")
    Evidence.objects.filter(pk=evidence.pk).update(
        created_at=timezone.now() - timedelta(minutes=5), extraction_attempts=MAX_ATTEMPTS
    )

    # when / then
    assert evidence_sweep() == []
    assert evidence_extract(evidence_id=evidence.pk) is None


def test_extraction_is_enqueued_after_commit(workspace, alice, enqueued, django_capture_on_commit_callbacks):
    # given
    evidence = record(workspace, alice, "Our tone is playful.")

    # when
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        extraction_enqueue(evidence.pk)
    assert enqueued == []
    for callback in callbacks:
        callback()

    # then
    assert enqueued == [evidence.pk]
