"""Uploads through REST (issue 15 item 4): a person's own files become artifacts, typed by their content.

POST …/artifacts/upload/ makes version 1; POST …/artifacts/<id>/versions/upload/ the next version on a base.
A refused upload (wrong or unknown content, too large, no right) stores nothing: no artifact, no version, no
file, no event.
"""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from tests.support import media_samples as media
from tests.support.rest import assert_error, issue_api_key, key_client
from workspace.models import Artifact, ArtifactVersion, ChangeNotice, Event, Role
from workspace.services.artifacts import artifact_create
from workspace.services.notices import artifact_seen
from workspace.services.uploads import artifact_upload

pytestmark = pytest.mark.django_db

LIMITS = {"image": 25 * 1024 * 1024, "video": 200 * 1024 * 1024, "3d": 100 * 1024 * 1024, "document": 2 * 1024 * 1024}


def upload_url(workspace) -> str:
    return f"/api/v1/workspaces/{workspace.pk}/artifacts/upload/"


def version_url(workspace, artifact_id: int) -> str:
    return f"/api/v1/workspaces/{workspace.pk}/artifacts/{artifact_id}/versions/upload/"


def a_file(name: str, content: bytes, content_type: str = "application/octet-stream") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, content, content_type=content_type)


def post_file(
    client: APIClient, url: str, name: str, content: bytes, content_type="application/octet-stream", **fields
):
    return client.post(url, {"file": a_file(name, content, content_type), **fields}, format="multipart")


def stored(workspace) -> dict:
    """Everything a refused upload must leave as it was."""
    return {
        "artifacts": Artifact.objects.filter(workspace=workspace).count(),
        "versions": ArtifactVersion.objects.filter(artifact__workspace=workspace).count(),
        "events": Event.objects.filter(workspace=workspace).count(),
    }


def files_under(media_root) -> list:
    return sorted(p for p in media_root.rglob("*") if p.is_file()) if media_root.exists() else []


@pytest.fixture(autouse=True)
def default_limits(settings):
    settings.LOMOTE_UPLOAD_MAX_BYTES = dict(LIMITS)


# --- each kind ---------------------------------------------------------------------------------------------------

KINDS = [
    # (file name, content, declared type, kind, media type, meta that the content told)
    ("poster.png", media.png_bytes(size=(40, 30)), "image/png", "image", "image/png", {"width": 40, "height": 30}),
    ("photo.jpg", media.image_bytes("JPEG"), "image/jpeg", "image", "image/jpeg", {"format": "jpeg"}),
    ("sticker.webp", media.image_bytes("WEBP"), "image/webp", "image", "image/webp", {"format": "webp"}),
    ("loop.gif", media.image_bytes("GIF", frames=3), "image/gif", "image", "image/gif", {"frames": 3}),
    ("clip.mp4", media.mp4_bytes(seconds=5), "video/mp4", "video", "video/mp4", {"duration_seconds": 5.0}),
    ("clip.mov", media.mov_bytes(size=(1280, 720)), "video/quicktime", "video", "video/quicktime", {"width": 1280}),
    ("clip.webm", media.webm_bytes(), "video/webm", "video", "video/webm", {"container": "webm"}),
    ("cube.glb", media.glb_bytes(), "model/gltf-binary", "3d", "model/gltf-binary", {"gltf_version": "2.0"}),
    ("cube.gltf", media.gltf_text(), "model/gltf+json", "3d", "model/gltf+json", {"nodes": 1}),
]


@pytest.mark.parametrize(
    ("name", "content", "declared", "kind", "media_type", "meta"), KINDS, ids=[k[0] for k in KINDS]
)
def test_it_makes_an_artifact_of_the_kind_the_content_says(
    workspace, bob, client_for, media_root, name, content, declared, kind, media_type, meta
):
    # when an editor uploads the file
    response = post_file(client_for(bob), upload_url(workspace), name, content, declared, tags=["mine", "brand"])

    # then it is an artifact of that kind at version 1, its file stored as sent, under a name of ours
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["kind"], body["current_version"], body["title"], body["tags"]) == (
        kind,
        1,
        name.rsplit(".", 1)[0],
        ["mine", "brand"],
    )
    [version] = body["versions"]
    assert version["media_type"] == media_type and version["has_file"] is True
    assert version["author"] == {"type": "user", "id": bob.pk, "username": "bob"}
    assert meta.items() <= version["meta"].items()
    assert version["meta"]["upload"]["filename"] == name and version["meta"]["upload"]["bytes"] == len(content)
    stored_version = ArtifactVersion.objects.get(artifact_id=body["id"])
    with stored_version.file.open("rb") as f:
        assert f.read() == content
    # and the file served back is the same bytes, with the content's type
    served = client_for(bob).get(version["file_url"])
    assert served.status_code == 200 and served["Content-Type"] == media_type
    assert b"".join(served.streaming_content) == content
    # and the log says an artifact was created, by whom
    event = Event.objects.filter(workspace=workspace, kind="artifact.created").last()
    assert event.data["artifact"] == body["id"] and event.data["author"] == {
        "type": "user",
        "id": bob.pk,
        "username": "bob",
    }


def test_it_makes_a_text_upload_a_document_whose_content_is_the_text(workspace, bob, client_for):
    text = "# Brief\n\nTrois affiches rétro pour le café — warm colours.\n"

    # when a markdown file is uploaded, with a title of the person's
    response = post_file(
        client_for(bob), upload_url(workspace), "brief.md", text.encode(), "text/markdown", title="Coffee brief"
    )

    # then it is a document holding that text (no file), in markdown, titled as asked
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["kind"], body["title"]) == ("document", "Coffee brief")
    version = ArtifactVersion.objects.get(artifact_id=body["id"])
    assert (version.content, version.media_type, bool(version.file)) == (text, "text/markdown", False)
    assert client_for(bob).get(body["versions"][0]["file_url"]).content.decode() == text


def test_it_takes_plain_text_and_a_utf8_bom(workspace, bob, client_for):
    response = post_file(client_for(bob), upload_url(workspace), "notes.txt", "\ufeffline one\nligne deux".encode())
    assert response.status_code == 201, response.content
    version = ArtifactVersion.objects.get(artifact_id=response.json()["id"])
    assert (version.content, version.media_type) == ("line one\nligne deux", "text/plain")


def test_it_decides_by_content_when_the_name_claims_nothing(workspace, bob, client_for):
    # a file with no extension and a generic type is still typed by what it is
    response = post_file(client_for(bob), upload_url(workspace), "IMG_0042", media.png_bytes())
    assert response.status_code == 201 and response.json()["kind"] == "image"
    assert ArtifactVersion.objects.get(artifact_id=response.json()["id"]).file.name.endswith("/img_0042.png")


def test_an_editor_api_key_can_upload(workspace):
    _, raw = issue_api_key(workspace, role=Role.EDITOR)
    response = post_file(key_client(raw), upload_url(workspace), "a.png", media.png_bytes())
    assert response.status_code == 201
    assert response.json()["versions"][0]["author"] == {"type": "system"}


# --- refused: wrong or unknown content -------------------------------------------------------------------------


def test_a_png_renamed_mp4_is_refused_and_nothing_is_stored(workspace, bob, client_for, media_root):
    before, files = stored(workspace), files_under(media_root)

    # when a PNG is uploaded as "holiday.mp4" (the browser would declare video/mp4 from the name)
    response = post_file(client_for(bob), upload_url(workspace), "holiday.mp4", media.png_bytes(), "video/mp4")

    # then 400 type_mismatch says what the name claimed and what the content is
    error = assert_error(response, 400, "type_mismatch")
    assert error["details"]["detected"] == {"kind": "image", "media_type": "image/png"}
    assert {c["kind"] for c in error["details"]["claimed"]} == {"video"}
    assert ".mp4" in error["message"] and "image/png" in error["message"]
    # and nothing was stored: no artifact, no version, no file, no event
    assert stored(workspace) == before and files_under(media_root) == files


@pytest.mark.parametrize(
    ("name", "content", "declared", "claimed"),
    [
        ("holiday.png", media.mp4_bytes(), "image/png", "image"),  # a video named as an image
        ("notes.txt", media.png_bytes(), "text/plain", "document"),
        ("scene.glb", b"plain words", "model/gltf-binary", "3d"),
        ("report.pdf", media.png_bytes(), "application/pdf", "other"),  # a name of a format we do not take
        ("cat", media.png_bytes(), "video/mp4", "video"),  # no extension, but the declared type claims a video
    ],
)
def test_a_name_or_declared_type_that_says_another_kind_is_refused(
    workspace, bob, client_for, name, content, declared, claimed
):
    before = stored(workspace)
    response = post_file(client_for(bob), upload_url(workspace), name, content, declared)
    error = assert_error(response, 400, "type_mismatch")
    assert claimed in {c["kind"] for c in error["details"]["claimed"]}
    assert stored(workspace) == before


@pytest.mark.parametrize(
    ("name", "content", "found"),
    [
        ("blob.bin", bytes(range(256)) * 4, "unknown"),
        ("cut.png", media.png_bytes()[:40], ""),  # starts like a PNG, damaged
        ("song.m4a", media.iso_video_bytes(b"M4A "), "audio"),
        ("voice.mp4", media.mp4_bytes(handler=b"soun"), "no_video_track"),
        ("film.mkv", media.webm_bytes(b"matroska"), "matroska"),
        ("old.glb", media.glb_bytes(version=1), "glb"),
        ("nul.txt", b"text with a \x00 inside", "unknown"),
        ("latin1.txt", "café".encode("latin-1") + b" \xff\xfe", "unknown"),
        ("empty.png", b"", None),
    ],
)
def test_content_that_is_none_of_the_kinds_is_refused(workspace, bob, client_for, media_root, name, content, found):
    before, files = stored(workspace), files_under(media_root)
    response = post_file(client_for(bob), upload_url(workspace), name, content)
    if found is None:  # an empty file is refused by the form itself
        assert_error(response, 400, "invalid")
    else:
        error = assert_error(response, 400, "unsupported_type")
        assert error["details"]["found"] == found
    assert stored(workspace) == before and files_under(media_root) == files


def test_a_request_without_a_file_or_with_unknown_fields_is_refused(workspace, bob, client_for):
    client = client_for(bob)
    error = assert_error(client.post(upload_url(workspace), {"title": "x"}, format="multipart"), 400, "invalid")
    assert "file" in error["details"]["fields"]
    response = post_file(client, upload_url(workspace), "a.png", media.png_bytes(), colour="blue")
    assert "colour" in assert_error(response, 400, "invalid")["details"]["fields"]


def test_a_json_body_is_not_an_upload(workspace, bob, client_for):
    response = client_for(bob).post(upload_url(workspace), {"file": "aGVsbG8="}, format="json")
    assert_error(response, 415, "unsupported_media_type")


# --- refused: too large ------------------------------------------------------------------------------------------


def test_a_file_over_its_kinds_limit_is_413_and_nothing_is_stored(workspace, bob, client_for, settings, media_root):
    png = media.png_bytes(size=(64, 64))
    settings.LOMOTE_UPLOAD_MAX_BYTES = {**LIMITS, "image": len(png) - 1}
    before, files = stored(workspace), files_under(media_root)

    response = post_file(client_for(bob), upload_url(workspace), "big.png", png, "image/png")

    error = assert_error(response, 413, "too_large")
    assert (error["details"]["kind"], error["details"]["max_bytes"], error["details"]["bytes"]) == (
        "image",
        len(png) - 1,
        len(png),
    )
    assert stored(workspace) == before and files_under(media_root) == files
    # while a video of the same size is still within its own limit
    video = media.mp4_bytes(mdat=b"\0" * len(png))
    assert post_file(client_for(bob), upload_url(workspace), "clip.mp4", video).status_code == 201


def test_a_text_over_the_document_limit_is_413(workspace, bob, client_for, settings):
    settings.LOMOTE_UPLOAD_MAX_BYTES = {**LIMITS, "document": 100}
    response = post_file(client_for(bob), upload_url(workspace), "long.md", b"# words\n" * 50)
    assert assert_error(response, 413, "too_large")["details"]["kind"] == "document"


def test_an_image_with_too_many_pixels_is_413(workspace, bob, client_for, settings):
    settings.LOMOTE_UPLOAD_MAX_PIXELS = 1000
    response = post_file(client_for(bob), upload_url(workspace), "wide.png", media.png_bytes(size=(100, 100)))
    error = assert_error(response, 413, "too_large")
    assert (error["details"]["width"], error["details"]["max_pixels"]) == (100, 1000)


def test_a_gltf_naming_a_uri_outside_itself_is_refused_and_stores_nothing(workspace, bob, client_for, media_root):
    # given a .gltf whose buffer and image would be fetched from other servers by everyone who opens it
    document = {
        **media.GLTF_DOCUMENT,
        "buffers": [{"uri": "http://169.254.169.254/latest/meta-data/mesh.bin", "byteLength": 12}],
        "images": [{"uri": "https://tracker.example/pixel.png"}],
    }
    before = stored(workspace)

    # when it is uploaded as a new artifact, and as the next version of an existing 3D model
    response = post_file(client_for(bob), upload_url(workspace), "scene.gltf", media.gltf_text(document))
    model = post_file(client_for(bob), upload_url(workspace), "cube.glb", media.glb_bytes()).json()
    after_model = stored(workspace)
    version = post_file(
        client_for(bob), version_url(workspace, model["id"]), "v2.glb", media.glb_bytes(document), base_version=1
    )

    # then both are refused, saying why, and nothing was stored for them
    error = assert_error(response, 400, "unsupported_type")
    assert error["details"]["found"] == "external_uri" and "data: URIs" in error["message"]
    assert assert_error(version, 400, "unsupported_type")["details"]["found"] == "external_uri"
    assert before["artifacts"] + 1 == after_model["artifacts"] and stored(workspace) == after_model
    assert len(files_under(media_root)) == 1


def test_a_decompression_bomb_image_is_refused_for_its_pixels(workspace, bob, client_for, settings):
    # given a tiny PNG whose header announces 20000×20000 pixels — past even Pillow's own bomb guard
    settings.LOMOTE_UPLOAD_MAX_PIXELS = 40_000_000
    before = stored(workspace)

    # when it is uploaded
    response = post_file(client_for(bob), upload_url(workspace), "bomb.png", media.png_bomb_bytes(20_000, 20_000))

    # then it is refused as too many pixels (not as a damaged file), naming the count and the limit
    error = assert_error(response, 413, "too_large")
    assert (error["details"]["width"], error["details"]["height"]) == (20_000, 20_000)
    assert error["details"]["pixels"] == 400_000_000 and error["details"]["max_pixels"] == 40_000_000
    assert "400,000,000 pixels" in error["message"] and "40,000,000" in error["message"]
    assert stored(workspace) == before


def test_a_body_over_every_limit_is_cut_off_while_it_is_read(workspace, bob, client_for, settings, media_root):
    # given every kind takes at most 1000 bytes
    settings.LOMOTE_UPLOAD_MAX_BYTES = dict.fromkeys(LIMITS, 1000)
    before = stored(workspace)

    # when 64 KiB arrive (a Content-Length within the form's allowance: the guard counts the file's bytes)
    response = post_file(client_for(bob), upload_url(workspace), "huge.png", b"\x89PNG" + b"\0" * 65536)

    # then the reading stopped at the limit (so the full size was never learnt): 413, nothing stored
    assert assert_error(response, 413, "too_large")["details"] == {"max_bytes": 1000}
    assert stored(workspace) == before and files_under(media_root) == []


def test_an_announced_length_over_every_limit_is_refused_before_reading(workspace, bob, settings):
    from django.test import Client

    settings.LOMOTE_UPLOAD_MAX_BYTES = dict.fromkeys(LIMITS, 1000)
    client = Client()
    client.force_login(bob)
    body = (
        b'--x\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\n\r\n' + b"\0" * 10 + b"\r\n--x--\r\n"
    )
    response = client.generic(
        "POST",
        upload_url(workspace),
        body,
        content_type="multipart/form-data; boundary=x",
        CONTENT_LENGTH=str(10 * 1024 * 1024),
    )
    assert assert_error(response, 413, "too_large")["details"]["content_length"] == 10 * 1024 * 1024


def test_two_files_in_one_request_are_refused(workspace, bob, client_for):
    response = client_for(bob).post(
        upload_url(workspace),
        {"file": [a_file("a.png", media.png_bytes()), a_file("b.png", media.png_bytes())]},
        format="multipart",
    )
    assert_error(response, 400, "one_file")
    assert not Artifact.objects.filter(workspace=workspace).exists()


# --- who may --------------------------------------------------------------------------------------------------------


def test_a_viewer_cannot_upload(workspace, carol, client_for, media_root):
    before = stored(workspace)
    response = post_file(client_for(carol), upload_url(workspace), "a.png", media.png_bytes())
    assert assert_error(response, 403, "role_required")["details"]["required_role"] == "editor"
    assert stored(workspace) == before and files_under(media_root) == []


def test_a_viewer_api_key_cannot_upload(workspace):
    _, raw = issue_api_key(workspace, role=Role.VIEWER)
    assert_error(post_file(key_client(raw), upload_url(workspace), "a.png", media.png_bytes()), 403, "role_required")


def test_another_workspace_is_404_as_if_it_did_not_exist(workspace, dave, client_for, alice):
    # dave is a member of no workspace of theirs; alice's key belongs to another workspace
    response = post_file(client_for(dave), upload_url(workspace), "a.png", media.png_bytes())
    assert_error(response, 404, "not_found")
    from tests.support.factories import WorkspaceFactory

    other = WorkspaceFactory(name="Elsewhere", created_by=dave)
    _, raw = issue_api_key(workspace, role=Role.EDITOR)
    assert_error(post_file(key_client(raw), upload_url(other), "a.png", media.png_bytes()), 404, "not_found")
    assert not Artifact.objects.exists()


def test_uploads_need_credentials(workspace):
    assert_error(post_file(APIClient(), upload_url(workspace), "a.png", media.png_bytes()), 401, "not_authenticated")


# --- a new version from a file ------------------------------------------------------------------------------------


@pytest.fixture
def photo(workspace, alice):
    return artifact_upload(
        workspace_id=workspace.pk, file=a_file("cat.png", media.png_bytes(colour=(10, 10, 10))), author_user=alice
    )


def test_it_adds_the_next_version_from_a_file_on_its_base(workspace, bob, client_for, photo):
    # given task 7 had seen version 1
    artifact_seen(workspace_id=workspace.pk, artifact_id=photo.pk, task_id=7, version=1)
    new = media.image_bytes("JPEG", colour=(250, 250, 250))

    # when bob uploads a JPEG as version 2 on version 1
    response = post_file(client_for(bob), version_url(workspace, photo.pk), "cat-v2.jpg", new, base_version="1")

    # then the artifact is at version 2, a JPEG by bob, recorded and noticed like any other write
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["current_version"] == 2 and [v["number"] for v in body["versions"]] == [2, 1]
    latest = body["versions"][0]
    assert (latest["media_type"], latest["author"], latest["meta"]["change"]) == (
        "image/jpeg",
        {"type": "user", "id": bob.pk, "username": "bob"},
        "uploaded cat-v2.jpg",
    )
    event = Event.objects.filter(workspace=workspace, kind="artifact.version_added").last()
    assert (event.data["artifact"], event.data["version"], event.data["base_version"]) == (photo.pk, 2, 1)
    [notice] = ChangeNotice.objects.filter(task_id=7)
    assert (notice.from_version, notice.to_version) == (1, 2)


def test_a_stale_base_version_is_409_and_nothing_is_stored(workspace, bob, client_for, photo, media_root):
    client = client_for(bob)
    assert (
        post_file(client, version_url(workspace, photo.pk), "v2.png", media.png_bytes(), base_version="1").status_code
        == 201
    )
    before, files = stored(workspace), files_under(media_root)

    # when someone uploads on version 1 again
    response = post_file(client, version_url(workspace, photo.pk), "late.png", media.png_bytes(), base_version="1")

    # then 409 stale_version with the current version, and nothing new
    error = assert_error(response, 409, "stale_version")
    assert (error["details"]["current_version"], error["details"]["base_version"]) == (2, 1)
    assert stored(workspace) == before and files_under(media_root) == files


def test_a_new_version_keeps_its_artifacts_kind(workspace, bob, client_for, photo):
    response = post_file(
        client_for(bob), version_url(workspace, photo.pk), "clip.mp4", media.mp4_bytes(), base_version="1"
    )
    error = assert_error(response, 400, "type_mismatch")
    assert (error["details"]["artifact_kind"], error["details"]["detected"]["kind"]) == ("image", "video")
    # and the name-versus-content check applies to versions too
    response = post_file(
        client_for(bob), version_url(workspace, photo.pk), "v2.mp4", media.png_bytes(), base_version="1"
    )
    assert_error(response, 400, "type_mismatch")
    assert Artifact.objects.get(pk=photo.pk).current_version == 1


def test_a_documents_new_version_from_a_text_file_replaces_its_text(workspace, bob, client_for, alice):
    doc = artifact_create(workspace_id=workspace.pk, kind="document", title="Brief", content="old", author_user=alice)
    response = post_file(
        client_for(bob), version_url(workspace, doc.pk), "brief.md", b"# New brief\n", base_version="1"
    )
    assert response.status_code == 201
    assert ArtifactVersion.objects.get(artifact=doc, number=2).content == "# New brief\n"


def test_a_flow_takes_no_file_versions(workspace, bob, client_for, alice):
    from workspace.flows.authoring import flow_create

    flow = flow_create(workspace_id=workspace.pk, title="Flow", author_user=alice)
    response = post_file(client_for(bob), version_url(workspace, flow.pk), "graph.json", b"{}", base_version="1")
    assert assert_error(response, 400, "unsupported_type")["details"]["artifact_kind"] == "flow"


def test_version_uploads_check_role_workspace_and_the_base(workspace, carol, dave, bob, client_for, photo):
    png = media.png_bytes()
    assert_error(
        post_file(client_for(carol), version_url(workspace, photo.pk), "a.png", png, base_version="1"),
        403,
        "role_required",
    )
    assert_error(
        post_file(client_for(dave), version_url(workspace, photo.pk), "a.png", png, base_version="1"), 404, "not_found"
    )
    assert_error(
        post_file(client_for(bob), version_url(workspace, 10**9), "a.png", png, base_version="1"), 404, "not_found"
    )
    error = assert_error(post_file(client_for(bob), version_url(workspace, photo.pk), "a.png", png), 400, "invalid")
    assert "base_version" in error["details"]["fields"]
    assert Artifact.objects.get(pk=photo.pk).current_version == 1


def test_a_session_upload_is_guarded_while_the_csrf_check_reads_the_form(workspace, bob, settings, media_root):
    # With a session, DRF's CSRF check reads request.POST, which parses the multipart body during authentication:
    # the guard must already be in place then.
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(bob)
    token = "a" * 32
    client.cookies["csrftoken"] = token
    settings.LOMOTE_UPLOAD_MAX_BYTES = dict.fromkeys(LIMITS, 1000)

    big = client.post(upload_url(workspace), {"file": a_file("big.png", b"\0" * 5000)}, HTTP_X_CSRFTOKEN=token)
    no_token = client.post(upload_url(workspace), {"file": a_file("a.png", media.png_bytes())})
    fine = client.post(upload_url(workspace), {"file": a_file("a.png", media.png_bytes())}, HTTP_X_CSRFTOKEN=token)

    # (the guard's answer: it stopped reading, so it never learnt the file's full size)
    assert assert_error(big, 413, "too_large")["details"] == {"max_bytes": 1000}
    assert no_token.status_code == 403
    assert fine.status_code == 201 and Artifact.objects.filter(workspace=workspace).count() == 1
