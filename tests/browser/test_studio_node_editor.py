"""The studio's node editor for Flows (issue 34), in a real browser: built from an empty canvas, run, watched.

Same servers as test_studio.py. Screenshots go to var/screenshots/editor-*.png.
"""

import json

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import log_in, shoot
from tests.browser.test_studio import wait_until

pytestmark = [pytest.mark.browser, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def _graph(artifact_id: int) -> dict:
    from workspace.models import Artifact

    artifact = Artifact.objects.get(pk=artifact_id)
    return json.loads(artifact.versions.get(number=artifact.current_version).content)


def test_it_builds_a_three_node_flow_on_an_empty_canvas_runs_it_and_shows_each_output_on_its_node(studio, page):
    from workspace.models import Artifact, FlowRun

    # given a person who starts a Flow from an empty canvas
    log_in(page, studio)
    page.get_by_label("Flow from").select_option("empty")
    page.get_by_role("button", name="New Flow").click()
    expect(page.locator("#viewer[data-kind='flow']")).to_be_visible()
    artifact_id = int(page.locator("#viewer").get_attribute("data-artifact"))
    expect(page.locator("#flow-empty")).to_be_visible()
    expect(page.locator("#viewer-body .node")).to_have_count(0)

    # when they add a text input, a text writer and a finish node from the node types
    for title, node_id in (("Text input", "input"), ("Write text", "text"), ("Finish", "end")):
        page.get_by_label("Node type").select_option(label=title)
        page.get_by_role("button", name="Add node").click()
        expect(page.locator(f".node[data-node='{node_id}']")).to_be_visible()

    # then each node has the form its type's schema describes, and the first input is where runs start
    graph = _graph(artifact_id)
    assert {k: v["type"] for k, v in graph["nodes"].items()} == {
        "input": "text_input",
        "text": "generate_text",
        "end": "finish",
    }
    assert graph["start"] == "input"
    text_node = page.locator(".node[data-node='text']")
    expect(text_node.get_by_label("Prompt", exact=True)).to_have_value("{input}")
    expect(text_node.get_by_label("Instructions", exact=True)).to_be_visible()
    expect(page.locator(".node[data-node='input']").get_by_label("Default text")).to_be_visible()

    # when they try a wire out of the finish node, then into the start
    page.get_by_label("Output of", exact=True).select_option("end")
    page.get_by_label("into the input of", exact=True).select_option("text")
    page.get_by_role("button", name="Connect").click()

    # then it is refused with the reason, and nothing is stored
    expect(page.locator("#flow-problem")).to_contain_text("Wire refused: end is a Finish node: it hands nothing on.")
    expect(page.locator(".node[data-node='input'] .port-in")).to_have_count(0)  # a run's start takes no input
    assert _graph(artifact_id)["edges"] == []

    # when they drag a wire from the input's output onto the writer's input with the mouse
    page.locator(".node[data-node='text'] .port-in").scroll_into_view_if_needed()
    out = page.locator(".node[data-node='input'] .port-out").bounding_box()
    into = page.locator(".node[data-node='text'] .port-in").bounding_box()
    page.mouse.move(out["x"] + out["width"] / 2, out["y"] + out["height"] / 2)
    page.mouse.down()
    page.mouse.move(into["x"] + 5, into["y"] + into["height"] / 2, steps=8)
    page.mouse.up()
    expect(page.locator(".edges li[data-edge='input>text']")).to_be_visible()

    # and wire the writer into the finish node with the keyboard alone
    page.get_by_label("Output of", exact=True).select_option("text")
    page.get_by_label("into the input of", exact=True).select_option("end")
    page.get_by_role("button", name="Connect").focus()
    page.keyboard.press("Enter")
    expect(page.locator(".edges li[data-edge='text>end']")).to_be_visible()
    assert _graph(artifact_id)["edges"] == [["input", "text"], ["text", "end"]]
    expect(page.locator("#flow-board .wire")).to_have_count(2)

    # when they save a param the type does not take, through the Advanced JSON
    page.get_by_text("Advanced JSON of text").click()
    page.get_by_label("Params of text (JSON)").fill(json.dumps({"prompt": "{input}", "tone": "warm"}))
    page.get_by_role("button", name="Save text").click()

    # then the server's refusal names the node and the field
    expect(page.locator("#flow-problem")).to_contain_text("tone")
    # and the form's own fields save what the schema allows
    text_node.get_by_label("Instructions", exact=True).fill("Write a warm Instagram caption")
    expect(page.get_by_label("Params of text (JSON)")).to_have_value(
        json.dumps({"prompt": "{input}", "tone": "warm", "instructions": "Write a warm Instagram caption"}, indent=1)
    )
    page.get_by_label("Params of text (JSON)").fill(
        json.dumps({"prompt": "{input}", "instructions": "Write a warm Instagram caption"})
    )
    page.get_by_role("button", name="Save text").click()
    expect(page.locator("#flow-run-status")).to_contain_text("Saved text as version")
    assert _graph(artifact_id)["nodes"]["text"]["params"]["instructions"] == "Write a warm Instagram caption"

    # when they rename the Flow
    page.get_by_label("Flow title").fill("Lemon soda caption")
    page.get_by_role("button", name="Rename").click()
    expect(page.locator("#viewer-title")).to_contain_text("Lemon soda caption")
    wait_until(
        lambda: Artifact.objects.filter(pk=artifact_id, title="Lemon soda caption").first(), timeout=10, what="title"
    )

    # when they remove the last wire and undo it
    page.get_by_role("button", name="Remove the wire text → end").click()
    expect(page.locator(".edges li[data-edge='text>end']")).to_have_count(0)
    page.get_by_role("button", name="Undo: removed the wire text → end").click()
    expect(page.locator(".edges li[data-edge='text>end']")).to_be_visible()
    assert _graph(artifact_id)["edges"] == [["input", "text"], ["text", "end"]]
    shoot(page, "editor-built")

    # when they run it
    page.get_by_label("Input text").fill("Sunset soda, a retro lemon drink for summer evenings")
    page.get_by_role("button", name="Run the Flow").click()

    # then each node lights up as done and shows its output on it; the writer's text is not its prompt echoed
    end = page.locator(".node[data-node='end']")
    expect(end.locator(".node-status")).to_have_attribute("data-node-status", "done", timeout=60_000)
    for node_id in ("input", "text", "end"):
        node = page.locator(f".node[data-node='{node_id}']")
        expect(node).to_have_class("node run-done")
        expect(node.locator(".node-output")).to_contain_text(f"Output of {node_id}")
    expect(page.locator(".node[data-node='input'] .node-text")).to_have_text(
        "Sunset soda, a retro lemon drink for summer evenings"
    )
    run = wait_until(
        lambda: FlowRun.objects.filter(artifact_id=artifact_id, status="done").first(), timeout=30, what="run"
    )
    written = run.nodes.get(node_id="text").output["text"]
    expect(page.locator(".node[data-node='text'] .node-text")).to_have_text(written)
    assert not written.startswith("Write")
    expect(end.locator(".node-text")).to_contain_text(written[:20])
    shoot(page, "editor-run-done")

    # when they start another Flow from a template, it is stored as their own Flow and opens on the canvas
    page.get_by_label("Flow from").select_option(label="the template “A poster series from a brief”")
    page.get_by_role("button", name="New Flow").click()
    expect(page.locator("#viewer-title")).to_contain_text("A poster series from a brief")
    template_flow = Artifact.objects.filter(workspace=studio.workspace, kind="flow").exclude(pk=artifact_id).get()
    expect(page.locator("#viewer-body .node")).to_have_count(len(_graph(template_flow.pk)["nodes"]))
    expect(page.locator("#flow-board .wire")).to_have_count(len(_graph(template_flow.pk)["edges"]))
    shoot(page, "editor-template")
    assert page.js_errors == []


def test_two_pages_edit_different_nodes_at_once_and_both_edits_land_live(studio, page):
    from workspace.flows.authoring import flow_create

    graph = {
        "nodes": {
            "input": {"type": "text_input", "params": {"default": "a retro brand poster"}},
            "tagline": {"type": "generate_text", "params": {"prompt": "Write a short tagline for {input}"}},
            "end": {"type": "finish"},
        },
        "edges": [["input", "tagline"], ["tagline", "end"]],
        "start": "input",
    }
    flow = flow_create(workspace_id=studio.workspace.pk, title="Shared Flow", graph=graph)

    # given the same Flow open in two pages
    log_in(page, studio)
    other = page.context.new_page()
    other.goto(f"{studio.url}/")
    other.locator("#connection[data-state='live']").wait_for()
    for each in (page, other):
        each.locator(f".tile[data-artifact='{flow.pk}'] .tile-open").click()
        expect(each.locator(".node[data-node='tagline']")).to_be_visible()

    # when the first starts editing the input's default text, and the second saves the tagline's prompt meanwhile
    page.locator(".node[data-node='input']").get_by_label("Default text").fill("a sunset soda can")
    tagline = other.locator(".node[data-node='tagline']")
    tagline.get_by_label("Prompt", exact=True).fill("Write a playful tagline for {input}")
    tagline.get_by_role("button", name="Save tagline").click()
    expect(other.locator("#flow-run-status")).to_have_text("Saved tagline as version 2")

    # then the first page shows the other's edit live, keeping its own unsaved text on the node it edits
    expect(page.locator(".node[data-node='tagline']").get_by_label("Prompt", exact=True)).to_have_value(
        "Write a playful tagline for {input}"
    )
    expect(page.locator(".node[data-node='input']").get_by_label("Default text")).to_have_value("a sunset soda can")
    expect(page.locator(".node[data-node='input']")).to_have_attribute("data-dirty", "true")

    # when the first saves its node: it lands on top, as version 3, and the second sees it live
    page.get_by_role("button", name="Save input").click()
    expect(page.locator("#flow-run-status")).to_have_text("Saved input as version 3")
    expect(other.locator(".node[data-node='input']").get_by_label("Default text")).to_have_value("a sunset soda can")
    latest = _graph(flow.pk)
    assert latest["nodes"]["input"]["params"] == {"default": "a sunset soda can"}
    assert latest["nodes"]["tagline"]["params"] == {"prompt": "Write a playful tagline for {input}"}
    shoot(page, "editor-two-pages")
    assert page.js_errors == []


def _choose(page, label: str, text: str) -> None:
    """Pick an option of a select with the keyboard alone: focus it, type the option's first letters."""
    select = page.get_by_label(label, exact=True)
    select.focus()
    page.keyboard.type(text)
    expect(select.locator("option:checked")).to_contain_text(text)


def test_it_builds_an_image_flow_with_the_keyboard_alone_and_runs_it_through_its_quote_card(studio, page):
    from workspace.models import Artifact, FlowRun

    # given a person whose every paid step asks first (0 credits without asking)
    log_in(page, studio)
    page.get_by_label("Per request, up to (credits)").fill("0")
    page.get_by_role("button", name="Save limits").click()
    page.get_by_label("Flow from").focus()
    page.keyboard.type("an empty")
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")  # New Flow
    expect(page.locator("#flow-empty")).to_be_visible()
    artifact_id = int(page.locator("#viewer").get_attribute("data-artifact"))

    # when they add a text input, an image node and a finish node with the keyboard
    for option, node_id in (("Text input", "input"), ("Generate image", "image"), ("Finish", "end")):
        _choose(page, "Node type", option)
        page.keyboard.press("Tab")
        page.keyboard.press("Enter")  # Add node
        expect(page.locator(f".node[data-node='{node_id}']")).to_be_visible()
        # the focus lands on the new node (its move grip), which the arrow keys move
        assert page.evaluate("document.activeElement.getAttribute('aria-label')") == f"Move {node_id} (arrow keys)"

    # and wire them with the Connect form
    for a, b in (("input", "image"), ("image", "end")):
        _choose(page, "Output of", a)
        page.keyboard.press("Tab")
        _choose(page, "into the input of", b)
        page.keyboard.press("Tab")
        page.keyboard.press("Enter")  # Connect
        expect(page.locator(f".edges li[data-edge='{a}>{b}']")).to_be_visible()

    # a wrong wire (an image into a text input is impossible; an image out of the finish too) is refused
    _choose(page, "Output of", "end")
    page.keyboard.press("Tab")
    _choose(page, "into the input of", "image")
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    expect(page.locator("#flow-problem")).to_contain_text("Wire refused: end is a Finish node")

    # when they choose the image's format in its form and save it, all with the keyboard
    image = page.locator(".node[data-node='image']")
    image.get_by_label("Format", exact=True).focus()
    page.keyboard.type("square")
    image.get_by_role("button", name="Save image").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#flow-run-status")).to_contain_text("Saved image as version")
    assert _graph(artifact_id)["nodes"]["image"]["params"] == {"prompt": "{input}", "format": "square"}

    # when they run it: the run waits on a quote card in the chat, which they approve
    page.get_by_label("Input text").focus()
    page.keyboard.type("a lemon soda can on a sunny beach")
    page.keyboard.press("Enter")
    expect(page.locator("#flow-run-status")).to_contain_text("approve its")
    card = page.locator(".task-card[data-status='open']:has(button[data-action='approve'])")
    expect(card).to_be_visible(timeout=30_000)
    shoot(page, "editor-quote")
    card.locator("button[data-action='approve']").focus()
    page.keyboard.press("Enter")

    # then the nodes light up to done, and the image node shows its picture, linked to the artifact
    expect(page.locator(".node[data-node='end'] .node-status")).to_have_attribute(
        "data-node-status", "done", timeout=90_000
    )
    run = wait_until(
        lambda: FlowRun.objects.filter(artifact_id=artifact_id, status="done").first(), timeout=30, what="run"
    )
    made = Artifact.objects.get(pk=run.nodes.get(node_id="image").output["artifact"])
    thumb = image.locator(".node-output .node-thumb")
    expect(thumb.locator("img")).to_be_visible()
    expect(thumb).to_contain_text(f"Open {made.title}")
    expect(page.locator(".node[data-node='end'] .node-thumb")).to_have_count(1)
    shoot(page, "editor-image-run")
    thumb.focus()
    page.keyboard.press("Enter")
    expect(page.locator("#viewer")).to_have_attribute("data-artifact", str(made.pk))
    assert page.js_errors == []
