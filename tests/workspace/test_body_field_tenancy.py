"""The tenancy matrix for ids in request bodies (DESIGN §12, TESTING "Bad input and security").

test_apis_tenancy.py checks the ids in URLs. Here, every REST body field that names an object by id — a task,
an artifact, a card, a memory, a message, a version, a model profile, a quote — is sent by the owner of the
shared workspace with an id of dave's workspace, and with an id that exists nowhere. Both answers must be the
same refusal, word for word (an id cannot be probed), and nothing may change: not in the shared workspace, and
not in dave's (his task does not wake, his cards stay open, no quote is priced for it).

One world per case, kept small: each case is two requests and a few rows per workspace.
"""

import json
import re
from dataclasses import dataclass

import pytest
from django.urls import reverse

from agents.models import (
    AssistantPreset,
    AssistantPresetVersion,
    Card,
    CardKind,
    InboxMessage,
    MainMessage,
    Task,
    TaskStatus,
)
from agents.services import presets as preset_services
from agents.services.wakeups import task_spending_approved
from agents.subscribers import goal_scope
from billing.models import Approval, Order, Quote
from memory.models import MemoryVersion
from memory.services.memories import memory_state
from tests.support.factories import (
    ArtifactFactory,
    CardFactory,
    FlowFactory,
    InboxMessageFactory,
    ModelProfileFactory,
    TaskFactory,
)
from tests.support.rest import snapshot
from workspace.models import ArtifactVersion, AssetCollection, AssetCollectionItem, FlowRun
from workspace.selectors import workspace_access
from workspace.services.collections import collection_create
from workspace.services.workspaces import workspace_create

MISSING = 10**12
FLOW = {"nodes": {"in": {"type": "text_input"}, "end": {"type": "finish"}}, "edges": [["in", "end"]], "start": "in"}


@pytest.fixture
def world(workspace, alice, dave):
    """The shared workspace (alice owns it) with a Flow, a collection and a preset; dave's workspace with a
    task waiting for a spending approval on its open quote card, an artifact, a memory and messages."""
    other = workspace_create(user=dave, name="Dave's place")
    dave_access = workspace_access(principal=dave, workspace_id=other.pk)
    theirs = TaskFactory(
        workspace=other,
        status=TaskStatus.WAITING,
        waiting_for={"type": "approval", "amount": 40, "operation": "image.generate", "reasons": ["threshold"]},
    )
    artifact = ArtifactFactory(workspace=other, title="Dave's poster", content="draft")
    return {
        "workspace": workspace,
        "alice_access": workspace_access(principal=alice, workspace_id=workspace.pk),
        "flow": FlowFactory(workspace=workspace, graph=FLOW),
        "picked": ArtifactFactory(workspace=workspace, title="Ours"),
        "collection": collection_create(workspace_id=workspace.pk, name="Pack", artifact_ids=[]),
        "preset": preset_services.preset_create(
            access=workspace_access(principal=alice, workspace_id=workspace.pk), name="House voice"
        ),
        "other": other,
        "task": theirs,
        "card": CardFactory(task=theirs, kind=CardKind.QUOTE, title="Approve 40 credits for 1 image"),
        "artifact": artifact,
        "version": artifact.versions.get(number=1),
        "inbox": InboxMessageFactory(task=theirs, text="Make it blue"),
        "main_message": MainMessage.objects.create(workspace=other, author=dave, text="Hello", route="reply"),
        "memory": memory_state(access=dave_access, content="Our main colour is green.", kind="fact"),
        "profile": ModelProfileFactory(workspace=other),
        "dave_collection": collection_create(workspace_id=other.pk, name="Dave's shop", artifact_ids=[artifact.pk]),
    }


@dataclass(frozen=True)
class Field:
    """A body field naming an object: where it is sent, and how the body carries the id."""

    name: str
    method: str
    url_name: str
    body: object  # callable(world, id) -> dict
    target: str | None = None  # the shared workspace's object the URL names, if any
    status: int = 404
    code: str = "not_found"

    def url(self, world) -> str:
        kwargs = {"workspace_id": world["workspace"].pk}
        if self.target == "flow":
            kwargs["artifact_id"] = world["flow"].pk
        elif self.target == "collection":
            kwargs["collection_id"] = world["collection"].pk
        elif self.target == "preset":
            kwargs["preset_id"] = world["preset"].pk
        elif self.target == "template":
            kwargs["name"] = "product-posts"
        return reverse(self.url_name, kwargs=kwargs)


FIELDS = [
    (Field("quote task", "post", "billing-quotes", lambda w, i: {"operation": "image.generate", "task": i}), "task"),
    (Field("approval budget task", "post", "billing-approvals", lambda w, i: {"task": i, "budget": 100000}), "task"),
    (Field("approval quote", "post", "billing-approvals", lambda w, i: {"quote": i}, code="quote_not_found"), "quote"),
    (Field("main message task", "post", "main-message-list", lambda w, i: {"text": "Go on", "task": i}), "task"),
    (Field("main message artifact", "post", "main-message-list", lambda w, i: {"text": "Bluer", "artifact": i}),
     "artifact"),
    (Field("main message card", "post", "main-message-list", lambda w, i: {"text": "Yes", "card": i}), "card"),
    (Field("flow thread run task", "post", "flow-thread-runs", lambda w, i: {"thread": {"task": i}}, target="flow"),
     "task"),
    (Field("forget memory", "post", "memory-forget", lambda w, i: {"memory": i}), "memory"),
    (Field("forget main message", "post", "memory-forget",
           lambda w, i: {"evidence": {"type": "main_message", "id": i}}), "main_message"),
    (Field("forget task message", "post", "memory-forget",
           lambda w, i: {"evidence": {"type": "task_message", "id": i}}), "inbox"),
    (Field("forget artifact version", "post", "memory-forget",
           lambda w, i: {"evidence": {"type": "artifact_version", "id": i}}), "version"),
    (Field("preset create model profile", "post", "assistant-preset-list",
           lambda w, i: {"name": "Theirs", "model_profile": i}, status=400, code="unknown_model_profile"), "profile"),
    (Field("preset update model profile", "patch", "assistant-preset-detail",
           lambda w, i: {"base_version": 1, "model_profile": i}, target="preset", status=400,
           code="unknown_model_profile"), "profile"),
    (Field("collection create artifacts", "post", "collection-list",
           lambda w, i: {"name": "Picks", "artifacts": [w["picked"].pk, i]}), "artifact"),
    (Field("collection item artifact", "post", "collection-items", lambda w, i: {"artifact": i},
           target="collection"), "artifact"),
    (Field("flow create artifact input", "post", "artifact-list",
           lambda w, i: {"kind": "flow", "title": "Theirs", "graph": _reading(i)}), "artifact"),
    (Field("flow edit artifact input", "post", "artifact-flow-edits",
           lambda w, i: {"base_version": 1, "add_nodes": {"sheet": _reading(i)["nodes"]["sheet"]}},
           target="flow"), "artifact"),
    (Field("flow template collection", "post", "flow-template-use", lambda w, i: {"params": {"collection_id": i}},
           target="template"), "dave_collection"),
]  # fmt: skip


def _reading(artifact_id: int) -> dict:
    """A Flow whose artifact input reads `artifact_id`."""
    return {
        "nodes": {
            "in": {"type": "text_input"},
            "sheet": {"type": "artifact_input", "params": {"artifact_id": artifact_id}},
        },
        "edges": [],
        "start": "in",
    }


def _facts() -> dict:
    """Every row a body field could lead a request to write or change, in both workspaces."""
    return {
        **snapshot(),
        "tasks": list(Task.objects.order_by("pk").values_list("pk", "status", "waiting_for", "goal_revision")),
        "cards": list(Card.objects.order_by("pk").values_list("pk", "status", "resolution")),
        "inbox": list(InboxMessage.objects.order_by("pk").values_list("pk", "status")),
        "main": list(MainMessage.objects.order_by("pk").values_list("pk", "task_id", "card_id")),
        "quotes": list(Quote.objects.order_by("pk").values_list("pk", "task_id", "scope")),
        "approvals": list(Approval.objects.order_by("pk").values_list("pk", "task_id", "remaining")),
        "orders": list(Order.objects.order_by("pk").values_list("pk", "status")),
        "memories": list(MemoryVersion.objects.order_by("pk").values_list("pk", "memory_id", "status")),
        "collections": list(AssetCollection.objects.order_by("pk").values_list("pk", "name")),
        "items": list(AssetCollectionItem.objects.order_by("pk").values_list("pk", "collection_id", "artifact_id")),
        "presets": list(AssistantPreset.objects.order_by("pk").values_list("pk", "name")),
        "preset_versions": list(AssistantPresetVersion.objects.order_by("pk").values_list("pk", "preset_id")),
        "flow_runs": list(FlowRun.objects.order_by("pk").values_list("pk", "status")),
        "artifact_versions": list(ArtifactVersion.objects.order_by("pk").values_list("pk", "artifact_id")),
    }


@pytest.mark.django_db
@pytest.mark.parametrize(("field", "names"), FIELDS, ids=[field.name for field, _ in FIELDS])
def test_it_refuses_a_foreign_id_in_a_body_exactly_like_a_missing_one(world, client_for, alice, field, names):
    # given an object of dave's workspace that the field can name (a quote of his, for the quote field)
    if names == "quote":
        foreign_id = Quote.objects.create(
            workspace=world["other"], operation="image.generate", amount=40, expires_at="2999-01-01T00:00Z"
        ).pk
    else:
        foreign_id = world[names].pk
    before = _facts()

    # when the shared workspace's owner sends its id, then an id that exists nowhere
    client = client_for(alice)
    foreign = getattr(client, field.method)(field.url(world), field.body(world, foreign_id), format="json")
    missing = getattr(client, field.method)(field.url(world), field.body(world, MISSING), format="json")

    # then both are the same refusal, word for word (but for the id sent), and nothing changed in either workspace
    assert foreign.status_code == field.status, foreign.content[:300]
    assert foreign.json()["error"]["code"] == field.code
    assert _answer(foreign, foreign_id) == _answer(missing, MISSING)
    assert _facts() == before


def _answer(response, sent_id: int) -> str:
    """The response body with the id the caller sent (which some errors echo back) blanked out."""
    return re.sub(rf"\b{sent_id}\b", "<sent id>", json.dumps(response.json(), sort_keys=True))


@pytest.mark.django_db
def test_it_answers_the_owner_for_an_own_task_in_billing_bodies(world, client_for, alice):
    # given a task of the shared workspace (the refusals above are not a blanket 404)
    ours = TaskFactory(workspace=world["workspace"])

    # when its owner asks for a quote and a budget for it
    client = client_for(alice)
    base = f"/api/v1/workspaces/{world['workspace'].pk}/billing/"
    quote = client.post(base + "quotes/", {"operation": "image.generate", "task": ours.pk}, format="json")
    budget = client.post(base + "approvals/", {"task": ours.pk, "budget": 100}, format="json")

    # then both are made for that task, under its current goal
    assert (quote.status_code, budget.status_code) == (201, 201), (quote.content, budget.content)
    assert Quote.objects.get(pk=quote.json()["id"]).task_id == ours.pk
    assert Approval.objects.get(pk=budget.json()["id"]).scope == quote.json()["scope"] == f"goal:{ours.goal_revision}"


@pytest.mark.django_db
def test_it_never_wakes_another_workspaces_task_for_an_approval(world):
    # given dave's task waiting for a spending approval
    theirs = world["task"]
    before = _facts()

    # when a wake-up for it arrives from the shared workspace (what an approval recorded there would publish)
    outcome = task_spending_approved(workspace_id=world["workspace"].pk, task_id=theirs.pk)

    # then it is ignored: the task still waits, its quote card is still open, no turn started
    assert outcome == "ignored"
    assert _facts() == before
    assert Task.objects.get(pk=theirs.pk).status == TaskStatus.WAITING


@pytest.mark.django_db
def test_it_resolves_a_goal_scope_only_within_the_workspace(world):
    theirs = world["task"]
    assert goal_scope(world["other"].pk, theirs.pk) == f"goal:{theirs.goal_revision}"
    assert goal_scope(world["workspace"].pk, theirs.pk) is None
    assert goal_scope(world["other"].pk, MISSING) is None
