"""What an OpenAI-style prompt cache would have served, measured offline (DESIGN §7): a provider wrapper.

    meter = CacheMeter(provider)
    response = meter.complete(request)   # usage.cached_prompt_tokens filled in when the provider gave none
    meter.ratio(skip=1)                  # cached / prompt tokens over the requests after the first

Such a cache serves the longest prefix a request shares with an earlier one, from 1,024 tokens, in blocks
of 128 tokens. The meter renders each request as the API hashes it — the tools (canonical JSON, in the
order given) then the messages (one canonical JSON each, in order) — and finds the longest common prefix
with the earlier requests of the same task. Token counts are the offline estimate (agents/tokens.py); a
provider's own figures win wherever it reports them.
"""

import json
import threading
from bisect import bisect_right
from collections import OrderedDict, deque
from dataclasses import dataclass, replace
from typing import Any

from agents.providers.base import ModelProvider, ModelRequest, ModelResponse
from agents.tokens import estimate_tokens

CACHE_MIN_TOKENS = 1_024
CACHE_BLOCK_TOKENS = 128
RENDERS_KEPT = 8  # earlier requests per task a new one is compared with
TASKS_KEPT = 1_024  # tasks whose renders are kept, least recently seen dropped first
_PIECE_TOKENS_KEPT = 16_384  # memoised estimates: a long history re-renders the same messages at every step


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def cached_tokens(prefix_tokens: int) -> int:
    """What the cache serves of a shared prefix of `prefix_tokens`: nothing below 1,024, else whole 128-blocks."""
    if prefix_tokens < CACHE_MIN_TOKENS:
        return 0
    return prefix_tokens - prefix_tokens % CACHE_BLOCK_TOKENS


def common_prefix_length(a: str, b: str) -> int:
    """The length of the longest common prefix, by halving: string comparisons in C, about 2·n characters."""
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    low, high = 0, n  # a[:low] == b[:low] and the first difference is before `high`: at `low` once they meet
    while high - low > 1:
        middle = (low + high) // 2
        if a[low:middle] == b[low:middle]:
            low = middle
        else:
            high = middle
    return low


@dataclass(frozen=True)
class MeterRecord:
    task: Any  # the task id, or None for requests without one
    prompt_tokens: int  # as returned: the provider's figure, else the meter's estimate
    cached_tokens: int  # as returned: the provider's figure, else the meter's
    estimated_prompt_tokens: int  # the meter's estimate of the whole render
    estimated_cached_tokens: int  # what the meter says the cache served, in its own estimate
    prefix_chars: int  # the longest prefix shared with an earlier request of the task
    render_chars: int


class _Render:
    """A request as the cache sees it: its pieces joined by newlines, and the estimate up to each piece's end.

    Newlines split the estimator's pieces, so a prefix's estimate is the sum over the whole pieces it covers
    plus the estimate of the cut piece's start: no re-estimating the whole history at every step.
    """

    def __init__(self, pieces: list[str], piece_tokens: list[int]):
        self.text = "\n".join(pieces)
        self.ends: list[int] = []  # offset just after each piece
        self.tokens_to: list[int] = []  # estimate of the text up to that offset
        offset = total = 0
        for piece, tokens in zip(pieces, piece_tokens, strict=True):
            offset += len(piece)
            total += tokens
            self.ends.append(offset)
            self.tokens_to.append(total)
            offset += 1  # the newline
        self.tokens = total

    def tokens_of_prefix(self, chars: int) -> int:
        whole = bisect_right(self.ends, chars)  # pieces that end within the prefix
        tokens = self.tokens_to[whole - 1] if whole else 0
        start = self.ends[whole - 1] + 1 if whole else 0
        return tokens + (estimate_tokens(self.text[start:chars]) if chars > start else 0)


class CacheMeter:
    """A ModelProvider that forwards to `provider` and measures the prompt cache (see the module docstring).

    `records` holds one MeterRecord per completed request, in order, for benches and tests.
    """

    def __init__(self, provider: ModelProvider, *, renders_kept: int = RENDERS_KEPT):
        self.provider = provider
        self.records: list[MeterRecord] = []
        self._renders_kept = renders_kept
        self._renders: OrderedDict[Any, deque[str]] = OrderedDict()
        self._piece_tokens: OrderedDict[str, int] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def kind(self) -> str:
        return self.provider.kind

    def complete(self, request: ModelRequest) -> ModelResponse:
        task = _task_key(request)
        with self._lock:
            render = self._render(request)
            earlier = list(self._renders.get(task, ()))
        prefix = max((common_prefix_length(render.text, text) for text in earlier), default=0)
        estimated_cached = cached_tokens(render.tokens_of_prefix(prefix))

        response = self.provider.complete(request)

        reported = response.usage
        prompt = reported.prompt_tokens if reported.prompt_tokens > 0 else render.tokens
        cached = reported.cached_prompt_tokens if reported.cached_prompt_tokens > 0 else min(estimated_cached, prompt)
        record = MeterRecord(
            task=task,
            prompt_tokens=prompt,
            cached_tokens=cached,
            estimated_prompt_tokens=render.tokens,
            estimated_cached_tokens=estimated_cached,
            prefix_chars=prefix,
            render_chars=len(render.text),
        )
        with self._lock:
            self.records.append(record)
            renders = self._renders.setdefault(task, deque(maxlen=self._renders_kept))
            renders.append(render.text)
            self._renders.move_to_end(task)
            while len(self._renders) > TASKS_KEPT:
                self._renders.popitem(last=False)
        usage = replace(reported, prompt_tokens=prompt, cached_prompt_tokens=cached)
        return replace(response, usage=usage)

    def ratio(self, skip: int = 0, *, reported: bool = False) -> float:
        """Cached over prompt tokens for the requests after the first `skip` (warm-up), 0.0 when there are none.

        In the meter's own estimates by default (one scale for both); `reported=True` uses the figures the
        responses carried, which mix the provider's counts with the meter's.
        """
        records = self.records[skip:]
        if reported:
            prompt, cached = sum(r.prompt_tokens for r in records), sum(r.cached_tokens for r in records)
        else:
            prompt = sum(r.estimated_prompt_tokens for r in records)
            cached = sum(r.estimated_cached_tokens for r in records)
        return cached / prompt if prompt else 0.0

    def _render(self, request: ModelRequest) -> _Render:
        pieces = [_dumps(tool.as_openai()) for tool in request.tools]
        pieces += [_dumps(message) for message in request.messages]
        return _Render(pieces, [self._tokens(piece) for piece in pieces])

    def _tokens(self, piece: str) -> int:
        tokens = self._piece_tokens.get(piece)
        if tokens is None:
            tokens = self._piece_tokens[piece] = estimate_tokens(piece)
            if len(self._piece_tokens) > _PIECE_TOKENS_KEPT:
                self._piece_tokens.popitem(last=False)
        else:
            self._piece_tokens.move_to_end(piece)
        return tokens


def _task_key(request: ModelRequest) -> Any:
    task = request.state.get("task")
    return task.get("id") if isinstance(task, dict) else None
