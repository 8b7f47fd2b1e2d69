"""Which creative guides a piece of work calls for: the scripted planner's reading of the guide list (its names and
one-line purposes, as the context shows them to any model).

A guide fits when the work and the guide name the same kind of work — read through the studio's media lexicon in
six languages (agents/media_words.py), so "une affiche" finds the guide for posters — when the work
is called by the guide's name ("a brand kit"), or when they share several distinctive words. A kind named in the
guide's name weighs more than one in its purpose; at most MAX_GUIDES guides, best first. Work that names no kind
a guide covers (a question, an email) loads none.
"""

from collections.abc import Iterable
from typing import Any

from agents.language import content_terms, words
from agents.media_words import media_kind

NAME_KIND = 3  # the work's kind is the one the guide is named for ("poster" in poster-layout)
PURPOSE_KIND = 2  # the guide's purpose covers that kind too ("flyer" in the poster guide's purpose)
SHARED_TERM = 1  # a distinctive word in common ("storyboard", "shot", "brand")
MATCH = 2  # a kind in common, or two distinctive words
MAX_GUIDES = 2
MIN_TERM = 4  # shorter words ("plan", "use" are 3-4 letters) say little about which guide fits

# The planner's own kinds of work, as media kinds: "animate the photo" is video work though it names a photo.
PLANNER_KINDS = {"video": "video", "3d": "model3d"}


def kinds_of(text: str) -> set[str]:
    return {kind for word in words(text) if (kind := media_kind(word))}


def _terms(text: str) -> set[str]:
    return {t for t in content_terms(text) if len(t) >= MIN_TERM and not t.isdigit() and media_kind(t) is None}


def guides_for(text: str, guides: Iterable[dict[str, Any]], *, planner_kind: str | None = None) -> list[str]:
    """The names of the guides that fit the work `text` describes, best first (ties by name)."""
    work_kinds = kinds_of(text)
    if planner_kind in PLANNER_KINDS:
        work_kinds.add(PLANNER_KINDS[planner_kind])
    work_terms = _terms(text)
    phrase = f" {' '.join(words(text))} "
    scored = []
    for guide in guides:
        name, purpose = str(guide.get("name") or ""), str(guide.get("purpose") or "")
        named = name.replace("-", " ")
        name_kinds = kinds_of(named)
        purpose_kinds = kinds_of(purpose) - name_kinds
        score = NAME_KIND * len(work_kinds & name_kinds) + PURPOSE_KIND * len(work_kinds & purpose_kinds)
        score += SHARED_TERM * len(work_terms & _terms(f"{named} {purpose}"))
        if f" {' '.join(words(named))} " in phrase:  # the work is named as the guide is ("a brand kit")
            score += NAME_KIND
        if name and score >= MATCH:
            scored.append((-score, name))
    return [name for _, name in sorted(scored)[:MAX_GUIDES]]
