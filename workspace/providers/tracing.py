"""Making the work from the person's own image (DESIGN §15: "my sketch" is the job's source, and is used).

A drawing becomes a clean logo: its dark strokes are traced (Otsu's threshold on the luminance, the ground
being whichever side is the majority), smoothed (a small closing, a blur and a threshold again: wobbly pencil
edges become clean curves and specks below a size vanish), recoloured with the palette and set above the
wordmark — the brand's name when one is known, never a word of the request's style ("vector", "clean"). A photo
becomes a duotone in the palette, the photo's own light and shade kept. Both record where the source ended up
(`mark_box`, `source_box`) so a test, or a person, can check the result against the source.

Pure image work (PIL, numpy, scipy): the provider (procedural.py `render_from_source`) reads the source and the
palette and stores the result.
"""

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont, ImageOps
from scipy import ndimage

from lomote.understanding.language_id import language_identify

RGB = tuple[int, int, int]
FontFn = Callable[[int, str], ImageFont.FreeTypeFont]

WORK_SIDE = 512  # the source is traced at this size: enough for a mark, bounded cost whatever was uploaded
SUPERSAMPLE = 2  # the mark is drawn at twice the size and scaled down: anti-aliased edges
SPECK_SHARE = 0.004  # a stroke component smaller than this share of all strokes is a speck of the scan
DRAWN_STROKE_SHARE = 0.3  # a drawing: strokes cover little of the page…
DRAWN_GROUND_SPREAD = 14.0  # …and the rest is a ground of nearly one luminance (a photo's spreads wider)
MAX_WORDMARK = 40
# A name as people write one: a quoted phrase, or a run of capitalised words that does not start a sentence,
# joined by "&" or a short joining word ("Terre & Feu", "Café de Flore"). Typography, not understanding: it says
# nothing about what the request asks for, only which words are written as a name.
_QUOTED = re.compile(r"[\"“«]\s*([^\"”»]{1,60}?)\s*[\"”»]")
_JOINS = frozenset("& and et und y e de du des del da do of la le".split())
# Words that introduce a name ("for IKEA", "appelée ZEN"): only they let a word in capitals be one.
_NAMING = frozenset(
    "for called named pour appelé appelée nommé nommée für namens para llamado llamada chamado chamada".split()
)
NAMING_REACH = 3  # "for the bakery Müller": the naming word may stand a few words before the name
CAPITALISED_NOUNS = frozenset({"de"})  # languages that write every noun with a capital
TITLE_CASE_SHARE = 0.6  # "Make My Sketch A Logo": most words capitalised, so capitals mark no name


@dataclass(frozen=True)
class Made:
    image: Image.Image
    mark_box: tuple[int, int, int, int]  # where the source's content sits in the result (left, top, right, bottom)
    source_box: tuple[int, int, int, int]  # the part of the source (in its own pixels) placed there
    coverage: float  # the share of the source's pixels that were traced as strokes (0 for a photo)
    wordmark: str
    method: str  # "trace" | "duotone"


def flattened(image: Image.Image) -> Image.Image:
    """The image as RGB, upright, transparency laid on white (a drawing exported with no ground)."""
    image = ImageOps.exif_transpose(image)
    if image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info):
        rgba = image.convert("RGBA")
        ground = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(ground, rgba).convert("RGB")
    return image.convert("RGB")


def _work_copy(image: Image.Image) -> tuple[Image.Image, float]:
    """The image at most WORK_SIDE on its longer side, and the factor from its pixels back to the source's."""
    scale = min(1.0, WORK_SIDE / max(image.size))
    if scale < 1.0:
        image = image.resize((max(1, round(image.width * scale)), max(1, round(image.height * scale))))
    return image, 1.0 / scale


def otsu(grey: np.ndarray) -> float:
    """The luminance threshold that best splits the image in two classes (Otsu, 1979)."""
    histogram = np.bincount(grey.astype(np.uint8).ravel(), minlength=256).astype(np.float64)
    total = histogram.sum()
    levels = np.arange(256, dtype=np.float64)
    weight = np.cumsum(histogram)
    mean = np.cumsum(histogram * levels)
    between = (mean[-1] * weight / total - mean) ** 2 / np.maximum(weight * (total - weight) / total, 1e-9)
    return float(np.argmax(between[:-1]) + 0.5)


def stroke_mask(image: Image.Image) -> np.ndarray:
    """True where the drawing has strokes: the minority side of Otsu's threshold (dark on light, or light on
    dark)."""
    grey = np.asarray(flattened(image).convert("L"), dtype=np.float32)
    if float(grey.max() - grey.min()) < 8:  # a blank page: no strokes
        return np.zeros(grey.shape, dtype=bool)
    strokes = grey < otsu(grey)
    return ~strokes if strokes.mean() > 0.5 else strokes


def smoothed(mask: np.ndarray) -> np.ndarray:
    """Clean strokes: small gaps closed, edges blurred and thresholded again, specks dropped."""
    if not mask.any():
        return mask
    side = max(mask.shape)
    closed = ndimage.binary_closing(mask, structure=np.ones((3, 3)), iterations=max(1, side // 256))
    blurred = Image.fromarray(closed.astype(np.uint8) * 255).filter(ImageFilter.GaussianBlur(max(1.0, side / 256)))
    clean = np.asarray(blurred) >= 128
    labels, count = ndimage.label(clean)
    if count:
        sizes = ndimage.sum(clean, labels, index=np.arange(1, count + 1))
        keep = np.concatenate([[False], sizes >= SPECK_SHARE * clean.sum()])
        clean = keep[labels]
    return clean


def looks_drawn(image: Image.Image) -> bool:
    """A drawing (strokes on a plain ground) rather than a photo: most pixels share one luminance."""
    small, _ = _work_copy(flattened(image))
    grey = np.asarray(small.convert("L"), dtype=np.float32)
    strokes = stroke_mask(small)
    ground = grey[~strokes]
    return strokes.mean() <= DRAWN_STROKE_SHARE and float(ground.std()) <= DRAWN_GROUND_SPREAD


def wordmark_for(prompt: str, title: str | None = None) -> str:
    """The name to set under a mark: the title given, else a name the request writes (quoted, or capitalised
    words that do not start a sentence: "…for Terre & Feu"), else none. Never a style word of the request: a
    word in capitals is emphasis ("a clean VECTOR logo", "SVG style") unless a naming word introduces it ("for
    IKEA"); in a sentence Written Like A Title, or in a language that capitalises its nouns ("meine Skizze als
    Logo"), only a naming word or quotes mark a name."""
    if title and title.strip():
        return title.strip()[:MAX_WORDMARK]
    quoted = _QUOTED.search(prompt or "")
    if quoted:
        return quoted.group(1).strip()[:MAX_WORDMARK]
    tokens = (prompt or "").split()
    lettered = [w for w in (t.strip(",;:()[].!?") for t in tokens) if len(w) >= 3 and w[:1].isalpha()]
    if lettered and sum(w[:1].isupper() for w in lettered) / len(lettered) >= TITLE_CASE_SHARE:
        return ""
    capitals_say_little = language_identify(prompt) in CAPITALISED_NOUNS
    names: list[list[str]] = []
    run: list[str] = []
    introduced: list[bool] = []  # per run: a naming word comes right before it
    starts = True  # the next word starts a sentence
    recent: list[str] = []  # the few words before the current one
    for token in tokens:
        word = token.strip(",;:()[]")
        capital = word[:1].isupper() and word != "I" and not starts
        if capital or (run and word.casefold() in _JOINS):
            if not run:
                introduced.append(bool(_NAMING.intersection(recent[-NAMING_REACH:])))
            run.append(word.rstrip(".!?"))
        elif run:
            names.append(run)
            run = []
        starts = token.endswith((".", "!", "?"))
        if starts and run:
            names.append(run)
            run = []
        recent.append(word.casefold())
    if run:
        names.append(run)
    trimmed = []
    for words, named in zip(names, introduced, strict=True):
        while words and words[-1].casefold() in _JOINS:
            words = words[:-1]
        shouted = all(w.isupper() for w in words if w.isalpha())
        if words and (named or not (shouted or capitals_say_little)):
            trimmed.append(" ".join(words))
    return max(trimmed, key=len)[:MAX_WORDMARK] if trimmed else ""


def _fit(box: tuple[int, int], area: tuple[float, float, float, float]) -> tuple[int, int, int, int]:
    """`box` (w, h) scaled to fit `area` (left, top, right, bottom), centred."""
    left, top, right, bottom = area
    scale = min((right - left) / box[0], (bottom - top) / box[1])
    w, h = box[0] * scale, box[1] * scale
    x, y = left + (right - left - w) / 2, top + (bottom - top - h) / 2
    return round(x), round(y), round(x + w), round(y + h)


def _wordmark(
    img: Image.Image, text: str, top: float, bottom: float, ink: RGB, accent: RGB, font: FontFn, weight: str
) -> None:
    draw = ImageDraw.Draw(img)
    w = img.width
    size = int((bottom - top) * 0.55)
    while size > 10 and font(size, weight).getlength(text) > w * 0.84:
        size = int(size * 0.9)
    face = font(size, weight)
    width = face.getlength(text)
    y = top + (bottom - top - size * 1.6) / 2
    draw.text(((w - width) / 2, y), text, font=face, fill=ink)
    rule, thick = w * 0.05, max(2, size // 14)
    y += size * 1.3
    draw.rectangle([w / 2 - rule, y, w / 2 + rule, y + thick], fill=accent)


def logo_from_sketch(
    source: Image.Image,
    *,
    size: tuple[int, int],
    palette: tuple[RGB, ...],
    wordmark: str,
    font: FontFn,
    weight: str = "bold",
) -> Made:
    """The drawing's strokes, traced and smoothed, in the palette's primary colour on its ground, above the
    wordmark (when there is one)."""
    work, back = _work_copy(flattened(source))
    mask = smoothed(stroke_mask(work))
    if not mask.any():  # nothing drawn: the whole page is the mark's place, left empty
        mask = np.zeros((work.height, work.width), dtype=bool)
        rows, cols = np.array([0, work.height - 1]), np.array([0, work.width - 1])
    else:
        rows, cols = np.nonzero(mask.any(axis=1))[0], np.nonzero(mask.any(axis=0))[0]
    top, bottom, left, right = rows[0], rows[-1] + 1, cols[0], cols[-1] + 1
    crop = mask[top:bottom, left:right]
    w, h = size
    area = (w * 0.14, h * 0.1, w * 0.86, h * (0.66 if wordmark else 0.9))
    box = _fit((crop.shape[1], crop.shape[0]), area)
    big = (max(1, (box[2] - box[0]) * SUPERSAMPLE), max(1, (box[3] - box[1]) * SUPERSAMPLE))
    shape = Image.fromarray(crop.astype(np.uint8) * 255).resize(big, Image.Resampling.BILINEAR)
    # Enlarged, the traced pixels show as steps: a blur as wide as one of them, thresholded, gives clean curves.
    shape = shape.filter(ImageFilter.GaussianBlur(max(0.5, 0.8 * big[0] / max(1, crop.shape[1]))))
    shape = shape.point(lambda v: 255 if v >= 128 else 0).resize((box[2] - box[0], box[3] - box[1]), Image.LANCZOS)
    ground, primary, accent, ink = palette[0], palette[1], palette[3], palette[5]
    img = Image.new("RGB", size, ground)
    img.paste(Image.new("RGB", shape.size, primary), box[:2], shape)
    if wordmark:
        _wordmark(img, wordmark, h * 0.7, h * 0.95, ink, accent, font, weight)
    source_box = tuple(round(v * back) for v in (left, top, right, bottom))
    return Made(img, box, source_box, float(mask.mean()), wordmark, "trace")  # type: ignore[arg-type]


def duotone_from_photo(
    source: Image.Image,
    *,
    size: tuple[int, int],
    palette: tuple[RGB, ...],
    wordmark: str,
    font: FontFn,
    weight: str = "bold",
) -> Made:
    """The photo, cropped to fill the format, its luminance mapped from the palette's ink to its ground through
    its primary colour; the wordmark on a band below when there is one."""
    photo = flattened(source)
    w, h = size
    area_h = round(h * (0.8 if wordmark else 1.0))
    fitted = ImageOps.fit(photo, (w, area_h), Image.Resampling.LANCZOS)
    ink, primary, ground, accent = palette[5], palette[1], palette[0], palette[3]
    toned = ImageOps.colorize(ImageOps.autocontrast(fitted.convert("L"), cutoff=1), ink, ground, mid=primary)
    img = Image.new("RGB", size, ground)
    img.paste(toned, (0, 0))
    if wordmark:
        _wordmark(img, wordmark, area_h, h, ink, accent, font, weight)
    # ImageOps.fit crops the photo's centre: the part of the source shown.
    scale = max(w / photo.width, area_h / photo.height)
    shown_w, shown_h = w / scale, area_h / scale
    left, top = (photo.width - shown_w) / 2, (photo.height - shown_h) / 2
    source_box = (round(left), round(top), round(left + shown_w), round(top + shown_h))
    return Made(img, (0, 0, w, area_h), source_box, 0.0, wordmark, "duotone")
