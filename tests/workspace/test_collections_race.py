"""Asset collections under real contention (PostgreSQL, separate connections): the collection's lock keeps its
positions 0..n-1 without gaps, and an artifact deleted while it is being added never stays in a collection."""

import pytest

from tests.support.race import race
from workspace.models import Artifact, AssetCollectionItem
from workspace.services.artifacts import artifact_create, artifact_delete
from workspace.services.collections import collection_create, collection_item_add, collection_reorder

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def positions(collection_id: int) -> list[tuple[int, int]]:
    return list(
        AssetCollectionItem.objects.filter(collection_id=collection_id)
        .order_by("position")
        .values_list("position", "artifact_id")
    )


@pytest.fixture
def docs(workspace, alice):
    return [
        artifact_create(workspace_id=workspace.pk, kind="document", title=f"Doc {n}", author_user=alice)
        for n in range(6)
    ]


def test_parallel_adds_and_a_reorder_keep_one_contiguous_order(workspace, docs):
    # given a collection of two documents
    pack = collection_create(workspace_id=workspace.pk, name="Pack", artifact_ids=[docs[0].pk, docs[1].pk])

    # when four more are added at the front at once, while the first two are swapped
    def add(doc):
        return lambda: collection_item_add(
            workspace_id=workspace.pk, collection_id=pack.pk, artifact_id=doc.pk, position=0
        )

    swap = lambda: collection_reorder(  # noqa: E731
        workspace_id=workspace.pk, collection_id=pack.pk, artifact_ids=[docs[1].pk, docs[0].pk]
    )
    results = race([add(docs[2]), add(docs[3]), add(docs[4]), add(docs[5]), swap])

    # then every add succeeded; the swap either ran first or found the list changed (400, nothing done)
    assert all(not isinstance(r, Exception) for r in results[:4]), results
    final = positions(pack.pk)
    assert [p for p, _ in final] == list(range(6))
    assert {a for _, a in final} == {d.pk for d in docs}
    if isinstance(results[4], Exception):
        assert getattr(results[4], "code", "") == "order_mismatch"


def test_an_artifact_deleted_while_it_is_added_never_stays_in_the_collection(workspace, alice, docs):
    pack = collection_create(workspace_id=workspace.pk, name="Pack", artifact_ids=[docs[0].pk])
    target = docs[1]

    for _ in range(3):
        results = race(
            [
                lambda pk=target.pk: collection_item_add(
                    workspace_id=workspace.pk, collection_id=pack.pk, artifact_id=pk
                ),
                lambda pk=target.pk: artifact_delete(workspace_id=workspace.pk, artifact_id=pk, deleted_by=alice),
            ]
        )
        # whichever won, the deleted artifact is in no collection, and the order has no gap
        assert Artifact.objects.get(pk=target.pk).deleted_at is not None
        assert positions(pack.pk) == [(0, docs[0].pk)], results
        target = artifact_create(workspace_id=workspace.pk, kind="document", title="Again", author_user=alice)
