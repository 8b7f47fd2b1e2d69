"""Asset collections: named, ordered sets of a workspace's live artifacts (DESIGN §9; issue 15 item 4).

    collection_create(*, workspace_id, name, description="", artifact_ids=(), created_by=None) -> AssetCollection
    collection_update(*, workspace_id, collection_id, name=None, description=None) -> AssetCollection
    collection_delete(*, workspace_id, collection_id) -> None
        The collection goes; its artifacts stay.
    collection_item_add(*, workspace_id, collection_id, artifact_id, position=None, added_by=None)
        At the end, or at `position` (0 is first), the others moving down. 409 `already_in_collection`.
    collection_item_remove(*, workspace_id, collection_id, artifact_id)
        404 `not_in_collection` for an artifact that is not in it.
    collection_reorder(*, workspace_id, collection_id, artifact_ids)
        The full new order: 400 `order_mismatch` (with the missing and unexpected ids) unless `artifact_ids`
        is exactly the collection's artifacts, each once.
    collections_drop_artifact(*, artifact) -> list[int]
        A deleted artifact leaves every collection (called by artifact_delete, which holds the artifact lock).

Every write locks the collection row (an item add locks the artifact first: the order artifact → collection
is the one a deletion takes), keeps positions 0..n-1 without gaps, and appends a `collection.*` event.
Another workspace's collection or artifact, or a deleted artifact, is NotFound.
"""

from collections import Counter
from collections.abc import Iterable

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import F
from django.utils.translation import gettext_noop

from lomote.kernel.exceptions import Conflict, InvalidInput, NotFound
from workspace.locks import artifact_qs_for_update, asset_collection_qs_for_update
from workspace.models import Artifact, AssetCollection, AssetCollectionItem
from workspace.services.events import event_append

MAX_NAME_CHARS = 200
MAX_DESCRIPTION_CHARS = 5000
MAX_ITEMS = 500
# Positions are moved out of the way before they are rewritten, so the (collection, position) unique
# constraint never sees two rows on one position mid-statement.
PARKING_OFFSET = 1_000_000


def _invalid(field: str, message: str, code: str = "invalid") -> InvalidInput:
    return InvalidInput(message, code=code, details={"fields": {field: [message]}})


def _clean_name(name: str) -> str:
    name = " ".join((name or "").split())
    if not name or len(name) > MAX_NAME_CHARS:
        raise _invalid("name", f"A collection's name needs 1 to {MAX_NAME_CHARS} characters.")
    return name


def _clean_description(description: str) -> str:
    if len(description or "") > MAX_DESCRIPTION_CHARS:
        raise _invalid("description", f"A description has at most {MAX_DESCRIPTION_CHARS} characters.")
    return description or ""


def _locked(workspace_id: int, collection_id: int) -> AssetCollection:
    collection = asset_collection_qs_for_update().filter(pk=collection_id, workspace_id=workspace_id).first()
    if collection is None:
        raise NotFound(gettext_noop("Collection not found."))
    return collection


def _live_artifacts(workspace_id: int, artifact_ids: list[int], *, lock: bool) -> list[Artifact]:
    """The workspace's live artifacts with these ids, in that order; NotFound naming any other."""
    queryset = artifact_qs_for_update() if lock else Artifact.objects.order_by("pk")
    found = {a.pk: a for a in queryset.filter(pk__in=artifact_ids, workspace_id=workspace_id, deleted_at__isnull=True)}
    missing = [pk for pk in artifact_ids if pk not in found]
    if missing:
        raise NotFound(
            "Artifact not found." if len(missing) == 1 else "Some artifacts were not found.",
            details={"artifacts": missing},
        )
    return [found[pk] for pk in artifact_ids]


def _member_ids(collection: AssetCollection) -> list[int]:
    return list(collection.items.order_by("position").values_list("artifact_id", flat=True))


def _renumber(collection: AssetCollection, artifact_ids: list[int]) -> None:
    """Give the collection's items the positions of `artifact_ids`' order (the collection row is locked)."""
    items = collection.items.all()
    items.update(position=F("position") + PARKING_OFFSET)
    by_artifact = {item.artifact_id: item for item in items}
    for position, artifact_id in enumerate(artifact_ids):
        by_artifact[artifact_id].position = position
    AssetCollectionItem.objects.bulk_update(by_artifact.values(), ["position"])


def _touch(collection: AssetCollection) -> None:
    collection.save(update_fields=["updated_at"])


def _event(collection: AssetCollection, kind: str, **data) -> None:
    event_append(
        workspace_id=collection.workspace_id,
        kind=f"collection.{kind}",
        data={"collection": collection.pk, "name": collection.name, **data},
    )


def _check_ids(artifact_ids: Iterable[int], field: str) -> list[int]:
    ids = list(artifact_ids)
    if len(ids) > MAX_ITEMS:
        raise _invalid(field, f"A collection holds at most {MAX_ITEMS} artifacts.", code="collection_full")
    repeated = sorted(pk for pk, n in Counter(ids).items() if n > 1)
    if repeated:
        raise InvalidInput(
            "An artifact appears only once in a collection.",
            code="duplicate_artifacts",
            details={"artifacts": repeated, "fields": {field: ["Each artifact once."]}},
        )
    return ids


@transaction.atomic
def collection_create(
    *,
    workspace_id: int,
    name: str,
    description: str = "",
    artifact_ids: Iterable[int] = (),
    created_by: AbstractBaseUser | None = None,
) -> AssetCollection:
    """A new collection holding `artifact_ids` in that order (each a live artifact of the workspace)."""
    ids = _check_ids(artifact_ids, "artifacts")
    artifacts = _live_artifacts(workspace_id, ids, lock=True)
    collection = AssetCollection.objects.create(
        workspace_id=workspace_id,
        name=_clean_name(name),
        description=_clean_description(description),
        created_by=created_by,
    )
    AssetCollectionItem.objects.bulk_create(
        AssetCollectionItem(collection=collection, artifact=artifact, position=position, added_by=created_by)
        for position, artifact in enumerate(artifacts)
    )
    _event(collection, "created", artifacts=ids)
    return collection


@transaction.atomic
def collection_update(
    *, workspace_id: int, collection_id: int, name: str | None = None, description: str | None = None
) -> AssetCollection:
    """Rename the collection and/or change its description."""
    collection = _locked(workspace_id, collection_id)
    previous = collection.name
    if name is not None:
        collection.name = _clean_name(name)
    if description is not None:
        collection.description = _clean_description(description)
    collection.save(update_fields=["name", "description", "updated_at"])
    _event(collection, "updated", previous_name=previous)
    return collection


@transaction.atomic
def collection_delete(*, workspace_id: int, collection_id: int) -> None:
    collection = _locked(workspace_id, collection_id)
    _event(collection, "deleted", artifacts=_member_ids(collection))
    collection.delete()


@transaction.atomic
def collection_item_add(
    *,
    workspace_id: int,
    collection_id: int,
    artifact_id: int,
    position: int | None = None,
    added_by: AbstractBaseUser | None = None,
) -> AssetCollection:
    """Add the artifact at the end, or at `position` (clamped to the end)."""
    [artifact] = _live_artifacts(workspace_id, [artifact_id], lock=True)
    collection = _locked(workspace_id, collection_id)
    members = _member_ids(collection)
    if artifact.pk in members:
        raise Conflict(
            "This artifact is already in the collection.",
            code="already_in_collection",
            details={"artifact": artifact.pk, "position": members.index(artifact.pk)},
        )
    if len(members) >= MAX_ITEMS:
        raise Conflict(f"A collection holds at most {MAX_ITEMS} artifacts.", code="collection_full")
    at = len(members) if position is None else max(0, min(int(position), len(members)))
    AssetCollectionItem.objects.create(
        collection=collection, artifact=artifact, position=PARKING_OFFSET * 2, added_by=added_by
    )
    _renumber(collection, [*members[:at], artifact.pk, *members[at:]])
    _touch(collection)
    _event(collection, "item_added", artifact=artifact.pk, position=at)
    return collection


@transaction.atomic
def collection_item_remove(*, workspace_id: int, collection_id: int, artifact_id: int) -> AssetCollection:
    collection = _locked(workspace_id, collection_id)
    members = _member_ids(collection)
    if artifact_id not in members:
        raise NotFound(
            "This artifact is not in the collection.", code="not_in_collection", details={"artifact": artifact_id}
        )
    collection.items.filter(artifact_id=artifact_id).delete()
    _renumber(collection, [pk for pk in members if pk != artifact_id])
    _touch(collection)
    _event(collection, "item_removed", artifact=artifact_id)
    return collection


@transaction.atomic
def collection_reorder(*, workspace_id: int, collection_id: int, artifact_ids: Iterable[int]) -> AssetCollection:
    """Put the collection's artifacts in the order of `artifact_ids`, which must name each of them once."""
    ids = _check_ids(artifact_ids, "artifacts")
    collection = _locked(workspace_id, collection_id)
    members = _member_ids(collection)
    missing = [pk for pk in members if pk not in ids]
    unexpected = [pk for pk in ids if pk not in members]
    if missing or unexpected:
        raise InvalidInput(
            "Give the full new order: every artifact of the collection, once, and nothing else.",
            code="order_mismatch",
            details={"missing": missing, "unexpected": unexpected, "current": members},
        )
    if ids != members:
        _renumber(collection, ids)
        _touch(collection)
        _event(collection, "reordered", artifacts=ids)
    return collection


def collections_drop_artifact(*, artifact: Artifact) -> list[int]:
    """Take a deleted artifact out of every collection, closing the gap it leaves. The caller holds the
    artifact's lock in its transaction; the collections are locked here, after it."""
    collection_ids = list(
        AssetCollectionItem.objects.filter(artifact=artifact)
        .order_by("collection_id")
        .values_list("collection_id", flat=True)
    )
    for collection in asset_collection_qs_for_update().filter(pk__in=collection_ids):
        members = _member_ids(collection)
        collection.items.filter(artifact=artifact).delete()
        _renumber(collection, [pk for pk in members if pk != artifact.pk])
        _touch(collection)
        _event(collection, "item_removed", artifact=artifact.pk, reason="artifact_deleted")
    return collection_ids
