"""The contract every agent tool implements (DESIGN §7, §10).

A tool declares its name, domain, pydantic argument model, idempotency, the role it needs, and whether
it is transactional. Transactional tools only touch our database: the runtime runs them inside the fenced
transaction that records their result, so effect and result commit together (exactly once). Other tools
(provider calls) run outside any transaction between the `started` and result writes; they must be
idempotent on `ctx.call_id` or be marked non-idempotent, in which case a crash mid-call yields
`outcome_unknown` instead of a second run.
"""

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict

from agents.models import PERMISSION_DOMAINS
from agents.providers.base import ToolSpec
from agents.resume import Action
from workspace.models import Role

# Base tools are always visible; a domain's tools once a `load_tools` call loaded it, if the task's
# permissions allow that domain (tools/permissions).
BASE_DOMAIN = "base"
DOMAINS = (BASE_DOMAIN, *PERMISSION_DOMAINS)
DomainName = Literal["image", "video", "3d", "documents", "flows", "assets"]  # the loadable ones: DOMAINS[1:]

# Limits of argument fields shared by every domain: ids fit a bigint, versions an int.
MAX_DB_ID = 2**63 - 1
MAX_VERSION = 2**31 - 1


class ToolArgs(BaseModel):
    """Base for argument models: unknown fields are refused, never silently dropped."""

    model_config = ConfigDict(extra="forbid")


class StrictArgs(ToolArgs):
    """Strict as well as closed: `true` is not an id and `"5"` is not a number (JSON gives real types)."""

    model_config = ConfigDict(extra="forbid", strict=True)


@dataclass(frozen=True)
class ToolContext:
    workspace_id: int
    task_id: int
    turn_id: int
    step_index: int
    call_id: str  # stable `turn:step:index`; also the idempotency key of paid calls
    generation: int
    role: str  # the role the task acts with (its creator's current role)
    # The task's settings as the runtime read them with the task row; None means "read them when needed".
    permissions: dict[str, Any] | None = None
    autonomy: str | None = None


@dataclass
class ToolResult:
    content: dict[str, Any]
    # Progress signals decide auto-continuation (DESIGN §3): a cycle without any stops with a reason.
    artifact_created: bool = False
    checklist_item_done: bool = False
    job_submitted: bool = False
    # Set when the turn must end and wait, e.g. {"type": "person", "question": ...} or {"type": "job", ...}.
    suspend: dict[str, Any] | None = None
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    @property
    def made_progress(self) -> bool:
        return self.artifact_created or self.checklist_item_done or self.job_submitted


class Tool(ABC):
    name: ClassVar[str]
    description: ClassVar[str]
    domain: ClassVar[str] = "base"
    Args: ClassVar[type[ToolArgs]]
    idempotent: ClassVar[bool] = True
    transactional: ClassVar[bool] = True
    # Changes nothing (at most it fills a derived cache), calls nothing outside, and returns no events, progress
    # or wait: the runtime runs a step of such calls after its decision commits, without a transaction or a
    # `started` mark, and records their results with the next decision (agents/runtime/loop.py). A run lost to
    # a crash is simply run again.
    read_only: ClassVar[bool] = False
    required_role: ClassVar[str] = Role.VIEWER
    # Cannot be undone (deleting artifacts, forgetting memories): every call waits for a person's
    # confirmation card first, whatever the task's autonomy (DESIGN §5).
    irreversible: ClassVar[bool] = False
    # Spends money: with the task's autonomy at "ask", every call waits for a person's confirmation first.
    paid: ClassVar[bool] = False
    # Its target records each call by operation id, so an interrupted call can be settled (`receipt` below).
    keeps_receipts: ClassVar[bool] = False
    # Its replay contract (DESIGN §11): the receipt store is ours and nothing acts before its receipt is committed,
    # so a lookup that finds nothing proves nothing happened, and an interrupted call runs again under the same id
    # by itself — a worker crash alone never asks a person. Without it, no receipt is a person's question.
    replay_safe_by_key: ClassVar[bool] = False

    @classmethod
    def outcome_can_be_unknown(cls) -> bool:
        """An interrupted call may have acted: it runs outside our transaction, and repeating it is not harmless
        (or its receipt must decide). A resume settles such a call before anything else (DESIGN §11)."""
        return not cls.transactional and (not cls.idempotent or cls.keeps_receipts)

    @abstractmethod
    def run(self, ctx: ToolContext, args: ToolArgs) -> ToolResult:
        """Do the work. Raise ToolError for a refusal the model should read."""

    # --- receipts (DESIGN §11) ---
    # A call that acts outside our transaction (not `transactional`) can be interrupted with its outcome
    # unknown. Such a tool describes the action a call asks for and finds, by the call's operation id, what
    # its target recorded; a resume compares the two before anything is planned. A transactional tool commits
    # its effect with its result, so it never leaves an outcome unknown and needs neither.

    @classmethod
    def action(cls, *, workspace_id: int, call_input: dict[str, Any]) -> Action:
        """The action a call with these arguments asks for: its target and what would identify a repeat."""
        return Action(tool=cls.name, target={"workspace": workspace_id}, params=call_input)

    @classmethod
    def receipt(cls, *, workspace_id: int, operation_id: str, expected: Action | None = None) -> Action | None:
        """What the target recorded under `operation_id`, None if nothing (`expected`: the pending action, for
        a target that can only say whether what it holds is that). Raises ReceiptLookupUnavailable when the
        target cannot be asked. A tool whose effect commits with its result never has one to find."""
        return None

    @classmethod
    def settled(cls, *, workspace_id: int, operation_id: str, call_input: dict[str, Any]) -> ToolResult:
        """The result a call would have returned, rebuilt from its receipt when a resume found it done."""
        return ToolResult(content={"settled_by_receipt": operation_id})

    @classmethod
    def spec(cls) -> ToolSpec:
        return ToolSpec(name=cls.name, description=cls.description, parameters=cls.Args.model_json_schema())

    @classmethod
    def stub_spec(cls) -> ToolSpec:
        """How a domain tool is listed before its domain is loaded: its name and what it does, with an open
        schema. The list of tools stays the same at every step (registry.tools_offered); loading the domain
        appends the full schema to the conversation, and calls are checked against that one."""
        if cls.domain == BASE_DOMAIN:
            return cls.spec()
        description = (
            f'[{cls.domain} domain: call load_tools(domain="{cls.domain}") first; its full argument schema then '
            f"arrives in the conversation, and calls are checked against it] {cls.description}"
        )
        return ToolSpec(name=cls.name, description=description, parameters={"type": "object"})
