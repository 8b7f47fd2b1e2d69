"""Asset collections through REST (issue 15 item 4): named, ordered sets of a workspace's artifacts.

Editors write, viewers read, outsiders see nothing; bad input is a 400/404/409 that changes nothing.
"""

import pytest
from django.db import transaction

from tests.support.rest import assert_error, issue_api_key, key_client
from workspace.models import AssetCollection, AssetCollectionItem, Event, Role
from workspace.services.artifacts import artifact_create, artifact_delete
from workspace.services.collections import collection_create

pytestmark = pytest.mark.django_db


def url(workspace, rest: str = "") -> str:
    return f"/api/v1/workspaces/{workspace.pk}/collections/{rest}"


@pytest.fixture
def posters(workspace, alice):
    with transaction.atomic():
        return [
            artifact_create(workspace_id=workspace.pk, kind="document", title=f"Poster {n}", author_user=alice)
            for n in (1, 2, 3, 4)
        ]


@pytest.fixture
def pack(workspace, alice, posters):
    return collection_create(
        workspace_id=workspace.pk, name="Print pack", artifact_ids=[p.pk for p in posters[:3]], created_by=alice
    )


def order(collection_id: int) -> list[int]:
    return list(
        AssetCollectionItem.objects.filter(collection_id=collection_id)
        .order_by("position")
        .values_list("artifact_id", flat=True)
    )


def state(workspace) -> tuple:
    return (
        list(
            AssetCollection.objects.filter(workspace=workspace).order_by("pk").values_list("pk", "name", "description")
        ),
        list(AssetCollectionItem.objects.order_by("pk").values_list("collection_id", "artifact_id", "position")),
        Event.objects.filter(workspace=workspace).count(),
    )


# --- create, list, retrieve, rename, delete ------------------------------------------------------------------------


def test_it_creates_a_collection_with_artifacts_in_order(workspace, bob, client_for, posters):
    ids = [posters[2].pk, posters[0].pk]
    response = client_for(bob).post(
        url(workspace), {"name": "  Mood   board ", "description": "warm tones", "artifacts": ids}, format="json"
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["name"], body["description"]) == ("Mood board", "warm tones")
    assert [(i["artifact"], i["position"], i["title"], i["kind"]) for i in body["items"]] == [
        (posters[2].pk, 0, "Poster 3", "document"),
        (posters[0].pk, 1, "Poster 1", "document"),
    ]
    event = Event.objects.filter(workspace=workspace, kind="collection.created").get()
    assert event.data == {"collection": body["id"], "name": "Mood board", "artifacts": ids}


def test_an_empty_collection_is_fine(workspace, bob, client_for):
    response = client_for(bob).post(url(workspace), {"name": "Later"}, format="json")
    assert response.status_code == 201 and response.json()["items"] == []


def test_members_list_and_read_collections(workspace, carol, client_for, pack, posters):
    listed = client_for(carol).get(url(workspace))
    assert listed.status_code == 200
    assert [c["id"] for c in listed.json()["results"]] == [pack.pk]
    detail = client_for(carol).get(url(workspace, f"{pack.pk}/"))
    assert [i["artifact"] for i in detail.json()["items"]] == [p.pk for p in posters[:3]]


def test_it_renames_and_redescribes(workspace, bob, client_for, pack):
    response = client_for(bob).patch(url(workspace, f"{pack.pk}/"), {"name": "Printer pack"}, format="json")
    assert response.status_code == 200 and response.json()["name"] == "Printer pack"
    response = client_for(bob).patch(url(workspace, f"{pack.pk}/"), {"description": "for Monday"}, format="json")
    assert (response.json()["name"], response.json()["description"]) == ("Printer pack", "for Monday")
    event = Event.objects.filter(workspace=workspace, kind="collection.updated").first()
    assert (event.data["previous_name"], event.data["name"]) == ("Print pack", "Printer pack")


def test_it_deletes_a_collection_and_keeps_its_artifacts(workspace, bob, client_for, pack, posters):
    response = client_for(bob).delete(url(workspace, f"{pack.pk}/"))
    assert response.status_code == 204
    assert not AssetCollection.objects.filter(pk=pack.pk).exists() and not AssetCollectionItem.objects.exists()
    assert all(p.__class__.objects.filter(pk=p.pk, deleted_at__isnull=True).exists() for p in posters)
    assert Event.objects.filter(workspace=workspace, kind="collection.deleted").get().data["artifacts"] == [
        p.pk for p in posters[:3]
    ]
    assert_error(client_for(bob).get(url(workspace, f"{pack.pk}/")), 404, "not_found")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "name"),
        ({"name": ""}, "name"),
        ({"name": "   "}, "name"),
        ({"name": "x" * 201}, "name"),
        ({"name": 5}, "name"),
        ({"name": "ok", "artifacts": "1,2"}, "artifacts"),
        ({"name": "ok", "artifacts": ["1"]}, "artifacts"),
        ({"name": "ok", "artifacts": [True]}, "artifacts"),
        ({"name": "ok", "colour": "red"}, "colour"),
    ],
)
def test_bad_creations_are_400_and_change_nothing(workspace, bob, client_for, posters, body, field):
    before = state(workspace)
    error = assert_error(client_for(bob).post(url(workspace), body, format="json"), 400, "invalid")
    assert field in error["details"]["fields"]
    assert state(workspace) == before


def test_creating_with_a_repeated_or_foreign_artifact_is_refused(workspace, bob, client_for, posters, dave):
    from tests.support.factories import WorkspaceFactory

    before = state(workspace)
    twice = client_for(bob).post(url(workspace), {"name": "x", "artifacts": [posters[0].pk] * 2}, format="json")
    assert assert_error(twice, 400, "duplicate_artifacts")["details"]["artifacts"] == [posters[0].pk]
    elsewhere = WorkspaceFactory(name="Elsewhere", created_by=dave)
    foreign = artifact_create(workspace_id=elsewhere.pk, kind="document", title="Theirs", author_user=dave)
    response = client_for(bob).post(url(workspace), {"name": "x", "artifacts": [foreign.pk]}, format="json")
    assert assert_error(response, 404, "not_found")["details"]["artifacts"] == [foreign.pk]
    assert state(workspace) == before


def test_a_rename_needs_something_to_change(workspace, bob, client_for, pack):
    assert_error(client_for(bob).patch(url(workspace, f"{pack.pk}/"), {}, format="json"), 400, "invalid")
    assert_error(client_for(bob).patch(url(workspace, f"{pack.pk}/"), {"name": " "}, format="json"), 400, "invalid")
    assert AssetCollection.objects.get(pk=pack.pk).name == "Print pack"


# --- add, remove, reorder ------------------------------------------------------------------------------------------


def test_it_adds_at_the_end_or_at_a_position(workspace, bob, client_for, pack, posters):
    p1, p2, p3, p4 = (p.pk for p in posters)
    client = client_for(bob)
    response = client.post(url(workspace, f"{pack.pk}/items/"), {"artifact": p4, "position": 1}, format="json")
    assert response.status_code == 200, response.content
    assert [i["artifact"] for i in response.json()["items"]] == [p1, p4, p2, p3]
    assert [i["position"] for i in response.json()["items"]] == [0, 1, 2, 3]
    # removing and adding back without a position puts it last
    client.delete(url(workspace, f"{pack.pk}/items/{p4}/"))
    response = client.post(url(workspace, f"{pack.pk}/items/"), {"artifact": p4}, format="json")
    assert [i["artifact"] for i in response.json()["items"]] == [p1, p2, p3, p4]
    # a position past the end is the end
    client.delete(url(workspace, f"{pack.pk}/items/{p1}/"))
    response = client.post(url(workspace, f"{pack.pk}/items/"), {"artifact": p1, "position": 99}, format="json")
    assert order(pack.pk) == [p2, p3, p4, p1]
    event = Event.objects.filter(workspace=workspace, kind="collection.item_added").last()
    assert (event.data["artifact"], event.data["position"]) == (p1, 3)


def test_adding_twice_a_deleted_or_unknown_artifact_is_refused(workspace, bob, client_for, pack, posters, alice):
    client = client_for(bob)
    before = state(workspace)
    again = client.post(url(workspace, f"{pack.pk}/items/"), {"artifact": posters[0].pk}, format="json")
    assert assert_error(again, 409, "already_in_collection")["details"]["position"] == 0
    assert_error(client.post(url(workspace, f"{pack.pk}/items/"), {"artifact": 10**9}, format="json"), 404, "not_found")
    assert_error(client.post(url(workspace, f"{pack.pk}/items/"), {"artifact": "x"}, format="json"), 400, "invalid")
    assert_error(
        client.post(url(workspace, f"{pack.pk}/items/"), {"artifact": posters[3].pk, "position": -1}, format="json"),
        400,
        "invalid",
    )
    assert state(workspace) == before
    artifact_delete(workspace_id=workspace.pk, artifact_id=posters[3].pk, deleted_by=alice)
    gone = client.post(url(workspace, f"{pack.pk}/items/"), {"artifact": posters[3].pk}, format="json")
    assert_error(gone, 404, "not_found")


def test_it_removes_an_item_and_closes_the_gap(workspace, bob, client_for, pack, posters):
    p1, p2, p3, _ = (p.pk for p in posters)
    response = client_for(bob).delete(url(workspace, f"{pack.pk}/items/{p2}/"))
    assert response.status_code == 200
    assert [(i["artifact"], i["position"]) for i in response.json()["items"]] == [(p1, 0), (p3, 1)]
    missing = client_for(bob).delete(url(workspace, f"{pack.pk}/items/{p2}/"))
    assert_error(missing, 404, "not_in_collection")


def test_it_reorders_to_the_full_list_given(workspace, bob, client_for, pack, posters):
    p1, p2, p3, _ = (p.pk for p in posters)
    response = client_for(bob).put(url(workspace, f"{pack.pk}/order/"), {"artifacts": [p3, p1, p2]}, format="json")
    assert response.status_code == 200
    assert [i["artifact"] for i in response.json()["items"]] == [p3, p1, p2] == order(pack.pk)
    assert Event.objects.filter(workspace=workspace, kind="collection.reordered").get().data["artifacts"] == [
        p3,
        p1,
        p2,
    ]


@pytest.mark.parametrize(
    ("given", "code", "missing", "unexpected"),
    [
        ("first_two", "order_mismatch", "third", None),
        ("plus_fourth", "order_mismatch", None, "fourth"),
        ("swap_fourth", "order_mismatch", "third", "fourth"),
        ("empty", "order_mismatch", "all", None),
        ("repeated", "duplicate_artifacts", None, None),
    ],
)
def test_a_reorder_that_is_not_exactly_the_members_is_400_and_changes_nothing(
    workspace, bob, client_for, pack, posters, given, code, missing, unexpected
):
    p1, p2, p3, p4 = (p.pk for p in posters)
    lists = {
        "first_two": [p2, p1],
        "plus_fourth": [p3, p2, p1, p4],
        "swap_fourth": [p4, p2, p1],
        "empty": [],
        "repeated": [p1, p1, p2, p3],
    }
    before = state(workspace)
    response = client_for(bob).put(url(workspace, f"{pack.pk}/order/"), {"artifacts": lists[given]}, format="json")
    error = assert_error(response, 400, code)
    if code == "order_mismatch":
        names = {"third": [p3], "fourth": [p4], "all": [p1, p2, p3], None: []}
        assert (error["details"]["missing"], error["details"]["unexpected"]) == (names[missing], names[unexpected])
        assert error["details"]["current"] == [p1, p2, p3]
    assert state(workspace) == before


def test_a_reorder_body_must_be_a_list_of_ids(workspace, bob, client_for, pack):
    for body in ({}, {"artifacts": None}, {"artifacts": [1.5]}, {"artifacts": "1,2,3"}):
        assert_error(client_for(bob).put(url(workspace, f"{pack.pk}/order/"), body, format="json"), 400, "invalid")


def test_a_deleted_artifact_leaves_its_collections(workspace, alice, bob, client_for, pack, posters):
    p1, p2, p3, _ = (p.pk for p in posters)
    artifact_delete(workspace_id=workspace.pk, artifact_id=p1, deleted_by=alice)
    body = client_for(bob).get(url(workspace, f"{pack.pk}/")).json()
    assert [(i["artifact"], i["position"]) for i in body["items"]] == [(p2, 0), (p3, 1)]
    assert order(pack.pk) == [p2, p3]
    removed = Event.objects.filter(workspace=workspace, kind="collection.item_removed").get()
    assert (removed.data["artifact"], removed.data["reason"]) == (p1, "artifact_deleted")


# --- who may ---------------------------------------------------------------------------------------------------------


WRITES = [
    ("post", "", {"name": "New"}),
    ("patch", "{c}/", {"name": "Renamed"}),
    ("delete", "{c}/", None),
    ("post", "{c}/items/", {"artifact": "{a}"}),
    ("delete", "{c}/items/{first}/", None),
    ("put", "{c}/order/", {"artifacts": "{reversed}"}),
]


def _request(client, workspace, pack, posters, method, path, body):
    values = {
        "{a}": posters[3].pk,
        "{reversed}": [p.pk for p in reversed(posters[:3])],
    }
    path = path.format(c=pack.pk, first=posters[0].pk)
    if body is not None:
        body = {k: values.get(v, v) if isinstance(v, str) else v for k, v in body.items()}
        return getattr(client, method)(url(workspace, path), body, format="json")
    return getattr(client, method)(url(workspace, path))


@pytest.mark.parametrize(("method", "path", "body"), WRITES, ids=[f"{m} {p}" for m, p, _ in WRITES])
def test_viewers_cannot_write_and_outsiders_see_nothing(
    workspace, carol, dave, client_for, pack, posters, method, path, body
):
    before = state(workspace)
    response = _request(client_for(carol), workspace, pack, posters, method, path, body)
    assert assert_error(response, 403, "role_required")["details"]["required_role"] == "editor"
    assert_error(_request(client_for(dave), workspace, pack, posters, method, path, body), 404, "not_found")
    _, raw = issue_api_key(workspace, role=Role.VIEWER)
    assert_error(_request(key_client(raw), workspace, pack, posters, method, path, body), 403, "role_required")
    assert state(workspace)[:2] == before[:2]


@pytest.mark.parametrize(("method", "path", "body"), WRITES, ids=[f"{m} {p}" for m, p, _ in WRITES])
def test_an_editor_key_writes(workspace, pack, posters, method, path, body):
    _, raw = issue_api_key(workspace, role=Role.EDITOR)
    response = _request(key_client(raw), workspace, pack, posters, method, path, body)
    assert response.status_code in (200, 201, 204), response.content


def test_another_workspaces_collection_is_404(workspace, bob, dave, client_for):
    from tests.support.factories import WorkspaceFactory

    elsewhere = WorkspaceFactory(name="Elsewhere", created_by=dave)
    theirs = collection_create(workspace_id=elsewhere.pk, name="Theirs")
    for method in ("get", "delete"):
        assert_error(getattr(client_for(bob), method)(url(workspace, f"{theirs.pk}/")), 404, "not_found")
    assert AssetCollection.objects.filter(pk=theirs.pk).exists()
