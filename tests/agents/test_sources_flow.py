"""A person's own file named in a request is the work's source (DESIGN §15; issue 32 item 2, sources).

Through the real runtime on PostgreSQL, as a new user would: a file uploaded through REST, then a request posted to
Main ("Turn my logo sketch into a clean vector-style logo"), the scripted planner on the embedded default, billing,
and the procedural provider's worker. Asserted on what was persisted: the job's source, the result's provenance,
and the result's pixels (the traced mark overlaps the sketch's strokes).
"""

import io

import numpy as np
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from PIL import Image, ImageDraw

from agents.models import Task, TaskStatus, Turn, TurnStatus
from agents.runtime.loop import turn_run
from billing.services.approvals import approval_grant
from billing.services.wallets import wallet_topup
from tests.support.queued import run_queued, run_wakeups
from workspace.models import Artifact, GenerationJob, JobStatus
from workspace.providers.tracing import stroke_mask
from workspace.selectors import workspace_access
from workspace.services.workspaces import workspace_create

pytestmark = [pytest.mark.django_db(transaction=True)]


def sketch_png(shift: int = 0) -> bytes:
    """A pencil-like drawing: a ring and a peak in dark grey on off-white paper, with the paper's grain."""
    image = Image.new("RGB", (400, 400), (246, 243, 236))
    draw = ImageDraw.Draw(image)
    draw.ellipse((70 + shift, 70, 330 + shift, 330), outline=(40, 40, 45), width=10)
    draw.line((120 + shift, 290, 200 + shift, 110, 280 + shift, 290), fill=(35, 35, 40), width=10, joint="curve")
    grain = np.random.default_rng(7).integers(-10, 10, (400, 400, 3))
    noisy = np.clip(np.asarray(image, dtype=int) + grain, 0, 255).astype(np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(noisy).save(buffer, format="PNG")
    return buffer.getvalue()


def photo_png() -> bytes:
    """A photo-like image: smooth light and shade everywhere, no plain ground."""
    yy, xx = np.mgrid[0:300, 0:400]
    base = np.stack(
        [120 + 90 * np.sin(xx / 35.0) * np.cos(yy / 45.0), 100 + 60 * np.sin(yy / 28.0), 140 + 70 * np.cos(xx / 50.0)],
        axis=-1,
    )
    base += np.random.default_rng(3).normal(0, 16, base.shape)
    buffer = io.BytesIO()
    Image.fromarray(np.clip(base, 0, 255).astype(np.uint8)).save(buffer, format="PNG")
    return buffer.getvalue()


@pytest.fixture
def owner(workspace, alice, no_enqueue):
    access = workspace_access(principal=alice, workspace_id=workspace.pk)
    wallet_topup(access=access, amount=5000)
    return access


def upload(client, workspace_id: int, name: str, content: bytes) -> int:
    response = client.post(
        f"/api/v1/workspaces/{workspace_id}/artifacts/upload/",
        {"file": SimpleUploadedFile(name, content, content_type="image/png")},
        format="multipart",
    )
    assert response.status_code == 201, response.content
    return response.json()["id"]


def ask(client, workspace_id: int, text: str) -> dict:
    response = client.post(f"/api/v1/workspaces/{workspace_id}/messages/", {"text": text}, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def settle(access) -> None:
    """What workers and the person would do until nothing is left: run turns, approve asked spending, run the
    procedural provider's jobs and the wake-ups their completion queues."""
    for _ in range(15):
        while turn := Turn.objects.filter(status=TurnStatus.QUEUED).order_by("pk").first():
            turn_run(turn_id=turn.pk, generation=turn.generation)
        for task in Task.objects.filter(status=TaskStatus.WAITING, workspace_id=access.workspace.pk):
            if task.waiting_for.get("type") == "approval":
                approval_grant(access=access, task_id=task.pk, budget=task.waiting_for["amount"])
        ran = run_queued("workspace.tasks.generation_work")
        run_wakeups()
        if not ran and not Turn.objects.filter(status=TurnStatus.QUEUED).exists():
            return
    raise AssertionError("the work did not come to rest")


def made_by(task_id: int) -> GenerationJob:
    [job] = GenerationJob.objects.filter(task_id=task_id)
    assert job.status == JobStatus.SUCCEEDED, job.error
    return job


def provenance(client, workspace_id: int, job: GenerationJob) -> dict:
    url = f"/api/v1/workspaces/{workspace_id}/artifacts/{job.artifact_id}/versions/1/provenance/"
    response = client.get(url)
    assert response.status_code == 200, response.content
    return response.json()


def result_image(job: GenerationJob) -> Image.Image:
    with job.artifact_version.file.open("rb") as f:
        return Image.open(io.BytesIO(f.read())).convert("RGB")


def mark_overlap(result: Image.Image, meta: dict, sketch: bytes) -> float:
    """IoU between the sketch's strokes (where the result says it placed them) and the result's mark pixels."""
    left, top, right, bottom = meta["mark_box"]
    strokes = stroke_mask(Image.open(io.BytesIO(sketch)))
    s_left, s_top, s_right, s_bottom = meta["source_box"]
    placed = Image.fromarray(strokes[s_top:s_bottom, s_left:s_right].astype(np.uint8) * 255)
    expected = np.asarray(placed.resize((right - left, bottom - top))) >= 128
    primary = np.array([int(meta["colors"][1][i : i + 2], 16) for i in (1, 3, 5)])
    region = np.asarray(result, dtype=int)[top:bottom, left:right]
    drawn = np.abs(region - primary).sum(axis=-1) < 60
    return float((drawn & expected).sum() / max(1, (drawn | expected).sum()))


@pytest.mark.parametrize(
    "request_text",
    ["Turn my logo sketch into a clean vector-style logo", "Transforme mon croquis en logo propre"],
)
def test_it_makes_the_logo_from_the_sketch_the_person_uploaded(owner, workspace, alice, client_for, request_text):
    # given a sketch uploaded through REST, and an unrelated photo uploaded earlier
    client = client_for(alice)
    upload(client, workspace.pk, "holiday.png", photo_png())
    sketch = sketch_png()
    sketch_id = upload(client, workspace.pk, "logo-sketch.png", sketch)
    # when the person asks Main to turn their sketch into a logo
    message = ask(client, workspace.pk, request_text)
    settle(owner)
    # then the job records the sketch as its source, and the result's provenance names it
    job = made_by(message["task"])
    assert job.source_artifact_id == sketch_id
    body = client.get(f"/api/v1/workspaces/{workspace.pk}/jobs/{job.pk}/").json()
    assert body["source_artifact_id"] == sketch_id
    derived = provenance(client, workspace.pk, job)["derived_from"]
    assert [(d["relation"], d["artifact_id"], d["artifact_title"]) for d in derived] == [
        ("source", sketch_id, "logo-sketch")
    ]
    # and the logo is traced from the sketch: its mark lies on the sketch's strokes, far above chance
    meta = job.artifact_version.meta
    assert (meta["method"], meta["layout"]) == ("trace", "logo")
    assert mark_overlap(result_image(job), meta, sketch) > 0.6
    shifted = mark_overlap(result_image(job), meta, sketch_png(shift=60))  # the same strokes, elsewhere
    assert shifted < 0.35
    # and no style word of the request became its wordmark: no name was given, so there is none
    assert (meta["wordmark"], meta["title"]) == ("", "")


def test_it_sets_the_brand_name_under_the_traced_mark_when_the_request_names_it(owner, workspace, alice, client_for):
    client = client_for(alice)
    sketch_id = upload(client, workspace.pk, "sketch.png", sketch_png())
    message = ask(client, workspace.pk, "Turn my sketch into a clean logo for Terre & Feu")
    settle(owner)
    job = made_by(message["task"])
    assert job.source_artifact_id == sketch_id
    assert job.artifact_version.meta["wordmark"] == "Terre & Feu"


def test_it_animates_the_photo_the_person_just_uploaded(owner, workspace, alice, client_for):
    # given an older sketch and the photo uploaded just now
    client = client_for(alice)
    upload(client, workspace.pk, "logo-sketch.png", sketch_png())
    photo_id = upload(client, workspace.pk, "IMG_2041.png", photo_png())
    # when the person asks to animate it
    message = ask(client, workspace.pk, "animate the photo I just uploaded")
    settle(owner)
    # then a video is made from the photo, and says so
    job = made_by(message["task"])
    assert job.kind == "video" and job.source_artifact_id == photo_id
    derived = provenance(client, workspace.pk, job)["derived_from"]
    assert [(d["relation"], d["artifact_id"]) for d in derived] == [("source", photo_id)]
    assert job.artifact_version.meta["renderer"] == "procedural-source-animation-1"
    # and its first frame is the photo (pushed in a little), not a drawing of its own
    with job.artifact_version.file.open("rb") as f:
        first = np.asarray(Image.open(io.BytesIO(f.read())).convert("L").resize((64, 48)), dtype=float)
    photo = np.asarray(Image.open(io.BytesIO(photo_png())).convert("L").resize((64, 48)), dtype=float)
    assert np.corrcoef(first.ravel(), photo.ravel())[0, 1] > 0.6


def test_it_never_starts_from_another_workspace_s_file(owner, workspace, alice, dave, client_for):
    # given dave's sketch in his own workspace, and nothing uploaded in alice's
    other = workspace_create(user=dave, name="Dave's place")
    upload(client_for(dave), other.pk, "logo-sketch.png", sketch_png())
    # when alice asks for a logo from "my sketch"
    message = ask(client_for(alice), workspace.pk, "Turn my logo sketch into a clean vector-style logo")
    settle(owner)
    # then the logo is made without a source: dave's file is not alice's material
    job = made_by(message["task"])
    assert job.source_artifact_id is None
    assert provenance(client_for(alice), workspace.pk, job)["derived_from"] == []
    assert not Artifact.objects.filter(workspace=other, created_by_task_id__isnull=False).exists()


def test_it_makes_an_ordinary_request_from_nothing_even_with_files_around(owner, workspace, alice, client_for):
    client = client_for(alice)
    upload(client, workspace.pk, "logo-sketch.png", sketch_png())
    message = ask(client, workspace.pk, "Make a poster of a cat at sunset")
    settle(owner)
    assert made_by(message["task"]).source_artifact_id is None
