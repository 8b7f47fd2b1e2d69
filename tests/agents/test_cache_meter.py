"""The cache meter: what an OpenAI-style prompt cache would have served (DESIGN §7, issue 12 item 7). Pure."""

import json

import pytest

from agents.providers.base import ModelRequest, ModelResponse, ToolSpec, Usage
from agents.providers.cache_meter import CacheMeter, cached_tokens, common_prefix_length
from agents.tokens import estimate_tokens

TOOLS = [
    ToolSpec(name="read_task_state", description="Read the task.", parameters={"type": "object", "properties": {}}),
    ToolSpec(name="update_checklist", description="Plan.", parameters={"type": "object", "properties": {}}),
]


class Fixed:
    """A provider that answers every request the same way, with the usage the test gives."""

    kind = "fixed"

    def __init__(self, usage: Usage | None = None):
        self.usage = usage or Usage()
        self.requests: list[ModelRequest] = []

    def complete(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        return ModelResponse(text="ok", tool_calls=[], usage=self.usage, model="fixed-1")


def words(n: int, seed: str = "w") -> str:
    """n distinct words of letters, a token each for the estimator (`seed` letters, then i in base 26)."""
    return " ".join(seed + "".join(chr(97 + i // 26**k % 26) for k in range(3)) for i in range(n))


def request(*texts: str, task: int | None = 7, tools=TOOLS) -> ModelRequest:
    messages = [{"role": "system", "content": "You are Lomote's creative agent."}]
    messages += [{"role": "user", "content": text} for text in texts]
    state = {"task": {"id": task}} if task is not None else {}
    return ModelRequest(model="m", params={}, messages=messages, tools=list(tools), state=state)


def render(req: ModelRequest) -> str:
    dumps = lambda v: json.dumps(v, ensure_ascii=False, sort_keys=True, separators=(",", ":"))  # noqa: E731
    return "\n".join([*(dumps(t.as_openai()) for t in req.tools), *(dumps(m) for m in req.messages)])


# --- the rule ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prefix", "cached"), [(0, 0), (1023, 0), (1024, 1024), (1151, 1024), (1152, 1152), (5000, 4992)]
)
def test_the_cache_serves_whole_128_token_blocks_from_1024_tokens(prefix, cached):
    assert cached_tokens(prefix) == cached


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("", ""),
        ("abc", ""),
        ("abc", "abc"),
        ("abcd", "abcx"),
        ("xbc", "abc"),
        ("abc", "abcdef"),
        ("a" * 9999, "a" * 10_000),
    ],
)
def test_the_common_prefix_is_the_longest_one(a, b):
    expected = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    assert common_prefix_length(a, b) == common_prefix_length(b, a) == expected


# --- what the meter reports ----------------------------------------------------------------------------------


def test_an_identical_request_is_cached_in_128_token_blocks():
    meter = CacheMeter(Fixed())
    req = request(words(3000))
    first = meter.complete(req)
    second = meter.complete(req)
    whole = estimate_tokens(render(req))
    assert first.usage.cached_prompt_tokens == 0  # nothing to share with yet
    assert first.usage.prompt_tokens == second.usage.prompt_tokens == whole
    assert second.usage.cached_prompt_tokens == whole - whole % 128
    assert meter.records[1].prefix_chars == meter.records[1].render_chars == len(render(req))


def test_a_request_that_appends_a_message_is_served_its_earlier_part():
    meter = CacheMeter(Fixed())
    earlier = request(words(2000))
    later = request(words(2000), words(500, seed="n"))
    meter.complete(earlier)
    response = meter.complete(later)
    shared = render(earlier)
    assert render(later).startswith(shared)
    # The earlier request's render is all shared (its last message ends where the new one starts).
    assert meter.records[1].prefix_chars == len(shared)
    assert response.usage.cached_prompt_tokens == cached_tokens(estimate_tokens(shared)) > 0
    assert response.usage.cached_prompt_tokens < response.usage.prompt_tokens


def test_a_shared_prefix_below_1024_tokens_is_not_cached():
    meter = CacheMeter(Fixed())
    meter.complete(request(words(800)))
    response = meter.complete(request(words(800)))
    assert meter.records[1].prefix_chars > 0
    assert response.usage.cached_prompt_tokens == 0


def test_a_change_at_the_start_loses_everything():
    meter = CacheMeter(Fixed())
    meter.complete(request(words(3000)))
    # A timestamp in the first tool's description: every byte after it differs from the cache's point of view.
    moved = [ToolSpec(name="read_task_state", description="Read the task. 12:04", parameters={}), TOOLS[1]]
    response = meter.complete(request(words(3000), tools=moved))
    assert response.usage.cached_prompt_tokens == 0
    assert meter.records[1].prefix_chars < 100


def test_reordered_tools_lose_the_cache():
    meter = CacheMeter(Fixed())
    meter.complete(request(words(3000)))
    response = meter.complete(request(words(3000), tools=list(reversed(TOOLS))))
    assert response.usage.cached_prompt_tokens == 0


def test_tasks_do_not_share_a_cache():
    meter = CacheMeter(Fixed())
    meter.complete(request(words(3000), task=1))
    other = meter.complete(request(words(3000), task=2))
    again = meter.complete(request(words(3000), task=1))
    assert other.usage.cached_prompt_tokens == 0
    assert again.usage.cached_prompt_tokens > 0
    assert [r.task for r in meter.records] == [1, 2, 1]


def test_requests_without_a_task_share_one_key():
    meter = CacheMeter(Fixed())
    meter.complete(request(words(3000), task=None))
    response = meter.complete(request(words(3000), task=None))
    assert meter.records[1].task is None
    assert response.usage.cached_prompt_tokens > 0


def test_it_compares_with_any_of_the_last_renders_kept():
    meter = CacheMeter(Fixed(), renders_kept=2)
    base = words(3000)
    meter.complete(request(base))
    meter.complete(request(words(3000, seed="x")))
    # The first render is still kept: the third request shares all of it.
    assert meter.complete(request(base)).usage.cached_prompt_tokens > 0
    meter.complete(request(words(3000, seed="y")))
    meter.complete(request(words(3000, seed="z")))
    # Now only the two latest are kept.
    assert meter.complete(request(base)).usage.cached_prompt_tokens == 0


def test_the_prefix_estimate_is_the_estimate_of_the_prefix():
    # Counted piece by piece (memoised), it equals estimating the prefix's text at once, wherever the cut falls.
    meter = CacheMeter(Fixed())
    first = request(words(1500), "Voilà 12 345 €, 日本語 and_snake_case!", words(700, seed="q"))
    second = request(words(1500), "Voilà 12 345 €, 日本語 and_snake_case!", words(700, seed="q") + " tail")
    meter.complete(first)
    meter.complete(second)
    record = meter.records[1]
    text = render(second)
    assert record.estimated_prompt_tokens == estimate_tokens(text)
    assert record.estimated_cached_tokens == cached_tokens(estimate_tokens(text[: record.prefix_chars]))


# --- the provider's own figures --------------------------------------------------------------------------------


def test_the_providers_reported_tokens_win():
    meter = CacheMeter(Fixed(Usage(prompt_tokens=4000, completion_tokens=12, cached_prompt_tokens=3840)))
    first = meter.complete(request(words(3000)))
    # The provider reported a cache hit the meter could not have seen (its cache is shared across tasks).
    assert (first.usage.prompt_tokens, first.usage.cached_prompt_tokens, first.usage.completion_tokens) == (
        4000,
        3840,
        12,
    )
    assert meter.records[0].estimated_cached_tokens == 0


def test_a_provider_that_reports_only_prompt_tokens_gets_the_meters_cached_tokens_within_them():
    meter = CacheMeter(Fixed(Usage(prompt_tokens=2000, completion_tokens=5)))
    meter.complete(request(words(3000)))
    response = meter.complete(request(words(3000)))
    assert response.usage.prompt_tokens == 2000
    assert response.usage.cached_prompt_tokens == 2000  # the meter's ~3000 capped at the provider's count
    assert response.text == "ok" and response.model == "fixed-1"


def test_it_is_a_provider_of_the_wrapped_kind_and_forwards_the_request_untouched():
    provider = Fixed()
    meter = CacheMeter(provider)
    req = request(words(10))
    meter.complete(req)
    assert meter.kind == "fixed"
    assert provider.requests == [req]


# --- records and ratio ---------------------------------------------------------------------------------------


def test_records_and_the_steady_state_ratio():
    meter = CacheMeter(Fixed())
    history = [words(3000)]
    for step in range(5):
        meter.complete(request(*history))
        history.append(words(50, seed="s" + chr(97 + step)))
    assert len(meter.records) == 5
    assert meter.records[0].cached_tokens == 0
    assert all(r.prompt_tokens > r.cached_tokens > 0 for r in meter.records[1:])
    assert [r.render_chars for r in meter.records] == sorted(r.render_chars for r in meter.records)
    # Counting the cold first request pulls the ratio down; at steady state it is the growth that is not cached.
    assert meter.ratio() < meter.ratio(skip=1)
    assert 0.9 < meter.ratio(skip=1) < 1.0
    expected = sum(r.cached_tokens for r in meter.records[1:]) / sum(r.prompt_tokens for r in meter.records[1:])
    assert meter.ratio(skip=1, reported=True) == pytest.approx(expected)
    assert CacheMeter(Fixed()).ratio() == 0.0
