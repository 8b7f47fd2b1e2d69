"""Bad input never reaches the database and never becomes a 500: one error shape, nothing written."""

import json

import pytest
from django.conf import settings
from django.urls import reverse
from rest_framework.test import APIClient

from tests.support.rest import assert_error, snapshot

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner(alice, client_for):
    return client_for(alice)


@pytest.fixture
def write_urls(workspace, bob):
    """Every route that reads a JSON body, as (method, url, a valid body)."""
    from workspace.models import Membership

    ws = workspace.pk
    bobs = Membership.objects.get(workspace=workspace, user=bob).pk
    return {
        "workspace create": ("post", reverse("workspace-list"), {"name": "New"}),
        "workspace rename": ("patch", reverse("workspace-detail", kwargs={"workspace_id": ws}), {"name": "New"}),
        "member add": ("post", reverse("member-list", kwargs={"workspace_id": ws}), {"user": "dave"}),
        "member role": (
            "patch",
            reverse("member-detail", kwargs={"workspace_id": ws, "membership_id": bobs}),
            {"role": "viewer"},
        ),
        "api key create": ("post", reverse("api-key-list", kwargs={"workspace_id": ws}), {"name": "CI"}),
    }


WRITE_ROUTES = ["workspace create", "workspace rename", "member add", "member role", "api key create"]


def _send_raw(client: APIClient, method: str, url: str, body: bytes | str, content_type: str = "application/json"):
    return getattr(client, method)(url, data=body, content_type=content_type)


@pytest.mark.parametrize("route", WRITE_ROUTES)
@pytest.mark.parametrize(
    "body",
    [
        pytest.param('{"name": "x"', id="truncated"),
        pytest.param("{'name': 'x'}", id="single-quotes"),
        pytest.param('{"name": NaN}', id="nan"),
        pytest.param(b'{"name": "\xff\xfe"}', id="not-utf8"),
        pytest.param("[" * 100_000 + "]" * 100_000, id="nested-100k-deep"),
        pytest.param("{" + '"a":{' * 50_000 + "}" * 50_001, id="objects-50k-deep"),
    ],
)
def test_it_answers_malformed_json_with_400(owner, write_urls, dave, route, body):
    # given a body that is not valid JSON
    method, url, _ = write_urls[route]
    before = snapshot()

    # when it is sent
    response = _send_raw(owner, method, url, body)

    # then 400 malformed_json, and nothing changed
    assert_error(response, 400, "malformed_json")
    assert snapshot() == before


@pytest.mark.parametrize("route", WRITE_ROUTES)
@pytest.mark.parametrize("body", ['["name", "x"]', '"name"', "42", "null", "true", "[]"])
def test_it_answers_json_that_is_not_an_object_with_400(owner, write_urls, dave, route, body):
    # given valid JSON that is not an object
    method, url, _ = write_urls[route]
    before = snapshot()

    # when it is sent
    response = _send_raw(owner, method, url, body)

    # then 400 invalid, reported as a non-field error, and nothing changed
    error = assert_error(response, 400, "invalid")
    assert "non_field_errors" in error["details"]["fields"]
    assert snapshot() == before


@pytest.mark.parametrize("route", WRITE_ROUTES)
def test_it_refuses_unknown_fields(owner, write_urls, dave, route):
    # given a valid body with extra fields an attacker might hope are honoured
    method, url, body = write_urls[route]
    before = snapshot()

    # when it is sent
    response = getattr(owner, method)(url, {**body, "is_owner": True, "workspace": 1}, format="json")

    # then each unknown field is named, and nothing changed
    error = assert_error(response, 400, "invalid")
    assert set(error["details"]["fields"]) == {"is_owner", "workspace"}
    assert snapshot() == before


@pytest.mark.parametrize(
    ("route", "field", "value"),
    [
        ("workspace create", "name", 123),
        ("workspace create", "name", 1.5),
        ("workspace create", "name", True),
        ("workspace create", "name", None),
        ("workspace create", "name", ["Posters"]),
        ("workspace create", "name", {"text": "Posters"}),
        ("workspace rename", "name", 7),
        ("workspace rename", "name", None),
        ("member add", "user", 42),
        ("member add", "user", ["dave"]),
        ("member add", "role", ["viewer"]),
        ("member role", "role", {"role": "viewer"}),
        ("member role", "role", None),
        ("api key create", "name", False),
        ("api key create", "name", 10),
        ("api key create", "role", 1),
    ],
)
def test_it_refuses_wrong_types(owner, write_urls, dave, route, field, value):
    # given a body whose field has the wrong JSON type
    method, url, body = write_urls[route]
    before = snapshot()

    # when it is sent
    response = getattr(owner, method)(url, {**body, field: value}, format="json")

    # then 400 naming that field, and nothing changed
    error = assert_error(response, 400, "invalid")
    assert set(error["details"]["fields"]) == {field}
    assert snapshot() == before


@pytest.mark.parametrize("route", ["workspace create", "workspace rename", "api key create"])
@pytest.mark.parametrize(
    "name",
    [
        pytest.param("", id="empty"),
        pytest.param("   ", id="blank"),
        pytest.param("x" * 121, id="121-chars"),
        pytest.param("Poster\x00studio", id="nul-char"),
        pytest.param("Poster\ud800studio", id="lone-surrogate"),
    ],
)
def test_it_refuses_bad_names(owner, write_urls, route, name):
    # given a name that is empty, blank, too long, or carries a character PostgreSQL cannot store
    method, url, _ = write_urls[route]
    before = snapshot()

    # when it is sent (escaped, as JSON allows; a lone surrogate has no UTF-8 form of its own)
    response = _send_raw(owner, method, url, json.dumps({"name": name}))

    # then 400 on `name`, and nothing changed
    error = assert_error(response, 400, "invalid")
    assert set(error["details"]["fields"]) == {"name"}
    assert snapshot() == before


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        pytest.param(
            "billing/quotes/", {"operation": "image.generate", "params": {"style": "x\x00"}}, "params", id="nul"
        ),
        pytest.param(
            "billing/quotes/", {"operation": "image.generate", "params": {"s": "\udc00"}}, "params", id="surrogate"
        ),
        pytest.param(
            "billing/quotes/", {"operation": "image.generate", "params": {"k\x00": 1}}, "params", id="nul-key"
        ),
        pytest.param(
            "artifacts/", {"kind": "flow", "title": "F", "graph": {"nodes": {"a\ud800": {}}}}, "graph", id="deep"
        ),
        pytest.param("billing/quotes/", {"operation": "image.generate", "x\x00": 1}, "non_field_errors", id="top-key"),
    ],
)
def test_it_refuses_text_postgresql_cannot_store_in_free_form_json(owner, workspace, path, body, field):
    # given a JSON body whose free-form part (not a text field) holds NUL or an unpaired surrogate, escaped
    from billing.models import Quote
    from workspace.models import Artifact

    before = (snapshot(), Quote.objects.count(), Artifact.objects.count())

    # when it is sent
    response = _send_raw(owner, "post", f"/api/v1/workspaces/{workspace.pk}/{path}", json.dumps(body))

    # then 400 on the field carrying it (never the database's 500), and nothing was written
    error = assert_error(response, 400, "invalid")
    assert set(error["details"]["fields"]) == {field}
    assert (snapshot(), Quote.objects.count(), Artifact.objects.count()) == before


@pytest.mark.parametrize("route", WRITE_ROUTES)
def test_it_refuses_a_missing_required_field(owner, write_urls, route):
    # given an empty object
    method, url, _ = write_urls[route]
    before = snapshot()

    # when it is sent
    response = getattr(owner, method)(url, {}, format="json")

    # then 400, and nothing changed
    assert_error(response, 400, "invalid")
    assert snapshot() == before


def test_it_accepts_a_name_of_exactly_the_maximum_length(owner, workspace):
    # given a 120-character name, the column's size
    name = "x" * 120

    # when the workspace is renamed to it
    response = owner.patch(reverse("workspace-detail", kwargs={"workspace_id": workspace.pk}), {"name": name}, "json")

    # then it is stored whole
    assert response.status_code == 200
    workspace.refresh_from_db()
    assert workspace.name == name


@pytest.mark.parametrize("route", WRITE_ROUTES)
def test_it_refuses_a_body_over_the_limit_with_413(owner, write_urls, route):
    # given a syntactically valid body one byte over the limit
    method, url, body = write_urls[route]
    padding = settings.LOMOTE_MAX_JSON_BODY - len(json.dumps({**body, "pad": ""})) + 1
    raw = json.dumps({**body, "pad": "p" * padding})
    assert len(raw.encode()) == settings.LOMOTE_MAX_JSON_BODY + 1
    before = snapshot()

    # when it is sent
    response = _send_raw(owner, method, url, raw)

    # then 413 payload_too_large, and nothing changed
    assert_error(response, 413, "payload_too_large")
    assert snapshot() == before


@pytest.mark.parametrize("route", ["workspace create", "member role"])
def test_it_keeps_the_413_when_django_has_no_upload_limit(owner, write_urls, settings, route):
    # given Django's own upload limit is lifted, leaving only the JSON parser's
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = None
    method, url, body = write_urls[route]
    raw = json.dumps({**body, "pad": "p" * settings.LOMOTE_MAX_JSON_BODY})
    before = snapshot()

    # when an oversized body is sent
    response = _send_raw(owner, method, url, raw)

    # then the parser still refuses it before parsing, with the same 413
    assert_error(response, 413, "payload_too_large")
    assert snapshot() == before


def test_it_parses_a_body_exactly_at_the_limit(owner, write_urls):
    # given a body of exactly the limit (its only fault: an unknown field)
    method, url, body = write_urls["workspace create"]
    padding = settings.LOMOTE_MAX_JSON_BODY - len(json.dumps({**body, "pad": ""}))
    raw = json.dumps({**body, "pad": "p" * padding})
    assert len(raw.encode()) == settings.LOMOTE_MAX_JSON_BODY

    # when it is sent
    response = _send_raw(owner, method, url, raw)

    # then it was parsed: the answer is about its content, not its size
    error = assert_error(response, 400, "invalid")
    assert set(error["details"]["fields"]) == {"pad"}


@pytest.mark.parametrize("route", WRITE_ROUTES)
@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("text/plain", '{"name": "x"}'),
        ("application/x-www-form-urlencoded", "name=x&user=dave&role=viewer"),
        (
            "multipart/form-data; boundary=XX",
            '--XX\r\nContent-Disposition: form-data; name="name"\r\n\r\nx\r\n--XX--\r\n',
        ),
        ("application/xml", "<name>x</name>"),
    ],
)
def test_it_refuses_a_body_that_is_not_json_with_415(owner, write_urls, route, content_type, body):
    # given a body in a media type we do not parse
    method, url, _ = write_urls[route]
    before = snapshot()

    # when it is sent
    response = _send_raw(owner, method, url, body, content_type)

    # then 415 unsupported_media_type, and nothing changed
    assert_error(response, 415, "unsupported_media_type")
    assert snapshot() == before


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("after=abc", "after"),
        ("after=-1", "after"),
        ("after=1.5", "after"),
        ("after=", "after"),
        ("after=99999999999999999999", "after"),
        ("limit=0", "limit"),
        ("limit=501", "limit"),
        ("limit=-5", "limit"),
        ("limit=ten", "limit"),
        ("since=3", "since"),
    ],
)
def test_it_refuses_bad_event_query_params(owner, workspace, query, field):
    # given the event log of the workspace
    before = snapshot()

    # when it is read with a bad parameter
    response = owner.get(reverse("event-list", kwargs={"workspace_id": workspace.pk}) + "?" + query)

    # then 400 naming the parameter, and nothing changed
    error = assert_error(response, 400, "invalid")
    assert set(error["details"]["fields"]) == {field}
    assert snapshot() == before


def test_it_pages_events_with_good_params(owner, workspace, alice):
    # given a few events beyond the creation one
    from workspace.selectors import workspace_access
    from workspace.services.workspaces import workspace_update

    for name in ("a", "b", "c"):
        workspace_update(access=workspace_access(principal=alice, workspace_id=workspace.pk), name=name)
    url = reverse("event-list", kwargs={"workspace_id": workspace.pk})

    # when they are read two at a time from the start, then from where the first page ended
    first = owner.get(url + "?after=0&limit=2").json()
    second = owner.get(url + f"?after={first['last_seq']}&limit=2").json()

    # then the pages are consecutive, in order, and the last says there is nothing more
    assert [e["seq"] for e in first["events"]] == [1, 2] and first["has_more"] is True
    assert [e["seq"] for e in second["events"]] == [3, 4] and second["has_more"] is False
    assert second["last_seq"] == 4


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/nope/",
        "/api/v2/workspaces/",
        "/api/v1/workspaces/abc/",
        "/api/v1/workspaces/1/members/x/",
        "/api/",
    ],
)
def test_it_answers_unknown_api_urls_with_a_json_404(owner, path):
    # when an unknown API URL is requested
    response = owner.get(path)

    # then the 404 has the error body, not an HTML page
    assert_error(response, 404, "not_found")


@pytest.mark.parametrize(
    ("method", "url_name", "with_workspace"),
    [
        ("put", "workspace-list", False),
        ("delete", "workspace-list", False),
        ("put", "workspace-detail", True),
        ("post", "workspace-detail", True),
        ("put", "member-list", True),
        ("patch", "event-list", True),
        ("post", "event-list", True),
        ("delete", "event-list", True),
        ("patch", "api-key-list", True),
    ],
)
def test_it_answers_unsupported_methods_with_405(owner, workspace, method, url_name, with_workspace):
    # given the database before the request
    kwargs = {"workspace_id": workspace.pk} if with_workspace else {}
    before = snapshot()

    # when a route is called with a method it does not have
    response = getattr(owner, method)(reverse(url_name, kwargs=kwargs), {"name": "x"}, format="json")

    # then 405 with the error body and the allowed methods, and nothing changed
    assert_error(response, 405, "method_not_allowed")
    assert method.upper() not in response["Allow"]
    assert snapshot() == before


@pytest.mark.parametrize(
    ("language", "said"),
    [
        (
            "en",
            (
                "Not found.",
                "Some fields are invalid.",
                "Task not found.",
                "This needs the editor role; you are viewer.",
            ),
        ),
        (
            "fr",
            (
                "Introuvable.",
                "Certains champs ne sont pas valides.",
                "Tâche introuvable.",
                "Il faut le rôle éditeur ; vous êtes lecteur.",
            ),
        ),
        (
            "de",
            (
                "Nicht gefunden.",
                "Einige Felder sind ungültig.",
                "Aufgabe nicht gefunden.",
                "Dafür braucht es die Rolle Bearbeiter; du bist Betrachter.",
            ),
        ),
        (
            "es",
            (
                "No encontrado.",
                "Algunos campos no son válidos.",
                "Tarea no encontrada.",
                "Hace falta el rol de editor; eres lector.",
            ),
        ),
        (
            "pt",
            (
                "Não encontrado.",
                "Alguns campos não são válidos.",
                "Tarefa não encontrada.",
                "É precisa a função de editor; a sua é leitor.",
            ),
        ),
    ],
)
def test_our_error_messages_follow_the_requests_language(
    owner, client_for, carol, workspace, write_urls, language, said
):
    # given people whose browser asks for a language: the owner, and carol, a viewer
    headers = {"HTTP_ACCEPT_LANGUAGE": language}
    viewer = client_for(carol)

    # when an unknown URL, a body with a wrong field type, a task that is not there and a viewer's write are sent
    missing = owner.get("/api/v1/nope/", **headers)
    method, url, body = write_urls["workspace create"]
    refused = getattr(owner, method)(url, {**body, "name": 10}, format="json", **headers)
    no_task = owner.get(reverse("task-detail", kwargs={"workspace_id": workspace.pk, "task_id": 999999}), **headers)
    not_allowed = viewer.post(
        reverse("task-list", kwargs={"workspace_id": workspace.pk}), {"brief": "Posters"}, format="json", **headers
    )

    # then each human message is in that language, and the code and details a client reads are the same in all
    assert assert_error(missing, 404, "not_found")["message"] == said[0]
    error = assert_error(refused, 400, "invalid")
    assert error["message"] == said[1] and set(error["details"]["fields"]) == {"name"}
    assert assert_error(no_task, 404, "not_found")["message"] == said[2]
    error = assert_error(not_allowed, 403, "role_required")
    assert error["message"] == said[3] and error["details"] == {"required_role": "editor", "your_role": "viewer"}
