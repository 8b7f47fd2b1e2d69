"""The canvas as a person expects (issue 33 item 5) and the compose box's target (item 3), in real chromium at 1440
and 800 px: a thumbnail opens its artifact, every version downloads as its stored bytes under a sensible name,
tiles keep a stable order and their whole title, a narrow window is one column of tabs with the new result's tab
marked, the empty chat says what to ask for, and the target chip can be removed so the message goes to Main.
Screenshots go to var/screenshots/canvas-*.png.
"""

import io

import pytest
from django.core.files.base import ContentFile
from playwright.sync_api import expect

from tests.browser.conftest import log_in, shoot

pytestmark = [pytest.mark.browser, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

LONG_TITLE = "Retro poster 1 — warm evening colours over the harbour, with the festival's full programme and dates"


def _png(colour: tuple[int, int, int], size=(60, 90)) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", size, colour).save(buffer, format="PNG")
    return buffer.getvalue()


def _image(studio, title: str, colour, *, task=None):
    from workspace.services.artifacts import artifact_create

    author = {"author_task_id": task.pk} if task else {"author_user": studio.user}
    return artifact_create(
        workspace_id=studio.workspace.pk,
        kind="image",
        title=title,
        file=ContentFile(_png(colour), name="made.png"),
        media_type="image/png",
        **author,
    )


def _task(studio, title: str, brief: str):
    """A task that made the seeded pictures, idle: a task started by task_create runs turns that go on making
    pictures of their own on the canvas while the test reads its tiles (with a warm cluster, within the test)."""
    from agents.models import Task, TaskStatus

    return Task.objects.create(
        workspace=studio.workspace, title=title, brief=brief, created_by=studio.user, status=TaskStatus.IDLE
    )


def _seed(studio):
    """A series of three posters a task made, then an upload, then a logo another task made (in that order)."""
    posters = _task(studio, "Retro posters", "three retro posters")
    series = [
        _image(studio, title, colour, task=posters)
        for title, colour in (
            (LONG_TITLE, (200, 80, 40)),
            ("Retro poster 2", (40, 120, 200)),
            ("Retro poster 3", (60, 160, 90)),
        )
    ]
    upload = _image(studio, "Moodboard", (230, 210, 120))
    logos = _task(studio, "Bakery logo", "a logo for Crumb")
    logo = _image(studio, "Crumb logo", (120, 60, 30), task=logos)
    return posters, series, upload, logo


def _tile_order(page) -> list[int]:
    return [int(i) for i in page.locator("#grid .tile").evaluate_all("tiles => tiles.map(t => t.dataset.artifact)")]


def _stored(artifact_id: int, number: int) -> bytes:
    from workspace.models import ArtifactVersion

    version = ArtifactVersion.objects.get(artifact_id=artifact_id, number=number)
    with version.file.open("rb") as file:
        return file.read()


def test_a_thumbnail_opens_its_artifact_and_every_version_downloads_as_stored(studio, page):
    from workspace.services.artifacts import artifact_version_add

    # given a series a task made, an upload, and a logo, in a wide window
    page.set_viewport_size({"width": 1440, "height": 1000})
    posters, series, upload, logo = _seed(studio)
    log_in(page, studio)

    # then the tiles read newest work first, grouped by task, the series in its own order
    expected = [logo.pk, upload.pk, *(a.pk for a in series)]
    expect(page.locator("#grid .tile")).to_have_count(5)
    assert _tile_order(page) == expected
    # and no tab bar: every panel shows side by side
    expect(page.locator(".studio-tabs")).to_be_hidden()
    expect(page.locator("#canvas")).to_be_visible()
    expect(page.locator("#chat-panel")).to_be_visible()

    # when the task adds a version to the first poster (live, over the event log)
    second = _png((250, 250, 250))
    artifact_version_add(
        workspace_id=studio.workspace.pk,
        artifact_id=series[0].pk,
        base_version=1,
        file=ContentFile(second, name="made.png"),
        media_type="image/png",
        author_task_id=posters.pk,
    )

    # then its tile shows v2 and nothing reshuffles
    first = page.locator(f".tile[data-artifact='{series[0].pk}']")
    expect(first).to_have_attribute("data-version", "2")
    assert _tile_order(page) == expected

    # and its long title is whole: wrapped inside the caption, and its tooltip
    caption = first.locator(".tile-open")
    expect(caption).to_have_attribute("title", f"{LONG_TITLE} · v2")
    expect(caption).to_contain_text(LONG_TITLE)
    clipped = page.locator(".tile-open").evaluate_all(
        "els => els.filter(e => e.scrollWidth > e.clientWidth + 1 || e.scrollHeight > e.clientHeight + 1)"
        ".map(e => e.textContent)"
    )
    assert clipped == []
    shoot(page, "canvas-01-tiles-1440")

    # when the person clicks the poster's picture (not its caption)
    first.locator(".tile-thumb img").click()

    # then the viewer shows it, and the compose box says the next message goes to the task that made it
    viewer = page.locator(f"#viewer[data-artifact='{series[0].pk}']")
    expect(viewer).to_be_visible()
    chip = page.locator("#compose-target")
    expect(chip).to_be_visible()
    expect(chip).to_contain_text(LONG_TITLE)
    expect(chip).to_contain_text(f"task #{posters.pk}")

    # when they download the open version from the viewer's header
    header = page.locator("#viewer-download")
    expect(header).to_have_text("Download v2")
    with page.expect_download() as download:
        header.click()
    # then the browser saves the stored file of v2, named after the artifact and the version
    assert download.value.suggested_filename.endswith("-v2.png")
    assert download.value.suggested_filename.startswith("retro-poster-1-warm-evening-colours")
    assert open(download.value.path(), "rb").read() == _stored(series[0].pk, 2) == second

    # and every version in the history has its own download, with that version's bytes
    links = page.locator("#versions a.download")
    expect(links).to_have_count(2)
    with page.expect_download() as download:
        page.locator("#versions li[data-version='1'] a.download").click()
    assert download.value.suggested_filename.endswith("-v1.png")
    assert open(download.value.path(), "rb").read() == _stored(series[0].pk, 1)
    shoot(page, "canvas-02-viewer-downloads-1440")

    # when they click the logo's picture, the viewer follows, and the chip with it
    page.locator(f".tile[data-artifact='{logo.pk}'] .tile-thumb").click()
    expect(page.locator(f"#viewer[data-artifact='{logo.pk}']")).to_be_visible()
    expect(chip).to_contain_text("Crumb logo")
    assert _tile_order(page) == expected
    assert page.js_errors == []


def test_the_target_chip_shows_the_open_artifact_and_removing_it_sends_to_main(studio, page):
    from agents.models import MainMessage

    # given a poster a task made, open in the viewer
    page.set_viewport_size({"width": 1440, "height": 1000})
    posters, series, _, _ = _seed(studio)
    log_in(page, studio)
    page.locator(f".tile[data-artifact='{series[1].pk}'] .tile-thumb").click()
    chip = page.locator("#compose-target")
    expect(chip).to_contain_text("Retro poster 2")
    expect(
        chip.get_by_role("button", name="Remove “Retro poster 2” as the target: send to Main instead")
    ).to_be_visible()
    shoot(page, "canvas-03-target-chip-1440")

    # when they send a change while the chip is there, it goes straight to the task that made the poster
    with page.expect_request(lambda r: r.url.endswith("/messages/") and r.method == "POST") as sent:
        page.get_by_label("Message to Main").fill("Make the title bigger")
        page.keyboard.press("Enter")
    assert sent.value.post_data_json == {"text": "Make the title bigger", "artifact": series[1].pk}
    expect(page.locator(".msg.person .route[data-route='direct']")).to_have_count(1, timeout=30_000)
    direct = MainMessage.objects.get(workspace=studio.workspace, text="Make the title bigger")
    assert (direct.route, direct.task_id) == ("direct", posters.pk)

    # when they remove the chip with the keyboard
    page.locator("#compose-target-remove").focus()
    page.keyboard.press("Enter")

    # then the chip is gone, the keyboard is back in the message box, and the viewer stays open
    expect(chip).to_be_hidden()
    expect(page.get_by_label("Message to Main")).to_be_focused()
    expect(page.locator(f"#viewer[data-artifact='{series[1].pk}']")).to_be_visible()

    # and the next message goes to Main, which routes it itself
    with page.expect_request(lambda r: r.url.endswith("/messages/") and r.method == "POST") as sent:
        page.keyboard.type("A logo for a bakery called Crumb")
        page.keyboard.press("Enter")
    assert sent.value.post_data_json == {"text": "A logo for a bakery called Crumb"}
    expect(page.locator(".msg.person")).to_have_count(2, timeout=30_000)
    routed = MainMessage.objects.get(workspace=studio.workspace, text="A logo for a bakery called Crumb")
    assert routed.route != "direct"
    assert routed.task_id != posters.pk
    shoot(page, "canvas-04-target-removed-1440")

    # and closing then reopening the viewer brings the chip back for the artifact now open
    page.locator("#viewer-close").click()
    expect(chip).to_be_hidden()
    page.locator(f".tile[data-artifact='{series[2].pk}'] .tile-thumb").click()
    expect(chip).to_contain_text("Retro poster 3")
    assert page.js_errors == []


def test_at_800_px_the_studio_is_tabs_and_a_finished_result_is_one_tap_away(studio, page):
    # given a person in a narrow window, with nothing made yet
    page.set_viewport_size({"width": 800, "height": 1000})
    log_in(page, studio)

    # then the studio is one column of tabs, the chat shown, and the empty chat says what one can ask for
    tabs = page.get_by_role("tablist", name="Studio sections")
    expect(tabs).to_be_visible()
    names = tabs.get_by_role("tab").all_inner_texts()
    assert [n.strip() for n in names] == ["Chat", "Canvas", "Tasks", "Memory", "Billing", "More"]
    expect(tabs.get_by_role("tab", name="Chat")).to_have_attribute("aria-selected", "true")
    expect(page.locator("#canvas")).to_be_hidden()
    expect(page.locator("#billing-panel")).to_be_hidden()
    empty = page.locator("#chat-empty")
    expect(empty).to_be_visible()
    for example in ("poster", "square social post", "logo", "short video", "3D model", "brief", "Flow"):
        expect(empty).to_contain_text(example)
    shoot(page, "canvas-05-empty-chat-800")

    # when they take an example and ask for one image
    empty.get_by_role("button", name="A logo for a bakery called Crumb").click()
    expect(page.get_by_label("Message to Main")).to_have_value("A logo for a bakery called Crumb")
    page.get_by_label("Message to Main").fill("Generate an image of a ginger cat")
    page.keyboard.press("Enter")
    expect(empty).to_be_hidden(timeout=30_000)

    # then when the image is made the Canvas tab is marked, while the chat stays in view
    canvas_tab = tabs.get_by_role("tab", name="Canvas (new)")
    expect(canvas_tab).to_have_attribute("data-new", "true", timeout=60_000)
    expect(page.locator("#chat-panel")).to_be_visible()
    shoot(page, "canvas-06-canvas-tab-marked-800")

    # when they tap it, the result is right there, and the mark goes
    canvas_tab.click()
    tile = page.locator(".tile[data-kind='image']").first
    expect(tile).to_be_in_viewport()
    expect(tile.locator("img")).to_be_visible()
    expect(tabs.get_by_role("tab", name="Canvas", exact=True)).not_to_have_attribute("data-new", "true")
    expect(page.locator("#chat-panel")).to_be_hidden()
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= 800, width
    shoot(page, "canvas-07-canvas-tab-800")

    # and a tap on the picture opens it, with its download
    tile.locator(".tile-thumb").click()
    expect(page.locator("#viewer")).to_be_visible()
    expect(page.locator("#viewer-download")).to_be_visible()
    shoot(page, "canvas-08-viewer-800")

    # and the other panels are a tap away too, with the keyboard as well (arrows move between tabs)
    tabs.get_by_role("tab", name="Canvas", exact=True).focus()
    page.keyboard.press("ArrowRight")
    expect(tabs.get_by_role("tab", name="Tasks")).to_be_focused()
    expect(page.locator("#tasks-panel")).to_be_visible()
    tabs.get_by_role("tab", name="More").click()
    expect(page.locator("#members-panel")).to_be_visible()
    expect(page.locator("#api-keys-panel")).to_be_visible()
    expect(page.locator("#canvas")).to_be_hidden()
    assert page.js_errors == []
