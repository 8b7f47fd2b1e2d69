"""Our own workers' jobs are queued in the job row's transaction: a submission that cannot be uncertain.

On the ORM broker the message lives in the job's database, so the row and its message commit together. A crash or
a database outage between the two used to leave a `submitting` job that the sweeper failed as
`submission_uncertain` — its task stopping with a failed generation although nothing had failed (the chaos soak's
rare `generation_failed`).
"""

from datetime import timedelta

import pytest
from django.db import OperationalError, connection
from django.utils import timezone
from django_q.models import OrmQ
from django_q.signing import SignedPackage

from workspace.models import Event, GenerationJob
from workspace.providers import base
from workspace.services.jobs import job_submit, jobs_poll_silent

pytestmark = pytest.mark.django_db(transaction=True)

SMALL = {"width": 96, "height": 128}


def submit(workspace, key: str = "9:1:0") -> GenerationJob:
    return job_submit(workspace_id=workspace.pk, idempotency_key=key, kind="image", prompt="retro poster", params=SMALL)


def job_statuses(workspace) -> list[str]:
    return [e.data["status"] for e in Event.objects.filter(workspace=workspace, kind="generation.progress")]


def watch_enqueues(monkeypatch) -> list[bool]:
    """Whether each message was queued inside a transaction."""
    seen, real = [], base.async_task

    def watch(*args, **kwargs):
        seen.append(connection.in_atomic_block)
        return real(*args, **kwargs)

    monkeypatch.setattr(base, "async_task", watch)
    return seen


def test_it_commits_the_job_submitted_with_its_message(workspace, monkeypatch):
    in_transaction = watch_enqueues(monkeypatch)

    # when a procedural job is submitted
    job = submit(workspace)

    # then the job is submitted, named by its message, and that message waits in the broker
    assert job.status == "submitted" and job.submitted_at is not None
    message = OrmQ.objects.get()
    task = SignedPackage.loads(message.payload)
    assert (task["id"], task["name"], task["args"]) == (job.upstream_id, f"generation-{job.pk}", (job.pk,))
    assert job_statuses(workspace) == ["submitting", "submitted"]
    # and its message was written in the job's own transaction
    assert in_transaction == [True]


def test_a_broker_failure_rolls_the_job_back_and_a_retry_submits_it_once(workspace, monkeypatch):
    # given a database that fails while the message is written
    def lost(*args, **kwargs):
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(base, "async_task", lost)

    # when the job is submitted, it fails with the database error, and nothing of it is left to be uncertain about
    with pytest.raises(OperationalError):
        submit(workspace)
    assert not GenerationJob.objects.exists()
    assert not OrmQ.objects.exists()
    assert job_statuses(workspace) == []

    # when the same call is made again once the database is back
    monkeypatch.undo()
    job = submit(workspace)

    # then it is submitted once, with one message
    assert job.status == "submitted"
    assert GenerationJob.objects.count() == 1 and OrmQ.objects.count() == 1


def test_another_broker_falls_back_to_submitting_after_the_commit(workspace, monkeypatch):
    # given a broker outside the job's database (Redis, say): its worker could see the message before the row
    monkeypatch.setattr(base, "_broker_in_database_of", lambda model: False)
    in_transaction = watch_enqueues(monkeypatch)

    # when a job is submitted
    job = submit(workspace)

    # then the message was sent after the row had committed (`submitting`), and the id stored after it
    assert in_transaction == [False]
    assert job.status == "submitted" and OrmQ.objects.count() == 1


def test_in_sync_mode_the_work_runs_after_the_row_has_committed(workspace, monkeypatch):
    from django_q.conf import Conf

    # given django-q in sync mode (enqueuing runs the work at once, as in scripts and some tests)
    monkeypatch.setattr(Conf, "SYNC", True)
    in_transaction = watch_enqueues(monkeypatch)

    # when a job is submitted
    job = submit(workspace)

    # then its work ran outside the row's transaction, found the row, and finished it; nothing waits in a queue
    job.refresh_from_db()
    assert in_transaction == [False]
    assert job.status == "succeeded" and job.artifact_version is not None
    assert not OrmQ.objects.exists()


class Killed(BaseException):
    """The submitting process died here."""


def test_a_job_of_ours_left_submitting_is_queued_again_not_failed_as_uncertain(workspace, monkeypatch, settings):
    # given a broker outside the job's database, and a process that died between the row's commit and its message
    monkeypatch.setattr(base, "_broker_in_database_of", lambda model: False)

    def dies(*args, **kwargs):
        raise Killed()

    with monkeypatch.context() as patched:
        patched.setattr(base, "async_task", dies)
        with pytest.raises(Killed):
            submit(workspace)
    job = GenerationJob.objects.get()
    assert (job.status, job.upstream_id, OrmQ.objects.count()) == ("submitting", "", 0)

    # when the sweeper finds it stuck past the submission timeout, twice
    later = timezone.now() + timedelta(seconds=settings.LOMOTE_GENERATION_SUBMIT_TIMEOUT + 1)
    first, second = jobs_poll_silent(now=later), jobs_poll_silent(now=later)

    # then it is ours, so nothing was uncertain: its message was queued again once, and the job goes on
    assert (first.recovered, first.uncertain, second.recovered, second.uncertain) == ([job.pk], [], [], [])
    job.refresh_from_db()
    assert job.status == "submitted" and job.upstream_id
    task = SignedPackage.loads(OrmQ.objects.get().payload)
    assert (task["id"], task["name"]) == (job.upstream_id, f"generation-{job.pk}")


def test_a_remote_job_left_submitting_is_still_failed_as_uncertain(workspace, settings):
    from workspace.providers import registry
    from workspace.providers.simulated import SimulatedUpstream

    # given a job a remote upstream never confirmed (its row committed, no id stored)
    with registry.override("simulated", SimulatedUpstream(deliver=lambda headers, body: 200)) as upstream:
        job = GenerationJob.objects.create(
            workspace=workspace, kind="image", provider="simulated", prompt="a poster", idempotency_key="9:1:1"
        )

        # when the sweeper finds it stuck
        later = timezone.now() + timedelta(seconds=settings.LOMOTE_GENERATION_SUBMIT_TIMEOUT + 1)
        sweep = jobs_poll_silent(now=later)

    # then it is failed as uncertain and never submitted again
    assert (sweep.uncertain, sweep.recovered, upstream.submissions) == ([job.pk], [], 0)
    job.refresh_from_db()
    assert (job.status, job.error["code"]) == ("failed", "submission_uncertain")
