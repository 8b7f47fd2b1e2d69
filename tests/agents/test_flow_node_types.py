"""`GET …/flow-node-types/`: node types describe themselves — ports, params as JSON Schema, price (issue 34 item 2).

The schema published is the one the server validates with: what it accepts is stored, what it refuses is refused
with the field the schema names.
"""

import jsonschema
import pytest
from django.urls import reverse

from billing.services.pricing import PRICES
from tests.support.openapi import assert_conforms, published_schema
from tests.support.rest import assert_error
from workspace.flows.authoring import flow_create
from workspace.services.workspaces import workspace_create

pytestmark = pytest.mark.django_db


def _types(client, workspace):
    return client.get(reverse("flow-node-types", kwargs={"workspace_id": workspace.pk}))


@pytest.fixture
def described(workspace, carol, client_for):
    # a viewer reads them: describing node types changes nothing
    response = _types(client_for(carol), workspace)
    assert response.status_code == 200, response.content
    assert_conforms(response)
    return {t["name"]: t for t in response.json()["node_types"]}, response.json()["port_types"]


def test_it_describes_every_node_type_with_its_ports_and_port_types(described):
    types, port_types = described

    assert [p["name"] for p in port_types] == ["text", "image", "video", "3d", "document", "choice"]
    assert set(types) == {"text_input", "artifact_input", "generate_text", "generate_image", "generate_video",
                          "generate_3d", "router", "finish"}  # fmt: skip
    # where a run starts takes no wire; where it ends gives none
    assert types["text_input"]["inputs"] == [] and types["text_input"]["outputs"][0]["types"] == ["text"]
    assert types["finish"]["outputs"] == []
    # a router reads words only, and passes a choice on
    assert types["router"]["inputs"][0]["accepts"] == ["text", "document", "choice"]
    assert types["router"]["outputs"][0]["types"] == ["choice"]
    assert "image" in types["generate_video"]["inputs"][0]["accepts"]
    assert types["generate_video"]["outputs"][0]["types"] == ["video"]
    for each in types.values():
        assert each["title"] and each["description"]


def test_it_publishes_params_as_json_schema_with_titles_defaults_enums_and_limits(described):
    types, _ = described
    image = types["generate_image"]["params_schema"]
    video = types["generate_video"]["params_schema"]

    jsonschema.Draft202012Validator.check_schema(image)
    assert image["type"] == "object" and image["additionalProperties"] is False
    assert image["properties"]["prompt"]["default"] == "{input}" and image["properties"]["prompt"]["title"]
    assert image["properties"]["format"]["anyOf"][0]["enum"] == ["square", "portrait", "story", "wide", "logo"]
    assert "procedural" in image["properties"]["provider"]["anyOf"][0]["enum"]
    seconds = video["properties"]["generation_params"]["properties"]["seconds"]
    assert (seconds["default"], seconds["minimum"], seconds["maximum"]) == (5, 1, 60)
    assert "$defs" not in video and "$ref" not in str(video)  # a form builder reads it top down
    text = types["generate_text"]["params_schema"]["properties"]
    assert set(text) == {"prompt", "instructions", "preset", "preset_version", "model_profile"}
    assert text["instructions"]["maxLength"] == 4000


def test_it_prices_generation_nodes_at_billings_prices_and_the_others_free(described):
    types, _ = described

    video = types["generate_video"]["price"]
    assert video["paid"] is True and video["operation"] == "video.generate"
    assert video["credits_per_unit"] == PRICES["video.generate"].base
    assert (video["unit"], video["unit_param"]) == ("second", "generation_params.seconds")
    assert video["credits_default"] == PRICES["video.generate"].base * 5
    assert types["generate_3d"]["price"]["credits_default"] == PRICES["3d.generate"].base
    assert types["generate_image"]["price"]["credits_per_unit"] == PRICES["image.generate"].base
    for free in ("text_input", "artifact_input", "generate_text", "router", "finish"):
        assert types[free]["price"] == {"paid": False, "operation": None, "credits_default": 0}


@pytest.mark.parametrize(
    ("type_name", "params", "accepted"),
    [
        ("generate_image", {"prompt": "A poster of {input}", "format": "square"}, True),
        ("generate_image", {"format": "round"}, False),
        ("generate_image", {"prompt": "x", "colour": "red"}, False),
        ("generate_video", {"generation_params": {"seconds": 12}}, True),
        ("generate_video", {"generation_params": {"seconds": 61}}, False),
        ("generate_text", {"instructions": "Write a caption", "prompt": "{input}"}, True),
        ("generate_text", {"preset": "copywriter"}, False),
        ("router", {"routes": {"copy": "a slogan"}, "default": "copy"}, True),
        ("router", {"routes": {"a b": "x"}}, False),
        ("text_input", {"default": "jazz"}, True),
        ("finish", {"x": 1}, False),
    ],
)
def test_the_published_schema_and_the_server_agree(described, workspace, alice, type_name, params, accepted):
    # given the schema the editor builds its form from
    schema = described[0][type_name]["params_schema"]
    said = jsonschema.Draft202012Validator(schema).is_valid(params)

    # when a Flow holding a node of that type with those params is created
    graph = {"nodes": {"brief": {"type": "text_input"}, "n": {"type": type_name, "params": params}}, "edges": []}
    try:
        flow_create(workspace_id=workspace.pk, title="Check", graph=graph, author_user=alice)
        stored = True
    except Exception as refused:  # noqa: BLE001 - the assertion below names what was refused
        assert getattr(refused, "code", None) == "invalid_node_params", refused
        stored = False

    # then the server decides as the schema says
    assert said is accepted and stored is accepted


def test_it_hides_node_types_from_a_non_member(workspace, dave, client_for):
    workspace_create(user=dave, name="Dave's")

    assert_error(_types(client_for(dave), workspace), 404, "not_found")


def test_it_is_in_the_openapi_schema():
    operation = published_schema().find_operation_by_path("GET", "/api/v1/workspaces/1/flow-node-types/")
    raw = operation.definition.raw
    assert raw["operationId"] == "flow_node_types_list"
    assert "invalid_node_params" in raw["description"] and "wire_type_mismatch" in raw["description"]
    assert "200" in raw["responses"] and "404" in raw["responses"]
