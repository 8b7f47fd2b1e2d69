"""Uploads through a real daphne (as `make run` serves them): Django, not twisted, reads multipart bodies.

Twisted's request would parse every multipart body itself, in memory, and answer one it cannot parse with a bare
400; lomote.asgi switches that off, so the API's own checks and JSON errors answer.
"""

import json
import urllib.error
import urllib.request

import pytest
from rest_framework.authtoken.models import Token

from tests.support import media_samples as media
from tests.support.realtime import worker_env
from tests.support.servers import Daphne, free_port, wait_for_other_sessions_to_end
from workspace.models import Artifact

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def server(transactional_db):
    daphne = Daphne(worker_env(redis_url=None, ALLOWED_HOSTS="127.0.0.1,localhost"), free_port())
    try:
        daphne.start()
        yield daphne
    finally:
        daphne.stop()
        wait_for_other_sessions_to_end()


def post(url: str, token: str, body: bytes, content_type: str) -> tuple[int, dict, dict]:
    request = urllib.request.Request(  # noqa: S310 - our own local server
        url, data=body, method="POST", headers={"Authorization": f"Token {token}", "Content-Type": content_type}
    )
    try:
        with urllib.request.urlopen(request, timeout=20) as response:  # noqa: S310
            return response.status, dict(response.headers), json.loads(response.read())
    except urllib.error.HTTPError as error:
        raw = error.read()
        return error.code, dict(error.headers), json.loads(raw) if raw else {}


def multipart(name: str, content: bytes, content_type: str, boundary: str = "lomote-boundary") -> bytes:
    return (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
            f"Content-Type: {content_type}\r\n\r\n"
        ).encode()
        + content
        + f"\r\n--{boundary}--\r\n".encode()
    )


def test_daphne_leaves_the_multipart_body_to_the_api(server, workspace, bob):
    token = Token.objects.create(user=bob).key
    url = f"{server.url}/api/v1/workspaces/{workspace.pk}/artifacts/upload/"
    form = "multipart/form-data; boundary=lomote-boundary"

    # a body twisted cannot parse as multipart gets the API's JSON answer, not a bare 400
    status, headers, body = post(url, token, b"--lomote-boundary--\r\n", form)
    assert (status, headers["Content-Type"], body["error"]["code"]) == (400, "application/json", "invalid")

    # a PNG named .mp4 is refused by the content check
    status, _, body = post(url, token, multipart("holiday.mp4", media.png_bytes(), "video/mp4"), form)
    assert (status, body["error"]["code"]) == (400, "type_mismatch")

    # and a real PNG becomes an image artifact
    status, _, body = post(url, token, multipart("poster.png", media.png_bytes(), "image/png"), form)
    assert status == 201 and body["kind"] == "image"
    assert list(Artifact.objects.filter(workspace=workspace).values_list("kind", "title")) == [("image", "poster")]


def test_daphne_refuses_an_announced_300_mb_body_before_reading_it(server, workspace, bob):
    import socket
    import time

    token = Token.objects.create(user=bob).key
    path = f"/api/v1/workspaces/{workspace.pk}/artifacts/upload/"
    announced = 300 * 1024 * 1024
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nAuthorization: Token {token}\r\n"
        f"Content-Type: multipart/form-data; boundary=lomote-boundary\r\nContent-Length: {announced}\r\n\r\n"
    ).encode()

    # when a client announces 300 MB and sends its headers and the first 64 KiB only
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as client:
        client.sendall(head + b"--lomote-boundary\r\n" + b"\0" * 65536)
        answer = b""
        while chunk := client.recv(65536):  # the server answers, then closes: no waiting for the other 300 MB
            answer += chunk
    elapsed = time.monotonic() - started

    # then the answer is 413 with the API's error body, at once, and nothing was stored
    status_line, _, rest = answer.partition(b"\r\n")
    headers, _, body = rest.partition(b"\r\n\r\n")
    assert status_line.startswith(b"HTTP/1.1 413") and b"Content-Type: application/json" in headers
    error = json.loads(body)["error"]
    assert error["code"] == "too_large" and error["details"]["content_length"] == announced
    assert "314,572,800 bytes" in error["message"]
    assert elapsed < 5
    assert not Artifact.objects.filter(workspace=workspace).exists()
