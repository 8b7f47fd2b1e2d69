import threading

import pytest

from agents.providers.base import ModelRequest, ModelResponse, ToolCallIntent, Usage
from tests.support import runtime as rt


class Script:
    """A fixed model: answers each request from a list, records every request and who made it."""

    def __init__(self, responses, on_call=None):
        self.responses = list(responses)
        self.requests: list[ModelRequest] = []
        self.on_call = on_call
        self.lock = threading.Lock()
        self.kind = "script"

    def complete(self, request: ModelRequest) -> ModelResponse:
        with self.lock:
            self.requests.append(request)
            index = len(self.requests) - 1
        if self.on_call is not None:
            self.on_call(index, request)
        return self.responses[min(index, len(self.responses) - 1)]

    def calls_for_step(self, step_index: int) -> int:
        return sum(1 for r in self.requests if r.state["step_index"] == step_index)


def says(text="", *calls, model="script-1", prompt_tokens=100, cached=0):
    intents = [ToolCallIntent(id=f"c{i}", name=name, arguments=args) for i, (name, args) in enumerate(calls, 1)]
    return ModelResponse(
        text=text,
        tool_calls=intents,
        usage=Usage(prompt_tokens=prompt_tokens, completion_tokens=20, cached_prompt_tokens=cached),
        model=model,
    )


@pytest.fixture
def script(monkeypatch):
    """Install a scripted model for every lease: `script(responses, on_call=None)`."""

    def install(responses, on_call=None):
        model = Script(responses, on_call)
        monkeypatch.setattr("agents.runtime.loop.provider_for_lease", lambda lease: model)
        return model

    return install


@pytest.fixture
def tools():
    with rt.test_tools():
        yield rt


@pytest.fixture
def no_enqueue(monkeypatch):
    """Record enqueues instead of sending them to django-q (the test drives the jobs itself)."""
    sent = []
    monkeypatch.setattr("agents.queue._enqueue", lambda turn_id, gen: sent.append((turn_id, gen)))
    return sent


@pytest.fixture
def task(workspace, alice, no_enqueue):
    from agents.models import Task, TaskStatus

    return Task.objects.create(
        workspace=workspace,
        title="Retro posters",
        brief="Make 3 retro posters",
        created_by=alice,
        status=TaskStatus.IDLE,
    )


@pytest.fixture
def upstream(settings):
    """The simulated generation provider as the default one: `upstream.submissions` counts what reached it."""
    from workspace.providers import registry
    from workspace.providers.simulated import SimulatedUpstream

    settings.LOMOTE_DEFAULT_GENERATION_PROVIDER = "simulated"
    with registry.override("simulated", SimulatedUpstream(deliver=lambda headers, body: 200)) as simulated:
        yield simulated
