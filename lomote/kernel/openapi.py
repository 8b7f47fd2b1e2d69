"""OpenAPI post-processing: error answers that any operation can give, documented once for all.

Authentication and throttling apply to every operation, and the JSON parser to every request body, so
their answers are not repeated in each view's `extend_schema`.
"""

from django.conf import settings

_METHODS = {"get", "put", "post", "patch", "delete"}


def _answers(operation: dict) -> dict[str, str]:
    answers = {
        "401": "No valid credentials: a session, `Authorization: Token …` or a workspace API key.",
        "429": "Too many requests from this principal; `details.wait_seconds` says when to try again.",
    }
    if "requestBody" in operation:
        answers["413"] = f"The body exceeds {settings.LOMOTE_MAX_JSON_BODY} bytes, whatever its fields allow."
        answers["415"] = "The body is not `application/json`."
    return answers


def document_common_errors(result, generator, request, public):
    error = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    for path_item in result.get("paths", {}).values():
        for method, operation in path_item.items():
            if method not in _METHODS:
                continue
            responses = operation.setdefault("responses", {})
            for status, description in _answers(operation).items():
                if status not in responses:
                    responses[status] = {"content": error, "description": description}
            operation["responses"] = dict(sorted(responses.items()))
    return result
