"""Guides under real contention (PostgreSQL, separate connections): one guide per name, one version per base, and
two processes syncing the shipped files record each version once."""

import pytest

from lomote.kernel.exceptions import Conflict
from tests.support.race import race
from workspace.models import Artifact, BuiltinGuide, Guide
from workspace.services.guides import guide_create, guide_update, guides_sync

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def test_two_people_creating_the_same_guide_make_one(workspace, alice, bob):
    # when two editors create a guide of the same name at the same moment
    def create(person, text):
        return lambda: guide_create(
            workspace_id=workspace.pk, name="mood-board", purpose="Mood boards.", content=text, author_user=person
        )

    results = race([create(alice, "# Alice's\n"), create(bob, "# Bob's\n")])

    # then one guide and one document exist; the other caller got 409 guide_exists and left nothing behind
    conflicts = [r for r in results if isinstance(r, Conflict)]
    assert len(conflicts) == 1 and conflicts[0].code == "guide_exists", results
    assert Guide.objects.filter(workspace=workspace, name="mood-board").count() == 1
    assert Artifact.objects.filter(workspace=workspace, title="mood-board").count() == 1


def test_two_edits_on_the_same_base_make_one_version(workspace, alice, bob):
    # given a guide at version 1
    guide = guide_create(workspace_id=workspace.pk, name="mood-board", purpose="Mood boards.", content="# v1\n")

    # when two people rewrite it on version 1 at once
    def edit(person, text):
        return lambda: guide_update(
            workspace_id=workspace.pk, name="mood-board", base_version=1, content=text, author_user=person
        )

    results = race([edit(alice, "# Alice\n"), edit(bob, "# Bob\n")])

    # then one became version 2, the other was refused as stale
    stale = [r for r in results if isinstance(r, Conflict)]
    assert len(stale) == 1 and stale[0].code == "stale_version", results
    guide.artifact.refresh_from_db()
    assert guide.artifact.current_version == 2
    assert guide.artifact.versions.count() == 2


def test_two_syncs_at_once_record_each_shipped_version_once(tmp_path):
    # given two guide files never recorded
    for name in ("lighting-notes", "menu-design"):
        (tmp_path / f"{name}.md").write_text(f"---\nname: {name}\npurpose: About {name}.\n---\n# {name}\n")

    # when two processes sync them at the same moment
    results = race([lambda: guides_sync(tmp_path), lambda: guides_sync(tmp_path)])

    # then each file is version 1, once
    assert not any(isinstance(r, Exception) for r in results), results
    rows = BuiltinGuide.objects.filter(name__in=["lighting-notes", "menu-design"])
    assert sorted(rows.values_list("name", "version")) == [("lighting-notes", 1), ("menu-design", 1)]
