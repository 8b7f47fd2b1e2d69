"""REST for memory (issue 13, item 5): memories with provenance and version chains, stating, correcting and
confirming, the profile and its versions, episodes.

The tenancy matrix covers every endpoint × every kind of caller; bad input is refused with the one error body and
changes nothing; after a forget (asked at agents' endpoint, confirmed on its card) no answer carries what it
erased, while what remains keeps its provenance.
"""

import json
from dataclasses import dataclass
from types import SimpleNamespace

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import resolve, reverse
from django.utils import timezone
from rest_framework.test import APIClient

from agents.apis import MemoryForgetApi
from agents.models import InboxMessage, Task
from memory.apis import MemoryDetailApi
from memory.models import (
    Derivation,
    DerivationRole,
    Evidence,
    EvidenceKind,
    Memory,
    MemoryScope,
    MemoryVersion,
    ProfileVersion,
    VersionStatus,
)
from memory.services.episodes import episode_write
from memory.services.evidence import evidence_record
from memory.services.extraction import evidence_extract
from memory.services.memories import memory_state
from tests.support.rest import (
    assert_error,
    assert_role_answer,
    call,
    issue_api_key,
    key_client,
)
from tests.support.rest import snapshot as tenancy_snapshot
from tests.support.worlds import (  # noqa: F401 — world_alice… are the fixtures alice…, the world's personas
    built_once,
    person,
    shared_workspace,
    world_alice,
    world_bob,
    world_carol,
    world_dave,
)
from workspace.models import Role, Workspace
from workspace.selectors import workspace_access
from workspace.services.workspaces import workspace_create

pytestmark = pytest.mark.django_db

PERSONAS = ("outsider", "viewer", "editor", "owner", "key_viewer", "key_editor", "key_other")
BLUE = "Our brand's main colour is blue."
CANARY = "Quorvex-5519"


# --- helpers ----------------------------------------------------------------------------------------------


def _access(user, workspace):
    return workspace_access(principal=user, workspace_id=workspace.pk)


def _state(user, workspace, content: str, *, kind: str = "fact", scope: str = MemoryScope.WORKSPACE) -> Memory:
    return memory_state(access=_access(user, workspace), content=content, kind=kind, scope=scope)


def _active(memory_id: int) -> MemoryVersion:
    return MemoryVersion.objects.get(memory_id=memory_id, status=VersionStatus.ACTIVE)


def snapshot() -> dict[str, list[tuple]]:
    """Every persisted fact a memory request could change, on top of the tenancy facts."""
    return {
        **tenancy_snapshot(),
        "memories": list(Memory.objects.order_by("pk").values_list("pk", "workspace_id", "scope", "subject")),
        "versions": list(MemoryVersion.objects.order_by("pk").values_list("pk", "memory_id", "status", "content")),
        "evidence": list(Evidence.objects.order_by("pk").values_list("pk", "kind", "text", "feeds_memory")),
        "derivations": list(Derivation.objects.order_by("pk").values_list("pk", "role", "version_id", "evidence_id")),
        "profile": list(ProfileVersion.objects.order_by("pk").values_list("pk", "workspace_id", "number")),
    }


def _url(name: str, workspace, **kwargs) -> str:
    return reverse(name, kwargs={"workspace_id": workspace.pk if hasattr(workspace, "pk") else workspace, **kwargs})


def _forget(client: APIClient, workspace, body: dict) -> dict:
    """Ask to forget through agents' endpoint, then confirm on the card it opened, as a person does."""
    asked = client.post(_url("memory-forget", workspace), body, format="json")
    assert asked.status_code == 202, asked.content
    card = asked.json()["card"]
    confirmed = client.post(_url("card-actions", workspace, card_id=card), {"action": "confirm"}, format="json")
    assert confirmed.status_code == 200, confirmed.content
    return asked.json()


# --- the tenancy matrix -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Endpoint:
    name: str
    method: str
    url_name: str
    on_memory: bool = False
    body: dict | None = None
    event: str | None = None  # the event kind an allowed write appends

    def url(self, world, *, workspace_id=None, memory_id=None) -> str:
        kwargs = {"workspace_id": world.workspace.pk if workspace_id is None else workspace_id}
        if self.on_memory:
            kwargs["memory_id"] = world.memory.pk if memory_id is None else memory_id
        return reverse(self.url_name, kwargs=kwargs)


MEMORIES_GET = Endpoint("memories GET", "get", "memory-list")
MEMORIES_POST = Endpoint(
    "memories POST",
    "post",
    "memory-list",
    body={"content": "Our mascot is a red fox.", "kind": "fact"},
    event="memory.created",
)
MEMORY_GET = Endpoint("memory GET", "get", "memory-detail", on_memory=True)
CORRECT = Endpoint(
    "correct POST",
    "post",
    "memory-correct",
    on_memory=True,
    body={"content": "Our brand's main colour is green."},
    event="memory.refined",
)
CONFIRM = Endpoint("confirm POST", "post", "memory-confirm", on_memory=True, event="memory.confirmed")
PROFILE_GET = Endpoint("profile GET", "get", "memory-profile")
PROFILE_VERSIONS_GET = Endpoint("profile versions GET", "get", "memory-profile-versions")
EPISODES_GET = Endpoint("episodes GET", "get", "memory-episodes")

# fmt: off
# Expected status per caller. 403 always means `role_required` (editor); 404 always means "as if it did not exist".
MATRIX = [
    #  endpoint             outsider viewer editor owner key_viewer key_editor key_other
    (MEMORIES_GET,          404,     200,   200,   200,  200,       200,       404),
    (MEMORIES_POST,         404,     403,   201,   201,  403,       201,       404),
    (MEMORY_GET,            404,     200,   200,   200,  200,       200,       404),
    (CORRECT,               404,     403,   200,   200,  403,       200,       404),
    (CONFIRM,               404,     403,   200,   200,  403,       200,       404),
    (PROFILE_GET,           404,     200,   200,   200,  200,       200,       404),
    (PROFILE_VERSIONS_GET,  404,     200,   200,   200,  200,       200,       404),
    (EPISODES_GET,          404,     200,   200,   200,  200,       200,       404),
]
# fmt: on

ENDPOINTS = [row[0] for row in MATRIX]
CASES = [
    pytest.param(endpoint, persona, status, id=f"{endpoint.name}-{persona}")
    for endpoint, *statuses in MATRIX
    for persona, status in zip(PERSONAS, statuses, strict=True)
]


def _build_world() -> SimpleNamespace:
    # given the shared workspace (alice owner, bob editor, carol viewer) with alice's brand colour, bob's own
    # preference, dave's workspace with a memory of its own, and keys for both workspaces
    alice, bob, carol, dave = (person(name) for name in ("alice", "bob", "carol", "dave"))
    workspace = shared_workspace(alice, bob, carol)
    memory = _state(alice, workspace, BLUE)
    own = _state(bob, workspace, "I prefer short captions.", kind="preference", scope=MemoryScope.PERSON)
    _, key_viewer = issue_api_key(workspace, role=Role.VIEWER, name="viewer key")
    _, key_editor = issue_api_key(workspace, role=Role.EDITOR, name="editor key")
    other = workspace_create(user=dave, name="Dave's place")
    _, key_other = issue_api_key(other, role=Role.EDITOR, name="other key")
    other_memory = _state(dave, other, "Our brand's main colour is orange.")
    return SimpleNamespace(
        workspace=workspace,
        memory=memory,
        own=own,
        other=other,
        other_memory=other_memory,
        users={"outsider": dave, "viewer": carol, "editor": bob, "owner": alice},
        raw_keys={"key_viewer": key_viewer, "key_editor": key_editor, "key_other": key_other},
    )


# Built once for the module; each test runs in a savepoint rolled back after it, on a deep copy of these objects.
world_built = built_once(_build_world)


@pytest.fixture
def world(world_built, db):
    return world_built.fresh()


# The personas and the shared workspace are the world's (the conftest's own would be a second alice).
@pytest.fixture
def workspace(world):
    return world.workspace


@pytest.fixture
def client_as(world, client_for):
    def make(persona: str) -> APIClient:
        if persona in world.users:
            return client_for(world.users[persona])
        return key_client(world.raw_keys[persona])

    return make


def _effect_of(endpoint: Endpoint, world) -> bool:
    """The persisted effect of an allowed write, so "allowed" means "done", not just "2xx"."""
    if endpoint is MEMORIES_POST:
        return MemoryVersion.objects.filter(
            workspace=world.workspace, status=VersionStatus.ACTIVE, content="Our mascot is a red fox."
        ).exists()
    if endpoint is CORRECT:
        version = _active(world.memory.pk)
        return (version.number, version.content) == (2, "Our brand's main colour is green.")
    if endpoint is CONFIRM:
        return Derivation.objects.filter(version=_active(world.memory.pk), role=DerivationRole.CONFIRM).exists()
    raise AssertionError(f"no effect listed for {endpoint.name}")


@pytest.mark.parametrize(("endpoint", "persona", "expected"), CASES)
def test_it_answers_each_caller_as_its_role_says(world, client_as, client_for, endpoint, persona, expected):
    # given the database before the request
    before = snapshot()
    seq_before = Workspace.objects.get(pk=world.workspace.pk).last_event_seq

    # when the caller hits the endpoint
    response = call(client_as(persona), endpoint.method, endpoint.url(world), endpoint.body)

    # then the answer is the one the matrix gives: nothing learnt or changed when refused, the write done when allowed
    assert_role_answer(
        world=world,
        endpoint=endpoint,
        response=response,
        expected=expected,
        client_for=client_for,
        state=snapshot,
        before=before,
        seq_before=seq_before,
        effect=lambda: _effect_of(endpoint, world),
    )


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=lambda e: e.name)
def test_it_refuses_unauthenticated_requests_with_401(world, endpoint):
    before = snapshot()

    response = call(APIClient(), endpoint.method, endpoint.url(world), endpoint.body)

    assert_error(response, 401, "not_authenticated")
    assert snapshot() == before


@pytest.mark.parametrize("endpoint", [e for e in ENDPOINTS if e.on_memory], ids=lambda e: e.name)
def test_it_hides_another_workspaces_memory_behind_the_same_404(world, client_as, endpoint):
    # given a memory id that exists in dave's workspace, and one that exists nowhere
    before = snapshot()
    owner = client_as("owner")

    # when the owner of the shared workspace addresses both through the shared workspace's URL
    foreign = call(owner, endpoint.method, endpoint.url(world, memory_id=world.other_memory.pk), endpoint.body)
    missing = call(owner, endpoint.method, endpoint.url(world, memory_id=10**9), endpoint.body)

    # then both answers are the same 404, and dave's memory is untouched
    assert_error(foreign, 404, "memory_not_found")
    assert foreign.json() == missing.json()
    assert snapshot() == before


@pytest.mark.parametrize("endpoint", [e for e in ENDPOINTS if e.on_memory], ids=lambda e: e.name)
@pytest.mark.parametrize("persona", ["owner", "viewer", "key_editor"])
def test_it_hides_a_persons_own_memory_from_everyone_else(world, client_as, endpoint, persona):
    # given bob's own preference (person scope)
    before = snapshot()

    # when anyone else addresses it — the owner, a viewer, an API key
    response = call(client_as(persona), endpoint.method, endpoint.url(world, memory_id=world.own.pk), endpoint.body)

    # then it does not exist for them (a viewer's write would be 403 before anything is looked up)
    if persona == "viewer" and endpoint.method == "post":
        assert_error(response, 403, "role_required")
    else:
        assert_error(response, 404, "memory_not_found")
    assert snapshot() == before


def test_a_persons_own_memory_is_listed_for_them_alone(world, client_as):
    # when bob, alice and an API key list the memories
    lists = {p: client_as(p).get(MEMORIES_GET.url(world)).json()["results"] for p in ("editor", "owner", "key_viewer")}

    # then bob sees his own preference beside the workspace's memories; nobody else sees it
    ids = {p: {m["id"] for m in results} for p, results in lists.items()}
    assert ids["editor"] == {world.memory.pk, world.own.pk}
    assert ids["owner"] == ids["key_viewer"] == {world.memory.pk}
    own = next(m for m in lists["editor"] if m["id"] == world.own.pk)
    assert (own["scope"], own["person"]) == ("person", world.users["editor"].pk)


# --- bad input ----------------------------------------------------------------------------------------------

BAD_BODIES = [
    pytest.param(
        MEMORIES_POST, {"content": "Our mascot is a fox.", "kind": "fact", "mood": "happy"}, "mood", id="unknown-field"
    ),
    pytest.param(MEMORIES_POST, {"content": 123, "kind": "fact"}, "content", id="content-number"),
    pytest.param(MEMORIES_POST, {"content": ["a"], "kind": "fact"}, "content", id="content-list"),
    pytest.param(MEMORIES_POST, {"content": "x" * 2001, "kind": "fact"}, "content", id="content-oversized"),
    pytest.param(MEMORIES_POST, {"content": "   ", "kind": "fact"}, "content", id="content-blank"),
    pytest.param(MEMORIES_POST, {"kind": "fact"}, "content", id="content-missing"),
    pytest.param(MEMORIES_POST, {"content": "Our mascot is a fox.", "kind": "opinion"}, "kind", id="kind-unknown"),
    pytest.param(
        MEMORIES_POST, {"content": "Our mascot is a fox.", "kind": "hypothesis"}, "kind", id="kind-model-only"
    ),
    pytest.param(MEMORIES_POST, {"content": "Our mascot is a fox.", "kind": 3}, "kind", id="kind-number"),
    pytest.param(
        MEMORIES_POST, {"content": "Our mascot is a fox.", "kind": "fact", "scope": "team"}, "scope", id="scope-unknown"
    ),
    pytest.param(CORRECT, {"content": "Green.", "note": "x"}, "note", id="correct-unknown-field"),
    pytest.param(CORRECT, {"content": 7}, "content", id="correct-content-number"),
    pytest.param(CORRECT, {"content": "y" * 2001}, "content", id="correct-oversized"),
    pytest.param(CORRECT, {"content": "Green.", "kind": "hypothesis"}, "kind", id="correct-kind-model-only"),
    pytest.param(CORRECT, {}, "content", id="correct-empty"),
    pytest.param(CONFIRM, {"really": True}, "really", id="confirm-with-a-body"),
]


@pytest.mark.parametrize(("endpoint", "body", "field"), BAD_BODIES)
def test_it_refuses_bad_bodies_naming_the_field_and_changes_nothing(world, client_as, endpoint, body, field):
    before = snapshot()

    response = call(client_as("editor"), endpoint.method, endpoint.url(world), body)

    error = assert_error(response, 400, "invalid")
    assert field in error["details"]["fields"], error
    assert snapshot() == before


@pytest.mark.parametrize(
    ("endpoint", "query", "field"),
    [
        (MEMORIES_GET, "kind=opinion", "kind"),
        (MEMORIES_GET, "scope=team", "scope"),
        (MEMORIES_GET, "include=everything", "include"),
        (MEMORIES_GET, "limit=0", "limit"),
        (MEMORIES_GET, "colour=blue", "colour"),
        (PROFILE_VERSIONS_GET, "offset=-1", "offset"),
        (EPISODES_GET, "task=abc", "task"),
    ],
)
def test_it_refuses_bad_query_parameters(world, client_as, endpoint, query, field):
    response = client_as("viewer").get(f"{endpoint.url(world)}?{query}")

    error = assert_error(response, 400, "invalid")
    assert field in error["details"]["fields"], error


def test_it_refuses_malformed_json_without_a_write(world, client_as):
    before = snapshot()

    response = client_as("editor").post(MEMORIES_POST.url(world), b'{"content": "x", ', content_type="application/json")

    assert_error(response, 400, "malformed_json")
    assert snapshot() == before


def test_an_api_key_cannot_state_a_persons_own_memory(world, client_as):
    before = snapshot()

    response = client_as("key_editor").post(
        MEMORIES_POST.url(world),
        {"content": "I like serif fonts.", "kind": "preference", "scope": "person"},
        format="json",
    )

    assert_error(response, 403, "api_key_scope")
    assert snapshot() == before


def test_words_already_taken_by_another_persons_own_memory_are_a_conflict_that_changes_nothing(world, client_as):
    # given bob's own "I prefer short captions."; alice states the very same words
    before = snapshot()

    response = client_as("owner").post(
        MEMORIES_POST.url(world), {"content": "I prefer short captions.", "kind": "fact"}, format="json"
    )

    # then a conflict that says nothing of whose memory it is, and nothing recorded
    error = assert_error(response, 409, "memory_duplicate")
    assert error["details"] == {}
    assert snapshot() == before


def test_it_refuses_to_correct_into_another_memorys_words(world, client_as):
    mascot = _state(world.users["owner"], world.workspace, "Our mascot is a red fox.")
    before = snapshot()

    response = client_as("owner").post(CORRECT.url(world, memory_id=mascot.pk), {"content": BLUE}, format="json")

    error = assert_error(response, 409, "memory_duplicate")
    assert error["details"] == {"memory": world.memory.pk}
    assert snapshot() == before


# --- stating, correcting, confirming: the chain and its provenance ------------------------------------------


def test_a_statement_comes_back_with_its_provenance(world, client_as):
    alice = world.users["owner"]

    # when alice states a fact through the API
    response = client_as("owner").post(
        MEMORIES_POST.url(world), {"content": "Our mascot is a red fox.", "kind": "fact"}, format="json"
    )

    # then the answer is the memory: version 1, active, open-ended, stated by her in a statement
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["scope"], body["person"], body["subject"]) == ("workspace", None, "brand mascot")
    current = body["current"]
    assert body["versions"] == [current]
    assert (current["number"], current["kind"], current["operation"], current["status"]) == (
        1,
        "fact",
        "origin",
        "active",
    )
    assert current["content"] == "Our mascot is a red fox." and current["valid_to"] is None
    [link] = current["derivations"]
    assert link["role"] == "origin" and link["from_version"] is None
    evidence = link["evidence"]
    assert (evidence["kind"], evidence["stated_by"], evidence["revoked"], evidence["text"]) == (
        "statement",
        alice.pk,
        False,
        "Our mascot is a red fox.",
    )
    assert Evidence.objects.get(pk=evidence["id"]).source_id == evidence["source_id"]


def test_a_correction_refines_and_the_chain_shows_both_versions(world, client_as):
    client = client_as("editor")
    v1 = _active(world.memory.pk)

    # when bob corrects the brand colour
    corrected = client.post(CORRECT.url(world), {"content": "Our brand's main colour is green."}, format="json")

    # then version 2 is current, refined by his statement and superseding version 1, whose period it closed
    assert corrected.status_code == 200, corrected.content
    chain = corrected.json()["versions"]
    assert [(v["number"], v["status"], v["operation"]) for v in chain] == [
        (1, "superseded", "origin"),
        (2, "active", "refine"),
    ]
    old, new = chain
    assert old["content"] == BLUE and old["valid_to"] == new["valid_from"]
    roles = {d["role"]: d for d in new["derivations"]}
    assert set(roles) == {"refine", "supersedes"}
    assert roles["refine"]["evidence"]["stated_by"] == world.users["editor"].pk
    assert roles["supersedes"]["from_version"] == {
        "id": v1.pk,
        "memory": world.memory.pk,
        "number": 1,
        "status": "superseded",
    }

    # and the list shows the current version alone, unless asked to include the superseded ones
    listed = {m["id"]: m for m in client.get(MEMORIES_GET.url(world)).json()["results"]}
    assert [v["number"] for v in listed[world.memory.pk]["versions"]] == [2]
    assert listed[world.memory.pk]["current"]["content"] == "Our brand's main colour is green."
    full = {m["id"]: m for m in client.get(MEMORIES_GET.url(world) + "?include=superseded").json()["results"]}
    assert [v["number"] for v in full[world.memory.pk]["versions"]] == [1, 2]


def test_a_hypothesis_corrected_becomes_the_persons_fact(world, client_as):
    # given the model's guess about the workspace (evidence not from a person)
    evidence = evidence_record(
        workspace_id=world.workspace.pk, kind=EvidenceKind.WEB, source_id="page-1", text="Our typeface is Futura."
    )
    evidence_extract(evidence_id=evidence.pk)
    guess = MemoryVersion.objects.get(workspace=world.workspace, status=VersionStatus.ACTIVE, kind="hypothesis")
    listed = client_as("viewer").get(MEMORIES_GET.url(world) + "?kind=hypothesis").json()["results"]
    assert [m["id"] for m in listed] == [guess.memory_id]
    assert listed[0]["current"]["derivations"][0]["evidence"]["stated_by"] is None

    # when a person corrects it
    response = client_as("owner").post(
        CORRECT.url(world, memory_id=guess.memory_id), {"content": "Our typeface is Futura Bold."}, format="json"
    )

    # then its next version is the person's fact
    assert response.json()["current"]["kind"] == "fact"


def test_a_confirmation_links_the_person_without_a_new_version(world, client_as):
    response = client_as("editor").post(CONFIRM.url(world))

    assert response.status_code == 200, response.content
    [version] = response.json()["versions"]
    assert version["number"] == 1
    roles = [(d["role"], d["evidence"]["stated_by"]) for d in version["derivations"]]
    assert roles == [("origin", world.users["owner"].pk), ("confirm", world.users["editor"].pk)]


def test_a_task_message_shows_as_the_source_with_its_task(world, client_as):
    # given alice's message in a task, consumed, which memory extracted
    alice = world.users["owner"]
    task = Task.objects.create(workspace=world.workspace, title="Posters", brief="Make posters", created_by=alice)
    message = InboxMessage.objects.create(
        task=task, author=alice, source="person", text="Our slogan is Bake it warm.", status="consumed"
    )
    evidence = evidence_record(
        workspace_id=world.workspace.pk,
        kind=EvidenceKind.TASK_MESSAGE,
        source_id=str(message.pk),
        text=message.text,
        stated_by_id=alice.pk,
        task_id=task.pk,
    )
    evidence_extract(evidence_id=evidence.pk)

    # when the memories are listed by subject
    [memory] = client_as("viewer").get(MEMORIES_GET.url(world) + "?subject=tagline").json()["results"]

    # then the source is the task message, in its task
    source = memory["current"]["derivations"][0]["evidence"]
    assert (source["kind"], source["source_id"], source["task_id"]) == ("task_message", str(message.pk), task.pk)


def test_filters_by_kind_scope_and_subject(world, client_as):
    _state(world.users["owner"], world.workspace, "Never use Comic Sans.", kind="instruction")
    client = client_as("editor")

    def ids(query: str) -> set[int]:
        return {m["id"] for m in client.get(f"{MEMORIES_GET.url(world)}?{query}").json()["results"]}

    instruction = Memory.objects.get(workspace=world.workspace, versions__kind="instruction").pk
    assert ids("kind=instruction") == {instruction}
    assert ids("kind=fact") == {world.memory.pk}
    assert ids("scope=person") == {world.own.pk}
    assert ids("scope=workspace") == {world.memory.pk, instruction}
    assert ids("subject=main colour") == {world.memory.pk}


def test_the_list_is_paginated_and_reads_in_a_fixed_number_of_queries(world, client_as):
    client = client_as("owner")
    url = MEMORIES_GET.url(world) + "?include=superseded"

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get(url).status_code == 200
        return len(captured)

    few = queries()
    for thing in ("typeface", "mascot", "motto", "venue", "sponsor", "logo"):
        memory = _state(world.users["owner"], world.workspace, f"Our {thing} is Alpha.")
        client.post(CORRECT.url(world, memory_id=memory.pk), {"content": f"Our {thing} is Beta."}, format="json")
    assert queries() == few

    page = client.get(MEMORIES_GET.url(world) + "?limit=2&offset=1").json()
    assert page["count"] == 7 and len(page["results"]) == 2 and page["next"] and page["previous"]


# --- profile and episodes -----------------------------------------------------------------------------------


def test_the_profile_shows_its_version_entries_and_their_links(world, client_as):
    client = client_as("viewer")

    profile = client.get(PROFILE_GET.url(world)).json()

    assert profile["number"] == ProfileVersion.objects.filter(workspace=world.workspace).count() >= 1
    [entry] = profile["entries"]
    version = _active(world.memory.pk)
    assert (entry["text"], entry["version"], entry["memory"]) == (BLUE, version.pk, world.memory.pk)
    assert [(d["role"], d["from_version"]["id"]) for d in entry["derivations"]] == [("profiles", version.pk)]

    # when the brand colour is corrected, the profile moves to a new version and keeps the old one
    client_as("owner").post(CORRECT.url(world), {"content": "Our brand's main colour is green."}, format="json")
    moved = client.get(PROFILE_GET.url(world)).json()
    assert moved["number"] == profile["number"] + 1
    assert [e["text"] for e in moved["entries"]] == ["Our brand's main colour is green."]
    versions = client.get(PROFILE_VERSIONS_GET.url(world)).json()
    assert [v["number"] for v in versions["results"]][:2] == [moved["number"], profile["number"]]
    assert versions["results"][1]["entries"][0]["text"] == BLUE


def test_the_profile_of_a_workspace_without_one_is_version_0(client_for, dave):
    empty = workspace_create(user=dave, name="Empty")

    response = client_for(dave).get(_url("memory-profile", empty))

    assert response.json() == {"number": 0, "reason": "", "created_at": None, "entries": []}


def test_episodes_list_their_task_period_and_sources(world, client_as):
    alice = world.users["owner"]
    task = Task.objects.create(workspace=world.workspace, title="Posters", brief="Make posters", created_by=alice)
    version = _active(world.memory.pk)
    now = timezone.now()
    episode_write(
        workspace_id=world.workspace.pk,
        task_id=task.pk,
        title="Retro posters",
        summary="Three blue posters were made.",
        period_start=now,
        period_end=now,
        version_ids=[version.pk],
    )
    client = client_as("viewer")

    [episode] = client.get(EPISODES_GET.url(world)).json()["results"]

    assert (episode["task"], episode["title"], episode["summary"], episode["status"]) == (
        task.pk,
        "Retro posters",
        "Three blue posters were made.",
        "active",
    )
    assert [(d["role"], d["from_version"]["id"]) for d in episode["derivations"]] == [("summarises", version.pk)]
    assert client.get(EPISODES_GET.url(world) + f"?task={task.pk + 1}").json()["results"] == []


# --- forget: nothing erased comes back ----------------------------------------------------------------------


def test_after_a_forget_no_answer_carries_what_it_erased(world, client_as):
    # given alice's canary fact in memory, in the profile and in an episode, beside the brand colour
    alice = world.users["owner"]
    client = client_as("owner")
    stated = client.post(
        MEMORIES_POST.url(world), {"content": f"Our secret mascot is {CANARY}.", "kind": "fact"}, format="json"
    ).json()
    canary = stated["id"]
    task = Task.objects.create(workspace=world.workspace, title="Posters", brief="Make posters", created_by=alice)
    now = timezone.now()
    episode_write(
        workspace_id=world.workspace.pk,
        task_id=task.pk,
        title="Mascot posters",
        summary=f"The mascot {CANARY} was drawn. Three posters were made.",
        period_start=now,
        period_end=now,
        version_ids=[stated["current"]["id"]],
    )
    before = client.get(PROFILE_GET.url(world)).json()
    assert CANARY in json.dumps(before)

    # when alice forgets it through the forget endpoint and confirms on its card
    _forget(client, world.workspace, {"memory": canary})

    # then the memory is gone from the list, and no answer of any memory endpoint carries the canary
    listed = client.get(MEMORIES_GET.url(world)).json()["results"]
    assert canary not in {m["id"] for m in listed} and world.memory.pk in {m["id"] for m in listed}
    answers = {
        "list": client.get(MEMORIES_GET.url(world) + "?include=superseded"),
        "detail": client.get(MEMORY_GET.url(world, memory_id=canary)),
        "profile": client.get(PROFILE_GET.url(world)),
        "profile versions": client.get(PROFILE_VERSIONS_GET.url(world)),
        "episodes": client.get(EPISODES_GET.url(world)),
    }
    for name, answer in answers.items():
        assert answer.status_code == 200, name
        text = answer.content.decode().casefold()
        assert CANARY.casefold() not in text and "mascot" not in text, name

    # and the forgotten version shows its status and dates, never its content; its source is revoked, no text
    detail = answers["detail"].json()
    assert detail["current"] is None and detail["subject"] is None
    [version] = detail["versions"]
    assert (version["status"], version["content"]) == ("forgotten", None)
    assert version["valid_from"] and version["valid_to"] and version["erased_at"]
    [link] = version["derivations"]
    assert (link["evidence"]["revoked"], link["evidence"]["text"]) == (True, None)
    assert link["evidence"]["revoked_at"]

    # and the profile moved on, keeping the brand colour with its provenance
    after = answers["profile"].json()
    assert after["number"] > before["number"]
    assert [e["memory"] for e in after["entries"]] == [world.memory.pk]
    assert answers["episodes"].json()["results"][0]["status"] == "forgotten"


def test_forgetting_a_source_rebuilds_the_memory_from_what_remains(world, client_as):
    # given the seed's example: "blue", then "blue with an off-white feels softer", each a task message
    # (in a workspace of their own, where nothing else says it)
    alice = world.users["owner"]
    client = client_as("owner")
    workspace = workspace_create(user=alice, name="Seed example")
    task = Task.objects.create(workspace=workspace, title="Posters", brief="Make posters", created_by=alice)
    sources = []
    for text in (BLUE, "Blue with an off-white feels softer."):
        message = InboxMessage.objects.create(task=task, author=alice, source="person", text=text, status="consumed")
        evidence = evidence_record(
            workspace_id=workspace.pk,
            kind=EvidenceKind.TASK_MESSAGE,
            source_id=str(message.pk),
            text=text,
            stated_by_id=alice.pk,
            task_id=task.pk,
        )
        evidence_extract(evidence_id=evidence.pk)
        sources.append(evidence)

    # when the first message is forgotten
    _forget(client, workspace, {"evidence": {"type": "task_message", "id": int(sources[0].source_id)}})

    # then the chain shows v1 and v2 forgotten and v3 rebuilt from the second message alone
    memory_id = Derivation.objects.get(evidence=sources[0], role=DerivationRole.ORIGIN).version.memory_id
    chain = client.get(_url("memory-detail", workspace, memory_id=memory_id)).json()["versions"]
    assert [(v["number"], v["status"], v["operation"]) for v in chain] == [
        (1, "forgotten", "origin"),
        (2, "forgotten", "refine"),
        (3, "active", "reextract"),
    ]
    assert [v["content"] for v in chain[:2]] == [None, None]
    assert "off-white" in chain[2]["content"].casefold()
    assert [(d["evidence"]["id"], d["evidence"]["revoked"]) for d in chain[2]["derivations"]] == [
        (sources[1].pk, False)
    ]
    # and nothing of the first statement is shown anywhere, not even in the memory's subject
    listed = client.get(_url("memory-list", workspace) + "?include=superseded").content.decode().casefold()
    assert "main colour" not in listed and "off-white" in listed


def test_a_forgotten_memory_cannot_be_corrected_or_confirmed(world, client_as):
    client = client_as("owner")
    _forget(client, world.workspace, {"memory": world.memory.pk})
    before = snapshot()

    corrected = client.post(CORRECT.url(world), {"content": "Our brand's main colour is green."}, format="json")
    confirmed = client.post(CONFIRM.url(world))
    restated = client.post(MEMORIES_POST.url(world), {"content": BLUE, "kind": "fact"}, format="json")

    assert_error(corrected, 409, "memory_forgotten")
    assert_error(confirmed, 409, "memory_forgotten")
    assert_error(restated, 409, "forgotten")
    assert snapshot() == before


# --- routing and schema -------------------------------------------------------------------------------------


def test_the_forget_path_is_not_taken_by_a_memory_id(world):
    base = f"/api/v1/workspaces/{world.workspace.pk}/memories/"

    assert resolve(base + "forget/").func.view_class is MemoryForgetApi
    assert resolve(base + f"{world.memory.pk}/").func.view_class is MemoryDetailApi


def test_the_schema_documents_every_memory_operation(client_for, alice):
    schema = client_for(alice).get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()

    operations = {
        op["operationId"]
        for path, item in schema["paths"].items()
        if "/memor" in path
        for op in item.values()
        if isinstance(op, dict) and "operationId" in op
    }
    assert operations == {
        "memories_list",
        "memories_create",
        "memories_retrieve",
        "memories_correct",
        "memories_confirm",
        "memories_forget",
        "memory_profile_retrieve",
        "memory_profile_versions_list",
        "memory_episodes_list",
    }
