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


def assert_conforms(response) -> None:
    """The response's status code is documented for its operation, and its body matches that schema."""
    request = response.wsgi_request
    operation = published_schema().find_operation_by_path(request.method, request.path)
    assert operation is not None, f"no documented operation for {request.method} {request.path}"
    assert operation.responses.find_by_status_code(response.status_code) is not None, (
        f"{response.status_code} is not documented for {operation.label}"
    )
    headers: dict[str, list[str]] = {name: [value] for name, value in response.headers.items()}
    operation.validate_response(
        schemathesis.Response(
            status_code=response.status_code,
            headers=headers,
            content=response.content,
            request=requests.Request(request.method, f"http://testserver{request.get_full_path()}").prepare(),
            elapsed=0.0,
            verify=True,
        )
    )
