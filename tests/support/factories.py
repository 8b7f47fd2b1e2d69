"""Factories (factory-boy) for the rows tests need: name what matters to the test, default the rest.

    workspace = WorkspaceFactory(created_by=alice, members={bob: Role.EDITOR})
    task = TaskFactory(workspace=workspace, created_by=bob, status=TaskStatus.ACTIVE)
    step = StepFactory(turn=TurnFactory(task=task))
    ToolCallFactory(step=step, done=True)                       # a finished call, numbered after the others
    doc = ArtifactFactory(workspace=workspace, content="## Shot 1")

Rows a service creates with side effects go through that service (a workspace gets its owner membership and
`workspace.created` event, an artifact its first version, a Flow its checked graph); the others are plain rows.
Numbers that must be unique within a parent (checklist positions, turn numbers, step and call indexes) default
to the next free one, so a test never has to count.
"""

import factory
from django.contrib.auth import get_user_model
from django.utils import timezone
from factory.django import DjangoModelFactory

from agents.models import (
    Card,
    CardKind,
    ChecklistItem,
    InboxMessage,
    ModelLease,
    ModelProfile,
    ProviderKind,
    ProviderSecret,
    Step,
    Task,
    ToolCall,
    ToolCallStatus,
    Turn,
)
from agents.scripted.planner import MODEL_NAME
from workspace.flows.authoring import flow_create
from workspace.flows.graph import graph_dump, graph_load
from workspace.models import FlowNodeRun, FlowRun, GenerationJob, Membership, Role, Workspace
from workspace.services.artifacts import artifact_create
from workspace.services.workspaces import workspace_create


def _next(queryset, field: str, *, first: int = 1) -> int:
    """One more than the highest `field` in `queryset`; `first` for the first row."""
    highest = queryset.order_by(f"-{field}").values_list(field, flat=True).first()
    return first if highest is None else highest + 1


# --- workspace ------------------------------------------------------------------------------------------------


class UserFactory(DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda user: f"{user.username}@example.com")
    password = factory.django.Password("pw")


class WorkspaceFactory(DjangoModelFactory):
    """A workspace made by workspace_create, plus `members={user: role}` beside its owner (`created_by`)."""

    class Meta:
        model = Workspace
        skip_postgeneration_save = True

    name = "Poster studio"
    created_by = factory.SubFactory(UserFactory)

    @classmethod
    def _create(cls, model_class, *, created_by, name):
        return workspace_create(user=created_by, name=name)

    @factory.post_generation
    def members(workspace, create, extracted, **kwargs):
        for user, role in (extracted or {}).items():
            MembershipFactory(workspace=workspace, user=user, role=role)


class MembershipFactory(DjangoModelFactory):
    class Meta:
        model = Membership

    workspace = factory.SubFactory(WorkspaceFactory)
    user = factory.SubFactory(UserFactory)
    role = Role.VIEWER


class ArtifactFactory(DjangoModelFactory):
    """An artifact and its version 1, made by artifact_create (pass `content`, or `file=ContentFile(...)`)."""

    class Meta:
        model = "workspace.Artifact"

    workspace = factory.SubFactory(WorkspaceFactory)
    kind = "document"
    title = factory.Sequence(lambda n: f"Document {n}")

    @classmethod
    def _create(cls, model_class, *, workspace, **fields):
        return artifact_create(workspace_id=workspace.pk, **fields)


class FlowFactory(DjangoModelFactory):
    """A Flow artifact made by flow_create: its graph is checked and stamped as version 1."""

    class Meta:
        model = "workspace.Artifact"

    workspace = factory.SubFactory(WorkspaceFactory)
    title = "Flow"
    graph = None

    @classmethod
    def _create(cls, model_class, *, workspace, **fields):
        return flow_create(workspace_id=workspace.pk, **fields)


def flow_stored_unchecked(*, workspace_id: int, title: str, graph: dict):
    """A Flow stored as one could be before its node types declared their params (flow_create now refuses what
    this stores): for the checks a node still makes when it runs."""
    stamped = {"edges": [], "start": None, **graph}
    stamped["nodes"] = {n: {"params": {}, **node, "version": 1} for n, node in graph["nodes"].items()}
    return artifact_create(workspace_id=workspace_id, kind="flow", title=title, content=graph_dump(stamped))


class FlowRunFactory(DjangoModelFactory):
    """A run row of a Flow's current version (its graph as stored), without starting anything."""

    class Meta:
        model = FlowRun

    artifact = factory.SubFactory(FlowFactory)
    workspace = factory.SelfAttribute("artifact.workspace")
    flow_version = factory.SelfAttribute("artifact.current_version")
    graph = factory.LazyAttribute(lambda run: graph_load(run.artifact.versions.get(number=run.flow_version).content))


class FlowNodeRunFactory(DjangoModelFactory):
    class Meta:
        model = FlowNodeRun

    run = factory.SubFactory(FlowRunFactory)
    node_id = factory.Sequence(lambda n: f"node{n}")
    type = "text_input"


class GenerationJobFactory(DjangoModelFactory):
    """A job row as job_submit would first write it (submitting), without calling any provider."""

    class Meta:
        model = GenerationJob

    workspace = factory.SubFactory(WorkspaceFactory)
    kind = "image"
    provider = "procedural"
    prompt = "retro brand poster"
    idempotency_key = factory.Sequence(lambda n: f"test:{n}")


# --- agents ---------------------------------------------------------------------------------------------------


class ProviderSecretFactory(DjangoModelFactory):
    """A stored secret row; its ciphertext is whatever bytes the test gives (secret_put encrypts real ones)."""

    class Meta:
        model = ProviderSecret

    workspace = factory.SubFactory(WorkspaceFactory)
    name = "openai"
    ciphertext = b"CIPHERTEXT"


class ModelProfileFactory(DjangoModelFactory):
    class Meta:
        model = ModelProfile

    workspace = factory.SubFactory(WorkspaceFactory)
    name = factory.Sequence(lambda n: f"profile {n}")
    provider = ProviderKind.SCRIPTED
    model = MODEL_NAME


class TaskFactory(DjangoModelFactory):
    """A task row (no first message, no turn: task_create does those), created by the workspace's owner."""

    class Meta:
        model = Task

    workspace = factory.SubFactory(WorkspaceFactory)
    title = "Retro posters"
    created_by = factory.LazyAttribute(lambda task: task.workspace.created_by)


class ChecklistItemFactory(DjangoModelFactory):
    class Meta:
        model = ChecklistItem

    task = factory.SubFactory(TaskFactory)
    position = factory.LazyAttribute(lambda item: _next(ChecklistItem.objects.filter(task=item.task), "position"))
    title = factory.Sequence(lambda n: f"Item {n}")


class TurnFactory(DjangoModelFactory):
    class Meta:
        model = Turn

    task = factory.SubFactory(TaskFactory)
    number = factory.LazyAttribute(lambda turn: _next(Turn.objects.filter(task=turn.task), "number"))


class ModelLeaseFactory(DjangoModelFactory):
    class Meta:
        model = ModelLease

    turn = factory.SubFactory(TurnFactory)
    provider = ProviderKind.SCRIPTED
    model = MODEL_NAME


class StepFactory(DjangoModelFactory):
    """A committed step of its turn's current generation."""

    class Meta:
        model = Step

    turn = factory.SubFactory(TurnFactory)
    index = factory.LazyAttribute(lambda step: _next(Step.objects.filter(turn=step.turn), "index", first=0))
    generation = factory.SelfAttribute("turn.generation")
    model = MODEL_NAME


class ToolCallFactory(DjangoModelFactory):
    """A tool call of a step, with the runtime's `turn:step:index` call id; `done=True` for a finished one."""

    class Meta:
        model = ToolCall

    class Params:
        done = factory.Trait(
            status=ToolCallStatus.DONE,
            idempotent=True,
            result={"ok": True},
            attempts=1,
            started_generation=factory.SelfAttribute("step.generation"),
            started_at=factory.LazyFunction(timezone.now),
            finished_at=factory.SelfAttribute("started_at"),
        )

    step = factory.SubFactory(StepFactory)
    turn = factory.SelfAttribute("step.turn")
    index = factory.LazyAttribute(lambda call: _next(ToolCall.objects.filter(step=call.step), "index", first=0))
    call_id = factory.LazyAttribute(lambda call: f"{call.turn.pk}:{call.step.index}:{call.index}")
    name = "update_checklist"


class InboxMessageFactory(DjangoModelFactory):
    class Meta:
        model = InboxMessage

    task = factory.SubFactory(TaskFactory)
    author = factory.SelfAttribute("task.created_by")
    text = factory.Sequence(lambda n: f"Message {n}")


class CardFactory(DjangoModelFactory):
    class Meta:
        model = Card

    task = factory.SubFactory(TaskFactory)
    workspace = factory.SelfAttribute("task.workspace")
    kind = CardKind.CONFIRM
    title = "Go ahead?"
