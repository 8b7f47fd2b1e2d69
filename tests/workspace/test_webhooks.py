"""Signed generation webhooks (DESIGN §4, §12, §14; TESTING.md "Bad input and security").

Deliveries are signed by the simulated upstream (or by hand, to break them) and posted to
/api/v1/webhooks/generation/<provider>/ without any session or CSRF token. A refused delivery must leave
every persisted fact as it was; an accepted one is processed once, however often it arrives.
"""

import json
import time

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from PIL import features

from lomote.kernel.exceptions import InvalidInput
from tests.support.ordering import run_before, wait_until
from tests.support.race import race
from workspace.models import ArtifactVersion, Event, GenerationJob, WebhookDelivery
from workspace.providers import registry
from workspace.providers.simulated import SimulatedUpstream, via_client
from workspace.services import jobs
from workspace.services.jobs import job_submit
from workspace.webhooks import ID_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, sign, signature

pytestmark = pytest.mark.django_db

URL = "/api/v1/webhooks/generation/simulated/"
SECRET = "whsec_current_5f1c"
OLD_SECRET = "whsec_previous_9a2e"


@pytest.fixture(autouse=True)
def secrets(settings):
    settings.LOMOTE_WEBHOOK_SECRETS = [SECRET, OLD_SECRET]


@pytest.fixture
def client():
    # enforce_csrf_checks: the endpoint must work without any CSRF token or session, as a provider calls it.
    return Client(enforce_csrf_checks=True)


@pytest.fixture
def upstream(client):
    with registry.override("simulated", SimulatedUpstream(deliver=via_client(client), secret=SECRET)) as simulated:
        yield simulated


@pytest.fixture
def job(workspace, upstream):
    return job_submit(
        workspace_id=workspace.pk,
        idempotency_key="7:1:0",
        kind="image",
        prompt="retro brand poster",
        provider="simulated",
        task_id=7,
    )


def body_for(job, **fields) -> bytes:
    return json.dumps({"upstream_id": job.upstream_id, "status": "running", "progress": 40, **fields}).encode()


def post(client, body: bytes, headers: dict[str, str], url: str = URL):
    return client.post(url, data=body, content_type="application/json", headers=headers)


def facts() -> dict:
    """Every persisted fact a delivery could change."""
    return {
        "jobs": list(GenerationJob.objects.order_by("pk").values()),
        "deliveries": list(WebhookDelivery.objects.values_list("delivery_id", flat=True)),
        "events": list(Event.objects.order_by("pk").values_list("seq", "kind")),
        "versions": ArtifactVersion.objects.count(),
    }


def assert_refused(response, status: int, code: str) -> None:
    assert response.status_code == status, (response.status_code, response.content[:300])
    assert response["Content-Type"] == "application/json"
    error = response.json()["error"]
    assert error["code"] == code and error["message"], error


# --- accepted -------------------------------------------------------------------------------------------------


def test_it_applies_a_signed_delivery(client, job):
    # given
    body = body_for(job)

    # when
    response = post(client, body, sign(SECRET, "dlv_1", int(time.time()), body))

    # then
    assert response.status_code == 200
    assert response.json() == {"delivery": "dlv_1", "duplicate": False, "applied": True}
    job.refresh_from_db()
    assert (job.status, job.progress) == ("running", 40)
    assert WebhookDelivery.objects.get().job == job


def assert_applied(response, delivery: str, job, *, applied: bool = True) -> None:
    """200 for `delivery`, and the job at the body_for report (running, 40) whether this one moved it or not."""
    assert response.status_code == 200, (response.status_code, response.content[:300])
    assert response.json() == {"delivery": delivery, "duplicate": False, "applied": applied}
    job.refresh_from_db()
    assert (job.status, job.progress) == ("running", 40)
    assert WebhookDelivery.objects.get(delivery_id=delivery).job == job


def test_it_accepts_the_previous_secret_during_a_rotation(client, job):
    # given
    body = body_for(job)

    # when
    response = post(client, body, sign(OLD_SECRET, "dlv_old", int(time.time()), body))

    # then the report moved the job
    assert_applied(response, "dlv_old", job)


def test_it_accepts_a_header_carrying_several_signatures_if_one_matches(client, job):
    # given a sender in the middle of a rotation, signing with a secret we dropped and with ours
    body, now = body_for(job), int(time.time())
    headers = sign(SECRET, "dlv_2", now, body)
    headers[SIGNATURE_HEADER] = f"v1={signature('whsec_dropped', 'dlv_2', now, body)} {headers[SIGNATURE_HEADER]}"

    # when
    response = post(client, body, headers)

    # then the report moved the job
    assert_applied(response, "dlv_2", job)


def test_it_accepts_a_timestamp_just_inside_the_tolerance(client, job):
    # given the same report, sent twice under two delivery ids at either edge of the tolerance
    body = body_for(job)

    # when
    past, future = [
        post(client, body, sign(SECRET, f"dlv_{offset}", int(time.time()) + offset, body)) for offset in (-295, 295)
    ]

    # then both are accepted and stored; the first moved the job, the repeat explicitly did not
    assert_applied(past, "dlv_-295", job)
    assert_applied(future, "dlv_295", job, applied=False)
    assert WebhookDelivery.objects.count() == 2


# --- refused, with nothing written -------------------------------------------------------------------------------


def _tampered(job, now):
    body = body_for(job)
    return body.replace(b"40", b"90"), sign(SECRET, "dlv_t", now, body)


def _reserialised(job, now):
    # Signed as sent compactly; a proxy re-encoded it with spaces. The JSON means the same; the bytes do not.
    compact = json.dumps({"upstream_id": job.upstream_id, "status": "running", "progress": 40}, separators=(",", ":"))
    return json.dumps(json.loads(compact), indent=1).encode(), sign(SECRET, "dlv_r", now, compact.encode())


def _reordered_keys(job, now):
    signed = json.dumps({"upstream_id": job.upstream_id, "status": "running", "progress": 40}).encode()
    sent = json.dumps({"progress": 40, "status": "running", "upstream_id": job.upstream_id}).encode()
    return sent, sign(SECRET, "dlv_k", now, signed)


def _wrong_secret(job, now):
    body = body_for(job)
    return body, sign("whsec_attacker", "dlv_w", now, body)


def _without(header):
    def make(job, now):
        body = body_for(job)
        headers = sign(SECRET, "dlv_m", now, body)
        del headers[header]
        return body, headers

    return make


def _with(header, value):
    def make(job, now):
        body = body_for(job)
        headers = sign(SECRET, "dlv_x", now, body)
        headers[header] = value(headers[header]) if callable(value) else value
        return body, headers

    return make


def _other_id(job, now):
    # The signature covers the delivery id: a replay under a fresh id does not verify.
    body = body_for(job)
    headers = sign(SECRET, "dlv_a", now, body)
    headers[ID_HEADER] = "dlv_b"
    return body, headers


def _too_old(job, now):
    body = body_for(job)
    return body, sign(SECRET, "dlv_o", now - 360, body)  # a minute past the 300 s window: no clock race


def _in_future(job, now):
    body = body_for(job)
    return body, sign(SECRET, "dlv_f", now + 360, body)  # a minute past the window: a slow run cannot bring it back in


@pytest.mark.parametrize(
    ("make", "code"),
    [
        (_tampered, "invalid_signature"),
        (_reserialised, "invalid_signature"),
        (_reordered_keys, "invalid_signature"),
        (_wrong_secret, "invalid_signature"),
        (_other_id, "invalid_signature"),
        (_without(ID_HEADER), "missing_header"),
        (_without(TIMESTAMP_HEADER), "missing_header"),
        (_without(SIGNATURE_HEADER), "missing_header"),
        (_with(SIGNATURE_HEADER, lambda v: v[3:]), "malformed_signature"),  # no "v1="
        (_with(SIGNATURE_HEADER, lambda v: "v0=" + v[3:]), "malformed_signature"),
        (_with(SIGNATURE_HEADER, lambda v: v.upper()), "malformed_signature"),
        (_with(SIGNATURE_HEADER, lambda v: v[:-2]), "malformed_signature"),
        (_with(SIGNATURE_HEADER, lambda v: " ".join([v] * 9)), "malformed_signature"),
        (_with(TIMESTAMP_HEADER, "yesterday"), "malformed_header"),
        (_with(TIMESTAMP_HEADER, lambda v: v + ".5"), "malformed_header"),
        (_with(TIMESTAMP_HEADER, "-5"), "malformed_header"),
        (_with(ID_HEADER, "has space"), "malformed_header"),
        (_with(ID_HEADER, "x" * 201), "malformed_header"),
        (_too_old, "timestamp_too_old"),
        (_in_future, "timestamp_in_future"),
    ],
    ids=lambda v: getattr(v, "__name__", str(v)),
)
def test_it_refuses_a_bad_delivery_with_400_and_writes_nothing(client, job, make, code):
    # given
    body, headers = make(job, int(time.time()))
    before = facts()

    # when
    response = post(client, body, headers)

    # then
    assert_refused(response, 400, code)
    assert facts() == before


def test_it_refuses_everything_when_no_secret_is_configured(client, job, settings):
    settings.LOMOTE_WEBHOOK_SECRETS = []
    body, before = body_for(job), facts()
    assert_refused(post(client, body, sign(SECRET, "dlv_n", int(time.time()), body)), 503, "webhooks_not_configured")
    assert facts() == before


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"{not json", "malformed_json"),
        (b"\xff\xfe", "malformed_json"),
        (b"[1, 2]", "invalid"),
        (b'{"upstream_id": "x", "status": "done"}', "invalid"),
        (b'{"status": "running"}', "invalid"),
        (b'{"upstream_id": "x", "status": "running", "progress": 250}', "invalid"),
        (b'{"upstream_id": "x", "status": "running", "progress": "40"}', "invalid"),
        (b'{"upstream_id": "x", "status": "succeeded", "result": "a string"}', "invalid"),
    ],
)
def test_it_refuses_a_signed_but_invalid_report_and_writes_nothing(client, job, body, code):
    before = facts()
    assert_refused(post(client, body, sign(SECRET, "dlv_i", int(time.time()), body)), 400, code)
    assert facts() == before


def test_it_refuses_a_success_without_its_result_and_stores_no_delivery(client, job):
    # given a signed success with no result: the delivery is not consumed, so a corrected retry would count
    body, before = body_for(job, status="succeeded", progress=100), facts()

    # when / then
    assert_refused(post(client, body, sign(SECRET, "dlv_s", int(time.time()), body)), 400, "result_missing")
    assert facts() == before


def test_it_answers_404_for_an_unknown_job_and_stores_nothing(client, job):
    # A callback can outrun the storing of its upstream id; 404 makes the sender retry later.
    body, before = json.dumps({"upstream_id": "sim_unknown", "status": "running"}).encode(), facts()
    assert_refused(post(client, body, sign(SECRET, "dlv_u", int(time.time()), body)), 404, "unknown_job")
    assert facts() == before


def test_it_answers_404_for_an_unknown_provider(client, job):
    body = body_for(job)
    url = "/api/v1/webhooks/generation/nowhere/"
    assert_refused(post(client, body, sign(SECRET, "dlv_p", int(time.time()), body), url=url), 404, "not_found")


def test_it_refuses_other_methods(client, job):
    response = client.get(URL)
    assert_refused(response, 405, "method_not_allowed")
    assert response["Allow"] == "POST"


def test_it_refuses_an_oversized_body(client, job, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 100
    body = body_for(job, padding="x" * 200)
    assert_refused(post(client, body, sign(SECRET, "dlv_big", int(time.time()), body)), 413, "payload_too_large")
    assert not WebhookDelivery.objects.exists()


def test_a_report_failing_inside_its_transaction_stores_no_delivery(client, job, settled, monkeypatch):
    # given a success whose result cannot be stored: the failure comes from inside the report's transaction, which
    # runs without a savepoint of its own (the webhook's transaction ends on any exception)
    def refuse(*args, **kwargs):
        raise InvalidInput("The result cannot be stored.", code="result_refused")

    monkeypatch.setattr(jobs, "_store_output", refuse)
    body = json.dumps(SimulatedUpstream(secret=SECRET)._timeline(job, job.upstream_id)[-1]).encode()
    before = facts()

    # when / then: refused, and nothing stays, the delivery row included, so the sender's retry is processed
    assert_refused(post(client, body, sign(SECRET, "dlv_f", int(time.time()), body)), 400, "result_refused")
    assert facts() == before and settled == []


def test_a_delivery_is_one_transaction_without_a_savepoint_for_its_report(client, job):
    # given
    body = body_for(job)

    # when
    with CaptureQueriesContext(connection) as captured:
        response = post(client, body, sign(SECRET, "dlv_q", int(time.time()), body))

    # then the only savepoint is the view's own transaction (nested in the test's); the report adds none
    assert_applied(response, "dlv_q", job)
    savepoints = [q["sql"] for q in captured.captured_queries if q["sql"].startswith("SAVEPOINT")]
    assert len(savepoints) == 1, savepoints


# --- replays and duplicates ------------------------------------------------------------------------------------


def test_it_processes_the_same_delivery_once(client, job, settled):
    # given a success, delivered, then replayed byte for byte (a retrying sender, or an attacker)
    job_result = SimulatedUpstream(secret=SECRET)._timeline(job, job.upstream_id)[-1]
    body = json.dumps(job_result).encode()
    headers = sign(SECRET, "dlv_same", int(time.time()), body)

    # when
    first, second = post(client, body, headers), post(client, body, headers)

    # then both are acknowledged, and it was processed once
    assert (first.status_code, second.status_code) == (200, 200)
    assert first.json()["applied"] is True
    assert second.json() == {"delivery": "dlv_same", "duplicate": True, "applied": False}
    assert WebhookDelivery.objects.count() == 1 and ArtifactVersion.objects.count() == 1 and len(settled) == 1


def test_it_survives_duplicated_and_reordered_callbacks(workspace, client, settled):
    # given an upstream that sends every delivery twice and the final result before the progress
    upstream = SimulatedUpstream(deliver=via_client(client), secret=SECRET, duplicate="delivery", reorder=True)
    with registry.override("simulated", upstream):
        job = job_submit(workspace_id=workspace.pk, idempotency_key="k", kind="image", prompt="p", provider="simulated")

        # when
        deliveries = upstream.run()

    # then every delivery was acknowledged; the job succeeded once and the late progress changed nothing
    assert len(deliveries) == 8 and {d.status_code for d in deliveries} == {200}
    job.refresh_from_db()
    assert (job.status, job.progress) == ("succeeded", 100)
    assert WebhookDelivery.objects.count() == 4 and ArtifactVersion.objects.count() == 1 and len(settled) == 1
    statuses = list(Event.objects.filter(kind__startswith="generation.").values_list("data__status", flat=True))
    assert statuses == ["submitting", "submitted", "succeeded"]


def test_it_ignores_a_callback_the_upstream_sent_twice_under_two_delivery_ids(workspace, client, settled):
    # given an upstream that sends each callback twice, each copy under its own delivery id
    upstream = SimulatedUpstream(deliver=via_client(client), secret=SECRET, duplicate="callback")
    with registry.override("simulated", upstream):
        job = job_submit(workspace_id=workspace.pk, idempotency_key="k", kind="video", prompt="p", provider="simulated")

        # when
        deliveries = upstream.run()

    # then every copy was acknowledged and stored, but the job moved once per callback and settled once
    assert [d.status_code for d in deliveries] == [200] * 8
    assert WebhookDelivery.objects.count() == 8
    job.refresh_from_db()
    assert (job.status, job.progress) == ("succeeded", 100)
    moves = Event.objects.filter(kind__startswith="generation.").values_list("data__status", "data__progress")
    assert [status for status, _ in moves] == ["submitting", "submitted", "queued", "running", "running", "succeeded"]
    assert [progress for status, progress in moves if status == "running"] == [30, 70]
    # the animation's format is the one this Pillow can write
    assert ArtifactVersion.objects.get().media_type == ("image/webp" if features.check("webp") else "image/gif")
    assert len(settled) == 1


def _another_session_waits_on_my_lock() -> bool:
    """Whether another database session is waiting on a lock this one holds (pg_locks is read live)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_locks WHERE NOT granted AND pg_backend_pid() = ANY(pg_blocking_pids(pid))"
        )
        return cursor.fetchone()[0] > 0


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_it_processes_a_delivery_once_when_two_copies_arrive_at_the_same_moment(job, settled):
    # given the copy that claims the delivery holds its transaction open, before it applies the report, until the
    # other copy's insert of the same delivery id waits on the unique index
    def hold_until_the_other_copy_waits(**kwargs):
        wait_until(_another_session_waits_on_my_lock, what="the other copy waiting on the delivery's unique index")

    result = SimulatedUpstream(secret=SECRET)._timeline(job, job.upstream_id)[-1]
    body = json.dumps(result).encode()
    headers = sign(SECRET, "dlv_race", int(time.time()), body)

    # when two copies of the same delivery arrive together
    with run_before("workspace.views.job_event_apply", hold_until_the_other_copy_waits):
        responses = race([lambda: post(Client(), body, headers)] * 2)

    # then both are acknowledged and it was processed once
    assert sorted(r.status_code for r in responses) == [200, 200]
    assert sorted(r.json()["duplicate"] for r in responses) == [False, True]
    assert WebhookDelivery.objects.count() == 1 and ArtifactVersion.objects.count() == 1 and len(settled) == 1


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_it_receives_real_signed_http_callbacks_from_the_simulated_upstream(workspace, live_server, settled):
    # given an upstream calling our endpoint over HTTP from its own thread, with latency
    upstream = SimulatedUpstream(webhook_url=live_server.url + URL, secret=SECRET, autorun=True, latency=0.05)
    with registry.override("simulated", upstream):
        # when
        job = job_submit(workspace_id=workspace.pk, idempotency_key="k", kind="image", prompt="p", provider="simulated")
        upstream.wait()

    # then
    assert [d.status_code for d in upstream.deliveries] == [200] * 4
    job.refresh_from_db()
    assert job.status == "succeeded" and job.artifact_version is not None and len(settled) == 1
