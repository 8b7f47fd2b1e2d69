"""How a collaboration went, measured from stored facts only (seed 000 §11.3) — never from what a model wrote.

Per workspace (a scenario runs in a workspace of its own), from `since` on:

- **stalls**: a task stopped with open checklist items and no card open for the person — the moments a person
  would have had to type "continue" (agents/services/metrics.py defines and finds them);
- **duplicate generations**: generation jobs with the same inputs (kind, provider, prompt, parameters, and the
  artifact version they build on) beyond the first that did not fail — a retry after a failure is not a duplicate,
  a second paid job for inputs already being made or made is;
- **unnecessary confirmations**: cards that asked a person although no rule required it, judged with the policy
  and the task's autonomy as they stood when the card opened (`card_necessity` says which rule asked); a resumed
  task's review the replay contract would have settled (DESIGN §11: a worker crash alone) counts too;
- **misrouted follow-ups**: messages the scenario meant for an existing task that went elsewhere (the scenario
  states the intent; the stored route and task say what happened);
- **split copies**: a new artifact where a new version was meant — a checklist item whose deliverable ended up as
  two artifacts of one kind, or a revision the person asked for that made new artifacts of that kind in the task
  instead of versions of the ones named;
- and the costs: turns, model calls, tokens, credits captured.
"""

import hashlib
import json
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db.models import Sum

from agents.models import Autonomy, Card, CardKind, ChecklistItem, MainMessage, Route, Step, ToolCall, Turn
from agents.resume import Verdict
from agents.services.metrics import stalls_list
from agents.tools.registry import tool_get
from billing.models import Order, OrderStatus, SpendPolicy
from workspace.models import Event, GenerationJob, JobStatus
from workspace.providers.registry import provider_is_ours

# Cards a rule always requires: irreversible operations.
ALWAYS_REQUIRED = {
    "artifact_delete": "irreversible",
    "memory_forget": "irreversible",
}
# Reasons billing gives for asking that hold whatever the amount: an API request (confirmed one by one). An
# approved budget that ran out is not one: a cost within the workspace's limits never asks (DESIGN §5), so
# `budget` alone required nothing; it only says why the budget did not pay for a cost above the limits.
UNCONDITIONAL_BILLING_REASONS = {"api_request"}


@dataclass(frozen=True)
class RouteIntent:
    """A message the scenario meant for an existing task (follow_up), or for a new one."""

    message_id: int
    route: str  # the route meant: follow_up or new_task
    task_id: int | None  # the task meant, for a follow-up


@dataclass(frozen=True)
class RevisionIntent:
    """The person asked, at `at`, for new versions of these artifacts of a task (until `until`)."""

    task_id: int
    artifact_ids: tuple[int, ...]
    at: datetime
    until: datetime | None = None


@dataclass
class Intents:
    """What the scenario meant, recorded as the scripted person acts: the ground truth beside the facts."""

    routes: list[RouteIntent] = field(default_factory=list)
    revisions: list[RevisionIntent] = field(default_factory=list)


@dataclass
class Metrics:
    stalls: int = 0
    duplicate_generations: int = 0
    unnecessary_confirmations: int = 0
    confirmations: int = 0
    follow_ups: int = 0
    follow_ups_right: int = 0
    split_copies: int = 0
    turns: int = 0
    model_calls: int = 0
    tokens: int = 0
    credits: int = 0
    findings: list[str] = field(default_factory=list)  # one line per bad case found, for the report

    @property
    def follow_ups_routed_right(self) -> float:
        """The share of follow-ups routed to the task meant (1.0 when there were none)."""
        return self.follow_ups_right / self.follow_ups if self.follow_ups else 1.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "stalls": self.stalls,
            "duplicate_generations": self.duplicate_generations,
            "unnecessary_confirmations": self.unnecessary_confirmations,
            "confirmations": self.confirmations,
            "follow_ups": self.follow_ups,
            "follow_ups_right": self.follow_ups_right,
            "follow_ups_routed_right": round(self.follow_ups_routed_right, 4),
            "split_copies": self.split_copies,
            "turns": self.turns,
            "model_calls": self.model_calls,
            "tokens": self.tokens,
            "credits": self.credits,
            "findings": list(self.findings),
        }


def collaboration_metrics(
    *, workspace_id: int, intents: Intents | None = None, since: datetime | None = None
) -> Metrics:
    intents = intents or Intents()
    metrics = Metrics()
    _stalls(metrics, workspace_id, since)
    _duplicates(metrics, workspace_id, since)
    _confirmations(metrics, workspace_id, since)
    _routes(metrics, workspace_id, intents.routes)
    _splits(metrics, workspace_id, since, intents.revisions)
    _costs(metrics, workspace_id, since)
    return metrics


# --- stalls -----------------------------------------------------------------------------------------------


def _stalls(metrics: Metrics, workspace_id: int, since: datetime | None) -> None:
    for stall in stalls_list(workspace_id=workspace_id, since=since):
        metrics.stalls += 1
        metrics.findings.append(
            f"stall: task #{stall.task_id} stopped {stall.status} ({stall.reason}) with {stall.open_items} open "
            f"item(s) and no card (event {stall.seq})"
        )


# --- duplicate generations --------------------------------------------------------------------------------


def job_inputs(job: GenerationJob) -> str:
    """A fingerprint of what a job was asked to make. The target artifact counts only when it was named at
    submission (with the version the job builds on): a new artifact's id is only known after success."""
    inputs = {
        "kind": job.kind,
        "provider": job.provider,
        "prompt": job.prompt.strip(),
        "params": job.params,
        "builds_on": [job.artifact_id, job.base_version] if job.base_version is not None else None,
    }
    canonical = json.dumps(inputs, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _duplicates(metrics: Metrics, workspace_id: int, since: datetime | None) -> None:
    jobs = GenerationJob.objects.filter(workspace_id=workspace_id).exclude(
        status__in=[JobStatus.FAILED, JobStatus.TIMED_OUT]
    )
    if since is not None:
        jobs = jobs.filter(created_at__gte=since)
    groups: dict[str, list[GenerationJob]] = defaultdict(list)
    for job in jobs.order_by("pk"):
        groups[job_inputs(job)].append(job)
    for same in groups.values():
        if len(same) > 1:
            metrics.duplicate_generations += len(same) - 1
            ids = ", ".join(f"#{job.pk}" for job in same)
            metrics.findings.append(f"duplicate generation: jobs {ids} had the same inputs ({same[0].kind})")


# --- unnecessary confirmations ----------------------------------------------------------------------------


class _Timeline:
    """The spend policy and each task's autonomy as they stood at a moment, replayed from the event log."""

    def __init__(self, workspace_id: int):
        events = Event.objects.filter(workspace_id=workspace_id, kind__in=["billing.policy", "task.settings"])
        self.policy_changes: list[tuple[datetime, dict, dict]] = []
        self.autonomy_changes: dict[int, list[tuple[datetime, str]]] = defaultdict(list)
        for event in events.order_by("seq"):
            if event.kind == "billing.policy":
                self.policy_changes.append((event.created_at, event.data.get("before") or {}, event.data))
            else:
                self.autonomy_changes[event.data.get("task")].append((event.created_at, event.data.get("autonomy")))
        current = SpendPolicy.objects.filter(workspace_id=workspace_id).first() or SpendPolicy.defaults_for(
            workspace_id
        )
        self.current_policy = {
            "no_confirm_threshold": current.no_confirm_threshold,
            "daily_no_confirm_cap": current.daily_no_confirm_cap,
        }

    def policy_at(self, at: datetime) -> dict:
        before = [after for when, _, after in self.policy_changes if when <= at]
        if before:
            return before[-1]
        later = [previous for when, previous, _ in self.policy_changes if when > at]
        return later[0] if later else self.current_policy

    def autonomy_at(self, task_id: int | None, at: datetime) -> str:
        # Tasks are created with the default autonomy; every change after that is a `task.settings` event.
        changes = [autonomy for when, autonomy in self.autonomy_changes.get(task_id, []) if when <= at]
        return changes[-1] if changes else Autonomy.CHECKPOINTS


def card_necessity(card: Card, timeline: _Timeline, items: dict[int, ChecklistItem]) -> str | None:
    """The rule that required this card, or None when nothing did (an unnecessary confirmation)."""
    payload = card.payload or {}
    source = payload.get("source", "")
    if source in ALWAYS_REQUIRED:
        return ALWAYS_REQUIRED[source]
    if source == "resume_review":
        return _resume_rule(card)
    if source == "router" or card.kind == CardKind.CLARIFY:
        return "routing_ambiguity"  # the Router could not tell which task was meant; routing metrics judge it
    autonomy = timeline.autonomy_at(card.task_id, card.created_at)
    if card.kind == CardKind.QUOTE or source in ("approval", "flow_run"):
        return _billing_rule(payload, timeline.policy_at(card.created_at))
    if source == "confirm_call":
        if payload.get("reason") == "irreversible":
            return "irreversible"
        return "autonomy_ask" if autonomy == Autonomy.ASK else None
    if source == "continue":
        return "autonomy_ask" if autonomy == Autonomy.ASK else None
    if card.kind == CardKind.CHOICE and len(card.options or []) >= 2:
        return "a_choice"  # a real question with options: only the person can answer it
    # A yes/no confirmation asked by the model or by the safety net: required at a checkpoint item, unless the
    # person chose `auto`; asked about nothing in particular, it is required only under `ask`.
    item = items.get(payload.get("checklist_item"))
    if item is not None and item.needs_confirmation and autonomy != Autonomy.AUTO:
        return "checkpoint"
    if autonomy == Autonomy.ASK:
        return "autonomy_ask"
    return None


def _resume_rule(card: Card) -> str | None:
    """A resumed task's review is required unless the replay contract would have settled it (DESIGN §11): no receipt
    of a call whose receipts are ours, with nothing changed meanwhile (it runs again under its id), or a submission
    left unconfirmed on a provider we own (our own records settle it). A worker crash alone asks nobody."""
    payload = card.payload or {}
    call = ToolCall.objects.filter(turn__task_id=card.task_id, call_id=payload.get("call")).only("name").first()
    tool = tool_get(call.name) if call is not None else None
    verdict = payload.get("verdict")
    if verdict == Verdict.ACTION_NOT_FOUND_REVIEW and tool is not None and tool.replay_safe_by_key:
        return "resume_review" if payload.get("changed") else None
    if verdict == Verdict.ACTION_STILL_UNKNOWN and tool is not None and tool.keeps_receipts:
        job = GenerationJob.objects.filter(workspace_id=card.workspace_id, idempotency_key=call.call_id).first()
        if job is not None and provider_is_ours(job.provider):
            return None
    return "resume_review"


def _billing_rule(payload: dict, policy: dict) -> str | None:
    reasons = set(payload.get("reasons") or [])
    if reasons & UNCONDITIONAL_BILLING_REASONS:
        return sorted(reasons & UNCONDITIONAL_BILLING_REASONS)[0]
    threshold = int(policy.get("no_confirm_threshold") or 0)
    amount, per_item = int(payload.get("amount") or 0), int(payload.get("per_item") or payload.get("amount") or 0)
    if "threshold" in reasons and per_item > threshold:
        return "threshold"
    if "plan_budget" in reasons and amount > threshold:
        return "plan_budget"
    if "daily_cap" in reasons:
        return "daily_cap"  # what was spent unasked that day is in the ledger; billing checked it under the lock
    return None


def _confirmations(metrics: Metrics, workspace_id: int, since: datetime | None) -> None:
    # A result card shows what a quick request made; it asks nothing, so it is no confirmation.
    cards = Card.objects.filter(workspace_id=workspace_id).exclude(kind=CardKind.RESULT)
    if since is not None:
        cards = cards.filter(created_at__gte=since)
    cards = list(cards.order_by("pk"))
    if not cards:
        return
    timeline = _Timeline(workspace_id)
    item_ids = {card.payload.get("checklist_item") for card in cards if card.payload.get("checklist_item")}
    items = {item.pk: item for item in ChecklistItem.objects.filter(pk__in=item_ids)}
    for card in cards:
        metrics.confirmations += 1
        if card_necessity(card, timeline, items) is None:
            metrics.unnecessary_confirmations += 1
            metrics.findings.append(
                f"unnecessary confirmation: card #{card.pk} “{card.title}” (task #{card.task_id}, "
                f"{card.payload.get('source', card.kind)}) asked although no rule required it"
            )


# --- routing ----------------------------------------------------------------------------------------------


def _routes(metrics: Metrics, workspace_id: int, intents: Iterable[RouteIntent]) -> None:
    intents = [intent for intent in intents if intent.route == Route.FOLLOW_UP]
    messages = MainMessage.objects.filter(workspace_id=workspace_id, pk__in=[i.message_id for i in intents])
    stored = {message.pk: message for message in messages}
    for intent in intents:
        metrics.follow_ups += 1
        message = stored.get(intent.message_id)
        right = (
            message is not None
            and message.task_id == intent.task_id
            and message.route in (Route.FOLLOW_UP, Route.DIRECT)
        )
        if right:
            metrics.follow_ups_right += 1
        else:
            where = f"{message.route} → task #{message.task_id}" if message is not None else "nowhere (no message)"
            metrics.findings.append(
                f"misrouted follow-up: message #{intent.message_id} meant for task #{intent.task_id} went {where}"
            )


# --- split copies -----------------------------------------------------------------------------------------


def _splits(metrics: Metrics, workspace_id: int, since: datetime | None, revisions: Iterable[RevisionIntent]) -> None:
    items = ChecklistItem.objects.filter(task__workspace_id=workspace_id).exclude(artifacts=[])
    jobs = {
        job.pk: job
        for job in GenerationJob.objects.filter(workspace_id=workspace_id, artifact__isnull=False).only(
            "pk", "kind", "artifact_id"
        )
    }
    for item in items:
        per_kind: dict[str, set[int]] = defaultdict(set)
        for entry in item.artifacts:
            artifact_id = entry.get("artifact") or entry.get("artifact_id")
            job = jobs.get(entry.get("job"))
            if artifact_id is None and job is not None:
                artifact_id = job.artifact_id
            kind = entry.get("kind") or (job.kind if job is not None else "")
            if artifact_id is not None:
                per_kind[kind].add(int(artifact_id))
        for kind, artifact_ids in per_kind.items():
            if len(artifact_ids) > 1:
                metrics.split_copies += len(artifact_ids) - 1
                metrics.findings.append(
                    f"split copy: checklist item “{item.title}” (task #{item.task_id}) made {len(artifact_ids)} "
                    f"{kind or 'artifact'}s {sorted(artifact_ids)} where one with versions was meant"
                )
    for revision in revisions:
        meant = GenerationJob.objects.filter(workspace_id=workspace_id, artifact_id__in=revision.artifact_ids)
        kinds = set(meant.values_list("kind", flat=True))
        made = GenerationJob.objects.filter(
            workspace_id=workspace_id,
            task_id=revision.task_id,
            created_at__gte=revision.at,
            kind__in=kinds,
            base_version__isnull=True,  # not named at submission: a new artifact
            status=JobStatus.SUCCEEDED,
        )
        if revision.until is not None:
            made = made.filter(created_at__lt=revision.until)
        copies = sorted(set(made.exclude(artifact_id__in=revision.artifact_ids).values_list("artifact_id", flat=True)))
        if copies:
            metrics.split_copies += len(copies)
            metrics.findings.append(
                f"split copy: a revision of {sorted(revision.artifact_ids)} (task #{revision.task_id}) made new "
                f"artifact(s) {copies} instead of versions"
            )


# --- costs ------------------------------------------------------------------------------------------------


def _costs(metrics: Metrics, workspace_id: int, since: datetime | None) -> None:
    turns = Turn.objects.filter(task__workspace_id=workspace_id)
    steps = Step.objects.filter(turn__task__workspace_id=workspace_id)
    orders = Order.objects.filter(workspace_id=workspace_id, status=OrderStatus.CAPTURED)
    if since is not None:
        turns, steps, orders = (
            turns.filter(created_at__gte=since),
            steps.filter(created_at__gte=since),
            orders.filter(created_at__gte=since),
        )
    metrics.turns = turns.count()
    metrics.model_calls = steps.count()
    totals = steps.aggregate(prompt=Sum("prompt_tokens"), completion=Sum("completion_tokens"))
    metrics.tokens = (totals["prompt"] or 0) + (totals["completion"] or 0)
    metrics.credits = orders.aggregate(total=Sum("amount"))["total"] or 0


def totals(results: Iterable[Metrics]) -> Metrics:
    """The metrics summed over scenarios (findings concatenated)."""
    total = Metrics()
    counted = Counter()
    for result in results:
        for name in (
            "stalls",
            "duplicate_generations",
            "unnecessary_confirmations",
            "confirmations",
            "follow_ups",
            "follow_ups_right",
            "split_copies",
            "turns",
            "model_calls",
            "tokens",
            "credits",
        ):
            counted[name] += getattr(result, name)
        total.findings.extend(result.findings)
    for name, value in counted.items():
        setattr(total, name, value)
    return total
