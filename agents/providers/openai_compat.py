"""Any OpenAI-compatible chat endpoint (OpenAI, vLLM, Ollama, llama.cpp server) through the `openai` SDK.

One client per lease, with the lease's base URL and the key revealed from the encrypted store right before the
client is built. The SDK's own retries are off (`max_retries=0`): it retries with no idempotency header, and
our runtime retries against its own log (DESIGN §14), so one `complete()` is at most one HTTP request. The
timeout is explicit (settings.LOMOTE_MODEL_TIMEOUT), never the SDK's 600 s default.

Errors become ModelError with `retryable` set from the failure's nature, and with messages we write
ourselves: a server may echo the key in an error body, so server text is only kept after redaction, and the
SDK exception is never chained (its message and request would travel with ours into logs).
"""

import json
import logging
import time
from typing import Any
from urllib.parse import urlsplit

import openai
from django.conf import settings

from agents.exceptions import ModelConfigError, ModelError
from agents.models import ProviderKind, ProviderSecret
from agents.providers.base import ModelRequest, ModelResponse, ToolCallIntent, Usage
from agents.secrets import secret_reveal
from lomote.kernel.endpoints import EndpointRefused, endpoint_check

logger = logging.getLogger(__name__)

# Parameters a lease may set. Anything else is refused rather than dropped: a lease never changes silently.
ALLOWED_PARAMS = frozenset(
    {
        "temperature",
        "top_p",
        "max_tokens",
        "max_completion_tokens",
        "seed",
        "stop",
        "presence_penalty",
        "frequency_penalty",
        "parallel_tool_calls",
        "reasoning_effort",
        "logit_bias",
        "user",
        "service_tier",
        "prompt_cache_key",
    }
)
# Profile settings read by other parts and never sent to the chat endpoint: the embedding model of workspace
# search (agents/services/embedding_endpoint.py).
NOT_SENT_PARAMS = frozenset({"embedding_model"})
# Local servers (Ollama, llama.cpp) need no key but the SDK insists on one; never fall back to OPENAI_API_KEY.
KEYLESS_PLACEHOLDER = "no-key"  # noqa: S105 - a placeholder, not a credential
MAX_SERVER_MESSAGE = 300


class OpenAICompatProvider:
    kind = ProviderKind.OPENAI_COMPAT.value

    def __init__(self, *, model: str, base_url: str, secret: ProviderSecret | None = None, params: dict | None = None):
        if not model:
            raise ModelConfigError("An OpenAI-compatible lease needs a model name.")
        if not base_url or urlsplit(base_url).scheme not in ("http", "https"):
            raise ModelConfigError("An OpenAI-compatible lease needs an http(s) base URL.", code="model_config")
        self.model = model
        self.base_url = base_url
        self.params = dict(params or {})
        self._secret = secret
        self._client: openai.OpenAI | None = None
        self._check_params(self.params)

    @classmethod
    def for_lease(cls, lease) -> "OpenAICompatProvider":
        return cls(model=lease.model, base_url=lease.base_url, secret=lease.secret, params=lease.params)

    def __repr__(self) -> str:
        # Host only: a base URL may carry userinfo; the key itself is held by the SDK client alone.
        return f"<OpenAICompatProvider {self.model} @ {urlsplit(self.base_url).hostname}>"

    # --- the contract --------------------------------------------------------------------------------------

    def complete(self, request: ModelRequest) -> ModelResponse:
        if request.model and request.model != self.model:
            raise ModelConfigError(
                f"The request asks for model {request.model!r} but the lease fixes {self.model!r}.",
                code="model_mismatch",
            )
        params = {**self.params, **(request.params or {})}
        self._check_params(params)
        sent = {name: value for name, value in params.items() if name not in NOT_SENT_PARAMS}
        kwargs: dict[str, Any] = {"model": self.model, "messages": request.messages, **sent}
        if request.tools:
            kwargs["tools"] = [tool.as_openai() for tool in request.tools]
            kwargs["tool_choice"] = "auto"

        try:
            endpoint_check(self.base_url)  # again at use: the profile may predate the check, or its name moved
        except EndpointRefused as refused:
            raise ModelConfigError(refused.message, code="endpoint_refused", details=refused.details) from None
        client = self._get_client()
        started = time.monotonic()
        error: ModelError | None = None
        try:
            completion = client.chat.completions.create(**kwargs, timeout=settings.LOMOTE_MODEL_TIMEOUT)
        except openai.OpenAIError as exc:
            error = self._map_error(exc)
        # Raised outside the except block so the SDK exception is not even attached as __context__.
        if error is not None:
            logger.warning(
                "model call failed: model=%s host=%s code=%s retryable=%s after %.2fs",
                self.model,
                urlsplit(self.base_url).hostname,
                error.code,
                error.retryable,
                time.monotonic() - started,
            )
            raise error
        try:
            response = self._parse(completion)
        except (AttributeError, TypeError, ValueError):
            response = None
        if response is None:
            raise ModelError("The model endpoint sent a malformed answer.", code="model_bad_response")
        logger.debug(
            "model call: model=%s answered_by=%s tool_calls=%d prompt=%d cached=%d completion=%d in %.2fs",
            self.model,
            response.model,
            len(response.tool_calls),
            response.usage.prompt_tokens,
            response.usage.cached_prompt_tokens,
            response.usage.completion_tokens,
            time.monotonic() - started,
        )
        return response

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    # --- internals -----------------------------------------------------------------------------------------

    @staticmethod
    def _check_params(params: dict) -> None:
        unknown = sorted(set(params) - ALLOWED_PARAMS - NOT_SENT_PARAMS)
        if unknown:
            raise ModelConfigError(
                f"Unsupported model parameters: {', '.join(unknown)}.",
                code="model_params",
                details={"unsupported": unknown, "allowed": sorted(ALLOWED_PARAMS)},
            )

    def _get_client(self) -> openai.OpenAI:
        if self._client is None:
            api_key = secret_reveal(self._secret) if self._secret is not None else KEYLESS_PLACEHOLDER
            self._client = openai.OpenAI(
                api_key=api_key,
                base_url=self.base_url,
                timeout=settings.LOMOTE_MODEL_TIMEOUT,
                max_retries=0,
            )
        return self._client

    def _map_error(self, exc: openai.OpenAIError) -> ModelError:
        # The key lives only inside the SDK client (which redacts it from its own debug logs).
        key = self._client.api_key if self._client is not None and self._secret is not None else ""
        redact = _Redactor(key)
        if isinstance(exc, openai.APITimeoutError):
            return ModelError(
                f"The model endpoint did not answer within {settings.LOMOTE_MODEL_TIMEOUT:g} s.",
                code="model_timeout",
                retryable=True,
            )
        if isinstance(exc, openai.APIConnectionError):
            return ModelError("The model endpoint could not be reached.", code="model_unavailable", retryable=True)
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            details: dict[str, Any] = {"status": status}
            request_id = exc.response.headers.get("x-request-id")
            if request_id:
                details["request_id"] = redact(request_id)[:200]
            server_message = _server_message(exc.body)
            if status == 429:
                retry_after = _retry_after(exc.response.headers.get("retry-after"))
                if retry_after is not None:
                    details["retry_after"] = retry_after
                return ModelError(
                    "The model endpoint is rate limiting requests (HTTP 429).",
                    code="model_rate_limited",
                    retryable=True,
                    details=details,
                )
            if status == 408:
                return ModelError(
                    "The model endpoint timed out (HTTP 408).", code="model_timeout", retryable=True, details=details
                )
            if status >= 500 or status == 409:
                return ModelError(
                    f"The model endpoint failed (HTTP {status}).",
                    code="model_unavailable",
                    retryable=True,
                    details=details,
                )
            if status in (401, 403):
                # No server text at all: this is exactly where servers echo the key they were given.
                return ModelError(
                    f"The model endpoint refused the credentials (HTTP {status}); check the provider secret.",
                    code="model_auth",
                    retryable=False,
                    details=details,
                )
            code = "model_not_found" if status == 404 else "model_bad_request"
            message = f"The model endpoint rejected the request (HTTP {status})"
            if server_message:
                message += ": " + redact(server_message)[:MAX_SERVER_MESSAGE]
            return ModelError(message + ".", code=code, retryable=False, details=details)
        if isinstance(exc, openai.APIError):
            return ModelError("The model endpoint sent a malformed answer.", code="model_bad_response", retryable=False)
        return ModelError("The model call failed in the client.", code="model_error", retryable=False)

    def _parse(self, completion: Any) -> ModelResponse:
        choices = getattr(completion, "choices", None)
        if choices is None:  # not a chat.completion at all (an HTML error page from a proxy, say)
            raise ModelError("The model endpoint sent a malformed answer.", code="model_bad_response")
        if not choices:
            raise ModelError("The model endpoint answered without any choice.", code="model_bad_response")
        message = choices[0].message
        text = message.content or ""
        intents: list[ToolCallIntent] = []
        for index, call in enumerate(message.tool_calls or []):
            call_id = getattr(call, "id", None) or f"call_{index}"
            function = getattr(call, "function", None)
            if function is not None:
                intents.append(ToolCallIntent(id=call_id, name=function.name, arguments=_arguments(function.arguments)))
            else:  # a custom (free-form) tool call carries its input as raw text
                custom = getattr(call, "custom", None)
                intents.append(
                    ToolCallIntent(id=call_id, name=getattr(custom, "name", ""), arguments=getattr(custom, "input", ""))
                )
        legacy = getattr(message, "function_call", None)
        if legacy is not None and not intents:  # servers still speaking the pre-tools protocol
            intents.append(ToolCallIntent(id="call_0", name=legacy.name, arguments=_arguments(legacy.arguments)))
        return ModelResponse(
            text=text, tool_calls=intents, usage=_usage(completion), model=completion.model or self.model
        )


class _Redactor:
    def __init__(self, key: str):
        self.key = key

    def __call__(self, text: str) -> str:
        if self.key and len(self.key) >= 4:
            text = text.replace(self.key, "[redacted]")
        return text


def _arguments(raw: str | None) -> dict[str, Any] | str:
    """A JSON object becomes a dict; anything else stays the raw string, for the runtime to refuse explicitly."""
    if raw is None or not raw.strip():
        return {}  # local servers send "" for a call without arguments
    try:
        parsed = json.loads(raw)
    except ValueError:
        return raw
    return parsed if isinstance(parsed, dict) else raw


def _usage(completion: Any) -> Usage:
    usage = getattr(completion, "usage", None)
    if usage is None:
        return Usage()
    details = getattr(usage, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) or 0
    return Usage(
        prompt_tokens=int(usage.prompt_tokens or 0),
        completion_tokens=int(usage.completion_tokens or 0),
        cached_prompt_tokens=int(cached),
    )


def _server_message(body: object) -> str:
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict):
            message = error.get("message")
            return message if isinstance(message, str) else ""
        if isinstance(error, str):
            return error
    return ""


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None  # an HTTP date: rare for model APIs, ignored
    return seconds if 0 <= seconds <= 3600 else None
