"""A Flow's text node on the embedded default (no model profile): the offline writer, with the workspace's memories
(issue 34 item 4). The node runs through the runner and the hook agents installs, as any run does."""

import pytest
from django.db import transaction

from memory.services.forget import forget_execute, forget_request, forget_target
from memory.services.memories import memory_state
from workspace.flows import runner
from workspace.flows.authoring import flow_create
from workspace.models import FlowNodeRun, FlowRunStatus
from workspace.selectors import workspace_access

pytestmark = pytest.mark.django_db(transaction=True)

CAPTION_FLOW = {
    "nodes": {
        "brief": {"type": "text_input"},
        "caption": {"type": "generate_text", "params": {"prompt": "Write a warm Instagram caption for {input}"}},
        "end": {"type": "finish"},
    },
    "edges": [["brief", "caption"], ["caption", "end"]],
    "start": "brief",
}


@pytest.fixture
def queue(monkeypatch):
    sent: list[tuple[str, int]] = []
    monkeypatch.setattr(runner, "_enqueue", lambda function, node_id: sent.append((function, node_id)))

    def drain():
        while sent:
            function, node_id = sent.pop(0)
            getattr(runner, function)(node_id)

    return drain


def _run(workspace, flow, text, queue):
    with transaction.atomic():
        run, _ = runner.flow_run_create(workspace_id=workspace.pk, artifact_id=flow.pk, inputs={"text": text})
        runner.flow_run_begin(run.pk)
    queue()
    run.refresh_from_db()
    return run


def test_it_captions_the_input_with_the_brand_the_workspace_remembers(workspace, alice, queue):
    # given a workspace that stated its brand's name and tagline, and no model profile
    access = workspace_access(principal=alice, workspace_id=workspace.pk)
    memory_state(access=access, content="Our brand name is Crumb & Co.", kind="fact")
    memory_state(access=access, content='Our tagline is "Baked before sunrise".', kind="fact")
    flow = flow_create(workspace_id=workspace.pk, title="Captions", graph=CAPTION_FLOW, author_user=alice)

    # when the Flow runs on a brief
    run = _run(workspace, flow, "our sourdough loaf. Slow-fermented for 36 hours, crust like a drum.", queue)

    # then the caption is written from the brief, signed with the brand and its tagline, by the offline writer
    assert run.status == FlowRunStatus.DONE, run.error
    output = FlowNodeRun.objects.get(run=run, node_id="caption").output
    text = output["text"]
    assert text.splitlines()[0] == "Our sourdough loaf, by Crumb & Co."
    assert "Slow-fermented for 36 hours, crust like a drum." in text
    assert "“Baked before sunrise”" in text and "#CrumbCo" in text
    assert "Instagram caption" not in text and "Write a warm" not in text
    assert (output["writer"], output["form"], output["model"], output["provider"]) == (
        "offline",
        "caption",
        "offline-scripted",
        "scripted",
    )
    # and the run's result carries the writer's note, as the studio and a thread post show it
    assert run.outputs["notes"] == [output["note"]] and "offline writer" in output["note"]


def test_a_forgotten_brand_is_no_longer_written(workspace, alice, queue):
    access = workspace_access(principal=alice, workspace_id=workspace.pk)
    brand = memory_state(access=access, content="Our brand name is Crumb & Co.", kind="fact")
    request, _ = forget_request(access=access, target=forget_target(access=access, memory_id=brand.pk))
    forget_execute(workspace_id=workspace.pk, forget_id=request.pk)
    flow = flow_create(workspace_id=workspace.pk, title="Captions", graph=CAPTION_FLOW, author_user=alice)

    run = _run(workspace, flow, "our sourdough loaf. Slow-fermented for 36 hours.", queue)

    text = FlowNodeRun.objects.get(run=run, node_id="caption").output["text"]
    assert "Crumb" not in text and text.splitlines()[0] == "Our sourdough loaf."


def test_another_workspaces_brand_is_never_written(workspace, alice, dave, queue):
    from workspace.services.workspaces import workspace_create

    theirs = workspace_create(user=dave, name="Dave's bakery")
    memory_state(access=workspace_access(principal=dave, workspace_id=theirs.pk), content="Our brand name is Dave's.",
                 kind="fact")  # fmt: skip
    flow = flow_create(workspace_id=workspace.pk, title="Captions", graph=CAPTION_FLOW, author_user=alice)

    run = _run(workspace, flow, "our sourdough loaf. Slow-fermented for 36 hours.", queue)

    assert "Dave" not in FlowNodeRun.objects.get(run=run, node_id="caption").output["text"]
