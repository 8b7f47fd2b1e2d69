"""The embedded procedural provider: real images, short animations and simple 3D assets, made from the prompt.

Nothing is fetched and no model runs: the prompt is read for a palette ("retro" → cream, orange, mustard and
teal; "midnight" / "blue" → navy and ice; "neon", "sunset", "forest", "pastel", "minimal"), a layout (poster,
landscape, pattern, logo), a motif and a typography, and the title is the request's subject
(`lomote.understanding.subject`: a quoted phrase, else what the work is about, without counts, verbs, politeness or
style words) — then the image is drawn with Pillow, its text set in Montserrat (every Latin letter French,
German, Spanish and Portuguese write). The look — warmth, brightness, saturation, contrast, text size,
roundness, text position — is never read from words: it is neutral for new work, and an edit (job params
`changes`, the understanding layer's `edit` labels) moves the parameters the edited version recorded
(workspace/providers/edits.py), keeping its title and seed. The same prompt and parameters give the same bytes
(everything random is drawn from a generator seeded by them), so a version
can be reproduced and a test can compare two renderings.

- images: PNG (a 768×1024 poster by default; a logo request, read by meaning by the kind decision ("logotype",
  "Signet", "a wordmark for…"), gives a 768×768 logo: a geometric mark chosen by the seed above a wordmark of the
  subject);
- video: an animated WebP (a looping sunburst / rising sun, 12 frames by default);
- 3d: a glTF 2.0 JSON asset with its buffer embedded as base64 (a cube, prism, pyramid, cone, cylinder, sphere or
  torus — "a coffee cup" is a cylinder, "a planet" a sphere, "a ring" a torus — coloured from the
  palette, flat-shaded with vertex colours).

It runs as a real asynchronous job (`WorkerProvider`): submit enqueues a django-q job which renders in
stages and reports 10, 40, 80 %, then success with the file, through `job_event_apply`.
"""

import base64
import colorsys
import hashlib
import io
import json
import math
import random
import re
import struct
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from fontpkg_montserrat import ROOT as MONTSERRAT_ROOT
from PIL import Image, ImageDraw, ImageFont, features

from lomote.kernel.exceptions import InvalidInput
from lomote.understanding import decide
from lomote.understanding.subject import subject_of
from workspace.providers import tracing
from workspace.providers.base import Output, ReportFn, WorkerProvider
from workspace.providers.edits import EDIT_CHANGES, LOOK_BOUNDS, LOOK_DEFAULTS, SIDE_BOUNDS, edit_params
from workspace.selectors import artifact_version_get

RGB = tuple[int, int, int]
Progress = Callable[[int], None]

# --- reading the prompt -------------------------------------------------------------------------------------

# name → (background, primary, secondary, accent, light, ink)
PALETTES: dict[str, tuple[RGB, ...]] = {
    "retro": ((244, 228, 193), (232, 131, 58), (200, 85, 61), (242, 177, 52), (42, 157, 143), (38, 70, 83)),
    "midnight": ((11, 29, 58), (31, 78, 121), (46, 134, 171), (246, 245, 174), (169, 214, 229), (234, 242, 248)),
    "neon": ((20, 10, 40), (255, 41, 117), (0, 229, 255), (252, 238, 33), (123, 44, 191), (255, 255, 255)),
    "sunset": ((53, 30, 65), (240, 113, 103), (247, 178, 103), (254, 217, 183), (144, 82, 188), (255, 240, 220)),
    "forest": ((233, 237, 201), (52, 78, 65), (88, 129, 87), (214, 140, 69), (163, 177, 138), (30, 45, 35)),
    "pastel": ((255, 244, 240), (255, 179, 186), (186, 225, 255), (255, 223, 186), (186, 255, 201), (90, 90, 120)),
    "minimal": ((245, 245, 240), (20, 20, 20), (120, 120, 120), (220, 40, 40), (200, 200, 200), (15, 15, 15)),
    "studio": ((250, 247, 242), (58, 80, 107), (238, 108, 77), (152, 193, 217), (224, 251, 252), (41, 50, 65)),
}
PALETTE_WORDS: dict[str, tuple[str, ...]] = {
    "retro": ("retro", "rétro", "retrô", "vintage", "70s", "60s", "seventies", "groovy", "old-school", "mid-century"),
    "midnight": ("midnight", "night", "nuit", "blue", "bleu", "bleue", "navy", "ocean", "océan", "sea", "mer", "moon")
    + ("nacht", "blau", "blaue", "meer", "mond", "noche", "azul", "mar", "luna", "noite", "lua", "oceano", "océano"),
    "neon": ("neon", "néon", "neón", "cyber", "cyberpunk", "synthwave", "80s", "vaporwave", "electric"),
    "sunset": ("sunset", "coucher", "dusk", "crépuscule", "twilight", "dawn", "aube", "sonnenuntergang", "atardecer")
    + ("abendrot", "crepúsculo", "amanecer", "anoitecer", "entardecer", "amanhecer"),
    "forest": ("forest", "forêt", "green", "vert", "verte", "nature", "plant", "plante", "eco", "jungle", "garden")
    + ("wald", "grün", "grüne", "natur", "garten", "bosque", "verde", "naturaleza", "jardín", "floresta", "jardim"),
    "pastel": ("pastel", "soft", "doux", "douce", "kawaii", "baby", "candy", "pastell", "suave"),
    "minimal": ("minimal", "minimalist", "minimaliste", "monochrome", "noir", "black", "swiss", "bauhaus")
    + ("minimalistisch", "minimalistische", "minimalistisches", "schlicht", "schwarz", "minimalista", "negro", "preto"),
}
LAYOUT_WORDS: dict[str, tuple[str, ...]] = {
    "poster": ("poster", "posters", "affiche", "affiches", "flyer", "brand", "marque", "cover", "album"),
    "landscape": ("landscape", "paysage", "mountain", "mountains", "montagne", "montagnes", "horizon", "valley"),
    "pattern": ("pattern", "motif", "texture", "geometric", "géométrique", "tiles", "wallpaper", "papier"),
}
SHAPE_WORDS: dict[str, tuple[str, ...]] = {
    "prism": tuple("prism prisme prisma wedge".split()),
    "pyramid": tuple("pyramid pyramide pirámide piramide pirâmide spire".split()),
    "cone": tuple("cone cône cono kegel funnel entonnoir trichter imbuto funil embudo".split()),
    "cube": tuple("cube box boîte block bloc crate würfel cubo caja caixa scatola".split()),
    "cylinder": tuple(
        "cylinder cylindre cilindro zylinder cup tasse taza tazza xícara mug becher canette lata lattina vase "
        "jarrón vaso bottle bouteille botella flasche bottiglia garrafa column colonne columna säule colonna "
        "coluna tower torre turm candle bougie vela kerze candela jar bocal pot".split()
    ),
    "sphere": tuple(
        "sphere sphère esfera kugel sfera ball balle ballon pelota palla bola planet planète planeta pianeta "
        "globe globo orb orbe moon lune luna mond lua bubble bulle burbuja blase bolla bolha pearl perle "
        "perla pérola".split()
    ),
    "torus": tuple(
        "torus tore toro toroide ring anneau bague anillo anello anel donut doughnut beignet dona ciambella "
        "rosquinha krapfen bagel wreath couronne".split()
    ),
}
# The compositions a poster without a signature motif (the default and retro palettes) is drawn as: the seed
# chooses one, so the images of a series differ; a word of the prompt ("stripes", "waves"…) chooses it instead.
COMPOSITIONS = ("sunburst", "stripes", "bokeh", "waves", "grid")
COMPOSITION_WORDS: dict[str, tuple[str, ...]] = {
    "sunburst": ("sunburst", "rays", "rayons", "strahlen", "rayos", "raios"),
    "stripes": ("stripes", "striped", "rayures", "streifen", "rayas", "listras"),
    "bokeh": ("bokeh", "dots", "bubbles", "bulles", "punkte", "puntos", "bolinhas"),
    "waves": ("waves", "wavy", "vagues", "wellen", "olas", "ondas"),
    "grid": ("grid", "grille", "raster", "cuadrícula", "grade"),
}
BOLD_WORDS = ("bold", "gras", "retro", "rétro", "brand", "marque", "display", "loud", "punchy", "vintage", "neon")
LIGHT_WORDS = ("elegant", "élégant", "élégante", "minimal", "minimalist", "luxury", "luxe", "light", "fine", "thin")
DEFAULT_SIZES = {"poster": (768, 1024), "landscape": (1024, 640), "pattern": (768, 768), "logo": (768, 768)}
MIN_SIDE, MAX_SIDE = SIDE_BOUNDS
MAX_FRAMES = 48
MAX_TITLE = 28


@dataclass(frozen=True)
class Style:
    palette_name: str
    palette: tuple[RGB, ...]  # background, primary, secondary, accent, light, ink — after the look below
    warmth: float  # the look (edits.LOOK_DEFAULTS): explicit parameters, neutral unless a job sets them
    brightness: float
    saturation: float
    contrast: float
    text_scale: float
    roundness: float
    stretch_x: float  # a 3D model's width and height, relative to its shape's own
    stretch_y: float
    layout: str
    motif: str
    typography: str  # bold | regular | light
    title: str
    subtitle: str
    text_position: str
    show_text: bool
    shape: str
    seed: int

    @property
    def background(self) -> RGB:
        return self.palette[0]

    @property
    def ink(self) -> RGB:
        return self.palette[5]


def _words(prompt: str) -> list[str]:
    # "l'affiche" is "affiche"; "brand mark" is one word
    prompt = re.sub(r"\b(brand|word|logo)[\s-]+mark", r"\1mark", prompt.lower())
    return re.findall(r"[\w-]+", prompt)


def _first_match(words: list[str], table: dict[str, tuple[str, ...]], default: str) -> str:
    """The entry of `table` whose word comes first in the prompt."""
    best, best_at = default, len(words)
    for name, keys in table.items():
        for at, word in enumerate(words):
            if word in keys and at < best_at:
                best, best_at = name, at
    return best


def _layout(prompt: str, words: list[str]) -> str:
    """A logo when the prompt asks for one, read by meaning (the understanding layer's kind decision: "logotype",
    "Signet", "a wordmark for…"; "a poster with our logo" is a poster); else the layout its words name."""
    if decide("kind", prompt).label == "logo":
        return "logo"
    return _first_match(words, LAYOUT_WORDS, "poster")


def _title(prompt: str) -> str:
    """What the work is about: a quoted phrase as written, else the request's subject read by the understanding
    layer's subject tagger, cut at a word (the planner usually sets the title itself: params["title"])."""
    return subject_of(prompt, MAX_TITLE) or "Lomote"


def _shift(color: RGB, look: dict[str, float]) -> RGB:
    """A palette colour under the look: hue toward orange (warmth > 0) or blue (< 0), saturation scaled,
    brightness (above 1 lifts toward white, so even a pale ground gets lighter; below 1 scales toward black),
    contrast (away from or toward mid-grey), then neutrals tinted by the warmth."""
    warmth = look["warmth"]
    r, g, b = (c / 255 for c in color)
    h, s, v = colorsys.rgb_to_hsv(r, g, b)
    if warmth:
        target = 30 / 360 if warmth > 0 else 210 / 360
        delta = ((target - h + 0.5) % 1.0) - 0.5  # shortest way round the hue circle
        h = (h + delta * min(1.0, abs(warmth)) * 0.6) % 1.0
        s = s * (1 + 0.25 * abs(warmth))
    s = max(0.0, min(1.0, s * look["saturation"]))
    channels = colorsys.hsv_to_rgb(h, s, v)
    brightness, contrast = look["brightness"], look["contrast"]
    if brightness >= 1:
        lift = min(1.0, brightness - 1)
        channels = tuple(c + (1 - c) * lift for c in channels)
    else:
        channels = tuple(c * brightness for c in channels)
    channels = tuple(0.5 + (c - 0.5) * contrast for c in channels)
    tint = 40 * warmth  # neutrals (cream, grey, white) have no hue to turn: tint them
    r, g, b = channels
    return (
        _clamp(r * 255 + tint),
        _clamp(g * 255 + tint * 0.25),
        _clamp(b * 255 - tint),
    )


def _clamp(value: float) -> int:
    return max(0, min(255, round(value)))


def _look(params: dict[str, Any]) -> dict[str, float]:
    """The look parameters: each as the job set it, bounded, else neutral. Prompt words never set them: a new
    work starts neutral, and an edit moves the parameters its version recorded (workspace/providers/edits.py)."""
    return {
        name: max(LOOK_BOUNDS[name][0], min(LOOK_BOUNDS[name][1], float(params.get(name, neutral))))
        for name, neutral in LOOK_DEFAULTS.items()
    }


def style_for(prompt: str, params: dict[str, Any] | None = None) -> Style:
    """Everything the renderers need: what the work is (palette, layout, title, motif, shape) read from the
    prompt unless `params` sets it; the look (warmth, brightness, saturation, contrast, text size, roundness) and
    the text position only from `params`, so what a job sets explicitly is never overridden by words."""
    params = params or {}
    words = _words(prompt)
    palette_name = str(params.get("palette") or _first_match(words, PALETTE_WORDS, "studio"))
    layout = str(params.get("layout") or _layout(prompt, words))
    look = _look(params)
    palette = tuple(_shift(c, look) for c in PALETTES[palette_name])
    if params.get("typography") in WEIGHTS and params.get("typography") != "subtitle":
        typography = str(params["typography"])
    elif any(w in LIGHT_WORDS for w in words):
        typography = "light"
    elif any(w in BOLD_WORDS for w in words):
        typography = "bold"
    else:
        typography = "regular"
    signature = {
        "neon": "synthwave",
        "midnight": "moon",
        "sunset": "sun",
        "minimal": "swiss",
        "forest": "hills",
        "pastel": "circles",
    }.get(palette_name)
    title = str(params.get("title") or _title(prompt))
    # Seeded by the composition (what is made — the request's first sentence, e.g. "Poster 2 of 3 — retro
    # brand poster" — its palette and layout), not by every word; an edit carries its version's seed over.
    subject = prompt.split(". ", 1)[0].strip().casefold()
    composition = json.dumps([subject, title.casefold(), palette_name, layout, params.get("shape")], sort_keys=True)
    seed = (
        int(params["seed"]) if "seed" in params else int.from_bytes(hashlib.sha256(composition.encode()).digest()[:8])
    )
    if layout == "logo":
        motif = str(params.get("motif") or mark_for(seed))
    else:  # explicitly set, else asked for, else the palette's own, else the one the seed picks
        motif = str(
            params.get("motif")
            or _first_match(words, COMPOSITION_WORDS, "")
            or signature
            or COMPOSITIONS[seed % len(COMPOSITIONS)]
        )
    if layout == "logo" and look["roundness"] >= 0.5 and not motif.startswith(("circle", "rounded")):
        motif = "rounded-" + motif.split("-", 1)[1]  # a rounder logo: its mark loses its corners
    subtitle = params.get("subtitle")
    if subtitle is None:
        subtitle = f"EST. {random.Random(seed).randint(1952, 1979)}" if palette_name == "retro" else ""  # noqa: S311 - art, not crypto
    return Style(
        palette_name=palette_name,
        palette=palette,
        **look,
        layout=layout,
        motif=motif,
        typography=typography,
        title=title,
        subtitle=str(subtitle),
        text_position=str(params.get("text_position") or ("bottom" if layout in ("poster", "logo") else "top")),
        show_text=layout in ("poster", "logo") or bool(params.get("title")) or bool(re.search(r"[\"“«]", prompt)),
        shape=str(params.get("shape") or _first_match(words, SHAPE_WORDS, "cube")),
        seed=seed,
    )


# --- drawing ------------------------------------------------------------------------------------------------

SUPERSAMPLE = 2  # shapes are drawn at twice the size and scaled down: anti-aliased edges


# Montserrat (SIL OFL 1.1, installed by pip with fontpkg-montserrat): full Latin Extended, so every letter of
# French, German, Spanish and Portuguese has a glyph; one variable file with a weight axis (100–900).
FONT_FILE = MONTSERRAT_ROOT / "files" / "Montserrat[wght].ttf"
WEIGHTS = {"bold": 800, "regular": 600, "light": 300, "subtitle": 500}


def font(size: int, weight: str = "regular") -> ImageFont.FreeTypeFont:
    """The typeface of titles and wordmarks at `size` px, in a weight named in WEIGHTS."""
    return _font(max(1, size), WEIGHTS[weight])


@cache
def _font(size: int, weight: int) -> ImageFont.FreeTypeFont:
    face = ImageFont.truetype(str(FONT_FILE), size)
    face.set_variation_by_axes([weight])
    return face


def _gradient(size: tuple[int, int], top: RGB, bottom: RGB) -> Image.Image:
    mask = Image.linear_gradient("L").resize(size)
    return Image.composite(Image.new("RGB", size, bottom), Image.new("RGB", size, top), mask)


def _mix(a: RGB, b: RGB, t: float) -> RGB:
    return tuple(_clamp(x + (y - x) * t) for x, y in zip(a, b, strict=True))  # type: ignore[return-value]


def _sunburst(draw, center: tuple[float, float], radius: float, colors: list[RGB], turn: float, rays: int = 24):
    step = 2 * math.pi / rays
    cx, cy = center
    for i in range(rays):
        a0, a1 = i * step + turn, (i + 1) * step + turn
        points = [(cx, cy), (cx + radius * math.cos(a0), cy + radius * math.sin(a0))]
        points.append((cx + radius * math.cos(a1), cy + radius * math.sin(a1)))
        draw.polygon(points, fill=colors[i % len(colors)])


def _striped_sun(draw, center, radius, color: RGB, cut: RGB, bands: int = 6):
    cx, cy = center
    draw.ellipse([cx - radius, cy - radius, cx + radius, cy + radius], fill=color)
    for i in range(bands):
        # Bands thicken toward the bottom: the classic retro sun.
        y = cy + radius * (0.1 + 0.9 * i / bands)
        thickness = radius * 0.03 * (i + 1)
        draw.rectangle([cx - radius, y, cx + radius, y + thickness], fill=cut)


def _hills(draw, width: int, height: int, rng: random.Random, colors: list[RGB], base: float):
    for layer, color in enumerate(colors):
        y0 = height * (base + 0.08 * layer)
        points = [(0, height)]
        x = 0.0
        y = y0
        while x <= width:
            points.append((x, y))
            x += width / rng.randint(5, 9)
            y = y0 + rng.uniform(-0.08, 0.08) * height
        points += [(width, y0), (width, height)]
        draw.polygon(points, fill=color)


def _free_band(style: Style, w: int, h: int) -> tuple[float, float]:
    """The rows a poster's motif has to itself: above a footer title, below a header one, else all of them."""
    if not style.show_text or not style.title or style.text_position == "middle":
        return 0.0, float(h)
    top, bottom = _title_box(style, w, h).band
    return (0.0, top) if style.text_position == "bottom" else (bottom, float(h))


def _draw_poster(img: Image.Image, style: Style, rng: random.Random, frame: float) -> None:
    w, h = img.size
    bg, primary, secondary, accent, light, ink = style.palette
    draw = ImageDraw.Draw(img)
    # Where the sun / the main shape sits, and how big it is, come from the seed: each image of a series is its own
    # picture. `rng` is re-seeded for every frame, so an animation's frames share one composition.
    sun_x = w * rng.uniform(0.3, 0.7)
    sun_y = h * ((0.62 if style.text_position == "top" else 0.42) + rng.uniform(-0.06, 0.06))
    radius = w * rng.uniform(0.24, 0.34)
    loop = frame * 2 * math.pi / 12  # one turn of every periodic movement per 12 frames: a seamless loop
    draw_motif = _POSTER_MOTIFS.get(style.motif, _circles)
    draw_motif(img, draw, style, rng, (sun_x, sun_y, radius), frame, loop)
    _frame(draw, w, h, ink, style.roundness)


Sun = tuple[float, float, float]  # centre x, centre y, radius


def _sunburst_motif(img, draw, style: Style, rng: random.Random, sun: Sun, frame: float, loop: float) -> None:
    w, h = img.size
    bg, primary, secondary, accent, light, _ = style.palette
    sun_x, sun_y, radius = sun
    rays = rng.choice((16, 20, 24, 28, 32))
    # the rays turn by one period of their two colours (two rays) per loop
    turn = rng.uniform(0, math.pi) + loop * 2 / rays
    _sunburst(draw, (sun_x, sun_y), max(w, h) * 1.4, [_mix(bg, accent, 0.35), bg], turn=turn, rays=rays)
    _striped_sun(draw, (sun_x, sun_y), radius, primary, bg)
    band = h * 0.032
    # the stripes sit on the title's band when it is at the bottom, else at the sun's foot
    first = sun_y + radius
    if style.text_position == "bottom" and style.show_text:
        first = _title_box(style, w, h).band[0] - 4 * band
    for i, color in enumerate((secondary, primary, accent, light)):
        y = first + i * band
        draw.rectangle([0, y, w, y + band * 0.8], fill=color)


def _stripes(img, draw, style: Style, rng: random.Random, sun: Sun, frame: float, loop: float) -> None:
    w, h = img.size
    colors = _rotated(list(style.palette[1:5]), rng)
    angle = rng.uniform(-0.7, 0.7) + rng.choice((0.0, math.pi / 2))
    period = w * rng.uniform(0.14, 0.24)
    tx, ty = math.cos(angle), math.sin(angle)  # along a stripe
    nx, ny = -ty, tx  # across the stripes
    reach = math.hypot(w, h)
    cx, cy = sun[0], sun[1]
    # slide by one cycle of the colours per loop: the last frame leads back into the first
    shift = (frame / 12) * period * len(colors)
    count = int(reach / period) + len(colors) + 1
    for k in range(-count, count):
        d0 = k * period + shift
        d1 = d0 + period * rng.uniform(0.4, 0.6)
        corners = [
            (cx + nx * d + tx * s * reach, cy + ny * d + ty * s * reach)
            for d, s in ((d0, -1), (d0, 1), (d1, 1), (d1, -1))
        ]
        draw.polygon(corners, fill=colors[k % len(colors)])


def _bokeh(img, draw, style: Style, rng: random.Random, sun: Sun, frame: float, loop: float) -> None:
    w, h = img.size
    bg, primary = style.palette[0], style.palette[1]
    top, bottom = _free_band(style, w, h)
    discs = []
    count = rng.randint(14, 22)
    for k in range(count):
        r = w * rng.uniform(0.03, 0.14)
        x, y = rng.uniform(0, w), rng.uniform(top, bottom)
        # every colour of the palette shows at full strength on one of the front discs, the rest are faded
        strength = 1.0 if k >= count - 4 else rng.uniform(0.35, 1.0)
        color = _mix(bg, style.palette[1 + k % 4], strength)
        discs.append((r, x, y + math.sin(loop + rng.uniform(0, 2 * math.pi)) * h * 0.015, color))
    half = len(discs) // 2
    for r, x, y, color in discs[:half]:  # the blurred ones behind the big disc, the others in front
        draw.ellipse([x - r, y - r, x + r, y + r], fill=color)
    sun_x, sun_y, radius = sun
    draw.ellipse([sun_x - radius, sun_y - radius, sun_x + radius, sun_y + radius], fill=primary)
    for r, x, y, color in discs[half:]:
        draw.ellipse([x - r, y - r, x + r, y + r], fill=color)


def _waves(img, draw, style: Style, rng: random.Random, sun: Sun, frame: float, loop: float) -> None:
    w, h = img.size
    bg = style.palette[0]
    colors = _rotated([_mix(bg, style.palette[3], 0.5), *style.palette[1:5]], rng)
    top, bottom = _free_band(style, w, h)
    bands = rng.randint(5, 8)
    amplitude = h * rng.uniform(0.015, 0.04)
    cycles = rng.uniform(1.0, 2.5)
    phase = rng.uniform(0, 2 * math.pi)
    tilt = h * rng.uniform(-0.08, 0.08)
    steps = 48
    for i in range(bands):
        base = top + (bottom - top) * (0.15 + 0.85 * i / bands)
        line = [
            (
                w * k / steps,
                base
                + tilt * (k / steps - 0.5)
                + amplitude * math.sin(2 * math.pi * cycles * k / steps + phase + i * 0.9 + loop),
            )
            for k in range(steps + 1)
        ]
        draw.polygon([*line, (w, h), (0, h)], fill=colors[i % len(colors)])


def _grid(img, draw, style: Style, rng: random.Random, sun: Sun, frame: float, loop: float) -> None:
    w, h = img.size
    primary, secondary, accent, light = style.palette[1:5]
    colors = _rotated([primary, secondary, primary, accent, light], rng)  # each colour in every row, primary most
    top, bottom = _free_band(style, w, h)
    n = rng.choice((3, 4, 5))
    cell = w / n
    rows = math.ceil((bottom - top) / cell)
    for j in range(rows):
        for i in range(n):
            x, y = i * cell, top + j * cell
            color = colors[(i + 2 * j + int(frame)) % len(colors)]
            kind, corner = rng.randint(0, 3), rng.randint(0, 3)
            if kind == 0:  # a quarter disc from one corner
                cx, cy = x + cell * (corner % 2), y + cell * (corner // 2)
                draw.ellipse([cx - cell, cy - cell, cx + cell, cy + cell], fill=color)
            elif kind == 1:  # a half disc on one side
                draw.pieslice([x, y, x + cell, y + cell], 90 * corner, 90 * corner + 180, fill=color)
            elif kind == 2:  # a triangle, half the cell
                square = [(x, y), (x + cell, y), (x + cell, y + cell), (x, y + cell)]
                draw.polygon([square[(corner + k) % 4] for k in range(3)], fill=color)
            else:
                draw.ellipse([x + cell * 0.12, y + cell * 0.12, x + cell * 0.88, y + cell * 0.88], fill=color)
    # the quarter discs spill out of their cells: the title's band and the frame are drawn over them


def _rotated(colors: list[RGB], rng: random.Random) -> list[RGB]:
    """The palette's colours, starting from one the seed picks: a series shares colours, not their order."""
    at = rng.randrange(len(colors))
    return colors[at:] + colors[:at]


def _synthwave(img, draw, style: Style, rng: random.Random, sun: Sun, frame: float, loop: float) -> None:
    w, h = img.size
    bg, primary, secondary = style.palette[:3]
    sun_x, sun_y, radius = sun
    img.paste(_gradient((w, h), bg, style.palette[4]), (0, 0))
    _striped_sun(draw, (sun_x, sun_y), radius, primary, _mix(bg, style.palette[4], 0.5), bands=rng.randint(6, 10))
    horizon = sun_y + w * rng.uniform(0.06, 0.16)
    draw.rectangle([0, horizon, w, h], fill=bg)
    lines = rng.randint(9, 14)
    for i in range(lines):
        y = horizon + (h - horizon) * (i / lines) ** 1.8 + frame * 4
        draw.line([(0, y), (w, y)], fill=secondary, width=max(1, w // 300))
    spread = rng.uniform(0.18, 0.32)
    for i in range(-10, 11):  # the floor's lines run to a vanishing point under the sun
        floor = [(sun_x + i * w * 0.03, horizon), (sun_x + i * w * spread, h)]
        draw.line(floor, fill=secondary, width=max(1, w // 300))


def _moon(img, draw, style: Style, rng: random.Random, sun: Sun, frame: float, loop: float) -> None:
    w, h = img.size
    bg, primary, secondary, accent, light, ink = style.palette
    img.paste(_gradient((w, h), bg, primary), (0, 0))
    for _ in range(120):
        x, y, r = rng.uniform(0, w), rng.uniform(0, h * 0.6), rng.uniform(1, 3) * w / 768
        draw.ellipse([x - r, y - r, x + r, y + r], fill=light)
    mx, my, mr = w * rng.uniform(0.22, 0.78), sun[1] - h * rng.uniform(0.04, 0.16), w * rng.uniform(0.11, 0.17)
    draw.ellipse([mx - mr, my - mr, mx + mr, my + mr], fill=accent)
    draw.ellipse([mx - mr * 0.55, my - mr * 1.1, mx + mr * 1.35, my + mr * 0.8], fill=_mix(bg, primary, 0.4))
    _hills(draw, w, h, rng, [secondary, primary, _mix(bg, ink, 0.1)], base=rng.uniform(0.5, 0.68))


def _sun(img, draw, style: Style, rng: random.Random, sun: Sun, frame: float, loop: float) -> None:
    w, h = img.size
    bg, primary, secondary, accent, light, _ = style.palette
    img.paste(_gradient((w, h), bg, secondary), (0, 0))
    _striped_sun(draw, (sun[0], sun[1]), sun[2] * 0.9, accent, _mix(bg, secondary, 0.6))
    _hills(draw, w, h, rng, [light, primary, _mix(bg, primary, 0.3)], base=rng.uniform(0.52, 0.7))


def _swiss(img, draw, style: Style, rng: random.Random, sun: Sun, frame: float, loop: float) -> None:
    w, h = img.size
    primary, accent = style.palette[1], style.palette[3]
    top, bottom = _free_band(style, w, h)
    r = w * rng.uniform(0.3, 0.38)
    margin = w * 0.06
    cx = rng.uniform(min(r + margin, w / 2), max(w - r - margin, w / 2))
    cy = rng.uniform(min(top + r + margin, (top + bottom) / 2), max(bottom - r - margin, (top + bottom) / 2))
    draw.ellipse([cx - r, cy - r, cx + r, cy + r], fill=primary)
    at, thickness = rng.uniform(0.2, 0.8), rng.uniform(0.05, 0.09)
    if rng.random() < 0.5:  # a vertical bar, or a horizontal one, across the circle
        draw.rectangle([w * at, top + h * 0.05, w * (at + thickness), bottom - h * 0.05], fill=accent)
    else:
        y = top + (bottom - top) * at
        draw.rectangle([w * 0.05, y, w * 0.95, y + w * thickness], fill=accent)


def _hills_motif(img, draw, style: Style, rng: random.Random, sun: Sun, frame: float, loop: float) -> None:
    w, h = img.size
    bg, primary, secondary, accent, light, _ = style.palette
    img.paste(_gradient((w, h), bg, light), (0, 0))
    x, y, r = w * rng.uniform(0.15, 0.85), h * rng.uniform(0.1, 0.25), w * rng.uniform(0.09, 0.15)
    draw.ellipse([x - r, y - r, x + r, y + r], fill=accent)
    _hills(draw, w, h, rng, _rotated([light, secondary, primary], rng), base=rng.uniform(0.36, 0.56))


def _circles(img, draw, style: Style, rng: random.Random, sun: Sun, frame: float, loop: float) -> None:
    w, h = img.size
    for _ in range(14):
        r = rng.uniform(0.05, 0.2) * w
        x, y = rng.uniform(0, w), rng.uniform(0, h * 0.75)
        draw.ellipse([x - r, y - r, x + r, y + r], fill=rng.choice(style.palette[1:5]))


_POSTER_MOTIFS = {
    "sunburst": _sunburst_motif,
    "stripes": _stripes,
    "bokeh": _bokeh,
    "waves": _waves,
    "grid": _grid,
    "synthwave": _synthwave,
    "moon": _moon,
    "sun": _sun,
    "swiss": _swiss,
    "hills": _hills_motif,
    "circles": _circles,
}


def _frame(draw: ImageDraw.ImageDraw, w: int, h: int, ink: RGB, roundness: float = 0.0) -> None:
    margin = w * 0.035
    box = [margin, margin, w - margin, h - margin]
    if roundness > 0:
        draw.rounded_rectangle(box, radius=w * 0.12 * roundness, outline=ink, width=max(2, w // 120))
    else:
        draw.rectangle(box, outline=ink, width=max(2, w // 120))


def _draw_landscape(img: Image.Image, style: Style, rng: random.Random, frame: float) -> None:
    w, h = img.size
    bg, primary, secondary, accent, light, ink = style.palette
    img.paste(_gradient((w, h), light, bg), (0, 0))
    draw = ImageDraw.Draw(img)
    r = h * rng.uniform(0.1, 0.17)
    cx = w * rng.uniform(0.15, 0.85)
    cy = h * rng.uniform(0.25, 0.4) + math.sin(frame * 2 * math.pi / 12) * h * 0.04
    draw.ellipse([cx - r, cy - r, cx + r, cy + r], fill=accent)
    _hills(draw, w, h, rng, [secondary, primary, _mix(primary, ink, 0.5)], base=0.5)


def _draw_pattern(img: Image.Image, style: Style, rng: random.Random, frame: float) -> None:
    w, h = img.size
    draw = ImageDraw.Draw(img)
    cells = 6
    cw, ch = w / cells, h / cells
    colors = list(style.palette[1:5])
    for i in range(cells):
        for j in range(cells):
            x, y = i * cw, j * ch
            color = colors[(i + j + int(frame)) % len(colors)]
            kind = rng.randint(0, 3)
            if kind == 0:
                draw.ellipse([x + cw * 0.1, y + ch * 0.1, x + cw * 0.9, y + ch * 0.9], fill=color)
            elif kind == 1:
                draw.rectangle([x + cw * 0.15, y + ch * 0.15, x + cw * 0.85, y + ch * 0.85], fill=color)
            elif kind == 2:
                draw.polygon([(x, y + ch), (x + cw / 2, y), (x + cw, y + ch)], fill=color)
            else:
                draw.pieslice([x - cw, y - ch, x + cw, y + ch], 0, 90, fill=color)


def _tracking(size: int, typography: str) -> float:
    return size * (0.3 if typography == "light" else 0.03)


def _line_width(text: str, size: int, tracking: float, weight: str) -> float:
    face = font(size, weight)
    return sum(face.getlength(ch) for ch in text) + tracking * max(0, len(text) - 1)


def _fit_lines(text: str, width: float, size: int, tracking: float, weight: str) -> list[str]:
    """One line when it fits, else the two lines of the most even split ("LIBRERÍA / EL BÚHO")."""
    words = text.split()
    one = " ".join(words)
    if len(words) < 2 or _line_width(one, size, tracking, weight) <= width:
        return [one] if words else []
    splits = ([" ".join(words[:i]), " ".join(words[i:])] for i in range(1, len(words)))
    return min(splits, key=lambda lines: max(_line_width(line, size, tracking, weight) for line in lines))


def _fitted(text: str, width: float, size: int, typography: str) -> tuple[int, list[str]]:
    """The largest size from `size` down at which all of `text` fits `width` in two lines, and those lines."""
    while True:
        lines = _fit_lines(text, width, size, _tracking(size, typography), typography)
        fits = all(_line_width(line, size, _tracking(size, typography), typography) <= width for line in lines)
        if fits or size <= 12:
            return size, lines
        size = int(size * 0.9)


def _draw_line(draw, xy, text: str, size: int, tracking: float, weight: str, **kwargs) -> None:
    """Letter by letter, so the tracking (letter spacing) is part of the typography."""
    x, y = xy
    face = font(size, weight)
    for ch in text:
        draw.text((x, y), ch, font=face, **kwargs)
        x += face.getlength(ch) + tracking


def _display(style: Style) -> str:
    # Light type keeps the words' own casing (str.title() would write "D'Été", "Tom'S").
    return style.title.upper() if style.typography != "light" else style.title[:1].upper() + style.title[1:]


@dataclass(frozen=True)
class _TitleBox:
    size: int
    lines: list[str]
    y: float  # where the first line starts
    band: tuple[float, float]  # the ground-coloured band behind the title, top and bottom


def _text_width(style: Style) -> float:
    """The share of the width a title may take: bigger text may reach further toward the edges."""
    return min(0.92, 0.84 * max(1.0, style.text_scale) ** 0.5)


def _title_box(style: Style, w: int, h: int) -> _TitleBox:
    """Where a poster's title goes: the motif is laid out around it (the retro stripes end where it starts)."""
    weight = style.typography
    start = int(h * {"bold": 0.11, "regular": 0.08, "light": 0.055}[weight] * style.text_scale)
    size, lines = _fitted(_display(style), w * _text_width(style), start, weight)
    line_height = size * 1.2  # room for the accents of capitals (É, Ü, Ñ, Ã)
    block = line_height * len(lines) + (size * 0.6 if style.subtitle else 0)
    if style.text_position == "top":
        y = h * 0.09
    elif style.text_position == "middle":
        y = (h - block) / 2
    else:
        y = h * 0.93 - block
    pad = size * 0.35
    top, bottom = y - pad, y + block + pad * 0.6
    if style.text_position != "middle":  # a footer or a header band, out to the edge
        top, bottom = (top, h) if style.text_position == "bottom" else (0, bottom)
    return _TitleBox(size=size, lines=lines, y=y, band=(top, bottom))


def _draw_text(img: Image.Image, style: Style) -> None:
    w, h = img.size
    draw = ImageDraw.Draw(img)
    weight = style.typography
    box = _title_box(style, w, h)
    size, lines, y = box.size, box.lines, box.y
    tracking = _tracking(size, weight)
    line_height = size * 1.2
    ink = style.ink
    shadow = style.palette[2] if style.palette[2] != ink else style.palette[1]
    # The title sits on a band of the ground colour: legible whatever the motif draws behind it.
    draw.rectangle([0, box.band[0], w, box.band[1]], fill=style.background)
    if style.layout == "poster":
        _frame(draw, w, h, ink, style.roundness)
    for line in lines:
        x = (w - _line_width(line, size, tracking, weight)) / 2
        if weight == "bold":
            offset = max(2, size // 14)  # a hard drop shadow: the retro print look
            _draw_line(draw, (x + offset, y + offset), line, size, tracking, weight, fill=shadow)
        _draw_line(draw, (x, y), line, size, tracking, weight, fill=ink)
        y += line_height
    if style.subtitle:
        small = max(10, int(size * 0.32))
        sub = style.subtitle.upper()
        sub_tracking = small * 0.5
        x = (w - _line_width(sub, small, sub_tracking, "subtitle")) / 2
        _draw_line(draw, (x, y + size * 0.1), sub, small, sub_tracking, "subtitle", fill=ink)


# --- logos: a mark (a geometric emblem chosen by the seed) above or below a wordmark (the subject) -------------

MARK_SHAPES = ("circle", "hexagon", "rounded", "diamond")
MARK_FILLS = ("monogram", "sunrise", "rings", "facets")
_SMALL_WORDS = frozenset(
    "a an the of and de du des la le les l d di da do das dos del el y e et und der die das von".split()
)


def mark_for(seed: int) -> str:
    """The mark a logo's seed draws, e.g. "hexagon-monogram": the same logo keeps it through revisions."""
    rng = random.Random(seed)  # noqa: S311 - art, not crypto
    return f"{rng.choice(MARK_SHAPES)}-{rng.choice(MARK_FILLS)}"


def _initials(title: str) -> str:
    words = [w for w in re.findall(r"[^\W_]+", title) if w.lower() not in _SMALL_WORDS] or [title or "L"]
    return "".join(w[0] for w in words[:2]).upper()


def _shape_points(shape: str, center: tuple[float, float], r: float) -> list[tuple[float, float]]:
    cx, cy = center
    corners = {"hexagon": 6, "diamond": 4}[shape]
    turn = -math.pi / 2
    return [
        (cx + r * math.cos(turn + 2 * math.pi * i / corners), cy + r * math.sin(turn + 2 * math.pi * i / corners))
        for i in range(corners)
    ]


def _draw_shape(draw: ImageDraw.ImageDraw, shape: str, center: tuple[float, float], r: float, fill) -> None:
    cx, cy = center
    box = [cx - r, cy - r, cx + r, cy + r]
    if shape == "circle":
        draw.ellipse(box, fill=fill)
    elif shape == "rounded":
        inset = r * 0.12  # the corners of a square reach further out than a circle's edge
        draw.rounded_rectangle(
            [b + (inset if i < 2 else -inset) for i, b in enumerate(box)], radius=r * 0.28, fill=fill
        )
    else:
        draw.polygon(_shape_points(shape, center, r), fill=fill)


def _draw_mark(img: Image.Image, style: Style, center: tuple[float, float], r: float, frame: float) -> None:
    bg, primary, secondary, accent, light, ink = style.palette
    shape, fill = style.motif.split("-", 1)
    cx, cy = center
    draw = ImageDraw.Draw(img)
    # a ring around the mark, open where the seed says, turning with the frames of an animation
    start = (style.seed % 360) + frame * 30
    ring = r * 1.16
    draw.arc(
        [cx - ring, cy - ring, cx + ring, cy + ring],
        start + 40,
        start + 360,
        fill=accent,
        width=max(2, round(r * 0.05)),
    )
    # the emblem: drawn on its own layer, kept inside the shape
    layer = Image.new("RGB", img.size, primary)
    paint = ImageDraw.Draw(layer)
    if fill == "monogram":
        letters = _initials(style.title)
        face = font(round(r * (1.05 if len(letters) == 1 else 0.78)), "bold")
        paint.text((cx, cy), letters, font=face, fill=bg, anchor="mm")
    elif fill == "sunrise":
        sun = r * 0.62
        horizon = cy + r * 0.28
        paint.pieslice([cx - sun, horizon - sun, cx + sun, horizon + sun], 180, 360, fill=accent)
        for i in range(4):
            y = horizon - sun * (0.18 + 0.2 * i)
            paint.rectangle([cx - sun, y, cx + sun, y + sun * 0.05 * (4 - i)], fill=primary)
        paint.rectangle([cx - r, horizon, cx + r, cy + r], fill=secondary)
    elif fill == "rings":
        for i, color in enumerate((light, secondary, accent, bg)):
            rr = r * (0.78 - 0.18 * i)
            dx = r * 0.12 * math.cos(frame / 12 * 2 * math.pi)
            paint.ellipse([cx - rr + dx, cy - rr, cx + rr + dx, cy + rr], fill=color)
    else:  # facets: the shape cut into triangles from its centre
        count = 6 if shape in ("hexagon", "circle") else 4
        points = _shape_points("hexagon" if count == 6 else "diamond", center, r * 2)  # past the shape's corners
        for i in range(count):
            color = (secondary, accent, light)[i % 3]
            paint.polygon([center, points[i], points[(i + 1) % count]], fill=color)
        inner = r * 0.32
        paint.ellipse([cx - inner, cy - inner, cx + inner, cy + inner], fill=primary)
    mask = Image.new("L", img.size, 0)
    _draw_shape(ImageDraw.Draw(mask), shape, center, r, 255)
    img.paste(layer, (0, 0), mask)


def _mark_place(style: Style, w: int, h: int) -> tuple[tuple[float, float], float]:
    """The mark's centre and radius: in the upper part, or the lower one when the wordmark goes on top."""
    return (w / 2, h * (0.6 if style.text_position == "top" else 0.38)), min(w, h) * 0.21


def _draw_logo(img: Image.Image, style: Style, rng: random.Random, frame: float) -> None:
    center, r = _mark_place(style, *img.size)
    _draw_mark(img, style, center, r, frame)


def _draw_wordmark(img: Image.Image, style: Style) -> None:
    w, h = img.size
    side = min(w, h)
    draw = ImageDraw.Draw(img)
    weight = style.typography
    start = int(side * {"bold": 0.1, "regular": 0.085, "light": 0.07}[weight] * style.text_scale)
    size, lines = _fitted(_display(style), w * _text_width(style), start, weight)
    tracking = _tracking(size, weight)
    line_height = size * 1.2
    block = line_height * len(lines) + size * 0.5 + (size * 0.5 if style.subtitle else 0)
    (_, cy), r = _mark_place(style, w, h)
    y = cy - r * 1.3 - block if style.text_position == "top" else cy + r * 1.3  # clear of the mark's ring
    for line in lines:
        x = (w - _line_width(line, size, tracking, weight)) / 2
        _draw_line(draw, (x, y), line, size, tracking, weight, fill=style.ink)
        y += line_height
    rule = side * 0.06
    y += size * 0.2
    draw.rectangle([w / 2 - rule, y, w / 2 + rule, y + max(2, size * 0.06)], fill=style.palette[3])
    if style.subtitle:
        small = max(10, int(size * 0.34))
        sub = style.subtitle.upper()
        sub_tracking = small * 0.5
        x = (w - _line_width(sub, small, sub_tracking, "subtitle")) / 2
        _draw_line(draw, (x, y + size * 0.25), sub, small, sub_tracking, "subtitle", fill=style.ink)


LAYOUTS = {"poster": _draw_poster, "landscape": _draw_landscape, "pattern": _draw_pattern, "logo": _draw_logo}


def render_frame(style: Style, size: tuple[int, int], frame: float = 0.0, progress: Progress | None = None):
    """One RGB image of `size`, drawn at twice the size and scaled down."""
    big = (size[0] * SUPERSAMPLE, size[1] * SUPERSAMPLE)
    img = Image.new("RGB", big, style.background)
    rng = random.Random(style.seed)  # noqa: S311 - art, not crypto
    if progress:
        progress(40)
    LAYOUTS.get(style.layout, _draw_poster)(img, style, rng, frame)
    if style.show_text and style.title:
        (_draw_wordmark if style.layout == "logo" else _draw_text)(img, style)
    if progress:
        progress(80)
    return img.resize(size, Image.Resampling.LANCZOS)


def _size(params: dict[str, Any], default: tuple[int, int], *, square: bool = False) -> tuple[int, int]:
    if square and ("width" in params) != ("height" in params):  # one side given: a logo stays square
        side = int(params.get("width", params.get("height", default[0])))
        return side, side
    return int(params.get("width", default[0])), int(params.get("height", default[1]))


def render_image(prompt: str, params: dict[str, Any] | None = None, progress: Progress | None = None) -> Output:
    params = params or {}
    style = style_for(prompt, params)
    if progress:
        progress(10)
    size = _size(params, DEFAULT_SIZES.get(style.layout, DEFAULT_SIZES["poster"]), square=style.layout == "logo")
    img = render_frame(style, size, progress=progress)
    buffer = io.BytesIO()
    img.save(buffer, format="PNG", optimize=False)
    return Output(
        content=buffer.getvalue(),
        media_type="image/png",
        filename="image.png",
        meta=_meta(style, size, renderer="procedural-image-1"),
    )


def render_animation(prompt: str, params: dict[str, Any] | None = None, progress: Progress | None = None) -> Output:
    params = params or {}
    style = style_for(prompt, params)
    if progress:
        progress(10)
    size = _size(params, (512, 512))
    count = int(params.get("frames", 12))
    frames = []
    for i in range(count):
        frames.append(render_frame(style, size, frame=i * 12 / count))
        if progress:
            progress(10 + round(80 * (i + 1) / count))
    duration = round(1000 / float(params.get("fps", 10)))
    content, media_type, filename = _encode_animation(frames, duration)
    meta = _meta(style, size, renderer="procedural-animation-1")
    meta |= {"frames": count, "frame_duration_ms": duration, "duration_ms": duration * count}
    return Output(content=content, media_type=media_type, filename=filename, meta=meta)


def _encode_animation(frames: list[Image.Image], duration: int) -> tuple[bytes, str, str]:
    """Animated WebP where Pillow has it, else GIF: (bytes, media type, file name)."""
    buffer = io.BytesIO()
    if features.check("webp"):
        frames[0].save(
            buffer, format="WEBP", save_all=True, append_images=frames[1:], duration=duration, loop=0, quality=82
        )
        return buffer.getvalue(), "image/webp", "animation.webp"
    frames[0].save(buffer, format="GIF", save_all=True, append_images=frames[1:], duration=duration, loop=0)
    return buffer.getvalue(), "image/gif", "animation.gif"


def render_from_source(
    source: Image.Image,
    params: dict[str, Any] | None = None,
    progress: Progress | None = None,
    *,
    kind: str = "video",
    prompt: str = "",
) -> Output:
    """Make the work from the person's own image (the job's source): an image is traced from a drawing into a
    clean mark, or toned from a photo (workspace/providers/tracing.py); a video animates the image."""
    if kind == "image":
        return _image_from_source(source, params or {}, prompt, progress)
    return _animate_source(source, params, progress)


def _image_from_source(source: Image.Image, params: dict[str, Any], prompt: str, progress: Progress | None) -> Output:
    """A drawing, or anything asked as a logo, is traced into a clean mark above the wordmark; a photo becomes a
    duotone in the palette. The wordmark is a name the person gave (`title`, or a name in their words), never a
    style word of the request: with no name, there is none."""
    style = style_for(prompt, params)
    drawn = tracing.looks_drawn(source)
    layout = style.layout
    size = _size(params, DEFAULT_SIZES.get(layout, DEFAULT_SIZES["logo"]), square=layout == "logo")
    wordmark = tracing.wordmark_for(prompt, params.get("title"))
    if progress:
        progress(30)
    make = tracing.logo_from_sketch if drawn or layout == "logo" else tracing.duotone_from_photo
    made = make(source, size=size, palette=style.palette, wordmark=wordmark, font=font, weight=style.typography)
    if progress:
        progress(80)
    buffer = io.BytesIO()
    made.image.save(buffer, format="PNG", optimize=True)
    meta = _meta(style, size, renderer=f"procedural-source-{made.method}-1") | {
        "layout": layout,
        "title": made.wordmark,
        "wordmark": made.wordmark,
        "source_artifact_id": params.get("source_artifact_id"),
        "method": made.method,
        "mark_box": list(made.mark_box),
        "source_box": list(made.source_box),
        "stroke_coverage": round(made.coverage, 4),
    }
    meta.pop("mark", None)
    return Output(content=buffer.getvalue(), media_type="image/png", filename="logo.png", meta=meta)


def _animate_source(source: Image.Image, params: dict[str, Any] | None, progress: Progress | None) -> Output:
    """Animate an existing image: a slow push-in and pan across it ("Ken Burns"), `seconds` long."""
    params = params or {}
    fps = float(params.get("fps", 8))
    count = max(2, min(MAX_FRAMES, round(int(params.get("seconds", 5)) * fps)))
    size = _size(params, (512, 512))
    source = source.convert("RGB")
    frames = []
    for i in range(count):
        t = i / (count - 1)
        zoom = 1.0 + 0.18 * t  # the crop shrinks as the camera pushes in
        crop_w, crop_h = source.width / zoom, source.height / zoom
        left = (source.width - crop_w) * (0.25 + 0.5 * t)
        top = (source.height - crop_h) * 0.5
        frame = source.crop((round(left), round(top), round(left + crop_w), round(top + crop_h)))
        frames.append(frame.resize(size, Image.Resampling.LANCZOS))
        if progress:
            progress(10 + round(80 * (i + 1) / count))
    duration = round(1000 / fps)
    content, media_type, filename = _encode_animation(frames, duration)
    meta = {
        "width": size[0],
        "height": size[1],
        "renderer": "procedural-source-animation-1",
        "source_artifact_id": params.get("source_artifact_id"),
        "frames": count,
        "frame_duration_ms": duration,
        "duration_ms": duration * count,
    }
    return Output(content=content, media_type=media_type, filename=filename, meta=meta)


# What a version records of how it was rendered: given back as params, they render it again; an edit moves them.
RECORDED = (
    "palette",
    "layout",
    "motif",
    "typography",
    "title",
    "subtitle",
    "text_position",
    "seed",
    "shape",
    "width",
    "height",
    "frames",
    "fps",
    *LOOK_DEFAULTS,
)


def _meta(style: Style, size: tuple[int, int], *, renderer: str) -> dict[str, Any]:
    meta = {
        "width": size[0],
        "height": size[1],
        "renderer": renderer,
        "palette": style.palette_name,
        "colors": ["#{:02x}{:02x}{:02x}".format(*c) for c in style.palette],
        **{name: round(getattr(style, name), 3) for name in LOOK_DEFAULTS},
        "layout": style.layout,
        "motif": style.motif,
        "typography": style.typography,
        "title": style.title,
        "subtitle": style.subtitle,
        "text_position": style.text_position,
        "seed": style.seed,
    } | ({"mark": style.motif} if style.layout == "logo" else {})
    if style.layout == "poster" and style.show_text and style.title and size[1]:
        meta["title_px"] = _title_box(style, *size).size  # the headline's drawn size, in output pixels
    return meta


def recorded_params(meta: dict[str, Any]) -> dict[str, Any]:
    """The parameters a version's meta recorded (see RECORDED): what renders it again."""
    return {name: meta[name] for name in RECORDED if meta.get(name) is not None}


# --- 3D -------------------------------------------------------------------------------------------------------


def _normal(a, b, c) -> tuple[float, float, float]:
    u = [b[i] - a[i] for i in range(3)]
    v = [c[i] - a[i] for i in range(3)]
    n = (u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0])
    length = math.sqrt(sum(x * x for x in n)) or 1.0
    return (n[0] / length, n[1] / length, n[2] / length)


Vertex = tuple[float, float, float]
# A shape: its vertices, its faces (vertex-index polygons, counter-clockwise seen from outside) and, per face, the
# palette colour it takes (faces of one colour read as one part: a cup's wall, a ball's wedge).
Shape = tuple[list[Vertex], list[tuple[int, ...]], list[int]]
SEGMENTS = 24  # around a round shape: few enough to read as low-poly, enough to read as round


def _outward(vertices: list[Vertex], face: tuple[int, ...], inside: Vertex) -> tuple[int, ...]:
    """The face wound so that its normal points away from `inside` (a point within the solid, near the face)."""
    a, b, c = (vertices[i] for i in face[:3])
    normal = _normal(a, b, c)
    centre = [sum(vertices[i][k] for i in face) / len(face) for k in range(3)]
    facing = sum(normal[k] * (centre[k] - inside[k]) for k in range(3))
    return face if facing > 0 else tuple(reversed(face))


def _ring(y: float, radius: float, n: int = SEGMENTS) -> list[Vertex]:
    return [(radius * math.cos(2 * math.pi * i / n), y, radius * math.sin(2 * math.pi * i / n)) for i in range(n)]


def _cylinder() -> Shape:
    n = SEGMENTS
    vertices = _ring(-1.0, 1.0) + _ring(1.0, 1.0)
    sides = [(i, (i + 1) % n, n + (i + 1) % n, n + i) for i in range(n)]
    caps = [tuple(range(n)), tuple(range(n, 2 * n))]
    faces = [_outward(vertices, f, (0.0, 0.0, 0.0)) for f in sides + caps]
    return vertices, faces, [0] * n + [1, 2]


def _cone() -> Shape:
    n = SEGMENTS
    vertices = [*_ring(-1.0, 1.0), (0.0, 1.4, 0.0)]
    faces = [_outward(vertices, (i, (i + 1) % n, n), (0.0, 0.0, 0.0)) for i in range(n)]
    faces.append(_outward(vertices, tuple(range(n)), (0.0, 0.0, 0.0)))
    return vertices, faces, [0] * n + [1]


def _sphere(stacks: int = 12) -> Shape:
    n = SEGMENTS
    vertices: list[Vertex] = [(0.0, 1.0, 0.0)]
    for s in range(1, stacks):
        angle = math.pi * s / stacks
        vertices += _ring(math.cos(angle), math.sin(angle))
    vertices.append((0.0, -1.0, 0.0))
    bottom = len(vertices) - 1

    def at(s: int, i: int) -> int:  # ring s (1..stacks-1), segment i
        return 1 + (s - 1) * n + i % n

    faces, colours = [], []
    for i in range(n):
        wedge = i * 4 // n  # four wedges of colour, like a beach ball
        faces.append((0, at(1, i), at(1, i + 1)))
        faces += [(at(s, i), at(s + 1, i), at(s + 1, i + 1), at(s, i + 1)) for s in range(1, stacks - 1)]
        faces.append((at(stacks - 1, i), bottom, at(stacks - 1, i + 1)))
        colours += [wedge] * stacks
    return vertices, [_outward(vertices, f, (0.0, 0.0, 0.0)) for f in faces], colours


def _torus(major: float = 1.0, minor: float = 0.42, tube: int = 12) -> Shape:
    n = SEGMENTS
    vertices: list[Vertex] = []
    for i in range(n):
        u = 2 * math.pi * i / n
        for j in range(tube):
            v = 2 * math.pi * j / tube
            r = major + minor * math.cos(v)
            vertices.append((r * math.cos(u), minor * math.sin(v), r * math.sin(u)))
    faces, colours = [], []
    for i in range(n):
        u = 2 * math.pi * (i + 0.5) / n
        core = (major * math.cos(u), 0.0, major * math.sin(u))  # the tube's centre line, inside the solid
        for j in range(tube):
            quad = (
                i * tube + j,
                i * tube + (j + 1) % tube,
                ((i + 1) % n) * tube + (j + 1) % tube,
                ((i + 1) % n) * tube + j,
            )
            faces.append(_outward(vertices, quad, core))
            colours.append((i * 6 // n) % 3)  # six arcs in three colours around the ring
    return vertices, faces, colours


# name → Shape
_SHAPES: dict[str, Shape] = {
    "cube": (
        [(-1, -1, -1), (1, -1, -1), (1, 1, -1), (-1, 1, -1), (-1, -1, 1), (1, -1, 1), (1, 1, 1), (-1, 1, 1)],
        [(0, 3, 2, 1), (4, 5, 6, 7), (0, 1, 5, 4), (2, 3, 7, 6), (1, 2, 6, 5), (0, 4, 7, 3)],
        list(range(6)),
    ),
    "prism": (
        [(-1, -1, -1), (1, -1, -1), (0, 1, -1), (-1, -1, 1), (1, -1, 1), (0, 1, 1)],
        [(0, 2, 1), (3, 4, 5), (0, 1, 4, 3), (1, 2, 5, 4), (2, 0, 3, 5)],
        list(range(5)),
    ),
    "pyramid": (
        [(-1, -1, -1), (1, -1, -1), (1, -1, 1), (-1, -1, 1), (0, 1.2, 0)],
        [(0, 1, 2, 3), (0, 4, 1), (1, 4, 2), (2, 4, 3), (3, 4, 0)],
        list(range(5)),
    ),
    "cylinder": _cylinder(),
    "cone": _cone(),
    "sphere": _sphere(),
    "torus": _torus(),
}


def build_gltf(style: Style) -> dict[str, Any]:
    """A glTF 2.0 asset: one flat-shaded mesh, each face coloured from the palette, buffer embedded."""
    vertices, faces, face_bands = _SHAPES.get(style.shape, _SHAPES["cube"])
    vertices = [(x * style.stretch_x, y * style.stretch_y, z * style.stretch_x) for x, y, z in vertices]
    face_colors = list(style.palette[1:5])
    positions: list[tuple[float, float, float]] = []
    normals: list[tuple[float, float, float]] = []
    colors: list[tuple[float, float, float, float]] = []
    indices: list[int] = []
    for f, face in enumerate(faces):
        # Outward winding is counter-clockwise; each face gets its own vertices so its normal is flat.
        corners = [vertices[i] for i in face]
        normal = _normal(corners[0], corners[1], corners[2])
        color = tuple(c / 255 for c in face_colors[face_bands[f] % len(face_colors)]) + (1.0,)
        start = len(positions)
        for corner in corners:
            # As stored (float32), so the accessor's min/max match the data exactly.
            positions.append(tuple(struct.unpack("<3f", struct.pack("<3f", *corner))))
            normals.append(normal)
            colors.append(color)
        for k in range(1, len(corners) - 1):
            indices += [start, start + k, start + k + 1]
    pos_bytes = b"".join(struct.pack("<3f", *p) for p in positions)
    nor_bytes = b"".join(struct.pack("<3f", *n) for n in normals)
    col_bytes = b"".join(struct.pack("<4f", *c) for c in colors)
    idx_bytes = b"".join(struct.pack("<H", i) for i in indices)
    idx_bytes += b"\x00" * (-len(idx_bytes) % 4)
    blob = pos_bytes + nor_bytes + col_bytes + idx_bytes
    offsets = [0, len(pos_bytes), len(pos_bytes) + len(nor_bytes), len(pos_bytes) + len(nor_bytes) + len(col_bytes)]
    count = len(positions)
    return {
        "asset": {"version": "2.0", "generator": "Lomote procedural-3d-1"},
        "scene": 0,
        "scenes": [{"name": style.title, "nodes": [0]}],
        "nodes": [{"name": style.shape, "mesh": 0}],
        "meshes": [
            {
                "name": style.title,
                "primitives": [
                    {
                        "attributes": {"POSITION": 0, "NORMAL": 1, "COLOR_0": 2},
                        "indices": 3,
                        "material": 0,
                        "mode": 4,
                    }
                ],
            }
        ],
        "materials": [
            {
                "name": style.palette_name,
                "pbrMetallicRoughness": {
                    "baseColorFactor": [1, 1, 1, 1],
                    "metallicFactor": 0.0,
                    "roughnessFactor": 0.6,
                },
            }
        ],
        "buffers": [
            {
                "byteLength": len(blob),
                "uri": "data:application/octet-stream;base64," + base64.b64encode(blob).decode("ascii"),
            }
        ],
        "bufferViews": [
            {"buffer": 0, "byteOffset": offsets[0], "byteLength": len(pos_bytes), "target": 34962},
            {"buffer": 0, "byteOffset": offsets[1], "byteLength": len(nor_bytes), "target": 34962},
            {"buffer": 0, "byteOffset": offsets[2], "byteLength": len(col_bytes), "target": 34962},
            {"buffer": 0, "byteOffset": offsets[3], "byteLength": len(indices) * 2, "target": 34963},
        ],
        "accessors": [
            {
                "bufferView": 0,
                "componentType": 5126,
                "count": count,
                "type": "VEC3",
                "min": [min(p[i] for p in positions) for i in range(3)],
                "max": [max(p[i] for p in positions) for i in range(3)],
            },
            {"bufferView": 1, "componentType": 5126, "count": count, "type": "VEC3"},
            {"bufferView": 2, "componentType": 5126, "count": count, "type": "VEC4"},
            {"bufferView": 3, "componentType": 5123, "count": len(indices), "type": "SCALAR"},
        ],
    }


def render_model(prompt: str, params: dict[str, Any] | None = None, progress: Progress | None = None) -> Output:
    style = style_for(prompt, params)
    if progress:
        progress(10)
    asset = build_gltf(style)
    if progress:
        progress(80)
    content = json.dumps(asset, separators=(",", ":")).encode()
    meta = _meta(style, (0, 0), renderer="procedural-3d-1")
    for key in ("width", "height", "layout", "motif", "typography", "text_position"):
        meta.pop(key)
    meta |= {"shape": style.shape, "triangles": asset["accessors"][3]["count"] // 3}
    return Output(content=content, media_type="model/gltf+json", filename="model.gltf", meta=meta)


RENDERERS = {"image": render_image, "video": render_animation, "3d": render_model}


def render(kind: str, prompt: str, params: dict[str, Any] | None = None, progress: Progress | None = None) -> Output:
    return RENDERERS[kind](prompt, params or {}, progress)


# --- the provider ---------------------------------------------------------------------------------------------

_PARAM_TYPES: dict[str, tuple[type, ...]] = {
    "width": (int,),
    "height": (int,),
    "seed": (int,),
    "frames": (int,),
    "fps": (int, float),
    **{name: (int, float) for name in LOOK_DEFAULTS},
    "title": (str,),
    "subtitle": (str,),
    "text_position": (str,),
    "palette": (str,),
    "layout": (str,),
    "shape": (str,),
    "seconds": (int,),
    "source_artifact_id": (int,),
    "motif": (str,),
    "typography": (str,),
    "changes": (list,),
}
_PARAM_CHOICES = {
    "text_position": {"top", "middle", "bottom"},
    "palette": set(PALETTES),
    "layout": set(LAYOUTS),
    "shape": set(_SHAPES),
    "typography": {"bold", "regular", "light"},
}


class ProceduralProvider(WorkerProvider):
    name = "procedural"
    kinds = frozenset({"image", "video", "3d"})
    cost_hints = {"image": 1, "video": 4, "3d": 2}
    rerun_safe = True  # deterministic and free: a redelivered job may render again

    def check(self, kind: str, params: dict[str, Any]) -> None:
        super().check(kind, params)
        errors: dict[str, list[str]] = {}
        for name, value in params.items():
            types = _PARAM_TYPES.get(name)
            if types is None:
                errors[name] = ["Unknown parameter."]
            elif isinstance(value, bool) or not isinstance(value, types):
                errors[name] = [f"Expected {' or '.join(t.__name__ for t in types)}."]
            elif name in _PARAM_CHOICES and value not in _PARAM_CHOICES[name]:
                errors[name] = [f"One of {', '.join(sorted(_PARAM_CHOICES[name]))}."]
            elif name in ("width", "height") and not MIN_SIDE <= value <= MAX_SIDE:
                errors[name] = [f"Between {MIN_SIDE} and {MAX_SIDE}."]
            elif name == "frames" and not 2 <= value <= MAX_FRAMES:
                errors[name] = [f"Between 2 and {MAX_FRAMES}."]
            elif name == "fps" and not 1 <= value <= 30:
                errors[name] = ["Between 1 and 30."]
            elif name == "seconds" and not 1 <= value <= 60:
                errors[name] = ["Between 1 and 60."]
            elif name == "source_artifact_id" and kind not in ("image", "video"):
                errors[name] = ["Only an image or a video can start from an existing image."]
            elif name in LOOK_BOUNDS and not LOOK_BOUNDS[name][0] <= value <= LOOK_BOUNDS[name][1]:
                errors[name] = ["Between {} and {}.".format(*LOOK_BOUNDS[name])]
            elif name == "changes" and (not value or any(change not in EDIT_CHANGES for change in value)):
                errors[name] = [f"A list of: {', '.join(EDIT_CHANGES)}."]
            elif name in ("title", "subtitle") and len(value) > 60:
                errors[name] = ["At most 60 characters."]
        if errors:
            raise InvalidInput("Some generation parameters are invalid.", details={"fields": {"params": errors}})

    def work(self, job, report: ReportFn) -> None:
        report("running", progress=5)

        def progress(percent: int) -> None:
            report("running", progress=percent)

        params = dict(job.params or {})
        if params.get("changes"):
            params = _edited(job, params)
        source_id = params.get("source_artifact_id")
        if source_id is not None:
            source = _source_image(job.workspace_id, source_id)
            output = render_from_source(source, params, progress=progress, kind=job.kind, prompt=job.prompt)
        else:
            output = render(job.kind, job.prompt, params, progress=progress)
        if job.params and job.params.get("changes"):
            output = Output(
                content=output.content,
                media_type=output.media_type,
                filename=output.filename,
                meta={**output.meta, "changes": list(job.params["changes"])},
            )
        report("succeeded", output=output)


def _edited(job, params: dict[str, Any]) -> dict[str, Any]:
    """An edit's parameters: those its base version recorded, moved by the changes asked (workspace/providers/
    edits.py). The person's words (what the prompt adds to the base version's) only break ties."""
    changes = list(params.pop("changes"))
    recorded: dict[str, Any] = {}
    words = job.prompt
    if job.artifact_id is not None and job.base_version is not None:
        base = artifact_version_get(workspace_id=job.workspace_id, artifact_id=job.artifact_id, number=job.base_version)
        recorded = recorded_params(base.meta or {})
        base_prompt = str((base.meta or {}).get("prompt") or "")
        if base_prompt and job.prompt.startswith(base_prompt):
            words = job.prompt[len(base_prompt) :]
    layout = str(recorded.get("layout") or params.get("layout") or "poster")
    edited = edit_params(
        recorded,
        changes,
        words=words,
        palettes=PALETTE_WORDS | {name: () for name in PALETTES if name not in PALETTE_WORDS},
        default_position="bottom" if layout in ("poster", "logo") else "top",
    )
    # The job's own explicit params (the video's seconds, its source) stay as asked.
    return {**edited, **params}


def _source_image(workspace_id: int, artifact_id: int) -> Image.Image:
    """The current version of an image artifact of the same workspace (NotFound otherwise)."""
    version = artifact_version_get(workspace_id=workspace_id, artifact_id=artifact_id)
    if not version.file:
        raise InvalidInput("The source artifact has no image file.", code="source_not_an_image")
    with version.file.open("rb") as f:
        image = Image.open(io.BytesIO(f.read()))
        image.load()
    return image
