"""Creative guides on demand (issue 19 item 3; seed §10.1).

The context lists guides by name and purpose only (a stable part of the prefix); `read_guide` loads one guide's
text when the work needs it; the scripted planner reads the guide whose purpose matches the kind of work and none
otherwise; and an output made after a guide was read in the same turn names that guide, with its version, among
its sources in the provenance API.
"""

import pytest
from django.urls import reverse

from agents.models import Task, TaskStatus, ToolCall, ToolCallStatus
from agents.providers.base import ModelRequest, ToolSpec
from agents.runtime.context import context_preview
from agents.runtime.history import dumps
from agents.runtime.loop import turn_run
from agents.scripted.guide_match import guides_for
from agents.scripted.planner import MODEL_NAME, ScriptedPlanner
from tests.support import runtime as rt
from workspace.models import Artifact, ArtifactKind
from workspace.selectors import guide_get, guide_index
from workspace.services.artifacts import artifact_create
from workspace.services.documents import document_write
from workspace.services.guides import guide_create, guide_update

POSTER_RULE = "Leave at least 30 % of the surface empty"  # a line of the built-in poster guide's text
BASE_TOOLS = ["read_task_state", "update_checklist", "read_artifact", "search_assets", "ask_user", "load_tools"]


def builtin_guides() -> list[dict]:
    return [{"name": name, "purpose": purpose} for name, purpose in guide_index(workspace_id=0)]


def make_task(workspace, person, brief: str, title: str = "") -> Task:
    return Task.objects.create(
        workspace=workspace, title=title or brief[:60], brief=brief, created_by=person, status=TaskStatus.IDLE
    )


def plan(brief: str, *, guides, guides_read=(), language="en", tools=(*BASE_TOOLS, "read_guide"), **extra):
    state = {
        "task": {"id": 7, "title": brief[:40], "brief": brief, "language": language, "kind": "persistent"},
        "checklist": extra.get("checklist", []),
        "new_messages": [],
        "last_results": extra.get("last_results", []),
        "step_index": extra.get("step_index", 1),
        "turn_trigger": "message",
        "tools": list(tools),
        "guides": guides,
        "guides_read": [{"name": n, "version": 1} for n in guides_read],
    }
    request = ModelRequest(
        model=MODEL_NAME,
        params={},
        messages=[],
        tools=[ToolSpec(n, n, {"type": "object"}) for n in tools],
        state=state,
    )
    return [(c.name, c.arguments) for c in ScriptedPlanner().complete(request).tool_calls]


def guide_reads(calls) -> list[str]:
    return [args["name"] for name, args in calls if name == "read_guide"]


def provenance(client, workspace, artifact_id: int, number: int) -> dict:
    url = reverse(
        "artifact-version-provenance",
        kwargs={"workspace_id": workspace.pk, "artifact_id": artifact_id, "number": number},
    )
    response = client.get(url)
    assert response.status_code == 200, response.content
    return response.json()


# --- the context lists guides; their text stays out until read -----------------------------------------------------


@pytest.mark.django_db
def test_the_context_lists_guides_by_name_and_purpose_without_their_text(workspace, alice, no_enqueue):
    # given a workspace guide beside the built-in ones, and a task
    guide_create(
        workspace_id=workspace.pk,
        name="menu-design",
        purpose="Café menus: sections, prices and legibility.",
        content="# Menus\n\nSECRET-MENU-RULE: two columns at most.\n",
    )
    task = make_task(workspace, alice, "Make 3 retro posters")

    # when the context of its next decision is built
    built = context_preview(task).built

    # then the guides layer, in the stable prefix, lists each guide as "name: purpose" and nothing of their text
    layer = next(layer for layer in built.layers if layer.name == "guides")
    listing = layer.content[0]["content"]
    for name, purpose in guide_index(workspace_id=workspace.pk):
        assert f"- {name}: {purpose}" in listing
    assert "- menu-design: Café menus: sections, prices and legibility." in listing
    assert "- poster-layout: " in listing
    assert dumps(layer.content[0]) in built.prefix  # the prefix holds the layer's canonical JSON
    everything = str(built.request.messages)
    assert "SECRET-MENU-RULE" not in everything and POSTER_RULE not in everything
    assert [g["name"] for g in built.request.state["guides"]] == [n for n, _ in guide_index(workspace_id=workspace.pk)]
    assert "read_guide" in built.visible_tools


@pytest.mark.django_db
def test_editing_a_guide_keeps_the_prefix_bytes_and_a_new_guide_changes_them(workspace, alice, no_enqueue):
    # given a task and a workspace guide
    guide = guide_create(workspace_id=workspace.pk, name="menu-design", purpose="Café menus.", content="# v1\n")
    task = make_task(workspace, alice, "Make 3 retro posters")
    first = context_preview(task).built.prefix_hash

    # when the guide's text is edited (a new version), then a guide is added
    document_write(workspace_id=workspace.pk, artifact_id=guide.artifact_id, base_version=1, content="# v2\n")
    after_edit = context_preview(task).built.prefix_hash
    guide_create(workspace_id=workspace.pk, name="lighting", purpose="Product lighting.", content="# Light\n")
    after_new = context_preview(task).built.prefix_hash

    # then the edit left the cached prefix as it was; the new guide changed it
    assert after_edit == first
    assert after_new != first


# --- the scripted planner reads a guide only when the work matches it ----------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("brief", "language", "expected"),
    [
        ("A series of 3 retro posters for the jazz festival", "en", ["poster-layout"]),
        ("Trois affiches rétro pour le festival de jazz", "fr", ["poster-layout"]),
        ("Un flyer pour la fête du quartier", "fr", ["poster-layout"]),
        ("A storyboard for our 30-second coffee ad", "en", ["storyboard"]),
        ("Make a 5-second video of the bakery at dawn", "en", ["video-shot-list"]),
        ("A figurine of our owl mascot in 3D", "en", ["3d-asset-brief"]),
        ("A brand kit for our tea shop", "en", ["brand-kit"]),
        ("A logo for my bakery", "en", ["brand-kit"]),
        ("Three posters starring our owl mascot character", "en", ["poster-layout", "character-consistency"]),
    ],
)
def test_the_planner_reads_the_guide_the_work_calls_for_with_the_plan(brief, language, expected):
    calls = plan(brief, guides=builtin_guides(), language=language)
    assert [name for name, _ in calls][:2] == ["read_task_state", "update_checklist"]
    assert guide_reads(calls) == expected


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("brief", "language"),
    [
        ("Write a thank-you email to the team", "en"),
        ("Summarise the meeting notes from Monday", "en"),
        ("Écris un mot de remerciement pour l'équipe", "fr"),
        ("An illustration of a fox in a snowy forest", "en"),
    ],
)
def test_the_planner_reads_no_guide_when_none_matches_the_work(brief, language):
    assert guide_reads(plan(brief, guides=builtin_guides(), language=language)) == []


def test_the_planner_matches_a_workspace_guide_by_its_purpose():
    guides = [
        {"name": "house-style", "purpose": "Menus and price boards for our cafés: sections, prices, legibility."},
        {"name": "poster-layout", "purpose": "Poster and flyer layout."},
    ]
    assert guide_reads(plan("A new menu for the summer terrace", guides=guides)) == ["house-style"]
    assert guides_for("A new menu for the summer terrace", guides) == ["house-style"]


@pytest.mark.django_db
def test_the_planner_reads_a_guide_once_per_turn_before_the_work_starts():
    guides = builtin_guides()
    pending = [{"position": 1, "title": "Retro poster 1 of 1", "status": "pending", "needs_confirmation": False}]
    tools = (*BASE_TOOLS, "read_guide", "generate_image")

    # when work is about to start and the turn has not read the guide: it reads it first, alone
    first = plan("Make a retro poster", guides=guides, checklist=pending, tools=tools, step_index=3)
    # when the turn already read it: the work starts
    then = plan("Make a retro poster", guides=guides, checklist=pending, tools=tools, guides_read=["poster-layout"])
    # without read_guide offered, nothing waits for it
    without = plan("Make a retro poster", guides=guides, checklist=pending, tools=(*BASE_TOOLS, "generate_image"))

    assert first == [("read_guide", {"name": "poster-layout"})]
    assert "generate_image" in [name for name, _ in then] and guide_reads(then) == []
    assert "generate_image" in [name for name, _ in without]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("brief", "language"),
    [
        ("Posters for our nights:\n- Jazz night\n- Blues brunch", "en"),
        ("Des affiches pour nos soirées :\n- Soirée jazz\n- Brunch blues", "fr"),
    ],
)
def test_listed_items_that_name_no_kind_are_matched_through_the_brief(brief, language):
    titles = [line[2:] for line in brief.splitlines()[1:]]
    pending = [
        {"position": n, "title": t, "status": "pending", "needs_confirmation": False} for n, t in enumerate(titles, 1)
    ]
    calls = plan(
        brief,
        guides=builtin_guides(),
        language=language,
        checklist=pending,
        tools=(*BASE_TOOLS, "read_guide", "generate_image"),
        step_index=3,
    )
    assert calls == [("read_guide", {"name": "poster-layout"})]


@pytest.mark.django_db
def test_a_failed_read_is_not_retried_in_a_loop():
    pending = [{"position": 1, "title": "Retro poster 1 of 1", "status": "pending", "needs_confirmation": False}]
    failed = [{"call_id": "1:2:0", "name": "read_guide", "status": "failed", "result": None, "error": {"code": "x"}}]
    calls = plan(
        "Make a retro poster",
        guides=builtin_guides(),
        checklist=pending,
        tools=(*BASE_TOOLS, "read_guide", "generate_image"),
        last_results=failed,
    )
    assert guide_reads(calls) == [] and "generate_image" in [name for name, _ in calls]


# --- through the real runtime ----------------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_a_poster_task_loads_the_poster_guide_and_an_unrelated_one_loads_none(workspace, alice, no_enqueue):
    # given a poster task and an unrelated one, run by the default scripted planner
    poster = make_task(workspace, alice, "Make 3 retro posters for the jazz festival")
    email = make_task(workspace, alice, "Write a thank-you email to the team")

    # when each runs a turn
    for task in (poster, email):
        turn_run(turn_id=rt.start_turn(task).pk, generation=1)

    # then the poster task read the built-in poster guide (its current version, with its text) before its
    # generations; the email task read no guide
    reads = list(ToolCall.objects.filter(turn__task=poster, name="read_guide"))
    assert [(c.status, c.result["name"], c.result["version"], c.result["builtin"]) for c in reads] == [
        ("done", "poster-layout", guide_get(workspace_id=workspace.pk, name="poster-layout").version, True)
    ]
    assert POSTER_RULE in reads[0].result["content"]
    first_generation = ToolCall.objects.filter(turn__task=poster, name="generate_image").order_by("step__index").first()
    assert first_generation is not None and reads[0].step.index < first_generation.step.index
    assert not ToolCall.objects.filter(turn__task=email, name="read_guide").exists()


@pytest.mark.django_db(transaction=True)
def test_the_provenance_names_the_builtin_guide_read_before_the_output(workspace, alice, client_for, no_enqueue):
    # given a storyboard task run by the scripted planner (documents cost nothing: it runs to the end)
    task = make_task(workspace, alice, "A storyboard for our 30-second coffee ad")
    turn_run(turn_id=rt.start_turn(task).pk, generation=1)
    read = ToolCall.objects.get(turn__task=task, name="read_guide", status=ToolCallStatus.DONE)
    document = Artifact.objects.get(workspace=workspace, kind=ArtifactKind.DOCUMENT, created_by_task_id=task.pk)

    # when a viewer asks how the storyboard was made
    body = provenance(client_for(alice), workspace, document.pk, 1)

    # then the guide, with the version read, is among its sources
    assert body["made_by"] == "agent"
    assert body["sources"] == [
        {
            "kind": "guide",
            "name": "storyboard",
            "version": guide_get(workspace_id=workspace.pk, name="storyboard").version,
            "builtin": True,
            "artifact_id": None,
            "purpose": guide_get(workspace_id=workspace.pk, name="storyboard").purpose,
            "call_id": read.call_id,
            "read_at": body["sources"][0]["read_at"],
        }
    ]
    assert body["sources"][0]["read_at"] is not None


@pytest.mark.django_db(transaction=True)
def test_the_provenance_names_a_workspace_guide_with_the_version_read(workspace, alice, bob, client_for, no_enqueue):
    # given the workspace's own storyboard guide, edited once (version 2)
    guide = guide_create(
        workspace_id=workspace.pk,
        name="storyboard",
        purpose="Our storyboard rules: panels, timings, continuity.",
        content="# Storyboards\n\nSix panels at most.\n",
        author_user=bob,
    )
    guide_update(
        workspace_id=workspace.pk, name="storyboard", base_version=1, content="# Storyboards\n\nEight panels.\n"
    )
    task = make_task(workspace, alice, "A storyboard for the spring launch")

    # when the task runs and makes its document
    turn_run(turn_id=rt.start_turn(task).pk, generation=1)
    document = Artifact.objects.get(workspace=workspace, kind=ArtifactKind.DOCUMENT, created_by_task_id=task.pk)
    body = provenance(client_for(bob), workspace, document.pk, 1)

    # then its source is the workspace guide at version 2 (the one read), with its document
    assert [(s["name"], s["version"], s["builtin"], s["artifact_id"]) for s in body["sources"]] == [
        ("storyboard", 2, False, guide.artifact_id)
    ]
    read = ToolCall.objects.get(turn__task=task, name="read_guide")
    assert read.result["content"] == "# Storyboards\n\nEight panels.\n"


@pytest.mark.django_db(transaction=True)
def test_a_version_made_without_a_guide_has_no_sources(workspace, alice, client_for, no_enqueue):
    # given a document a person wrote, and one a task wrote without reading any guide
    mine = artifact_create(workspace_id=workspace.pk, kind="document", title="Notes", content="hi", author_user=alice)
    task = make_task(workspace, alice, "Write a thank-you email to the team")
    turn_run(turn_id=rt.start_turn(task).pk, generation=1)

    # then neither names a guide
    assert provenance(client_for(alice), workspace, mine.pk, 1)["sources"] == []
    assert not ToolCall.objects.filter(turn__task=task, name="read_guide").exists()


@pytest.mark.django_db(transaction=True)
def test_a_guide_read_in_another_turn_is_not_a_source(workspace, alice, client_for, no_enqueue, script):
    # given a turn that read the poster guide and ended, then a turn that writes a document without reading it
    from tests.agents.conftest import says

    task = make_task(workspace, alice, "Notes")
    script([says("reading", ("read_guide", {"name": "poster-layout"})), says("done")])
    turn_run(turn_id=rt.start_turn(task).pk, generation=1)
    task.refresh_from_db()
    script(
        [
            says("loading", ("load_tools", {"domain": "documents"})),
            says("writing", ("write_document", {"title": "Notes", "content": "# Notes\n"})),
            says("done"),
        ]
    )
    turn_run(turn_id=rt.start_turn(task).pk, generation=1)
    document = Artifact.objects.get(workspace=workspace, created_by_task_id=task.pk)

    # then the document's provenance names no guide: what informed it is what its own turn read
    assert provenance(client_for(alice), workspace, document.pk, 1)["sources"] == []


@pytest.mark.django_db(transaction=True)
def test_read_guide_refuses_an_unknown_name_as_a_tool_error(workspace, alice, no_enqueue, script):
    from tests.agents.conftest import says

    task = make_task(workspace, alice, "Notes")
    script([says("reading", ("read_guide", {"name": "no-such-guide"})), says("done")])
    turn_run(turn_id=rt.start_turn(task).pk, generation=1)
    call = ToolCall.objects.get(turn__task=task, name="read_guide")
    assert call.status == ToolCallStatus.FAILED
    assert call.error["code"] == "guide_not_found" and "poster-layout" in call.error["details"]["available"]


# --- the tool on its own ---------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_read_guide_gives_the_current_text_and_an_edit_after_it_reaches_the_task_as_a_notice(workspace, alice, bob):
    from pydantic import ValidationError

    from tests.support.tooling import call_tool, tool_context
    from workspace.models import ChangeNotice

    # given a workspace guide and a task
    guide = guide_create(workspace_id=workspace.pk, name="menu-design", purpose="Café menus.", content="# Menus v1\n")
    task = make_task(workspace, alice, "A menu for the terrace")
    ctx = tool_context(task)

    # when the task reads it, and someone edits the guide afterwards
    read = call_tool("read_guide", {"name": "menu-design"}, ctx).content
    guide_update(workspace_id=workspace.pk, name="menu-design", base_version=1, content="# Menus v2\n", author_user=bob)

    # then it read version 1's text, and the edit waits for the task as a change notice
    assert (read["name"], read["version"], read["builtin"], read["content"]) == (
        "menu-design",
        1,
        False,
        "# Menus v1\n",
    )
    notice = ChangeNotice.objects.get(task_id=task.pk, artifact_id=guide.artifact_id)
    assert (notice.from_version, notice.to_version) == (1, 2)
    # and a name that is no guide's is refused by the arguments' schema
    with pytest.raises(ValidationError):
        call_tool("read_guide", {"name": "Menu Design!"}, ctx)
    with pytest.raises(ValidationError):
        call_tool("read_guide", {"name": "menu-design", "text": "all"}, ctx)


@pytest.mark.django_db
def test_read_guide_reads_another_workspaces_guide_as_missing(workspace, alice, dave):
    from agents.exceptions import ToolError
    from tests.support.tooling import call_tool, tool_context
    from workspace.services.workspaces import workspace_create

    # given dave's workspace with a guide of its own
    other = workspace_create(user=dave, name="Dave's")
    guide_create(workspace_id=other.pk, name="dave-rules", purpose="Dave's rules.", content="# Dave\n")
    task = make_task(workspace, alice, "A poster")

    # when alice's task asks for it by name
    with pytest.raises(ToolError) as refused:
        call_tool("read_guide", {"name": "dave-rules"}, tool_context(task))

    # then it does not exist for this task, and the guides it can read do not include it
    assert refused.value.code == "guide_not_found"
    assert "dave-rules" not in refused.value.details["available"]
