"""A provider that replays fixed outputs, for tests.

Give it the responses in order (ModelResponse objects, plain dicts, exceptions to raise, or callables taking the
ModelRequest); it returns them one per `complete()`, records a copy of every request it received and counts
the calls, and raises a non-retryable ModelError once it runs out — a test never silently gets a default.
Thread-safe, so one instance can serve workers running in several threads.

To make the runtime use an instance, install it for the `replay` kind (or any kind) in the registry:

    provider = ReplayProvider([...])
    with registry.override(ProviderKind.REPLAY, provider):
        ...  # every lease of that kind now gets `provider`
"""

import copy
import threading
from collections.abc import Callable, Iterable
from typing import Any

from agents.exceptions import ModelError
from agents.models import ProviderKind
from agents.providers.base import ModelRequest, ModelResponse, ToolCallIntent, Usage

Output = ModelResponse | dict[str, Any] | BaseException | Callable[[ModelRequest], "ModelResponse | dict[str, Any]"]

DEFAULT_MODEL = "replay"


class ReplayProvider:
    kind = ProviderKind.REPLAY.value

    def __init__(self, outputs: Iterable[Output], *, model: str = DEFAULT_MODEL):
        self.model = model
        self._outputs: list[Output] = list(outputs)
        self._lock = threading.Lock()
        self.requests: list[ModelRequest] = []

    def __repr__(self) -> str:
        return f"<ReplayProvider {self.calls}/{len(self._outputs)} used>"

    @property
    def calls(self) -> int:
        return len(self.requests)

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._outputs) - len(self.requests)

    def extend(self, outputs: Iterable[Output]) -> None:
        with self._lock:
            self._outputs.extend(outputs)

    def complete(self, request: ModelRequest) -> ModelResponse:
        with self._lock:
            index = len(self.requests)
            # A deep copy: what the model saw at this call, even if the caller reuses its lists afterwards.
            self.requests.append(copy.deepcopy(request))
            if index >= len(self._outputs):
                raise ModelError(
                    f"The replay provider has no output left (call {index + 1}, {len(self._outputs)} given).",
                    code="replay_exhausted",
                    retryable=False,
                )
            output = self._outputs[index]
        if isinstance(output, BaseException):
            raise output
        if callable(output):
            output = output(request)
        return as_response(output, default_model=self.model)


def as_response(output: ModelResponse | dict[str, Any], *, default_model: str = DEFAULT_MODEL) -> ModelResponse:
    """Build a ModelResponse from a dict: {"text", "tool_calls": [{"id", "name", "arguments"}], "usage", "model"}."""
    if isinstance(output, ModelResponse):
        return output
    if not isinstance(output, dict):
        raise TypeError(f"a replay output must be a ModelResponse or a dict, not {type(output).__name__}")
    calls = []
    for index, call in enumerate(output.get("tool_calls") or []):
        if isinstance(call, ToolCallIntent):
            calls.append(call)
        else:
            calls.append(
                ToolCallIntent(
                    id=call.get("id") or f"replay-{index}", name=call["name"], arguments=call.get("arguments", {})
                )
            )
    usage = output.get("usage") or {}
    if not isinstance(usage, Usage):
        usage = Usage(**usage)
    return ModelResponse(
        text=output.get("text", ""), tool_calls=calls, usage=usage, model=output.get("model") or default_model
    )
