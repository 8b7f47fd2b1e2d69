"""A Flow's node params and wires checked against the node types' declarations (issue 34 item 2).

Over REST: creating a Flow (`POST …/artifacts/`) and editing one (`POST …/flow/edits/`) answer 400 with a code
naming the node and the field, or both ends of a wire, and write nothing.
"""

import json

import pytest
from django.urls import reverse

from tests.contracts.world import FLOW as CONTRACT_FLOW
from tests.support.factories import ArtifactFactory
from tests.support.rest import assert_error
from workspace.flows.authoring import flow_create, flow_edit
from workspace.flows.graph import graph_load
from workspace.flows.nodes import NODE_TYPES
from workspace.models import Artifact, ArtifactVersion
from workspace.selectors import artifact_version_get
from workspace.services.workspaces import workspace_create

pytestmark = pytest.mark.django_db

POSTER = {
    "nodes": {
        "brief": {"type": "text_input"},
        "poster": {"type": "generate_image", "params": {"prompt": "Poster: {input}", "format": "portrait"}},
        "caption": {"type": "generate_text", "params": {"instructions": "Write a caption"}},
        "end": {"type": "finish"},
    },
    "edges": [["brief", "poster"], ["poster", "caption"], ["caption", "end"], ["poster", "end"]],
    "start": "brief",
}


def _create(client, workspace, graph):
    url = reverse("artifact-list", kwargs={"workspace_id": workspace.pk})
    return client.post(url, {"kind": "flow", "title": "Posters", "graph": graph}, format="json")


def _edit(client, flow, **body):
    url = reverse("artifact-flow-edits", kwargs={"workspace_id": flow.workspace_id, "artifact_id": flow.pk})
    return client.post(url, {"base_version": flow.current_version, **body}, format="json")


def _with(graph, node_id, **node):
    nodes = {**graph["nodes"], node_id: node}
    return {**graph, "nodes": nodes}


def test_it_accepts_the_flows_the_suites_and_the_contract_world_build(workspace, alice):
    # given the contract world's Flow, the poster Flow above and one node of each type with its params filled
    every = {
        "nodes": {
            "brief": {"type": "text_input", "params": {"default": "jazz"}},
            "sheet": {"type": "artifact_input", "params": {}},
            "route": {"type": "router", "params": {"routes": {"copy": "words"}, "default": "copy"}},
            "copy": {"type": "generate_text", "params": {"prompt": "A caption for {input}", "instructions": "Warm"}},
            "clip": {"type": "generate_video", "params": {"generation_params": {"seconds": 8, "fps": 8}}},
            "model": {"type": "generate_3d", "params": {"generation_params": {"shape": "torus"}}},
            "end": {"type": "finish"},
        },
        "edges": [["brief", "route"], ["route", "copy"], ["copy", "clip"], ["copy", "model"], ["clip", "end"]],
        "start": "brief",
    }
    # when each is created, then each is stored
    for graph in (CONTRACT_FLOW, POSTER, every):
        flow = flow_create(workspace_id=workspace.pk, title="ok", graph=graph, author_user=alice)
        assert set(graph_load(flow.versions.get().content)["nodes"]) == set(graph["nodes"])
    assert set(NODE_TYPES) == {"text_input", "artifact_input", "router", "generate_text", "generate_image",
                               "generate_video", "generate_3d", "finish"}  # fmt: skip


@pytest.mark.parametrize(
    ("node", "field", "pydantic_code"),
    [
        ({"type": "generate_image", "params": {"prompt": "x", "format": "round"}}, "format", "literal_error"),
        ({"type": "generate_image", "params": {"promt": "typo"}}, "promt", "extra_forbidden"),
        ({"type": "generate_image", "params": {"prompt": ""}}, "prompt", "string_too_short"),
        ({"type": "generate_video", "params": {"generation_params": {"seconds": 600}}},
         "generation_params.seconds", "less_than_equal"),
        ({"type": "generate_video", "params": {"generation_params": {"seconds": "5"}}},
         "generation_params.seconds", "int_type"),
        ({"type": "generate_video", "params": {"generation_params": {"seconds": True}}},
         "generation_params.seconds", "int_type"),
        ({"type": "generate_text", "params": {"preset": "copywriter"}}, "preset", "int_type"),
        ({"type": "generate_text", "params": {"instructions": 12}}, "instructions", "string_type"),
        ({"type": "generate_text", "params": {"model_lease": {"provider": "openai_compat"}}}, "model_lease",
         "extra_forbidden"),
        ({"type": "generate_text", "params": {"preset": 3, "instructions": "x"}}, "preset", "invalid_combination"),
        ({"type": "generate_text", "params": {"preset_version": 2}}, "preset_version", "invalid_combination"),
        ({"type": "router", "params": {"routes": {"a b": "x"}}}, "routes.a b.[key]", "string_pattern_mismatch"),
        ({"type": "artifact_input", "params": {"artifact_id": 0}}, "artifact_id", "greater_than_equal"),
        ({"type": "artifact_input", "params": {"artifact_id": 10**30}}, "artifact_id", "less_than_equal"),
        ({"type": "finish", "params": {"note": "edited"}}, "note", "extra_forbidden"),
        # the provider's own check of its parameters, as a job submission makes it
        ({"type": "generate_image", "params": {"generation_params": {"palette": "mauve"}}},
         "generation_params.palette", "invalid"),
        ({"type": "generate_image", "params": {"provider": "nowhere"}}, "provider", "unknown_provider"),
    ],
)  # fmt: skip
def test_it_refuses_params_their_type_does_not_accept_naming_the_node_and_the_field(
    workspace, alice, client_for, node, field, pydantic_code
):
    # given a Flow whose node "n" has params its type refuses
    graph = _with({**POSTER, "edges": [["brief", "end"]]}, "n", **node)

    # when a person creates it over REST
    response = _create(client_for(alice), workspace, graph)

    # then 400 invalid_node_params naming the node, its type and the field, and no Flow exists
    error = assert_error(response, 400, "invalid_node_params")
    assert (error["details"]["node"], error["details"]["type"]) == ("n", node["type"])
    assert error["details"]["field"] == field
    assert error["details"]["errors"][0]["code"] == pydantic_code
    assert "'n'" in error["message"] and field in error["message"]
    assert not Artifact.objects.filter(kind="flow").exists()


def test_it_refuses_an_edit_whose_params_are_invalid_and_writes_nothing(workspace, alice, client_for):
    flow = flow_create(workspace_id=workspace.pk, title="Posters", graph=POSTER, author_user=alice)

    response = _edit(client_for(alice), flow, node_edits={"poster": {"params": {"prompt": "x", "format": "huge"}}})

    error = assert_error(response, 400, "invalid_node_params")
    assert (error["details"]["node"], error["details"]["field"]) == ("poster", "format")
    assert ArtifactVersion.objects.filter(artifact=flow).count() == 1


def test_it_checks_an_added_node_and_a_node_whose_type_changes(workspace, alice, client_for):
    flow = flow_create(workspace_id=workspace.pk, title="Posters", graph=POSTER, author_user=alice)
    client = client_for(alice)

    added = _edit(client, flow, add_nodes={"clip": {"type": "generate_video", "params": {"seconds": 5}}})
    retyped = _edit(client, flow, node_edits={"caption": {"type": "generate_image"}})

    # the video's length belongs in its provider parameters; a text node's instructions mean nothing to an image
    assert assert_error(added, 400, "invalid_node_params")["details"]["field"] == "seconds"
    assert assert_error(retyped, 400, "invalid_node_params")["details"]["field"] == "instructions"
    assert flow.versions.count() == 1


def test_it_accepts_a_valid_edit_and_leaves_untouched_legacy_nodes_alone(workspace, alice):
    # given a Flow stored before node types declared their params (a node with a param no type knows)
    flow = flow_create(workspace_id=workspace.pk, title="Posters", graph=POSTER, author_user=alice)
    legacy = graph_load(flow.versions.get().content)
    legacy["nodes"]["end"]["params"] = {"note": "kept"}
    ArtifactVersion.objects.filter(artifact=flow).update(content=json.dumps(legacy))

    # when someone edits another node with valid params
    edit = flow_edit(
        workspace_id=workspace.pk,
        artifact_id=flow.pk,
        base_version=1,
        node_edits={"caption": {"params": {"prompt": "Three titles for {input}"}}},
        author_user=alice,
    )

    # then the edit lands and the legacy node keeps its params
    graph = graph_load(edit.version.content)
    assert graph["nodes"]["caption"]["params"] == {"prompt": "Three titles for {input}"}
    assert graph["nodes"]["end"]["params"] == {"note": "kept"}


@pytest.mark.parametrize(
    ("extra_node", "edge", "from_types", "accepts"),
    [
        # an image into a router, which reads words only
        ({"route": {"type": "router", "params": {}}}, ["poster", "route"], ["image"], ["text", "document", "choice"]),
        # a clip cannot be the source of a picture
        (
            {"clip": {"type": "generate_video"}, "still": {"type": "generate_image"}},
            ["clip", "still"],
            ["video"],
            ["text", "document", "choice", "image"],
        ),
        # nothing leaves a finish node
        (
            {"more": {"type": "generate_text"}},
            ["end", "more"],
            [],
            ["text", "document", "choice", "image", "video", "3d"],
        ),
    ],
)
def test_it_refuses_a_wrong_wire_naming_both_ends_and_the_reason(
    workspace, alice, client_for, extra_node, edge, from_types, accepts
):
    flow = flow_create(workspace_id=workspace.pk, title="Posters", graph=POSTER, author_user=alice)
    client = client_for(alice)
    if extra_node:
        assert _edit(client, flow, add_nodes=extra_node).status_code == 200
        flow.refresh_from_db()

    response = _edit(client, flow, add_edges=[edge])

    error = assert_error(response, 400, "wire_type_mismatch")
    a, b = edge
    assert error["details"]["edge"] == [a, b]
    assert error["details"]["from"]["node"] == a and error["details"]["from"]["types"] == from_types
    assert error["details"]["to"]["node"] == b and error["details"]["to"]["accepts"] == accepts
    assert f"{a} → {b}" in error["message"]
    assert flow.versions.count() == flow.current_version


def test_it_refuses_a_wire_into_the_start_node_on_create(workspace, alice, client_for):
    graph = _with(POSTER, "note", type="generate_text")
    graph = {**graph, "edges": [*POSTER["edges"], ["note", "brief"]], "start": None}

    error = assert_error(_create(client_for(alice), workspace, graph), 400, "wire_type_mismatch")

    assert error["details"]["to"] == {"node": "brief", "type": "text_input", "port": None, "accepts": []}


def test_it_types_an_artifact_input_by_its_artifact_and_rechecks_wires_when_it_changes(workspace, alice, client_for):
    # given a document and an image of the workspace, and a Flow reading the document into a router
    document = ArtifactFactory(workspace=workspace, kind="document", title="Brief", content="Jazz night")
    image = ArtifactFactory(workspace=workspace, kind="image", title="Photo")
    graph = {
        "nodes": {
            "brief": {"type": "text_input"},
            "sheet": {"type": "artifact_input", "params": {"artifact_id": document.pk}},
            "route": {"type": "router"},
            "end": {"type": "finish"},
        },
        "edges": [["brief", "route"], ["sheet", "route"], ["route", "end"]],
        "start": "brief",
    }
    flow = flow_create(workspace_id=workspace.pk, title="Read", graph=graph, author_user=alice)

    # when the input is pointed at the image
    response = _edit(client_for(alice), flow, node_edits={"sheet": {"params": {"artifact_id": image.pk}}})

    # then its wire into the router is refused: it now carries an image
    error = assert_error(response, 400, "wire_type_mismatch")
    assert error["details"]["from"] == {"node": "sheet", "type": "artifact_input", "port": "out", "types": ["image"]}


def test_it_answers_another_workspaces_artifact_as_a_missing_one(workspace, alice, dave, client_for):
    # given dave's artifact, and an id that exists nowhere
    theirs = ArtifactFactory(workspace=workspace_create(user=dave, name="Dave's"), title="Secret")
    answers = []
    for artifact_id in (theirs.pk, 10**12):
        graph = _with(POSTER, "sheet", type="artifact_input", params={"artifact_id": artifact_id})

        # when alice names it in an artifact_input
        answers.append(_create(client_for(alice), workspace, graph))

    # then both get the same 404, word for word, and nothing is written
    errors = [assert_error(response, 404, "not_found") for response in answers]
    assert errors[0] == errors[1] and errors[0]["details"] == {"node": "sheet", "field": "artifact_id"}
    assert not Artifact.objects.filter(workspace=workspace, kind="flow").exists()


def test_it_refuses_an_artifact_input_reading_a_flow(workspace, alice, client_for):
    other = flow_create(workspace_id=workspace.pk, title="Other", graph=POSTER, author_user=alice)
    graph = _with(POSTER, "sheet", type="artifact_input", params={"artifact_id": other.pk})

    error = assert_error(_create(client_for(alice), workspace, graph), 400, "invalid_node_params")

    assert (error["details"]["field"], error["details"]["errors"][0]["code"]) == ("artifact_id", "unreadable_kind")


def test_it_sets_the_start_node_through_an_edit(workspace, alice, client_for):
    # given an empty Flow, as "New Flow" makes it
    flow = flow_create(workspace_id=workspace.pk, title="Empty", graph=None, author_user=alice)

    # when the editor adds an input and a finish, wires them and names the start in one edit
    response = _edit(
        client_for(alice),
        flow,
        add_nodes={"brief": {"type": "text_input", "params": {}}, "end": {"type": "finish", "params": {}}},
        add_edges=[["brief", "end"]],
        start="brief",
    )

    # then the Flow is runnable from that node
    assert response.status_code == 200, response.content
    graph = graph_load(artifact_version_get(workspace_id=workspace.pk, artifact_id=flow.pk).content)
    assert graph["start"] == "brief"
