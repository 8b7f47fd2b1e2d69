"""Asynchronous generation jobs (DESIGN §4; seed §4.4, §5): submit once, apply every report forward only.

The contract other apps rely on (agents' generation tools, billing's subscriber):

    job_submit(*, workspace_id, idempotency_key, kind, prompt, params=None, provider=None,
               task_id=None, turn_id=None, artifact_id=None) -> GenerationJob
        Idempotent on (workspace, idempotency_key) — agents pass `turn:step:call`: a repeat returns the
        existing job (409 `idempotency_key_reused` if it asks for something else) and never reaches the
        provider a second time, whatever state the job is in. Otherwise the row is written `submitting`
        and committed, the provider's submit runs outside any transaction, and the upstream id it returns
        is stored at once (`submitted`) — or, for our own workers on the ORM broker, the message is queued
        in the row's transaction and the job commits `submitted` (nothing to be uncertain about; a failure
        there rolls the row back and propagates). A submission that raised, timed out or returned nothing is
        failed (`submission_uncertain`, or the rejection's code) and never resubmitted. `artifact_id` makes
        the result a new version of that artifact instead of a new artifact. Must be called outside any
        transaction (it commits up to twice).

    job_event_apply(*, job_id=None, provider=None, upstream_id=None, status, progress=None, result=None,
                    error=None, savepoint=True) -> bool
        The one place every report goes — webhook, poll, embedded worker. Names the job by id or by
        (provider, upstream_id); locks it; applies forward moves only (workspace/transitions.py) and
        returns whether anything changed, so duplicates and late reports are harmless. On success it
        stores the result (`result`: an Output, or its JSON form {"b64", "media_type", "filename", "meta"})
        as an artifact version in the same transaction. Every applied move appends a
        `generation.progress`, `generation.succeeded` or `generation.failed` event (the task card); a
        terminal move publishes the domain event JOB_SETTLED (workspace/domain_events.py, with its payload)
        inside the transaction, exactly once per job (billing captures or releases, agents decide on a
        wake-up, a Flow node waiting on the job is settled). Runs in the caller's transaction when
        there is one, as a savepoint; `savepoint=False` spares its two statements to a caller whose
        transaction ends on any exception anyway (the webhook: its delivery row must not outlive a failed
        report), since a failure then leaves that transaction unusable. Locks, in this order: the job, the
        target artifact (on success), the workspace row (event log); subscribers run after that, while all
        three are held.

    job_submission_recoverable(job) -> bool / job_submission_recover(*, job_id) -> bool
        A job left `submitting` with no upstream id (its process died between the row's commit and the message,
        with a broker outside the job's database) on a provider we own — our own workers, at-least-once safe by
        their contract (rerun-safe, or claimed before they act) — is not unknowable: its message is queued again
        and the id stored. Only a remote upstream that never confirmed stays uncertain (DESIGN §11).

    jobs_poll_silent(now=None) -> GenerationSweep
        The sweeper (`manage.py generation_sweeper`, every 10 s): fails jobs stuck `submitting` past
        LOMOTE_GENERATION_SUBMIT_TIMEOUT (`submission_uncertain`; our own workers' are recovered instead), polls
        jobs silent for LOMOTE_GENERATION_SILENT_SECONDS (a lost callback) — and hands our own workers' silent
        rerun-safe jobs out again when the process that took their message died (lomote/kernel/queue_revival.py) —
        and times out jobs past their provider's max_duration. Several sweepers may run at once.
"""

import json
import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from django.conf import settings
from django.core.files.base import ContentFile
from django.db import IntegrityError, InterfaceError, OperationalError, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_noop

from lomote.kernel import domain_events
from lomote.kernel.exceptions import Conflict, DomainError, InvalidInput, NotFound
from lomote.kernel.queue_revival import messages_revive
from workspace.domain_events import JOB_SETTLED
from workspace.locks import artifact_qs_for_update, generation_job_qs_for_update
from workspace.models import (
    TERMINAL_JOB_STATUSES,
    Artifact,
    ArtifactVersion,
    GenerationJob,
    GenerationKind,
    JobStatus,
)
from workspace.providers import registry
from workspace.providers.base import Output, SubmissionRejected, SubmissionUncertain, WorkerProvider
from workspace.services.artifacts import artifact_create_with_version, artifact_version_add
from workspace.services.events import event_append
from workspace.transitions import job_is_forward, job_progress_after

logger = logging.getLogger(__name__)

MAX_KEY_CHARS = 200
MAX_PROMPT_CHARS = 4000
MAX_PARAMS_BYTES = 8000
MAX_ERROR_MESSAGE = 500
SWEEP_BATCH = 200
# Statuses with an upstream job to ask about.
IN_FLIGHT = (JobStatus.SUBMITTED, JobStatus.QUEUED, JobStatus.RUNNING)


def _invalid(field_name: str, message: str, code: str = "invalid") -> InvalidInput:
    return InvalidInput(message, code=code, details={"fields": {field_name: [message]}})


# --- submit -------------------------------------------------------------------------------------------------


def job_submit(
    *,
    workspace_id: int,
    idempotency_key: str,
    kind: str,
    prompt: str,
    params: dict[str, Any] | None = None,
    provider: str | None = None,
    task_id: int | None = None,
    turn_id: int | None = None,
    artifact_id: int | None = None,
) -> GenerationJob:
    """Submit a generation once per (workspace, idempotency_key); see the module docstring."""
    params = dict(params or {})
    provider_name = provider or settings.LOMOTE_DEFAULT_GENERATION_PROVIDER
    if not isinstance(idempotency_key, str) or not 0 < len(idempotency_key.strip()) <= MAX_KEY_CHARS:
        raise _invalid("idempotency_key", f"An idempotency key needs 1 to {MAX_KEY_CHARS} characters.")
    existing = GenerationJob.objects.filter(workspace_id=workspace_id, idempotency_key=idempotency_key).first()
    if existing is not None:
        return _same_request(existing, kind, prompt, params, provider_name, artifact_id)

    upstream = registry.provider_get(provider_name)
    if kind not in GenerationKind.values:
        raise _invalid("kind", f"Unknown generation kind {kind!r}.")
    if not isinstance(prompt, str) or not 0 < len(prompt.strip()) <= MAX_PROMPT_CHARS:
        raise _invalid("prompt", f"A prompt needs 1 to {MAX_PROMPT_CHARS} characters.")
    try:
        params_size = len(json.dumps(params))
    except (TypeError, ValueError):
        raise _invalid("params", "Parameters must be JSON.") from None
    if params_size > MAX_PARAMS_BYTES:
        raise _invalid("params", f"Parameters are limited to {MAX_PARAMS_BYTES} bytes of JSON.")
    if turn_id is not None and task_id is None:
        raise ValueError("A turn needs its task.")
    upstream.check(kind, params)

    try:
        # Committed before the provider hears of it: a crash after the submission finds this row, and the
        # sweeper fails it as uncertain instead of anyone submitting it again. `durable` refuses to run
        # inside a caller's transaction, which would hold the row back (and locks) across the provider call.
        with transaction.atomic(durable=True):
            base_version = None
            if artifact_id is not None:
                target = Artifact.objects.filter(pk=artifact_id, workspace_id=workspace_id, deleted_at__isnull=True)
                artifact = target.only("kind", "current_version").first()
                if artifact is None:
                    raise NotFound(gettext_noop("Artifact not found."))
                if artifact.kind != kind:
                    raise _invalid("artifact_id", f"A {kind} job cannot add a version to a {artifact.kind} artifact.")
                base_version = artifact.current_version
            job = GenerationJob.objects.create(
                workspace_id=workspace_id,
                kind=kind,
                provider=provider_name,
                prompt=prompt,
                params=params,
                idempotency_key=idempotency_key,
                task_id=task_id,
                turn_id=turn_id,
                artifact_id=artifact_id,
                base_version=base_version,
            )
            _event(job)
            queued_id = upstream.submit_with_the_job(job)
            if queued_id is not None:
                _submitted(job, queued_id)
    except IntegrityError:
        # Another caller inserted the same key first (an old and a new worker submitting the same call).
        existing = GenerationJob.objects.get(workspace_id=workspace_id, idempotency_key=idempotency_key)
        return _same_request(existing, kind, prompt, params, provider_name, artifact_id)
    if queued_id is not None:
        return job

    try:
        upstream_id = upstream.submit(job)
    except SubmissionRejected as exc:
        _submission_failed(job, code=exc.code, message=exc.message)
    except Exception as exc:  # noqa: BLE001 - whatever went wrong, the upstream may have the job: never resubmit
        logger.warning("generation job %s: submission to %s uncertain: %r", job.pk, provider_name, exc)
        _submission_failed(job, code="submission_uncertain", message="The provider did not confirm the submission.")
    else:
        if isinstance(upstream_id, str) and 0 < len(upstream_id) <= 200:
            stored = _upstream_id_store(job.pk, upstream_id)
            if stored is not None:
                return stored  # read under its lock and written: as committed, no need to read it back
        else:
            logger.warning("generation job %s: %s returned no usable upstream id", job.pk, provider_name)
            _submission_failed(job, code="submission_uncertain", message="The provider returned no job id.")
    job.refresh_from_db()
    return job


def job_submission_recoverable(job: GenerationJob) -> bool:
    """Whether a job found `submitting` without an upstream id is ours to settle (module docstring): its provider
    runs in our own workers, which tolerate a second message for one job."""
    return job.status == JobStatus.SUBMITTING and not job.upstream_id and registry.provider_is_ours(job.provider)


def job_submission_recover(*, job_id: int) -> bool:
    """Queue again the message of our own job left `submitting` (module docstring); return whether it was queued.

    A second message for a job whose first did get queued is harmless: a rerun-safe worker renders again and its
    late report moves nothing, any other worker finds the job claimed. Must run outside any transaction (in
    django-q's sync mode the message runs at once, and its report needs the row committed)."""
    job = GenerationJob.objects.filter(pk=job_id).first()
    if job is None or not job_submission_recoverable(job):
        return False
    try:
        upstream_id = registry.provider_get(job.provider).submit(job)
    except SubmissionUncertain:
        logger.warning("generation job %s: its message could not be queued again", job_id, exc_info=True)
        return False
    _upstream_id_store(job_id, upstream_id)
    return True


def _same_request(
    job: GenerationJob, kind: str, prompt: str, params: dict, provider_name: str, artifact_id: int | None
) -> GenerationJob:
    """The existing job for a repeated key, if the repeat asks for the same thing; else 409."""
    target_matches = (
        job.base_version is not None and job.artifact_id == artifact_id if artifact_id else job.base_version is None
    )
    if (job.kind, job.prompt, job.params, job.provider) != (kind, prompt, params, provider_name) or not target_matches:
        raise Conflict(
            "This idempotency key was already used for a different generation request.",
            code="idempotency_key_reused",
            details={"job": job.pk, "idempotency_key": job.idempotency_key},
        )
    return job


def _upstream_id_store(job_id: int, upstream_id: str) -> GenerationJob | None:
    """Record the provider's id at once. The job may have moved already (a fast worker, or the sweeper gave
    up on it): the id is stored whatever the status, and only a `submitting` job becomes `submitted`.
    Returns the job as it committed, or None when the id could not be stored."""
    try:
        with transaction.atomic(durable=True):
            job = generation_job_qs_for_update().get(pk=job_id)
            _submitted(job, upstream_id)
        return job
    except IntegrityError:
        # The provider handed out an id it already gave another job: nothing ties this job to its result.
        logger.error("generation job %s: %s reused upstream id %r", job_id, upstream_id, upstream_id)
        job_event_apply(
            job_id=job_id, status=JobStatus.FAILED, error=_error("submission_uncertain", "Duplicate job id.")
        )
        return None


def _submitted(job: GenerationJob, upstream_id: str) -> None:
    now = timezone.now()
    job.upstream_id, job.submitted_at = upstream_id, now
    fields = ["upstream_id", "submitted_at", "updated_at"]
    if job.status == JobStatus.SUBMITTING:
        job.status, job.last_event_at = JobStatus.SUBMITTED, now
        fields += ["status", "last_event_at"]
        _event(job)
    job.save(update_fields=fields)


def _submission_failed(job: GenerationJob, *, code: str, message: str) -> None:
    job_event_apply(job_id=job.pk, status=JobStatus.FAILED, error=_error(code, message))


def _error(code: str, message: str) -> dict[str, str]:
    return {"code": code, "message": message}


# --- reports ------------------------------------------------------------------------------------------------


def job_event_apply(
    *,
    job_id: int | None = None,
    provider: str | None = None,
    upstream_id: str | None = None,
    status: str,
    progress: int | None = None,
    result: Output | dict[str, Any] | None = None,
    error: dict[str, Any] | str | None = None,
    savepoint: bool = True,
) -> bool:
    """Apply one report about a job if it moves the job forward; return whether it did (module docstring)."""
    if (job_id is None) == (upstream_id is None) or (upstream_id is not None and not (provider and upstream_id)):
        raise ValueError("Name the job by job_id, or by provider and upstream_id.")
    if status not in JobStatus.values or status == JobStatus.SUBMITTING:
        raise _invalid("status", f"Unknown job status {status!r}.")
    if progress is not None and (
        isinstance(progress, bool) or not isinstance(progress, int) or not 0 <= progress <= 100
    ):
        raise _invalid("progress", "Progress is a whole number from 0 to 100.")
    output = None
    if status == JobStatus.SUCCEEDED:
        if result is None:
            raise _invalid("result", "A success report needs its result.", code="result_missing")
        output = (result if isinstance(result, Output) else Output.from_json(result)).checked()
    error = _clean_error(status, error)

    with transaction.atomic(savepoint=savepoint):
        jobs = generation_job_qs_for_update()
        job = (
            jobs.filter(pk=job_id).first()
            if job_id is not None
            else jobs.filter(provider=provider, upstream_id=upstream_id).first()
        )
        if job is None:
            raise NotFound(gettext_noop("No such generation job."), code="unknown_job")
        if not job_is_forward(status=job.status, progress=job.progress, to=status, to_progress=progress):
            return False
        now = timezone.now()
        job.progress = job_progress_after(progress=job.progress, to=status, to_progress=progress)
        job.status, job.last_event_at = status, now
        fields = ["status", "progress", "last_event_at", "updated_at"]
        if status in TERMINAL_JOB_STATUSES:
            job.finished_at = now
            fields.append("finished_at")
        if output is not None:
            version = _store_output(job, output)
            job.artifact_id, job.artifact_version = version.artifact_id, version
            fields += ["artifact", "artifact_version"]
        if error is not None:
            job.error = error
            fields.append("error")
        job.save(update_fields=fields)
        _event(job)
        if status in TERMINAL_JOB_STATUSES:
            domain_events.publish(
                JOB_SETTLED,
                workspace_id=job.workspace_id,
                job_id=job.pk,
                idempotency_key=job.idempotency_key,
                status=job.status,
                task_id=job.task_id,
                turn_id=job.turn_id,
                artifact_id=job.artifact_id,
                artifact_version_id=job.artifact_version_id,
            )
    return True


def _clean_error(status: str, error: dict[str, Any] | str | None) -> dict[str, str] | None:
    if status not in (JobStatus.FAILED, JobStatus.TIMED_OUT):
        return None
    if isinstance(error, dict):
        code, message = error.get("code"), error.get("message")
    else:
        code, message = None, error
    code = str(code)[:64] if code else ("timed_out" if status == JobStatus.TIMED_OUT else "generation_failed")
    message = str(message)[:MAX_ERROR_MESSAGE] if message else "The generation did not complete."
    return _error(code, message)


def _store_output(job: GenerationJob, output: Output) -> ArtifactVersion:
    """The result as a new version of the job's artifact, or as a new artifact. Caller holds the job lock."""
    meta = {**output.meta, "generation_job": job.pk, "provider": job.provider, "prompt": job.prompt[:500]}
    author = {"author_task_id": job.task_id, "author_turn_id": job.turn_id if job.task_id is not None else None}
    file = ContentFile(output.content, name=output.filename)
    if job.base_version is not None and job.artifact_id is not None:
        artifact = (
            artifact_qs_for_update()
            .filter(pk=job.artifact_id, workspace_id=job.workspace_id, deleted_at__isnull=True)
            .first()
        )
        if artifact is not None:
            # The new rendition goes on top of whatever is current now (a person may have added a version
            # while it ran); `derived_from_version` says which version the request was made from.
            return artifact_version_add(
                workspace_id=job.workspace_id,
                artifact_id=artifact.pk,
                base_version=artifact.current_version,
                file=file,
                media_type=output.media_type,
                meta={**meta, "derived_from_version": job.base_version},
                **author,
            )
        # Deleted while the job ran: the (possibly paid) result is kept as an artifact of its own.
        meta["requested_artifact"] = job.artifact_id
    _, version = artifact_create_with_version(
        workspace_id=job.workspace_id,
        kind=job.kind,
        title=_title(job, output),
        tags=["generated"],
        file=file,
        media_type=output.media_type,
        meta=meta,
        **author,
    )
    return version


def _title(job: GenerationJob, output: Output) -> str:
    """The first sentence of the request names the work ("Poster 1 of 3 — retro brand poster"); the text
    drawn on an image (meta["title"]) is only a fallback."""
    first = job.prompt.split(". ", 1)[0]
    title = output.meta.get("title") if isinstance(output.meta.get("title"), str) else ""
    text = " ".join((first or title).split())
    return (text[:80].rstrip() + "…") if len(text) > 80 else (text or "Generation")


EVENT_KINDS = {
    JobStatus.SUCCEEDED: "generation.succeeded",
    JobStatus.FAILED: "generation.failed",
    JobStatus.TIMED_OUT: "generation.failed",
}


def _event(job: GenerationJob) -> None:
    data: dict[str, Any] = {
        "job": job.pk,
        "task": job.task_id,
        "turn": job.turn_id,
        "kind": job.kind,
        "provider": job.provider,
        "status": job.status,
        "progress": job.progress,
    }
    if job.status == JobStatus.SUCCEEDED:
        data |= {
            "artifact": job.artifact_id,
            "artifact_version": job.artifact_version_id,
            "version": job.artifact_version.number,
        }
    elif job.error:
        data["error"] = job.error
    event_append(workspace_id=job.workspace_id, kind=EVENT_KINDS.get(job.status, "generation.progress"), data=data)


# --- the embedded worker ------------------------------------------------------------------------------------


def job_work(*, job_id: int) -> str:
    """Run a WorkerProvider's job (the django-q job enqueued by its submit). Safe to deliver twice.

    The work's own failures are reported here (`worker_failed`). Losing the database (a restart) is not the work's
    failure and must not leave its task with a failed generation: rerun-safe work ends quietly and, once silent,
    the generation sweeper hands it out again; other work raises, and its failed django-q job fails it.
    """
    provider = None
    try:
        job = GenerationJob.objects.filter(pk=job_id).first()
        if job is None or job.is_terminal:
            return "settled"
        provider = registry.provider_get(job.provider)
        if not isinstance(provider, WorkerProvider):
            return "not_a_worker_job"
        return _work(job, provider)
    except (OperationalError, InterfaceError):
        if provider is None or not provider.rerun_safe:
            raise
        logger.warning("generation job %s: database lost mid-job; left for the sweeper", job_id, exc_info=True)
        return "interrupted"


def _work(job: GenerationJob, provider: WorkerProvider) -> str:
    job_id = job.pk

    def report(status: str, progress: int | None = None, output: Output | None = None, error=None) -> bool:
        return job_event_apply(job_id=job_id, status=status, progress=progress, result=output, error=error)

    # A provider whose work must not run twice claims the job first: a second delivery finds it running.
    if not provider.rerun_safe and not report(JobStatus.RUNNING, progress=1):
        return "claimed"
    try:
        provider.work(job, report)
    except (OperationalError, InterfaceError):
        raise
    except Exception:  # noqa: BLE001 - the job must end; the details stay in our log, not in the event
        logger.exception("generation job %s: %s worker failed", job_id, job.provider)
        report(JobStatus.FAILED, error=_error("worker_failed", "The generation worker failed."))
    return GenerationJob.objects.filter(pk=job_id).values_list("status", flat=True).get()


# --- the sweeper --------------------------------------------------------------------------------------------


@dataclass
class GenerationSweep:
    uncertain: list[int] = field(default_factory=list)
    polled: list[int] = field(default_factory=list)
    applied: list[int] = field(default_factory=list)
    timed_out: list[int] = field(default_factory=list)
    redelivered: list[int] = field(default_factory=list)
    recovered: list[int] = field(default_factory=list)
    errors: list[int] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(
            self.uncertain or self.polled or self.timed_out or self.redelivered or self.recovered or self.errors
        )


def jobs_poll_silent(now: datetime | None = None) -> GenerationSweep:
    """Compensate lost submissions, lost callbacks and stuck jobs (module docstring). Each move is a
    forward-only report or a conditional update, so concurrent sweepers act once per job."""
    now = now or timezone.now()
    sweep = GenerationSweep()
    _fail_uncertain(now, sweep)
    _poll_silent(now, sweep)
    _time_out(now, sweep)
    if sweep:
        logger.info("generation sweep: %s", sweep)
    return sweep


def _fail_uncertain(now: datetime, sweep: GenerationSweep) -> None:
    # Still `submitting` long after the row was written: the process died between submitting and storing the
    # upstream id, or the provider never answered. The upstream may have the job; we cannot find it.
    cutoff = now - timedelta(seconds=settings.LOMOTE_GENERATION_SUBMIT_TIMEOUT)
    stuck = GenerationJob.objects.filter(status=JobStatus.SUBMITTING, created_at__lt=cutoff).order_by("pk")
    for job_id in list(stuck.values_list("pk", flat=True)[:SWEEP_BATCH]):
        if job_submission_recover(job_id=job_id):
            sweep.recovered.append(job_id)  # ours: its message is queued again, nothing was uncertain
            continue
        error = _error("submission_uncertain", "The submission was not confirmed in time; it will not be retried.")
        if job_event_apply(job_id=job_id, status=JobStatus.FAILED, error=error):
            sweep.uncertain.append(job_id)


def _poll_silent(now: datetime, sweep: GenerationSweep) -> None:
    silent_before = now - timedelta(seconds=settings.LOMOTE_GENERATION_SILENT_SECONDS)
    silent = (
        GenerationJob.objects.filter(status__in=IN_FLIGHT)
        .exclude(upstream_id="")
        .filter(Q(last_event_at__lt=silent_before) | Q(last_event_at__isnull=True))
        .filter(Q(polled_at__lt=silent_before) | Q(polled_at__isnull=True))
        .order_by("pk")
    )
    unheard: dict[str, list[GenerationJob]] = {}  # provider -> its silent jobs with nothing to report
    for job in list(silent.only("pk", "provider", "upstream_id", "polled_at")[:SWEEP_BATCH]):
        job_id, provider_name, upstream_id = job.pk, job.provider, job.upstream_id
        # Claimed with a conditional update: of two sweepers, one polls.
        if not GenerationJob.objects.filter(pk=job_id, polled_at=job.polled_at).update(polled_at=now):
            continue
        try:
            report = registry.provider_get(provider_name).poll(upstream_id)
        except Exception:  # noqa: BLE001 - a failing poll is retried at a later sweep; the job may still time out
            logger.warning("generation job %s: poll of %s failed", job_id, provider_name, exc_info=True)
            sweep.errors.append(job_id)
            continue
        sweep.polled.append(job_id)
        if report is None:
            unheard.setdefault(provider_name, []).append(job)
            continue
        try:
            applied = job_event_apply(
                job_id=job_id, status=report.status, progress=report.progress, result=report.output, error=report.error
            )
        except DomainError:
            logger.warning(
                "generation job %s: %s answered a poll with a bad report", job_id, provider_name, exc_info=True
            )
            sweep.errors.append(job_id)
            continue
        if applied:
            sweep.applied.append(job_id)
    _redeliver(unheard, sweep)


def _redeliver(unheard: dict[str, list[GenerationJob]], sweep: GenerationSweep) -> None:
    """Our own workers' silent jobs may sit in a message a killed process took, hidden for the broker's retry
    (12 minutes), or in none: hand them out again (lomote/kernel/queue_revival.py). Only rerun-safe work — a
    paid worker job must not run twice, and times out instead."""
    for provider_name, jobs in unheard.items():
        provider = registry.provider_get(provider_name)
        if not (isinstance(provider, WorkerProvider) and provider.rerun_safe):
            continue
        by_name = {provider.message_name(job.pk): job for job in jobs}
        try:
            acted = messages_revive({name: partial(_requeue, provider, job) for name, job in by_name.items()})
        except Exception:  # noqa: BLE001 - the broker is our database; the next sweep tries again
            logger.warning("generation: redelivery of %s jobs failed", provider_name, exc_info=True)
            continue
        sweep.redelivered += [by_name[name].pk for name in acted]


def _requeue(provider: WorkerProvider, job: GenerationJob) -> None:
    # Its message is gone: queue it again, and store the new upstream id unless something else moved it. Gone may
    # also mean just finished (acknowledged after this sweep found the job silent): then there is nothing to queue.
    if not GenerationJob.objects.filter(pk=job.pk, status__in=IN_FLIGHT).exists():
        return
    upstream_id = provider.submit(job)
    GenerationJob.objects.filter(pk=job.pk, upstream_id=job.upstream_id).update(upstream_id=upstream_id)


def _time_out(now: datetime, sweep: GenerationSweep) -> None:
    active = GenerationJob.objects.filter(status__in=IN_FLIGHT)
    for provider_name in list(active.values_list("provider", flat=True).distinct().order_by("provider")):
        try:
            max_duration = registry.provider_get(provider_name).max_duration
        except DomainError:
            max_duration = settings.LOMOTE_GENERATION_DEFAULT_MAX_DURATION
        cutoff = now - timedelta(seconds=max_duration)
        # A worker may report before the submitting process stored the id (and that process may have died):
        # such a job has no submission time, and counts from its creation.
        started_before = Q(submitted_at__lt=cutoff) | Q(submitted_at__isnull=True, created_at__lt=cutoff)
        overdue = active.filter(started_before, provider=provider_name).order_by("pk")
        for job_id in list(overdue.values_list("pk", flat=True)[:SWEEP_BATCH]):
            error = _error("timed_out", f"No result within {max_duration:g} s.")
            if job_event_apply(job_id=job_id, status=JobStatus.TIMED_OUT, error=error):
                sweep.timed_out.append(job_id)
