"""Change notices: what each task saw, and a persisted notice when someone else changes it (DESIGN §9)."""

import pytest

from workspace.flows.authoring import flow_create, flow_edit
from workspace.models import ArtifactView, ChangeNotice
from workspace.selectors import notices_pending
from workspace.services.artifacts import artifact_create
from workspace.services.documents import document_edit, document_write
from workspace.services.notices import artifact_seen, notices_mark_delivered

pytestmark = pytest.mark.django_db

STORYBOARD = "# Storyboard\n## Shot 1\nA cup.\n## Shot 2\nSteam rises.\n"
TASK_A, TASK_B = 101, 202


@pytest.fixture
def doc(workspace, alice):
    return artifact_create(
        workspace_id=workspace.pk, kind="document", title="Storyboard", content=STORYBOARD, author_user=alice
    )


def test_it_leaves_a_notice_for_a_task_that_saw_an_older_version(doc, bob):
    # given task A read v1
    artifact_seen(workspace_id=doc.workspace_id, artifact_id=doc.pk, task_id=TASK_A, version=1)

    # when the person edits shot 2
    document_edit(
        workspace_id=doc.workspace_id,
        artifact_id=doc.pk,
        base_version=1,
        edits=[{"find": "Steam rises.", "replace": "Steam curls."}],
        author_user=bob,
    )

    # then one pending notice tells A what changed and to re-read
    [notice] = notices_pending(task_id=TASK_A)
    assert (notice.from_version, notice.to_version) == (1, 2)
    assert "v1 → v2" in notice.summary and "Shot 2" in notice.summary and "re-read" in notice.summary


def test_it_leaves_no_notice_for_the_author_or_for_tasks_that_never_looked(doc):
    artifact_seen(workspace_id=doc.workspace_id, artifact_id=doc.pk, task_id=TASK_A, version=1)
    document_write(
        workspace_id=doc.workspace_id, artifact_id=doc.pk, base_version=1, content="x", author_task_id=TASK_A
    )
    assert ChangeNotice.objects.count() == 0
    assert ArtifactView.objects.get(viewer_task_id=TASK_A).seen_version == 2


def test_it_widens_one_pending_notice_instead_of_stacking_them(doc, bob):
    artifact_seen(workspace_id=doc.workspace_id, artifact_id=doc.pk, task_id=TASK_A, version=1)
    for base in (1, 2):
        document_write(
            workspace_id=doc.workspace_id,
            artifact_id=doc.pk,
            base_version=base,
            content=f"v{base + 1}",
            author_user=bob,
        )
    [notice] = notices_pending(task_id=TASK_A)
    assert (notice.from_version, notice.to_version) == (1, 3)


def test_it_delivers_a_notice_once_shown_or_once_the_task_reread(doc, bob):
    for task in (TASK_A, TASK_B):
        artifact_seen(workspace_id=doc.workspace_id, artifact_id=doc.pk, task_id=task, version=1)
    document_write(workspace_id=doc.workspace_id, artifact_id=doc.pk, base_version=1, content="v2", author_user=bob)

    [a] = notices_pending(task_id=TASK_A)
    assert notices_mark_delivered(task_id=TASK_A, ids=[a.pk]) == 1
    artifact_seen(workspace_id=doc.workspace_id, artifact_id=doc.pk, task_id=TASK_B, version=2)

    assert notices_pending(task_id=TASK_A) == [] and notices_pending(task_id=TASK_B) == []


def test_it_names_the_changed_flow_nodes(workspace, alice, bob):
    flow = flow_create(
        workspace_id=workspace.pk,
        title="Storyboard flow",
        graph={
            "nodes": {"in": {"type": "text_input"}, "shot2": {"type": "generate_text"}, "end": {"type": "finish"}},
            "edges": [["in", "shot2"], ["shot2", "end"]],
            "start": "in",
        },
        author_user=alice,
    )
    artifact_seen(workspace_id=workspace.pk, artifact_id=flow.pk, task_id=TASK_A, version=1)
    flow_edit(
        workspace_id=workspace.pk,
        artifact_id=flow.pk,
        base_version=1,
        node_edits={"shot2": {"params": {"instructions": "cooler"}}},
        author_user=bob,
    )
    [notice] = notices_pending(task_id=TASK_A)
    assert notice.changed_nodes == ["shot2"]
    assert "v1 → v2" in notice.summary and "shot2 changed" in notice.summary
