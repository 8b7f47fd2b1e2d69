"""Check a test client's response against the OpenAPI schema the API publishes, as schemathesis does live."""

import json
from functools import cache

import requests
import schemathesis
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.renderers import OpenApiJsonRenderer


@cache
def published_schema():
    """The schema `/api/schema/` serves, loaded by schemathesis (generated once per test session)."""
    document = SchemaGenerator().get_schema(request=None, public=True)
    return schemathesis.openapi.from_dict(json.loads(OpenApiJsonRenderer().render(document)))


def _matches(documented: str, received: str) -> bool:
    """Whether a received media type falls under a documented one (`*/*`, `image/*` or exact)."""
    (want_type, want_sub), (got_type, got_sub) = documented.split("/"), received.split(";")[0].strip().split("/")
    return want_type in ("*", got_type) and want_sub in ("*", got_sub)


def assert_conforms(response) -> None:
    """The response's status code and media type are documented for its operation, and its body matches."""
    request = response.wsgi_request
    operation = published_schema().find_operation_by_path(request.method, request.path)
    assert operation is not None, f"no documented operation for {request.method} {request.path}"
    assert operation.responses.find_by_status_code(response.status_code) is not None, (
        f"{response.status_code} is not documented for {operation.label}"
    )
    headers: dict[str, list[str]] = {name: [value] for name, value in response.headers.items()}
    answer = schemathesis.Response(
        status_code=response.status_code,
        headers=headers,
        content=b"".join(response.streaming_content) if response.streaming else response.content,
        request=requests.Request(request.method, f"http://testserver{request.get_full_path()}").prepare(),
        elapsed=0.0,
        verify=True,
    )
    documented = published_schema().get_content_types(operation, answer)
    received = response.headers.get("Content-Type", "")
    assert any(_matches(media_type, received) for media_type in documented), (
        f"{received} is not documented for {response.status_code} of {operation.label}: {documented}"
    )
    operation.validate_response(answer)
