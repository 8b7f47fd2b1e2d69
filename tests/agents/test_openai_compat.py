"""The OpenAI-compatible provider against a real local HTTP server (tests/support/fake_openai.py).

What matters (DESIGN §10, §14; TESTING.md): one complete() is at most one HTTP request (no SDK retries, so a
timed-out paid inference is never sent twice), failures carry the right `retryable` flag, and the API key
reaches the server's Authorization header and nowhere else.
"""

import logging
import socket
import time
from types import SimpleNamespace

import pytest

from agents.exceptions import ModelConfigError, ModelError
from agents.models import ModelLease, ProviderKind, Task, Turn
from agents.providers import registry
from agents.providers.base import ModelRequest, ToolSpec
from agents.providers.openai_compat import OpenAICompatProvider
from agents.secrets import secret_put
from tests.support.fake_openai import FakeOpenAIServer, completion, error_body
from tests.support.ordering import run_before, wait_until

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("local_model_servers")]

API_KEY = "sk-lomote-test-4f9c2b7e1d8a6035"
MODEL = "fake-model-1"
TOOLS = [
    ToolSpec("read_task_state", "Read the task state.", {"type": "object", "properties": {}}),
    ToolSpec(
        "update_checklist",
        "Plan or progress the checklist.",
        {"type": "object", "properties": {"items": {"type": "array"}}},
    ),
]


@pytest.fixture(autouse=True)
def short_timeout(settings):
    settings.LOMOTE_MODEL_TIMEOUT = 0.5


@pytest.fixture
def server():
    with FakeOpenAIServer() as fake:
        yield fake


@pytest.fixture
def secret(workspace):
    return secret_put(workspace_id=workspace.pk, name="openai", value=API_KEY)


@pytest.fixture
def provider(server, secret):
    made = OpenAICompatProvider(model=MODEL, base_url=server.url, secret=secret, params={"temperature": 0.3})
    yield made
    made.close()


def _request(**overrides) -> ModelRequest:
    fields = {
        "model": MODEL,
        "params": {"temperature": 0.3},
        "messages": [
            {"role": "system", "content": "You are Lomote."},
            {"role": "user", "content": "Make 3 retro posters."},
        ],
        "tools": TOOLS,
        "state": {"step_index": 1},
    }
    return ModelRequest(**{**fields, **overrides})


def _error_of(provider, request=None) -> ModelError:
    with pytest.raises(ModelError) as caught:
        provider.complete(request or _request())
    return caught.value


def test_it_sends_the_conversation_tools_and_params_and_parses_tool_calls(server, provider):
    # given a server that answers with tool calls, one of them with empty arguments
    server.reply(
        completion(
            content="Planning.",
            tool_calls=[
                ("read_task_state", {}),
                ("update_checklist", {"items": [{"title": "Poster 1"}]}),
                ("read_task_state", ""),
            ],
            model="fake-model-1-2025-06-01",
            prompt_tokens=1200,
            completion_tokens=80,
            cached_tokens=1024,
        )
    )
    # when the provider completes a request
    response = provider.complete(_request())
    # then the server got the conversation, the tools with tool_choice auto, and the lease's params
    (body,) = server.bodies
    assert body["model"] == MODEL
    assert body["messages"] == _request().messages
    assert body["tools"] == [tool.as_openai() for tool in TOOLS]
    assert body["tool_choice"] == "auto"
    assert body["temperature"] == 0.3
    # and the response carries parsed intents, read from the server's structured calls
    assert response.text == "Planning."
    assert [(c.id, c.name, c.arguments, c.error) for c in response.tool_calls] == [
        ("call_0", "read_task_state", {}, None),
        ("call_1", "update_checklist", {"items": [{"title": "Poster 1"}]}, None),
        ("call_2", "read_task_state", {}, None),
    ]
    assert (response.call_format, response.repaired, response.tool_choice) == ("structured", False, "auto")
    # and usage with cached prompt tokens, and the exact model the server says answered
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (1200, 80)
    assert response.usage.cached_prompt_tokens == 1024
    assert response.model == "fake-model-1-2025-06-01"


def test_it_sends_no_tools_when_none_are_offered(server, provider):
    # when a request offers no tools
    response = provider.complete(_request(tools=[]))
    # then neither tools nor tool_choice is sent (several servers refuse tool_choice alone)
    (body,) = server.bodies
    assert "tools" not in body and "tool_choice" not in body
    assert response.tool_calls == []


def test_it_tolerates_missing_usage_and_empty_arguments(server, provider):
    # given a local server that reports no usage and sends "" for a call without arguments
    server.reply(completion(content=None, tool_calls=[("read_task_state", "")], usage=False))
    # when the provider completes
    response = provider.complete(_request())
    # then usage is zero rather than invented, and empty arguments mean {}
    assert (response.usage.prompt_tokens, response.usage.cached_prompt_tokens) == (0, 0)
    assert response.text == ""
    assert response.tool_calls[0].arguments == {}


def test_it_times_out_after_exactly_one_http_call(server, provider):
    # given a server that hangs far past the 0.5 s timeout
    server.hang(10)
    sent = []
    started = time.monotonic()
    # when the provider completes (every request the SDK makes goes through httpx2.Client.send, before it returns)
    with run_before("httpx2.Client.send", lambda client, request, **kwargs: sent.append(request.url)):
        error = _error_of(provider)
    elapsed = time.monotonic() - started
    # then it gave up on time with a retryable timeout, after one HTTP call and no hidden retry
    assert (error.code, error.retryable) == ("model_timeout", True)
    assert elapsed < 2.5
    assert len(sent) == 1
    wait_until(lambda: server.calls, what="the server receiving the request")
    assert server.calls == 1


def test_it_maps_429_then_500_to_retryable_errors_with_one_http_call_each(server, provider):
    # given a server that answers 429 (with Retry-After), then 500, then normally
    server.fail(429, "slow down", headers={"Retry-After": "2"})
    server.fail(500, "upstream exploded")
    # when the provider is called three times
    rate_limited = _error_of(provider)
    calls_after_first = server.calls
    unavailable = _error_of(provider)
    calls_after_second = server.calls
    response = provider.complete(_request())
    # then each failure is retryable with its own code, and each complete() was exactly one HTTP call
    assert (rate_limited.code, rate_limited.retryable) == ("model_rate_limited", True)
    assert rate_limited.details["retry_after"] == 2.0
    assert (unavailable.code, unavailable.retryable) == ("model_unavailable", True)
    assert (calls_after_first, calls_after_second, server.calls) == (1, 2, 3)
    assert response.text == "Hello from the fake model."


@pytest.mark.parametrize(
    ("status", "code"),
    [
        (400, "model_bad_request"),
        (401, "model_auth"),
        (403, "model_auth"),
        (404, "model_not_found"),
        (422, "model_bad_request"),
    ],
)
def test_it_maps_client_errors_to_non_retryable_errors(server, provider, status, code):
    # given a server refusing the request
    server.fail(status, "the model `fake-model-1` does not support tools")
    # when the provider completes
    error = _error_of(provider)
    # then the error is final (our loop must not try again) and was one HTTP call
    assert (error.code, error.retryable, error.details["status"]) == (code, False, status)
    assert server.calls == 1


def test_it_keeps_the_server_reason_for_a_bad_request(server, provider):
    server.fail(400, "tools are not supported by this model")
    error = _error_of(provider)
    assert "tools are not supported by this model" in error.message


def test_it_maps_an_unreachable_endpoint_to_a_retryable_error(secret):
    # given a base URL where nothing listens
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    provider = OpenAICompatProvider(model=MODEL, base_url=f"http://127.0.0.1:{port}/v1", secret=secret)
    # when the provider completes
    error = _error_of(provider)
    # then the failure is retryable: nothing reached a server, nothing can have been billed
    assert (error.code, error.retryable) == ("model_unavailable", True)


@pytest.mark.parametrize(
    "body", ["<html>502 Bad Gateway</html>", {"id": "x", "object": "chat.completion", "choices": []}]
)
def test_it_refuses_a_malformed_answer(server, provider, body):
    server.reply(body)
    error = _error_of(provider)
    assert (error.code, error.retryable) == ("model_bad_response", False)


def test_it_refuses_parameters_outside_the_whitelist_before_any_call(server, secret):
    # given a lease with a parameter the adapter does not know
    with pytest.raises(ModelConfigError) as caught:
        OpenAICompatProvider(model=MODEL, base_url=server.url, secret=secret, params={"api_base": "http://evil"})
    # then the lease is refused rather than silently trimmed
    assert caught.value.details["unsupported"] == ["api_base"]
    # and a request adding one is refused the same way, without an HTTP call
    provider = OpenAICompatProvider(model=MODEL, base_url=server.url, secret=secret)
    with pytest.raises(ModelConfigError):
        provider.complete(_request(params={"functions": []}))
    assert server.calls == 0


def test_it_refuses_a_request_for_another_model_than_the_lease(server, provider):
    # when the request names a different model from the one the lease fixed
    with pytest.raises(ModelConfigError) as caught:
        provider.complete(_request(model="gpt-other"))
    # then nothing is sent: a lease never changes silently
    assert caught.value.code == "model_mismatch"
    assert server.calls == 0


@pytest.mark.parametrize("base_url", ["", "ftp://example.com/v1", "example.com/v1"])
def test_it_refuses_a_lease_without_an_http_base_url(secret, base_url):
    with pytest.raises(ModelConfigError):
        OpenAICompatProvider(model=MODEL, base_url=base_url, secret=secret)


def test_it_sends_a_placeholder_and_never_the_environment_key_without_a_secret(server, monkeypatch):
    # given a keyless lease (a local Ollama, say) and an OpenAI key lying in the environment
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-environment-000000")
    provider = OpenAICompatProvider(model=MODEL, base_url=server.url, secret=None)
    # when the provider completes
    provider.complete(_request())
    # then the environment's key is not sent to this endpoint
    assert server.authorizations == ["Bearer no-key"]


def test_it_keeps_the_api_key_out_of_everything_but_the_authorization_header(server, provider, secret, caplog):
    # given every logger at DEBUG, including the SDK's and the HTTP stack's
    caplog.set_level(logging.DEBUG)
    for name in ("openai", "httpx2", "httpcore2", "agents"):
        caplog.set_level(logging.DEBUG, logger=name)
    # and a server that answers once, then echoes the key back in its error bodies
    server.reply(completion(tool_calls=[("read_task_state", {})]))
    for status in (400, 401, 500):
        server.reply(error_body(f"Incorrect API key provided: {API_KEY}"), status=status)
    server.hang(10)
    # when the provider succeeds once and fails every other way
    responses = [provider.complete(_request())]
    errors = [_error_of(provider) for _ in range(4)]
    # then the server received the key in the Authorization header of every call
    assert server.authorizations == [f"Bearer {API_KEY}"] * 5
    # but not in any prompt it was sent
    assert all(API_KEY not in str(body) for body in server.bodies)
    # and the key is in no response, error, repr or log record
    exposed = [repr(r) for r in responses]
    for error in errors:
        exposed += [str(error), repr(error), repr(error.details), repr(error.__context__), repr(error.__cause__)]
    exposed += [repr(provider), str(secret), repr(secret)]
    for record in caplog.records:
        exposed += [record.getMessage(), str(record.args), str(record.exc_text), str(record.exc_info)]
    assert [e.code for e in errors] == ["model_bad_request", "model_auth", "model_unavailable", "model_timeout"]
    assert caplog.records, "the loggers were expected to say something"
    assert not [text for text in exposed if API_KEY in text]
    assert "[redacted]" in errors[0].message  # the 400 reason is kept, minus the key


def test_it_is_built_for_a_lease_by_the_registry(server, secret, workspace):
    # given a turn whose lease points at the OpenAI-compatible endpoint
    task = Task.objects.create(workspace=workspace, title="Posters", brief="3 posters")
    turn = Turn.objects.create(task=task, number=1)
    lease = ModelLease.objects.create(
        turn=turn,
        provider=ProviderKind.OPENAI_COMPAT,
        model=MODEL,
        base_url=server.url,
        params={"temperature": 0.3},
        secret=secret,
    )
    # when the registry builds its provider and it completes
    provider = registry.provider_for_lease(ModelLease.objects.get(pk=lease.pk))
    response = provider.complete(_request())
    # then it is the OpenAI-compatible adapter, keyed and configured from the lease
    assert isinstance(provider, OpenAICompatProvider)
    assert server.authorizations == [f"Bearer {API_KEY}"]
    assert server.bodies[0]["temperature"] == 0.3
    assert response.model == MODEL


def test_it_needs_no_database_row_for_a_lease_like_object(server):
    # the registry only reads the lease's fields, so a plain object works for keyless endpoints
    lease = SimpleNamespace(provider="openai_compat", model=MODEL, base_url=server.url, params={}, secret=None)
    provider = registry.provider_for_lease(lease)
    assert provider.complete(_request(params={})).text == "Hello from the fake model."


def test_it_refuses_at_call_time_an_endpoint_that_is_no_longer_allowed(provider, server, settings):
    # given a profile saved while local servers were allowed, and an operator who no longer allows them
    settings.LOMOTE_MODEL_ALLOW_PRIVATE = False

    # when the model is called
    with pytest.raises(ModelConfigError) as refused:
        provider.complete(_request())

    # then it is refused, not retryable, and the server received nothing
    assert refused.value.code == "endpoint_refused" and refused.value.retryable is False
    assert refused.value.details["reason"] == "private" and server.calls == 0


def test_it_never_calls_the_metadata_service(secret):
    provider = OpenAICompatProvider(model=MODEL, base_url="http://169.254.169.254/latest/v1", secret=secret)
    with pytest.raises(ModelConfigError) as refused:
        provider.complete(_request())
    assert refused.value.code == "endpoint_refused" and refused.value.details["reason"] == "link_local"
