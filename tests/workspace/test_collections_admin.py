"""Asset collections in the operators' admin: listed with their artifacts in order, never added or reordered there."""

import pytest
from django.urls import reverse

from workspace.services.artifacts import artifact_create
from workspace.services.collections import collection_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def operator(django_user_model, client):
    root = django_user_model.objects.create_superuser("root", "root@example.com", "pw-root")
    client.force_login(root)
    return client


def test_it_lists_and_shows_a_collection_in_order(operator, workspace, alice):
    first = artifact_create(workspace_id=workspace.pk, kind="document", title="Shot list", author_user=alice)
    second = artifact_create(workspace_id=workspace.pk, kind="document", title="Mood words", author_user=alice)
    pack = collection_create(workspace_id=workspace.pk, name="Teaser pack", artifact_ids=[second.pk, first.pk])

    listing = operator.get(reverse("admin:workspace_assetcollection_changelist"))
    page = operator.get(reverse("admin:workspace_assetcollection_change", args=[pack.pk]))

    assert listing.status_code == 200 and b"Teaser pack" in listing.content
    assert page.status_code == 200
    html = page.content.decode()
    assert html.index("Mood words") < html.index("Shot list")


def test_collections_are_not_added_in_the_admin_and_deletions_stay_final(operator, workspace, alice):
    assert operator.get(reverse("admin:workspace_assetcollection_add")).status_code == 403
    doc = artifact_create(workspace_id=workspace.pk, kind="document", title="Notes", author_user=alice)
    page = operator.get(reverse("admin:workspace_artifact_change", args=[doc.pk])).content.decode()
    assert 'name="deleted_at"' not in page  # shown read-only: a deletion goes through its card
