"""Generation jobs (DESIGN §4; issue 4): submit once, forward-only reports, uncertain submissions, the sweeper.

Reports are applied through `job_event_apply` here; the signed webhook path has its own suite
(test_webhooks.py). The simulated upstream stands in for a hosted provider; its callbacks are handed to
`job_event_apply` directly.
"""

import json
from datetime import timedelta

import pytest
from django.core.files.base import ContentFile
from django.core.management import call_command
from django.db import transaction
from django.utils import timezone

from lomote.kernel.exceptions import Conflict, InvalidInput, NotFound
from tests.support.race import race
from workspace.models import (
    Artifact,
    ArtifactVersion,
    Event,
    GenerationJob,
)
from workspace.providers import registry
from workspace.providers.base import Output
from workspace.providers.simulated import SimulatedUpstream
from workspace.services.artifacts import artifact_create, artifact_version_add
from workspace.services.jobs import job_event_apply, job_submit, jobs_poll_silent
from workspace.services.workspaces import workspace_create
from workspace.transitions import JOB_MOVES, JOB_RANK

pytestmark = pytest.mark.django_db

PNG = Output(content=b"\x89PNG\r\n\x1a\n fake", media_type="image/png", filename="poster.png", meta={"width": 8})


def apply_directly(headers: dict[str, str], body: bytes) -> int:
    """A `deliver` for the simulated upstream that skips HTTP: the report goes straight to job_event_apply."""
    report = json.loads(body)
    try:
        job_event_apply(
            provider="simulated",
            upstream_id=report["upstream_id"],
            status=report["status"],
            progress=report.get("progress"),
            result=report.get("result"),
            error=report.get("error"),
        )
    except NotFound:
        return 404
    return 200


@pytest.fixture
def upstream():
    with registry.override("simulated", SimulatedUpstream(deliver=apply_directly)) as simulated:
        yield simulated


def submit(workspace, key: str = "7:1:0", **overrides) -> GenerationJob:
    arguments = {
        "workspace_id": workspace.pk,
        "idempotency_key": key,
        "kind": "image",
        "prompt": "retro brand poster",
        "provider": "simulated",
        "task_id": 7,
        "turn_id": 70,
    }
    return job_submit(**{**arguments, **overrides})


def job_events(workspace) -> list[tuple[str, str, int]]:
    kinds = ("generation.progress", "generation.succeeded", "generation.failed")
    events = Event.objects.filter(workspace=workspace, kind__in=kinds).order_by("seq")
    return [(e.kind, e.data["status"], e.data["progress"]) for e in events]


def later(seconds: float):
    return timezone.now() + timedelta(seconds=seconds)


# --- the allowed moves ---------------------------------------------------------------------------------------


def test_it_lists_only_forward_moves():
    for status, moves in JOB_MOVES.items():
        for to in moves:
            assert JOB_RANK[to] > JOB_RANK[status] or (to == status and status in ("queued", "running"))
    assert not JOB_MOVES["succeeded"] and not JOB_MOVES["failed"] and not JOB_MOVES["timed_out"]


# --- submit ----------------------------------------------------------------------------------------------------


def test_it_submits_and_stores_the_upstream_id_at_once(workspace, upstream):
    # when
    job = submit(workspace)

    # then the provider was asked once and its id is on the row, which is now `submitted`
    assert upstream.submissions == 1
    assert job.upstream_id in upstream.jobs
    assert (job.status, job.progress, job.provider, job.task_id, job.turn_id) == ("submitted", 0, "simulated", 7, 70)
    assert job.submitted_at is not None and job.last_event_at is not None
    # and the task card saw both moves
    assert job_events(workspace) == [("generation.progress", "submitting", 0), ("generation.progress", "submitted", 0)]


def test_it_returns_the_existing_job_for_a_repeated_key_and_never_submits_again(workspace, upstream):
    # given
    first = submit(workspace)

    # when the same call is submitted again (an old and a new worker, or a retried tool call)
    again = submit(workspace)

    # then
    assert again.pk == first.pk and again.upstream_id == first.upstream_id
    assert upstream.submissions == 1
    assert GenerationJob.objects.count() == 1


def test_it_refuses_a_repeated_key_asking_for_something_else(workspace, upstream):
    # given
    submit(workspace)
    events = Event.objects.count()

    # when / then
    with pytest.raises(Conflict) as caught:
        submit(workspace, prompt="midnight jazz poster")
    assert caught.value.code == "idempotency_key_reused"
    assert upstream.submissions == 1 and GenerationJob.objects.count() == 1 and Event.objects.count() == events


def test_it_scopes_keys_to_the_workspace(workspace, dave, upstream):
    # given
    other = workspace_create(user=dave, name="Elsewhere")

    # when the same key is used in two workspaces
    first, second = submit(workspace), submit(other)

    # then they are two jobs
    assert first.pk != second.pk and upstream.submissions == 2


@pytest.mark.parametrize(
    ("changes", "code"),
    [
        ({"kind": "sound"}, "invalid"),
        ({"prompt": "   "}, "invalid"),
        ({"prompt": "x" * 4001}, "invalid"),
        ({"idempotency_key": ""}, "invalid"),
        ({"idempotency_key": "k" * 201}, "invalid"),
        ({"provider": "nowhere"}, "unknown_provider"),
        ({"params": {"width": object()}}, "invalid"),
    ],
)
def test_it_refuses_invalid_submissions_and_stores_nothing(workspace, upstream, changes, code):
    with pytest.raises(InvalidInput) as caught:
        submit(workspace, **changes)
    assert caught.value.code == code
    assert not GenerationJob.objects.exists() and upstream.submissions == 0


def test_it_refuses_to_run_inside_a_transaction(workspace, upstream):
    # A transaction held across the provider call would hold the row (and its locks) back from everyone.
    with pytest.raises(RuntimeError), transaction.atomic():
        submit(workspace)
    assert upstream.submissions == 0


@pytest.mark.parametrize(
    ("fault", "code"),
    [
        ("timeout", "submission_uncertain"),
        ("timeout_after_create", "submission_uncertain"),
        ("crash", "submission_uncertain"),
        ("reject", "upstream_rejected"),
    ],
)
def test_it_fails_a_submission_that_did_not_return_an_id_and_never_retries_it(workspace, settled, fault, code):
    # given an upstream whose submission goes wrong
    with registry.override("simulated", SimulatedUpstream(deliver=apply_directly, submit_fault=fault)) as upstream:
        # when
        job = submit(workspace)
        again = submit(workspace)
        jobs_poll_silent(now=later(3600))

    # then the job failed with the reason, was submitted once, and its hold is released by rule
    assert (job.status, job.error["code"], job.upstream_id) == ("failed", code, "")
    assert again.pk == job.pk and again.status == "failed"
    assert upstream.submissions == 1
    assert [(s["job_id"], s["status"], s["idempotency_key"]) for s in settled] == [(job.pk, "failed", "7:1:0")]


def test_it_ignores_callbacks_for_a_submission_that_was_lost(workspace, settled):
    # given the upstream created the job but its answer never reached us
    upstream = SimulatedUpstream(deliver=apply_directly, submit_fault="timeout_after_create")
    with registry.override("simulated", upstream):
        job = submit(workspace)

        # when the upstream runs it and calls back
        deliveries = upstream.run()

    # then nothing can tie the callbacks to our job: they change nothing
    assert {d.status_code for d in deliveries} == {404}
    job.refresh_from_db()
    assert job.status == "failed" and job.artifact_version is None
    assert not ArtifactVersion.objects.exists() and len(settled) == 1


def test_it_never_resubmits_a_job_whose_process_died_before_storing_the_id(workspace, upstream, settled, settings):
    # given a row left `submitting` by a process that died around the provider call
    job = GenerationJob.objects.create(
        workspace=workspace, kind="image", provider="simulated", prompt="retro brand poster", idempotency_key="7:1:0"
    )

    # when the call is repeated, then the sweeper runs before and after the submit timeout
    again = submit(workspace, task_id=None, turn_id=None)
    early = jobs_poll_silent(now=later(settings.LOMOTE_GENERATION_SUBMIT_TIMEOUT - 5))
    late = jobs_poll_silent(now=later(settings.LOMOTE_GENERATION_SUBMIT_TIMEOUT + 5))
    again_later = jobs_poll_silent(now=later(settings.LOMOTE_GENERATION_SUBMIT_TIMEOUT + 60))

    # then it was never submitted, and it failed as uncertain once the timeout passed, publishing the failure
    assert again.pk == job.pk and again.status == "submitting"
    assert upstream.submissions == 0
    assert not early.uncertain and late.uncertain == [job.pk] and not again_later.uncertain
    job.refresh_from_db()
    assert (job.status, job.error["code"]) == ("failed", "submission_uncertain")
    assert [(s["job_id"], s["status"]) for s in settled] == [(job.pk, "failed")]


def test_it_keeps_a_late_upstream_id_without_reviving_a_failed_job(workspace, settled, settings):
    # given a provider whose answer arrives after the sweeper gave up on the submission
    upstream = SimulatedUpstream(deliver=apply_directly)

    def slow_submit(job):
        jobs_poll_silent(now=later(settings.LOMOTE_GENERATION_SUBMIT_TIMEOUT + 1))
        return SimulatedUpstream.submit(upstream, job)

    upstream.submit = slow_submit
    with registry.override("simulated", upstream):
        # when
        job = submit(workspace)
        upstream.run()

    # then the id is kept for operators, but the job stays failed and its result is never stored
    assert job.status == "failed" and job.upstream_id in upstream.jobs
    assert job.error["code"] == "submission_uncertain"
    assert not ArtifactVersion.objects.exists() and len(settled) == 1


# --- reports ----------------------------------------------------------------------------------------------------


def test_it_moves_forward_only(workspace, upstream, settled):
    # given
    job = submit(workspace)

    # when reports arrive late, repeated and out of order
    applied = [
        job_event_apply(job_id=job.pk, status="running", progress=30),
        job_event_apply(job_id=job.pk, status="queued", progress=0),  # late
        job_event_apply(job_id=job.pk, status="running", progress=20),  # late
        job_event_apply(job_id=job.pk, status="running", progress=30),  # duplicate
        job_event_apply(job_id=job.pk, status="running", progress=70),
        job_event_apply(job_id=job.pk, status="succeeded", result=PNG),
        job_event_apply(job_id=job.pk, status="running", progress=90),  # late "running" after success
        job_event_apply(job_id=job.pk, status="failed", error={"code": "late"}),
    ]

    # then only the forward moves applied
    assert applied == [True, False, False, False, True, True, False, False]
    job.refresh_from_db()
    assert (job.status, job.progress, job.error) == ("succeeded", 100, None)
    assert job_events(workspace)[2:] == [
        ("generation.progress", "running", 30),
        ("generation.progress", "running", 70),
        ("generation.succeeded", "succeeded", 100),
    ]
    assert len(settled) == 1


def test_it_stores_one_version_and_publishes_once_for_a_duplicate_completion(workspace, upstream, settled):
    # given
    job = submit(workspace)

    # when the completion arrives twice, by id and by upstream id
    first = job_event_apply(job_id=job.pk, status="succeeded", result=PNG)
    second = job_event_apply(provider="simulated", upstream_id=job.upstream_id, status="succeeded", result=PNG)

    # then
    assert (first, second) == (True, False)
    job.refresh_from_db()
    version = ArtifactVersion.objects.get()
    assert job.artifact_version == version and job.artifact_id == version.artifact_id
    artifact = version.artifact
    assert (artifact.kind, artifact.title, artifact.created_by_task_id) == ("image", "retro brand poster", 7)
    assert version.author == {"type": "task", "task": 7, "turn": 70}
    assert (version.media_type, version.meta["generation_job"], version.meta["width"]) == ("image/png", job.pk, 8)
    assert version.file.read() == PNG.content
    assert settled == [
        {
            "workspace_id": workspace.pk,
            "job_id": job.pk,
            "idempotency_key": "7:1:0",
            "status": "succeeded",
            "task_id": 7,
            "turn_id": 70,
            "artifact_id": artifact.pk,
            "artifact_version_id": version.pk,
        }
    ]
    [event] = Event.objects.filter(workspace=workspace, kind="generation.succeeded")
    assert event.data == {
        "job": job.pk,
        "task": 7,
        "turn": 70,
        "kind": "image",
        "provider": "simulated",
        "status": "succeeded",
        "progress": 100,
        "artifact": artifact.pk,
        "artifact_version": version.pk,
        "version": 1,
    }


def test_it_accepts_a_result_in_its_json_form(workspace, upstream):
    job = submit(workspace)
    assert job_event_apply(job_id=job.pk, status="succeeded", result=PNG.to_json())
    assert ArtifactVersion.objects.get().file.read() == PNG.content


def test_it_records_a_failure_with_its_error_and_publishes_it(workspace, upstream, settled):
    # given
    job = submit(workspace)

    # when
    job_event_apply(job_id=job.pk, status="failed", error={"code": "nsfw", "message": "Refused.", "extra": "x" * 900})

    # then
    job.refresh_from_db()
    assert (job.status, job.error, job.finished_at is not None) == (
        "failed",
        {"code": "nsfw", "message": "Refused."},
        True,
    )
    assert [(s["status"], s["artifact_version_id"]) for s in settled] == [("failed", None)]
    [event] = Event.objects.filter(workspace=workspace, kind="generation.failed")
    assert event.data["error"] == {"code": "nsfw", "message": "Refused."}


@pytest.mark.parametrize(
    ("report", "code"),
    [
        ({"status": "succeeded"}, "result_missing"),
        ({"status": "succeeded", "result": {"b64": "%%%", "media_type": "image/png"}}, "invalid_result"),
        ({"status": "succeeded", "result": {"b64": "", "media_type": "image/png"}}, "invalid_result"),
        ({"status": "done"}, "invalid"),
        ({"status": "submitting"}, "invalid"),
        ({"status": "running", "progress": 101}, "invalid"),
        ({"status": "running", "progress": -1}, "invalid"),
        ({"status": "running", "progress": True}, "invalid"),
    ],
)
def test_it_refuses_a_malformed_report_and_changes_nothing(workspace, upstream, report, code):
    # given
    job = submit(workspace)
    before = (GenerationJob.objects.values().get(pk=job.pk), Event.objects.count())

    # when / then
    with pytest.raises(InvalidInput) as caught:
        job_event_apply(job_id=job.pk, **report)
    assert caught.value.code == code
    assert (GenerationJob.objects.values().get(pk=job.pk), Event.objects.count()) == before


def test_it_refuses_a_report_for_an_unknown_job(upstream):
    with pytest.raises(NotFound):
        job_event_apply(provider="simulated", upstream_id="sim_nope", status="running", progress=5)
    with pytest.raises(NotFound):
        job_event_apply(job_id=987654, status="running", progress=5)


# --- results as new versions of an existing artifact --------------------------------------------------------------


@pytest.fixture
def poster(workspace):
    return artifact_create(
        workspace_id=workspace.pk,
        kind="image",
        title="Poster 1",
        file=_file(b"v1"),
        media_type="image/png",
    )


def _file(content: bytes):
    return ContentFile(content, name="poster.png")


def test_it_adds_the_result_as_the_next_version_of_the_named_artifact(workspace, upstream, poster, bob, settled):
    # given a job asked to make the poster warmer, submitted on version 1
    job = submit(workspace, prompt="retro brand poster, a bit warmer", artifact_id=poster.pk)
    assert (job.artifact_id, job.base_version) == (poster.pk, 1)
    # and a person adds version 2 while it runs
    artifact_version_add(
        workspace_id=workspace.pk, artifact_id=poster.pk, base_version=1, file=_file(b"v2"), author_user=bob
    )

    # when
    job_event_apply(job_id=job.pk, status="succeeded", result=PNG)

    # then the result is version 3, saying which version it was made from; nothing was lost
    poster.refresh_from_db()
    job.refresh_from_db()
    assert poster.current_version == 3
    assert job.artifact_version.number == 3 and job.artifact_version.meta["derived_from_version"] == 1
    assert list(poster.versions.values_list("number", flat=True)) == [1, 2, 3]
    assert Artifact.objects.count() == 1
    assert settled[0]["artifact_id"] == poster.pk and settled[0]["artifact_version_id"] == job.artifact_version_id


def test_it_keeps_the_result_as_its_own_artifact_when_the_target_was_deleted(workspace, upstream, poster):
    # given
    job = submit(workspace, artifact_id=poster.pk)
    Artifact.objects.filter(pk=poster.pk).update(deleted_at=timezone.now())

    # when
    job_event_apply(job_id=job.pk, status="succeeded", result=PNG)

    # then
    job.refresh_from_db()
    assert job.artifact_id != poster.pk and job.artifact_version.number == 1
    assert job.artifact_version.meta["requested_artifact"] == poster.pk


def test_it_refuses_a_target_of_another_kind_or_workspace(workspace, upstream, dave, poster):
    document = artifact_create(workspace_id=workspace.pk, kind="document", title="Brief", content="...")
    elsewhere = workspace_create(user=dave, name="Elsewhere")
    with pytest.raises(InvalidInput):
        submit(workspace, artifact_id=document.pk)
    with pytest.raises(NotFound):
        submit(elsewhere, artifact_id=poster.pk)
    assert not GenerationJob.objects.exists() and upstream.submissions == 0


# --- the sweeper -------------------------------------------------------------------------------------------------


def test_it_polls_a_silent_job_to_compensate_lost_callbacks(workspace, settled, settings):
    # given an upstream whose callbacks are all lost, and which finished the job
    upstream = SimulatedUpstream(deliver=apply_directly, lose="all")
    with registry.override("simulated", upstream):
        job = submit(workspace)
        assert upstream.run() == []

        # when the sweeper runs before and after the silence threshold
        early = jobs_poll_silent(now=later(settings.LOMOTE_GENERATION_SILENT_SECONDS - 5))
        late = jobs_poll_silent(now=later(settings.LOMOTE_GENERATION_SILENT_SECONDS + 5))

    # then the poll found the result and applied it, once
    assert not early.polled and late.polled == [job.pk] and late.applied == [job.pk]
    job.refresh_from_db()
    assert job.status == "succeeded" and job.artifact_version is not None
    assert len(settled) == 1


def test_it_does_not_poll_a_job_that_reports_or_was_just_polled(workspace, upstream, settings):
    # given a job that reported recently
    job = submit(workspace)
    silent = settings.LOMOTE_GENERATION_SILENT_SECONDS
    job_event_apply(job_id=job.pk, status="running", progress=10)

    # when sweeps run: one inside the silence window, then two at the same moment after it
    quiet = jobs_poll_silent(now=later(silent - 5))
    first = jobs_poll_silent(now=later(silent + 5))
    second = jobs_poll_silent(now=later(silent + 5))

    # then it is polled once: the second sweep finds it claimed
    assert not quiet.polled and first.polled == [job.pk] and not second.polled


def test_it_times_out_a_job_past_its_provider_max_duration_and_ignores_its_late_result(workspace, settled):
    # given an upstream that never finishes
    upstream = SimulatedUpstream(deliver=apply_directly, max_duration=120)
    with registry.override("simulated", upstream):
        job = submit(workspace)

        # when the sweeper runs past the provider's max duration, then the result arrives after all
        before = jobs_poll_silent(now=later(100))
        after = jobs_poll_silent(now=later(125))
        upstream.run()

    # then
    assert not before.timed_out and after.timed_out == [job.pk]
    job.refresh_from_db()
    assert (job.status, job.error["code"], job.artifact_version) == ("timed_out", "timed_out", None)
    assert [s["status"] for s in settled] == ["timed_out"]
    assert not ArtifactVersion.objects.exists()


@pytest.mark.django_db(transaction=True)  # the command closes a connection it finds inside a transaction
def test_it_runs_the_sweeper_command_once(workspace, upstream, settings):
    GenerationJob.objects.create(
        workspace=workspace, kind="image", provider="simulated", prompt="p", idempotency_key="k"
    )
    GenerationJob.objects.update(created_at=later(-settings.LOMOTE_GENERATION_SUBMIT_TIMEOUT - 1))
    call_command("generation_sweeper", "--once")
    assert GenerationJob.objects.get().error["code"] == "submission_uncertain"


# --- real concurrency (PostgreSQL) ------------------------------------------------------------------------------


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_it_applies_two_simultaneous_completions_once(workspace, upstream, settled):
    # given
    job = submit(workspace)

    # when two callbacks with the result arrive at the same moment
    results = race([lambda: job_event_apply(job_id=job.pk, status="succeeded", result=PNG)] * 2)

    # then one applied; one version, one publish
    assert sorted(results) == [False, True]
    assert ArtifactVersion.objects.count() == 1 and len(settled) == 1


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_it_submits_once_when_two_workers_submit_the_same_call(workspace, upstream):
    # when an old and a new worker submit the same call at the same moment
    results = race([lambda: submit(workspace)] * 2)

    # then one job, one upstream submission, both callers get it
    assert all(isinstance(r, GenerationJob) for r in results), results
    assert results[0].pk == results[1].pk
    assert GenerationJob.objects.count() == 1 and upstream.submissions == 1


def test_it_times_out_a_job_a_worker_took_before_its_id_was_stored(workspace, upstream, settings):
    # given a job a fast worker reported on while the submitting process died before storing the upstream id
    job = GenerationJob.objects.create(
        workspace=workspace, kind="image", provider="simulated", prompt="p", idempotency_key="k"
    )
    job_event_apply(job_id=job.pk, status="running", progress=10)

    # when the sweeper runs past the provider's max duration
    sweep = jobs_poll_silent(now=later(upstream.max_duration + 5))

    # then it is not left running forever
    assert sweep.timed_out == [job.pk]


def test_it_refuses_to_look_a_job_up_by_an_empty_upstream_id(workspace, upstream):
    GenerationJob.objects.create(
        workspace=workspace, kind="image", provider="simulated", prompt="p", idempotency_key="k"
    )
    with pytest.raises(ValueError):
        job_event_apply(provider="simulated", upstream_id="", status="running", progress=5)
