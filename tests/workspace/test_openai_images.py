"""The hosted image provider (`openai_images`) against a real local HTTP server (tests/support/fake_openai.py).

What matters (DESIGN §4, §14): one job is at most one paid HTTP request — no SDK retries, no second call
when the broker delivers the job twice, none after a timeout (the image may exist upstream: the job fails as
`submission_uncertain`); HTTP failures end the job with their own code; the key reaches the server's
Authorization header and nowhere else.
"""

import io

import pytest
from PIL import Image

import lomote.settings as configured_settings
from lomote.kernel.exceptions import InvalidInput
from tests.support.fake_openai import FakeOpenAIServer, Reply, error_body, image_result
from workspace.models import ArtifactVersion, Event, GenerationJob
from workspace.providers.openai_images import OpenAIImagesProvider
from workspace.services.jobs import job_event_apply, job_submit
from workspace.tasks import generation_work

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("local_model_servers")]

API_KEY = "sk-lomote-images-7c1e0b9d42a8"


def png(size=(48, 32), color=(232, 131, 58)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, color).save(buffer, format="PNG")
    return buffer.getvalue()


@pytest.fixture
def server():
    with FakeOpenAIServer(default=Reply(body=image_result(png(), revised_prompt="A retro poster."))) as fake:
        yield fake


@pytest.fixture(autouse=True)
def configured(settings, server):
    settings.LOMOTE_OPENAI_IMAGES_KEY = API_KEY
    settings.LOMOTE_OPENAI_IMAGES_BASE_URL = server.url
    settings.LOMOTE_OPENAI_IMAGES_MODEL = "gpt-image-1"
    settings.LOMOTE_OPENAI_IMAGES_TIMEOUT = 0.5


def submit(workspace, **params) -> GenerationJob:
    return job_submit(
        workspace_id=workspace.pk,
        idempotency_key="9:2:0",
        kind="image",
        prompt="retro brand poster",
        params=params,
        provider="openai_images",
        task_id=9,
    )


def test_it_generates_an_image_through_the_sdk(workspace, server, settled):
    # given a submitted job: the call is queued for a worker, not made in the request
    job = submit(workspace, size="1024x1536", quality="low")
    assert job.status == "submitted" and job.upstream_id and server.calls == 0

    # when a worker runs it
    assert generation_work(job.pk) == "succeeded"

    # then one request reached the images endpoint with our parameters and the key
    assert server.calls == 1
    [request] = server.requests
    assert request.path.endswith("/images/generations")
    assert request.body == {
        "model": "gpt-image-1",
        "prompt": "retro brand poster",
        "n": 1,
        "size": "1024x1536",
        "quality": "low",
    }
    assert server.authorizations == [f"Bearer {API_KEY}"]
    # and the image is stored as the job's artifact version
    job.refresh_from_db()
    version = ArtifactVersion.objects.get()
    assert job.artifact_version == version and version.media_type == "image/png"
    assert version.file.read() == png()
    assert (version.meta["width"], version.meta["height"], version.meta["model"]) == (48, 32, "gpt-image-1")
    assert version.meta["revised_prompt"] == "A retro poster."
    assert [s["status"] for s in settled] == ["succeeded"]


def test_it_asks_older_models_for_base64(workspace, server, settings):
    settings.LOMOTE_OPENAI_IMAGES_MODEL = "dall-e-3"
    generation_work(submit(workspace).pk)
    assert server.bodies[0]["response_format"] == "b64_json"


def test_it_calls_once_when_the_broker_delivers_the_job_twice(workspace, server):
    # given
    job = submit(workspace)

    # when the ORM broker hands the job out again (at-least-once)
    generation_work(job.pk)
    second = generation_work(job.pk)

    # then the paid call was made once
    assert second == "settled" and server.calls == 1 and ArtifactVersion.objects.count() == 1


def test_it_never_calls_again_for_a_job_an_earlier_delivery_claimed(workspace, server):
    # given a first delivery that claimed the job, then died mid-call
    job = submit(workspace)
    job_event_apply(job_id=job.pk, status="running", progress=1)

    # when the broker redelivers it
    result = generation_work(job.pk)

    # then nothing is called; the sweeper will time the job out
    assert result == "claimed" and server.calls == 0


def test_it_fails_a_timeout_as_uncertain_and_does_not_retry(workspace, server, settled):
    # given an upstream that answers after our timeout
    server.hang(5)
    job = submit(workspace)

    # when
    generation_work(job.pk)

    # then one request, and the job failed as uncertain (the image may exist upstream), its hold released
    job.refresh_from_db()
    assert server.calls == 1
    assert (job.status, job.error["code"]) == ("failed", "submission_uncertain")
    assert [s["status"] for s in settled] == ["failed"]
    assert not ArtifactVersion.objects.exists()


@pytest.mark.parametrize(
    ("status", "code"),
    [
        (400, "upstream_rejected"),
        (401, "upstream_auth"),
        (403, "upstream_auth"),
        (429, "upstream_rate_limited"),
        (500, "upstream_failed"),
        (503, "upstream_failed"),
    ],
)
def test_it_ends_the_job_with_the_http_failure_after_one_request(workspace, server, status, code):
    # given a server that fails (and echoes the key, as some do)
    server.reply(error_body(f"bad request for key {API_KEY}"), status=status)
    job = submit(workspace)

    # when
    generation_work(job.pk)

    # then
    job.refresh_from_db()
    assert server.calls == 1 and (job.status, job.error["code"]) == ("failed", code)
    assert API_KEY not in str(job.error)


def test_it_keeps_a_rejection_reason_without_the_key(workspace, server):
    server.reply(error_body(f"Your prompt was refused (key {API_KEY})."), status=400)
    job = submit(workspace)
    generation_work(job.pk)
    job.refresh_from_db()
    assert "Your prompt was refused" in job.error["message"] and "[redacted]" in job.error["message"]


@pytest.mark.parametrize(
    "body",
    [
        {"created": 1, "data": []},
        {"created": 1, "data": [{"b64_json": "bm90IGFuIGltYWdl"}]},
        {"created": 1, "data": [{"url": "https://x"}]},
    ],
)
def test_it_fails_an_answer_without_a_usable_image(workspace, server, body):
    server.reply(body)
    job = submit(workspace)
    generation_work(job.pk)
    job.refresh_from_db()
    assert (job.status, job.error["code"]) == ("failed", "upstream_bad_response")


def test_it_refuses_what_it_cannot_do_before_storing_anything(workspace, settings):
    with pytest.raises(InvalidInput) as caught:
        job_submit(workspace_id=workspace.pk, idempotency_key="a", kind="video", prompt="p", provider="openai_images")
    assert caught.value.code == "unsupported_kind"
    with pytest.raises(InvalidInput):
        submit(workspace, size="huge")
    with pytest.raises(InvalidInput):
        submit(workspace, steps=30)
    settings.LOMOTE_OPENAI_IMAGES_KEY = ""
    with pytest.raises(InvalidInput) as caught:
        submit(workspace)
    assert caught.value.code == "provider_not_configured"
    assert not GenerationJob.objects.exists()


def test_it_never_puts_the_key_in_events_errors_or_repr(workspace, server):
    server.fail(401, f"invalid key {API_KEY}")
    job = submit(workspace)
    generation_work(job.pk)
    stored = [str(e.data) for e in Event.objects.all()] + [str(GenerationJob.objects.values().get())]
    assert not any(API_KEY in text for text in stored)
    assert API_KEY not in repr(OpenAIImagesProvider.from_settings())


def test_it_keeps_one_attempt_within_the_generation_q_timeout():
    # As configured (not as this suite overrides it): a worker killed by the q timeout mid-call would leave
    # the outcome unknown for no reason, and a job must not be timed out while its one attempt may still run.
    timeout = configured_settings.LOMOTE_OPENAI_IMAGES_TIMEOUT
    assert timeout < configured_settings.LOMOTE_TASK_TIMEOUTS["generation"]
    assert configured_settings.Q_CLUSTER["retry"] > configured_settings.LOMOTE_TASK_TIMEOUTS["generation"]
    provider = OpenAIImagesProvider(api_key="k", base_url="http://x", model="m", timeout=timeout)
    assert provider.max_duration > configured_settings.LOMOTE_TASK_TIMEOUTS["generation"]
