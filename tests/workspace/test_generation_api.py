"""REST for generation jobs and the read side of artifacts (DESIGN §12): members read, outsiders learn nothing.

GET /api/v1/workspaces/<id>/jobs/                                   ?status= &task= &limit= &offset=
GET /api/v1/workspaces/<id>/jobs/<job_id>/
GET /api/v1/workspaces/<id>/artifacts/<artifact_id>/
GET /api/v1/workspaces/<id>/artifacts/<artifact_id>/versions/<n>/file
"""

import pytest
from django.core.files.base import ContentFile
from django.urls import reverse
from django.utils import timezone

from tests.support.rest import assert_error, issue_api_key, key_client
from workspace.models import Artifact, GenerationJob, Role
from workspace.providers.base import Output
from workspace.services.artifacts import artifact_create
from workspace.services.jobs import job_event_apply, job_submit
from workspace.services.workspaces import workspace_create

pytestmark = pytest.mark.django_db

PNG = b"\x89PNG\r\n\x1a\n not really"


@pytest.fixture
def jobs(workspace):
    """Three procedural jobs: one succeeded (task 7), one running (task 7), one failed (task 8)."""
    made = []
    for key, task in (("7:1:0", 7), ("7:2:0", 7), ("8:1:0", 8)):
        made.append(
            job_submit(
                workspace_id=workspace.pk,
                idempotency_key=key,
                kind="image",
                prompt=f"retro poster {key}",
                params={"width": 64, "height": 64},
                task_id=task,
            )
        )
    job_event_apply(job_id=made[0].pk, status="succeeded", result=Output(PNG, "image/png", "poster.png"))
    job_event_apply(job_id=made[1].pk, status="running", progress=40)
    job_event_apply(job_id=made[2].pk, status="failed", error={"code": "nsfw", "message": "Refused."})
    for job in made:
        job.refresh_from_db()
    return made


def jobs_url(workspace_id: int) -> str:
    return reverse("generation-job-list", kwargs={"workspace_id": workspace_id})


def job_url(workspace_id: int, job_id: int) -> str:
    return reverse("generation-job-detail", kwargs={"workspace_id": workspace_id, "job_id": job_id})


def file_url(workspace_id: int, artifact_id: int, number: int) -> str:
    kwargs = {"workspace_id": workspace_id, "artifact_id": artifact_id, "number": number}
    return reverse("artifact-version-file", kwargs=kwargs)


# --- jobs ------------------------------------------------------------------------------------------------------


def test_it_lists_the_workspace_jobs_newest_first(workspace, carol, client_for, jobs):
    # when a viewer lists them
    response = client_for(carol).get(jobs_url(workspace.pk))

    # then
    assert response.status_code == 200
    body = response.json()
    assert body["count"] == 3
    assert [j["id"] for j in body["results"]] == [jobs[2].pk, jobs[1].pk, jobs[0].pk]
    assert [(j["status"], j["progress"]) for j in body["results"]] == [
        ("failed", 0),
        ("running", 40),
        ("succeeded", 100),
    ]


@pytest.mark.parametrize(
    ("query", "expected"),
    [("status=running", [1]), ("task=7", [1, 0]), ("task=8&status=failed", [2]), ("task=9", []), ("limit=1", [2])],
)
def test_it_filters_and_pages_jobs(workspace, bob, client_for, jobs, query, expected):
    response = client_for(bob).get(f"{jobs_url(workspace.pk)}?{query}")
    assert response.status_code == 200
    assert [j["id"] for j in response.json()["results"]] == [jobs[i].pk for i in expected]


@pytest.mark.parametrize("query", ["status=done", "task=abc", "task=0", "limit=0", "colour=blue"])
def test_it_refuses_bad_filters(workspace, bob, client_for, jobs, query):
    assert_error(client_for(bob).get(f"{jobs_url(workspace.pk)}?{query}"), 400, "invalid")


def test_it_shows_a_job_with_its_result(workspace, carol, client_for, jobs):
    # when
    body = client_for(carol).get(job_url(workspace.pk, jobs[0].pk)).json()

    # then
    version = jobs[0].artifact_version
    assert body == {
        "id": jobs[0].pk,
        "kind": "image",
        "provider": "procedural",
        "prompt": "retro poster 7:1:0",
        "params": {"width": 64, "height": 64},
        "status": "succeeded",
        "progress": 100,
        "idempotency_key": "7:1:0",
        "task_id": 7,
        "turn_id": None,
        "artifact_id": version.artifact_id,
        "artifact_version_id": version.pk,
        "artifact_version_number": 1,
        "source_artifact_id": None,
        "error": None,
        "created_at": body["created_at"],
        "submitted_at": body["submitted_at"],
        "last_event_at": body["last_event_at"],
        "finished_at": body["finished_at"],
    }
    assert body["finished_at"] and body["submitted_at"]


def test_it_shows_a_failed_job_with_its_error(workspace, carol, client_for, jobs):
    body = client_for(carol).get(job_url(workspace.pk, jobs[2].pk)).json()
    assert (body["status"], body["error"], body["artifact_id"]) == (
        "failed",
        {"code": "nsfw", "message": "Refused."},
        None,
    )


def test_it_hides_jobs_from_outsiders_and_other_workspaces(workspace, dave, client_for, jobs):
    # given dave's own workspace
    elsewhere = workspace_create(user=dave, name="Elsewhere")
    dave_client = client_for(dave)

    # then dave sees nothing of `workspace`, not even through his own workspace's URL
    unknown = dave_client.get(job_url(workspace.pk, 999_999))
    assert_error(dave_client.get(jobs_url(workspace.pk)), 404, "not_found")
    outsider = dave_client.get(job_url(workspace.pk, jobs[0].pk))
    assert_error(outsider, 404, "not_found")
    assert outsider.content == unknown.content
    assert_error(dave_client.get(job_url(elsewhere.pk, jobs[0].pk)), 404, "not_found")
    assert dave_client.get(jobs_url(elsewhere.pk)).json()["count"] == 0


def test_it_lets_an_api_key_read_jobs(workspace, jobs):
    _, raw = issue_api_key(workspace, role=Role.VIEWER)
    response = key_client(raw).get(jobs_url(workspace.pk))
    assert response.status_code == 200 and response.json()["count"] == 3


def test_it_refuses_anonymous_callers(api_client, workspace, jobs):
    # when
    response = api_client.get(jobs_url(workspace.pk))

    # then 401 (no credentials, with a challenge), not 403 (known caller, not allowed)
    assert_error(response, 401, "not_authenticated")
    assert response["WWW-Authenticate"].startswith("Bearer")


# --- artifacts ----------------------------------------------------------------------------------------------------


@pytest.fixture
def poster(workspace, alice):
    return artifact_create(
        workspace_id=workspace.pk,
        kind="image",
        title="Poster 1",
        file=ContentFile(PNG, name="poster.png"),
        media_type="image/png",
        meta={"width": 8, "height": 8},
        author_user=alice,
    )


def test_it_shows_an_artifact_with_its_versions(workspace, carol, client_for, jobs):
    # given the artifact a job made
    artifact = jobs[0].artifact_version.artifact

    # when
    response = client_for(carol).get(
        reverse("artifact-detail", kwargs={"workspace_id": workspace.pk, "artifact_id": artifact.pk})
    )

    # then
    assert response.status_code == 200
    body = response.json()
    assert (body["id"], body["kind"], body["current_version"], body["created_by_task_id"]) == (
        artifact.pk,
        "image",
        1,
        7,
    )
    [version] = body["versions"]
    assert version["number"] == 1 and version["media_type"] == "image/png" and version["has_file"] is True
    assert version["author"] == {"type": "task", "task": 7, "turn": None}
    assert version["meta"]["generation_job"] == jobs[0].pk
    assert version["file_url"] == file_url(workspace.pk, artifact.pk, 1)


def test_it_serves_a_version_file_with_its_media_type(workspace, carol, client_for, poster):
    # when a viewer fetches it as an <img> would
    response = client_for(carol).get(file_url(workspace.pk, poster.pk, 1), HTTP_ACCEPT="image/avif,image/webp,*/*")

    # then
    assert response.status_code == 200
    assert response["Content-Type"] == "image/png"
    assert b"".join(response.streaming_content) == PNG
    assert response["X-Content-Type-Options"] == "nosniff"
    assert "sandbox" in response["Content-Security-Policy"]
    assert response["Content-Disposition"].startswith("inline")


def test_it_sends_a_version_as_a_download_named_after_the_artifact(workspace, carol, client_for, poster):
    from workspace.services.artifacts import artifact_version_add

    # given the poster at a second version, retitled with accents and punctuation
    Artifact.objects.filter(pk=poster.pk).update(title="Affiche rétro : été 2026!")
    second = b"\x89PNG\r\n\x1a\n the second one"
    artifact_version_add(
        workspace_id=workspace.pk,
        artifact_id=poster.pk,
        base_version=1,
        file=ContentFile(second, name="stored-name-xyz.png"),
        media_type="image/png",
    )

    # when a viewer downloads each version
    first = client_for(carol).get(file_url(workspace.pk, poster.pk, 1), {"download": "1"})
    latest = client_for(carol).get(file_url(workspace.pk, poster.pk, 2), {"download": "true"})

    # then each is an attachment named after the artifact and its version, with the version's own bytes
    assert first.status_code == 200
    assert first["Content-Disposition"] == 'attachment; filename="affiche-retro-ete-2026-v1.png"'
    assert b"".join(first.streaming_content) == PNG
    assert latest["Content-Disposition"] == 'attachment; filename="affiche-retro-ete-2026-v2.png"'
    assert b"".join(latest.streaming_content) == second
    assert latest["Content-Type"] == "image/png"
    assert latest["X-Content-Type-Options"] == "nosniff"


def test_it_names_downloads_of_text_and_titles_without_latin_letters(workspace, bob, client_for):
    document = artifact_create(workspace_id=workspace.pk, kind="document", title="Brief", content="# Retro\nwarm")
    arabic = artifact_create(workspace_id=workspace.pk, kind="document", title="ملصق", content="نص")

    response = client_for(bob).get(file_url(workspace.pk, document.pk, 1), {"download": "1"})
    assert response["Content-Disposition"] == 'attachment; filename="brief-v1.md"'
    assert response.content == b"# Retro\nwarm"

    response = client_for(bob).get(file_url(workspace.pk, arabic.pk, 1), {"download": "1"})
    assert response["Content-Disposition"] == f'attachment; filename="artifact-{arabic.pk}-v1.md"'
    assert response.content == "نص".encode()

    # and without the parameter (or with it off) the file stays inline
    for query in ({}, {"download": "0"}):
        response = client_for(bob).get(file_url(workspace.pk, document.pk, 1), query)
        assert response["Content-Disposition"].startswith("inline")


def test_it_refuses_a_download_flag_it_cannot_read(workspace, bob, client_for, poster):
    response = client_for(bob).get(file_url(workspace.pk, poster.pk, 1), {"download": "maybe"})
    error = assert_error(response, 400, "invalid")
    assert "download" in error["details"]["fields"]


def test_it_serves_a_text_version_as_text(workspace, bob, client_for):
    document = artifact_create(workspace_id=workspace.pk, kind="document", title="Brief", content="# Retro\nwarm")
    response = client_for(bob).get(file_url(workspace.pk, document.pk, 1))
    assert response.status_code == 200
    assert response["Content-Type"] == "text/markdown; charset=utf-8"
    assert response.content == b"# Retro\nwarm"


def test_it_answers_json_errors_whatever_the_client_accepts(workspace, bob, client_for, poster):
    response = client_for(bob).get(file_url(workspace.pk, poster.pk, 2), HTTP_ACCEPT="image/png")
    assert_error(response, 404, "version_not_found")


def test_it_hides_artifact_files_from_outsiders(workspace, dave, client_for, poster):
    dave_client = client_for(dave)
    outsider = dave_client.get(file_url(workspace.pk, poster.pk, 1))
    unknown = dave_client.get(file_url(workspace.pk, 999_999, 1))
    assert_error(outsider, 404, "not_found")
    assert outsider.content == unknown.content
    detail = reverse("artifact-detail", kwargs={"workspace_id": workspace.pk, "artifact_id": poster.pk})
    assert_error(dave_client.get(detail), 404, "not_found")


def test_it_hides_deleted_artifacts(workspace, bob, client_for, poster):
    Artifact.objects.filter(pk=poster.pk).update(deleted_at=timezone.now())
    assert_error(client_for(bob).get(file_url(workspace.pk, poster.pk, 1)), 404, "not_found")


def test_it_lets_an_api_key_fetch_a_file(workspace, poster):
    _, raw = issue_api_key(workspace, role=Role.VIEWER)
    response = key_client(raw).get(file_url(workspace.pk, poster.pk, 1))
    assert response.status_code == 200 and b"".join(response.streaming_content) == PNG


# --- admin -----------------------------------------------------------------------------------------------------


@pytest.fixture
def admin_client(client, django_user_model):
    client.force_login(django_user_model.objects.create_superuser("root", "root@example.com", "pw-root"))
    return client


@pytest.mark.parametrize("model", ["generationjob", "webhookdelivery"])
def test_it_lists_and_opens_jobs_and_deliveries_read_only(admin_client, jobs, model):
    from workspace.models import WebhookDelivery

    WebhookDelivery.objects.create(delivery_id="dlv_1", provider="procedural", job=jobs[0])
    row = GenerationJob.objects.first() if model == "generationjob" else WebhookDelivery.objects.first()
    assert admin_client.get(reverse(f"admin:workspace_{model}_changelist")).status_code == 200
    assert admin_client.get(reverse(f"admin:workspace_{model}_change", args=[row.pk])).status_code == 200
    assert admin_client.get(reverse(f"admin:workspace_{model}_add")).status_code == 403
    response = admin_client.post(reverse(f"admin:workspace_{model}_change", args=[row.pk]), {"status": "failed"})
    assert response.status_code == 403
