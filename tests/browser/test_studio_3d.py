"""glTF artifacts in the studio's 3D viewer (issue 16 item 3), in Debian's chromium: a GLB uploaded by the person
and a model the procedural generator made through a chat request both show a 3D badge in the grid and open in an
interactive viewer whose canvas is really drawn (sampled pixels differ from the background), turns with the arrow
keys on the focused canvas, and comes back with Reset view. Screenshots: var/screenshots/3d-viewer*.png.
"""

import base64
import io
import json
import struct

import pytest
from PIL import Image
from playwright.sync_api import expect

from tests.browser.conftest import log_in, shoot

pytestmark = [pytest.mark.browser, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

BACKGROUND = (0xEE, 0xF1, 0xF5)  # viewer3d.js BACKGROUND


def generated_glb(prompt: str) -> bytes:
    """The procedural generator's own model for the prompt, packed as a binary glTF (its buffer in the BIN chunk)."""
    from workspace.providers.procedural import build_gltf, style_for

    document = build_gltf(style_for(prompt))
    buffer = document["buffers"][0]
    blob = base64.b64decode(buffer.pop("uri").split(",", 1)[1])
    assert len(blob) == buffer["byteLength"]
    payload = json.dumps(document, separators=(",", ":")).encode()
    payload += b" " * (-len(payload) % 4)
    blob += b"\x00" * (-len(blob) % 4)
    chunks = struct.pack("<II", len(payload), 0x4E4F534A) + payload + struct.pack("<II", len(blob), 0x004E4942) + blob
    return struct.pack("<4sII", b"glTF", 2, 12 + len(chunks)) + chunks


def canvas_pixels(page) -> Image.Image:
    url = page.locator("#viewer .model-canvas").evaluate("c => c.toDataURL('image/png')")
    return Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).convert("RGB")


def drawn_fraction(image: Image.Image, step: int = 8) -> float:
    """The share of sampled pixels (every `step`-th on a grid) that are clearly not the background colour."""
    samples = [image.getpixel((x, y)) for x in range(0, image.width, step) for y in range(0, image.height, step)]
    differ = [p for p in samples if max(abs(a - b) for a, b in zip(p, BACKGROUND, strict=True)) > 24]
    return len(differ) / len(samples)


def changed_fraction(a: Image.Image, b: Image.Image, step: int = 8) -> float:
    points = [(x, y) for x in range(0, a.width, step) for y in range(0, a.height, step)]
    moved = [p for p in points if max(abs(u - v) for u, v in zip(a.getpixel(p), b.getpixel(p), strict=True)) > 24]
    return len(moved) / len(points)


def open_model(page, tile) -> None:
    tile.locator(".tile-open").click()
    viewer = page.locator("#viewer .model-viewer")
    expect(viewer).to_have_attribute("data-state", "ready", timeout=30_000)
    expect(page.locator("#viewer .model-status")).to_contain_text("Showing 1 mesh")


def test_an_uploaded_glb_renders_in_an_interactive_viewer(studio, page):
    from workspace.models import Artifact

    # given a person in the studio who uploads a binary glTF (the generator's cube, packed as GLB)
    log_in(page, studio)
    page.locator("#upload-file").set_input_files(
        {
            "name": "coffee-cube.glb",
            "mimeType": "model/gltf-binary",
            "buffer": generated_glb("a cube for a coffee shop"),
        }
    )

    # then it lands in the grid with a 3D badge, as a 3D artifact
    tile = page.locator("#grid .tile[data-kind='3d']")
    expect(tile).to_have_count(1)
    expect(tile.locator(".doc-icon")).to_have_text("3D")
    artifact = Artifact.objects.get(workspace=studio.workspace)
    assert artifact.kind == "3d"
    # and its tile shows a still of the model, rendered in the browser, not a blank square
    expect(tile.locator(".model-tile")).to_have_attribute("data-thumbnail", "ready", timeout=30_000)
    still = tile.locator("img.model-thumb")
    expect(still).to_be_visible()
    expect(still).to_have_attribute("alt", "coffee-cube (3D model)")
    thumbnail = Image.open(io.BytesIO(base64.b64decode(still.get_attribute("src").split(",", 1)[1]))).convert("RGB")
    assert 0.05 < drawn_fraction(thumbnail) < 0.95
    shoot(page, "3d-tile-thumbnail")

    # when they open it
    open_model(page, tile)

    # then the viewer shows a labelled, focusable canvas with the model drawn on it, lit (not just a silhouette)
    canvas = page.locator("#viewer .model-canvas")
    expect(canvas).to_have_attribute("tabindex", "0")
    expect(canvas).to_have_attribute(
        "aria-label", "3D view of coffee-cube. Arrow keys rotate, plus and minus zoom, Home resets the view."
    )
    expect(page.locator("#viewer figcaption")).to_contain_text("coffee-cube")
    first = canvas_pixels(page)
    assert first.width > 200 and first.height > 150
    drawn = drawn_fraction(first)
    assert 0.05 < drawn < 0.95, f"{drawn:.0%} of the sampled pixels differ from the background"
    colours = {first.getpixel((x, y)) for x in range(0, first.width, 4) for y in range(0, first.height, 4)}
    assert len(colours - {BACKGROUND}) > 3, "the model is drawn in a single flat colour"
    shoot(page, "3d-viewer")

    # when they focus the canvas with the keyboard and press the right arrow three times
    canvas.focus()
    assert canvas.evaluate("c => c === document.activeElement")
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowUp")

    # then the model has turned: the picture changed, and is still drawn
    turned = canvas_pixels(page)
    assert changed_fraction(first, turned) > 0.02
    assert drawn_fraction(turned) > 0.05
    shoot(page, "3d-viewer-turned")

    # when they press Reset view
    page.get_by_role("button", name="Reset view").click()

    # then the first view is back
    assert changed_fraction(first, canvas_pixels(page)) < 0.01
    assert page.js_errors == []


def test_a_generated_3d_model_renders_in_the_viewer(studio, page):
    from workspace.models import Artifact

    # given a person who asks Main for a 3D model and approves its quote
    log_in(page, studio)
    page.get_by_label("Message to Main").fill("Make a 3D model of a coffee cup figurine")
    page.keyboard.press("Enter")
    card = page.locator(".task-card[data-status='open']")
    expect(card).to_be_visible(timeout=30_000)
    card.locator("button[data-action='approve']").click()

    # then the generated model lands in the grid as a 3D artifact (the procedural generator's glTF)
    tile = page.locator("#grid .tile[data-kind='3d']")
    expect(tile).to_have_count(1, timeout=60_000)
    # a quick request: its result card says it is done (its events have all arrived)
    expect(page.locator(".task-card[data-status='open'] .card-results button.result-open")).to_have_count(
        1, timeout=60_000
    )
    artifact = Artifact.objects.get(workspace=studio.workspace, kind="3d")
    assert artifact.versions.get(number=artifact.current_version).media_type == "model/gltf+json"

    # when they open it, then it is drawn on the viewer's canvas
    open_model(page, tile)
    drawn = drawn_fraction(canvas_pixels(page))
    assert 0.05 < drawn < 0.95, f"{drawn:.0%} of the sampled pixels differ from the background"
    shoot(page, "3d-viewer-generated")
    assert page.js_errors == []


def test_the_viewer_refuses_a_model_that_names_files_elsewhere(studio, page):
    from django.core.files.base import ContentFile

    from workspace.providers.procedural import build_gltf, style_for
    from workspace.services.artifacts import artifact_create

    # given a .gltf stored before uploads were checked, whose buffer and image live on another server
    document = build_gltf(style_for("a cube"))
    document["buffers"][0]["uri"] = "http://elsewhere.test/mesh.bin"
    document["images"] = [{"uri": "http://elsewhere.test/pixel.png"}]
    artifact_create(
        workspace_id=studio.workspace.pk,
        kind="3d",
        title="borrowed",
        file=ContentFile(json.dumps(document).encode(), name="borrowed.gltf"),
        media_type="model/gltf+json",
        author_user=studio.user,
    )
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))

    # when a member opens the studio and the model
    log_in(page, studio)
    tile = page.locator("#grid .tile[data-kind='3d']")
    expect(tile).to_have_count(1)
    expect(tile.locator(".model-tile")).to_have_attribute("data-thumbnail", "none", timeout=30_000)
    tile.locator(".tile-open").click()

    # then the viewer says why it does not show it, and the browser never asked the other server for anything
    expect(page.locator("#viewer .model-viewer")).to_have_attribute("data-state", "error", timeout=30_000)
    expect(page.locator("#viewer .model-status")).to_contain_text("outside itself (http://elsewhere.test/")
    assert [url for url in requested if "elsewhere.test" in url] == []
    assert all(url.startswith((studio.url, "data:", "blob:")) for url in requested)
    shoot(page, "3d-viewer-refused")
    assert page.js_errors == []
