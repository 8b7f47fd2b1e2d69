"""The generation provider contract (DESIGN §4). Every provider — embedded, simulated or hosted — implements it.

    provider = registry.provider_get("procedural")
    provider.check(kind, params)           # before anything is stored: refuse what it cannot do
    upstream_id = provider.submit(job)     # outside any transaction; the id is stored at once
    report = provider.poll(upstream_id)    # compensation when callbacks stop arriving

`submit(job)` asks the upstream to start the job and returns the upstream's id for it. It runs after the
job row (`submitting`) has committed and outside any transaction. It must either return an id or raise:
- `SubmissionRejected` when the upstream certainly created nothing (a validation error, a refused
  credential): the job fails with the rejection's code;
- `SubmissionUncertain` (or any other exception, or no answer at all) when it may have created something:
  the job fails with `submission_uncertain` and is NEVER submitted again automatically (a second
  submission could run, and cost, twice). Its hold is released by rule (billing reacts to the failure).

Progress and results reach us as reports — signed webhooks, `poll()`, or the embedded worker calling back —
and every report goes through `workspace.services.jobs.job_event_apply`, which applies forward moves
only (workspace/transitions.py). So a provider may report the same thing twice, or out of order.

`poll(upstream_id)` returns the upstream's current view of the job as a `Report`, or None when it has
nothing to say (unknown id, or no news). It must be side-effect free and cheap; it runs outside any
transaction, from the sweeper, for jobs that went silent.

`max_duration` (seconds) bounds a job from submission to result: past it the sweeper marks the job
`timed_out`. `cost_hints` gives an indicative price per kind, in credits, for quotes; the charge itself is
billing's business. `kinds` lists the kinds the provider can produce.

Providers whose upstream is synchronous (the embedded renderer, a hosted API that answers with the image)
derive from `WorkerProvider`: `submit` enqueues a django-q job and returns its id; the job calls `work()`,
which reports through the `report` callable it is given. On the ORM broker the message goes in the job row's own
transaction instead (`submit_with_the_job`): such a submission is never uncertain.
"""

import base64
import binascii
import re
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import router
from django.utils.translation import gettext_noop
from django_q.brokers import get_broker
from django_q.brokers.orm import ORM
from django_q.conf import Conf
from django_q.models import Task
from django_q.tasks import async_task

from lomote.kernel.exceptions import DomainError, InvalidInput
from workspace.models import GenerationJob


class GenerationError(DomainError):
    """A generation provider failed. `code` says how; `retryable` is always False here: we never resubmit."""

    status, code, default_message = 502, "generation_error", gettext_noop("The generation provider failed.")


class SubmissionRejected(GenerationError):
    """The upstream refused the submission and certainly created no job."""

    code, default_message = "submission_rejected", gettext_noop("The generation provider refused the request.")


class SubmissionUncertain(GenerationError):
    """We cannot tell whether the upstream created the job (a timeout, a dropped connection)."""

    code, default_message = (
        "submission_uncertain",
        gettext_noop("The generation provider did not confirm the submission."),
    )


# The size of each image format, as the embedded renderer reads it (width, height; a logo also sets its layout): what
# the generate_image tool and Flow image nodes send for "a square post", "a poster", "a story cover", "a banner".
IMAGE_FORMATS: dict[str, dict[str, Any]] = {
    "square": {"width": 1024, "height": 1024},
    "portrait": {"width": 768, "height": 1024},
    "story": {"width": 576, "height": 1024},
    "wide": {"width": 1280, "height": 720},
    "logo": {"width": 768, "height": 768, "layout": "logo"},
}
_SAFE_FILENAME = re.compile(r"[^A-Za-z0-9._-]+")
MAX_FILENAME = 100


@dataclass(frozen=True)
class Output:
    """A finished result: the file's bytes, its media type, a file name and what describes it (size, frames…)."""

    content: bytes
    media_type: str
    filename: str
    meta: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "b64": base64.b64encode(self.content).decode("ascii"),
            "media_type": self.media_type,
            "filename": self.filename,
            "meta": self.meta,
        }

    @classmethod
    def from_json(cls, data: Any) -> "Output":
        """An output as a webhook carries it: {"b64", "media_type", "filename", "meta"}. InvalidInput if malformed."""
        if not isinstance(data, dict):
            raise InvalidInput("A result is an object with b64, media_type and filename.", code="invalid_result")
        b64, media_type = data.get("b64"), data.get("media_type")
        filename, meta = data.get("filename", "result"), data.get("meta", {})
        if not isinstance(b64, str) or not isinstance(media_type, str) or not isinstance(filename, str):
            raise InvalidInput("A result needs b64, media_type and filename strings.", code="invalid_result")
        if not isinstance(meta, dict) or not 0 < len(media_type) <= 100 or "/" not in media_type:
            raise InvalidInput("A result's media_type or meta is malformed.", code="invalid_result")
        try:
            content = base64.b64decode(b64, validate=True)
        except (binascii.Error, ValueError):
            raise InvalidInput("A result's b64 is not valid base64.", code="invalid_result") from None
        return cls(content=content, media_type=media_type, filename=filename, meta=meta)

    def checked(self) -> "Output":
        """The output with a safe file name, refused if empty or larger than the configured maximum."""
        if not self.content:
            raise InvalidInput("A result has no content.", code="invalid_result")
        if len(self.content) > settings.LOMOTE_GENERATION_MAX_OUTPUT_BYTES:
            raise InvalidInput("A result is larger than allowed.", code="result_too_large")
        name = _SAFE_FILENAME.sub("-", self.filename.rsplit("/", 1)[-1]).strip(".-")[:MAX_FILENAME] or "result"
        return Output(content=self.content, media_type=self.media_type, filename=name, meta=dict(self.meta))


@dataclass(frozen=True)
class Report:
    """What a provider says about a job: a status, maybe a progress (0-100), the output on success, an error."""

    status: str
    progress: int | None = None
    output: Output | None = None
    error: dict[str, Any] | None = None


# report(status, progress=None, output=None, error=None) -> applied
ReportFn = Callable[..., bool]


class GenerationProvider(ABC):
    name: str = ""
    kinds: frozenset[str] = frozenset()
    max_duration: float = 900.0
    cost_hints: dict[str, int] = {}

    def check(self, kind: str, params: dict[str, Any]) -> None:
        """Refuse, before anything is stored, a kind or parameters this provider cannot handle (InvalidInput)."""
        if kind not in self.kinds:
            raise InvalidInput(
                f"The {self.name} provider cannot make {kind!r} jobs.",
                code="unsupported_kind",
                details={"provider": self.name, "kinds": sorted(self.kinds)},
            )

    @abstractmethod
    def submit(self, job: GenerationJob) -> str:
        """Start the job upstream; return the upstream id. Runs outside any transaction (see module doc)."""

    def submit_with_the_job(self, job: GenerationJob) -> str | None:
        """Submit inside the transaction that writes the job row, when the upstream lives in that same database;
        return the upstream id, or None when this provider cannot (then `submit` runs after the commit)."""
        return None

    @abstractmethod
    def poll(self, upstream_id: str) -> Report | None:
        """The upstream's current view of the job, or None. Side-effect free."""


class WorkerProvider(GenerationProvider):
    """A provider whose work runs in our own django-q workers and reports through `report`.

    The ORM broker is at-least-once: a job may be delivered again (DESIGN §14). `rerun_safe` says whether
    the work may then run again (free, deterministic rendering) or must not (a paid upstream call: the
    first delivery claims the job by moving it to `running`, and a later delivery finding it claimed does
    nothing; if that first worker died, the sweeper times the job out).
    """

    rerun_safe: bool = True

    @property
    def max_duration(self) -> float:
        # Past the point where its worker could still be running: queue wait, then the q job's hard timeout.
        return settings.LOMOTE_TASK_TIMEOUTS["generation"] + settings.LOMOTE_QUEUE_WAIT_MARGIN + 60

    def submit(self, job: GenerationJob) -> str:
        try:
            return self._enqueue(job)
        except Exception as exc:  # after the row's commit, an error here leaves the outcome unknown
            raise SubmissionUncertain("The generation job could not be queued.") from exc

    def submit_with_the_job(self, job: GenerationJob) -> str | None:
        # The ORM broker on the job's own database: the message commits with the job row, or neither does (a crash
        # or a database restart in between leaves nothing to be uncertain about). A failure propagates and rolls
        # the row back. Any other broker would hand the message to a worker before the row exists; in django-q's
        # sync mode (tests, scripts) enqueuing runs the work at once, which must find the row committed.
        if Conf.SYNC or not _broker_in_database_of(GenerationJob):
            return None
        return self._enqueue(job)

    def _enqueue(self, job: GenerationJob) -> str:
        return async_task(
            "workspace.tasks.generation_work",
            job.pk,
            group="generation",
            timeout=settings.LOMOTE_TASK_TIMEOUTS["generation"],
            task_name=self.message_name(job.pk),
        )

    def poll(self, upstream_id: str) -> Report | None:
        """The worker reports itself (the work's own failures included, see job_work); a django-q job that still
        ended with an error lost its delivery — to a database restart, a timeout. Rerun-safe work says nothing, so
        the sweeper hands it out again (until max_duration); work that must not run twice is reported failed."""
        task = Task.objects.filter(id=upstream_id).only("success").first()
        if task is not None and not task.success and not self.rerun_safe:
            return Report(status="failed", error={"code": "worker_failed", "message": "The generation worker failed."})
        return None

    @staticmethod
    def message_name(job_id: int) -> str:
        """The django-q task name of a job's message (the generation sweeper finds it by this name)."""
        return f"generation-{job_id}"

    @abstractmethod
    def work(self, job: GenerationJob, report: ReportFn) -> None:
        """Do the job, reporting progress and finally success (with the output) or failure through `report`."""


def _broker_in_database_of(model) -> bool:
    """Whether django-q's broker stores its messages in the database `model` is written to (the ORM broker)."""
    return Conf.ORM is not None and Conf.ORM == router.db_for_write(model) and isinstance(get_broker(), ORM)
