"""Edits as parameter changes (DESIGN §15): the changes a person asked of a version → its next parameters.

An edit never re-reads the words of the work: the version being edited recorded the parameters it was rendered
with (its meta, see procedural `_meta`), and each change asked ("brighter", "text_bigger"…, the labels the
understanding layer's `edit` decision reads) moves one or more of them by a bounded step, relative to what was
recorded. Everything else recorded — the title (the work's subject), the seed (its composition), the palette,
the layout — is carried over unchanged, so "brighter" gives the same poster, measurably brighter.

Words may only break a tie that the change leaves open: which palette when "palette" is asked, where the text
goes when "text_move" is asked. They never decide a change.
"""

import re
from typing import Any

from lomote.understanding.normalise import fold

# The changes an edit may ask, the same labels as the understanding layer's `edit` decision (a test holds them
# equal): the renderer's vocabulary, not the person's words.
EDIT_CHANGES = (
    "brighter",
    "darker",
    "warmer",
    "cooler",
    "more_saturated",
    "less_saturated",
    "more_contrast",
    "less_contrast",
    "text_bigger",
    "text_smaller",
    "text_move",
    "palette",
    "shorter",
    "longer",
    "rounder",
    "taller",
    "flatter",
    "wider",
    "narrower",
    "mood_calmer",
    "mood_livelier",
)

# The look parameters, each with its neutral value and the bounds an edit keeps it in.
LOOK_DEFAULTS: dict[str, float] = {
    "warmth": 0.0,
    "brightness": 1.0,
    "saturation": 1.0,
    "contrast": 1.0,
    "text_scale": 1.0,
    "roundness": 0.0,
    "stretch_x": 1.0,  # a 3D model's proportions (width, height); a picture's are its canvas size
    "stretch_y": 1.0,
}
LOOK_BOUNDS: dict[str, tuple[float, float]] = {
    "warmth": (-1.0, 1.0),
    "brightness": (0.4, 1.8),
    "saturation": (0.0, 2.0),
    "contrast": (0.5, 1.8),
    "text_scale": (0.5, 1.8),
    "roundness": (0.0, 1.0),
    "stretch_x": (0.4, 2.5),
    "stretch_y": (0.4, 2.5),
}
SIDE_BOUNDS = (64, 2048)  # the procedural provider's own (MIN_SIDE, MAX_SIDE)
# A proportion change moves a picture's canvas side when its version recorded one, else the model's stretch.
STRETCH_SIDES = {"stretch_x": "width", "stretch_y": "height"}
FRAMES_BOUNDS = (2, 48)

# change → {parameter: (how, amount)}: "mul" scales what was recorded, "add" adds to it. One step is clearly
# visible (a brighter poster's mean luminance rises by several levels) and stays well inside the bounds, so a
# second "brighter" still moves it.
STEPS: dict[str, dict[str, tuple[str, float]]] = {
    "brighter": {"brightness": ("mul", 1.25)},
    "darker": {"brightness": ("mul", 0.78)},
    "warmer": {"warmth": ("add", 0.35)},
    "cooler": {"warmth": ("add", -0.35)},
    "more_saturated": {"saturation": ("mul", 1.35)},
    "less_saturated": {"saturation": ("mul", 0.6)},
    "more_contrast": {"contrast": ("mul", 1.25)},
    "less_contrast": {"contrast": ("mul", 0.8)},
    "text_bigger": {"text_scale": ("mul", 1.3)},
    "text_smaller": {"text_scale": ("mul", 0.75)},
    "rounder": {"roundness": ("add", 0.5)},
    "taller": {"stretch_y": ("mul", 1.3)},
    "flatter": {"stretch_y": ("mul", 0.77)},
    "wider": {"stretch_x": ("mul", 1.3)},
    "narrower": {"stretch_x": ("mul", 0.77)},
    # a mood is the look's energy: calmer is softer and quieter, livelier is more vivid and punchier
    "mood_calmer": {"saturation": ("mul", 0.75), "contrast": ("mul", 0.88), "brightness": ("mul", 1.06)},
    "mood_livelier": {"saturation": ("mul", 1.3), "contrast": ("mul", 1.12)},
    "shorter": {"frames": ("mul", 0.6)},
    "longer": {"frames": ("mul", 1.6)},
}

# Tie-breakers only (see the module docstring): where the text goes when the person asked to move it.
POSITION_WORDS: dict[str, frozenset[str]] = {
    "top": frozenset("top up higher above haut monte remonte oben hoch arriba sube encima cima topo sobe".split()),
    "bottom": frozenset("bottom down lower below bas descends unten abajo baja baixo desce fundo".split()),
    "middle": frozenset("middle centre center centered centred milieu centre mitte centro meio".split()),
}
NEXT_POSITION = {"bottom": "top", "top": "bottom", "middle": "top"}


def _bounded(name: str, value: float) -> float:
    low, high = LOOK_BOUNDS[name]
    return round(max(low, min(high, value)), 3)


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", fold(text or "")))


def _position(current: str, words: set[str]) -> str:
    named = [position for position, keys in POSITION_WORDS.items() if words & keys and position != current]
    return named[0] if len(named) == 1 else NEXT_POSITION.get(current, "top")


def _palette(current: str, palettes: dict[str, tuple[str, ...]], words: set[str]) -> str:
    """The palette the person's words name, else the next one after the current (a visible change either way)."""
    named = [name for name, keys in palettes.items() if name != current and words & {fold(k) for k in keys}]
    if named:
        return named[0]
    order = list(palettes)
    return order[(order.index(current) + 1) % len(order)] if current in order else order[0]


def edit_params(
    recorded: dict[str, Any],
    changes: list[str],
    *,
    words: str = "",
    palettes: dict[str, tuple[str, ...]] | None = None,
    default_position: str = "bottom",
) -> dict[str, Any]:
    """The parameters of the next version: `recorded` (the edited version's own) moved by each change.

    Unknown changes raise ValueError (the provider's `check` refuses them before any job is stored)."""
    unknown = [change for change in changes if change not in EDIT_CHANGES]
    if unknown:
        raise ValueError(f"unknown edit change(s): {', '.join(unknown)}")
    params = dict(recorded)
    for name, neutral in LOOK_DEFAULTS.items():
        params[name] = float(params.get(name, neutral))
    said = _words(words)
    for change in dict.fromkeys(changes):  # each change once, in the order asked
        for name, (how, amount) in STEPS.get(change, {}).items():
            if name == "frames":
                if "frames" in params:
                    low, high = FRAMES_BOUNDS
                    params["frames"] = max(low, min(high, round(int(params["frames"]) * amount)))
                continue
            side = STRETCH_SIDES.get(name)
            if side and side in params:
                low, high = SIDE_BOUNDS
                params[side] = max(low, min(high, round(int(params[side]) * amount)))
                continue
            value = params[name] * amount if how == "mul" else params[name] + amount
            params[name] = _bounded(name, value)
        if change == "text_move":
            params["text_position"] = _position(str(params.get("text_position") or default_position), said)
        elif change == "palette" and palettes:
            params["palette"] = _palette(str(params.get("palette") or ""), palettes, said)
    return params
