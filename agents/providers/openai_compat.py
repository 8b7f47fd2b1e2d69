"""Any OpenAI-compatible chat endpoint (OpenAI, vLLM, Ollama, llama.cpp server) through the `openai` SDK.

One client per lease, with the lease's base URL and the key revealed from the encrypted store right before the
client is built. The SDK's own retries are off (`max_retries=0`): it retries with no idempotency header, and
our runtime retries against its own log (DESIGN §14), so one `complete()` is at most one HTTP request. The
timeout is explicit (settings.LOMOTE_MODEL_TIMEOUT), never the SDK's 600 s default.

Errors become ModelError with `retryable` set from the failure's nature, and with messages we write
ourselves: a server may echo the key in an error body, so server text is only kept after redaction, and the
SDK exception is never chained (its message and request would travel with ours into logs).

Tool calls are read wherever the server puts them (agents/providers/toolcalls.py): its structured `tool_calls`,
else the calls the model wrote in its text. Each is checked against the tools of the request; a name not
offered, arguments failing the tool's schema, or no call where the runtime required one, get ONE repair round —
a second request telling the model what was wrong — and a call still wrong after it is returned with its
`error`, which the runtime records as the call's failure without running it. So a `complete()` is one
request, plus one repair round at most (plus a retry of a request the server refused for its tool_choice, which
it answered without generating anything), all within one LOMOTE_MODEL_TIMEOUT: the repair gets what is left.

Where the runtime requires a call (`ModelRequest.tool_choice`), the named tool is forced; a server that refuses
that form (HTTP 400 naming tool_choice) is asked with "required", then with "auto" (the text parser then reads
the call). The forms it refused, and the one that worked, are remembered on the model profile the lease came
from, for that endpoint and model, so later requests do not ask again.
"""

import json
import logging
import time
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

import openai
from django.conf import settings

from agents.exceptions import ModelConfigError, ModelError
from agents.models import ModelProfile, ProviderKind, ProviderSecret
from agents.providers.base import AUTO, REQUIRED, ModelRequest, ModelResponse, ToolCallIntent, Usage
from agents.providers.toolcalls import STRUCTURED, call_error, calls_in_text, describe_error
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
NAMED = "named"  # the forced-choice form naming the tool, before REQUIRED and AUTO
MIN_REQUEST_SECONDS = 0.05  # less time than this left of the model timeout: no further request is sent
FORMS = (NAMED, REQUIRED, AUTO)  # strongest first: what a server refuses falls to the next


class OpenAICompatProvider:
    kind = ProviderKind.OPENAI_COMPAT.value

    def __init__(
        self,
        *,
        model: str,
        base_url: str,
        secret: ProviderSecret | None = None,
        params: dict | None = None,
        profile_id: int | None = None,
    ):
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
        # Where what the endpoint accepts as a forced tool choice is remembered (None: in this instance only).
        self.profile_id = profile_id
        self._refused_forms: set[str] | None = None  # the forms the endpoint refused; None until read

    @classmethod
    def for_lease(cls, lease) -> "OpenAICompatProvider":
        # A turn's lease names the profile it was copied from; the Router is given the profile itself.
        profile_id = lease.pk if isinstance(lease, ModelProfile) else getattr(lease, "profile_id", None)
        return cls(
            model=lease.model, base_url=lease.base_url, secret=lease.secret, params=lease.params, profile_id=profile_id
        )

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

        try:
            endpoint_check(self.base_url)  # again at use: the profile may predate the check, or its name moved
        except EndpointRefused as refused:
            raise ModelConfigError(refused.message, code="endpoint_refused", details=refused.details) from None
        started = time.monotonic()
        forms = self._forms(request) if request.tools else []
        completion, form = self._send(kwargs, forms, started, named=_named(request))
        response = self._response(completion, request, form)
        if request.tools:
            response = self._checked(response, request, kwargs, form, started)
        logger.debug(
            "model call: model=%s answered_by=%s tool_calls=%d format=%s repaired=%s choice=%s prompt=%d cached=%d "
            "completion=%d in %.2fs",
            self.model,
            response.model,
            len(response.tool_calls),
            response.call_format or "-",
            response.repaired,
            response.tool_choice or "-",
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

    # --- one request, and the forced tool choice's fallback --------------------------------------------------

    def _forms(self, request: ModelRequest) -> list[str]:
        """The tool_choice forms to try, strongest first: what the runtime asked, less what the endpoint refused."""
        offered = {tool.name for tool in request.tools}
        if request.tool_choice == REQUIRED:
            wanted = [REQUIRED, AUTO]
        elif request.tool_choice in offered:
            wanted = list(FORMS)
        else:
            return [AUTO]
        # Not a ladder: some servers take a named tool but not "required" (vLLM before 0.8.3), some the reverse.
        return [form for form in wanted if form not in self._refused()] or [AUTO]

    def _refused(self) -> set[str]:
        if self._refused_forms is None:
            recalled = None
            if self.profile_id is not None:
                recalled = ModelProfile.tool_choice_recalled(self.profile_id, base_url=self.base_url, model=self.model)
            self._refused_forms = set(recalled.get("refused", [])) if recalled else set()
        return self._refused_forms

    def _remember(self, refused: list[str], worked: str) -> None:
        self._refused_forms = self._refused() | set(refused)
        if self.profile_id is not None:
            ModelProfile.tool_choice_remember(
                self.profile_id,
                base_url=self.base_url,
                model=self.model,
                refused=sorted(self._refused_forms),
                worked=worked,
            )
        logger.info(
            "model endpoint refused tool_choice %s: model=%s host=%s, %s worked",
            "/".join(refused),
            self.model,
            urlsplit(self.base_url).hostname,
            worked,
        )

    def _send(self, kwargs: dict[str, Any], forms: list[str], started: float, *, named: str | None) -> tuple[Any, str]:
        """One chat completion. With tools, each form of `forms` in turn while the server refuses the one before
        for its tool_choice (a 400 generated nothing); what worked is remembered when it was not the first."""
        client = self._get_client()
        for position, form in enumerate(forms or [""]):
            if form:
                wire = {"type": "function", "function": {"name": named}} if form == NAMED else form
                kwargs = {**kwargs, "tool_choice": wire}
            error: ModelError | None = None
            # One deadline for the whole complete(), repair round and refused forms included: the runtime's lease
            # and retry budget count one model timeout per attempt (agents/runtime/loop.py _keep_lease).
            left = started + settings.LOMOTE_MODEL_TIMEOUT - time.monotonic()
            if left < MIN_REQUEST_SECONDS:
                raise ModelError(
                    f"The model endpoint did not answer within {settings.LOMOTE_MODEL_TIMEOUT:g} s.",
                    code="model_timeout",
                    retryable=True,
                )
            try:
                completion = client.chat.completions.create(**kwargs, timeout=left)
            except openai.OpenAIError as exc:
                refused_choice = position + 1 < len(forms) and _refuses_tool_choice(exc)
                error = None if refused_choice else self._map_error(exc)
                if refused_choice:
                    continue
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
            if position > 0:
                self._remember(forms[:position], form)
            return completion, form
        raise AssertionError("unreachable: the last form's failure is raised")

    # --- reading and checking the calls ----------------------------------------------------------------------

    def _response(self, completion: Any, request: ModelRequest, form: str) -> ModelResponse:
        try:
            response = self._parse(completion, request, form)
        except (AttributeError, TypeError, ValueError):
            response = None
        if response is None:
            raise ModelError("The model endpoint sent a malformed answer.", code="model_bad_response")
        return response

    def _checked(
        self, response: ModelResponse, request: ModelRequest, kwargs: dict[str, Any], form: str, started: float
    ) -> ModelResponse:
        """The response with every call checked against the offered tools, after one repair round if needed."""
        offered = {tool.name: tool for tool in request.tools}
        errors = [call_error(call, offered) for call in response.tool_calls]
        missing = not response.tool_calls and request.tool_choice != AUTO
        if not any(errors) and not missing:
            return response
        repair = {
            **kwargs,
            "messages": [*request.messages, _attempt(response), _repair_message(response, errors, request)],
        }
        try:
            completion, form = self._send(repair, [form], started, named=_named(request))
            repaired = self._response(completion, request, form)
        except ModelError as exc:
            # The first answer was made (and billed): it stands, its wrong calls recorded as such.
            logger.warning("model repair round failed: model=%s code=%s", self.model, exc.code)
            return replace(response, tool_calls=_marked(response.tool_calls, errors))
        usage = _add(response.usage, repaired.usage)
        if repaired.tool_calls:
            again = [call_error(call, offered) for call in repaired.tool_calls]
            return replace(repaired, tool_calls=_marked(repaired.tool_calls, again), usage=usage, repaired=True)
        # The repair brought no call at all: the first answer's calls stand, the wrong ones as failures.
        return replace(
            repaired,
            text=repaired.text or response.text,
            tool_calls=_marked(response.tool_calls, errors),
            call_format=response.call_format,
            usage=usage,
            repaired=True,
        )

    def _parse(self, completion: Any, request: ModelRequest, form: str) -> ModelResponse:
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
                intents.append(
                    ToolCallIntent(id=call_id, name=function.name or "", arguments=_arguments(function.arguments))
                )
            else:  # a custom (free-form) tool call carries its input as raw text
                custom = getattr(call, "custom", None)
                intents.append(
                    ToolCallIntent(id=call_id, name=getattr(custom, "name", ""), arguments=getattr(custom, "input", ""))
                )
        legacy = getattr(message, "function_call", None)
        if legacy is not None and not intents:  # servers still speaking the pre-tools protocol
            intents.append(ToolCallIntent(id="call_0", name=legacy.name, arguments=_arguments(legacy.arguments)))
        call_format = STRUCTURED if intents else ""
        if not intents and request.tools:
            found = calls_in_text(text, request.tools, forced=_forced(request))
            if found is not None:
                intents, call_format, text = found.calls, found.call_format, found.text
        return ModelResponse(
            text=text,
            tool_calls=intents,
            usage=_usage(completion),
            model=completion.model or self.model,
            call_format=call_format,
            tool_choice=form,
        )


def _named(request: ModelRequest) -> str | None:
    """The tool the runtime named in `tool_choice`, when it is one of the request's tools."""
    return request.tool_choice if request.tool_choice in {tool.name for tool in request.tools} else None


def _forced(request: ModelRequest) -> str | None:
    """The one tool the runtime requires, if it named one (or required a call and offered a single tool)."""
    names = [tool.name for tool in request.tools]
    if request.tool_choice == REQUIRED and len(names) == 1:
        return names[0]
    return _named(request)


def _refuses_tool_choice(exc: openai.OpenAIError) -> bool:
    """A 400/422 whose reason names tool_choice: the server does not take that form (nothing was generated)."""
    if not isinstance(exc, openai.BadRequestError | openai.UnprocessableEntityError):
        return False
    said = f"{_server_message(exc.body)} {exc.body if isinstance(exc.body, str) else ''}".lower()
    return "tool_choice" in said or "tool choice" in said


def _attempt(response: ModelResponse) -> dict[str, Any]:
    """The model's answer as the repair request shows it back: its words, and its calls as they were read."""
    written = json.dumps(_written(response), ensure_ascii=False) if response.tool_calls else ""
    return {"role": "assistant", "content": "\n".join(part for part in (response.text, written) if part)}


def _written(response: ModelResponse) -> list[dict[str, Any]]:
    return [{"name": call.name, "arguments": call.arguments} for call in response.tool_calls]


def _repair_message(
    response: ModelResponse, errors: list[dict[str, Any] | None], request: ModelRequest
) -> dict[str, Any]:
    offered = ", ".join(tool.name for tool in request.tools)
    if not response.tool_calls:
        forced = _forced(request)
        needed = f"a call to {forced}" if forced else f"a call to one of the tools ({offered})"
        said = f"This answer needs {needed}, and yours had none."
    else:
        wrong = [describe_error(call, error) for call, error in zip(response.tool_calls, errors, strict=True) if error]
        said = "Your tool call could not be used:\n" + "\n".join(wrong)
    return {
        "role": "user",
        "content": f"{said}\nAnswer again with the corrected tool call(s), using only the offered tools "
        f"({offered}) and arguments that match their schemas.",
    }


def _marked(calls: list[ToolCallIntent], errors: list[dict[str, Any] | None]) -> list[ToolCallIntent]:
    return [replace(call, error=error) if error else call for call, error in zip(calls, errors, strict=True)]


def _add(first: Usage, second: Usage) -> Usage:
    return Usage(
        prompt_tokens=first.prompt_tokens + second.prompt_tokens,
        completion_tokens=first.completion_tokens + second.completion_tokens,
        cached_prompt_tokens=first.cached_prompt_tokens + second.cached_prompt_tokens,
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
