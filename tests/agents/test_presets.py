"""Assistant presets: stored, versioned, workspace-scoped (seed 002's AiAssistant), and used by Flow nodes.

REST under /api/v1/workspaces/<id>/assistant-presets/. Every edit names its base version and makes the next one;
a node refers to a preset by id and runs its latest version, or the version it pins.
"""

import pytest
from django.contrib.admin.sites import site
from django.db import transaction
from django.test import RequestFactory

from agents.models import AssistantPreset, AssistantPresetVersion, ModelProfile, ProviderKind
from agents.secrets import secret_put
from tests.support.factories import WorkspaceFactory, flow_stored_unchecked
from tests.support.fake_openai import FakeOpenAIServer, completion
from tests.support.rest import assert_error
from workspace.flows import runner
from workspace.flows.authoring import flow_create
from workspace.models import Event, FlowNodeRun, FlowRun, NodeStatus

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("local_model_servers")]

API_KEY = "sk-test-PRESET-key-0c4f2b7d"


def _url(workspace, preset=None, suffix=""):
    base = f"/api/v1/workspaces/{workspace.pk}/assistant-presets/"
    return base if preset is None else f"{base}{preset}/{suffix}"


def _facts():
    return (
        list(AssistantPreset.objects.order_by("pk").values_list("pk", "name", "instructions", "params", "version")),
        list(AssistantPresetVersion.objects.order_by("pk").values_list("preset_id", "number", "instructions")),
        Event.objects.filter(kind="assistant_preset").count(),
    )


@pytest.fixture
def queue(monkeypatch):
    sent: list[tuple[str, int]] = []
    monkeypatch.setattr(runner, "_enqueue", lambda function, node_run_id: sent.append((function, node_run_id)))

    def drain():
        while sent:
            function, node_run_id = sent.pop(0)
            getattr(runner, function)(node_run_id)

    return drain


def test_it_creates_edits_and_versions_a_preset_that_nodes_run_with(workspace, alice, bob, client_for, queue):
    with FakeOpenAIServer() as server:
        # given a hosted profile (not the default) and an editor
        profile = ModelProfile.objects.create(
            workspace=workspace,
            name="hosted",
            provider=ProviderKind.OPENAI_COMPAT,
            model="fake-model-1",
            base_url=server.url,
            params={"temperature": 0.9},
            secret=secret_put(workspace_id=workspace.pk, name="k", value=API_KEY),
        )
        client = client_for(bob)

        # when the editor creates a preset on it
        created = client.post(
            _url(workspace),
            {
                "name": "Copywriter",
                "instructions": "Write one slogan.",
                "params": {"temperature": 0.3},
                "model_profile": profile.pk,
            },
            format="json",
        )

        # then it is version 1, stored with its first version
        assert created.status_code == 201, created.content
        preset = created.json()
        assert (preset["version"], preset["model_profile"], preset["params"]) == (1, profile.pk, {"temperature": 0.3})

        # when they edit its instructions on version 1
        edited = client.patch(
            _url(workspace, preset["id"]),
            {"base_version": 1, "instructions": "Write one slogan, in French."},
            format="json",
        )

        # then it is version 2, and both versions are kept, newest first
        assert edited.status_code == 200, edited.content
        assert (edited.json()["version"], edited.json()["instructions"]) == (2, "Write one slogan, in French.")
        versions = client.get(_url(workspace, preset["id"], "versions/")).json()["results"]
        assert [(v["number"], v["instructions"]) for v in versions] == [
            (2, "Write one slogan, in French."),
            (1, "Write one slogan."),
        ]
        assert [e.data["version"] for e in Event.objects.filter(kind="assistant_preset").order_by("seq")] == [1, 2]

        # when a Flow uses it twice: latest, and pinned to version 1
        graph = {
            "nodes": {
                "brief": {"type": "text_input"},
                "latest": {"type": "generate_text", "params": {"preset": preset["id"]}},
                "pinned": {"type": "generate_text", "params": {"preset": preset["id"], "preset_version": 1}},
                "end": {"type": "finish"},
            },
            "edges": [["brief", "latest"], ["brief", "pinned"], ["latest", "end"], ["pinned", "end"]],
            "start": "brief",
        }
        flow = flow_create(workspace_id=workspace.pk, title="Preset", graph=graph, author_user=bob)
        server.default.body = completion(content="Le jazz sous les étoiles")
        response = client.post(
            f"/api/v1/workspaces/{workspace.pk}/artifacts/{flow.pk}/flow/runs/",
            {"inputs": {"text": "jazz festival"}},
            format="json",
        )
        assert response.status_code == 201, response.content
        queue()

        # then each node ran with its preset version's instructions and params, on the preset's profile and key
        assert server.authorizations == [f"Bearer {API_KEY}"] * 2
        systems = sorted((b["messages"][0]["content"], b["temperature"]) for b in server.bodies)
        assert systems == [("Write one slogan, in French.", 0.3), ("Write one slogan.", 0.3)]
    run = FlowRun.objects.get(pk=response.json()["id"])
    outputs = {n.node_id: n.output for n in FlowNodeRun.objects.filter(run=run, node_id__in=["latest", "pinned"])}
    assert outputs["latest"]["preset"] == {"id": preset["id"], "version": 2}
    assert outputs["pinned"]["preset"] == {"id": preset["id"], "version": 1}
    assert outputs["latest"]["profile"] == "hosted" and outputs["latest"]["model"] == "fake-model-1"


def test_it_runs_a_preset_without_profile_on_the_workspace_default_and_fails_a_missing_one(workspace, alice, queue):
    # given a preset with no profile, in a workspace whose default is the embedded scripted model
    echo = AssistantPreset.objects.create(workspace=workspace, name="Echo", instructions="Repeat", version=1)
    AssistantPresetVersion.objects.create(preset=echo, number=1, name="Echo", instructions="Repeat")
    other = WorkspaceFactory(name="Elsewhere", created_by=alice)
    foreign = AssistantPreset.objects.create(workspace=other, name="Foreign", instructions="x", version=1)
    AssistantPresetVersion.objects.create(preset=foreign, number=1, name="Foreign", instructions="x")
    graph = {
        "nodes": {
            "brief": {"type": "text_input"},
            "echo": {"type": "generate_text", "params": {"preset": echo.pk}},
            "future": {"type": "generate_text", "params": {"preset": echo.pk, "preset_version": 9}},
            "foreign": {"type": "generate_text", "params": {"preset": foreign.pk}},
            "both": {"type": "generate_text", "params": {"preset": echo.pk, "instructions": "x"}},
            "end": {"type": "finish"},
        },
        "edges": [["brief", n] for n in ("echo", "future", "foreign", "both")]
        + [[n, "end"] for n in ("echo", "future", "foreign", "both")],
        "start": "brief",
    }
    # (node "both" is refused on create now: it is stored as before, for the check a node makes when it runs)
    flow = flow_stored_unchecked(workspace_id=workspace.pk, title="Presets", graph=graph)

    with transaction.atomic():
        run, _ = runner.flow_run_create(workspace_id=workspace.pk, artifact_id=flow.pk, inputs={"text": "hi"})
        runner.flow_run_begin(run.pk)
    queue()

    nodes = {n.node_id: n for n in FlowNodeRun.objects.filter(run=run)}
    # the preset's instructions reach the embedded stand-in, the offline writer, which writes from the input
    assert (nodes["echo"].output["text"], nodes["echo"].output["writer"]) == ("Hi.", "offline")
    assert nodes["echo"].output["preset"] == {"id": echo.pk, "version": 1}
    assert (nodes["future"].status, nodes["future"].error["code"]) == (NodeStatus.FAILED, "preset_version_not_found")
    # another workspace's preset is as missing as a deleted one
    assert (nodes["foreign"].status, nodes["foreign"].error["code"]) == (NodeStatus.FAILED, "preset_not_found")
    assert (nodes["both"].status, nodes["both"].error["code"]) == (NodeStatus.FAILED, "invalid_params")


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"name": ""}, 400, "invalid"),
        ({"name": "X", "params": {"api_key": "sk-x"}}, 400, "invalid_params"),
        ({"name": "X", "params": ["temperature"]}, 400, "invalid"),
        ({"name": "X", "instructions": 12}, 400, "invalid"),
        ({"name": "X", "colour": "red"}, 400, "invalid"),
        ({"name": "X", "model_profile": "hosted"}, 400, "invalid"),
        ({"name": "Copywriter"}, 409, "preset_name_taken"),
    ],
)
def test_it_refuses_bad_preset_input_and_changes_nothing(workspace, bob, client_for, body, status, code):
    client = client_for(bob)
    assert client.post(_url(workspace), {"name": "Copywriter"}, format="json").status_code == 201
    before = _facts()

    assert_error(client.post(_url(workspace), body, format="json"), status, code)

    assert _facts() == before


def test_it_refuses_another_workspaces_profile_a_stale_edit_and_a_viewer(workspace, alice, bob, carol, client_for):
    other = WorkspaceFactory(name="Elsewhere", created_by=alice)
    foreign_profile = ModelProfile.objects.create(workspace=other, name="theirs", provider=ProviderKind.SCRIPTED)
    client = client_for(bob)
    preset = client.post(_url(workspace), {"name": "Copywriter"}, format="json").json()
    edit = client.patch(_url(workspace, preset["id"]), {"base_version": 1, "instructions": "v2"}, format="json")
    assert edit.status_code == 200, edit.content
    before = _facts()

    error = assert_error(
        client.post(_url(workspace), {"name": "Y", "model_profile": foreign_profile.pk}, format="json"),
        400,
        "unknown_model_profile",
    )
    assert error["details"]["fields"] == {"model_profile": ["No such model profile in this workspace."]}
    stale = assert_error(
        client.patch(_url(workspace, preset["id"]), {"base_version": 1, "instructions": "v3"}, format="json"),
        409,
        "version_conflict",
    )
    assert stale["details"]["current_version"] == 2
    assert_error(client.patch(_url(workspace, preset["id"]), {"base_version": 2}, format="json"), 400, "invalid")
    assert_error(
        client_for(carol).patch(_url(workspace, preset["id"]), {"base_version": 2, "name": "Z"}, format="json"),
        403,
        "role_required",
    )
    assert_error(client_for(carol).delete(_url(workspace, preset["id"])), 403, "role_required")

    assert _facts() == before
    # a viewer reads it
    assert client_for(carol).get(_url(workspace, preset["id"])).json()["version"] == 2


def test_it_hides_a_preset_from_another_workspace_and_from_outsiders(workspace, alice, bob, dave, client_for):
    # given a preset in `workspace`, and dave, owner of another workspace
    preset = client_for(bob).post(_url(workspace), {"name": "Copywriter"}, format="json").json()
    elsewhere = WorkspaceFactory(name="Dave's", created_by=dave)
    before = _facts()
    dave_client = client_for(dave)

    # then through his own workspace's URLs the preset does not exist, and its own workspace is hidden from him
    for path in ("", "versions/"):
        assert_error(dave_client.get(_url(elsewhere, preset["id"], path)), 404, "not_found")
    assert_error(
        dave_client.patch(_url(elsewhere, preset["id"]), {"base_version": 1, "name": "Mine"}, format="json"),
        404,
        "not_found",
    )
    assert_error(dave_client.delete(_url(elsewhere, preset["id"])), 404, "not_found")
    assert_error(dave_client.get(_url(workspace, preset["id"])), 404, "not_found")
    assert_error(dave_client.get(_url(workspace)), 404, "not_found")
    assert dave_client.get(_url(elsewhere)).json()["results"] == []
    assert _facts() == before


def test_it_deletes_a_preset_with_its_versions(workspace, bob, client_for):
    client = client_for(bob)
    preset = client.post(_url(workspace), {"name": "Copywriter"}, format="json").json()

    assert client.delete(_url(workspace, preset["id"])).status_code == 204

    assert not AssistantPreset.objects.exists() and not AssistantPresetVersion.objects.exists()
    assert_error(client.get(_url(workspace, preset["id"])), 404, "not_found")


def test_it_versions_an_edit_made_in_the_admin(workspace, make_user):
    # given a preset at version 1 and an operator
    operator = make_user("operator")
    operator.is_staff = operator.is_superuser = True
    operator.save()
    model_admin = site._registry[AssistantPreset]
    request = RequestFactory().post("/")
    request.user = operator
    preset = AssistantPreset(workspace=workspace, name="Ops", instructions="v1")
    model_admin.save_model(request, preset, form=None, change=False)

    # when they change its instructions, then save it unchanged
    preset = AssistantPreset.objects.get(pk=preset.pk)
    preset.instructions = "v2"
    model_admin.save_model(request, preset, form=None, change=True)
    model_admin.save_model(request, AssistantPreset.objects.get(pk=preset.pk), form=None, change=True)

    # then there are exactly two versions
    assert AssistantPreset.objects.get(pk=preset.pk).version == 2
    assert list(preset.versions.order_by("number").values_list("number", "instructions")) == [(1, "v1"), (2, "v2")]


def test_it_refuses_bad_params_on_the_admin_form_with_the_apis_rule(workspace):
    from agents.admin import AssistantPresetForm

    # given the admin's form for a new preset with a parameter the adapters refuse
    form = AssistantPresetForm(
        data={"workspace": workspace.pk, "name": "Ops", "instructions": "", "params": '{"api_key": "sk-x"}'}
    )

    # then it is a form error, and nothing is stored
    assert not form.is_valid()
    assert "Unsupported model parameters: api_key." in str(form.errors)
    assert not AssistantPreset.objects.exists()
