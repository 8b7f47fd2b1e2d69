"""The studio's Flow editor and its non-approve card paths, in a real browser (chromium via Playwright).

Same servers as test_studio.py: daphne, a django-q2 cluster and the generation sweeper on the PostgreSQL test
database. Each test saves screenshots under var/screenshots/.
"""

import json

import pytest
from django.db import transaction
from playwright.sync_api import expect

from tests.browser.conftest import log_in, shoot
from tests.browser.test_studio import wait_until

pytestmark = [pytest.mark.browser, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

AGENT_TASK = 41  # the other writer: a task author, as the agent's flow tools write


def focus_with_tab(page, locator, *, limit: int = 15) -> None:
    """Press Tab until `locator` has the focus (fails if it is not reachable with the keyboard)."""
    for _ in range(limit):
        if locator.evaluate("el => el === document.activeElement"):
            return
        page.keyboard.press("Tab")
    assert locator.evaluate("el => el === document.activeElement"), "not reachable with Tab"


def test_it_edits_a_flow_resolves_a_node_conflict_and_runs_it_with_per_node_status(studio, page):
    from workspace.flows.authoring import flow_edit
    from workspace.models import ArtifactVersion, FlowRun

    # given a person who creates a Flow on the canvas
    log_in(page, studio)
    page.get_by_role("button", name="New Flow").click()
    expect(page.locator("#viewer[data-kind='flow']")).to_be_visible()
    artifact_id = int(page.locator("#viewer").get_attribute("data-artifact"))

    # then its nodes and edges are shown, each node with its params as JSON
    nodes = page.locator("#viewer-body .node")
    expect(nodes).to_have_count(3)
    expect(page.locator("#viewer-body .edges .edge-text")).to_have_text(["input → tagline", "tagline → end"])
    page.get_by_text("Advanced JSON of tagline").click()  # the form is built from the schema; JSON for integrators
    tagline = page.get_by_label("Params of tagline (JSON)")
    assert json.loads(tagline.input_value()) == {"prompt": "Write a short tagline for {input}"}
    shoot(page, "10-flow-created")

    # when they edit the tagline node's params and save on the base version
    tagline.fill(json.dumps({"prompt": "Write a playful tagline for {input}"}))
    page.get_by_role("button", name="Save tagline").click()
    expect(page.locator("#flow-run-status")).to_have_text("Saved tagline as version 2")
    v2 = ArtifactVersion.objects.get(artifact_id=artifact_id, number=2)
    assert json.loads(v2.content)["nodes"]["tagline"]["params"] == {"prompt": "Write a playful tagline for {input}"}
    assert v2.author_user_id == studio.user.pk
    expect(page.locator(".flow-meta")).to_contain_text("Version 2")

    # when they edit it again while the agent changes the same node meanwhile (on the same base, v2)
    tagline = page.get_by_label("Params of tagline (JSON)")
    tagline.fill(json.dumps({"prompt": "Write a tagline in French for {input}"}))
    flow_edit(
        workspace_id=studio.workspace.pk,
        artifact_id=artifact_id,
        base_version=2,
        node_edits={"tagline": {"params": {"prompt": "Write a retro tagline for {input}"}}},
        author_task_id=AGENT_TASK,
    )
    expect(page.locator("#notices .notice[data-version='3']")).to_contain_text(f"task #{AGENT_TASK}")

    # then saving on v2 is refused for that node, shown on the node with both params side by side
    page.get_by_role("button", name="Save tagline").click()
    node = page.locator(".node[data-node='tagline']")
    expect(node).to_have_attribute("data-conflict", "true")
    expect(node.get_by_role("alert")).to_contain_text("tagline was changed in version 3 while you edited version 2")
    expect(page.locator("#flow-problem")).to_contain_text("Not saved: node tagline changed since version 2")
    assert json.loads(page.get_by_label("Your params of tagline").input_value()) == {
        "prompt": "Write a tagline in French for {input}"
    }
    assert json.loads(page.get_by_label("Current params of tagline (v3)").input_value()) == {
        "prompt": "Write a retro tagline for {input}"
    }
    assert not ArtifactVersion.objects.filter(artifact_id=artifact_id, number=4).exists()
    shoot(page, "11-flow-node-conflict")

    # when they keep theirs on top of the latest version (with the keyboard)
    keep = page.get_by_role("button", name="Keep my tagline on top of latest")
    keep.focus()
    page.keyboard.press("Enter")

    # then it is saved as version 4 on top of the agent's v3, and the conflict is gone
    expect(page.locator("#flow-run-status")).to_have_text("Saved tagline as version 4")
    expect(page.locator(".node[data-conflict='true']")).to_have_count(0)
    v4 = ArtifactVersion.objects.get(artifact_id=artifact_id, number=4)
    assert json.loads(v4.content)["nodes"]["tagline"]["params"] == {"prompt": "Write a tagline in French for {input}"}
    assert json.loads(v4.content)["nodes"]["tagline"]["version"] == 4
    expect(page.locator("#versions li")).to_have_count(4)

    # when they run the Flow with an input text
    page.get_by_label("Input text").fill("Sunset soda")
    page.get_by_role("button", name="Run the Flow").click()

    # then per-node statuses arrive from flow.node events until the finish node is done
    end = page.locator(".node[data-node='end'] .node-status")
    expect(end).to_have_attribute("data-node-status", "done", timeout=60_000)
    for node_id in ("input", "tagline"):
        expect(page.locator(f".node[data-node='{node_id}'] .node-status")).to_have_attribute("data-node-status", "done")
    run = wait_until(
        lambda: FlowRun.objects.filter(artifact_id=artifact_id, status="done").first(), timeout=30, what="the run"
    )
    expect(page.locator("#flow-run-status")).to_have_text(f"Run #{run.pk}: done")
    assert run.flow_version == 4
    assert run.inputs == {"text": "Sunset soda"}
    assert sorted(run.nodes.values_list("node_id", "status")) == [
        ("end", "done"),
        ("input", "done"),
        ("tagline", "done"),
    ]
    shoot(page, "12-flow-run-done")
    assert page.js_errors == []


def _task(studio, title: str):
    """A task with no brief yet: no turn runs until a message arrives."""
    from agents.services.tasks import task_create

    return task_create(access=studio.access, title=title, brief="")


def _confirm_card(studio, task, question: str):
    """The card a suspending turn opens when the agent's ask_user has no options: a confirm card.

    The scripted planner only ever asks with options, so the test opens it with the runtime's own function
    (cards.card_open_for_wait) on an idle task; the task does not wait on it (only a running turn can suspend),
    which is what a card answered after its turn ended looks like.
    """
    from agents.locks import task_qs_for_update
    from agents.services.cards import card_open_for_wait

    with transaction.atomic():
        locked = task_qs_for_update().get(pk=task.pk)
        return card_open_for_wait(locked, {"type": "person", "question": question})


def _continued(task, *, after_turn: int):
    """The task took a turn of its own after the answer, and that turn ended."""
    from agents.models import Turn

    return Turn.objects.filter(task=task, number__gt=after_turn, trigger="message", finished_at__isnull=False).first()


def test_it_answers_the_agents_choice_and_confirm_cards_and_asks_for_changes(studio, page):
    from agents.models import Card, InboxMessage
    from agents.services.inbox import message_post

    # given a person in the studio, and a task whose brief gives the agent nothing to plan from
    log_in(page, studio)
    shop = _task(studio, "Something for the shop")

    # when a question reaches it, the scripted planner asks the person with ask_user (a real turn)
    message_post(access=studio.access, task_id=shop.pk, text="Can you help me with the shop?")
    choice = wait_until(
        lambda: Card.objects.filter(task=shop, kind="choice", status="open").first(), timeout=60, what="a choice card"
    )
    assert choice.payload["source"] == "ask_user"
    element = page.locator(f".task-card[data-card='{choice.pk}']")
    expect(element).to_be_visible()
    options = element.locator("button[data-action='choose']")
    expect(options).to_have_text(["An image", "A video", "A document"])
    expect(element.get_by_label("Adjust")).to_be_visible()
    expect(page.locator(f".task[data-task='{shop.pk}'][data-status='waiting']")).to_be_visible()
    shoot(page, "13-choice-card")

    # when they choose "A video" with the keyboard: Tab to the first option, arrow to the second, Enter
    page.locator(f".task-card[data-card='{choice.pk}'] .card-title").click()
    focus_with_tab(page, options.first)
    page.keyboard.press("ArrowRight")
    assert options.nth(1).evaluate("b => b === document.activeElement"), "ArrowRight did not move to A video"
    turns_before = shop.turns.count()
    page.keyboard.press("Enter")

    # then the card is resolved with that choice, the answer is in the task's inbox, and the task went on
    expect(element).to_have_attribute("data-status", "resolved")
    expect(element.locator(".card-resolution")).to_have_text(f"Chose “A video” by {studio.user.username}")
    choice.refresh_from_db()
    assert choice.status == "resolved"
    assert (choice.resolution["action"], choice.resolution["option"], choice.resolution["label"]) == (
        "choose",
        "2",
        "A video",
    )
    assert choice.resolved_by_id == studio.user.pk
    answer = InboxMessage.objects.get(task=shop, text__startswith=f"[card {choice.pk}:")
    assert "The person chose: A video." in answer.text
    assert answer.author_id == studio.user.pk
    wait_until(lambda: _continued(shop, after_turn=turns_before), timeout=60, what="the task's next turn")
    shoot(page, "14-choice-answered")

    # given a confirm card (the agent asked a yes/no question: ask_user without options)
    palette = _task(studio, "Shop poster palette")
    confirm = _confirm_card(studio, palette, "Use the orange palette from the last series")
    element = page.locator(f".task-card[data-card='{confirm.pk}']")
    expect(element).to_be_visible()
    expect(element.locator("button[data-action='confirm']")).to_have_text("Confirm")
    expect(element.locator("button[data-action='choose']")).to_have_count(0)
    shoot(page, "15-confirm-card")

    # when they confirm it (Tab to Confirm, Enter)
    page.locator(f".task-card[data-card='{confirm.pk}'] .card-title").click()
    focus_with_tab(page, element.locator("button[data-action='confirm']"))
    page.keyboard.press("Enter")

    # then it is resolved as confirmed, the task reads "go on" in its inbox and takes a turn by itself
    expect(element).to_have_attribute("data-status", "resolved")
    expect(element.locator(".card-resolution")).to_have_text(f"Confirmed by {studio.user.username}")
    confirm.refresh_from_db()
    assert (confirm.status, confirm.resolution["action"]) == ("resolved", "confirm")
    assert InboxMessage.objects.filter(
        task=palette, text=f"[card {confirm.pk}: {confirm.title}] The person confirmed; go on."
    ).exists()
    wait_until(lambda: _continued(palette, after_turn=0), timeout=60, what="the confirmed task's turn")

    # given another confirm card, which the person wants changed rather than confirmed
    tagline = _task(studio, "Shop tagline")
    adjust = _confirm_card(studio, tagline, "Go with the tagline 'Fizz since 1962'")
    element = page.locator(f".task-card[data-card='{adjust.pk}']")
    expect(element).to_be_visible()

    # when they press Adjust with nothing typed, they are told what is missing and nothing is sent
    element.locator("button[data-action='adjust']").click()
    expect(element.get_by_role("alert")).to_have_text("Say what should change, then press Adjust.")
    assert Card.objects.get(pk=adjust.pk).status == "open"

    # when they type the change in the Adjust field and press Enter
    element.get_by_label("Adjust").fill("Make it shorter and mention the sunset")
    element.get_by_label("Adjust").press("Enter")

    # then the card is resolved as an adjustment with their text, delivered to the inbox, and the task goes on
    expect(element).to_have_attribute("data-status", "resolved")
    expect(element.locator(".card-resolution")).to_have_text(
        f"Asked for changes by {studio.user.username}: Make it shorter and mention the sunset"
    )
    adjust.refresh_from_db()
    assert (adjust.status, adjust.resolution["action"], adjust.resolution["text"]) == (
        "resolved",
        "adjust",
        "Make it shorter and mention the sunset",
    )
    assert InboxMessage.objects.filter(
        task=tagline,
        text=f"[card {adjust.pk}: {adjust.title}] The person asked for changes: Make it shorter and mention the sunset",
    ).exists()
    wait_until(lambda: _continued(tagline, after_turn=0), timeout=60, what="the adjusted task's turn")
    shoot(page, "16-adjusted")
    assert page.js_errors == []


def test_it_shows_the_nodes_a_changed_shot_made_stale_and_reruns_only_them(studio, page):
    import io

    from django.core.files.base import ContentFile
    from PIL import Image

    from workspace.flows.authoring import flow_create
    from workspace.models import Artifact, FlowNodeRun, FlowRun
    from workspace.services.uploads import artifact_version_upload

    # given a two-stage Flow: a shot, then a poster made from it (80 credits: within the no-card threshold)
    graph = {
        "nodes": {
            "brief": {"type": "text_input"},
            "shot": {"type": "generate_image", "params": {"prompt": "A lighthouse at night: {input}"}},
            "poster": {"type": "generate_image", "params": {"prompt": "A poster from the shot: {input}"}},
            "end": {"type": "finish"},
        },
        "edges": [["brief", "shot"], ["shot", "poster"], ["poster", "end"]],
        "start": "brief",
    }
    flow = flow_create(workspace_id=studio.workspace.pk, title="Lighthouse poster", graph=graph)
    log_in(page, studio)
    page.locator(f".tile[data-artifact='{flow.pk}'] .tile-open").click()
    expect(page.locator("#viewer[data-kind='flow']")).to_be_visible()

    # when the person runs it to the end
    page.get_by_label("Input text").fill("stormy")
    page.get_by_role("button", name="Run the Flow").click()
    expect(page.locator(".node[data-node='end'] .node-status")).to_have_attribute(
        "data-node-status", "done", timeout=60_000
    )
    run = wait_until(lambda: FlowRun.objects.filter(artifact_id=flow.pk, status="done").first(), timeout=30, what="run")
    rerun = page.locator("#flow-rerun")
    expect(rerun).to_be_hidden()

    # and then draws their own version of the shot
    shot = Artifact.objects.get(pk=FlowNodeRun.objects.get(run=run, node_id="shot").output["artifact"])
    buffer = io.BytesIO()
    Image.new("RGB", (64, 48), (30, 60, 120)).save(buffer, "PNG")
    with transaction.atomic():
        artifact_version_upload(
            workspace_id=studio.workspace.pk,
            artifact_id=shot.pk,
            base_version=1,
            file=ContentFile(buffer.getvalue(), "shot.png"),
            author_user=studio.user,
        )

    # then, live, only what was made from the shot is marked stale, and the re-run is offered for those nodes
    expect(page.locator(".node[data-node='poster'] .node-status")).to_have_attribute("data-node-status", "stale")
    expect(page.locator(".node[data-node='end'] .node-status")).to_have_attribute("data-node-status", "stale")
    expect(page.locator(".node[data-node='shot'] .node-status")).to_have_attribute("data-node-status", "done")
    expect(rerun).to_have_text("Re-run the stale nodes (poster, end)")
    shoot(page, "13-flow-stale")

    # when they re-run them
    rerun.click()

    # then only the poster is made again, as version 2 of the same artifact, and the run is done again
    expect(page.locator(".node[data-node='end'] .node-status")).to_have_attribute(
        "data-node-status", "done", timeout=60_000
    )
    expect(rerun).to_be_hidden()
    poster = FlowNodeRun.objects.get(run=run, node_id="poster")
    wait_until(lambda: FlowRun.objects.filter(pk=run.pk, status="done").first(), timeout=30, what="the re-run")
    poster.refresh_from_db()
    assert (poster.attempt, poster.output["version"]) == (2, 2)
    assert Artifact.objects.get(pk=poster.output["artifact"]).versions.count() == 2
    assert Artifact.objects.get(pk=shot.pk).versions.count() == 2  # the person's; the shot node did not run again
    assert FlowNodeRun.objects.get(run=run, node_id="shot").attempt == 1
    shoot(page, "14-flow-rerun-done")
    assert page.js_errors == []
