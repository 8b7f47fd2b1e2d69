"""A simulated remote generation service, with knobs for the faults real ones have (DESIGN §4, TESTING.md).

    upstream = SimulatedUpstream(deliver=via_client(client), duplicate="delivery", reorder=True)
    with registry.override("simulated", upstream):
        job = job_submit(..., provider="simulated")
        upstream.run()            # the upstream works: its callbacks go out (or not), in its chosen order

It behaves like a hosted API with callbacks: `submit` returns an upstream id at once and the job "runs"
upstream; each step of its timeline (queued, running 30 %, running 70 %, succeeded with a small real PNG —
or failed) is a callback, delivered as a SIGNED HTTP webhook (workspace/webhooks.py) to `webhook_url`, or
handed as (headers, body) to the `deliver` callable (tests pass one that posts through Django's test
client). `poll(upstream_id)` answers from the upstream's own state, which advances whether or not the
callbacks arrive — that is what lets the sweeper compensate a lost callback.

Knobs:
- `submit_fault`: "timeout" (no answer, nothing created), "timeout_after_create" (the job exists upstream
  but the answer is lost), "reject" (refused, nothing created), "crash" (an unexpected exception);
- `duplicate`: "delivery" (each delivery sent twice with the same delivery id, as a retrying sender does)
  or "callback" (each callback sent twice as two deliveries);
- `reorder`: deliver the callbacks last first (the final result before the progress that preceded it);
- `lose`: "all", "final", or a set of timeline indices whose callbacks are never delivered;
- `fail`: the job ends `failed` instead of `succeeded`;
- `latency` with `autorun=True`: a background thread runs each job `latency` seconds after submission;
- `clock`: the time used to sign (a test can sign too old or too far in the future);
- `secret`: the signing secret (default: the first of LOMOTE_WEBHOOK_SECRETS).
"""

import json
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import connections

from workspace.providers.base import GenerationProvider, Output, Report, SubmissionRejected, SubmissionUncertain
from workspace.providers.procedural import render
from workspace.webhooks import sign

Deliver = Callable[[dict[str, str], bytes], int]


def via_client(client, provider: str = "simulated") -> Deliver:
    """A `deliver` that posts to our webhook endpoint through a Django test client; returns the status code."""
    url = f"/api/v1/webhooks/generation/{provider}/"

    def deliver(headers: dict[str, str], body: bytes) -> int:
        return client.post(url, data=body, content_type="application/json", headers=headers).status_code

    return deliver


@dataclass
class UpstreamJob:
    upstream_id: str
    job_id: int
    kind: str
    prompt: str
    timeline: list[dict[str, Any]]
    emitted: int = 0  # how many timeline steps have happened upstream (delivered or not)


@dataclass
class Delivery:
    delivery_id: str
    payload: dict[str, Any]
    status_code: int


@dataclass
class SimulatedUpstream(GenerationProvider):
    deliver: Deliver | None = None
    webhook_url: str | None = None
    secret: str | None = None
    latency: float = 0.0
    autorun: bool = False
    submit_fault: str | None = None
    duplicate: str | None = None
    reorder: bool = False
    lose: str | Iterable[int] = ()
    fail: bool = False
    progress_steps: tuple[int, ...] = (30, 70)
    clock: Callable[[], float] = time.time
    max_duration: float = 120.0
    jobs: dict[str, UpstreamJob] = field(default_factory=dict)
    deliveries: list[Delivery] = field(default_factory=list)
    submissions: int = 0

    name = "simulated"
    kinds = frozenset({"image", "video", "3d"})
    cost_hints = {"image": 2, "video": 10, "3d": 5}

    def __post_init__(self):
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []

    # --- the provider contract ----------------------------------------------------------------------------

    def submit(self, job) -> str:
        with self._lock:
            self.submissions += 1
        if self.submit_fault == "timeout":
            raise SubmissionUncertain("The simulated upstream did not answer.")
        if self.submit_fault == "reject":
            raise SubmissionRejected("The simulated upstream refused the prompt.", code="upstream_rejected")
        if self.submit_fault == "crash":
            raise RuntimeError("simulated crash during submission")
        upstream_id = f"sim_{uuid.uuid4().hex[:16]}"
        with self._lock:
            self.jobs[upstream_id] = UpstreamJob(
                upstream_id, job.pk, job.kind, job.prompt, self._timeline(job, upstream_id)
            )
        if self.submit_fault == "timeout_after_create":
            raise SubmissionUncertain("The simulated upstream created the job but the answer was lost.")
        if self.autorun:
            thread = threading.Thread(target=self._run_later, args=(upstream_id,), daemon=True)
            self._threads.append(thread)
            thread.start()
        return upstream_id

    def poll(self, upstream_id: str) -> Report | None:
        with self._lock:
            job = self.jobs.get(upstream_id)
            if job is None or job.emitted == 0:
                return None
            step = job.timeline[job.emitted - 1]
        return _report(step)

    # --- driving it -----------------------------------------------------------------------------------------

    def run(self, upstream_id: str | None = None, *, steps: int | None = None) -> list[Delivery]:
        """Let the upstream progress: `steps` more timeline steps (all by default) of one job (or every job)
        happen, and their callbacks are delivered as the knobs say. Returns the deliveries made."""
        made: list[Delivery] = []
        with self._lock:
            targets = [self.jobs[upstream_id]] if upstream_id else list(self.jobs.values())
        for job in targets:
            with self._lock:
                start = job.emitted
                end = len(job.timeline) if steps is None else min(len(job.timeline), start + steps)
                job.emitted = end
            indices = list(range(start, end))
            if self.reorder:
                indices.reverse()
            for index in indices:
                if self._lost(index, len(job.timeline)):
                    continue
                payload = job.timeline[index]
                made.append(self._send(payload))
                if self.duplicate == "delivery":
                    made.append(self._send(payload, delivery_id=made[-1].delivery_id))
                elif self.duplicate == "callback":
                    made.append(self._send(payload))
        return made

    def wait(self, timeout: float = 10.0) -> None:
        """Wait for autorun threads to finish delivering."""
        for thread in list(self._threads):
            thread.join(timeout)

    def send(
        self, payload: dict[str, Any], *, delivery_id: str | None = None, timestamp: int | None = None
    ) -> Delivery:
        """Deliver one arbitrary signed payload (tests of the endpoint itself)."""
        return self._send(payload, delivery_id=delivery_id, timestamp=timestamp)

    # --- internals ------------------------------------------------------------------------------------------

    def _timeline(self, job, upstream_id: str) -> list[dict[str, Any]]:
        steps: list[dict[str, Any]] = [{"upstream_id": upstream_id, "status": "queued", "progress": 0}]
        steps += [{"upstream_id": upstream_id, "status": "running", "progress": p} for p in self.progress_steps]
        if self.fail:
            error = {"code": "upstream_failed", "message": "The simulated upstream failed the job."}
            steps.append({"upstream_id": upstream_id, "status": "failed", "error": error})
        else:
            steps.append({"upstream_id": upstream_id, "status": "succeeded", "progress": 100, "result": _result(job)})
        return steps

    def _lost(self, index: int, total: int) -> bool:
        if self.lose == "all":
            return True
        if self.lose == "final":
            return index == total - 1
        return not isinstance(self.lose, str) and index in set(self.lose)

    def _run_later(self, upstream_id: str) -> None:
        try:
            for _ in range(len(self.jobs[upstream_id].timeline)):
                time.sleep(self.latency)
                self.run(upstream_id, steps=1)
        finally:
            connections.close_all()  # a delivering thread must not leave a connection to the test database

    def _send(
        self, payload: dict[str, Any], *, delivery_id: str | None = None, timestamp: int | None = None
    ) -> Delivery:
        body = json.dumps(payload, separators=(",", ":")).encode()
        delivery_id = delivery_id or f"dlv_{uuid.uuid4().hex}"
        secret = self.secret if self.secret is not None else settings.LOMOTE_WEBHOOK_SECRETS[0]
        headers = sign(secret, delivery_id, int(self.clock()) if timestamp is None else timestamp, body)
        if self.deliver is not None:
            status = self.deliver(headers, body)
        elif self.webhook_url:
            status = _post(self.webhook_url, headers, body)
        else:
            raise RuntimeError("a SimulatedUpstream needs `deliver` or `webhook_url` to send callbacks")
        delivery = Delivery(delivery_id, payload, status)
        with self._lock:
            self.deliveries.append(delivery)
        return delivery


def _post(url: str, headers: dict[str, str], body: bytes) -> int:
    request = urllib.request.Request(  # noqa: S310 - the URL is our own endpoint, set by the test
        url, data=body, method="POST", headers={**headers, "Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


def _result(job) -> dict[str, Any]:
    size = {"width": 64, "height": 64} if job.kind != "3d" else {}
    if job.kind == "video":
        size["frames"] = 3
    return render(job.kind, job.prompt, size).to_json()


def _report(step: dict[str, Any]) -> Report:
    result = step.get("result")
    return Report(
        status=step["status"],
        progress=step.get("progress"),
        output=Output.from_json(result) if result else None,
        error=step.get("error"),
    )
