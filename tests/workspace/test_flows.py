"""Flows: per-node versions and conflicts (DESIGN §9; seed §9.3)."""

import pytest

from lomote.kernel.exceptions import Conflict, InvalidInput
from tests.support.race import race
from workspace.flows.authoring import flow_create, flow_edit
from workspace.flows.graph import graph_load
from workspace.models import Artifact
from workspace.selectors import artifact_version_get

GRAPH = {
    "nodes": {
        "brief": {"type": "text_input", "params": {}},
        "shot1": {"type": "generate_text", "params": {"instructions": "Describe shot 1"}},
        "shot2": {"type": "generate_text", "params": {"instructions": "Describe shot 2"}},
        "end": {"type": "finish", "params": {}},
    },
    "edges": [["brief", "shot1"], ["brief", "shot2"], ["shot1", "end"], ["shot2", "end"]],
    "start": "brief",
}


def _flow(workspace, alice) -> Artifact:
    return flow_create(workspace_id=workspace.pk, title="Storyboard flow", graph=GRAPH, author_user=alice)


def _graph(flow, number=None):
    return graph_load(artifact_version_get(workspace_id=flow.workspace_id, artifact_id=flow.pk, number=number).content)


@pytest.mark.django_db
def test_it_stamps_each_node_with_the_version_it_last_changed_in(workspace, alice, bob):
    flow = _flow(workspace, alice)
    flow_edit(
        workspace_id=workspace.pk,
        artifact_id=flow.pk,
        base_version=1,
        node_edits={"shot1": {"params": {"instructions": "Close-up"}}},
        author_user=bob,
    )
    graph = _graph(flow)
    assert {n: node["version"] for n, node in graph["nodes"].items()} == {"brief": 1, "shot1": 2, "shot2": 1, "end": 1}
    assert graph["nodes"]["shot1"]["params"] == {"instructions": "Close-up"}


@pytest.mark.django_db
def test_it_applies_edits_to_other_nodes_on_the_latest_version_and_lists_what_changed(workspace, alice, bob):
    # given the person changed shot2 (v2) while the agent was reading v1
    flow = _flow(workspace, alice)
    flow_edit(
        workspace_id=workspace.pk,
        artifact_id=flow.pk,
        base_version=1,
        node_edits={"shot2": {"params": {"instructions": "Wide shot"}}},
    )

    # when the agent edits shot1 on v1
    edit = flow_edit(
        workspace_id=workspace.pk,
        artifact_id=flow.pk,
        base_version=1,
        node_edits={"shot1": {"params": {"instructions": "Close-up"}}},
    )

    # then it lands as v3 on top of the person's change, and the answer names shot2
    assert (edit.version.number, edit.applied, edit.changed_since_base) == (3, ["shot1"], ["shot2"])
    graph = _graph(flow)
    assert graph["nodes"]["shot2"]["params"] == {"instructions": "Wide shot"}
    assert graph["nodes"]["shot1"]["params"] == {"instructions": "Close-up"}


@pytest.mark.django_db
@pytest.mark.parametrize("change", [{"params": {"instructions": "Low angle"}}, {"delete": True}])
def test_it_refuses_an_edit_to_a_node_changed_since_the_base(workspace, alice, change):
    flow = _flow(workspace, alice)
    flow_edit(workspace_id=workspace.pk, artifact_id=flow.pk, base_version=1, node_edits={"shot1": change})

    with pytest.raises(Conflict) as refused:
        flow_edit(
            workspace_id=workspace.pk,
            artifact_id=flow.pk,
            base_version=1,
            node_edits={"shot1": {"params": {"instructions": "Mine"}}, "shot2": {"params": {"instructions": "Mine"}}},
        )

    assert refused.value.code == "node_conflict"
    assert refused.value.details["nodes"] == ["shot1"]
    assert refused.value.details["current_version"] == 2
    assert Artifact.objects.get(pk=flow.pk).current_version == 2  # nothing written, not even shot2


@pytest.mark.django_db
def test_it_adds_and_deletes_nodes_and_edges(workspace, alice):
    flow = _flow(workspace, alice)
    flow_edit(
        workspace_id=workspace.pk,
        artifact_id=flow.pk,
        base_version=1,
        node_edits={"shot2": {"delete": True}},
        add_nodes={"shot3": {"type": "generate_text", "params": {}}},
        add_edges=[["brief", "shot3"], ["shot3", "end"]],
    )
    graph = _graph(flow)
    assert set(graph["nodes"]) == {"brief", "shot1", "shot3", "end"}
    assert ["shot2", "end"] not in graph["edges"] and ["shot3", "end"] in graph["edges"]


@pytest.mark.django_db
def test_it_refuses_a_cycle(workspace, alice):
    flow = _flow(workspace, alice)
    with pytest.raises(InvalidInput) as refused:
        flow_edit(workspace_id=workspace.pk, artifact_id=flow.pk, base_version=1, add_edges=[["end", "brief"]])
    assert refused.value.code == "invalid_flow"


def _race(workspace_id, artifact_id, edits: list[dict]) -> list:
    """Each node edit on version 1 at the same moment, from its own connection: what each writer got."""
    return race(
        [
            lambda edit=edit: flow_edit(
                workspace_id=workspace_id, artifact_id=artifact_id, base_version=1, node_edits=edit
            )
            for edit in edits
        ]
    )


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_it_lets_two_concurrent_writers_on_different_nodes_both_succeed(workspace, alice):
    flow = _flow(workspace, alice)
    results = _race(
        workspace.pk,
        flow.pk,
        [
            {"shot1": {"params": {"instructions": "By the agent"}}},
            {"shot2": {"params": {"instructions": "By the person"}}},
        ],
    )
    assert all(not isinstance(r, Exception) for r in results), results
    assert sorted(r.version.number for r in results) == [2, 3]
    graph = _graph(flow)
    assert graph["nodes"]["shot1"]["params"] == {"instructions": "By the agent"}
    assert graph["nodes"]["shot2"]["params"] == {"instructions": "By the person"}


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_it_lets_exactly_one_of_two_concurrent_writers_on_the_same_node_win(workspace, alice):
    flow = _flow(workspace, alice)
    results = _race(
        workspace.pk,
        flow.pk,
        [
            {"shot1": {"params": {"instructions": "By the agent"}}},
            {"shot1": {"params": {"instructions": "By the person"}}},
        ],
    )
    won = [r for r in results if not isinstance(r, Exception)]
    lost = [r for r in results if isinstance(r, Exception)]
    assert len(won) == 1 and len(lost) == 1, results
    assert isinstance(lost[0], Conflict) and lost[0].code == "node_conflict"
    assert Artifact.objects.get(pk=flow.pk).current_version == 2
    assert _graph(flow)["nodes"]["shot1"]["params"] == graph_load(won[0].version.content)["nodes"]["shot1"]["params"]
