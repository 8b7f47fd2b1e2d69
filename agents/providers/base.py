"""The contract every model provider implements (DESIGN §10).

A provider turns a ModelRequest (chat messages in OpenAI format, the visible tools, and the structured
state the context was built from) into a ModelResponse (text, tool-call intents, usage, the exact model).
It never falls back to another model: an error is raised as ModelError with `retryable` set, and the
runtime's own loop decides whether to try again. Secrets are resolved inside the adapter only.

Where the runtime needs a call (the Router's decision, a quick request's one result) it says so in
`ModelRequest.tool_choice`: an offered tool's name, or "required". That is the runtime's to set, never a
profile's. A response says how its calls were read (`call_format`) and whether it took a repair round; a call
that stayed invalid after it carries `error`, and the runtime records it as a failed call without running it.
"""

from dataclasses import dataclass, field
from typing import Any, Protocol

# `ModelRequest.state["mode"]` of a lightweight task's short step (agents/runtime/shortpath.py): one result, one call.
ONE_RESULT_MODE = "one_result"

# `ModelRequest.tool_choice`: the model may answer in words (AUTO), must call one of the tools (REQUIRED), or —
# any other value — must call the tool of that name.
AUTO, REQUIRED = "auto", "required"


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any]  # JSON schema of the arguments

    def as_openai(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


@dataclass(frozen=True)
class ToolCallIntent:
    id: str  # the id the model gave the call (echoed back with its result)
    name: str
    arguments: dict[str, Any] | str  # a str when the model produced arguments that are not a JSON object
    # Set by a provider that validated the call against the offered tools and could not get it right
    # ({"code", "message", "details"}): the runtime records it as the call's failure and never runs it.
    error: dict[str, Any] | None = None


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0


@dataclass(frozen=True)
class ModelRequest:
    model: str
    params: dict[str, Any]
    messages: list[dict[str, Any]]
    tools: list[ToolSpec]
    # The structured facts the messages were rendered from (brief, checklist, new inbox messages, tool
    # results of the previous step). Real models read the messages; the scripted planner reads this.
    state: dict[str, Any] = field(default_factory=dict)
    tool_choice: str = AUTO  # set by the runtime where it needs a call (see AUTO, REQUIRED)


@dataclass(frozen=True)
class ModelResponse:
    text: str
    tool_calls: list[ToolCallIntent]
    usage: Usage
    model: str  # the model that actually produced the output
    # How the calls were read: "structured" (the server's tool_calls) or from the text: "fenced_json", "hermes"
    # (<tool_call> tags), "bare_json", "mistral" ([TOOL_CALLS]); "" without calls. `repaired`: a second request
    # told the model what was wrong with its first answer. `tool_choice`: the form the server was sent.
    call_format: str = ""
    repaired: bool = False
    tool_choice: str = ""


class ModelProvider(Protocol):
    kind: str

    def complete(self, request: ModelRequest) -> ModelResponse: ...
