"""The person's own material in a real browser (issue 15 item 4): a PNG chosen with the Upload button appears in
the grid; a PNG named .mp4 is refused with the API's own words; a file dropped on the canvas is uploaded; a new
version comes from a file; deleting asks, brings its confirmation card into view in the chat, and the tile goes
only once the person confirms. Screenshots go to var/screenshots/upload-*.png.
"""

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import log_in, shoot
from tests.support import media_samples as media

pytestmark = [pytest.mark.browser, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def _artifacts(studio):
    from workspace.models import Artifact

    return Artifact.objects.filter(workspace=studio.workspace)


def test_it_uploads_a_photo_refuses_a_disguised_one_and_deletes_through_the_card(studio, page):
    from workspace.models import Artifact, ArtifactVersion

    # given a person in the studio, with an empty canvas
    log_in(page, studio)
    expect(page.locator("#grid .tile")).to_have_count(0)

    # when they choose a PNG with the Upload button's file input
    page.locator("#upload-file").set_input_files(
        {"name": "cat-photo.png", "mimeType": "image/png", "buffer": media.png_bytes(size=(320, 240))}
    )

    # then it appears in the grid as an image, its picture loaded from the server, and the canvas says so
    tile = page.locator("#grid .tile[data-kind='image']")
    expect(tile).to_have_count(1)
    expect(tile.locator(".tile-open")).to_contain_text("cat-photo")
    tile.locator("img").evaluate("img => img.decode()")
    assert tile.locator("img").evaluate("img => img.complete && img.naturalWidth") == 320
    expect(page.locator("#canvas-status")).to_have_text("Uploaded 1 of 1 file.")
    expect(page.locator("#upload-error")).to_be_hidden()
    expect(page.locator("#canvas")).not_to_have_attribute("data-uploading", "true")
    shoot(page, "upload-01-png-in-grid")
    photo = _artifacts(studio).get()
    assert (photo.kind, photo.title) == ("image", "cat-photo")

    # when they choose a PNG renamed .mp4
    page.locator("#upload-file").set_input_files(
        {"name": "holiday.mp4", "mimeType": "video/mp4", "buffer": media.png_bytes()}
    )

    # then the API's refusal is shown as it says it, and nothing new is in the grid or the database
    error = page.locator("#upload-error")
    expect(error).to_be_visible()
    expect(error).to_have_attribute("data-code", "type_mismatch")
    expect(error).to_contain_text(
        "holiday.mp4: The file name (.mp4) and the declared type (video/mp4) say it is a video, but the content is "
        "an image (image/png)."
    )
    expect(page.locator("#grid .tile")).to_have_count(1)
    assert _artifacts(studio).count() == 1
    shoot(page, "upload-02-mismatch-refused")

    # when they drag a markdown file over the canvas and drop it
    dropped = page.evaluate_handle(
        """([name, text]) => {
            const transfer = new DataTransfer();
            transfer.items.add(new File([text], name, { type: "text/markdown" }));
            return transfer;
        }""",
        ["brief.md", "# Coffee shop brief\n\nThree warm retro posters.\n"],
    )
    page.dispatch_event("#canvas", "dragenter", {"dataTransfer": dropped})
    expect(page.locator("#canvas")).to_have_attribute("data-dropping", "true")
    expect(page.locator("#drop-zone")).to_be_visible()
    shoot(page, "upload-03-dropping")
    page.dispatch_event("#canvas", "drop", {"dataTransfer": dropped})

    # then it becomes a document holding that text, and the earlier error is gone
    expect(page.locator("#grid .tile[data-kind='document']")).to_have_count(1)
    expect(page.locator("#drop-zone")).to_be_hidden()
    expect(page.locator("#upload-error")).to_be_hidden()
    brief = _artifacts(studio).get(kind="document")
    assert brief.versions.get().content == "# Coffee shop brief\n\nThree warm retro posters.\n"

    # when they open the photo and upload a JPEG as its next version
    tile.locator(".tile-open").click()
    expect(page.locator("#viewer")).to_have_attribute("data-artifact", str(photo.pk))
    page.locator("#version-file").set_input_files(
        {"name": "cat-photo-warmer.jpg", "mimeType": "image/jpeg", "buffer": media.image_bytes("JPEG", (320, 240))}
    )

    # then version 2 is shown in the history, by them
    expect(page.locator("#versions li[data-version='2']")).to_contain_text(f"v2 by {studio.user.username}")
    assert ArtifactVersion.objects.get(artifact=photo, number=2).media_type == "image/jpeg"
    expect(tile).to_have_attribute("data-version", "2")

    # when they ask to delete it: the viewer only asks, and the confirmation card comes into view in the chat
    page.locator("#viewer-delete").click()
    card = page.locator(".task-card[data-status='open']", has_text="Delete “cat-photo” for good?")
    expect(card).to_be_visible()
    card_id = card.get_attribute("data-card")
    expect(card.locator(".card-title")).to_be_focused()
    expect(page.locator("#viewer")).to_have_attribute("data-delete", "asked")
    expect(page.locator("#notices")).to_contain_text("Nothing is deleted until then")
    assert Artifact.objects.get(pk=photo.pk).deleted_at is None
    expect(tile).to_have_count(1)
    shoot(page, "upload-04-delete-card")

    # when they confirm on the card
    card.locator("button[data-action='confirm']").click()

    # then the tile leaves the grid, the viewer closes, and the artifact is deleted
    expect(page.locator(f"#grid .tile[data-artifact='{photo.pk}']")).to_have_count(0)
    expect(page.locator("#viewer")).to_be_hidden()
    expect(page.locator("#canvas-status")).to_have_text("“cat-photo” was deleted by alice.")
    expect(page.locator(f".task-card[data-card='{card_id}']")).to_have_attribute("data-status", "resolved")
    assert Artifact.objects.get(pk=photo.pk).deleted_at is not None
    shoot(page, "upload-05-deleted")

    # and after a reload the grid still shows only the document
    page.reload()
    page.locator("#studio[data-ready='true']").wait_for()
    expect(page.locator("#grid .tile")).to_have_count(1)
    expect(page.locator("#grid .tile[data-kind='document']")).to_have_count(1)
    assert page.js_errors == []
