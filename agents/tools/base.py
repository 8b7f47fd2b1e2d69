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
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from workspace.models import Role


class ToolArgs(BaseModel):
    """Base for argument models: unknown fields are refused, never silently dropped."""

    model_config = ConfigDict(extra="forbid")


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
    required_role: ClassVar[str] = Role.VIEWER
    # Cannot be undone (deleting artifacts, forgetting memories): every call waits for a person's
    # confirmation card first, whatever the task's autonomy (DESIGN §5).
    irreversible: ClassVar[bool] = False
    # Spends money: with the task's autonomy at "ask", every call waits for a person's confirmation first.
    paid: ClassVar[bool] = False

    @abstractmethod
    def run(self, ctx: ToolContext, args: ToolArgs) -> ToolResult:
        """Do the work. Raise ToolError for a refusal the model should read."""

    @classmethod
    def spec(cls):
        from agents.providers.base import ToolSpec

        return ToolSpec(name=cls.name, description=cls.description, parameters=cls.Args.model_json_schema())
