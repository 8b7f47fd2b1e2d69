"""REST for tasks (issue 3, item 7): list, create, detail, execution log, inbox, cancel / pause / resume.

The tenancy matrix covers every endpoint × every kind of caller; the flows check what was persisted and
which events a person would see; the log's shape is checked on rows written straight to the database.
"""

import json
from dataclasses import dataclass
from types import SimpleNamespace

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from agents.models import (
    ChecklistStatus,
    InboxMessage,
    InboxStatus,
    ModelLease,
    ProviderKind,
    Step,
    Task,
    TaskKind,
    TaskStatus,
    ToolCall,
    ToolCallStatus,
    Turn,
    TurnStatus,
)
from agents.services.inbox import message_post
from agents.services.tasks import task_cancel, task_create, task_pause
from tests.support.factories import (
    ChecklistItemFactory,
    InboxMessageFactory,
    ModelLeaseFactory,
    ModelProfileFactory,
    ProviderSecretFactory,
    StepFactory,
    ToolCallFactory,
    TurnFactory,
)
from tests.support.rest import (
    assert_error,
    assert_role_answer,
    call,
    events_of,
    issue_api_key,
    key_client,
)
from tests.support.rest import snapshot as tenancy_snapshot
from tests.support.worlds import (  # noqa: F401 — world_alice… are the fixtures alice…, the world's personas
    built_once,
    person,
    shared_workspace,
    world_alice,
    world_bob,
    world_carol,
    world_dave,
)
from workspace.models import Role, Workspace
from workspace.selectors import workspace_access
from workspace.services.workspaces import workspace_create

pytestmark = pytest.mark.django_db

PERSONAS = ("outsider", "viewer", "editor", "owner", "key_viewer", "key_editor", "key_other")


# --- helpers ----------------------------------------------------------------------------------------------


def _access(user, workspace):
    return workspace_access(principal=user, workspace_id=workspace.pk)


def _new_task(user, workspace, *, title="Retro posters", brief="Make 3 retro posters", **kwargs) -> Task:
    """A task created through the service, as the API would: first message pending, turn 1 queued."""
    return task_create(access=_access(user, workspace), title=title, brief=brief, **kwargs)


def snapshot() -> dict[str, list[tuple]]:
    """Every persisted fact a task request could change, on top of the tenancy facts."""
    return {
        **tenancy_snapshot(),
        "tasks": list(
            Task.objects.order_by("pk").values_list("pk", "workspace_id", "kind", "status", "stop_reason", "title")
        ),
        "inbox": list(
            InboxMessage.objects.order_by("pk").values_list("pk", "task_id", "status", "text", "replaces_id")
        ),
        "turns": list(Turn.objects.order_by("pk").values_list("pk", "task_id", "status", "generation")),
        "steps": list(Step.objects.order_by("pk").values_list("pk", "turn_id", "index")),
        "tool_calls": list(ToolCall.objects.order_by("pk").values_list("pk", "call_id", "status")),
    }


def _add_step(turn: Turn, index: int, *, calls: int = 1, **fields) -> Step:
    """Step `index` of the turn with `calls` finished update_checklist calls."""
    step = StepFactory(turn=turn, index=index, **fields)
    for i in range(calls):
        ToolCallFactory(step=step, done=True, provider_call_id=f"call_{index}_{i}", input={"items": [f"item {i}"]})
    return step


def _finish(turn: Turn, status: str = TurnStatus.COMPLETED) -> None:
    Turn.objects.filter(pk=turn.pk).update(status=status, finished_at=timezone.now())


def _log_url(workspace, task, **query) -> str:
    url = reverse("task-log", kwargs={"workspace_id": workspace.pk, "task_id": task.pk})
    return url + ("?" + "&".join(f"{k}={v}" for k, v in query.items()) if query else "")


# --- the tenancy matrix -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Endpoint:
    name: str
    method: str
    url_name: str
    target: str | None = None  # "task", "paused" (a paused task) or "message"; None for the task list
    body: dict | None = None
    event: str | None = None  # the event kind an allowed write appends

    def url(self, world, *, workspace_id=None, task_id=None, message_id=None) -> str:
        kwargs = {"workspace_id": world.workspace.pk if workspace_id is None else workspace_id}
        if self.target in ("task", "message"):
            kwargs["task_id"] = world.task.pk if task_id is None else task_id
        elif self.target == "paused":
            kwargs["task_id"] = world.paused.pk if task_id is None else task_id
        if self.target == "message":
            kwargs["message_id"] = world.message.pk if message_id is None else message_id
        return reverse(self.url_name, kwargs=kwargs)


TASKS_GET = Endpoint("tasks GET", "get", "task-list")
TASKS_POST = Endpoint(
    "tasks POST", "post", "task-list", body={"title": "Cat video", "brief": "Animate the cat"}, event="task.created"
)
TASK_GET = Endpoint("task GET", "get", "task-detail", target="task")
LOG_GET = Endpoint("log GET", "get", "task-log", target="task")
CONTEXT_GET = Endpoint("context GET", "get", "task-context", target="task")
MESSAGES_GET = Endpoint("messages GET", "get", "task-message-list", target="task")
MESSAGES_POST = Endpoint(
    "messages POST", "post", "task-message-list", target="task", body={"text": "Warmer"}, event="inbox.posted"
)
WITHDRAW = Endpoint("withdraw POST", "post", "task-message-withdraw", target="message", event="inbox.withdrawn")
REPLACE_PUT = Endpoint(
    "replace PUT", "put", "task-message-replace", target="message", body={"text": "Cooler"}, event="inbox.replaced"
)
REPLACE_POST = Endpoint(
    "replace POST", "post", "task-message-replace", target="message", body={"text": "Cooler"}, event="inbox.replaced"
)
CANCEL = Endpoint("cancel POST", "post", "task-cancel", target="task", event="task.status")
PAUSE = Endpoint("pause POST", "post", "task-pause", target="task", event="task.status")
RESUME = Endpoint("resume POST", "post", "task-resume", target="paused", event="task.status")

# fmt: off
# Expected status per caller. 403 always means `role_required` (editor); 404 always means "as if it did not exist".
MATRIX = [
    #  endpoint      outsider viewer editor owner key_viewer key_editor key_other
    (TASKS_GET,      404,     200,   200,   200,  200,       200,       404),
    (TASKS_POST,     404,     403,   201,   201,  403,       201,       404),
    (TASK_GET,       404,     200,   200,   200,  200,       200,       404),
    (LOG_GET,        404,     200,   200,   200,  200,       200,       404),
    (CONTEXT_GET,    404,     200,   200,   200,  200,       200,       404),
    (MESSAGES_GET,   404,     200,   200,   200,  200,       200,       404),
    (MESSAGES_POST,  404,     403,   201,   201,  403,       201,       404),
    (WITHDRAW,       404,     403,   200,   200,  403,       200,       404),
    (REPLACE_PUT,    404,     403,   201,   201,  403,       201,       404),
    (REPLACE_POST,   404,     403,   201,   201,  403,       201,       404),
    (CANCEL,         404,     403,   200,   200,  403,       200,       404),
    (PAUSE,          404,     403,   200,   200,  403,       200,       404),
    (RESUME,         404,     403,   200,   200,  403,       200,       404),
]
# fmt: on

ENDPOINTS = [row[0] for row in MATRIX]
WRITES = [e for e in ENDPOINTS if e.method != "get"]
CASES = [
    pytest.param(endpoint, persona, status, id=f"{endpoint.name}-{persona}")
    for endpoint, *statuses in MATRIX
    for persona, status in zip(PERSONAS, statuses, strict=True)
]


def _build_world() -> SimpleNamespace:
    # (turns are recorded, not sent to django-q, as `no_enqueue` does)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("agents.queue._enqueue", lambda turn_id, generation: None)
        return _world_of(*(person(name) for name in ("alice", "bob", "carol", "dave")))


def _world_of(alice, bob, carol, dave) -> SimpleNamespace:
    # given the shared workspace (alice owner, bob editor, carol viewer) with an active task whose brief is
    # still unread, a paused task, dave's own workspace with a task of its own, and keys for both workspaces
    workspace = shared_workspace(alice, bob, carol)
    task = _new_task(bob, workspace)
    paused = _new_task(bob, workspace, title="Storyboard", brief="Six shots")
    task_pause(access=_access(bob, workspace), task_id=paused.pk)
    _, key_viewer = issue_api_key(workspace, role=Role.VIEWER, name="viewer key")
    _, key_editor = issue_api_key(workspace, role=Role.EDITOR, name="editor key")
    other = workspace_create(user=dave, name="Dave's place")
    _, key_other = issue_api_key(other, role=Role.EDITOR, name="other key")
    other_task = _new_task(dave, other, title="Dave's task", brief="Dave's brief")
    return SimpleNamespace(
        workspace=workspace,
        task=task,
        paused=paused,
        message=task.inbox.get(),
        other=other,
        other_task=other_task,
        other_message=other_task.inbox.get(),
        users={"outsider": dave, "viewer": carol, "editor": bob, "owner": alice},
        raw_keys={"key_viewer": key_viewer, "key_editor": key_editor, "key_other": key_other},
    )


# Built once for the module; each test runs in a savepoint rolled back after it, on a deep copy of these objects.
world_built = built_once(_build_world)


@pytest.fixture
def world(world_built, db, no_enqueue):
    return world_built.fresh()


# The personas are the world's (the conftest's own would be a second alice); `workspace` is a new one of theirs,
# with no task yet, for the tests that start from an empty workspace.
@pytest.fixture
def workspace(world):
    alice, bob, carol = (world.users[role] for role in ("owner", "editor", "viewer"))
    return shared_workspace(alice, bob, carol)


@pytest.fixture
def client_as(world, client_for):
    def make(persona: str) -> APIClient:
        if persona in world.users:
            return client_for(world.users[persona])
        return key_client(world.raw_keys[persona])

    return make


def _effect_of(endpoint: Endpoint, world) -> bool:
    """The persisted effect of an allowed write, so "allowed" means "done", not just "2xx"."""
    message = InboxMessage.objects.get(pk=world.message.pk)
    if endpoint is TASKS_POST:
        return Task.objects.filter(workspace=world.workspace, title="Cat video", brief="Animate the cat").exists()
    if endpoint is MESSAGES_POST:
        return world.task.inbox.filter(text="Warmer", status=InboxStatus.PENDING).exists()
    if endpoint is WITHDRAW:
        return message.status == InboxStatus.WITHDRAWN
    if endpoint in (REPLACE_PUT, REPLACE_POST):
        return message.status == InboxStatus.REPLACED and message.replaced_by.text == "Cooler"
    if endpoint is CANCEL:
        return Task.objects.get(pk=world.task.pk).status == TaskStatus.CANCELLED
    if endpoint is PAUSE:
        return Task.objects.get(pk=world.task.pk).status == TaskStatus.PAUSED
    if endpoint is RESUME:
        return Task.objects.get(pk=world.paused.pk).status == TaskStatus.ACTIVE
    raise AssertionError(f"no effect listed for {endpoint.name}")


@pytest.mark.parametrize(("endpoint", "persona", "expected"), CASES)
def test_it_answers_each_caller_as_its_role_says(world, client_as, client_for, endpoint, persona, expected):
    # given the database before the request
    before = snapshot()
    seq_before = Workspace.objects.get(pk=world.workspace.pk).last_event_seq

    # when the caller hits the endpoint
    response = call(client_as(persona), endpoint.method, endpoint.url(world), endpoint.body)

    # then the answer is the one the matrix gives: nothing learnt or changed when refused, the write done when allowed
    assert_role_answer(
        world=world,
        endpoint=endpoint,
        response=response,
        expected=expected,
        client_for=client_for,
        state=snapshot,
        before=before,
        seq_before=seq_before,
        effect=lambda: _effect_of(endpoint, world),
    )


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=lambda e: e.name)
def test_it_refuses_unauthenticated_requests_with_401(world, endpoint):
    # given no credentials at all
    before = snapshot()

    # when the endpoint is called
    response = call(APIClient(), endpoint.method, endpoint.url(world), endpoint.body)

    # then 401 with the error body, and nothing changed
    assert_error(response, 401, "not_authenticated")
    assert snapshot() == before


@pytest.mark.parametrize("endpoint", [e for e in ENDPOINTS if e.target], ids=lambda e: e.name)
def test_it_hides_another_workspaces_task_behind_the_same_404(world, client_as, endpoint):
    # given a task id that exists, but in dave's workspace, and one that exists nowhere
    before = snapshot()
    owner = client_as("owner")

    # when the owner of the shared workspace asks for both through the shared workspace's URL
    foreign = call(owner, endpoint.method, endpoint.url(world, task_id=world.other_task.pk), endpoint.body)
    missing = call(owner, endpoint.method, endpoint.url(world, task_id=10**9), endpoint.body)

    # then both answers are the same 404, and dave's rows are untouched
    assert_error(foreign, 404, "not_found")
    assert foreign.json() == missing.json()
    assert snapshot() == before


@pytest.mark.parametrize("endpoint", [WITHDRAW, REPLACE_PUT, REPLACE_POST], ids=lambda e: e.name)
def test_it_hides_messages_of_other_tasks_behind_the_same_404(world, client_as, endpoint):
    # given a message of the paused task (same workspace), one of dave's task, and an id that exists nowhere
    sibling = world.paused.inbox.get()
    before = snapshot()
    owner = client_as("owner")

    # when the owner addresses each through the first task's URL
    answers = [
        call(owner, endpoint.method, endpoint.url(world, message_id=message_id), endpoint.body)
        for message_id in (sibling.pk, world.other_message.pk, 10**9)
    ]

    # then each is the same 404 and no message changed
    for answer in answers:
        assert_error(answer, 404, "not_found")
    assert answers[0].json() == answers[1].json() == answers[2].json()
    assert snapshot() == before


# --- creating and listing tasks ---------------------------------------------------------------------------


def test_it_creates_a_task_whose_brief_is_the_first_message_and_queues_a_turn(
    workspace, bob, client_for, no_enqueue, django_capture_on_commit_callbacks
):
    # given bob, an editor
    body = {"title": "Retro posters", "brief": "Make 3 retro posters, warm colours", "language": "fr-CA"}

    # when he creates a task
    with django_capture_on_commit_callbacks(execute=True):
        response = client_for(bob).post(reverse("task-list", args=[workspace.pk]), body, format="json")

    # then the task is stored with his brief, as a persistent task in his language
    assert response.status_code == 201, response.content
    task = Task.objects.get(pk=response.json()["id"])
    assert (task.title, task.brief, task.language, task.kind) == (
        "Retro posters",
        "Make 3 retro posters, warm colours",
        "fr-CA",
        TaskKind.PERSISTENT,
    )
    assert (task.workspace, task.created_by, task.status) == (workspace, bob, TaskStatus.ACTIVE)
    # then the brief is the first, unread inbox message and turn 1 is queued with the offline model, once
    message = task.inbox.get()
    assert (message.text, message.status, message.author, message.source) == (body["brief"], "pending", bob, "person")
    turn = task.turns.get()
    assert (turn.number, turn.status, turn.trigger) == (1, TurnStatus.QUEUED, "created")
    assert turn.model_lease.provider == ProviderKind.SCRIPTED
    assert no_enqueue == [(turn.pk, 1)]
    # then the answer is the detail of what was stored
    detail = response.json()
    assert detail["status"] == "active" and detail["brief"] == body["brief"]
    assert detail["active_turn"]["id"] == turn.pk and detail["active_turn"]["status"] == "queued"
    assert detail["counts"] == {"turns": 1, "steps": 0, "tool_calls": 0, "pending_messages": 1}
    # then the creation and the status change are in the event log
    created = events_of(workspace.pk, "task.created")
    assert [e.data["task"] for e in created] == [task.pk]
    assert created[0].data["by"] == {"type": "user", "id": bob.pk, "username": "bob"}
    assert [e.data["status"] for e in events_of(workspace.pk, "task.status")] == ["active"]


def test_it_creates_a_lightweight_task_through_an_api_key(world):
    # given an editor API key
    client = key_client(world.raw_keys["key_editor"])

    # when it creates a lightweight task
    body = {"title": "One cat picture", "brief": "A cat", "kind": "lightweight"}
    response = client.post(reverse("task-list", args=[world.workspace.pk]), body, format="json")

    # then the task is lightweight, in English by default, and its first message comes from the key
    assert response.status_code == 201, response.content
    task = Task.objects.get(pk=response.json()["id"])
    assert (task.kind, task.language, task.created_by) == (TaskKind.LIGHTWEIGHT, "en", None)
    assert task.inbox.get().source == "api_key"
    assert events_of(world.workspace.pk, "task.created")[-1].data["by"]["type"] == "api_key"


def test_it_lists_the_workspaces_tasks_newest_first_with_filters(world, client_as):
    # given, besides the active and the paused task, a lightweight one; dave's task is elsewhere
    light = _new_task(world.users["editor"], world.workspace, title="Quick", brief="A cat", kind=TaskKind.LIGHTWEIGHT)
    client = client_as("viewer")
    url = reverse("task-list", args=[world.workspace.pk])

    # when the viewer lists them, then filters by kind and by status
    listed = client.get(url).json()
    persistent = client.get(url + "?kind=persistent").json()
    lightweight = client.get(url + "?kind=lightweight").json()
    everything = client.get(url + "?kind=all").json()
    paused = client.get(url + "?status=paused").json()

    # then the list holds this workspace's persistent tasks, most recently changed first: a quick (lightweight) task
    # is listed only when asked for
    assert [t["id"] for t in listed["results"]] == [world.paused.pk, world.task.pk]
    assert listed["count"] == 2
    assert [t["id"] for t in persistent["results"]] == [world.paused.pk, world.task.pk]
    assert [t["id"] for t in lightweight["results"]] == [light.pk]
    assert [t["id"] for t in everything["results"]] == [light.pk, world.paused.pk, world.task.pk]
    assert [t["id"] for t in paused["results"]] == [world.paused.pk]
    assert set(everything["results"][0]) == {
        "id",
        "title",
        "kind",
        "status",
        "stop_reason",
        "waiting_for",
        "autonomy",
        "permissions",
        "language",
        "summary",
        "archived_at",
        "created_at",
        "updated_at",
    }


def test_it_pages_the_task_list(world, client_as):
    # given three tasks in the workspace
    _new_task(world.users["editor"], world.workspace, title="Third", brief="x")
    url = reverse("task-list", args=[world.workspace.pk])

    # when the second page of one task is asked for
    page = client_as("editor").get(url + "?limit=1&offset=1").json()

    # then it holds the second newest task and says how many there are
    assert page["count"] == 3
    assert [t["id"] for t in page["results"]] == [world.paused.pk]
    assert page["next"] and page["previous"]


@pytest.mark.parametrize(
    ("query", "field"),
    [("status=sleeping", "status"), ("kind=epic", "kind"), ("limit=0", "limit"), ("offset=-1", "offset"), ("x=1", "x")],
)
def test_it_refuses_bad_list_queries(world, client_as, query, field):
    # when the list is asked with a bad parameter
    response = client_as("editor").get(reverse("task-list", args=[world.workspace.pk]) + "?" + query)

    # then 400 names the field
    error = assert_error(response, 400, "invalid")
    assert field in error["details"]["fields"]


# --- detail -----------------------------------------------------------------------------------------------


def test_it_shows_the_detail_with_checklist_active_turn_and_counts(world, client_as):
    # given a checklist, and a running turn 1 with two steps and three tool calls; the brief was consumed
    task, turn = world.task, world.task.turns.get()
    ChecklistItemFactory(task=task, position=2, title="Render", status=ChecklistStatus.PENDING)
    ChecklistItemFactory(
        task=task, position=1, title="Plan", status=ChecklistStatus.DONE, evidence="3 items", artifacts=[7]
    )
    Turn.objects.filter(pk=turn.pk).update(status=TurnStatus.RUNNING, started_at=timezone.now())
    step = _add_step(turn, 0, calls=2)
    _add_step(turn, 1, calls=1)
    InboxMessage.objects.filter(pk=world.message.pk).update(status=InboxStatus.CONSUMED, consumed_by_step=step)
    message_post(access=_access(world.users["editor"], world.workspace), task_id=task.pk, text="Warmer")

    # when a viewer reads the task
    response = client_as("viewer").get(reverse("task-detail", args=[world.workspace.pk, task.pk]))

    # then the detail has its state, its checklist in order, the active turn and the counts
    assert response.status_code == 200
    body = response.json()
    assert (body["id"], body["status"], body["stop_reason"], body["waiting_for"]) == (task.pk, "active", "", {})
    assert (body["language"], body["kind"], body["summary"], body["brief"]) == ("en", "persistent", "", task.brief)
    assert [(i["position"], i["title"], i["status"]) for i in body["checklist"]] == [
        (1, "Plan", "done"),
        (2, "Render", "pending"),
    ]
    assert body["checklist"][0]["evidence"] == "3 items" and body["checklist"][0]["artifacts"] == [7]
    assert body["active_turn"]["id"] == turn.pk
    assert (body["active_turn"]["status"], body["active_turn"]["step_count"]) == ("running", 2)
    assert body["counts"] == {"turns": 1, "steps": 2, "tool_calls": 3, "pending_messages": 1}


def test_it_shows_no_active_turn_for_a_paused_task(world, client_as):
    # when the paused task is read
    body = client_as("viewer").get(reverse("task-detail", args=[world.workspace.pk, world.paused.pk])).json()

    # then it has no active turn and says why it stopped
    assert (body["status"], body["stop_reason"], body["active_turn"]) == ("paused", "paused_by_person", None)
    assert body["counts"]["turns"] == 1 and body["counts"]["pending_messages"] == 1


# --- the execution log ------------------------------------------------------------------------------------


@pytest.fixture
def secret_lease(world):
    """Turn 1 of the task, leased to an OpenAI-compatible model whose key is stored encrypted."""
    secret = ProviderSecretFactory(workspace=world.workspace, name="openai", ciphertext=b"CIPHERTEXT-sk-live-TOPSECRET")
    turn = world.task.turns.get()
    ModelLease.objects.filter(turn=turn).delete()
    return ModelLeaseFactory(
        turn=turn,
        provider=ProviderKind.OPENAI_COMPAT,
        model="gpt-4.1-mini",
        base_url="https://llm.example.com/v1",
        params={"temperature": 0.2},
        secret=secret,
    )


def test_it_returns_the_log_as_turns_steps_and_tool_calls(world, client_as, secret_lease):
    # given turn 1: step 0 consumed the brief and proposed two calls, step 1 one call; then turn 2 with no step
    turn1 = world.task.turns.get()
    step0 = _add_step(
        turn1,
        0,
        calls=2,
        text="Planning.",
        decision={"tool_calls": [{"name": "update_checklist"}]},
        prompt_tokens=1200,
        cached_prompt_tokens=1024,
        completion_tokens=80,
    )
    _add_step(turn1, 1, calls=1, model="gpt-4.1-mini-2025")
    ToolCall.objects.filter(step=step0, index=1).update(
        status=ToolCallStatus.UNKNOWN, idempotent=False, result=None, error={"code": "outcome_unknown"}
    )
    InboxMessage.objects.filter(pk=world.message.pk).update(
        status=InboxStatus.CONSUMED, consumed_by_step=step0, consumed_at=timezone.now()
    )
    _finish(turn1)
    turn2 = TurnFactory(task=world.task, trigger="message")

    # when a viewer reads the log
    response = client_as("viewer").get(_log_url(world.workspace, world.task))

    # then turns come newest first, each with its lease, steps in order and tool calls in order
    assert response.status_code == 200
    page = response.json()
    assert page["count"] == 2
    newest, oldest = page["results"]
    assert (newest["id"], newest["number"], newest["steps"], newest["model_lease"]) == (turn2.pk, 2, [], None)
    assert (oldest["id"], oldest["status"], oldest["generation"], oldest["trigger"]) == (
        turn1.pk,
        "completed",
        1,
        "created",
    )
    assert oldest["model_lease"] == {
        "provider": "openai_compat",
        "model": "gpt-4.1-mini",
        "base_url": "https://llm.example.com/v1",
        "params": {"temperature": 0.2},
        "created_at": oldest["model_lease"]["created_at"],
    }
    first, second = oldest["steps"]
    assert (first["index"], second["index"]) == (0, 1)
    assert (first["model"], second["model"]) == ("lomote-scripted-planner-1", "gpt-4.1-mini-2025")
    assert (first["text"], first["decision"]) == ("Planning.", {"tool_calls": [{"name": "update_checklist"}]})
    assert first["usage"] == {"prompt_tokens": 1200, "cached_prompt_tokens": 1024, "completion_tokens": 80}
    assert (first["consumed_message_ids"], second["consumed_message_ids"]) == ([world.message.pk], [])
    done, unknown = first["tool_calls"]
    assert done == {
        "id": done["id"],
        "call_id": f"{turn1.pk}:0:0",
        "provider_call_id": "call_0_0",
        "index": 0,
        "name": "update_checklist",
        "status": "done",
        "idempotent": True,
        "input": {"items": ["item 0"]},
        "result": {"ok": True},
        "error": None,
        "attempts": 1,
        "started_generation": 1,
        "started_at": done["started_at"],
        "finished_at": done["finished_at"],
    }
    assert done["started_at"] and done["finished_at"]
    assert (unknown["call_id"], unknown["status"], unknown["idempotent"]) == (f"{turn1.pk}:0:1", "unknown", False)
    assert (unknown["result"], unknown["error"]) == (None, {"code": "outcome_unknown"})
    assert [c["call_id"] for c in second["tool_calls"]] == [f"{turn1.pk}:1:0"]


def test_it_never_shows_the_provider_secret_in_the_log(world, client_as, secret_lease):
    # given a turn leased with a secret, and the secret's id, name and ciphertext
    _add_step(world.task.turns.get(), 0)

    # when the owner reads the log and the task
    log = client_as("owner").get(_log_url(world.workspace, world.task))
    detail = client_as("owner").get(reverse("task-detail", args=[world.workspace.pk, world.task.pk]))

    # then neither names the secret nor holds its ciphertext
    for response in (log, detail):
        assert response.status_code == 200
        assert b"TOPSECRET" not in response.content and b"CIPHERTEXT" not in response.content
    lease = log.json()["results"][0]["model_lease"]
    assert "secret" not in lease and "secret_id" not in lease
    assert "secret" not in json.dumps(log.json())


def test_it_pages_the_log_by_turns(world, client_as):
    # given five turns, the newest still queued
    turn1 = world.task.turns.get()
    _finish(turn1)
    for number in range(2, 6):
        turn = TurnFactory(task=world.task, number=number, trigger="message")
        if number < 5:
            _finish(turn)

    # when pages of two turns are read, and the default page
    first = client_as("viewer").get(_log_url(world.workspace, world.task, limit=2)).json()
    second = client_as("viewer").get(_log_url(world.workspace, world.task, limit=2, offset=2)).json()
    default = client_as("viewer").get(_log_url(world.workspace, world.task)).json()

    # then the pages walk from the newest turn back, and the default page holds up to 10 turns
    assert [t["number"] for t in first["results"]] == [5, 4]
    assert [t["number"] for t in second["results"]] == [3, 2]
    assert first["count"] == second["count"] == 5
    assert [t["number"] for t in default["results"]] == [5, 4, 3, 2, 1]


@pytest.mark.parametrize("query", ["limit=51", "limit=0", "offset=-3", "limit=abc", "steps=all"])
def test_it_refuses_a_log_page_that_is_too_big_or_malformed(world, client_as, query):
    # when the log is asked for with a bad paging parameter
    response = client_as("viewer").get(_log_url(world.workspace, world.task) + "?" + query)

    # then 400 with the error body
    assert_error(response, 400, "invalid")


def _log_queries(client, workspace, task) -> int:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(_log_url(workspace, task))
    assert response.status_code == 200
    return len(queries)


def test_it_reads_the_log_in_a_fixed_number_of_queries(world, client_as):
    # given a small log (one turn, one step, one call) and a bigger one (six turns, four steps, three calls each)
    client = client_as("viewer")
    turn = world.task.turns.get()
    _add_step(turn, 0, calls=1)
    small = _log_queries(client, world.workspace, world.task)
    _finish(turn)
    for number in range(2, 8):
        turn = TurnFactory(task=world.task, number=number, trigger="message")
        ModelLeaseFactory(turn=turn, model="m")
        for index in range(4):
            step = _add_step(turn, index, calls=3)
            InboxMessageFactory(task=world.task, author=None, text="read", status="consumed", consumed_by_step=step)
        if number < 7:
            _finish(turn)

    # when the bigger log is read
    big = _log_queries(client, world.workspace, world.task)

    # then it takes as many queries as the small one: the page is prefetched, not walked row by row
    assert big == small


# --- the inbox --------------------------------------------------------------------------------------------


def test_it_lists_the_inbox_with_status_and_consuming_step(world, client_as):
    # given the brief consumed by step 0, a withdrawn message and a pending one from an API key
    step = _add_step(world.task.turns.get(), 0)
    InboxMessage.objects.filter(pk=world.message.pk).update(status=InboxStatus.CONSUMED, consumed_by_step=step)
    withdrawn = InboxMessageFactory(task=world.task, author=None, text="Never mind", status=InboxStatus.WITHDRAWN)
    key = client_as("key_editor")
    posted = key.post(
        reverse("task-message-list", args=[world.workspace.pk, world.task.pk]), {"text": "Warmer"}, format="json"
    )
    assert posted.status_code == 201, posted.content

    # when a viewer lists the inbox
    page = client_as("viewer").get(reverse("task-message-list", args=[world.workspace.pk, world.task.pk])).json()

    # then every message is listed in arrival order with its status and the step that consumed it
    rows = [(m["id"], m["status"], m["consumed_by_step"], m["author"], m["source"]) for m in page["results"]]
    assert rows == [
        (world.message.pk, "consumed", step.pk, "bob", "person"),
        (withdrawn.pk, "withdrawn", None, None, "person"),
        (posted.json()["id"], "pending", None, None, "api_key"),
    ]


def test_it_posts_a_message_to_the_task_inbox(world, client_as):
    # given the task's active turn, which will read the inbox at its next boundary
    turn = world.task.turns.get()

    # when bob posts a message
    url = reverse("task-message-list", args=[world.workspace.pk, world.task.pk])
    response = client_as("editor").post(url, {"text": "  Make them warmer  "}, format="json")

    # then it is stored pending, trimmed, and no second turn starts (the active one will read it)
    assert response.status_code == 201, response.content
    message = InboxMessage.objects.get(pk=response.json()["id"])
    assert (message.task, message.text, message.status, message.author) == (
        world.task,
        "Make them warmer",
        "pending",
        world.users["editor"],
    )
    assert list(world.task.turns.values_list("pk", flat=True)) == [turn.pk]
    assert response.json() == {
        "id": message.pk,
        "text": "Make them warmer",
        "status": "pending",
        "source": "person",
        "author": "bob",
        "replaces": None,
        "consumed_by_step": None,
        "consumed_at": None,
        "flow_run": None,
        "created_at": response.json()["created_at"],
    }
    # then the event says which message arrived where
    posted = events_of(world.workspace.pk, "inbox.posted")
    assert [e.data for e in posted] == [{"task": world.task.pk, "message": message.pk, "status": "pending"}]


def test_it_starts_a_turn_when_a_message_reaches_an_idle_task(world, client_as, no_enqueue):
    # given a task whose turn completed, so it is idle with nothing active
    _finish(world.task.turns.get())
    Task.objects.filter(pk=world.task.pk).update(status=TaskStatus.IDLE)

    # when a message is posted
    url = reverse("task-message-list", args=[world.workspace.pk, world.task.pk])
    response = client_as("editor").post(url, {"text": "Again, warmer"}, format="json")

    # then turn 2 is queued and the task is active again
    assert response.status_code == 201
    assert list(world.task.turns.order_by("number").values_list("number", "status")) == [
        (1, "completed"),
        (2, "queued"),
    ]
    assert Task.objects.get(pk=world.task.pk).status == TaskStatus.ACTIVE
    assert events_of(world.workspace.pk, "task.status")[-1].data["status"] == "active"


def test_it_refuses_a_message_to_a_cancelled_task(world, client_as):
    # given a cancelled task
    task_cancel(access=_access(world.users["editor"], world.workspace), task_id=world.task.pk)
    before = snapshot()

    # when a message is posted to it
    url = reverse("task-message-list", args=[world.workspace.pk, world.task.pk])
    response = client_as("editor").post(url, {"text": "Hello?"}, format="json")

    # then 409 and nothing is stored
    assert_error(response, 409, "task_cancelled")
    assert snapshot() == before


def _message_url(name: str, world, message) -> str:
    return reverse(name, args=[world.workspace.pk, world.task.pk, message.pk])


def test_it_withdraws_an_unread_message_once(world, client_as):
    # given the brief, still unread
    client = client_as("editor")

    # when bob withdraws it, then tries again
    first = client.post(_message_url("task-message-withdraw", world, world.message))
    before_second = snapshot()
    second = client.post(_message_url("task-message-withdraw", world, world.message))

    # then it is withdrawn once, with its event; the second attempt is a conflict that changes nothing
    assert first.status_code == 200, first.content
    assert first.json()["status"] == "withdrawn"
    assert InboxMessage.objects.get(pk=world.message.pk).status == InboxStatus.WITHDRAWN
    assert [e.data["message"] for e in events_of(world.workspace.pk, "inbox.withdrawn")] == [world.message.pk]
    error = assert_error(second, 409, "message_not_pending")
    assert error["details"] == {"status": "withdrawn"}
    assert snapshot() == before_second


@pytest.mark.parametrize("method", ["put", "post"])
def test_it_replaces_an_unread_message(world, client_as, method):
    # given the brief, still unread
    url = _message_url("task-message-replace", world, world.message)

    # when bob replaces it
    response = getattr(client_as("editor"), method)(url, {"text": "Make 4 posters instead"}, format="json")

    # then the old message is marked replaced and a new pending one points at it
    assert response.status_code == 201, response.content
    new = InboxMessage.objects.get(pk=response.json()["id"])
    assert (new.text, new.status, new.replaces_id) == ("Make 4 posters instead", "pending", world.message.pk)
    assert InboxMessage.objects.get(pk=world.message.pk).status == InboxStatus.REPLACED
    assert response.json()["replaces"] == world.message.pk
    replaced = events_of(world.workspace.pk, "inbox.replaced")
    assert [(e.data["message"], e.data["replaces"]) for e in replaced] == [(new.pk, world.message.pk)]


@pytest.mark.parametrize(
    "endpoint", [WITHDRAW, REPLACE_PUT, REPLACE_POST], ids=["withdraw", "replace PUT", "replace POST"]
)
def test_it_refuses_to_change_a_message_the_agent_already_read(world, client_as, endpoint):
    # given the brief consumed by step 0
    step = _add_step(world.task.turns.get(), 0)
    InboxMessage.objects.filter(pk=world.message.pk).update(
        status=InboxStatus.CONSUMED, consumed_by_step=step, consumed_at=timezone.now()
    )
    before = snapshot()

    # when bob tries to withdraw or replace it
    response = call(client_as("editor"), endpoint.method, endpoint.url(world), endpoint.body)

    # then 409 message_not_pending, and the message, the inbox and the event log are unchanged
    error = assert_error(response, 409, "message_not_pending")
    assert error["details"] == {"status": "consumed"}
    assert snapshot() == before


# --- cancel, pause, resume --------------------------------------------------------------------------------


def _action(client, name: str, world, task=None):
    return client.post(reverse(f"task-{name}", args=[world.workspace.pk, (task or world.task).pk]))


def test_it_cancels_a_task_and_fences_out_its_turn(world, client_as):
    # given the task with its turn 1 queued at generation 1
    turn = world.task.turns.get()

    # when bob cancels it, twice
    first = _action(client_as("editor"), "cancel", world)
    second = _action(client_as("editor"), "cancel", world)

    # then the task is cancelled by a person, its turn is cancelled at a new generation (fencing the worker)
    assert first.status_code == 200 and second.status_code == 200
    task = Task.objects.get(pk=world.task.pk)
    assert (task.status, task.stop_reason) == (TaskStatus.CANCELLED, "cancelled_by_person")
    turn.refresh_from_db()
    assert (turn.status, turn.generation, turn.lease_holder) == (TurnStatus.CANCELLED, 2, "")
    assert (first.json()["status"], first.json()["active_turn"]) == ("cancelled", None)
    # then one status event: cancelling twice is harmless and says nothing new
    statuses = [e.data for e in events_of(world.workspace.pk, "task.status") if e.data["task"] == task.pk]
    assert statuses[-1] == {
        "task": task.pk,
        "status": "cancelled",
        "stop_reason": "cancelled_by_person",
        "waiting_for": {},
        "open_items": 0,
    }
    assert [s["status"] for s in statuses] == ["active", "cancelled"]


def test_it_pauses_then_resumes_a_task_with_work_waiting(
    world, client_as, no_enqueue, django_capture_on_commit_callbacks
):
    # given the task with its brief unread and turn 1 queued
    client = client_as("editor")

    # when bob pauses it
    paused = _action(client, "pause", world)

    # then it is paused, its turn stopped and fenced, and no turn is active
    assert paused.status_code == 200
    assert (paused.json()["status"], paused.json()["active_turn"]) == ("paused", None)
    assert list(world.task.turns.values_list("status", "generation")) == [(TurnStatus.STOPPED, 2)]

    # when he resumes it
    with django_capture_on_commit_callbacks(execute=True):
        resumed = _action(client, "resume", world)

    # then the unread brief starts turn 2 and the task is active again
    assert resumed.status_code == 200
    assert resumed.json()["status"] == "active"
    assert resumed.json()["active_turn"]["number"] == 2
    assert Task.objects.get(pk=world.task.pk).status == TaskStatus.ACTIVE
    turn2 = world.task.turns.get(number=2)
    assert (turn2.status, turn2.trigger) == (TurnStatus.QUEUED, "resume")
    assert no_enqueue[-1] == (turn2.pk, 1)
    # then each move is in the event log
    statuses = [
        e.data["status"] for e in events_of(world.workspace.pk, "task.status") if e.data["task"] == world.task.pk
    ]
    assert statuses == ["active", "paused", "active"]


def test_it_resumes_a_paused_task_with_nothing_to_do_as_idle(world, client_as):
    # given the paused task whose brief was withdrawn while it was paused
    InboxMessage.objects.filter(task=world.paused).update(status=InboxStatus.WITHDRAWN)

    # when it is resumed
    response = _action(client_as("editor"), "resume", world, world.paused)

    # then it waits for the person, idle, with no new turn
    assert response.status_code == 200
    task = Task.objects.get(pk=world.paused.pk)
    assert (task.status, task.stop_reason) == (TaskStatus.IDLE, "resumed")
    assert task.turns.count() == 1
    assert events_of(world.workspace.pk, "task.status")[-1].data == {
        "task": task.pk,
        "status": "idle",
        "stop_reason": "resumed",
        "waiting_for": {},
        "open_items": 0,
    }


def test_it_leaves_a_task_that_is_not_paused_alone_on_resume(world, client_as):
    # given an idle task (its turn completed)
    _finish(world.task.turns.get())
    Task.objects.filter(pk=world.task.pk).update(status=TaskStatus.IDLE)
    before = snapshot()

    # when it is resumed
    response = _action(client_as("editor"), "resume", world)

    # then nothing changes, and the answer says what is stored
    assert response.status_code == 200
    assert response.json()["status"] == "idle"
    assert snapshot() == before


@pytest.mark.parametrize("action", ["pause", "resume"])
def test_it_refuses_to_move_a_cancelled_task(world, client_as, action):
    # given a cancelled task
    task_cancel(access=_access(world.users["editor"], world.workspace), task_id=world.task.pk)
    before = snapshot()

    # when bob tries to pause or resume it
    response = _action(client_as("editor"), action, world)

    # then 409 task_state names the current and requested states, and nothing changes
    error = assert_error(response, 409, "task_state")
    assert error["details"]["status"] == "cancelled"
    assert snapshot() == before


def test_it_refuses_to_pause_a_finished_task(world, client_as):
    # given a task that is done
    _finish(world.task.turns.get())
    Task.objects.filter(pk=world.task.pk).update(status=TaskStatus.DONE)
    before = snapshot()

    # when it is paused
    response = _action(client_as("editor"), "pause", world)

    # then 409 task_state and nothing changes
    error = assert_error(response, 409, "task_state")
    assert error["details"] == {"status": "done", "requested": "paused"}
    assert snapshot() == before


# --- bad input --------------------------------------------------------------------------------------------

GOOD_TASK = {"title": "Posters", "brief": "Make posters"}
BAD_BODIES = [
    pytest.param(TASKS_POST, {}, ["title", "brief"], id="task: missing fields"),
    pytest.param(TASKS_POST, {**GOOD_TASK, "status": "done"}, ["status"], id="task: unknown field"),
    pytest.param(TASKS_POST, {**GOOD_TASK, "title": ["x"]}, ["title"], id="task: title not a string"),
    pytest.param(TASKS_POST, {**GOOD_TASK, "brief": {"a": 1}}, ["brief"], id="task: brief not a string"),
    pytest.param(TASKS_POST, {**GOOD_TASK, "title": "   "}, ["title"], id="task: blank title"),
    pytest.param(TASKS_POST, {**GOOD_TASK, "title": "t" * 201}, ["title"], id="task: title too long"),
    pytest.param(TASKS_POST, {**GOOD_TASK, "brief": "b" * 20_001}, ["brief"], id="task: brief too long"),
    pytest.param(TASKS_POST, {**GOOD_TASK, "kind": "epic"}, ["kind"], id="task: unknown kind"),
    pytest.param(TASKS_POST, {**GOOD_TASK, "language": "english!"}, ["language"], id="task: bad language"),
    pytest.param(TASKS_POST, {**GOOD_TASK, "language": 5}, ["language"], id="task: language a number"),
    pytest.param(TASKS_POST, [GOOD_TASK], ["non_field_errors"], id="task: a list"),
    pytest.param(MESSAGES_POST, {"text": ""}, ["text"], id="message: empty"),
    pytest.param(MESSAGES_POST, {"text": " \n\t "}, ["text"], id="message: whitespace"),
    pytest.param(MESSAGES_POST, {"text": None}, ["text"], id="message: null"),
    pytest.param(MESSAGES_POST, {"text": 42.5, "urgent": True}, ["urgent"], id="message: unknown field"),
    pytest.param(MESSAGES_POST, {"text": "x" * 20_001}, ["text"], id="message: too long"),
    pytest.param(MESSAGES_POST, {}, ["text"], id="message: missing"),
    pytest.param(REPLACE_PUT, {"text": ""}, ["text"], id="replace PUT: empty"),
    pytest.param(REPLACE_POST, {"text": ["a"]}, ["text"], id="replace POST: not a string"),
    pytest.param(WITHDRAW, {"reason": "typo"}, ["reason"], id="withdraw: unknown field"),
    pytest.param(CANCEL, {"force": True}, ["force"], id="cancel: unknown field"),
    pytest.param(PAUSE, {"until": "tomorrow"}, ["until"], id="pause: unknown field"),
    pytest.param(RESUME, {"now": 1}, ["now"], id="resume: unknown field"),
]


@pytest.mark.parametrize(("endpoint", "body", "fields"), BAD_BODIES)
def test_it_refuses_bad_bodies_with_400_and_changes_nothing(world, client_as, endpoint, body, fields):
    # given the database before the request
    before = snapshot()

    # when bob sends the bad body
    response = call(client_as("editor"), endpoint.method, endpoint.url(world), body)

    # then 400 names each offending field, and nothing was written
    error = assert_error(response, 400, "invalid")
    assert sorted(error["details"]["fields"]) == sorted(fields)
    assert snapshot() == before


@pytest.mark.parametrize("endpoint", [e for e in WRITES if e.body], ids=lambda e: e.name)
def test_it_refuses_malformed_json(world, client_as, endpoint):
    # given the database before the request
    before = snapshot()

    # when bob sends a body that is not JSON
    raw = '{"text": "unterminated'
    response = getattr(client_as("editor"), endpoint.method)(endpoint.url(world), raw, content_type="application/json")

    # then 400 malformed_json, nothing written
    assert_error(response, 400, "malformed_json")
    assert snapshot() == before


@pytest.mark.parametrize("endpoint", [TASKS_POST, MESSAGES_POST, REPLACE_PUT], ids=lambda e: e.name)
def test_it_refuses_a_huge_body_with_413(world, client_as, settings, endpoint):
    # given a body over the size limit
    before = snapshot()
    huge = json.dumps({"title": "x", "brief": "b", "text": "y" * (settings.LOMOTE_MAX_JSON_BODY + 1)})

    # when bob sends it
    response = getattr(client_as("editor"), endpoint.method)(endpoint.url(world), huge, content_type="application/json")

    # then 413 with the error body, nothing written
    assert_error(response, 413, "payload_too_large")
    assert snapshot() == before


def test_it_checks_the_role_before_the_body(world, client_as):
    # when a viewer sends a bad body to a write endpoint
    response = client_as("viewer").post(
        reverse("task-list", args=[world.workspace.pk]), {"nonsense": True}, format="json"
    )

    # then the answer is about the role, not the body: a viewer learns nothing about what would be accepted
    assert_error(response, 403, "role_required")


def test_it_uses_the_default_profile_of_the_workspace_for_the_lease(world, client_as):
    # given a default model profile with an encrypted key
    secret = ProviderSecretFactory(workspace=world.workspace, name="vllm", ciphertext=b"SECRET-BYTES")
    ModelProfileFactory(
        workspace=world.workspace,
        name="local",
        provider=ProviderKind.OPENAI_COMPAT,
        model="qwen2.5-7b",
        base_url="http://127.0.0.1:8000/v1",
        params={"max_tokens": 512},
        secret=secret,
        is_default=True,
    )

    # when a task is created and its log read
    created = client_as("editor").post(reverse("task-list", args=[world.workspace.pk]), GOOD_TASK, format="json")
    task = Task.objects.get(pk=created.json()["id"])
    log = client_as("viewer").get(_log_url(world.workspace, task))

    # then the log shows the exact model leased for the turn, and not the key
    lease = log.json()["results"][0]["model_lease"]
    assert (lease["provider"], lease["model"], lease["params"]) == ("openai_compat", "qwen2.5-7b", {"max_tokens": 512})
    assert b"SECRET-BYTES" not in log.content
