"""Document and Flow tools through the agents tool layer, and the seed's figure 10 (DESIGN §9; seed §9.3)."""

import pytest

from agents.exceptions import ToolError
from tests.support.tooling import call_tool, tool_context
from workspace.flows.authoring import flow_create
from workspace.models import Artifact, ArtifactVersion
from workspace.selectors import notices_pending
from workspace.services.artifacts import artifact_create
from workspace.services.documents import document_edit

pytestmark = pytest.mark.django_db

STORYBOARD = "# Storyboard\n## Shot 1\nA cup.\n## Shot 2\nSteam rises.\n## Shot 3\nThe logo.\n"


@pytest.fixture
def ctx(task):
    return tool_context(task)


def test_figure_10_a_stale_agent_write_is_refused_then_redone_on_the_new_version(task, ctx, alice, bob):
    # given the storyboard at v3
    doc = artifact_create(
        workspace_id=task.workspace_id, kind="document", title="Storyboard", content="v1", author_user=alice
    )
    for base in (1, 2):
        document_edit(
            workspace_id=doc.workspace_id,
            artifact_id=doc.pk,
            base_version=base,
            edits=[{"find": f"v{base}", "replace": STORYBOARD if base == 2 else "v2"}],
            author_user=alice,
        )

    # when the agent reads v3 through read_artifact
    read = call_tool("read_artifact", {"artifact_id": doc.pk}, ctx)
    assert read.content["version"] == 3

    # and the person saves v4, changing shot 2
    document_edit(
        workspace_id=doc.workspace_id,
        artifact_id=doc.pk,
        base_version=3,
        edits=[{"find": "Steam rises.", "replace": "Steam curls into a heart."}],
        author_user=bob,
    )

    # then a notice waits for the agent's next cycle
    [notice] = notices_pending(task_id=task.pk)
    assert (notice.from_version, notice.to_version) == (3, 4) and "Shot 2" in notice.summary

    # when the agent submits its edit of shot 3 based on v3
    with pytest.raises(ToolError) as refused:
        call_tool(
            "edit_document",
            {"artifact_id": doc.pk, "base_version": 3, "edits": [{"find": "The logo.", "replace": "The logo, warm."}]},
            ctx,
        )

    # then it is refused as a tool result telling it to re-read, and nothing was written
    assert refused.value.code == "stale_version"
    assert refused.value.details["current_version"] == 4
    assert "re-read" in refused.value.message.lower()
    assert Artifact.objects.get(pk=doc.pk).current_version == 4

    # when it re-reads v4 and resubmits on v4
    reread = call_tool("read_artifact", {"artifact_id": doc.pk}, tool_context(task, step=2))
    assert reread.content["version"] == 4 and "heart" in reread.content["text"]
    assert notices_pending(task_id=task.pk) == []  # re-reading resolved the notice
    done = call_tool(
        "edit_document",
        {"artifact_id": doc.pk, "base_version": 4, "edits": [{"find": "The logo.", "replace": "The logo, warm."}]},
        tool_context(task, step=3),
    )

    # then v5 holds both the person's and the agent's change, authored by the task
    assert done.content["version"] == 5
    v5 = ArtifactVersion.objects.get(artifact=doc, number=5)
    assert "heart" in v5.content and "The logo, warm." in v5.content
    assert v5.author == {"type": "task", "task": task.pk, "turn": ctx.turn_id}


def test_write_document_drafts_a_real_outline_from_a_prompt(task, ctx):
    result = call_tool(
        "write_document", {"prompt": "Storyboard for a coffee ad. Warm tones.", "checklist_position": 2}, ctx
    )
    assert result.content["checklist_position"] == 2 and result.artifact_created
    version = ArtifactVersion.objects.get(artifact_id=result.content["artifact_id"], number=1)
    assert version.content.startswith("# Storyboard for a coffee ad\n")
    assert "## Shot 2" in version.content
    assert version.author == {"type": "task", "task": task.pk, "turn": ctx.turn_id}


def test_write_document_rewrites_only_on_the_version_the_task_saw(task, ctx, alice, bob):
    doc = artifact_create(
        workspace_id=task.workspace_id, kind="document", title="Notes", content="one", author_user=alice
    )
    with pytest.raises(ToolError) as unread:
        call_tool("write_document", {"artifact_id": doc.pk, "content": "two"}, ctx)
    assert unread.value.code == "read_first"

    call_tool("read_artifact", {"artifact_id": doc.pk}, ctx)
    assert call_tool("write_document", {"artifact_id": doc.pk, "content": "two"}, ctx).content["version"] == 2


def test_edit_document_names_the_fragment_that_is_not_unique(task, ctx, alice):
    doc = artifact_create(
        workspace_id=task.workspace_id, kind="document", title="S", content=STORYBOARD, author_user=alice
    )
    with pytest.raises(ToolError) as refused:
        call_tool(
            "edit_document",
            {"artifact_id": doc.pk, "base_version": 1, "edits": [{"find": "## Shot", "replace": "#"}]},
            ctx,
        )
    assert refused.value.code == "fragment_not_unique" and refused.value.details["edit"] == 0


def test_edit_flow_nodes_reports_a_node_conflict_and_what_else_changed(task, ctx, alice, bob):
    flow = flow_create(
        workspace_id=task.workspace_id,
        title="Shots",
        graph={
            "nodes": {"in": {"type": "text_input"}, "a": {"type": "generate_text"}, "b": {"type": "generate_text"}},
            "edges": [["in", "a"], ["in", "b"]],
            "start": "in",
        },
        author_user=alice,
    )
    call_tool("read_artifact", {"artifact_id": flow.pk}, ctx)
    from workspace.flows.authoring import flow_edit

    flow_edit(
        workspace_id=flow.workspace_id,
        artifact_id=flow.pk,
        base_version=1,
        node_edits={"a": {"params": {"instructions": "One"}}},
        author_user=bob,
    )

    with pytest.raises(ToolError) as refused:
        call_tool(
            "edit_flow_nodes", {"artifact_id": flow.pk, "node_edits": {"a": {"params": {"instructions": "Two"}}}}, ctx
        )
    assert refused.value.code == "node_conflict" and refused.value.details["nodes"] == ["a"]

    ok = call_tool(
        "edit_flow_nodes", {"artifact_id": flow.pk, "node_edits": {"b": {"params": {"instructions": "Three"}}}}, ctx
    )
    assert ok.content["version"] == 3 and ok.content["changed_since_base"] == ["a"]


def test_the_tools_are_in_their_domains():
    from agents.tools.registry import tool_get

    assert {tool_get(n).domain for n in ("write_document", "edit_document")} == {"documents"}
    assert {tool_get(n).domain for n in ("edit_flow_nodes", "run_flow")} == {"flows"}
