"""The Router names tasks by labels, and its decision is a forced call (issue 35 items 2-3, DESIGN §2, §10).

Small local models pick a task far more reliably by a short name that says what it is than by a number: the
index shows each task as `[retro-posters-cafe]`, the Router's tools take those labels as their only values, and
the server maps them back to ids. A label not offered is an invalid call. The decision is required of the model
(`tool_choice` naming route_message, or "required" while open_task is offered too); a server that refuses that
form is asked more loosely, and the profile remembers it.
"""

from datetime import UTC, datetime

import pytest

from agents.main.messages import main_message_post
from agents.models import InboxMessage, MainMessage, ModelProfile, ProviderKind, Route
from agents.providers.base import ModelResponse, ToolCallIntent, Usage
from agents.scripted.router import ScriptedRouter
from agents.services.task_index import IndexEntry, TaskIndex, task_label, task_labels
from agents.services.tasks import task_create
from tests.support.fake_openai import FakeOpenAIServer, completion, error_body
from workspace.selectors import workspace_access

pytestmark = [pytest.mark.django_db, pytest.mark.postgres, pytest.mark.usefixtures("local_model_servers")]

NAMED_ROUTE = {"type": "function", "function": {"name": "route_message"}}


@pytest.fixture
def access(workspace, bob, no_enqueue):
    return workspace_access(principal=bob, workspace_id=workspace.pk)


@pytest.fixture
def two_series(access):
    posters = task_create(access=access, title="Retro posters for the café", brief="3 retro posters for Café Lune")
    cat = task_create(access=access, title="Ginger cat video", brief="Animate the ginger cat photo")
    return posters, cat


@pytest.fixture
def hosted(workspace, settings):
    """The workspace's default model: a local OpenAI-compatible server (look-ups off: the decision alone)."""
    settings.LOMOTE_MODEL_TIMEOUT = 5
    settings.LOMOTE_ROUTER_MAX_LOOKUPS = 0
    with FakeOpenAIServer() as server:
        server.profile = ModelProfile.objects.create(
            workspace=workspace, name="local", provider=ProviderKind.OPENAI_COMPAT, model="qwen2.5-1.5b-instruct",
            base_url=server.url, is_default=True,
        )  # fmt: skip
        yield server


class Says:
    """A Router model (not through the adapter) that always answers the same route_message arguments."""

    def __init__(self, arguments):
        self.arguments = arguments

    def complete(self, request):
        calls = [ToolCallIntent("r1", "route_message", self.arguments)]
        return ModelResponse(text="", tool_calls=calls, usage=Usage(), model="fake-router-1")


def _entry(task_id: int, title: str) -> IndexEntry:
    return IndexEntry(task_id, title, "", "", "idle", "persistent", "idle", [], datetime(2026, 5, 1, tzinfo=UTC), False)


# --- the labels ---------------------------------------------------------------------------------------------


def test_it_names_a_task_by_the_first_content_words_of_its_title():
    assert task_label("Retro posters for the café") == "retro-posters-cafe"
    assert task_label("Affiches rétro pour le Café Lune") == "affiches-retro-cafe"
    assert task_label("A") == "a"
    assert task_label("猫の絵") == "task"  # no latin word to name it by: a plain name, made unique below


def test_it_makes_labels_unique_and_the_same_whatever_the_order():
    # given three tasks, two with the same title, listed in two orders
    tasks = [(12, "Retro posters"), (5, "Retro posters"), (7, "Cat")]
    # then the older task keeps the plain label, the newer one gets a suffix, in both orders
    assert (
        task_labels(tasks)
        == task_labels(list(reversed(tasks)))
        == {5: "retro-posters", 12: "retro-posters-2", 7: "cat"}
    )


def test_tasks_shown_beside_the_index_never_change_its_labels():
    # given an index whose task took "retro-posters", and a near-duplicate with an older id shown beside it
    index = TaskIndex(entries=[_entry(12, "Retro posters")])
    labels = index.labels(more=[(3, "Retro posters")])
    # then the index's label stands and the other gets its own
    assert labels == {12: "retro-posters", 3: "retro-posters-2"}
    assert index.render().startswith('[retro-posters] "Retro posters"')


# --- a hosted model: labels offered, labels mapped back, the call forced ----------------------------------


def test_a_hosted_router_is_offered_labels_and_its_label_routes_the_message(access, two_series, hosted):
    posters, cat = two_series
    hosted.reply(
        completion(
            content=None,
            tool_calls=[("route_message", {"route": "follow_up", "task": "retro-posters-cafe", "reason": "posters"})],
        )
    )
    # when bob writes from the main thread
    message = main_message_post(access=access, text="make the café posters warmer")
    # then the model saw the tasks by label only, as the only values of the decision's task fields
    (body,) = hosted.bodies
    index_text = body["messages"][1]["content"]
    assert "[retro-posters-cafe]" in index_text and "[ginger-cat-video]" in index_text
    assert f"#{posters.pk}]" not in index_text and f"#{cat.pk}]" not in index_text
    task_field = body["tools"][0]["function"]["parameters"]["properties"]["task"]
    candidates_field = body["tools"][0]["function"]["parameters"]["properties"]["candidates"]
    assert set(task_field["anyOf"][0]["enum"]) == set(candidates_field["items"]["enum"])
    assert set(task_field["anyOf"][0]["enum"]) == {"retro-posters-cafe", "ginger-cat-video"}
    # and the decision was required by name
    assert body["tool_choice"] == NAMED_ROUTE
    # and the label came back as the task
    assert (message.route, message.task_id) == (Route.FOLLOW_UP, posters.pk)
    assert InboxMessage.objects.filter(task=posters, text=message.text).exists()
    assert MainMessage.objects.get(pk=message.pk).router_call == {"call_format": "structured", "tool_choice": "named"}


def test_while_look_ups_are_offered_a_call_to_either_tool_is_required(access, two_series, hosted, settings):
    settings.LOMOTE_ROUTER_MAX_LOOKUPS = 2
    hosted.reply(completion(content=None, tool_calls=[("route_message", {"route": "new_task", "title": "Menu"})]))
    main_message_post(access=access, text="a new menu card for the café, in three languages")
    (body,) = hosted.bodies
    assert [t["function"]["name"] for t in body["tools"]] == ["route_message", "open_task"]
    assert body["tool_choice"] == "required"
    assert set(body["tools"][1]["function"]["parameters"]["properties"]["task"]["enum"]) == {
        "retro-posters-cafe",
        "ginger-cat-video",
    }


def test_a_label_not_offered_is_repaired_once_then_the_person_is_asked(access, two_series, hosted):
    posters, cat = two_series
    # given a model that names a task by a label it was not given, twice
    made_up = '```json\n{"name": "route_message", "arguments": {"route": "follow_up", "task": "cafe-posters"}}\n```'
    hosted.reply(completion(content=made_up, tool_calls=None))
    hosted.reply(completion(content=made_up, tool_calls=None))
    # when bob writes
    message = main_message_post(access=access, text="make the café posters warmer")
    # then the model was told its label is not one of those offered, once
    assert hosted.calls == 2
    assert "'cafe-posters' is not one of" in hosted.bodies[1]["messages"][-1]["content"]
    # and the message went nowhere on a guess: bob is asked, the call's failure recorded
    assert message.route == Route.CLARIFY and message.task_id is None
    call = MainMessage.objects.get(pk=message.pk).router_call
    assert (call["call_format"], call["repaired"]) == ("fenced_json", True)
    assert call["error"].startswith("invalid call: The arguments of route_message do not match")


@pytest.mark.parametrize(
    "task",
    [pytest.param("cafe-posters", id="label-not-offered"), pytest.param(None, id="the-task-id")],
)
def test_a_decision_naming_a_task_by_anything_but_an_offered_label_is_invalid(access, two_series, monkeypatch, task):
    posters, _ = two_series
    named = task if task is not None else posters.pk  # a real task id, where a label was asked for
    router = Says({"route": "follow_up", "task": named})
    monkeypatch.setattr("agents.main.router.router_provider", lambda *, workspace_id: (router, "fake", {}))
    message = main_message_post(access=access, text="make the café posters warmer")
    assert message.route == Route.CLARIFY and message.task_id is None


def test_the_router_falls_back_from_a_refused_named_choice_and_the_profile_remembers(access, two_series, hosted):
    posters, _ = two_series
    # given a server that refuses a named tool_choice, then answers "required" with only the arguments
    hosted.reply(error_body("Invalid tool_choice: only 'auto', 'none' and 'required' are supported"), status=400)
    hosted.reply(completion(content='{"route": "follow_up", "task": "retro-posters-cafe"}', tool_calls=None))
    # when bob writes
    message = main_message_post(access=access, text="make the café posters warmer")
    # then it was asked again with "required", the arguments read as the decision, and the message routed
    assert [b["tool_choice"] for b in hosted.bodies] == [NAMED_ROUTE, "required"]
    assert (message.route, message.task_id) == (Route.FOLLOW_UP, posters.pk)
    stored = MainMessage.objects.get(pk=message.pk)
    assert stored.router_call == {"call_format": "bare_json", "tool_choice": "required"}
    # and the profile remembers what this endpoint refused: the next message goes straight to "required"
    hosted.profile.refresh_from_db()
    assert hosted.profile.tool_choice_support["refused"] == ["named"]
    hosted.reply(completion(content=None, tool_calls=[("route_message", {"route": "answer", "reply": "Hi!"})]))
    main_message_post(access=access, text="hello there")
    assert hosted.bodies[-1]["tool_choice"] == "required" and hosted.calls == 3


def test_the_scripted_router_answers_with_the_labels_it_is_given(access, two_series, monkeypatch):
    # given the embedded scripted Router, watched
    posters, _ = two_series
    scripted, seen = ScriptedRouter(), []

    class Watched:
        def complete(self, request):
            seen.append((request, scripted.complete(request)))
            return seen[-1][1]

    monkeypatch.setattr("agents.main.router.router_provider", lambda *, workspace_id: (Watched(), "spy", {}))
    # when bob writes about the posters
    message = main_message_post(access=access, text="make the retro posters for the café warmer")
    # then its decision named the task by its label, like a model must, and reached the task
    request, response = seen[-1]
    (call,) = [c for c in response.tool_calls if c.name == "route_message"]
    assert call.arguments["task"] == "retro-posters-cafe"
    assert request.tool_choice in ("route_message", "required")
    assert (message.route, message.task_id) == (Route.FOLLOW_UP, posters.pk)
