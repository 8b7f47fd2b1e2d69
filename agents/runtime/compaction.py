"""Segmented compaction (DESIGN §7, seed §6.3): the oldest history is summarised in segments appended after the
existing ones, the recent steps stay verbatim, and the originals stay in the log for read_history.

A task's context budget comes from its model's window (the lease's `context_tokens`) less room for the answer.
When a request would pass the high-water mark, the oldest unsummarised steps — whole steps, ending at a turn's
end where one is in reach — are summarised until the request is back under the low-water mark. The summary
is written by the task's own model (offline, or when the model fails, by an extractive summariser that says
it is one) and appended: every byte before it stays as it was, so the provider's cache keeps serving them.

Once the summaries fill their share of the budget, a compaction folds the LAST segment with the steps it
summarises into one new segment instead of appending: the earlier segments keep their bytes, and the summaries
stop growing. Only the bytes of that last segment (and what follows it) change, so the compaction still keeps
about nine tenths of the prefix; folding every segment into one — which rewrites the whole summaries layer — is
left for when nothing less gets the request back under the high-water mark.
"""

import logging
from dataclasses import dataclass
from itertools import accumulate

from django.db import transaction
from django.db.models import Max

from agents.exceptions import ModelError
from agents.fencing import fence_turn
from agents.models import ContextSegment, ModelLease, ProviderKind, Task
from agents.providers.base import ModelProvider, ModelRequest
from agents.runtime.history import History, StepEntry, dumps
from agents.tokens import estimate_tokens

logger = logging.getLogger(__name__)

HIGH_WATER = 0.75  # of the budget: compact when a request would pass it
LOW_WATER = 0.5  # of the budget: compact down to it, so compactions are rare and each re-sends little
SUMMARY_SHARE = 0.25  # of the budget: summaries above it are re-summarised into one
KEEP_RECENT_STEPS = 4  # always verbatim, unless the budget cannot hold them
MAX_SUMMARY_TOKENS = 700
# A segment takes at most this fraction of the summaries' share (on a small model, less than MAX_SUMMARY_TOKENS):
# the layer holds about ten segments before it is full, and a fold of the last one rewrites at most a tenth of it.
SEGMENTS_PER_SHARE = 10
MIN_SEGMENT_TOKENS = 120
MAX_SOURCE_CHARS = 60_000  # of steps sent to a summarising model in one call
EXTRACTIVE = "extractive"
# Providers that are not language models: their summaries are extractive.
NOT_A_WRITER = (ProviderKind.SCRIPTED, ProviderKind.REPLAY)


def context_budget(window: int) -> int:
    """The tokens a request may take: the model's window less room for its answer."""
    return window - min(max(window // 16, 512), 8192)


@dataclass(frozen=True)
class Watermarks:
    budget: int

    @property
    def high(self) -> int:
        return int(self.budget * HIGH_WATER)

    @property
    def low(self) -> int:
        return int(self.budget * LOW_WATER)

    @property
    def segment(self) -> int:
        """The most an extractive segment may take (see SEGMENTS_PER_SHARE)."""
        share = int(self.budget * SUMMARY_SHARE / SEGMENTS_PER_SHARE)
        return max(MIN_SEGMENT_TOKENS, min(MAX_SUMMARY_TOKENS, share))

    @classmethod
    def of(cls, lease: ModelLease) -> "Watermarks":
        return cls(context_budget(lease.context_tokens))


def compaction_due(history: History, request_tokens: int, marks: Watermarks) -> bool:
    return request_tokens > marks.high and len(history.steps) > 1


def summary_estimate(source_tokens: int, limit: int | None = None) -> int:
    """About what a summary of `source_tokens` of steps takes back (extractive summaries run about a third)."""
    return min(MAX_SUMMARY_TOKENS if limit is None else limit, source_tokens // 3 + 40)


@dataclass(frozen=True)
class Plan:
    entries: list[StepEntry]  # the oldest verbatim steps to summarise
    fold: list[ContextSegment]  # the trailing shown segments the new one re-summarises and replaces (often none)

    @property
    def resummarise(self) -> bool:
        return bool(self.fold)


def segment_choose(history: History, request_tokens: int, marks: Watermarks) -> Plan:
    """The oldest verbatim steps to summarise: enough to get under the low-water mark, never the most recent
    KEEP_RECENT_STEPS (unless even the budget cannot hold them), ending at a turn's end when one is in reach.

    When those steps cannot free enough or the summaries pass their share of the budget, the new segment also
    folds in the last segment: the layer stops growing and every earlier segment keeps its bytes. Only when even
    that leaves the request over the high-water mark are all the segments folded into one (which rewrites the
    whole summaries layer, and so the prompt's cache from there on).
    """
    steps = history.steps
    keep = KEEP_RECENT_STEPS
    while keep > 1 and request_tokens - sum(e.tokens for e in steps[: max(len(steps) - keep, 0)]) > marks.budget:
        keep -= 1
    candidates = steps[: max(len(steps) - keep, 0)]
    need = request_tokens - marks.low
    chosen: list[StepEntry] = []
    freed = 0
    for entry in candidates:
        chosen.append(entry)
        freed += entry.tokens
        if freed - summary_estimate(freed, marks.segment) >= need:
            break
    # End at a turn boundary when one lies shortly after the chosen end.
    rest = candidates[len(chosen) :]
    if chosen and rest and rest[0].turn_id == chosen[-1].turn_id:
        boundary = next((i for i in range(len(rest) - 1) if rest[i].turn_id != rest[i + 1].turn_id), None)
        if boundary is not None and boundary < KEEP_RECENT_STEPS * 2:
            chosen.extend(rest[: boundary + 1])
            freed += sum(e.tokens for e in rest[: boundary + 1])
    # Short: even after this segment the request would sit past halfway to the high-water mark again.
    after = request_tokens - freed + summary_estimate(freed, marks.segment)
    short = after > (marks.low + marks.high) // 2
    crowded = history.summary_tokens + summary_estimate(freed, marks.segment) > marks.budget * SUMMARY_SHARE
    segments = history.segments
    if not chosen or not segments or not (short or crowded):
        return Plan(entries=chosen, fold=[])
    # The folded segment's own tokens come back, less nothing: the new summary's estimate already counts.
    if after - segments[-1].tokens > marks.high:
        return Plan(entries=chosen, fold=list(segments))
    return Plan(entries=chosen, fold=[segments[-1]])


# --- summarising -------------------------------------------------------------------------------------------


def _short(text: str, limit: int) -> str:
    text = " ".join(str(text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def extractive_summary(entries: list[StepEntry], *, reason: str = "", limit: int | None = None) -> str:
    """What happened, taken from the steps themselves (no model): the person's words, what the agent said,
    each call and how it ended. Says that it is extractive, and why when a model should have written it."""
    head = "Extractive summary (no model wrote it" + (f"; {reason}" if reason else "") + "):"
    lines = [head]
    for entry in entries:
        *read, said = entry.texts or [""]
        for text in read:
            lines.append(f"- step {entry.number}, the person: {_short(text, 240)}")
        if said:
            lines.append(f"- step {entry.number}, the agent: {_short(said, 160)}")
        for call in entry.calls:
            outcome = call.status
            if call.error:
                outcome += f" ({_short(dumps(call.error), 100)})"
            elif isinstance(call.result, dict):
                outcome += f" ({_short(dumps(call.result), 100)})"
            lines.append(f"- step {entry.number}, {call.name}({_short(dumps(call.input), 80)}) → {outcome}")
    return _within(lines[0], lines[1:], limit)


ELIDED = "- … (the rest is in read_history)"


def _within(head: str, lines: list[str], limit: int | None = None) -> str:
    """`head` and as many of `lines` as fit in `limit` tokens (MAX_SUMMARY_TOKENS), keeping the beginning and the end.

    Lines are joined by newlines, and the estimate never counts a token across whitespace, so a text's estimate
    is the sum of its lines': each line is estimated once, not the whole text again for every line dropped."""
    costs = list(accumulate((estimate_tokens(line) for line in lines), initial=0))
    fixed, elided, total = estimate_tokens(head), estimate_tokens(ELIDED), costs[-1]

    def estimate(keep: int) -> int:
        if keep >= len(lines):
            return fixed + total
        return fixed + elided + costs[(keep + 1) // 2] + total - costs[len(lines) - keep // 2]

    keep = len(lines)
    limit = MAX_SUMMARY_TOKENS if limit is None else limit
    while keep > 0 and estimate(keep) > limit:
        keep -= 1
    shown = lines if keep >= len(lines) else [*lines[: (keep + 1) // 2], ELIDED, *lines[len(lines) - keep // 2 :]]
    return "\n".join([head, *shown])


SUMMARY_INSTRUCTIONS = """You keep the running record of an agent's work on one task. Summarise the steps below for
the agent's own later use, in the task's language, in at most 250 words: what the person asked and decided (their
words for anything exact), what was made (artifact ids and versions), what failed and why, and what is still open.
Do not invent anything; say "unclear" rather than guess. The full steps stay available through read_history."""


def model_summary(provider: ModelProvider, lease: ModelLease, entries: list[StepEntry]) -> str:
    source = dumps([message for entry in entries for message in entry.messages])
    if len(source) > MAX_SOURCE_CHARS:
        half = MAX_SOURCE_CHARS // 2
        source = source[:half] + " … [middle omitted; read_history has it] … " + source[-half:]
    response = provider.complete(
        ModelRequest(
            model=lease.model,
            params=dict(lease.params),
            messages=[
                {"role": "system", "content": SUMMARY_INSTRUCTIONS},
                {"role": "user", "content": source},
            ],
            tools=[],
            state={"summarise": True},
        )
    )
    text = response.text.strip()
    if not text:
        raise ModelError("The model returned an empty summary.", code="empty_summary", retryable=False)
    return text


def summarise(
    provider: ModelProvider | None, lease: ModelLease, entries: list[StepEntry], limit: int | None = None
) -> tuple[str, str]:
    """(summary, who wrote it); an extractive one within `limit` tokens."""
    if provider is None or lease.provider in NOT_A_WRITER:
        return extractive_summary(entries, limit=limit), EXTRACTIVE
    try:
        return model_summary(provider, lease, entries), lease.model
    except ModelError as exc:
        logger.warning("summarising with %s failed (%s); writing an extractive summary", lease.model, exc.code)
        return extractive_summary(entries, reason=f"the model failed: {exc.code}", limit=limit), EXTRACTIVE


# --- the whole move ----------------------------------------------------------------------------------------


def compaction_run(
    *,
    task: Task,
    lease: ModelLease,
    history: History,
    provider: ModelProvider | None,
    request_tokens: int,
    fence: tuple[int, int] | None = None,
) -> ContextSegment | None:
    """Summarise the oldest steps if the request is over the high-water mark; returns the appended segment.

    The model call runs outside any transaction; the segment is written under the turn's fence (`fence` =
    (turn id, generation)), so a worker that lost its turn writes nothing and stops.
    """
    marks = Watermarks.of(lease)
    if not compaction_due(history, request_tokens, marks):
        return None
    plan = segment_choose(history, request_tokens, marks)
    entries, fold = plan.entries, plan.fold
    if not entries:
        return None
    summary, summariser = summarise(provider, lease, entries, marks.segment)
    if fold:
        earlier = "\n\n".join(s.summary for s in fold)
        summary, summariser = _resummarise(provider, lease, earlier, summary, marks.segment)
    # A new segment that starts where the folded ones did replaces them (history.shown_segments).
    start = fold[0].from_step if fold else entries[0].number
    with transaction.atomic():
        if fence is not None:
            fence_turn(*fence)
        number = (ContextSegment.objects.filter(task=task).aggregate(n=Max("number"))["n"] or 0) + 1
        segment = ContextSegment.objects.create(
            task=task,
            number=number,
            from_step=start,
            to_step=entries[-1].number,
            summary=summary,
            tokens=estimate_tokens(summary),
            source_tokens=sum(e.tokens for e in entries),
            summariser=summariser[:200],
        )
    history.append_segment(segment)
    return segment


def _resummarise(provider, lease: ModelLease, earlier: str, latest: str, limit: int) -> tuple[str, str]:
    """One summary for the folded segments' summaries (`earlier`) and the newly summarised steps (`latest`)."""
    text = earlier + "\n\n" + latest
    reason = ""
    if provider is not None and lease.provider not in NOT_A_WRITER:
        entry = StepEntry(number=0, turn_id=0, messages=[{"role": "user", "content": text}], tokens=0)
        try:
            return model_summary(provider, lease, [entry]), lease.model
        except ModelError as exc:
            logger.warning("re-summarising with %s failed (%s)", lease.model, exc.code)
            reason = f"; the model failed: {exc.code}"
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith("Extractive summary")]
    head = f"Extractive summary of the earlier summaries (no model wrote it{reason}):"
    return _within(head, lines, limit), EXTRACTIVE
