"""The tenancy matrix: every REST endpoint × every kind of caller (DESIGN §12, TESTING "Bad input and security").

Outsiders learn nothing (the 404 is byte-for-byte the one a nonexistent id gets), insufficient roles get
403 `role_required`, and a refused request changes nothing in the database.
"""

from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace

import pytest
from django.core.files.base import ContentFile
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from rest_framework.test import APIClient

from tests.support.factories import (
    ArtifactFactory,
    FlowFactory,
    FlowNodeRunFactory,
    FlowRunFactory,
    GenerationJobFactory,
    MembershipFactory,
)
from tests.support.media_samples import png_bytes
from tests.support.rest import assert_error, issue_api_key, key_client, snapshot
from tests.support.worlds import built_once, person, shared_workspace
from workspace.flows.runner import flow_run_create
from workspace.models import (
    ApiKey,
    Artifact,
    AssetCollection,
    FlowNodeRun,
    FlowRun,
    FlowRunStatus,
    Guide,
    Membership,
    NodeStatus,
    Role,
    Workspace,
)
from workspace.services.collections import collection_create
from workspace.services.guides import guide_create
from workspace.services.workspaces import workspace_create

RUNNABLE_FLOW = {
    "nodes": {"in": {"type": "text_input"}, "end": {"type": "finish"}},
    "edges": [["in", "end"]],
    "start": "in",
}
PERSONAS = ("outsider", "viewer", "editor", "owner", "key_viewer", "key_editor", "key_other")


@dataclass(frozen=True)
class Endpoint:
    name: str
    method: str
    url_name: str
    target: str | None = None  # which object of `world` the URL points at, besides the workspace
    body: dict | Callable[[SimpleNamespace], dict] | None = None  # a callable builds it from the world
    role: str = Role.OWNER  # the role a 403 names
    kwargs: dict | None = None  # URL parts that name no object of a workspace (a template's name)

    def payload(self, world) -> dict | None:
        """The request body: a fresh one each time (an uploaded file is read once)."""
        return self.body(world) if callable(self.body) else self.body

    def url(self, world, workspace_id: int | None = None, target_id: int | None = None) -> str:
        kwargs = {"workspace_id": world.workspace.pk if workspace_id is None else workspace_id, **(self.kwargs or {})}
        if self.target == "member":
            kwargs["membership_id"] = world.erin_membership.pk if target_id is None else target_id
        elif self.target == "api_key":
            kwargs["key_id"] = world.target_key.pk if target_id is None else target_id
        elif self.target == "job":
            kwargs["job_id"] = world.job.pk if target_id is None else target_id
        elif self.target in ("document", "flow"):
            kwargs["artifact_id"] = getattr(world, self.target).pk if target_id is None else target_id
        elif self.target == "flow_run":
            kwargs["run_id"] = world.flow_run.pk if target_id is None else target_id
        elif self.target == "failed_node":
            kwargs["run_id"] = world.failed_run.pk if target_id is None else target_id
            kwargs["node_id"] = "end"
        elif self.target in ("collection", "collection_item"):
            kwargs["collection_id"] = world.collection.pk if target_id is None else target_id
            if self.target == "collection_item":
                kwargs["artifact_id"] = world.artifact.pk
        elif self.target == "guide":  # guides are addressed by name; an id stands for a name nobody uses
            kwargs["name"] = world.guide.name if target_id is None else str(target_id)
        elif self.target in ("artifact", "artifact_file"):
            kwargs["artifact_id"] = world.artifact.pk if target_id is None else target_id
            if self.target == "artifact_file":
                kwargs["number"] = 1
        return reverse(self.url_name, kwargs=kwargs)


WORKSPACE_GET = Endpoint("workspace GET", "get", "workspace-detail")
WORKSPACE_PATCH = Endpoint("workspace PATCH", "patch", "workspace-detail", body={"name": "Renamed"})
WORKSPACE_DELETE = Endpoint("workspace DELETE", "delete", "workspace-detail")
MEMBERS_GET = Endpoint("members GET", "get", "member-list")
MEMBERS_POST = Endpoint("members POST", "post", "member-list", body={"user": "frank", "role": "viewer"})
MEMBER_GET = Endpoint("member GET", "get", "member-detail", target="member")
MEMBER_PATCH = Endpoint("member PATCH", "patch", "member-detail", target="member", body={"role": "editor"})
MEMBER_DELETE = Endpoint("member DELETE", "delete", "member-detail", target="member")
KEYS_GET = Endpoint("api-keys GET", "get", "api-key-list")
KEYS_POST = Endpoint("api-keys POST", "post", "api-key-list", body={"name": "deploy", "role": "viewer"})
KEY_GET = Endpoint("api-key GET", "get", "api-key-detail", target="api_key")
KEY_DELETE = Endpoint("api-key DELETE", "delete", "api-key-detail", target="api_key")
EVENTS_GET = Endpoint("events GET", "get", "event-list")
JOBS_GET = Endpoint("jobs GET", "get", "generation-job-list")
JOB_GET = Endpoint("job GET", "get", "generation-job-detail", target="job")
ARTIFACT_GET = Endpoint("artifact GET", "get", "artifact-detail", target="artifact")
ARTIFACT_PATCH = Endpoint(
    "artifact PATCH", "patch", "artifact-detail", target="artifact", body={"title": "Renamed"}, role="editor"
)
ARTIFACT_FILE_GET = Endpoint("artifact file GET", "get", "artifact-version-file", target="artifact_file")
ARTIFACTS_GET = Endpoint("artifacts GET", "get", "artifact-list")
ARTIFACTS_POST = Endpoint(
    "artifacts POST",
    "post",
    "artifact-list",
    body={"kind": "document", "title": "Notes", "content": "hi"},
    role="editor",
)
DOCUMENT_PUT = Endpoint(
    "document PUT",
    "put",
    "artifact-document",
    target="document",
    body={"base_version": 1, "content": "v2"},
    role="editor",
)
DOCUMENT_EDITS_POST = Endpoint(
    "document edits POST",
    "post",
    "artifact-document-edits",
    target="document",
    body={"base_version": 1, "edits": [{"find": "Shot 1", "replace": "Shot one"}]},
    role="editor",
)
FLOW_EDITS_POST = Endpoint(
    "flow edits POST",
    "post",
    "artifact-flow-edits",
    target="flow",
    body={"base_version": 1, "node_edits": {"end": {"params": {}}}},
    role="editor",
)
FLOW_RUNS_POST = Endpoint(
    "flow runs POST", "post", "artifact-flow-runs", target="flow", body={"inputs": {"text": "go"}}, role="editor"
)
FLOW_THREAD_RUNS_POST = Endpoint(
    "flow thread runs POST", "post", "flow-thread-runs", target="flow", body={"thread": "main"}, role="editor"
)
FLOW_RUN_GET = Endpoint("flow run GET", "get", "flow-run-detail", target="flow_run")
FLOW_NODE_RETRY = Endpoint("flow node retry POST", "post", "flow-node-retry", target="failed_node", role="editor")
FLOW_NODE_TYPES_GET = Endpoint("flow node types GET", "get", "flow-node-types")
FLOW_TEMPLATES_GET = Endpoint("flow templates GET", "get", "flow-template-list")
FLOW_TEMPLATE_USE_POST = Endpoint(
    "flow template use POST", "post", "flow-template-use", kwargs={"name": "product-posts"},
    body=lambda w: {"params": {"collection_id": w.collection.pk}}, role="editor",
)  # fmt: skip


def _png(name: str) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, png_bytes(), content_type="image/png")


UPLOAD_POST = Endpoint(
    "artifact upload POST", "post", "artifact-upload", body=lambda w: {"file": _png("upload.png")}, role="editor"
)
VERSION_UPLOAD_POST = Endpoint(
    "artifact version upload POST",
    "post",
    "artifact-version-upload",
    target="artifact",
    body=lambda w: {"file": _png("v2.png"), "base_version": "1"},
    role="editor",
)
COLLECTIONS_GET = Endpoint("collections GET", "get", "collection-list")
COLLECTIONS_POST = Endpoint(
    "collections POST", "post", "collection-list", body=lambda w: {"name": "Picks", "artifacts": [w.document.pk]},
    role="editor",
)  # fmt: skip
COLLECTION_GET = Endpoint("collection GET", "get", "collection-detail", target="collection")
COLLECTION_PATCH = Endpoint(
    "collection PATCH", "patch", "collection-detail", target="collection", body={"name": "Renamed"}, role="editor"
)
COLLECTION_DELETE = Endpoint("collection DELETE", "delete", "collection-detail", target="collection", role="editor")
COLLECTION_ITEMS_POST = Endpoint(
    "collection items POST", "post", "collection-items", target="collection",
    body=lambda w: {"artifact": w.document.pk}, role="editor",
)  # fmt: skip
COLLECTION_ITEM_DELETE = Endpoint(
    "collection item DELETE", "delete", "collection-item", target="collection_item", role="editor"
)
COLLECTION_ORDER_PUT = Endpoint(
    "collection order PUT", "put", "collection-order", target="collection",
    body=lambda w: {"artifacts": [w.flow.pk, w.artifact.pk]}, role="editor",
)  # fmt: skip

GUIDES_GET = Endpoint("guides GET", "get", "guide-list")
GUIDES_POST = Endpoint(
    "guides POST", "post", "guide-list", body={"name": "mood-board", "purpose": "Mood boards.", "content": "# Mood\n"},
    role="editor",
)  # fmt: skip
GUIDE_GET = Endpoint("guide GET", "get", "guide-detail", target="guide")
GUIDE_PATCH = Endpoint(
    "guide PATCH", "patch", "guide-detail", target="guide", body={"purpose": "Our house rules, shorter."}, role="editor"
)

# fmt: off
# Expected status per caller. 403 always means `role_required`; 404 always means "as if it did not exist".
MATRIX = [
    #  endpoint          outsider viewer editor owner key_viewer key_editor key_other
    (WORKSPACE_GET,      404,     200,   200,   200,  200,       200,       404),
    (WORKSPACE_PATCH,    404,     403,   403,   200,  403,       403,       404),
    (WORKSPACE_DELETE,   404,     403,   403,   204,  403,       403,       404),
    (MEMBERS_GET,        404,     200,   200,   200,  200,       200,       404),
    (MEMBERS_POST,       404,     403,   403,   201,  403,       403,       404),
    (MEMBER_GET,         404,     200,   200,   200,  200,       200,       404),
    (MEMBER_PATCH,       404,     403,   403,   200,  403,       403,       404),
    (MEMBER_DELETE,      404,     403,   403,   204,  403,       403,       404),
    (KEYS_GET,           404,     403,   403,   200,  403,       403,       404),
    (KEYS_POST,          404,     403,   403,   201,  403,       403,       404),
    (KEY_GET,            404,     403,   403,   200,  403,       403,       404),
    (KEY_DELETE,         404,     403,   403,   200,  403,       403,       404),
    (EVENTS_GET,         404,     200,   200,   200,  200,       200,       404),
    (JOBS_GET,           404,     200,   200,   200,  200,       200,       404),
    (JOB_GET,            404,     200,   200,   200,  200,       200,       404),
    (ARTIFACT_GET,       404,     200,   200,   200,  200,       200,       404),
    (ARTIFACT_PATCH,     404,     403,   200,   200,  403,       200,       404),
    (ARTIFACT_FILE_GET,  404,     200,   200,   200,  200,       200,       404),
    (ARTIFACTS_GET,      404,     200,   200,   200,  200,       200,       404),
    (ARTIFACTS_POST,     404,     403,   201,   201,  403,       201,       404),
    (DOCUMENT_PUT,       404,     403,   200,   200,  403,       200,       404),
    (DOCUMENT_EDITS_POST, 404,    403,   200,   200,  403,       200,       404),
    (FLOW_EDITS_POST,    404,     403,   200,   200,  403,       200,       404),
    (FLOW_RUNS_POST,     404,     403,   201,   201,  403,       201,       404),
    (FLOW_THREAD_RUNS_POST, 404,  403,   201,   201,  403,       201,       404),
    (FLOW_RUN_GET,       404,     200,   200,   200,  200,       200,       404),
    (FLOW_NODE_RETRY,    404,     403,   201,   201,  403,       201,       404),
    (FLOW_NODE_TYPES_GET, 404,    200,   200,   200,  200,       200,       404),
    (FLOW_TEMPLATES_GET, 404,     200,   200,   200,  200,       200,       404),
    (FLOW_TEMPLATE_USE_POST, 404, 403,   201,   201,  403,       201,       404),
    (UPLOAD_POST,        404,     403,   201,   201,  403,       201,       404),
    (VERSION_UPLOAD_POST, 404,    403,   201,   201,  403,       201,       404),
    (COLLECTIONS_GET,    404,     200,   200,   200,  200,       200,       404),
    (COLLECTIONS_POST,   404,     403,   201,   201,  403,       201,       404),
    (COLLECTION_GET,     404,     200,   200,   200,  200,       200,       404),
    (COLLECTION_PATCH,   404,     403,   200,   200,  403,       200,       404),
    (COLLECTION_DELETE,  404,     403,   204,   204,  403,       204,       404),
    (COLLECTION_ITEMS_POST, 404,  403,   200,   200,  403,       200,       404),
    (COLLECTION_ITEM_DELETE, 404, 403,   200,   200,  403,       200,       404),
    (COLLECTION_ORDER_PUT, 404,   403,   200,   200,  403,       200,       404),
    (GUIDES_GET,         404,     200,   200,   200,  200,       200,       404),
    (GUIDES_POST,        404,     403,   201,   201,  403,       201,       404),
    (GUIDE_GET,          404,     200,   200,   200,  200,       200,       404),
    (GUIDE_PATCH,        404,     403,   200,   200,  403,       200,       404),
]
# fmt: on

WORKSPACE_ENDPOINTS = [row[0] for row in MATRIX]
CASES = [
    pytest.param(endpoint, persona, status, id=f"{endpoint.name}-{persona}")
    for endpoint, *statuses in MATRIX
    for persona, status in zip(PERSONAS, statuses, strict=True)
]
WRITES = {"post", "patch", "put", "delete"}


def _build_world() -> SimpleNamespace:
    # given the shared workspace (alice owner, bob editor, carol viewer) plus erin, a viewer the member
    # endpoints act on, frank, a user who belongs nowhere, and dave's own workspace with its own key
    alice, bob, carol, dave = (person(name) for name in ("alice", "bob", "carol", "dave"))
    workspace = shared_workspace(alice, bob, carol)
    erin = person("erin")
    person("frank")
    erin_membership = MembershipFactory(workspace=workspace, user=erin, role=Role.VIEWER)
    _, key_viewer = issue_api_key(workspace, role=Role.VIEWER, name="viewer key")
    _, key_editor = issue_api_key(workspace, role=Role.EDITOR, name="editor key")
    target_key, _ = issue_api_key(workspace, role=Role.EDITOR, name="target key")
    other = workspace_create(user=dave, name="Dave's place")
    other_key, key_other = issue_api_key(other, role=Role.EDITOR, name="other key")
    # and in each workspace a generation job and an image artifact
    job, other_job = (GenerationJobFactory(workspace=w, prompt="p", idempotency_key="k") for w in (workspace, other))
    artifact, other_artifact = (
        ArtifactFactory(workspace=w, kind="image", title="Poster", file=ContentFile(b"png", name="p.png"))
        for w in (workspace, other)
    )
    # and a document, a Flow and a run of it in each
    document, other_document = (
        ArtifactFactory(workspace=w, title="Storyboard", content="## Shot 1\nA cup.") for w in (workspace, other)
    )
    flow, other_flow = (FlowFactory(workspace=w, graph=RUNNABLE_FLOW) for w in (workspace, other))
    flow_run, other_flow_run = (
        flow_run_create(workspace_id=f.workspace_id, artifact_id=f.pk, inputs={"text": "x"})[0]
        for f in (flow, other_flow)
    )
    # a run of the same Flow whose last node failed, to retry
    failed_run = FlowRunFactory(artifact=flow, graph=RUNNABLE_FLOW, status=FlowRunStatus.FAILED)
    FlowNodeRunFactory(run=failed_run, node_id="in", type="text_input", status=NodeStatus.DONE)
    FlowNodeRunFactory(run=failed_run, node_id="end", type="finish", status=NodeStatus.FAILED)
    # and an asset collection of the image and the Flow in each
    collection, other_collection = (
        collection_create(workspace_id=w.pk, name="Pack", artifact_ids=[a.pk, f.pk])
        for w, a, f in ((workspace, artifact, flow), (other, other_artifact, other_flow))
    )
    # and a guide of its own in each (names differ: a name one workspace uses says nothing about the other)
    guide, other_guide = (
        guide_create(workspace_id=w.pk, name=name, purpose="House rules.", content="# Rules\n")
        for w, name in ((workspace, "house-rules"), (other, "dave-rules"))
    )
    return SimpleNamespace(
        guide=guide,
        other_guide=other_guide,
        collection=collection,
        other_collection=other_collection,
        document=document,
        other_document=other_document,
        flow=flow,
        other_flow=other_flow,
        flow_run=flow_run,
        failed_run=failed_run,
        other_flow_run=other_flow_run,
        workspace=workspace,
        other=other,
        other_key=other_key,
        other_membership=Membership.objects.get(workspace=other, user=dave),
        erin_membership=erin_membership,
        target_key=target_key,
        job=job,
        other_job=other_job,
        artifact=artifact,
        other_artifact=other_artifact,
        users={"outsider": dave, "viewer": carol, "editor": bob, "owner": alice},
        raw_keys={"key_viewer": key_viewer, "key_editor": key_editor, "key_other": key_other},
    )


# Built once for the module (it was ~75% of the module's time when built for each of its ~500 cases); each
# test runs in a savepoint rolled back after it, on a deep copy of these objects and a copy of their files.
world_built = built_once(_build_world)


@pytest.fixture
def world(world_built, db):
    return world_built.fresh()


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path, world_built):
    """The test's own MEDIA_ROOT (as tests/workspace/conftest.py gives), holding a copy of the world's files."""
    settings.MEDIA_ROOT = world_built.media_copy(tmp_path / "media")
    return settings.MEDIA_ROOT


@pytest.fixture
def client_as(world, client_for):
    def make(persona: str) -> APIClient:
        if persona in world.users:
            return client_for(world.users[persona])
        return key_client(world.raw_keys[persona])

    return make


def _call(client: APIClient, method: str, url: str, body: dict | None = None):
    if body is None:
        return getattr(client, method)(url)
    uploading = any(isinstance(value, SimpleUploadedFile) for value in body.values())
    return getattr(client, method)(url, body, format="multipart" if uploading else "json")


def _missing_workspace_id() -> int:
    return (Workspace.objects.order_by("-pk").values_list("pk", flat=True).first() or 0) + 1000


@pytest.mark.django_db
@pytest.mark.parametrize(("endpoint", "persona", "expected"), CASES)
def test_it_answers_each_caller_as_its_role_says(world, client_as, client_for, endpoint, persona, expected):
    # given the database before the request
    before = snapshot()

    # when the caller hits the endpoint
    response = _call(client_as(persona), endpoint.method, endpoint.url(world), endpoint.payload(world))

    # then the status is the one the matrix gives
    assert response.status_code == expected, (response.status_code, response.content[:300])
    after = snapshot()
    if expected == 404:
        # then an outsider learns nothing: the very answer the owner gets for a workspace that does not exist
        assert_error(response, 404, "not_found")
        owner = client_for(world.users["owner"])
        ghost = _call(owner, endpoint.method, endpoint.url(world, _missing_workspace_id()), endpoint.payload(world))
        assert ghost.status_code == 404
        assert response.json() == ghost.json()
        assert after == before
    elif expected == 403:
        error = assert_error(response, 403, "role_required")
        assert error["details"]["required_role"] == endpoint.role
        assert after == before
    elif endpoint.method in WRITES:
        # then the write is persisted and recorded in the event log (a deleted workspace takes its log along)
        assert after != before
        if endpoint is WORKSPACE_DELETE:
            assert not Workspace.objects.filter(pk=world.workspace.pk).exists()
        else:
            assert len(after["events"]) > len(before["events"])
    else:
        assert after == before


# One persisted effect per allowed write, so "allowed" means "done", not just "2xx".
def _effect_of(endpoint: Endpoint, world) -> bool:
    if endpoint is WORKSPACE_PATCH:
        return Workspace.objects.get(pk=world.workspace.pk).name == "Renamed"
    if endpoint is WORKSPACE_DELETE:
        return not Workspace.objects.filter(pk=world.workspace.pk).exists()
    if endpoint is MEMBERS_POST:
        return Membership.objects.filter(workspace=world.workspace, user__username="frank", role="viewer").exists()
    if endpoint is MEMBER_PATCH:
        return Membership.objects.get(pk=world.erin_membership.pk).role == Role.EDITOR
    if endpoint is MEMBER_DELETE:
        return not Membership.objects.filter(pk=world.erin_membership.pk).exists()
    if endpoint is KEYS_POST:
        return ApiKey.objects.filter(workspace=world.workspace, name="deploy", role="viewer").exists()
    if endpoint is KEY_DELETE:
        return ApiKey.objects.get(pk=world.target_key.pk).revoked_at is not None
    if endpoint is ARTIFACT_PATCH:
        return Artifact.objects.get(pk=world.artifact.pk).title == "Renamed"
    if endpoint is ARTIFACTS_POST:
        return Artifact.objects.filter(workspace=world.workspace, kind="document", title="Notes").exists()
    if endpoint in (DOCUMENT_PUT, DOCUMENT_EDITS_POST):
        return Artifact.objects.get(pk=world.document.pk).current_version == 2
    if endpoint is FLOW_EDITS_POST:
        return Artifact.objects.get(pk=world.flow.pk).current_version == 2
    if endpoint is FLOW_RUNS_POST:
        return FlowRun.objects.filter(artifact=world.flow).count() == 3  # the world has two: one failed
    if endpoint is FLOW_THREAD_RUNS_POST:
        return FlowRun.objects.filter(artifact=world.flow, thread="main").count() == 1
    if endpoint is FLOW_TEMPLATE_USE_POST:
        made = Artifact.objects.filter(workspace=world.workspace, kind="flow", tags__contains=["product-posts"])
        return made.exists()
    if endpoint is FLOW_NODE_RETRY:
        return FlowNodeRun.objects.get(run=world.failed_run, node_id="end").attempt == 2
    if endpoint is UPLOAD_POST:
        return Artifact.objects.filter(workspace=world.workspace, kind="image", title="upload").exists()
    if endpoint is VERSION_UPLOAD_POST:
        return Artifact.objects.get(pk=world.artifact.pk).current_version == 2
    if endpoint is COLLECTIONS_POST:
        return AssetCollection.objects.filter(workspace=world.workspace, name="Picks").exists()
    if endpoint is COLLECTION_PATCH:
        return AssetCollection.objects.get(pk=world.collection.pk).name == "Renamed"
    if endpoint is COLLECTION_DELETE:
        return not AssetCollection.objects.filter(pk=world.collection.pk).exists()
    if endpoint is COLLECTION_ITEMS_POST:
        return world.collection.items.filter(artifact=world.document).exists()
    if endpoint is COLLECTION_ITEM_DELETE:
        return not world.collection.items.filter(artifact=world.artifact).exists()
    if endpoint is COLLECTION_ORDER_PUT:
        order = world.collection.items.order_by("position").values_list("artifact_id", flat=True)
        return list(order) == [world.flow.pk, world.artifact.pk]
    if endpoint is GUIDES_POST:
        return Guide.objects.filter(workspace=world.workspace, name="mood-board").exists()
    if endpoint is GUIDE_PATCH:
        return Guide.objects.get(pk=world.guide.pk).purpose == "Our house rules, shorter."
    raise AssertionError(f"no effect listed for {endpoint.name}")


@pytest.mark.django_db
@pytest.mark.parametrize("endpoint", [e for e in WORKSPACE_ENDPOINTS if e.method in WRITES], ids=lambda e: e.name)
def test_it_persists_what_the_owner_is_allowed_to_do(world, client_as, endpoint):
    # given the effect has not happened yet
    assert not _effect_of(endpoint, world)

    # when the owner makes the request
    response = _call(client_as("owner"), endpoint.method, endpoint.url(world), endpoint.payload(world))

    # then it succeeded and the effect is in the database
    assert response.status_code in (200, 201, 204), response.content
    assert _effect_of(endpoint, world)


@pytest.mark.django_db
@pytest.mark.parametrize("endpoint", [e for e in WORKSPACE_ENDPOINTS if e.target], ids=lambda e: e.name)
def test_it_hides_objects_of_another_workspace_behind_the_same_404(world, client_as, endpoint):
    # given an id that exists, but in dave's workspace, and an id that exists nowhere
    theirs = {
        "member": world.other_membership,
        "api_key": world.other_key,
        "job": world.other_job,
        "artifact": world.other_artifact,
        "artifact_file": world.other_artifact,
        "document": world.other_document,
        "flow": world.other_flow,
        "flow_run": world.other_flow_run,
        "failed_node": world.other_flow_run,
        "collection": world.other_collection,
        "collection_item": world.other_collection,
        "guide": world.other_guide,
    }[endpoint.target]
    foreign_id = theirs.name if endpoint.target == "guide" else theirs.pk
    before = snapshot()

    # when the owner of the shared workspace asks for both through the shared workspace's URL
    owner = client_as("owner")
    foreign = _call(owner, endpoint.method, endpoint.url(world, target_id=foreign_id), endpoint.payload(world))
    missing = _call(owner, endpoint.method, endpoint.url(world, target_id=10**9), endpoint.payload(world))

    # then both answers are the same 404, and dave's rows are untouched
    assert_error(foreign, 404, "not_found")
    assert foreign.json() == missing.json()
    assert snapshot() == before


@pytest.mark.django_db
@pytest.mark.parametrize("persona", PERSONAS)
def test_it_lists_only_the_workspaces_the_caller_belongs_to(world, client_as, persona):
    # given the shared workspace and dave's own
    # when the caller lists workspaces
    response = client_as(persona).get(reverse("workspace-list"))

    # then only their workspaces are listed, each with the caller's role
    assert response.status_code == 200
    listed = {item["id"]: item["role"] for item in response.json()["results"]}
    expected = {
        "outsider": {world.other.pk: "owner"},
        "viewer": {world.workspace.pk: "viewer"},
        "editor": {world.workspace.pk: "editor"},
        "owner": {world.workspace.pk: "owner"},
        "key_viewer": {world.workspace.pk: "viewer"},
        "key_editor": {world.workspace.pk: "editor"},
        "key_other": {world.other.pk: "editor"},
    }[persona]
    assert listed == expected


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("persona", "expected"),
    [
        ("outsider", 201),
        ("viewer", 201),
        ("editor", 201),
        ("owner", 201),
        ("key_viewer", 403),
        ("key_editor", 403),
        ("key_other", 403),
    ],
)
def test_it_lets_people_but_not_keys_create_workspaces(world, client_as, persona, expected):
    # given the database before the request
    before = snapshot()

    # when the caller creates a workspace
    response = client_as(persona).post(reverse("workspace-list"), {"name": "Fresh"}, format="json")

    # then a person becomes its owner; a key is refused and nothing is created
    if expected == 201:
        assert response.status_code == 201, response.content
        created = Workspace.objects.get(pk=response.json()["id"])
        assert created.name == "Fresh"
        assert Membership.objects.get(workspace=created).user == world.users[persona]
        assert response.json()["role"] == "owner"
    else:
        assert_error(response, 403, "api_key_scope")
        assert snapshot() == before


ALL_ROUTES = [
    pytest.param("get", "workspace-list", None, id="workspaces GET"),
    pytest.param("post", "workspace-list", None, id="workspaces POST"),
    *[pytest.param(e.method, e.url_name, e, id=e.name) for e in WORKSPACE_ENDPOINTS],
]


def _route_url(world, url_name: str, endpoint: Endpoint | None) -> str:
    return endpoint.url(world) if endpoint else reverse(url_name)


@pytest.mark.django_db
@pytest.mark.parametrize(("method", "url_name", "endpoint"), ALL_ROUTES)
def test_it_refuses_unauthenticated_requests_with_401(world, method, url_name, endpoint):
    # given no credentials at all
    before = snapshot()

    # when the route is called
    response = _call(APIClient(), method, _route_url(world, url_name, endpoint), {"name": "x"})

    # then 401 with the error body and a challenge, and nothing changed
    assert_error(response, 401, "not_authenticated")
    assert response["WWW-Authenticate"].startswith("Bearer")
    assert snapshot() == before


@pytest.mark.django_db
@pytest.mark.parametrize(("method", "url_name", "endpoint"), ALL_ROUTES)
@pytest.mark.parametrize("header", ["bearer", "x-api-key"])
def test_it_refuses_an_unknown_api_key_with_401(world, method, url_name, endpoint, header):
    # given a well-formed key that was never issued (it reuses a real prefix, with another secret)
    forged = f"{ApiKey.PREFIX}{world.target_key.prefix}_not-the-secret"
    before = snapshot()

    # when the route is called with it
    response = _call(key_client(forged, header=header), method, _route_url(world, url_name, endpoint), {"name": "x"})

    # then 401 invalid_api_key, and nothing changed
    assert_error(response, 401, "invalid_api_key")
    assert snapshot() == before


def test_it_covers_every_route_and_method_of_the_workspace_api():
    # given every (route, method) the workspace URLconf serves, and the Flow run routes agents serves (starting
    # a run goes through billing and cards, which workspace cannot import)
    from agents import urls as agents_urls
    from workspace import urls

    flow_routes = [
        p
        for p in agents_urls.urlpatterns
        if p.name in ("artifact-flow-runs", "flow-thread-runs", "flow-node-retry", "flow-node-types")
    ]
    served = set()
    for pattern in [*urls.urlpatterns, *flow_routes]:
        if pattern.name == "generation-webhook":
            continue  # authenticated by its signature alone, never by a workspace role: test_webhooks.py
        view = pattern.callback.view_class
        for method in view.http_method_names:
            if method not in ("options", "head") and hasattr(view, method):
                served.add((pattern.name, method))

    # then the matrix above has a row for each, so a new endpoint cannot ship without its tenancy rules
    covered = {(url_name, method) for method, url_name, _ in (p.values for p in ALL_ROUTES)}
    assert served == covered
