"""Tool calls from real local servers, and the forced tool choice (issue 35 items 1-2, DESIGN §10).

Local servers (llama.cpp, Ollama, vLLM without a tool parser) often answer a tool request with the call written in
the text. The bodies below are what such servers send — their envelope (ids, fingerprints, `logprobs`, usage as
they report it) and the text models wrote — served by a real HTTP server to the adapter. Every way of writing a
call is read and checked against the tools of that request; a wrong call gets one repair round, then is returned
with its error for the runtime to record; where the runtime needs a call it forces it, and a server refusing that
form is asked more loosely, which is remembered on the model profile.
"""

import json
import time

import pytest

from agents.exceptions import ModelConfigError
from agents.models import ModelProfile, ProviderKind, Step, TaskKind, ToolCall, ToolCallStatus
from agents.providers.base import REQUIRED, ModelRequest, ToolSpec
from agents.providers.openai_compat import OpenAICompatProvider
from agents.runtime.loop import turn_run
from agents.runtime.shortpath import SHORT_TOOLS
from agents.services.tasks import task_create
from tests.support import runtime as rt
from tests.support.cards import access_of, run_queued
from tests.support.fake_openai import FakeOpenAIServer, completion, error_body

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("local_model_servers")]

MODEL = "smollm2-135m-instruct"
ROUTE = ToolSpec(
    "route_message",
    "Decide where the person's message goes.",
    {
        "type": "object",
        "properties": {
            "route": {"type": "string", "enum": ["answer", "lightweight", "follow_up", "new_task", "clarify"]},
            "task": {"anyOf": [{"type": "string", "enum": ["retro-posters-cafe", "ginger-cat"]}, {"type": "null"}]},
            "title": {"type": "string", "maxLength": 200},
            "reason": {"type": "string"},
        },
        "required": ["route"],
        "additionalProperties": False,
    },
)
READ = ToolSpec("read_task_state", "Read the task state.", {"type": "object", "properties": {}})
PLAN = ToolSpec(
    "update_checklist",
    "Plan or progress the checklist.",
    {
        "type": "object",
        "properties": {
            "items": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"title": {"type": "string"}},
                    "required": ["title"],
                    "additionalProperties": False,
                },
            }
        },
        "additionalProperties": False,
    },
)
TOOLS = [READ, PLAN]


def llama_cpp(content: str, *, model: str = MODEL, prompt: int = 412, generated: int = 38) -> dict:
    """A chat.completion as llama-cpp-python's server sends it (0.3.x): no fingerprint, logprobs null."""
    return {
        "id": "chatcmpl-6b1f0c2e-93d4-4a5e-9a3e-5c8e2f1d7a10",
        "object": "chat.completion",
        "created": 1_765_000_000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": prompt, "completion_tokens": generated, "total_tokens": prompt + generated},
    }


def ollama(content: str, *, model: str = "llama3.2:3b") -> dict:
    """What Ollama's OpenAI-compatible endpoint sends when the model wrote its call as text."""
    return {
        "id": "chatcmpl-417",
        "object": "chat.completion",
        "created": 1_765_000_100,
        "model": model,
        "system_fingerprint": "fp_ollama",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 530, "completion_tokens": 41, "total_tokens": 571},
    }


def vllm(content: str, *, model: str = "mistralai/Mistral-7B-Instruct-v0.3") -> dict:
    """vLLM without --tool-call-parser: the model's text, special tokens kept, tool_calls empty."""
    return {
        "id": "chatcmpl-9c4de1a0b7f34c1e8d2a6f5b3e7c9d01",
        "object": "chat.completion",
        "created": 1_765_000_200,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, "tool_calls": [], "reasoning_content": None},
                "logprobs": None,
                "finish_reason": "stop",
                "stop_reason": None,
            }
        ],
        "usage": {"prompt_tokens": 611, "total_tokens": 650, "completion_tokens": 39, "prompt_tokens_details": None},
        "prompt_logprobs": None,
    }


@pytest.fixture(autouse=True)
def short_timeout(settings):
    settings.LOMOTE_MODEL_TIMEOUT = 2


@pytest.fixture
def server():
    with FakeOpenAIServer() as fake:
        yield fake


@pytest.fixture
def provider(server):
    made = OpenAICompatProvider(model=MODEL, base_url=server.url)
    yield made
    made.close()


def _request(tools=TOOLS, tool_choice="auto", **overrides) -> ModelRequest:
    fields = {
        "model": MODEL,
        "params": {},
        "messages": [
            {"role": "system", "content": "You are Lomote's Router."},
            {"role": "user", "content": "make a series of 3 retro posters for the café"},
        ],
        "tools": tools,
        "tool_choice": tool_choice,
    }
    return ModelRequest(**{**fields, **overrides})


def _read(response) -> list[tuple[str, object]]:
    return [(call.name, call.arguments) for call in response.tool_calls]


# --- each way a server writes a call ------------------------------------------------------------------------


def test_it_reads_a_call_written_in_a_json_fence(server, provider):
    # given SmolLM2 through llama-cpp-python with tool_choice auto: the call as fenced JSON after a sentence
    server.reply(
        llama_cpp(
            "I'll route this to a new task since it asks for several posters.\n\n"
            '```json\n{\n  "name": "route_message",\n  "arguments": {\n    "route": "new_task",\n'
            '    "title": "Retro posters for the café"\n  }\n}\n```'
        )
    )
    # when the Router's request is completed
    response = provider.complete(_request(tools=[ROUTE]))
    # then the call was read from the fence, the sentence kept as the text, with one HTTP call
    assert _read(response) == [("route_message", {"route": "new_task", "title": "Retro posters for the café"})]
    assert response.call_format == "fenced_json" and not response.repaired
    assert response.text == "I'll route this to a new task since it asks for several posters."
    assert response.model == MODEL and response.usage.prompt_tokens == 412
    assert server.calls == 1


def test_it_reads_a_call_inside_prose(server, provider):
    # given a Llama 3.2 answer through Ollama: prose, the call object inline, more prose
    server.reply(
        ollama(
            "To answer, I need the current state first. "
            '{"name": "read_task_state", "parameters": {}} '
            "Then I will plan the three posters."
        )
    )
    response = provider.complete(_request())
    assert _read(response) == [("read_task_state", {})]
    assert response.call_format == "bare_json"
    assert "Then I will plan the three posters." in response.text and "{" not in response.text


def test_it_reads_hermes_tool_call_tags(server, provider):
    # given Qwen2.5 through llama.cpp without --jinja: two calls in <tool_call> tags, the last one unclosed
    server.reply(
        llama_cpp(
            '<tool_call>\n{"name": "read_task_state", "arguments": {}}\n</tool_call>\n'
            '<tool_call>\n{"name": "update_checklist", "arguments": '
            '{"items": [{"title": "Poster 1 of 3"}, {"title": "Poster 2 of 3"}, {"title": "Poster 3 of 3"}]}}',
            model="qwen2.5-1.5b-instruct",
        )
    )
    response = provider.complete(_request())
    assert _read(response) == [
        ("read_task_state", {}),
        ("update_checklist", {"items": [{"title": f"Poster {n} of 3"} for n in (1, 2, 3)]}),
    ]
    assert response.call_format == "hermes" and response.text == ""
    assert [call.id for call in response.tool_calls] == ["call_0", "call_1"]


@pytest.mark.parametrize(
    "content",
    [
        pytest.param(
            '[TOOL_CALLS] [{"name": "update_checklist", "arguments": {"items": [{"title": "Poster 1 of 3"}]}}]',
            id="v3-array",
        ),
        pytest.param('[TOOL_CALLS]update_checklist[ARGS]{"items": [{"title": "Poster 1 of 3"}]}', id="v11-args"),
    ],
)
def test_it_reads_mistral_tool_calls(server, provider, content):
    # given Mistral through vLLM without a tool parser: the [TOOL_CALLS] token left in the text
    server.reply(vllm(content))
    response = provider.complete(_request())
    assert _read(response) == [("update_checklist", {"items": [{"title": "Poster 1 of 3"}]})]
    assert response.call_format == "mistral"


@pytest.mark.parametrize(
    "content",
    [
        pytest.param('{"name": "read_task_state", "arguments": {}}', id="name-arguments"),
        pytest.param('<|python_tag|>{"name": "read_task_state", "parameters": {}}', id="llama-python-tag"),
        pytest.param('{"function": "read_task_state", "parameters": {}}', id="function-parameters"),
        pytest.param('{"function": {"name": "read_task_state", "arguments": "{}"}}', id="openai-shape-echoed"),
    ],
)
def test_it_reads_a_bare_call_object(server, provider, content):
    server.reply(ollama(content))
    response = provider.complete(_request())
    assert _read(response) == [("read_task_state", {})]
    assert response.call_format == "bare_json"


def test_it_reads_bare_arguments_as_the_call_of_the_tool_the_runtime_named(server, provider):
    # given a model forced to call route_message that answered only the arguments, in a fence
    server.reply(llama_cpp('```json\n{"route": "follow_up", "task": "ginger-cat", "reason": "the cat"}\n```'))
    # when the request named route_message
    response = provider.complete(_request(tools=[ROUTE], tool_choice="route_message"))
    # then the object is that tool's arguments
    assert _read(response) == [("route_message", {"route": "follow_up", "task": "ginger-cat", "reason": "the cat"})]
    assert response.call_format == "fenced_json"
    assert server.bodies[0]["tool_choice"] == {"type": "function", "function": {"name": "route_message"}}


def test_it_leaves_words_and_data_in_the_text_when_no_call_is_written(server, provider):
    # given a model answering in words, with a JSON example that is not a call, while a call is not required
    text = 'Here is the palette I suggest: {"primary": "#d35400", "name": "Sunset"}. Shall I go on?'
    server.reply(llama_cpp(text))
    response = provider.complete(_request())
    # then there is no call, the text is unchanged, and nothing was asked again
    assert response.tool_calls == [] and response.text == text
    assert (response.call_format, response.repaired, server.calls) == ("", False, 1)


# --- checked against the tools offered: one repair round, then an error the runtime records ---------------


def test_it_repairs_a_call_to_a_tool_that_was_not_offered(server, provider):
    # given a model that calls a tool it was not given, then gets it right when told
    server.reply(llama_cpp('<tool_call>\n{"name": "create_task", "arguments": {"title": "Posters"}}\n</tool_call>'))
    server.reply(llama_cpp('<tool_call>\n{"name": "read_task_state", "arguments": {}}\n</tool_call>', prompt=500))
    # when the request is completed
    response = provider.complete(_request())
    # then the second request showed the model its answer and what was wrong, in the same conversation
    first, second = server.bodies
    assert second["messages"][: len(first["messages"])] == first["messages"]
    attempt, repair = second["messages"][-2:]
    assert attempt["role"] == "assistant" and "create_task" in attempt["content"]
    assert repair["role"] == "user" and "There is no tool 'create_task'" in repair["content"]
    assert "read_task_state, update_checklist" in repair["content"]
    # and the repaired call is the answer, the tokens of both rounds counted
    assert _read(response) == [("read_task_state", {})]
    assert response.tool_calls[0].error is None
    assert (response.call_format, response.repaired) == ("hermes", True)
    assert response.usage.prompt_tokens == 412 + 500


def test_it_repairs_structured_arguments_that_fail_the_schema(server, provider):
    # given a server with a tool parser whose model put a string where the schema wants a list of items
    server.reply(completion(content=None, tool_calls=[("update_checklist", {"items": "three posters"})]))
    server.reply(completion(content=None, tool_calls=[("update_checklist", {"items": [{"title": "Poster 1"}]})]))
    response = provider.complete(_request())
    repair = server.bodies[1]["messages"][-1]["content"]
    assert "update_checklist" in repair and "items: 'three posters' is not of type 'array'" in repair
    assert _read(response) == [("update_checklist", {"items": [{"title": "Poster 1"}]})]
    assert (response.call_format, response.repaired) == ("structured", True)


def test_it_returns_a_call_still_wrong_after_the_repair_with_its_error(server, provider):
    # given a model that calls a tool not offered twice
    wrong = '```json\n{"name": "delete_workspace", "arguments": {}}\n```'
    server.reply(llama_cpp(wrong))
    server.reply(llama_cpp(wrong))
    # when the request is completed
    response = provider.complete(_request())
    # then there was one repair round only, and the call comes back marked, for the runtime to record
    assert server.calls == 2
    (call,) = response.tool_calls
    assert call.name == "delete_workspace" and call.error["code"] == "tool_not_offered"
    assert response.repaired is True


def test_it_keeps_the_first_answer_marked_when_the_repair_request_fails(server, provider):
    # given a wrong call, then a server error on the repair request
    server.reply(completion(content=None, tool_calls=[("update_checklist", '{"items": [')]))
    server.fail(503, "overloaded")
    # when the request is completed, then the answer already made stands, its call marked — no crash
    response = provider.complete(_request())
    (call,) = response.tool_calls
    assert (call.name, call.arguments, call.error["code"]) == ("update_checklist", '{"items": [', "invalid_arguments")
    assert response.repaired is False and server.calls == 2


def test_the_repair_round_gets_only_what_is_left_of_the_model_timeout(server, provider, settings):
    # given a 1 s model timeout, a wrong call answered after 0.6 s, and a repair request that would hang
    settings.LOMOTE_MODEL_TIMEOUT = 1.0
    server.reply(llama_cpp('{"name": "delete_workspace", "arguments": {}}'), delay=0.6)
    server.hang(10)
    started = time.monotonic()
    # when the request is completed
    response = provider.complete(_request())
    # then the whole complete() stayed within about one timeout (the runtime's lease counts one per attempt),
    # and the answer already made stands with its call marked
    assert time.monotonic() - started < 1.5
    assert response.tool_calls[0].error["code"] == "tool_not_offered" and server.calls == 2


def test_it_asks_once_for_the_call_a_forced_request_did_not_get(server, provider):
    # given a model answering in words although the runtime required the decision
    server.reply(llama_cpp("This sounds like a new series of posters."))
    server.reply(llama_cpp('{"route": "new_task", "title": "Retro posters"}'))
    response = provider.complete(_request(tools=[ROUTE], tool_choice="route_message"))
    assert "needs a call to route_message" in server.bodies[1]["messages"][-1]["content"]
    assert _read(response) == [("route_message", {"route": "new_task", "title": "Retro posters"})]
    assert (response.call_format, response.repaired) == ("bare_json", True)


# --- the forced tool choice and its fallback ---------------------------------------------------------------


@pytest.fixture
def profile(workspace, server):
    return ModelProfile.objects.create(
        workspace=workspace, name="local", provider=ProviderKind.OPENAI_COMPAT, model=MODEL, base_url=server.url
    )


def _refuse_tool_choice(server, form: str):
    server.reply(error_body(f"tool_choice {form} is not supported by this server"), status=400)


def test_it_falls_back_to_required_then_auto_and_remembers_it_on_the_profile(server, profile):
    # given a server that refuses a named tool_choice and "required", and answers "auto" with a fenced call
    provider = OpenAICompatProvider.for_lease(profile)
    _refuse_tool_choice(server, "of type object")
    _refuse_tool_choice(server, "'required'")
    server.reply(llama_cpp('```json\n{"name": "route_message", "arguments": {"route": "answer"}}\n```'))
    # when the Router's decision is asked for
    response = provider.complete(_request(tools=[ROUTE], tool_choice="route_message"))
    # then the server was asked each form in turn, and the content parser read the call
    assert [body["tool_choice"] for body in server.bodies] == [
        {"type": "function", "function": {"name": "route_message"}},
        "required",
        "auto",
    ]
    assert _read(response) == [("route_message", {"route": "answer"})]
    assert (response.tool_choice, response.call_format) == ("auto", "fenced_json")
    # and the profile remembers it, for this endpoint and model
    profile.refresh_from_db()
    assert profile.tool_choice_support == {
        "base_url": server.url,
        "model": MODEL,
        "refused": ["named", "required"],
        "worked": "auto",
    }
    # so a provider built later (another worker, another turn) starts where it worked: one request
    server.reply(llama_cpp('```json\n{"name": "route_message", "arguments": {"route": "answer"}}\n```'))
    later = OpenAICompatProvider.for_lease(ModelProfile.objects.get(pk=profile.pk))
    later.complete(_request(tools=[ROUTE], tool_choice="route_message"))
    assert server.calls == 4 and server.bodies[-1]["tool_choice"] == "auto"


def test_it_forgets_what_it_learned_when_the_profile_points_elsewhere(server, profile):
    # given a profile that learned "auto" on another endpoint and model
    ModelProfile.objects.filter(pk=profile.pk).update(
        tool_choice_support={"base_url": "http://old:8080/v1", "model": "old", "refused": ["named"], "worked": "auto"}
    )
    provider = OpenAICompatProvider.for_lease(ModelProfile.objects.get(pk=profile.pk))
    # when it forces a call, then it names the tool again
    provider.complete(_request(tools=[ROUTE], tool_choice="route_message"))
    assert server.bodies[0]["tool_choice"] == {"type": "function", "function": {"name": "route_message"}}


def test_a_server_refusing_required_still_gets_the_named_form(server, profile):
    # given a server that takes a named tool but not "required" (vLLM before 0.8.3)
    provider = OpenAICompatProvider.for_lease(profile)
    _refuse_tool_choice(server, "'required'")
    server.reply(completion(content=None, tool_calls=[("read_task_state", {})]))
    provider.complete(_request(tool_choice=REQUIRED))
    # when the Router later names its tool, then the named form is still tried: a refusal is not a ladder
    server.reply(completion(content=None, tool_calls=[("route_message", {"route": "answer"})]))
    provider.complete(_request(tools=[ROUTE], tool_choice="route_message"))
    assert [body["tool_choice"] for body in server.bodies] == [
        "required",
        "auto",
        {"type": "function", "function": {"name": "route_message"}},
    ]
    profile.refresh_from_db()
    assert profile.tool_choice_support["refused"] == ["required"]


def test_a_bad_request_about_something_else_is_an_error_not_a_fallback(server, profile):
    provider = OpenAICompatProvider.for_lease(profile)
    server.fail(400, "messages: the context is longer than 2048 tokens")
    with pytest.raises(Exception) as caught:
        provider.complete(_request(tools=[ROUTE], tool_choice="route_message"))
    assert caught.value.code == "model_bad_request" and server.calls == 1
    profile.refresh_from_db()
    assert profile.tool_choice_support == {}


@pytest.mark.parametrize("where", ["lease", "request"])
def test_a_profile_cannot_set_the_tool_choice(server, where):
    # tool_choice belongs to the runtime: a lease's or a request's params naming it are refused, nothing sent
    with pytest.raises(ModelConfigError) as refused:
        if where == "lease":
            OpenAICompatProvider(model=MODEL, base_url=server.url, params={"tool_choice": "none"})
        else:
            OpenAICompatProvider(model=MODEL, base_url=server.url).complete(
                _request(params={"tool_choice": "none"}, tool_choice="route_message", tools=[ROUTE])
            )
    assert refused.value.details["unsupported"] == ["tool_choice"] and server.calls == 0


# --- through the runtime: what the step records ------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_a_turn_records_how_calls_were_read_and_a_call_still_wrong_as_a_failed_call(task, workspace, server):
    # given a workspace whose default model is a local server writing its calls as text
    profile = ModelProfile.objects.create(
        workspace=workspace, name="local", provider=ProviderKind.OPENAI_COMPAT, model=MODEL, base_url=server.url,
        is_default=True,
    )  # fmt: skip
    server.reply(llama_cpp('```json\n{"name": "read_task_state", "arguments": {}}\n```'))
    wrong = '<tool_call>\n{"name": "publish_to_instagram", "arguments": {"caption": "Retro!"}}\n</tool_call>'
    server.reply(llama_cpp(wrong))
    server.reply(llama_cpp(wrong))
    server.reply(llama_cpp("I cannot publish anywhere; the posters are still to be planned."))
    # when a turn of the task runs
    turn = rt.start_turn(task)
    turn_run(turn_id=turn.pk, generation=1)
    # then each step says how its calls were read, and which took a repair round
    steps = list(Step.objects.filter(turn=turn).order_by("index"))
    assert [s.decision.get("call_format") for s in steps] == ["fenced_json", "hermes", None]
    assert [s.decision.get("repaired", False) for s in steps] == [False, True, False]
    assert {s.decision.get("tool_choice") for s in steps} == {"auto"}
    # and the call still wrong after the repair is a failed call with its reason — never run
    read, wrong_call = ToolCall.objects.filter(turn=turn).order_by("pk")
    assert (read.name, read.status) == ("read_task_state", ToolCallStatus.DONE)
    assert (wrong_call.name, wrong_call.status) == ("publish_to_instagram", ToolCallStatus.FAILED)
    assert wrong_call.error["code"] == "tool_not_offered" and wrong_call.result is None
    # and the model read that reason in its next request
    told = json.dumps(server.bodies[3]["messages"])
    assert "tool_not_offered" in told and "publish_to_instagram" in told
    assert turn.model_lease.profile_id == profile.pk


@pytest.mark.django_db(transaction=True)
def test_a_quick_requests_step_requires_its_one_call(workspace, alice, server, no_enqueue):
    # given a local model profile and a quick request (a lightweight task's one-result step)
    ModelProfile.objects.create(
        workspace=workspace, name="local", provider=ProviderKind.OPENAI_COMPAT, model=MODEL, base_url=server.url,
        is_default=True,
    )  # fmt: skip
    server.reply(llama_cpp("What a lovely idea, a ginger cat!"))
    server.reply(llama_cpp("A ginger cat it is."))
    task = task_create(
        access=access_of(alice, workspace),
        title="Ginger cat",
        brief="an image of a ginger cat",
        kind=TaskKind.LIGHTWEIGHT,
    )
    # when its turn runs
    run_queued(task)
    # then the step was offered only the tools that make one result, and a call was required of it
    first, repair = server.bodies
    assert [t["function"]["name"] for t in first["tools"]] == list(SHORT_TOOLS)
    assert first["tool_choice"] == repair["tool_choice"] == "required"
    # and an answer without a call was asked once for the call, then rests as the model's answer
    assert "needs a call to one of the tools" in repair["messages"][-1]["content"]
    (step,) = Step.objects.filter(turn__task=task)
    assert step.decision["tool_calls"] == [] and step.decision["repaired"] is True
    assert step.text == "A ginger cat it is."
