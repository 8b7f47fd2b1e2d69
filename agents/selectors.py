"""Reads for tasks, their inboxes and their execution log. Every read is scoped to the caller's workspace."""

from django.db.models import Count, IntegerField, OuterRef, Prefetch, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils.translation import gettext_noop

from agents.models import (
    ACTIVE_TURN_STATUSES,
    Card,
    CardStatus,
    ChecklistItem,
    InboxMessage,
    InboxStatus,
    Step,
    Task,
    TaskKind,
    ToolCall,
    Turn,
)
from lomote.kernel.exceptions import NotFound
from workspace.models import ApiKey, Membership, Role
from workspace.selectors import Access

# A task's spending scope is its goal revision (agents.subscribers.goal_scope): approvals hold for the goal they
# were given for. The runtime's one-statement snapshot (agents/runtime/snapshot.py) builds the same string in SQL.
GOAL_SCOPE_PREFIX = "goal:"


def goal_scope_of(revision: int) -> str:
    return f"{GOAL_SCOPE_PREFIX}{revision}"


def _count(queryset: QuerySet, group_by: str) -> Coalesce:
    """A correlated COUNT subquery: counts rows without joining them into the outer query."""
    counted = queryset.order_by().values(group_by).annotate(n=Count("pk")).values("n")
    return Coalesce(Subquery(counted, output_field=IntegerField()), 0)


ALL_KINDS = "all"


def task_list(*, access: Access, status: str | None = None, kind: str | None = None) -> QuerySet[Task]:
    """The workspace's tasks, most recently changed first.

    Persistent tasks only unless `kind` asks: a lightweight task is a quick result that does not occupy the task
    list (seed §2.2) — reachable from its result card and its artifacts — until it is promoted. `kind` is
    "lightweight" for those alone, or "all".
    """
    tasks = Task.objects.filter(workspace=access.workspace).order_by("-updated_at", "-id")
    if status:
        tasks = tasks.filter(status=status)
    kind = kind or TaskKind.PERSISTENT
    if kind != ALL_KINDS:
        tasks = tasks.filter(kind=kind)
    return tasks


def task_get(*, access: Access, task_id: int) -> Task:
    """One task of the workspace with its checklist, active turn, open cards and counts. NotFound outside it.

    Sets `checklist_items` (by position), `active_turns` (zero or one turn, with `step_count`), `open_cards`
    (oldest first) and the counts `turn_count`, `step_count`, `tool_call_count`, `pending_message_count`.
    """
    active_turns = Turn.objects.filter(status__in=ACTIVE_TURN_STATUSES).annotate(
        step_count=_count(Step.objects.filter(turn=OuterRef("pk")), "turn")
    )
    task = (
        Task.objects.filter(workspace=access.workspace, pk=task_id)
        .annotate(
            turn_count=_count(Turn.objects.filter(task=OuterRef("pk")), "task"),
            step_count=_count(Step.objects.filter(turn__task=OuterRef("pk")), "turn__task"),
            tool_call_count=_count(ToolCall.objects.filter(turn__task=OuterRef("pk")), "turn__task"),
            pending_message_count=_count(
                InboxMessage.objects.filter(task=OuterRef("pk"), status=InboxStatus.PENDING), "task"
            ),
        )
        .prefetch_related(
            Prefetch("checklist", queryset=ChecklistItem.objects.order_by("position"), to_attr="checklist_items"),
            Prefetch("turns", queryset=active_turns, to_attr="active_turns"),
            Prefetch(
                "cards",
                queryset=Card.objects.filter(status=CardStatus.OPEN).select_related("resolved_by").order_by("pk"),
                to_attr="open_cards",
            ),
        )
        .first()
    )
    if task is None:
        raise NotFound(gettext_noop("Task not found."))
    return task


def _task_exists(*, access: Access, task_id: int) -> None:
    if not Task.objects.filter(workspace=access.workspace, pk=task_id).exists():
        raise NotFound(gettext_noop("Task not found."))


def task_log(*, access: Access, task_id: int) -> QuerySet[Turn]:
    """The task's turns, newest first, each with its model lease, steps, tool calls and consumed message ids.

    Lazy: slice it (the API pages it with limit/offset) and the prefetches run for that page only — four
    queries whatever the page holds. The lease's secret row is never joined, so its ciphertext is never loaded.
    """
    _task_exists(access=access, task_id=task_id)
    consumed = InboxMessage.objects.order_by("pk").only("pk", "consumed_by_step_id")
    tool_calls = ToolCall.objects.order_by("index")
    steps = Step.objects.order_by("index").prefetch_related(
        Prefetch("tool_calls", queryset=tool_calls), Prefetch("consumed_messages", queryset=consumed)
    )
    return (
        Turn.objects.filter(task_id=task_id)
        .select_related("model_lease")
        .prefetch_related(Prefetch("steps", queryset=steps))
        .order_by("-number")
    )


def reply_list(*, access: Access, task_id: int | None = None) -> QuerySet[Step]:
    """What the agent said in the workspace's tasks (or one task's), newest first: each step that wrote words
    to the person, with its task and the inbox messages it read (what it answers). Steps that only called
    tools say nothing and are left out."""
    if task_id is not None:
        _task_exists(access=access, task_id=task_id)
    consumed = InboxMessage.objects.order_by("pk").only("pk", "consumed_by_step_id")
    steps = Step.objects.filter(turn__task__workspace=access.workspace).exclude(text="")
    if task_id is not None:
        steps = steps.filter(turn__task_id=task_id)
    return (
        steps.select_related("turn")
        .only("pk", "index", "number", "text", "model", "created_at", "turn__id", "turn__task_id")
        .prefetch_related(Prefetch("consumed_messages", queryset=consumed))
        .order_by("-pk")
    )


def inbox_list(*, access: Access, task_id: int) -> QuerySet[InboxMessage]:
    """The task's inbox in arrival order, whatever the status (withdrawn and replaced messages included)."""
    _task_exists(access=access, task_id=task_id)
    return InboxMessage.objects.filter(task_id=task_id).select_related("author").order_by("pk")


def inbox_message_get(*, access: Access, task_id: int, message_id: int) -> InboxMessage:
    message = inbox_list(access=access, task_id=task_id).filter(pk=message_id).first()
    if message is None:
        raise NotFound(gettext_noop("Message not found."))
    return message


def card_list(
    *, access: Access, status: str | None = None, task_id: int | None = None, kind: str | None = None
) -> QuerySet[Card]:
    """The workspace's cards, newest first; optionally only those with `status`, of one `kind`, or of one task."""
    cards = Card.objects.filter(workspace=access.workspace).select_related("resolved_by").order_by("-pk")
    if status:
        cards = cards.filter(status=status)
    if kind:
        cards = cards.filter(kind=kind)
    if task_id is not None:
        cards = cards.filter(task_id=task_id)
    return cards


def card_get(*, access: Access, card_id: int) -> Card:
    card = card_list(access=access).filter(pk=card_id).first()
    if card is None:
        raise NotFound(gettext_noop("Card not found."))
    return card


# --- the role a task acts with (read at every tool execution, DESIGN §5) ------------------------------------


def task_role(task: Task) -> str:
    """The role the task acts with: its creator's current role in the task's workspace, or, for a task an API
    key started, that key's role while the key is active in the workspace (`with_acting_role`, the one rule).

    Read at every execution, so a demotion, a departure or a revoked key takes effect at the next call. A task
    with no creator, whose creator left the workspace, or whose key was revoked, acts as a viewer.
    """
    role = with_acting_role(Task.objects.filter(pk=task.pk)).values_list("acting_role", flat=True).first()
    return role or Role.VIEWER


def task_permissions(task_id: int) -> dict:
    """The task's permissions as stored; a task that no longer exists is allowed nothing."""
    permissions = Task.objects.filter(pk=task_id).values_list("permissions", flat=True).first()
    return permissions if isinstance(permissions, dict) else {}


def with_acting_role(tasks):
    """Annotate each task with `acting_role`, the same answer as task_role, in the same query."""
    creator_role = Membership.objects.filter(workspace_id=OuterRef("workspace_id"), user_id=OuterRef("created_by_id"))
    key_role = ApiKey.objects.filter(
        workspace_id=OuterRef("workspace_id"), pk=OuterRef("created_by_key_id"), revoked_at__isnull=True
    )
    return tasks.annotate(
        acting_role=Coalesce(
            Subquery(creator_role.values("role")[:1]), Subquery(key_role.values("role")[:1]), Value(Role.VIEWER.value)
        )
    )
