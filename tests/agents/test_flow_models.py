"""Flow model nodes run on the workspace's model profile, with its encrypted key, like a task's turn (seed 002).

A real OpenAI-compatible HTTP server (tests/support/fake_openai.py) answers; the key must reach it as the
Authorization bearer and appear in no event, node run, log record or API response. A router whose model names
no route fails loudly; a model's error is the node's error, never a fallback to the offline stand-in.
"""

import json
import logging

import pytest
from django.core.serializers.json import DjangoJSONEncoder
from django.db import transaction
from django.urls import reverse

from agents.models import ModelProfile, ProviderKind
from agents.secrets import secret_put
from billing.models import Order
from tests.support.factories import flow_stored_unchecked
from tests.support.fake_openai import FakeOpenAIServer, completion
from tests.support.rest import assert_error
from workspace.flows import runner
from workspace.flows.authoring import flow_create
from workspace.models import Event, FlowNodeRun, FlowRun, FlowRunStatus, NodeStatus

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("local_model_servers")]

API_KEY = "sk-test-FLOW-never-leak-5d81c0aa93e2"

ROUTED = {
    "nodes": {
        "brief": {"type": "text_input"},
        "write": {"type": "generate_text", "params": {"instructions": "Write a one-line slogan."}},
        "route": {
            "type": "router",
            "params": {
                "instructions": "Decide what to make from the slogan.",
                "routes": {"poster": "an image poster", "copy": "more text"},
            },
        },
        "poster": {"type": "generate_text", "params": {"instructions": "Describe a poster."}},
        "copy": {"type": "generate_text", "params": {"instructions": "Polish the copy."}},
        "end": {"type": "finish"},
    },
    "edges": [
        ["brief", "write"],
        ["write", "route"],
        ["route", "poster"],
        ["route", "copy"],
        ["poster", "end"],
        ["copy", "end"],
    ],
    "start": "brief",
}


@pytest.fixture
def queue(monkeypatch):
    """Record the runner's enqueues; `drain()` runs them in order, as workers would."""
    sent: list[tuple[str, int]] = []
    monkeypatch.setattr(runner, "_enqueue", lambda function, node_run_id: sent.append((function, node_run_id)))

    def drain():
        while sent:
            function, node_run_id = sent.pop(0)
            getattr(runner, function)(node_run_id)

    return drain


@pytest.fixture
def server():
    with FakeOpenAIServer() as fake:
        yield fake


@pytest.fixture
def hosted(workspace, server):
    """The workspace's default model: the fake endpoint, with its key stored encrypted."""
    return ModelProfile.objects.create(
        workspace=workspace,
        name="hosted",
        provider=ProviderKind.OPENAI_COMPAT,
        model="fake-model-1",
        base_url=server.url,
        params={"temperature": 0.2},
        secret=secret_put(workspace_id=workspace.pk, name="fake-key", value=API_KEY),
        is_default=True,
    )


def _run(client, workspace, flow, text: str) -> FlowRun:
    url = reverse("artifact-flow-runs", kwargs={"workspace_id": workspace.pk, "artifact_id": flow.pk})
    response = client.post(url, {"inputs": {"text": text}}, format="json")
    assert response.status_code == 201, response.content
    return FlowRun.objects.get(pk=response.json()["id"])


def _nodes(run) -> dict[str, FlowNodeRun]:
    return {n.node_id: n for n in FlowNodeRun.objects.filter(run=run)}


def _dump(value) -> str:
    return json.dumps(value, cls=DjangoJSONEncoder, default=str)


def test_it_runs_model_nodes_on_the_workspace_profile_with_its_key_and_leaks_it_nowhere(
    workspace, alice, client_for, hosted, server, queue, caplog
):
    caplog.set_level(logging.DEBUG)
    # given a Flow whose text and router nodes name no model: they run on the workspace's default profile
    flow = flow_create(workspace_id=workspace.pk, title="Slogans", graph=ROUTED, author_user=alice)
    server.reply(completion(content="Jazz under the stars", model="fake-model-1"))
    server.reply(completion(content="copy", model="fake-model-1"))
    server.reply(completion(content="Jazz under the stars, every Friday.", model="fake-model-1"))
    client = client_for(alice)

    # when a person runs it and its nodes run as workers would
    run = _run(client, workspace, flow, "a jazz festival")
    queue()

    # then each model node made one request to the endpoint, with the stored key as the bearer
    run.refresh_from_db()
    assert run.status == FlowRunStatus.DONE, run.error
    assert server.calls == 3
    assert server.authorizations == [f"Bearer {API_KEY}"] * 3
    write, route, copy = server.bodies
    assert (write["model"], write["temperature"]) == ("fake-model-1", 0.2)
    assert write["messages"] == [
        {"role": "system", "content": "Write a one-line slogan."},
        {"role": "user", "content": "a jazz festival"},
    ]
    assert route["messages"][0]["content"].startswith("Decide what to make from the slogan.")
    assert "- copy: more text" in route["messages"][0]["content"]
    assert route["messages"][1]["content"] == "Jazz under the stars"
    assert copy["messages"][0]["content"] == "Polish the copy."
    assert API_KEY not in _dump(server.bodies)

    # and every output records the exact model and the profile it ran on; the branch not chosen was skipped
    nodes = _nodes(run)
    assert {n: nodes[n].status for n in nodes} == {
        "brief": "done",
        "write": "done",
        "route": "done",
        "copy": "done",
        "poster": "skipped",
        "end": "done",
    }
    assert nodes["write"].output == {
        "text": "Jazz under the stars",
        "model": "fake-model-1",
        "provider": "openai_compat",
        "profile": "hosted",
        "preset": None,
    }
    assert (nodes["route"].output["choice"], nodes["route"].output["reason"]) == ("copy", "model")
    assert run.outputs["text"] == "Jazz under the stars, every Friday."

    # and the key is in no event, no stored run row, no log record and no API response
    base = f"/api/v1/workspaces/{workspace.pk}"
    responses = [client.get(f"{base}/flow-runs/{run.pk}/"), client.get(f"{base}/events/?after=0")]
    assert all(r.status_code == 200 for r in responses)
    haystacks = {
        "api responses": "".join(r.content.decode() for r in responses),
        "events": _dump(list(Event.objects.values())),
        "run rows": _dump([list(FlowRun.objects.values()), list(FlowNodeRun.objects.values())]),
        "log records": "\n".join(
            f"{record.getMessage()} {record.args!r} {record.exc_text or ''}" for record in caplog.records
        ),
    }
    for where, text in haystacks.items():
        assert API_KEY not in text, f"the provider key leaked into {where}"
    assert "Jazz under the stars" in haystacks["api responses"]  # the scan looked at real content


def test_it_fails_a_router_whose_model_names_no_route_with_a_code_and_no_fallback(
    workspace, alice, client_for, hosted, server, queue
):
    # given a router whose model answers with words that name none of its routes — though "poster" shares a
    # word with the text, which the offline stand-in would have followed
    flow = flow_create(workspace_id=workspace.pk, title="Slogans", graph=ROUTED, author_user=alice)
    server.reply(completion(content="A poster for the image festival"))
    server.reply(completion(content="I would rather make a banner."))

    # when it runs
    run = _run(client_for(alice), workspace, flow, "an image poster please")
    queue()

    # then the router failed with a machine-readable code and a message naming its routes; nothing after it ran
    run.refresh_from_db()
    nodes = _nodes(run)
    assert nodes["route"].status == NodeStatus.FAILED
    error = nodes["route"].error
    assert error["code"] == "router_no_route"
    assert "named none of its routes (copy, poster)" in error["message"]
    assert error["details"]["routes"] == ["copy", "poster"]
    assert error["details"]["named"] == []
    assert error["details"]["answer"] == "I would rather make a banner."
    assert {nodes[n].status for n in ("poster", "copy", "end")} == {NodeStatus.SKIPPED}
    assert (run.status, run.error["code"], run.error["failed"]) == (FlowRunStatus.FAILED, "no_finish", ["route"])
    assert server.calls == 2  # no second try, no other model
    event = Event.objects.filter(kind="flow.node", data__node="route", data__status="failed").get()
    assert event.data["error"]["code"] == "router_no_route"


def test_it_fails_a_router_whose_model_names_several_routes(workspace, alice, client_for, hosted, server, queue):
    flow = flow_create(workspace_id=workspace.pk, title="Slogans", graph=ROUTED, author_user=alice)
    server.reply(completion(content="Slogan"))
    server.reply(completion(content="Either `poster` or `copy`."))

    run = _run(client_for(alice), workspace, flow, "anything")
    queue()

    route = _nodes(run)["route"]
    assert (route.status, route.error["code"]) == (NodeStatus.FAILED, "router_ambiguous_route")
    assert route.error["details"]["named"] == ["copy", "poster"]


def test_it_fails_the_node_with_the_models_error_instead_of_answering_offline(
    workspace, alice, client_for, hosted, server, queue
):
    # given an endpoint that refuses the key
    flow = flow_create(workspace_id=workspace.pk, title="Slogans", graph=ROUTED, author_user=alice)
    server.fail(401, f"bad key {API_KEY}")

    # when the Flow runs
    run = _run(client_for(alice), workspace, flow, "a jazz festival")
    queue()

    # then the first model node failed with the adapter's code, and no stand-in answer was made up
    nodes = _nodes(run)
    assert (nodes["write"].status, nodes["write"].error["code"]) == (NodeStatus.FAILED, "model_auth")
    assert nodes["write"].output is None
    assert server.calls == 1
    assert API_KEY not in _dump([nodes["write"].error, list(Event.objects.values())])


def test_it_runs_a_node_on_a_named_profile_and_refuses_an_unknown_one(workspace, alice, client_for, server, queue):
    # given no default profile, a named one, and nodes naming it and a missing one
    ModelProfile.objects.create(
        workspace=workspace,
        name="writer",
        provider=ProviderKind.OPENAI_COMPAT,
        model="fake-writer",
        base_url=server.url,
        secret=secret_put(workspace_id=workspace.pk, name="writer-key", value=API_KEY),
    )
    graph = {
        "nodes": {
            "brief": {"type": "text_input"},
            "a": {"type": "generate_text", "params": {"instructions": "Shout.", "model_profile": "writer"}},
            "b": {"type": "generate_text", "params": {"instructions": "Whisper.", "model_profile": "nope"}},
            "c": {"type": "generate_text", "params": {"instructions": "Hum."}},
            # an inline lease could aim a stored key at any URL: refused, not silently ignored
            "d": {
                "type": "generate_text",
                "params": {"model_lease": {"provider": "openai_compat", "model": "x", "base_url": server.url}},
            },
            "end": {"type": "finish"},
        },
        "edges": [["brief", n] for n in "abcd"] + [[n, "end"] for n in "abcd"],
        "start": "brief",
    }
    # (node d's params are refused on create now: it is stored as before, for the check a node makes when it runs)
    flow = flow_stored_unchecked(workspace_id=workspace.pk, title="Profiles", graph=graph)
    server.reply(completion(content="LOUD", model="fake-writer"))

    # when it runs past the start check (as if the profile were renamed and the lease changed mid-run)
    with transaction.atomic():
        run, _ = runner.flow_run_create(workspace_id=workspace.pk, artifact_id=flow.pk, inputs={"text": "hello"})
        runner.flow_run_begin(run.pk)
    queue()

    # then the node naming a profile ran on it; those naming nothing valid failed with their code
    nodes = _nodes(run)
    assert nodes["a"].output["text"] == "LOUD" and nodes["a"].output["profile"] == "writer"
    assert server.authorizations == [f"Bearer {API_KEY}"]
    assert (nodes["b"].status, nodes["b"].error["code"]) == (NodeStatus.FAILED, "model_profile_not_found")
    assert (nodes["d"].status, nodes["d"].error["code"]) == (NodeStatus.FAILED, "invalid_params")
    # no profile at all: the embedded stand-in, the offline writer, which says what it is (and writes from the
    # input: "Hum." names no form of text, so it describes what it was given)
    c = nodes["c"].output
    assert {k: c[k] for k in ("text", "model", "provider", "profile", "preset", "writer", "form")} == {
        "text": "Hello.",
        "model": "offline-scripted",
        "provider": "scripted",
        "profile": None,
        "preset": None,
        "writer": "offline",
        "form": "description",
    }
    assert "offline writer" in c["note"]


def test_it_retries_a_retryable_model_error_within_the_turns_bounds_then_fails(
    workspace, alice, client_for, hosted, server, queue, settings
):
    settings.LOMOTE_MODEL_RETRY_BACKOFF = 0
    settings.LOMOTE_MODEL_MAX_ATTEMPTS = 3
    graph = {
        "nodes": {
            "brief": {"type": "text_input"},
            "a": {"type": "generate_text", "params": {"instructions": "A"}},
            "b": {"type": "generate_text", "params": {"instructions": "B"}},
            "end": {"type": "finish"},
        },
        "edges": [["brief", "a"], ["a", "b"], ["b", "end"]],
        "start": "brief",
    }
    flow = flow_create(workspace_id=workspace.pk, title="Retries", graph=graph, author_user=alice)
    # node a: one 500, then an answer; node b: 429 on every attempt
    server.fail(500).reply(completion(content="after one retry"))
    server.fail(429).fail(429).fail(429)

    run = _run(client_for(alice), workspace, flow, "go")
    queue()

    nodes = _nodes(run)
    assert (nodes["a"].status, nodes["a"].output["text"]) == (NodeStatus.DONE, "after one retry")
    assert (nodes["b"].status, nodes["b"].error["code"]) == (NodeStatus.FAILED, "model_rate_limited")
    assert server.calls == 2 + 3


@pytest.mark.parametrize(
    ("params", "code"),
    [
        ({"preset": 10**9}, "preset_not_found"),
        ({"model_profile": "nope"}, "model_profile_not_found"),
        ({"preset": "copywriter"}, "invalid_params"),
        (
            {"model_lease": {"provider": "openai_compat", "model": "x", "base_url": "http://example.com"}},
            "invalid_params",
        ),
    ],
)
def test_it_refuses_a_run_whose_model_node_cannot_resolve_before_holding_anything(
    workspace, alice, client_for, params, code
):
    # given a Flow with a paid image node upstream of a text node whose preset or profile does not resolve
    graph = {
        "nodes": {
            "brief": {"type": "text_input"},
            "poster": {"type": "generate_image", "params": {"prompt": "Poster: {input}"}},
            "caption": {"type": "generate_text", "params": params},
            "end": {"type": "finish"},
        },
        "edges": [["brief", "poster"], ["poster", "caption"], ["caption", "end"]],
        "start": "brief",
    }
    # (stored unchecked: some of these params are refused on create now; the run's check still guards older Flows)
    flow = flow_stored_unchecked(workspace_id=workspace.pk, title="Captioned", graph=graph)
    url = reverse("artifact-flow-runs", kwargs={"workspace_id": workspace.pk, "artifact_id": flow.pk})

    # when a person runs it
    response = client_for(alice).post(url, {"inputs": {"text": "jazz"}}, format="json")

    # then 400 with the reference's code and the node, and no run, order or event exists
    error = assert_error(response, 400, code)
    assert error["details"]["node"] == "caption"
    assert not FlowRun.objects.exists() and not Order.objects.exists()
    assert not Event.objects.filter(kind__startswith="flow.").exists()
