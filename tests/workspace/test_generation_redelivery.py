"""A generation job whose queue message a dead process took is handed out again by the sweeper.

The ORM broker hides a message it handed out for Q_CLUSTER["retry"] seconds (12 minutes): a SIGKILLed worker,
pusher or cluster used to leave its task waiting that long on a job nobody ran (the chaos soak's
`lost_generation_jobs`). The sweeper now gives a silent rerun-safe job back to the workers at once.
"""

from datetime import timedelta

import pytest
from django.utils import timezone
from django_q.brokers import get_broker
from django_q.models import OrmQ
from django_q.models import Task as QTask

from tests.support import qcluster as cluster
from tests.support.realtime import worker_env
from workspace.models import GenerationJob
from workspace.providers import registry
from workspace.providers.procedural import ProceduralProvider
from workspace.services.jobs import job_submit, jobs_poll_silent
from workspace.tasks import generation_work

SMALL = {"width": 96, "height": 128}


def later(seconds: float):
    return timezone.now() + timedelta(seconds=seconds)


def submit(workspace, key: str = "9:1:0") -> GenerationJob:
    return job_submit(workspace_id=workspace.pk, idempotency_key=key, kind="image", prompt="retro poster", params=SMALL)


def take_and_die() -> None:
    """What a worker SIGKILLed mid-job leaves behind: the message handed out (locked for `retry`), never acked."""
    assert get_broker().dequeue()


def available() -> int:
    return OrmQ.objects.filter(lock__lte=timezone.now()).count()


@pytest.mark.django_db
def test_it_hands_out_again_a_message_a_dead_worker_took(workspace, settings):
    # given a job whose message a worker took before it was killed
    job = submit(workspace)
    take_and_die()
    assert available() == 0

    # when the sweeper runs before and after the job counts as silent
    early = jobs_poll_silent(now=later(settings.LOMOTE_GENERATION_SILENT_SECONDS - 5))
    late = jobs_poll_silent(now=later(settings.LOMOTE_GENERATION_SILENT_SECONDS + 5))

    # then the message is left hidden while the job may still be running, and handed out again after
    assert early.redelivered == [] and late.redelivered == [job.pk]
    assert available() == 1 and OrmQ.objects.count() == 1
    job.refresh_from_db()
    assert job.status == "submitted" and OrmQ.objects.get().task_id() == job.upstream_id

    # and the next worker renders it
    assert generation_work(job.pk) == "succeeded"


@pytest.mark.django_db
def test_it_queues_again_a_job_whose_message_was_dropped(workspace, settings):
    # given a job whose message vanished from the queue without a result
    job = submit(workspace)
    first_id = job.upstream_id
    OrmQ.objects.all().delete()

    # when it went silent
    sweep = jobs_poll_silent(now=later(settings.LOMOTE_GENERATION_SILENT_SECONDS + 5))

    # then it is queued once more, under a new id, and runs
    job.refresh_from_db()
    assert sweep.redelivered == [job.pk]
    assert job.upstream_id != first_id and OrmQ.objects.get().task_id() == job.upstream_id
    assert generation_work(job.pk) == "succeeded"


@pytest.mark.django_db
def test_it_leaves_alone_a_message_still_waiting_its_turn(workspace, settings):
    # given a silent job whose message no worker has taken yet (a backlog)
    job = submit(workspace)
    lock = OrmQ.objects.get().lock

    sweep = jobs_poll_silent(now=later(settings.LOMOTE_GENERATION_SILENT_SECONDS + 5))

    # then nothing is moved or queued twice
    assert sweep.polled == [job.pk] and sweep.redelivered == []
    assert OrmQ.objects.get().lock == lock


@pytest.mark.django_db
def test_a_second_sweeper_does_not_hand_it_out_twice(workspace, settings):
    job = submit(workspace)
    take_and_die()
    at = later(settings.LOMOTE_GENERATION_SILENT_SECONDS + 5)

    first, second = jobs_poll_silent(now=at), jobs_poll_silent(now=at)

    assert first.redelivered == [job.pk] and second.redelivered == []
    assert OrmQ.objects.count() == 1


class PaidWorker(ProceduralProvider):
    """A worker provider whose work must not run twice (a paid upstream call)."""

    name = "paid-worker"
    rerun_safe = False


@pytest.mark.django_db
def test_it_never_hands_out_again_work_that_must_not_run_twice(workspace, settings):
    # given a paid worker job whose message a dead worker took
    with registry.override(PaidWorker.name, PaidWorker()):
        job = job_submit(
            workspace_id=workspace.pk,
            idempotency_key="9:2:0",
            kind="image",
            prompt="retro poster",
            params=SMALL,
            provider=PaidWorker.name,
        )
        take_and_die()

        sweep = jobs_poll_silent(now=later(settings.LOMOTE_GENERATION_SILENT_SECONDS + 5))

    # then it stays hidden: the sweeper times it out after max_duration instead of risking a second charge
    assert sweep.polled == [job.pk] and sweep.redelivered == [] and available() == 0


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_live_cluster_finishes_a_job_a_dead_process_took(workspace, tmp_path, settings):
    # given a job whose message a killed process took, and then a healthy cluster
    settings.MEDIA_ROOT = tmp_path / "media"
    job = submit(workspace)
    take_and_die()
    env = worker_env(redis_url=None, Q_WORKERS="1", LOMOTE_VAR_DIR=str(tmp_path))

    with cluster.running(env) as (process, log):
        # when the sweeper finds it silent
        assert jobs_poll_silent(now=later(settings.LOMOTE_GENERATION_SILENT_SECONDS + 5)).redelivered == [job.pk]

        # then the cluster renders it long before the broker's retry would have shown it again
        cluster.wait_for(
            lambda: GenerationJob.objects.filter(pk=job.pk, status="succeeded").exists(),
            timeout=60,
            process=process,
            log=log,
            what="the job to succeed",
        )


@pytest.mark.django_db
def test_a_render_that_lost_the_database_is_not_failed_but_handed_out_again(workspace, settings, monkeypatch):
    # given a job whose worker loses the database mid-render (PostgreSQL restarted under it)
    from django.db import OperationalError

    job = submit(workspace)
    take_and_die()

    def lost(self, job, report):
        raise OperationalError("terminating connection due to administrator command")

    monkeypatch.setattr(ProceduralProvider, "work", lost)

    # when the worker runs it, then the job is not failed: it ends quietly, still owed
    assert generation_work(job.pk) == "interrupted"
    job.refresh_from_db()
    assert job.status == "submitted"

    # and once silent, the sweeper hands it out again, and the next worker renders it
    monkeypatch.undo()
    assert jobs_poll_silent(now=later(settings.LOMOTE_GENERATION_SILENT_SECONDS + 5)).redelivered == [job.pk]
    assert generation_work(job.pk) == "succeeded"


def _failed_delivery(job: GenerationJob) -> None:
    """What django-q keeps of a delivery that raised (its message acknowledged): a failed result, no message."""
    OrmQ.objects.all().delete()
    QTask.objects.create(
        id=job.upstream_id,
        name=f"generation-{job.pk}",
        func="workspace.tasks.generation_work",
        started=timezone.now(),
        stopped=timezone.now(),
        success=False,
        result="OperationalError: the database system is shutting down",
    )


@pytest.mark.django_db
def test_a_rerun_safe_job_whose_delivery_failed_is_handed_out_again_not_failed(workspace, settings):
    # given a render whose django-q job raised (the database went away before the work started) and was acked
    job = submit(workspace)
    _failed_delivery(job)

    # when the sweeper polls it once silent
    sweep = jobs_poll_silent(now=later(settings.LOMOTE_GENERATION_SILENT_SECONDS + 5))

    # then the job is not failed (its task would stop on a failed generation) but queued again, and it renders
    job.refresh_from_db()
    assert sweep.redelivered == [job.pk] and job.status == "submitted"
    assert generation_work(job.pk) == "succeeded"


@pytest.mark.django_db
def test_work_that_must_not_run_twice_is_failed_when_its_delivery_failed(workspace, settings):
    with registry.override(PaidWorker.name, PaidWorker()):
        job = job_submit(
            workspace_id=workspace.pk,
            idempotency_key="9:3:0",
            kind="image",
            prompt="p",
            params=SMALL,
            provider=PaidWorker.name,
        )
        _failed_delivery(job)
        jobs_poll_silent(now=later(settings.LOMOTE_GENERATION_SILENT_SECONDS + 5))

    job.refresh_from_db()
    assert (job.status, job.error["code"]) == ("failed", "worker_failed")
    assert not OrmQ.objects.exists()


@pytest.mark.django_db
def test_a_job_that_finished_since_the_sweep_found_it_silent_is_not_queued_again(workspace, settings, monkeypatch):
    # given a silent job whose message is acknowledged, and which finishes, between the sweep's poll and its look
    # at the queue
    from workspace.services import jobs

    job = submit(workspace)
    OrmQ.objects.all().delete()
    real_revive = jobs.messages_revive

    def finish_first(wanted):
        assert generation_work(job.pk) == "succeeded"
        return real_revive(wanted)

    monkeypatch.setattr(jobs, "messages_revive", finish_first)

    # when the sweep goes on
    jobs_poll_silent(now=later(settings.LOMOTE_GENERATION_SILENT_SECONDS + 5))

    # then nothing is queued for it: the job is done (what its result queued for search is another job's work)
    job.refresh_from_db()
    assert job.status == "succeeded"
    assert [m.task["func"] for m in OrmQ.objects.all()] == ["workspace.tasks.embeddings_follow_work"]
