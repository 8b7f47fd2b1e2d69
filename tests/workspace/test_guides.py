"""Creative guides (issue 19 item 3; seed §10.1): built-in guides shipped as files, and a workspace's own guides
written and edited through REST as versioned documents, each visible only in its workspace.
"""

import pytest
from django.core.management import call_command

from tests.support.rest import assert_error
from workspace.models import Artifact, ArtifactVersion, BuiltinGuide, Event, Guide
from workspace.selectors import guide_get, guide_index
from workspace.services.guides import builtin_files, guide_create, guide_file_parse, guides_sync

pytestmark = pytest.mark.django_db

BUILTIN = {"poster-layout", "storyboard", "video-shot-list", "3d-asset-brief", "brand-kit", "character-consistency"}
MOODBOARD = "# Mood boards\n\n- Pin 9 to 12 references.\n- Name the palette in hex.\n"


def url(workspace, name: str = "") -> str:
    return f"/api/v1/workspaces/{workspace.pk}/guides/" + (f"{name}/" if name else "")


def guide_file(name: str, purpose: str, body: str) -> str:
    return f"---\nname: {name}\npurpose: {purpose}\n---\n{body}"


def rows() -> tuple:
    return (
        list(Guide.objects.order_by("pk").values_list("workspace_id", "name", "purpose", "artifact_id")),
        list(ArtifactVersion.objects.order_by("pk").values_list("artifact_id", "number", "content")),
        Artifact.objects.count(),
        Event.objects.count(),
    )


@pytest.fixture
def moodboard(workspace, alice):
    return guide_create(
        workspace_id=workspace.pk,
        name="mood-board",
        purpose="Mood boards: collect references and fix a palette before making images.",
        content=MOODBOARD,
        author_user=alice,
    )


# --- built-in guides -------------------------------------------------------------------------------------------------


def test_it_ships_the_builtin_guides_with_real_text():
    # given the files in the repository
    files = {f.name: f for f in builtin_files()}

    # then the guides are there (the five the issue names, and character consistency from the seed), each with a
    # one-line purpose and substantial Markdown text
    assert BUILTIN <= set(files)
    for file in files.values():
        assert "\n" not in file.purpose and 20 < len(file.purpose) <= 200
        assert file.content.startswith("# ") and len(file.content) > 1500
    # and they were recorded by the migrate that built the test database
    assert {name for name, _ in guide_index(workspace_id=0)} >= BUILTIN


def test_it_syncs_builtin_guides_idempotently_and_versions_changed_files(tmp_path):
    # given a directory of guide files, synced once
    (tmp_path / "a.md").write_text(guide_file("lighting-notes", "Lighting for product shots.", "# Light\nKey, fill.\n"))
    (tmp_path / "b.md").write_text(guide_file("menu-design", "Menu layout for cafés.", "# Menus\nTwo columns.\n"))
    first = guides_sync(tmp_path)
    assert sorted((g.name, g.version) for g in first) == [("lighting-notes", 1), ("menu-design", 1)]

    # when it is synced again unchanged, then after one file changed
    again = guides_sync(tmp_path)
    (tmp_path / "a.md").write_text(guide_file("lighting-notes", "Lighting for product shots.", "# Light\nRim too.\n"))
    changed = guides_sync(tmp_path)

    # then nothing is added for unchanged files, and the changed one gets version 2 beside its version 1
    assert again == []
    assert [(g.name, g.version) for g in changed] == [("lighting-notes", 2)]
    versions = BuiltinGuide.objects.filter(name="lighting-notes").order_by("version")
    assert [(v.version, v.content) for v in versions] == [(1, "# Light\nKey, fill.\n"), (2, "# Light\nRim too.\n")]
    assert guide_get(workspace_id=0, name="lighting-notes").content == "# Light\nRim too.\n"
    assert guide_get(workspace_id=0, name="lighting-notes", version=1).content == "# Light\nKey, fill.\n"


def test_the_sync_command_adds_nothing_for_the_shipped_files_already_recorded(capsys):
    # given the shipped guides recorded at migrate
    before = BuiltinGuide.objects.count()

    # when the command runs
    call_command("guides_sync")

    # then it reports them and adds no version
    assert BuiltinGuide.objects.count() == before
    assert "0 new version(s)" in capsys.readouterr().out


@pytest.mark.parametrize(
    "text",
    [
        "# No front matter\n",
        guide_file("Bad Name", "A purpose.", "# Text\n"),
        guide_file("ok-name", "", "# Text\n"),
        guide_file("ok-name", "A purpose.", "   \n"),
    ],
)
def test_it_refuses_a_malformed_guide_file(text):
    with pytest.raises(ValueError):
        guide_file_parse(text, source="x.md")


# --- a workspace's own guides through REST ----------------------------------------------------------------------------


def test_it_lists_builtin_and_workspace_guides_by_name_and_purpose_without_text(
    workspace, carol, client_for, moodboard
):
    # when a viewer lists the workspace's guides
    response = client_for(carol).get(url(workspace))

    # then the built-in ones and the workspace's own are listed by name, with purpose and version, without text
    assert response.status_code == 200, response.content
    listed = {g["name"]: g for g in response.json()}
    assert BUILTIN | {"mood-board"} <= set(listed)
    assert listed["mood-board"] == {
        "name": "mood-board",
        "purpose": moodboard.purpose,
        "builtin": False,
        "version": 1,
        "artifact_id": moodboard.artifact_id,
    }
    assert listed["poster-layout"]["builtin"] is True and listed["poster-layout"]["artifact_id"] is None
    assert all("content" not in g for g in response.json())


def test_an_editor_creates_a_guide_as_a_versioned_document(workspace, bob, client_for):
    # when an editor writes a guide
    body = {"name": "mood-board", "purpose": "  Mood boards:   references and palette. ", "content": MOODBOARD}
    response = client_for(bob).post(url(workspace), body, format="json")

    # then it is version 1 of a new document of the workspace, authored by them, with its name and purpose
    assert response.status_code == 201, response.content
    out = response.json()
    assert (out["name"], out["purpose"], out["version"], out["content"]) == (
        "mood-board",
        "Mood boards: references and palette.",
        1,
        MOODBOARD,
    )
    guide = Guide.objects.get(workspace=workspace, name="mood-board")
    assert guide.artifact_id == out["artifact_id"] and guide.created_by == bob
    artifact = guide.artifact
    assert (artifact.kind, artifact.title, artifact.workspace_id, artifact.current_version) == (
        "document",
        "mood-board",
        workspace.pk,
        1,
    )
    assert artifact.versions.get(number=1).author_user == bob
    assert Event.objects.filter(workspace=workspace, kind="guide.created", data__name="mood-board").exists()


def test_editing_a_guide_makes_a_new_version_and_keeps_the_old(workspace, bob, client_for, moodboard):
    # when an editor rewrites it on version 1, then edits a fragment of version 2 and changes its purpose
    client = client_for(bob)
    rewrite = client.patch(
        url(workspace, "mood-board"), {"base_version": 1, "content": MOODBOARD + "- Date it.\n"}, format="json"
    )
    edit = client.patch(
        url(workspace, "mood-board"),
        {"base_version": 2, "edits": [{"find": "9 to 12", "replace": "8 to 10"}], "purpose": "Mood boards, briefly."},
        format="json",
    )

    # then each change is the next version of its document; the old versions stay readable
    assert rewrite.status_code == 200 and rewrite.json()["version"] == 2, rewrite.content
    assert edit.status_code == 200, edit.content
    assert (edit.json()["version"], edit.json()["purpose"]) == (3, "Mood boards, briefly.")
    versions = dict(moodboard.artifact.versions.values_list("number", "content"))
    assert versions[1] == MOODBOARD
    assert versions[3] == MOODBOARD.replace("9 to 12", "8 to 10") + "- Date it.\n"
    old = client.get(url(workspace, "mood-board") + "?version=1")
    assert (old.json()["version"], old.json()["content"]) == (1, MOODBOARD)
    assert Guide.objects.get(pk=moodboard.pk).purpose == "Mood boards, briefly."


def test_a_stale_edit_is_refused_and_changes_nothing(workspace, bob, client_for, moodboard):
    # given someone already saved version 2
    client_for(bob).patch(url(workspace, "mood-board"), {"base_version": 1, "content": "# v2\n"}, format="json")
    before = rows()

    # when another write is still based on version 1
    response = client_for(bob).patch(
        url(workspace, "mood-board"), {"base_version": 1, "content": "# mine\n"}, format="json"
    )

    # then 409 stale_version with the current version, and nothing changed
    assert_error(response, 409, "stale_version")
    assert response.json()["error"]["details"]["current_version"] == 2
    assert rows() == before


def test_a_workspace_guide_is_visible_only_in_its_workspace(workspace, alice, dave, client_for, moodboard):
    # given dave's own workspace
    other = client_for(dave).post("/api/v1/workspaces/", {"name": "Dave's"}, format="json").json()["id"]
    before = rows()

    # when dave lists and reads guides in his workspace, and tries the shared workspace's URLs
    listed = client_for(dave).get(f"/api/v1/workspaces/{other}/guides/")
    mine = client_for(dave).get(f"/api/v1/workspaces/{other}/guides/mood-board/")
    foreign_list = client_for(dave).get(url(workspace))
    foreign_edit = client_for(dave).patch(
        url(workspace, "mood-board"), {"base_version": 1, "content": "# hijacked\n"}, format="json"
    )

    # then his workspace shows the built-in guides only; the shared workspace is a 404 and is untouched
    assert {g["name"] for g in listed.json()} == {name for name, _ in guide_index(workspace_id=0)}
    assert_error(mine, 404, "not_found")
    assert_error(foreign_list, 404, "not_found")
    assert_error(foreign_edit, 404, "not_found")
    assert rows() == before


def test_a_workspace_guide_replaces_the_builtin_one_of_its_name_for_that_workspace_only(
    workspace, bob, dave, client_for
):
    # when an editor writes the workspace's own poster-layout
    body = {"name": "poster-layout", "purpose": "Our house poster rules.", "content": "# Our posters\nA2 only.\n"}
    created = client_for(bob).post(url(workspace), body, format="json")

    # then the workspace reads its own; another workspace still reads the built-in one
    assert created.status_code == 201, created.content
    ours = client_for(bob).get(url(workspace, "poster-layout")).json()
    assert (ours["builtin"], ours["content"], ours["purpose"]) == (False, "# Our posters\nA2 only.\n", body["purpose"])
    assert ("poster-layout", "Our house poster rules.") in guide_index(workspace_id=workspace.pk)
    other = client_for(dave).post("/api/v1/workspaces/", {"name": "Dave's"}, format="json").json()["id"]
    theirs = client_for(dave).get(f"/api/v1/workspaces/{other}/guides/poster-layout/").json()
    assert theirs["builtin"] is True and theirs["content"].startswith("# Poster layout")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": "Mood Board", "purpose": "p", "content": "x"}, "name"),
        ({"name": "mood--board", "purpose": "p", "content": "x"}, "name"),
        ({"name": "m" * 61, "purpose": "p", "content": "x"}, "name"),
        ({"name": "mood-board", "content": "x"}, "purpose"),
        ({"name": "mood-board", "purpose": "x" * 201, "content": "x"}, "purpose"),
        ({"name": "mood-board", "purpose": "p", "content": ""}, "content"),
        ({"name": "mood-board", "purpose": "p", "content": "x" * 100_001}, "content"),
        ({"name": "mood-board", "purpose": "p", "content": "x", "builtin": True}, "builtin"),
        ({"name": 12, "purpose": "p", "content": "x"}, "name"),
    ],
)
def test_it_refuses_bad_input_on_create_with_400_and_writes_nothing(workspace, bob, client_for, body, field):
    before = rows()
    response = client_for(bob).post(url(workspace), body, format="json")
    error = assert_error(response, 400, "invalid")
    assert field in error["details"]["fields"], error
    assert rows() == before


def test_a_multi_line_purpose_is_refused(workspace, bob, client_for):
    before = rows()
    body = {"name": "mood-board", "purpose": "line one\nline two", "content": "x"}
    response = client_for(bob).post(url(workspace), body, format="json")
    assert "purpose" in assert_error(response, 400, "invalid")["details"]["fields"]
    assert rows() == before


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"content": "# new\n"},
        {"base_version": 1, "content": "# new\n", "edits": [{"find": "Pin", "replace": "Put"}]},
        {"base_version": 0, "content": "# new\n"},
        {"base_version": 1, "content": ""},
        {"base_version": 1, "edits": []},
        {"purpose": ""},
        {"purpose": "ok", "colour": "red"},
    ],
)
def test_it_refuses_bad_input_on_edit_with_400_and_changes_nothing(workspace, bob, client_for, moodboard, body):
    before = rows()
    response = client_for(bob).patch(url(workspace, "mood-board"), body, format="json")
    assert_error(response, 400, "invalid")
    assert rows() == before


def test_it_refuses_conflicting_writes_with_409(workspace, bob, client_for, moodboard):
    before = rows()
    client = client_for(bob)
    duplicate = client.post(url(workspace), {"name": "mood-board", "purpose": "p", "content": "x"}, format="json")
    builtin = client.patch(url(workspace, "storyboard"), {"purpose": "Mine now."}, format="json")
    missing_fragment = client.patch(
        url(workspace, "mood-board"), {"base_version": 1, "edits": [{"find": "nowhere", "replace": "x"}]}, format="json"
    )
    assert_error(duplicate, 409, "guide_exists")
    assert_error(builtin, 409, "builtin_guide")
    assert_error(missing_fragment, 409, "fragment_not_found")
    assert rows() == before


def test_unknown_guides_and_versions_are_404(workspace, carol, client_for, moodboard):
    client = client_for(carol)
    assert_error(client.get(url(workspace, "no-such-guide")), 404, "not_found")
    assert_error(client.get(url(workspace, "mood-board") + "?version=7"), 404, "version_not_found")
    assert_error(client.get(url(workspace, "mood-board") + "?version=zero"), 400, "invalid")


def test_viewers_read_but_cannot_write_guides(workspace, carol, client_for, moodboard):
    before = rows()
    client = client_for(carol)
    assert client.get(url(workspace, "mood-board")).json()["content"] == MOODBOARD
    created = client.post(url(workspace), {"name": "x", "purpose": "p", "content": "x"}, format="json")
    edited = client.patch(url(workspace, "mood-board"), {"purpose": "Mine."}, format="json")
    assert_error(created, 403, "role_required")
    assert_error(edited, 403, "role_required")
    assert rows() == before


def test_a_deleted_guide_document_frees_its_name(workspace, alice, moodboard):
    # given the guide's document was deleted (a person confirmed it)
    from workspace.services.artifacts import artifact_delete

    artifact_delete(workspace_id=workspace.pk, artifact_id=moodboard.artifact_id, deleted_by=alice)
    assert "mood-board" not in {name for name, _ in guide_index(workspace_id=workspace.pk)}

    # when a guide of the same name is written again
    again = guide_create(workspace_id=workspace.pk, name="mood-board", purpose="Again.", content="# Again\n")

    # then it is a new document; the deleted one keeps its versions
    assert again.artifact_id != moodboard.artifact_id
    assert ArtifactVersion.objects.filter(artifact_id=moodboard.artifact_id).exists()
    assert guide_get(workspace_id=workspace.pk, name="mood-board").content == "# Again\n"


def test_operators_see_guides_in_the_admin_read_only(admin_client, moodboard):
    builtin = BuiltinGuide.objects.get(name="poster-layout", version=1)
    assert admin_client.get("/admin/workspace/builtinguide/").status_code == 200
    page = admin_client.get(f"/admin/workspace/builtinguide/{builtin.pk}/change/")
    assert page.status_code == 200 and "Poster layout" in page.content.decode()
    assert admin_client.get("/admin/workspace/guide/").status_code == 200
    assert admin_client.get(f"/admin/workspace/guide/{moodboard.pk}/change/").status_code == 200
    assert admin_client.get("/admin/workspace/guide/add/").status_code == 403
    assert admin_client.post(f"/admin/workspace/builtinguide/{builtin.pk}/change/", {"purpose": "x"}).status_code == 403
    assert BuiltinGuide.objects.get(pk=builtin.pk).purpose != "x"
