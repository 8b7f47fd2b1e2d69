"""A task's history as the model reads it (DESIGN §7): segment summaries, append-only, then the steps after the
last summary verbatim — each step as the messages it consumed, what the model said and proposed, and its tool
results (a large result as a stub the model can read back with read_tool_result).

A runner keeps one History per run. The first use reads the log; after that the runner appends each step it
finishes from memory (while it holds the turn nobody else adds steps to this task), and compaction appends a
segment and drops the steps it covers — so a step costs the same at step 300 as at step 3.
"""

import hashlib
import json
from dataclasses import dataclass, field

from django.conf import settings

from agents.models import ContextSegment, Step, Task, ToolCall, ToolCallStatus
from agents.services.forgotten import Redactor
from agents.tokens import estimate_tokens
from agents.tools.base import DOMAINS
from agents.tools.readback import result_for_context
from agents.tools.registry import domain_schemas


def dumps(value) -> str:
    """The canonical JSON of everything the model is sent: the same value is always the same bytes."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


INTERRUPTED = dumps(
    {
        "outcome_unknown": True,
        "message": "This call was interrupted before its result was recorded; it was not run again. A resume "
        "settles it by its receipt, or a person reviews it. Check the current state before relying on it.",
    }
)


def tool_message(call: ToolCall) -> dict:
    if not call.is_finished:  # an earlier turn's call left unfinished (a pause, a dead worker): say so
        return {"role": "tool", "tool_call_id": call.provider_call_id or call.call_id, "content": INTERRUPTED}
    # A large outcome stays in the log; the model pages through it with read_tool_result instead of carrying it.
    content = result_for_context(call, settings.LOMOTE_TOOL_RESULT_CONTEXT_CHARS)
    return {"role": "tool", "tool_call_id": call.provider_call_id or call.call_id, "content": content}


def assistant_message(step: Step, calls: list[ToolCall]) -> dict:
    message: dict = {"role": "assistant", "content": step.text or None}
    if calls:
        message["tool_calls"] = [
            {
                "id": call.provider_call_id or call.call_id,
                "type": "function",
                "function": {"name": call.name, "arguments": dumps(call.input)},
            }
            for call in calls
        ]
    return message


def segment_message(segment: ContextSegment) -> dict:
    return {
        "role": "system",
        "content": f"[History, steps {segment.from_step}–{segment.to_step}, summarised by {segment.summariser}; "
        f"the originals: read_history(from_step={segment.from_step}, to_step={segment.to_step})]\n{segment.summary}",
    }


def loaded_message(segment: ContextSegment, domains: list[str]) -> dict:
    """The schemas of the domains loaded within a summarised segment: the load's own result (which carried
    them) is summarised away, and the model still calls those tools. Right after its segment, so it keeps its
    bytes exactly as long as the segment does."""
    loads = [dumps({"loaded": domain, **domain_schemas(domain)}) for domain in domains]
    return {
        "role": "system",
        "content": f"[Tools loaded in steps {segment.from_step}–{segment.to_step}: call them by name, with these "
        "schemas]\n" + "\n".join(loads),
    }


@dataclass
class StepEntry:
    """One verbatim step in the history: its number, turn, rendered messages and their token estimate."""

    number: int
    turn_id: int
    messages: list[dict]
    tokens: int
    texts: list[str] = field(default_factory=list)  # what it said and read, for an extractive summary
    calls: list[ToolCall] = field(default_factory=list)


class History:
    def __init__(self, task: Task, *, turn_id: int | None = None):
        self.task = task
        self.turn_id = turn_id  # the turn being run: its last step's unfinished calls are the runner's to finish
        self.segments: list[ContextSegment] = []
        self.steps: list[StepEntry] = []
        self.loaded_domains: list[str] = []  # in the order they were loaded
        self.loaded_at: dict[str, int] = {}  # domain → number of the step that first loaded it
        self.last_pk = 0
        self.loaded = False
        self.recall = None  # the memories recalled for this run's goal (agents/runtime/context.py)
        self.redactor = Redactor(task.workspace_id)  # what a forget keeps out (agents/services/forgotten.py)
        self.recall_key: tuple | None = None
        # Kept as steps are added, so that a step's cost does not grow with the steps before it.
        self._messages: list[dict] = []
        self._step_tokens = 0
        self._summary_messages: list[dict] | None = None  # rendered once per change of the segments
        self.guides_read: dict[int, dict[str, dict]] = {}  # turn id → guide name → its name and version read

    # --- reading the log once ---

    def load(self) -> None:
        if self.loaded:
            return
        self.segments = shown_segments(ContextSegment.objects.filter(task=self.task).order_by("number"))
        start = self.segments[-1].to_step + 1 if self.segments else 0
        steps = (
            Step.objects.filter(turn__task=self.task, number__gte=start)
            .order_by("number", "pk")
            .prefetch_related("tool_calls", "consumed_messages")
        )
        for step in steps:
            calls = sorted(step.tool_calls.all(), key=lambda c: c.index)
            if step.turn_id == self.turn_id and any(not c.is_finished for c in calls):
                break  # the runner finishes them and adds the step (only its own turn's last step can be so)
            consumed = sorted(step.consumed_messages.all(), key=lambda m: m.pk)
            self.add(step, calls, [m.text for m in consumed])
        loads = ToolCall.objects.filter(turn__task=self.task, name="load_tools", status=ToolCallStatus.DONE)
        ordered = loads.order_by("step__number", "step_id", "index").values_list("input__domain", "step__number")
        for domain, number in ordered:
            self._load_domain(domain, number)
        self._summary_messages = None
        self.loaded = True

    # --- appending ---

    def add(self, step: Step, calls: list[ToolCall], consumed_texts: list[str]) -> None:
        """Append a finished step (ignored if already present)."""
        if step.pk <= self.last_pk or (self.segments and step.number <= self.covered_to):
            return
        messages = [{"role": "user", "content": text} for text in consumed_texts]
        messages.append(assistant_message(step, calls))
        messages.extend(tool_message(call) for call in calls)
        self.steps.append(
            StepEntry(
                number=step.number,
                turn_id=step.turn_id,
                messages=messages,
                tokens=estimate_tokens("\n".join(dumps(m) for m in messages)),
                texts=[*consumed_texts, step.text],
                calls=calls,
            )
        )
        self._messages.extend(messages)
        self._step_tokens += self.steps[-1].tokens
        for call in calls:
            if call.status != ToolCallStatus.DONE:
                continue
            if call.name == "load_tools" and isinstance(call.input, dict):
                self._load_domain(call.input.get("domain"), step.number)
            result = call.result if isinstance(call.result, dict) else {}
            if call.name == "read_guide" and result.get("name"):
                read = self.guides_read.setdefault(step.turn_id, {})
                read[result["name"]] = {"name": result["name"], "version": result.get("version")}
        self.last_pk = step.pk

    def append_segment(self, segment: ContextSegment) -> None:
        """A new summary: it goes after the earlier ones (or, re-summarising them, replaces them)."""
        self.segments = shown_segments([*self.segments, segment])
        self._summary_messages = None
        self.steps = [entry for entry in self.steps if entry.number > segment.to_step]
        self._messages = [message for entry in self.steps for message in entry.messages]
        self._step_tokens = sum(entry.tokens for entry in self.steps)

    def _load_domain(self, domain, number: int) -> None:
        if domain in DOMAINS and domain not in self.loaded_domains:
            self.loaded_domains.append(domain)
            self.loaded_at[domain] = number

    # --- what the model reads ---

    @property
    def covered_to(self) -> int:
        return self.segments[-1].to_step if self.segments else 0

    def summary_messages(self) -> list[dict]:
        """Each segment's summary, each followed by the schemas of the domains loaded within it (if any)."""
        if self._summary_messages is None:
            messages = []
            for segment in self.segments:
                messages.append(segment_message(segment))
                domains = [d for d, n in self.loaded_at.items() if segment.from_step <= n <= segment.to_step]
                if domains:
                    messages.append(loaded_message(segment, domains))
            self._summary_messages = messages
        return list(self._summary_messages)

    def step_messages(self) -> list[dict]:
        return list(self._messages)

    @property
    def summary_tokens(self) -> int:
        return sum(segment.tokens for segment in self.segments)

    @property
    def step_tokens(self) -> int:
        return self._step_tokens


def shown_segments(segments) -> list[ContextSegment]:
    """The segments the context shows: each one no later segment covers, in order."""
    shown: list[ContextSegment] = []
    for segment in segments:
        shown = [s for s in shown if s.from_step < segment.from_step]
        shown.append(segment)
    return shown
