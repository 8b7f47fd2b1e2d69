"""OPTIONS on any API endpoint describes it (methods, media types, where the schema is) and never fails.

DRF's stock metadata asked PUT views for `get_object()`, which our views do not implement (they resolve
objects through selectors), so OPTIONS on `.../document/` and `.../replace/` answered 500 (issue 10).
"""

import re

import pytest
from drf_spectacular.generators import SchemaGenerator

pytestmark = pytest.mark.django_db

METHODS = {"get", "post", "put", "patch", "delete"}


def _documented() -> dict[str, tuple[set[str], set[str]]]:
    """Each path's methods, and the media types its request bodies are documented in (JSON when it has none:
    the default parser)."""
    schema = SchemaGenerator().get_schema(request=None, public=True)
    documented = {}
    for path, item in schema["paths"].items():
        bodies = {media for m in item if m in METHODS for media in item[m].get("requestBody", {}).get("content", {})}
        documented[path] = ({m.upper() for m in item if m in METHODS}, bodies or {"application/json"})
    return documented


def test_it_answers_options_on_every_endpoint_with_its_methods(workspace, alice, client_for):
    # given every path the schema publishes, with the owner's workspace and ids that need not exist
    client = client_for(alice)
    failures = []
    for template, (methods, media_types) in _documented().items():
        path = re.sub(r"\{workspace_id\}", str(workspace.pk), template)
        path = re.sub(r"\{[a-z_]+\}", "1", path)

        # when a client asks what the endpoint accepts
        response = client.options(path)

        # then it says so: 200, the methods the schema documents, the media types and the schema's address
        if response.status_code != 200:
            failures.append((template, response.status_code, response.content[:200]))
            continue
        allowed = {m.strip() for m in response["Allow"].split(",")}
        body = response.json()
        if not methods <= allowed or body.get("schema") != "/api/schema/" or not media_types <= set(body["parses"]):
            failures.append((template, sorted(allowed), body))
    assert failures == []


def test_it_does_not_describe_output_fields_as_input(workspace, alice, client_for):
    # when the owner asks what the document endpoint accepts
    response = client_for(alice).options(f"/api/v1/workspaces/{workspace.pk}/artifacts/1/document/")

    # then the answer points at the schema rather than listing the output serializer's fields as PUT input
    assert response.status_code == 200
    assert "actions" not in response.json()
