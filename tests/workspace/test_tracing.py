"""Making the work from a person's own image (workspace/providers/tracing.py): a sketch traced into a clean mark
whose pixels lie on the sketch's strokes, a photo toned in the palette, and a wordmark only from a name. Pure: no
database."""

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from workspace.providers import tracing

PALETTE = ((250, 248, 240), (20, 90, 160), (120, 170, 210), (230, 120, 40), (200, 200, 200), (25, 25, 30))


def font(size: int, weight: str = "bold") -> ImageFont.FreeTypeFont:
    return ImageFont.load_default(size)


def sketch(shift: int = 0, grain: int = 10) -> Image.Image:
    """A pencil drawing: a ring and a peak in dark grey on off-white paper with its grain and a few specks."""
    image = Image.new("RGB", (400, 400), (246, 243, 236))
    draw = ImageDraw.Draw(image)
    draw.ellipse((70 + shift, 70, 330 + shift, 330), outline=(40, 40, 45), width=10)
    draw.line((120 + shift, 290, 200 + shift, 110, 280 + shift, 290), fill=(35, 35, 40), width=10, joint="curve")
    for x, y in ((20, 380), (385, 15)):
        draw.point((x, y), fill=(60, 60, 60))  # dust of the scan
    noise = np.random.default_rng(7).integers(-grain, grain + 1, (400, 400, 3))
    return Image.fromarray(np.clip(np.asarray(image, dtype=int) + noise, 0, 255).astype(np.uint8))


def photo() -> Image.Image:
    yy, xx = np.mgrid[0:300, 0:400]
    base = np.stack([120 + 90 * np.sin(xx / 35.0) * np.cos(yy / 45.0), 100 + 60 * np.sin(yy / 28.0), 140 + 0 * xx], -1)
    base += np.random.default_rng(3).normal(0, 16, base.shape)
    return Image.fromarray(np.clip(base, 0, 255).astype(np.uint8))


def overlap(made: tracing.Made, source: Image.Image) -> float:
    """IoU between the source's strokes, placed where the result says, and the result's primary-coloured pixels."""
    left, top, right, bottom = made.mark_box
    s_left, s_top, s_right, s_bottom = made.source_box
    strokes = tracing.stroke_mask(source)[s_top:s_bottom, s_left:s_right]
    expected = np.asarray(Image.fromarray(strokes.astype(np.uint8) * 255).resize((right - left, bottom - top))) >= 128
    region = np.asarray(made.image, dtype=int)[top:bottom, left:right]
    drawn = np.abs(region - np.array(PALETTE[1])).sum(axis=-1) < 60
    return float((drawn & expected).sum() / max(1, (drawn | expected).sum()))


def test_it_traces_the_sketch_s_strokes_into_a_mark_in_the_palette():
    source = sketch()
    made = tracing.logo_from_sketch(source, size=(512, 512), palette=PALETTE, wordmark="", font=font)
    assert made.method == "trace" and made.image.size == (512, 512)
    # the mark lies on the sketch's strokes, and not on the same strokes drawn elsewhere
    assert overlap(made, source) > 0.6
    assert overlap(made, sketch(shift=60)) < 0.35
    # clean: two colours only (ground and the primary, plus their anti-aliased edge), no paper grain left
    pixels = np.asarray(made.image, dtype=int).reshape(-1, 3)
    near = lambda colour: np.abs(pixels - np.array(colour)).sum(axis=-1) < 40  # noqa: E731
    assert (near(PALETTE[0]) | near(PALETTE[1])).mean() > 0.97


def test_it_drops_the_scan_s_specks_and_keeps_the_strokes():
    mask = tracing.stroke_mask(sketch())
    clean = tracing.smoothed(mask)
    assert not clean[370:390, 10:30].any() and not clean[5:25, 375:395].any()  # the dust is gone
    assert clean[195:205, 65:85].any()  # the ring's left edge is kept


def test_it_tells_a_drawing_from_a_photo():
    assert tracing.looks_drawn(sketch())
    assert not tracing.looks_drawn(photo())


def test_it_tones_a_photo_keeping_its_light_and_shade():
    source = photo()
    made = tracing.duotone_from_photo(source, size=(400, 300), palette=PALETTE, wordmark="", font=font)
    assert made.method == "duotone"
    toned = np.asarray(made.image.convert("L").resize((80, 60)), dtype=float).ravel()
    original = np.asarray(source.convert("L").resize((80, 60)), dtype=float).ravel()
    assert np.corrcoef(toned, original)[0, 1] > 0.8


def test_it_sets_the_wordmark_under_the_mark_when_there_is_a_name():
    made = tracing.logo_from_sketch(sketch(), size=(512, 512), palette=PALETTE, wordmark="Terre & Feu", font=font)
    below = np.asarray(made.image, dtype=int)[int(512 * 0.7) :]
    assert (np.abs(below - np.array(PALETTE[5])).sum(axis=-1) < 60).sum() > 200  # the name's ink
    assert made.mark_box[3] <= 512 * 0.7  # the mark keeps above it


@pytest.mark.parametrize(
    ("prompt", "wordmark"),
    [
        ("Turn my logo sketch into a clean vector-style logo", ""),
        ("Turn my sketch into a clean VECTOR logo", ""),
        ("logo from my sketch, SVG style, for Acme", "Acme"),
        ("Make My Sketch A Logo", ""),
        ("Turn my sketch into a clean logo for Terre & Feu", "Terre & Feu"),
        ('turn my drawing into a logo called "moon bakery"', "moon bakery"),
        ("a logo for IKEA from my sketch", "IKEA"),
        ("Transforme mon croquis en logo propre pour la boulangerie Chez Paul", "Chez Paul"),
        ("Mach aus meiner Skizze ein sauberes Logo", ""),
        ("Mach aus meiner Skizze ein Logo namens Waldhaus", "Waldhaus"),
        ("mi boceto como logo para Casa Lola", "Casa Lola"),
    ],
)
def test_it_takes_the_wordmark_only_from_a_name_never_from_a_style_word(prompt, wordmark):
    assert tracing.wordmark_for(prompt) == wordmark


def test_it_takes_the_title_given_before_any_word_of_the_request():
    assert tracing.wordmark_for("a clean VECTOR logo from my sketch", "Northwind") == "Northwind"
