"""REST for Main (issue 5 item 1): POST and GET /api/v1/workspaces/<id>/messages/.

Every caller as its role says; bad bodies are 400 with nothing written; ids from another workspace are the
same 404 as ids that exist nowhere; API keys mark their messages as open-API requests.
"""

from types import SimpleNamespace

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from agents.models import Card, CardKind, InboxMessage, MainMessage, Route, Task, TaskEmbedding
from agents.services.tasks import task_create
from tests.support.rest import assert_error, events_of, issue_api_key, key_client
from tests.support.rest import snapshot as tenancy_snapshot
from tests.support.worlds import built_once, person, shared_workspace
from workspace.models import Artifact, ArtifactKind, Role, Workspace
from workspace.selectors import workspace_access
from workspace.services.workspaces import workspace_create

pytestmark = pytest.mark.django_db

PERSONAS = ("outsider", "viewer", "editor", "owner", "key_viewer", "key_editor", "key_other")
# fmt: off
MATRIX = {
    #       outsider viewer editor owner key_viewer key_editor key_other
    "get":  (404,    200,   200,   200,  200,       200,       404),
    "post": (404,    403,   201,   201,  403,       201,       404),
}
# fmt: on
RESPONSE_FIELDS = {
    "id",
    "text",
    "language",
    "route",
    "task",
    "card",
    "candidates",
    "reply",
    "refusal",
    "route_reason",
    "delivered",
    "inbox_message",
    "api_request",
    "router_model",
    "router_prompt_chars",
    "router_lookups",
    "author",
    "api_key",
    "flow_run",
    "created_at",
}  # fmt: skip


def snapshot() -> dict[str, list[tuple]]:
    """Every persisted fact a Main message could change, on top of the tenancy facts."""
    return {
        **tenancy_snapshot(),
        "tasks": list(Task.objects.order_by("pk").values_list("pk", "workspace_id", "kind", "status", "title")),
        "inbox": list(InboxMessage.objects.order_by("pk").values_list("pk", "task_id", "text")),
        "main": list(MainMessage.objects.order_by("pk").values_list("pk", "workspace_id", "route", "task_id")),
        "cards": list(Card.objects.order_by("pk").values_list("pk", "workspace_id", "kind", "status")),
        "embeddings": list(TaskEmbedding.objects.order_by("pk").values_list("pk", "document")),
    }


def _url(workspace_id: int) -> str:
    return reverse("main-message-list", kwargs={"workspace_id": workspace_id})


def _build_world() -> SimpleNamespace:
    # given the shared workspace with a poster task that made an artifact and asks for a confirmation, and
    # dave's workspace with its own task, artifact and card; keys for both workspaces (turns are recorded, not
    # sent to django-q, as `no_enqueue` does)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("agents.queue._enqueue", lambda turn_id, generation: None)
        return _world_of(*(person(name) for name in ("alice", "bob", "carol", "dave")))


def _world_of(alice, bob, carol, dave) -> SimpleNamespace:
    workspace = shared_workspace(alice, bob, carol)
    access = workspace_access(principal=bob, workspace_id=workspace.pk)
    task = task_create(access=access, title="Retro brand posters", brief="Make a series of 3 retro brand posters")
    artifact = Artifact.objects.create(
        workspace=workspace, kind=ArtifactKind.IMAGE, title="Retro poster 1", created_by_task_id=task.pk
    )
    card = Card.objects.create(workspace=workspace, task=task, kind=CardKind.CONFIRM, title="Orange palette?")
    other = workspace_create(user=dave, name="Dave's place")
    other_task = task_create(
        access=workspace_access(principal=dave, workspace_id=other.pk), title="Dave's", brief="Dave's plan"
    )
    other_artifact = Artifact.objects.create(
        workspace=other, kind=ArtifactKind.IMAGE, title="Dave's poster", created_by_task_id=other_task.pk
    )
    other_card = Card.objects.create(workspace=other, task=other_task, kind=CardKind.CONFIRM, title="Go?")
    _, key_viewer = issue_api_key(workspace, role=Role.VIEWER, name="viewer key")
    _, key_editor = issue_api_key(workspace, role=Role.EDITOR, name="editor key")
    _, key_other = issue_api_key(other, role=Role.EDITOR, name="other key")
    return SimpleNamespace(
        workspace=workspace,
        task=task,
        artifact=artifact,
        card=card,
        other=other,
        foreign={"task": other_task.pk, "artifact": other_artifact.pk, "card": other_card.pk},
        users={"outsider": dave, "viewer": carol, "editor": bob, "owner": alice},
        raw_keys={"key_viewer": key_viewer, "key_editor": key_editor, "key_other": key_other},
    )


# Built once for the module; each test runs in a savepoint rolled back after it, on a deep copy of these objects.
world_built = built_once(_build_world)


@pytest.fixture
def world(world_built, db, no_enqueue):
    return world_built.fresh()


@pytest.fixture
def client_as(world, client_for):
    def make(persona: str) -> APIClient:
        if persona in world.users:
            return client_for(world.users[persona])
        return key_client(world.raw_keys[persona])

    return make


# --- the tenancy matrix -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "persona", "expected"),
    [
        pytest.param(method, persona, status, id=f"{method}-{persona}")
        for method, statuses in MATRIX.items()
        for persona, status in zip(PERSONAS, statuses, strict=True)
    ],
)
def test_it_answers_each_caller_as_its_role_says(world, client_as, client_for, method, persona, expected):
    # given the database before the request
    before = snapshot()
    body = {"text": "Make a series of 3 cat stickers"} if method == "post" else None

    # when the caller lists or posts Main messages
    client = client_as(persona)
    response = (
        client.get(_url(world.workspace.pk))
        if method == "get"
        else client.post(_url(world.workspace.pk), body, format="json")
    )

    # then the status is the matrix's
    assert response.status_code == expected, (response.status_code, response.content[:300])
    if expected == 404:
        # then an outsider gets the very answer the owner gets for a workspace that does not exist
        assert_error(response, 404, "not_found")
        ghost_id = Workspace.objects.order_by("-pk").first().pk + 1000
        owner = client_for(world.users["owner"])
        ghost = owner.get(_url(ghost_id)) if method == "get" else owner.post(_url(ghost_id), body, format="json")
        assert response.json() == ghost.json()
        assert snapshot() == before
    elif expected == 403:
        assert assert_error(response, 403, "role_required")["details"]["required_role"] == Role.EDITOR
        assert snapshot() == before
    elif method == "get":
        assert snapshot() == before
    else:
        # then the message was routed, recorded, and the studio sees it
        message = MainMessage.objects.get(pk=response.json()["id"])
        assert message.route == Route.NEW_TASK and message.task.brief == "Make a series of 3 cat stickers"
        assert message.api_request is persona.startswith("key_")
        assert events_of(world.workspace.pk, "main.message")[-1].data["message"] == message.pk


def test_it_answers_how_the_message_was_routed(world, client_as):
    # when bob posts a request without a target
    response = client_as("editor").post(
        _url(world.workspace.pk), {"text": "Generate an image of a ginger cat"}, format="json"
    )

    # then 201 with the route, the new task, the candidates considered and the message id
    assert response.status_code == 201, response.content
    body = response.json()
    assert set(body) == RESPONSE_FIELDS
    assert (body["route"], body["language"], body["delivered"], body["author"]) == ("lightweight", "en", True, "bob")
    assert Task.objects.get(pk=body["task"]).kind == "lightweight"
    assert body["candidates"][0]["task"] == world.task.pk and body["router_model"] == "lomote-scripted-router-3"
    assert MainMessage.objects.filter(pk=body["id"]).exists()


@pytest.mark.parametrize("target", ["task", "artifact", "card"])
def test_it_delivers_to_an_explicit_target(world, client_as, target):
    # when bob names the task, its artifact or its card
    ids = {"task": world.task.pk, "artifact": world.artifact.pk, "card": world.card.pk}
    response = client_as("editor").post(
        _url(world.workspace.pk), {"text": "Warmer please", target: ids[target]}, format="json"
    )

    # then it reaches the poster task directly, with no model asked
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["route"], body["task"], body["delivered"], body["router_model"]) == (
        "direct",
        world.task.pk,
        True,
        "",
    )
    # (a card answer reaches the task through the cards service, which names the card it answers)
    assert "Warmer please" in InboxMessage.objects.get(pk=body["inbox_message"]).text


def test_it_reports_an_archived_target_in_a_201_and_delivers_nothing(world, client_as):
    # given the poster task, archived
    from django.utils import timezone

    Task.objects.filter(pk=world.task.pk).update(status="done", archived_at=timezone.now())
    inbox_before = InboxMessage.objects.count()

    # when bob replies in it
    response = client_as("editor").post(
        _url(world.workspace.pk), {"text": "One more", "task": world.task.pk}, format="json"
    )

    # then the answer says why nothing ran
    assert response.status_code == 201
    body = response.json()
    assert (body["refusal"], body["delivered"], body["inbox_message"]) == ("task_archived", False, None)
    assert "archived" in body["reply"]
    assert InboxMessage.objects.count() == inbox_before


@pytest.mark.parametrize("target", ["task", "artifact", "card"])
def test_it_hides_another_workspaces_target_behind_the_same_404(world, client_as, target):
    # given an id from dave's workspace and one that exists nowhere
    before = snapshot()
    owner = client_as("owner")

    # when the owner of the shared workspace names each
    foreign = owner.post(_url(world.workspace.pk), {"text": "hi", target: world.foreign[target]}, format="json")
    missing = owner.post(_url(world.workspace.pk), {"text": "hi", target: 10**12}, format="json")

    # then both are the same 404, and nothing was written anywhere
    assert_error(foreign, 404, "not_found")
    assert foreign.json() == missing.json()
    assert snapshot() == before


@pytest.mark.parametrize(
    "body",
    [
        pytest.param({}, id="no-text"),
        pytest.param({"text": ""}, id="empty-text"),
        pytest.param({"text": "   "}, id="blank-text"),
        pytest.param({"text": 123}, id="text-number"),
        pytest.param({"text": ["a"]}, id="text-list"),
        pytest.param({"text": None}, id="text-null"),
        pytest.param({"text": "x" * 20_001}, id="text-too-long"),
        pytest.param({"text": "hi", "route": "follow_up"}, id="unknown-field"),
        pytest.param({"text": "hi", "task": "12"}, id="task-string"),
        pytest.param({"text": "hi", "task": 1.5}, id="task-float"),
        pytest.param({"text": "hi", "task": True}, id="task-bool"),
        pytest.param({"text": "hi", "task": 0}, id="task-zero"),
        pytest.param({"text": "hi", "task": -3}, id="task-negative"),
        pytest.param({"text": "hi", "artifact": 2**63}, id="artifact-huge"),
        pytest.param({"text": "hi", "card": {"id": 1}}, id="card-object"),
        pytest.param({"text": "hi", "task": 1, "card": 1}, id="two-targets"),
        pytest.param(["text"], id="not-an-object"),
    ],
)
def test_it_refuses_a_bad_body_with_400(world, client_as, body):
    # given the database before the request
    before = snapshot()

    # when bob sends the bad body
    response = client_as("editor").post(_url(world.workspace.pk), body, format="json")

    # then 400 with the error body, and nothing written
    assert_error(response, 400, "invalid")
    assert snapshot() == before


def test_it_refuses_malformed_json_and_a_huge_body(world, client_as, settings):
    # given the database before the requests
    before = snapshot()
    client = client_as("editor")

    # when the body is not JSON, then 400; when it is bigger than the body limit, then 413
    broken = client.post(_url(world.workspace.pk), data="{text", content_type="application/json")
    assert_error(broken, 400, "malformed_json")
    huge = client.post(
        _url(world.workspace.pk),
        data='{"text": "' + "x" * (settings.LOMOTE_MAX_JSON_BODY + 10) + '"}',
        content_type="application/json",
    )
    assert_error(huge, 413, "payload_too_large")
    assert snapshot() == before


def test_it_lists_main_messages_newest_first_in_pages(world, client_as):
    # given three messages from bob
    client = client_as("editor")
    ids = [
        client.post(_url(world.workspace.pk), {"text": text}, format="json").json()["id"]
        for text in ("What can you do?", "Generate an image of a ginger cat", "Make 3 cat stickers")
    ]

    # when carol, a viewer, lists them two at a time
    page = client_as("viewer").get(_url(world.workspace.pk) + "?limit=2")

    # then she sees the newest two, with the count and a next page
    assert page.status_code == 200
    body = page.json()
    assert body["count"] == 3 and body["next"]
    assert [m["id"] for m in body["results"]] == ids[::-1][:2]
    assert_error(client_as("viewer").get(_url(world.workspace.pk) + "?limit=0"), 400, "invalid")


def test_it_marks_api_key_messages_as_api_requests(world):
    # given bob's API key (editor)
    client = key_client(world.raw_keys["key_editor"])

    # when a request comes through it
    body = client.post(_url(world.workspace.pk), {"text": "Make a series of 3 cat stickers"}, format="json").json()

    # then the message and its inbox message say so, and there is no author: the key, by its name, sent it
    assert (body["api_request"], body["author"]) == (True, None)
    assert body["api_key"]["name"] == "editor key"
    assert InboxMessage.objects.get(pk=body["inbox_message"]).source == "api_key"

    # and the list the studio reads names the key too, never a person
    listed = client.get(_url(world.workspace.pk)).json()["results"]
    assert [(m["id"], m["author"], m["api_key"]["name"]) for m in listed] == [(body["id"], None, "editor key")]


def test_it_refuses_unauthenticated_requests_with_401(world):
    # given no credentials; when both methods are called, then 401 and nothing changes
    before = snapshot()
    assert_error(APIClient().get(_url(world.workspace.pk)), 401, "not_authenticated")
    assert_error(APIClient().post(_url(world.workspace.pk), {"text": "hi"}, format="json"), 401, "not_authenticated")
    assert snapshot() == before
