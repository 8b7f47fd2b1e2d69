"""The Router reads before it decides (issue 19 item 1, seed §3.1, DESIGN §2).

Beside the bounded index, the Router may open a candidate task's details (`open_task`: brief, checklist, latest
artifacts, the person's latest messages) before choosing. The scripted Router does it through the same tool when
the index leaves candidates close; a hosted model does it through the OpenAI-compatible adapter's tool calls.
Look-ups are recorded on the Main message, capped per message, scoped to the workspace, and read-only.
"""

import json
from html import escape

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from agents.main.lookups import LOOKUP_TOOL_NAME
from agents.main.messages import main_message_post
from agents.models import (
    Card,
    ChecklistItem,
    ChecklistStatus,
    InboxMessage,
    MainMessage,
    ModelProfile,
    ProviderKind,
    Route,
    Task,
    TaskStatus,
)
from agents.providers.base import ModelResponse, ToolCallIntent, Usage
from agents.scripted.router import ScriptedRouter
from agents.secrets import secret_put
from agents.services import task_index
from agents.services.task_index import task_details_get
from agents.services.tasks import task_cancel, task_create
from memory.models import Evidence, EvidenceKind, ForgetRequest, ForgottenTerm
from memory.redaction import text_terms
from memory.services.forget import forget_salt
from tests.support.fake_openai import FakeOpenAIServer, completion
from tests.support.rest import events_of
from workspace.models import Artifact, ArtifactKind
from workspace.selectors import workspace_access
from workspace.services.workspaces import workspace_create

pytestmark = [pytest.mark.django_db, pytest.mark.postgres, pytest.mark.usefixtures("local_model_servers")]


# --- helpers ----------------------------------------------------------------------------------------------


class RouterSpy:
    """The Router's provider, watched: every request is kept; answers come from `inner` (scripted by default)."""

    def __init__(self, inner=None):
        self.inner = inner or ScriptedRouter()
        self.requests = []
        self.responses = []

    def complete(self, request):
        self.requests.append(request)
        response = self.inner.complete(request)
        self.responses.append(response)
        return response


def _label_of(request, task_id):
    """The label a request offers for a task (the model never sees ids); a str is passed on as the model's own."""
    if isinstance(task_id, str):
        return task_id
    return next(entry["label"] for entry in request.state["index"] if entry["id"] == task_id)


class Looker:
    """A Router model that opens `per_round` tasks from `wanted` (ids, named by the labels the request offers, or
    strings it makes up) each time it is asked — whether or not the tool is still offered — then, once `wanted`
    is exhausted, decides `decision` (None: never decides)."""

    def __init__(self, wanted, *, per_round=1, decision=None):
        self.wanted, self.per_round, self.decision = list(wanted), per_round, decision
        self.calls = 0

    def complete(self, request):
        self.calls += 1
        if self.wanted:
            batch, self.wanted = self.wanted[: self.per_round], self.wanted[self.per_round :]
            intents = [
                ToolCallIntent(f"look-{self.calls}-{i}", LOOKUP_TOOL_NAME, {"task": _label_of(request, task_id)})
                for i, task_id in enumerate(batch)
            ]
            return ModelResponse(text="", tool_calls=intents, usage=Usage(), model="looker-1")
        if self.decision is None:
            first = request.state["index"][0]["label"]
            intents = [ToolCallIntent(f"look-{self.calls}", LOOKUP_TOOL_NAME, {"task": first})]
        else:
            decision = {**self.decision, "task": _label_of(request, self.decision["task"])}
            intents = [ToolCallIntent(f"route-{self.calls}", "route_message", decision)]
        return ModelResponse(text="", tool_calls=intents, usage=Usage(), model="looker-1")


@pytest.fixture
def router(monkeypatch):
    spy = RouterSpy()
    monkeypatch.setattr("agents.main.router.router_provider", lambda *, workspace_id: (spy, "spy", {}))
    return spy


@pytest.fixture
def access(workspace, bob, no_enqueue):
    return workspace_access(principal=bob, workspace_id=workspace.pk)


def _task(access, title, brief, *, checklist=(), said=(), artifacts=()) -> Task:
    """A task made through the service, with checklist items, the person's later messages and artifacts."""
    task = task_create(access=access, title=title, brief=brief)
    for position, item in enumerate(checklist, 1):
        ChecklistItem.objects.create(task=task, position=position, title=item)
    for text in said:
        InboxMessage.objects.create(task=task, author=access.user, source="person", text=text)
    for title_, description in artifacts:
        Artifact.objects.create(
            workspace_id=task.workspace_id,
            kind=ArtifactKind.IMAGE,
            title=title_,
            description=description,
            current_version=1,
            created_by_task_id=task.pk,
        )
    return task


def _facts():
    """Everything a look-up could change if it were not read-only."""
    return {
        "tasks": list(Task.objects.order_by("pk").values_list("pk", "status", "kind", "title", "brief", "summary")),
        "checklist": list(ChecklistItem.objects.order_by("pk").values_list("pk", "title", "status")),
        "artifacts": list(Artifact.objects.order_by("pk").values_list("pk", "title", "description", "deleted_at")),
        "cards": list(Card.objects.order_by("pk").values_list("pk", "status")),
    }


# Two poster series for one café: the index shows each as "posters for Café Lune" with its season; only what they
# hold tells which one the person means. Each case: the two tasks (A, the one meant, first), the message.
def _by_checklist(access):
    return (
        _task(
            access,
            "Spring posters for Café Lune",
            "A series of posters for Café Lune's spring menu",
            checklist=["Poster with the croissant illustration", "Poster with the opening hours"],
        ),
        _task(
            access,
            "Autumn posters for Café Lune",
            "A series of posters for Café Lune's autumn menu",
            checklist=["Poster with the latte art", "Poster with the terrace at night"],
        ),
    )


def _by_messages_fr(access):
    return (
        _task(
            access,
            "Affiches de printemps pour le Café Lune",
            "Une série d'affiches pour la carte de printemps du Café Lune",
            said=["Ajoute un chat noir endormi sur la deuxième affiche"],
        ),
        _task(
            access,
            "Affiches d'automne pour le Café Lune",
            "Une série d'affiches pour la carte d'automne du Café Lune",
            said=["Mets la terrasse sous la pluie sur la première affiche"],
        ),
    )


def _by_artifact(access):
    return (
        _task(
            access,
            "Spring posters for Café Lune",
            "A series of posters for Café Lune's spring menu",
            artifacts=[("Spring poster 2", "A lighthouse at dawn over the bay, pastel tones")],
        ),
        _task(
            access,
            "Autumn posters for Café Lune",
            "A series of posters for Café Lune's autumn menu",
            artifacts=[("Autumn poster 2", "A tram in the rain, amber street lights")],
        ),
    )


CASES = [
    pytest.param(_by_checklist, "On the croissant poster, make the background warmer", id="checklist-en"),
    pytest.param(_by_checklist, "Agrandis le croissant sur l'affiche", id="checklist-fr"),
    pytest.param(_by_messages_fr, "Le chat noir de l'affiche, rends-le plus grand", id="messages-fr"),
    pytest.param(
        _by_messages_fr,
        "Make the black cat on the poster bigger",
        id="messages-en",
        marks=pytest.mark.xfail(
            reason="issue 32: the candidate model's weight on opened details is fitted on a routing set whose states "
            "hold no task details, so a detail in another language than the message does not yet tell the tasks apart",
            strict=True,
        ),
    ),
    pytest.param(_by_artifact, "Make the lighthouse poster brighter", id="artifact-en"),
]


# --- the scripted Router reads, then decides --------------------------------------------------------------


@pytest.mark.parametrize(("make", "text"), CASES)
def test_it_opens_the_close_candidates_and_follows_the_one_the_details_name(access, router, make, text):
    # given two poster series the index cannot tell apart for this message
    meant, other = make(access)
    before = _facts()

    # when bob writes from the main thread
    message = main_message_post(access=access, text=text)

    # then the Router was offered the look-up tool, opened both candidates through it, then decided
    first, second = router.requests
    assert [tool.name for tool in first.tools] == ["route_message", LOOKUP_TOOL_NAME]
    # by the labels it was offered, mapped back to the tasks
    by_label = {entry["label"]: entry["id"] for entry in first.state["index"]}
    labels = [call.arguments["task"] for call in router.responses[0].tool_calls]
    opened = [by_label[label] for label in labels]
    assert sorted(opened) == sorted([meant.pk, other.pk])
    results = [json.loads(m["content"]) for m in second.messages if m["role"] == "tool"]
    assert {r["task"]["label"] for r in results} == set(labels)
    assert all("id" not in r["task"] for r in results)
    # and the message reached the task whose details it names, with the look-ups recorded in order
    assert (message.route, message.task_id, message.refusal) == (Route.FOLLOW_UP, meant.pk, "")
    assert InboxMessage.objects.filter(task=other, text=text).count() == 0
    assert InboxMessage.objects.get(pk=message.inbox_message_id).task_id == meant.pk
    stored = MainMessage.objects.get(pk=message.pk)
    assert stored.router_lookups == [{"task": t, "result": "opened"} for t in opened]
    assert events_of(meant.workspace_id, "main.message")[-1].data["lookups"] == stored.router_lookups
    # and reading changed nothing
    assert _facts() == before


@pytest.mark.parametrize(("make", "text"), CASES[:1])
def test_without_look_ups_the_same_message_is_a_question_to_the_person(access, router, settings, make, text):
    # given the same two series, and look-ups turned off
    settings.LOMOTE_ROUTER_MAX_LOOKUPS = 0
    meant, other = make(access)

    # when bob writes the same message, then the index alone cannot choose: he is asked, nothing was opened
    message = main_message_post(access=access, text=text)
    assert message.route == Route.CLARIFY and set(message.card.payload["candidates"]) == {meant.pk, other.pk}
    assert [tool.name for tool in router.requests[0].tools] == ["route_message"]
    assert MainMessage.objects.get(pk=message.pk).router_lookups == []


def test_it_still_asks_when_the_details_do_not_tell_the_tasks_apart(access, router):
    # given the two series with their checklists
    meant, other = _by_checklist(access)

    # when bob names neither ("the posters", "warmer" are in both or in neither)
    message = main_message_post(access=access, text="Make the posters from last time warmer")

    # then both were opened, and he is asked
    assert message.route == Route.CLARIFY
    assert {e["task"] for e in message.router_lookups} == {meant.pk, other.pk}
    assert {e["result"] for e in message.router_lookups} == {"opened"}
    assert InboxMessage.objects.filter(task__in=[meant, other]).count() == 2  # their briefs only


def test_it_does_not_look_anything_up_when_the_index_decides(access, router):
    # given the two series and a cat video
    _by_checklist(access)
    video = _task(access, "Cat video", "Turn the cat photo into a 5-second video")

    # when bob asks about the video, then one request decided it, with nothing opened
    message = main_message_post(access=access, text="Make the cat video longer")
    assert (message.route, message.task_id, message.router_lookups) == (Route.FOLLOW_UP, video.pk, [])
    assert len(router.requests) == 1


# --- the cap ----------------------------------------------------------------------------------------------


def test_it_refuses_look_ups_past_the_cap_and_the_router_then_decides(access, router, settings):
    # given a cap of 3, four tasks, and a Router model that opens two tasks at a time
    settings.LOMOTE_ROUTER_MAX_LOOKUPS = 3
    meant, other = _by_checklist(access)
    third = _task(access, "Cat video", "Animate the cat")
    fourth = _task(access, "Bakery logo", "A logo for the bakery")
    wanted = [meant.pk, other.pk, third.pk, fourth.pk]
    router.inner = Looker(wanted, per_round=2, decision={"route": "follow_up", "task": meant.pk})

    # when bob writes
    message = main_message_post(access=access, text="the croissant one, warmer")

    # then three were opened, the fourth refused with a reason the model reads, and the tool was then withdrawn
    assert message.router_lookups == [
        {"task": meant.pk, "result": "opened"},
        {"task": other.pk, "result": "opened"},
        {"task": third.pk, "result": "opened"},
        {"task": fourth.pk, "result": "refused"},
    ]
    refused = json.loads(router.requests[2].messages[-1]["content"])
    assert refused["error"] == "lookup_limit"
    assert [[t.name for t in r.tools] for r in router.requests] == [
        ["route_message", LOOKUP_TOOL_NAME],
        ["route_message", LOOKUP_TOOL_NAME],
        ["route_message"],
    ]
    # and its decision stands
    assert (message.route, message.task_id) == (Route.FOLLOW_UP, meant.pk)


def test_a_router_that_never_decides_is_stopped_and_the_person_asked(access, router, settings):
    # given a cap of 2 and a Router model that only ever looks things up
    settings.LOMOTE_ROUTER_MAX_LOOKUPS = 2
    meant, other = _by_checklist(access)
    router.inner = Looker([meant.pk, other.pk], per_round=1, decision=None)

    # when bob writes
    message = main_message_post(access=access, text="the croissant one, warmer")

    # then the model was asked at most cap + 1 times, its extra look-up refused, and bob is asked instead
    assert len(router.requests) == 3
    assert [e["result"] for e in message.router_lookups] == ["opened", "opened", "refused"]
    assert message.route == Route.CLARIFY and message.inbox_message is None


def test_the_cap_is_shared_by_the_duplicate_check(access, router, settings):
    # given a cap of 1, two identical poster series in progress, and the scripted Router
    settings.LOMOTE_ROUTER_MAX_LOOKUPS = 1
    _task(access, "Retro brand posters", "Make a series of 3 retro brand posters")
    _task(access, "Retro brand posters", "Make a series of 3 retro brand posters")

    # when bob asks for that series again (a new task first, then the duplicate check)
    message = main_message_post(access=access, text="Make a series of 3 retro brand posters")

    # then with one look-up left for two candidates the scripted Router opens none, and asks
    assert [r.state["phase"] for r in router.requests] == ["route", "duplicates"]
    assert message.route == Route.CLARIFY and message.router_lookups == []


# --- scope: the workspace, open tasks, the candidates -----------------------------------------------------


def test_it_answers_not_found_for_another_workspaces_task_an_archived_one_and_an_unknown_id(
    access, router, dave, settings
):
    # given dave's workspace with a task, and in bob's: the two series and an archived task (cap 4)
    settings.LOMOTE_ROUTER_MAX_LOOKUPS = 4
    other_ws = workspace_create(user=dave, name="Dave's")
    theirs = _task(
        workspace_access(principal=dave, workspace_id=other_ws.pk),
        "Dave's secret posters",
        "Posters for the unannounced Nightjar launch",
        checklist=["Nightjar teaser poster"],
    )
    meant, _ = _by_checklist(access)
    archived = _task(access, "Old croissant posters", "Croissant posters from last year")
    Task.objects.filter(pk=archived.pk).update(archived_at=timezone.now(), status=TaskStatus.DONE)
    router.inner = Looker(
        [task_index.task_label(theirs.title), archived.pk, "999999", meant.pk],
        decision={"route": "follow_up", "task": meant.pk},
    )

    # when bob writes and the Router model asks for each
    message = main_message_post(access=access, text="the croissant one, warmer")

    # then dave's task and an unknown id, which no offered label names, are invalid calls; the archived one is the
    # same "not found" as any task the Router may not open; and nothing of dave's reached the model
    assert message.router_lookups == [
        {"task": None, "result": "invalid"},
        {"task": archived.pk, "result": "not_found"},
        {"task": None, "result": "invalid"},
        {"task": meant.pk, "result": "opened"},
    ]
    answers = [json.loads(m["content"]) for m in router.requests[-1].messages if m["role"] == "tool"]
    assert [a.get("error") for a in answers] == ["invalid_arguments", "not_found", "invalid_arguments", None]
    seen = json.dumps([r.messages for r in router.requests])
    assert "Nightjar" not in seen and "Dave" not in seen
    assert (message.route, message.task_id) == (Route.FOLLOW_UP, meant.pk)


def test_the_details_read_is_scoped_read_only_and_bounded(access, dave):
    # given a task with a long history, a cancelled one, and dave's
    task = _task(
        access,
        "Spring posters for Café Lune",
        "x" * 5000,
        checklist=[f"Poster {i}" for i in range(40)],
        said=[f"Change number {i}: " + "y" * 1000 for i in range(20)],
        artifacts=[(f"Poster {i}", "z" * 1000) for i in range(10)],
    )
    ChecklistItem.objects.filter(task=task, position=1).update(status=ChecklistStatus.DONE)
    cancelled = _task(access, "Cancelled", "Nothing")
    task_cancel(access=access, task_id=cancelled.pk)
    theirs = _task(workspace_access(principal=dave, workspace_id=workspace_create(user=dave, name="D").pk), "D", "D")

    # when the details are read
    with CaptureQueriesContext(connection) as captured:
        details = task_details_get(workspace_id=task.workspace_id, task_id=task.pk)

    # then only reads ran, and every list and text is cut to its fixed bound
    assert all(q["sql"].lstrip().upper().startswith("SELECT") for q in captured)
    assert len(details["checklist"]) == task_index.DETAIL_CHECKLIST and details["checklist"][0]["status"] == "done"
    assert len(details["artifacts"]) == task_index.DETAIL_ARTIFACTS
    assert len(details["recent_messages"]) == task_index.DETAIL_MESSAGES
    assert details["recent_messages"][-1].startswith("Change number 19")
    assert len(details["brief"]) == task_index.DETAIL_BRIEF_CHARS
    assert max(len(m) for m in details["recent_messages"]) == task_index.DETAIL_MESSAGE_CHARS
    assert "checklist 1/40 done" in details["state"]
    # and a cancelled task, another workspace's and an unknown id read as nothing
    for task_id in (cancelled.pk, theirs.pk, 10**12):
        assert task_details_get(workspace_id=task.workspace_id, task_id=task_id) is None


def test_the_details_leave_out_what_the_person_asked_to_forget(access, workspace):
    # given a task whose person mentioned the Nightjar launch, and a forget of "Nightjar"
    task = _task(
        access,
        "Spring posters for Café Lune",
        "A series of posters for Café Lune's spring menu",
        said=["Add the Nightjar launch date on poster 2", "Make the croissant bigger"],
    )
    evidence = Evidence.objects.create(
        workspace=workspace, kind=EvidenceKind.TASK_MESSAGE, source_id="1", text="x", content_hash="0" * 64
    )
    forget = ForgetRequest.objects.create(workspace=workspace, evidence=evidence)
    for term in text_terms("Nightjar", salt=forget_salt(workspace.pk)):
        ForgottenTerm.objects.create(workspace=workspace, term=term, forget=forget)

    # when the Router opens it, then the message that carries it is shown as removed, the other as written
    details = task_details_get(workspace_id=workspace.pk, task_id=task.pk)
    assert "Nightjar" not in json.dumps(details)
    assert details["recent_messages"][-1] == "Make the croissant bigger"


# --- a hosted model, through the OpenAI-compatible adapter ------------------------------------------------

API_KEY = "sk-lomote-router-7e21c9d4b0a83f56"


def test_a_hosted_model_looks_up_through_tool_calls_then_decides(access, workspace, settings):
    settings.LOMOTE_MODEL_TIMEOUT = 5
    meant, other = _by_checklist(access)
    with FakeOpenAIServer() as server:
        # given the workspace's default model is an OpenAI-compatible endpoint that opens one task, then decides
        ModelProfile.objects.create(
            workspace=workspace,
            name="hosted",
            provider=ProviderKind.OPENAI_COMPAT,
            model="fake-router-model",
            base_url=server.url,
            secret=secret_put(workspace_id=workspace.pk, name="router-key", value=API_KEY),
            is_default=True,
        )
        label = task_index.task_label(meant.title)  # "spring-posters-cafe", as the index names it
        server.reply(completion(content=None, tool_calls=[(LOOKUP_TOOL_NAME, {"task": label})]))
        server.reply(
            completion(
                content=None,
                tool_calls=[("route_message", {"route": "follow_up", "task": label, "reason": "croissant item"})],
                model="fake-router-model-2026",
            )
        )

        # when bob writes from the main thread
        message = main_message_post(access=access, text="On the croissant poster, make the background warmer")

    # then the endpoint was offered both tools, and its look-up came back as a tool message it could read
    first, second = server.bodies
    assert [t["function"]["name"] for t in first["tools"]] == ["route_message", LOOKUP_TOOL_NAME]
    assistant, tool = second["messages"][-2:]
    assert assistant["role"] == "assistant" and assistant["tool_calls"][0]["function"]["name"] == LOOKUP_TOOL_NAME
    assert tool["role"] == "tool" and tool["tool_call_id"] == assistant["tool_calls"][0]["id"]
    details = json.loads(tool["content"])["task"]
    assert details["label"] == label and "croissant" in details["checklist"][0]["title"]
    # and both tools named the tasks by the labels of the index, as the only values they take
    offered = {t["function"]["name"]: t["function"]["parameters"]["properties"]["task"] for t in first["tools"]}
    assert set(offered[LOOKUP_TOOL_NAME]["enum"]) == {label, task_index.task_label(other.title)}
    assert set(offered["route_message"]["anyOf"][0]["enum"]) == set(offered[LOOKUP_TOOL_NAME]["enum"])
    assert f"[{label}]" in first["messages"][1]["content"] and f"#{meant.pk}" not in first["messages"][1]["content"]
    # and its decision routed the message, with the look-up recorded and the key sent only as the credential
    assert (message.route, message.task_id, message.router_model) == (
        Route.FOLLOW_UP,
        meant.pk,
        "fake-router-model-2026",
    )
    assert message.router_lookups == [{"task": meant.pk, "result": "opened"}]
    assert set(server.authorizations) == {f"Bearer {API_KEY}"}
    assert API_KEY not in json.dumps(server.bodies)
    assert InboxMessage.objects.filter(task=other, text=message.text).count() == 0


# --- what people and operators see ------------------------------------------------------------------------


def test_the_look_ups_show_in_the_rest_representation_and_the_admin(
    access, workspace, bob, client_for, django_user_model
):
    # given the two series
    meant, other = _by_checklist(access)

    # when bob posts through the API
    response = client_for(bob).post(
        reverse("main-message-list", kwargs={"workspace_id": workspace.pk}),
        {"text": "On the croissant poster, make the background warmer"},
        format="json",
    )

    # then the message says which tasks the Router opened, in order, and so does the listing
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["task"] == meant.pk
    assert {e["task"] for e in body["router_lookups"]} == {meant.pk, other.pk}
    assert all(e["result"] == "opened" for e in body["router_lookups"])
    listed = client_for(bob).get(reverse("main-message-list", kwargs={"workspace_id": workspace.pk})).json()
    assert listed["results"][0]["router_lookups"] == body["router_lookups"]

    # and an operator sees them on the message's admin page, which is read-only
    operator = django_user_model.objects.create_superuser("root", "root@example.com", "pw-root")
    admin = Client()
    admin.force_login(operator)
    page = admin.get(reverse("admin:agents_mainmessage_change", args=[body["id"]]))
    listing = admin.get(reverse("admin:agents_mainmessage_changelist"))
    assert page.status_code == 200 and listing.status_code == 200
    shown = escape(json.dumps(MainMessage.objects.get(pk=body["id"]).router_lookups))
    assert shown in page.content.decode() and f"#{meant.pk} opened" in listing.content.decode()
    assert admin.get(reverse("admin:agents_mainmessage_add")).status_code == 403
