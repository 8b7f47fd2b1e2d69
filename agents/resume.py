"""Resuming interrupted work (DESIGN §11): the portable checkpoint and the evaluator that judges a resume.

Pure domain code — no database, no Django. The runtime (agents/runtime/resumption.py) and `manage.py resume_check`
hand it a checkpoint, the context as it is now and a receipt-lookup port; it answers a named verdict, the new
checkpoint and what it did (lookups made, writes made: always none — a resume never acts on the target).

The order of checks is the contract. Refusals come before any lookup (a checkpoint from another mission, workspace
or person never causes a lookup at all); then the action whose outcome is unknown is settled by ONE lookup of its
operation id, before anything is planned; only then is everything that may have changed re-checked.

The replay contract: where the pending action's target keeps its receipts in a store that is ours and commits each
effect with its receipt (the pending contract entry says `replaySafeByKey`), a lookup that finds nothing proves
nothing happened, and the action runs again under the same operation id by itself — unless the goal or the
configuration changed meanwhile, which only a person can settle.
"""

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr, field_validator
from pydantic.alias_generators import to_camel

SCHEMA = 1


class Status(StrEnum):
    READY = "ready"  # nothing in flight; the next step may be judged
    RUNNING = "running"  # interrupted while working; a pending action's outcome is then unknown
    PAUSED = "paused"
    ACTION_UNKNOWN = "action_unknown"  # an action was started and its outcome was never recorded
    AWAITING_APPROVAL = "awaiting_approval"  # a person's approval is pending: only they can move it
    NEEDS_REVIEW = "needs_review"  # a verdict asked a person to look before anything else happens
    BLOCKED = "blocked"  # the next step is not allowed (permissions, budget)
    FAILED = "failed"
    CANCELLED = "cancelled"
    COMPLETED = "completed"


class Verdict(StrEnum):
    MISSION_MISMATCH = "mission_mismatch"
    TENANT_MISMATCH = "tenant_mismatch"
    SUBJECT_MISMATCH = "subject_mismatch"
    AWAITING_APPROVAL = "awaiting_approval"
    MISSION_COMPLETED = "mission_completed"
    PENDING_STATE_INCONSISTENT = "pending_state_inconsistent"
    PENDING_CONTRACT_DENIED = "pending_contract_denied"
    RESUME_STEP_LIMIT = "resume_step_limit"
    ACTION_STILL_UNKNOWN = "action_still_unknown"
    ACTION_NOT_FOUND_REVIEW = "action_not_found_review"
    ACTION_NOT_FOUND_REPLAY = "action_not_found_replay"
    ACTION_RECEIPT_CONFLICT = "action_receipt_conflict"
    GOAL_CHANGED_REVIEW = "goal_changed_review"
    CONFIG_CHANGED_REVIEW = "config_changed_review"
    SOURCE_REFRESH_REQUIRED = "source_refresh_required"
    NEXT_STEP_NOT_AUTHORIZED = "next_step_not_authorized"
    CANCELLED_OBSERVED = "cancelled_observed"
    BUDGET_EXCEEDED = "budget_exceeded"
    NEXT_STEP_PROPOSED = "next_step_proposed"


def gettext_noop(message: str) -> str:
    """Marks a finding for `makemessages` (the name it looks for) without saying it: this module stays free of
    Django. The runtime says it in the task's language where it writes the resume review card
    (agents/runtime/resumption.py); the command and the REST resume give it as written here, in English."""
    return message


MESSAGES = {
    Verdict.MISSION_MISMATCH: gettext_noop(
        "This checkpoint belongs to another task; it was refused before any lookup."
    ),
    Verdict.TENANT_MISMATCH: gettext_noop(
        "This checkpoint belongs to another workspace; it was refused before any lookup."
    ),
    Verdict.SUBJECT_MISMATCH: gettext_noop(
        "This checkpoint acts for another person; it was refused before any lookup."
    ),
    Verdict.AWAITING_APPROVAL: gettext_noop("The work waits for a person's approval; resuming cannot go past it."),
    Verdict.MISSION_COMPLETED: gettext_noop("The work is already complete; there is nothing to resume."),
    Verdict.PENDING_STATE_INCONSISTENT: gettext_noop(
        "The checkpoint's status and its pending action disagree; it needs a person's review before anything runs."
    ),
    Verdict.PENDING_CONTRACT_DENIED: gettext_noop(
        "The pending action is outside what this task may act on; nothing was looked up."
    ),
    Verdict.RESUME_STEP_LIMIT: gettext_noop("The work reached its step limit; it cannot take another step."),
    Verdict.ACTION_STILL_UNKNOWN: gettext_noop(
        "The interrupted action's outcome cannot be checked now; its money stays held and nothing new is planned."
    ),
    Verdict.ACTION_NOT_FOUND_REVIEW: gettext_noop(
        "No receipt of the interrupted action was found; it is not replayed automatically — a person decides."
    ),
    Verdict.ACTION_RECEIPT_CONFLICT: gettext_noop(
        "A receipt exists under the action's id but for a different action; it stays pending for review."
    ),
    Verdict.ACTION_NOT_FOUND_REPLAY: gettext_noop(
        "No receipt of the interrupted action was found where its receipts are ours: nothing happened, so it runs "
        "again under the same operation id."
    ),
    Verdict.GOAL_CHANGED_REVIEW: gettext_noop(
        "The goal changed since this work was planned; a person reviews before it goes on."
    ),
    Verdict.CONFIG_CHANGED_REVIEW: gettext_noop(
        "The model or the spending policy changed since this work ran; a person reviews before it goes on."
    ),
    Verdict.SOURCE_REFRESH_REQUIRED: gettext_noop(
        "A source the work relied on changed since; it must be read again first."
    ),
    Verdict.NEXT_STEP_NOT_AUTHORIZED: gettext_noop("The next step is not allowed any more."),
    Verdict.CANCELLED_OBSERVED: gettext_noop("Cancellation was requested; the work stops here."),
    Verdict.BUDGET_EXCEEDED: gettext_noop("The next step would take the spending past the budget."),
    Verdict.NEXT_STEP_PROPOSED: gettext_noop("Everything checks out: the next step is proposed."),
}

# The verdicts after which a person must look before anything else happens (the runtime opens a card).
NEEDS_PERSON = frozenset(
    {
        Verdict.MISSION_MISMATCH,
        Verdict.TENANT_MISMATCH,
        Verdict.SUBJECT_MISMATCH,
        Verdict.PENDING_STATE_INCONSISTENT,
        Verdict.PENDING_CONTRACT_DENIED,
        Verdict.ACTION_STILL_UNKNOWN,
        Verdict.ACTION_NOT_FOUND_REVIEW,
        Verdict.ACTION_RECEIPT_CONFLICT,
        Verdict.GOAL_CHANGED_REVIEW,
        Verdict.CONFIG_CHANGED_REVIEW,
    }
)


# --- the shapes (camelCase on the wire, as the checkpoint is exported) ---

Ident = StrictStr | StrictInt
Amount = Annotated[StrictInt | StrictFloat, Field(ge=0)]
Count = Annotated[StrictInt, Field(ge=0)]
JsonObject = dict[str, Any]


class _Shape(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, strict=True, frozen=True)


class Action(_Shape):
    """An action on a target: a pending action of the checkpoint, or what a receipt says was done."""

    model_config = ConfigDict(extra="allow")  # e.g. a receipt's status or amount: kept, shown, never compared

    id: Ident | None = None
    tool: StrictStr
    target: Any = Field(...)
    params: JsonObject = Field(default_factory=dict)


class Checkpoint(_Shape):
    model_config = ConfigDict(extra="allow")  # fields a later writer adds travel through unchanged

    schema_: Annotated[StrictInt, Field(alias="schema")]
    mission: Ident
    tenant: Ident
    subject: Ident | None
    goal_revision: Ident
    source_revision: StrictInt | None
    config_version: Ident
    status: StrictStr
    facts: JsonObject | list[Any] | None
    completed_actions: list[Ident]
    pending_action: Action | None
    spent: Amount
    held: Amount
    step_count: Count

    @field_validator("schema_")
    @classmethod
    def _known_schema(cls, value: int) -> int:
        if value != SCHEMA:
            raise ValueError(f"schema {value} is not supported (this build reads schema {SCHEMA})")
        return value

    @field_validator("status")
    @classmethod
    def _known_status(cls, value: str) -> str:
        if value not in Status.__members__.values():
            raise ValueError(f"unknown status {value!r} (one of: {', '.join(Status)})")
        return value

    @field_validator("pending_action")
    @classmethod
    def _pending_has_id(cls, value: Action | None) -> Action | None:
        if value is not None and value.id is None:
            raise ValueError("a pending action needs its operation id")
        return value

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)


class ContractEntry(_Shape):
    tool: StrictStr
    target: Any = Field(...)
    # The target's receipts are ours and commit with its effects: no receipt proves the action never happened.
    replay_safe_by_key: StrictBool = False


class ResumeContext(_Shape):
    """The present, as the caller sees it."""

    mission: Ident
    tenant: Ident
    subject: Ident | None
    goal_revision: Ident
    config_version: Ident
    min_source_revision: StrictInt | None = None
    next_step_allowed: StrictBool = True
    budget: Amount | None = None
    next_step_cost: Amount = 0
    max_steps: Count | None = None
    cancel_requested: StrictBool = False
    lookup_available: StrictBool = True
    pending_contract: list[ContractEntry] = Field(default_factory=list)


class ReceiptLookupUnavailable(Exception):
    """The target cannot be asked now: the outcome stays unknown."""


# Finds what the target recorded under an operation id: an Action (the receipt) or None (no receipt).
ReceiptLookup = Callable[[str], Action | None]


@dataclass
class Resumption:
    verdict: Verdict
    checkpoint: Checkpoint
    lookups: int = 0
    writes: int = 0  # a resume never writes to the target: kept as a fact, asserted by tests and callers
    receipt: Action | None = None  # the receipt a conflict was found with, for the person's review
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def proposal(self) -> bool:
        return self.verdict == Verdict.NEXT_STEP_PROPOSED

    @property
    def needs_person(self) -> bool:
        return self.verdict in NEEDS_PERSON

    def to_json(self) -> dict[str, Any]:
        checkpoint = self.checkpoint
        pending = checkpoint.pending_action
        out = {
            "verdict": self.verdict.value,
            "checkpoint": checkpoint.to_json(),
            "pendingAction": pending.id if pending is not None else None,
            "completed": list(checkpoint.completed_actions),
            "spent": checkpoint.spent,
            "held": checkpoint.held,
            "proposal": self.proposal,
            "lookups": self.lookups,
            "writes": self.writes,
            "message": MESSAGES[self.verdict],
        }
        if self.receipt is not None:
            out["receipt"] = self.receipt.model_dump(mode="json", exclude={"id"})
        if self.details:
            out["details"] = self.details
        return out


# --- the evaluator ---


def canonical(value: Any) -> str:
    """One spelling per JSON value (so 1 and true, or key order, never make two actions look alike or apart)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def same_id(a: Any, b: Any) -> bool:
    return a is not None and b is not None and str(a) == str(b)


def same_action(pending: Action, receipt: Action) -> bool:
    return (
        pending.tool == receipt.tool
        and canonical(pending.target) == canonical(receipt.target)
        and canonical(pending.params) == canonical(receipt.params)
    )


def _contract_entry(action: Action, contract: list[ContractEntry]) -> ContractEntry | None:
    pair = (action.tool, canonical(action.target))
    return next((entry for entry in contract if (entry.tool, canonical(entry.target)) == pair), None)


def _in_contract(action: Action, contract: list[ContractEntry]) -> bool:
    return _contract_entry(action, contract) is not None


def _refusal(checkpoint: Checkpoint, context: ResumeContext) -> Verdict | None:
    """What stops a resume before any lookup, in the contract's order."""
    if str(checkpoint.mission) != str(context.mission):
        return Verdict.MISSION_MISMATCH
    if str(checkpoint.tenant) != str(context.tenant):
        return Verdict.TENANT_MISMATCH
    if str(checkpoint.subject) != str(context.subject):
        return Verdict.SUBJECT_MISMATCH
    if checkpoint.status == Status.AWAITING_APPROVAL:
        return Verdict.AWAITING_APPROVAL
    if checkpoint.status == Status.COMPLETED:
        return Verdict.MISSION_COMPLETED
    pending = checkpoint.pending_action
    if pending is not None and checkpoint.status in (Status.READY, Status.BLOCKED):
        return Verdict.PENDING_STATE_INCONSISTENT
    if pending is None and checkpoint.status == Status.ACTION_UNKNOWN:
        return Verdict.PENDING_STATE_INCONSISTENT
    if pending is not None and any(same_id(pending.id, done) for done in checkpoint.completed_actions):
        return Verdict.PENDING_STATE_INCONSISTENT  # pending and completed at once: which is true is for a person
    if pending is not None and not _in_contract(pending, context.pending_contract):
        return Verdict.PENDING_CONTRACT_DENIED
    if context.max_steps is not None and checkpoint.step_count >= context.max_steps:
        return Verdict.RESUME_STEP_LIMIT
    return None


def _after_settling(checkpoint: Checkpoint, context: ResumeContext) -> Verdict:
    """Everything that may have changed during the interruption, in the contract's order."""
    if str(checkpoint.goal_revision) != str(context.goal_revision):
        return Verdict.GOAL_CHANGED_REVIEW
    if str(checkpoint.config_version) != str(context.config_version):
        return Verdict.CONFIG_CHANGED_REVIEW
    if (
        context.min_source_revision is not None
        and checkpoint.source_revision is not None
        and checkpoint.source_revision < context.min_source_revision
    ):
        return Verdict.SOURCE_REFRESH_REQUIRED
    if not context.next_step_allowed:
        return Verdict.NEXT_STEP_NOT_AUTHORIZED
    if context.cancel_requested or checkpoint.status == Status.CANCELLED:
        return Verdict.CANCELLED_OBSERVED
    # Money already committed counts: what was spent and what is still held (DESIGN §11).
    if context.budget is not None and checkpoint.spent + checkpoint.held + context.next_step_cost > context.budget:
        return Verdict.BUDGET_EXCEEDED
    return Verdict.NEXT_STEP_PROPOSED


AFTER_STATUS = {
    Verdict.GOAL_CHANGED_REVIEW: Status.NEEDS_REVIEW,
    Verdict.CONFIG_CHANGED_REVIEW: Status.NEEDS_REVIEW,
    Verdict.SOURCE_REFRESH_REQUIRED: Status.NEEDS_REVIEW,
    Verdict.NEXT_STEP_NOT_AUTHORIZED: Status.BLOCKED,
    Verdict.BUDGET_EXCEEDED: Status.BLOCKED,
    Verdict.CANCELLED_OBSERVED: Status.CANCELLED,
    Verdict.NEXT_STEP_PROPOSED: Status.READY,
}


def evaluate(checkpoint: Checkpoint, context: ResumeContext, lookup: ReceiptLookup) -> Resumption:
    """Judge a resume. `lookup` is called at most once, and only for the pending action's operation id."""
    refused = _refusal(checkpoint, context)
    if refused is not None:
        return Resumption(refused, checkpoint)

    lookups = 0
    pending = checkpoint.pending_action
    if pending is not None:
        if not context.lookup_available:
            return Resumption(Verdict.ACTION_STILL_UNKNOWN, _with(checkpoint, status=Status.ACTION_UNKNOWN))
        try:
            lookups = 1
            receipt = lookup(str(pending.id))
        except ReceiptLookupUnavailable as exc:
            return Resumption(
                Verdict.ACTION_STILL_UNKNOWN,
                _with(checkpoint, status=Status.ACTION_UNKNOWN),
                lookups=lookups,
                details={"lookup": str(exc)} if str(exc) else {},
            )
        if receipt is None:
            return _not_found(checkpoint, context, pending, lookups)
        if not same_action(pending, receipt):
            return Resumption(
                Verdict.ACTION_RECEIPT_CONFLICT,
                _with(checkpoint, status=Status.NEEDS_REVIEW),
                lookups=lookups,
                receipt=receipt,
            )
        # The action happened as recorded: it is done, and the money held for it is now spent.
        checkpoint = _with(
            checkpoint,
            pending_action=None,
            completed_actions=[*checkpoint.completed_actions, pending.id],
            spent=checkpoint.spent + checkpoint.held,
            held=0,
        )

    verdict = _after_settling(checkpoint, context)
    return Resumption(verdict, _with(checkpoint, status=AFTER_STATUS[verdict]), lookups=lookups)


# What a person must settle even when the action itself could simply run again (DESIGN §11).
CHANGED_REVIEWS = (Verdict.GOAL_CHANGED_REVIEW, Verdict.CONFIG_CHANGED_REVIEW)
# What may run again by itself: the present checks out (a stale source is read again by the work itself).
REPLAYABLE_AFTER = (Verdict.NEXT_STEP_PROPOSED, Verdict.SOURCE_REFRESH_REQUIRED)


def _not_found(checkpoint: Checkpoint, context: ResumeContext, pending: Action, lookups: int) -> Resumption:
    """No receipt under the pending action's id. Where the contract makes that proof that nothing happened, the
    action runs again under its id, if the present still checks out; otherwise a person decides."""
    entry = _contract_entry(pending, context.pending_contract)
    if entry is None or not entry.replay_safe_by_key:
        return Resumption(
            Verdict.ACTION_NOT_FOUND_REVIEW, _with(checkpoint, status=Status.NEEDS_REVIEW), lookups=lookups
        )
    after = _after_settling(checkpoint, context)
    if after in REPLAYABLE_AFTER:
        details = {"then": after.value} if after != Verdict.NEXT_STEP_PROPOSED else {}
        # Still pending: it runs again under the same id (the hold placed for it, if any, is the one it reuses).
        return Resumption(
            Verdict.ACTION_NOT_FOUND_REPLAY, _with(checkpoint, status=Status.RUNNING), lookups=lookups, details=details
        )
    # Nothing happened, but something changed or stops the work: a person looks before it is done again.
    details = {"changed": after.value} if after in CHANGED_REVIEWS else {"then": after.value}
    return Resumption(
        Verdict.ACTION_NOT_FOUND_REVIEW, _with(checkpoint, status=Status.NEEDS_REVIEW), lookups=lookups, details=details
    )


def _with(checkpoint: Checkpoint, **changes: Any) -> Checkpoint:
    return checkpoint.model_copy(update=changes)


# --- reading JSON input (the command, the REST resume) ---


class MalformedInput(ValueError):
    """Input that is not a checkpoint / context / receipts: the message names each problem."""


def _problems(exc: Exception, where: str) -> str:
    errors = getattr(exc, "errors", None)
    if errors is None:
        return f"{where}: {exc}"
    lines = []
    for error in errors():
        loc = ".".join(str(part) for part in (where, *error["loc"]))
        lines.append(f"{loc}: {error['msg']}")
    return "; ".join(lines)


def _parse(shape: type[BaseModel], value: Any, where: str):
    from pydantic import ValidationError

    if not isinstance(value, dict):
        raise MalformedInput(f"{where}: expected a JSON object")
    try:
        return shape.model_validate(value)
    except ValidationError as exc:
        raise MalformedInput(_problems(exc, where)) from None


def checkpoint_parse(value: Any) -> Checkpoint:
    return _parse(Checkpoint, value, "checkpoint")


def context_parse(value: Any) -> ResumeContext:
    return _parse(ResumeContext, value, "context")


def receipts_parse(value: Any) -> dict[str, Action]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise MalformedInput("receipts: expected a JSON object of operation id → {tool, target, params}")
    # An id mapped to null is an id with no receipt.
    return {str(op): _parse(Action, receipt, f"receipts.{op}") for op, receipt in value.items() if receipt is not None}


def case_evaluate(case: Any) -> Resumption:
    """One case as `resume_check` reads it: {"checkpoint", "context", "receipts": {op_id: {tool, target, params}}}."""
    if not isinstance(case, dict):
        raise MalformedInput("expected a JSON object with checkpoint, context and receipts")
    for key in ("checkpoint", "context"):
        if key not in case:
            raise MalformedInput(f"{key}: missing")
    checkpoint = checkpoint_parse(case["checkpoint"])
    context = context_parse(case["context"])
    receipts = receipts_parse(case.get("receipts"))
    return evaluate(checkpoint, context, receipts.get)
