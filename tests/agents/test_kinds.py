"""The kind of work, its format, how many and the subject, read by meaning (lomote/understanding) for the scripted
planner (agents/scripted/kinds.py, agents/scripted/planner.py): unit tests of the decisions and of the titles
and formats the planner derives from them. No database: the layer trains on its banks once per process.
"""

import pytest

from agents.scripted.kinds import FORMAT_OF_LABEL, format_of, label_of, likely_choices, titled_label
from agents.scripted.kinds import kind_read as read
from agents.scripted.planner import STRATEGIES, classify, items_from_brief
from lomote.understanding.counts import count_of
from lomote.understanding.subject import subject_of


@pytest.mark.parametrize(
    ("text", "label", "image_format"),
    [
        ("Could you make me three Instagram posts announcing our winter pottery classes?", "social_post", "square"),
        ("trois visuels carrés pour Instagram pour nos cours de poterie", "social_post", "square"),
        ("drei Instagram-Posts für unseren Töpferkurs", "social_post", "square"),
        ("¿Puedes hacer dos portadas de historia para el mercado de Navidad?", "story_cover", "story"),
        ("Erstelle bitte zwei Banner für unser Sommerfest am See", "banner", "wide"),
        ("A logo for my ceramics studio called Terre & Feu", "logo", "logo"),
    ],
)
def test_it_reads_the_kind_and_gives_it_its_format(text, label, image_format):
    decision = read(text)
    assert (decision.label, decision.abstained) == (label, False)
    assert format_of(decision.label) == image_format


def test_every_image_kind_has_a_strategy_and_only_image_kinds_have_a_format():
    for label in ("image", "poster", "logo", "sticker", "icon", "social_post", "story_cover", "banner"):
        assert next(s for s in STRATEGIES if label in s.labels).tool == "generate_image"
    assert set(FORMAT_OF_LABEL) <= {"poster", "logo", "sticker", "icon", "social_post", "story_cover", "banner"}
    assert format_of("video") is None and format_of(None) is None


@pytest.mark.parametrize(
    ("text", "tool"),
    [
        ("a short animation of our logo spinning", "generate_video"),
        ("a 3D model of a ceramic teapot", "generate_3d"),
        ("write a blog article about our spring menu", "write_document"),
    ],
)
def test_it_sends_videos_3d_models_and_prose_to_their_tools(text, tool):
    assert classify(text).tool == tool


@pytest.mark.parametrize(
    "text", ["Can you write us a theme tune for the shop's podcast?", "I'd like a website for my bakery"]
)
def test_it_recognises_work_no_tool_makes_and_plans_nothing_for_it(text):
    assert read(text).label == "unsupported"
    assert classify(text) is None and items_from_brief(text, "en") == []


def test_when_it_cannot_tell_it_offers_the_likely_kinds():
    decision = read("Help me with my business")
    assert decision.abstained
    assert 2 <= len(likely_choices(decision)) <= 3


@pytest.mark.parametrize(
    ("text", "language", "count"),
    [
        ("Could you make me three Instagram posts", "en", 3),
        ("trois visuels carrés pour Instagram", "fr", 3),
        ("drei Banner für das Hoffest", "de", 3),
        ("dos portadas para el mercado", "es", 2),
        ("5 posters for the marathon", "en", 5),
        ("a 10 seconds video of the harbour", "en", None),  # a measure, not a count
        ("a poster for the 2024 fair", "en", None),  # a year, not a count
        ("a poster of an elf", "en", None),  # "elf" is eleven only in German
    ],
)
def test_it_counts_the_pieces_asked_in_digits_and_number_words(text, language, count):
    assert count_of(text, language) == count


@pytest.mark.parametrize(
    ("text", "subject"),
    [
        ("Could you make me three Instagram posts announcing our winter pottery classes?", "winter pottery classes"),
        ("A logo for my ceramics studio called Terre & Feu", "Terre & Feu"),
        ("a header for our newsletter about Crumb & Co", "Crumb & Co"),
        ("logo for Northwind. A bit warmer", "Northwind"),  # the change after the request is not its subject
        ('a poster "Harvest Moon" for the fair', "Harvest Moon"),  # quoted: as written
    ],
)
def test_it_reads_the_subject_with_names_kept_and_without_the_request_s_words(text, subject):
    assert subject_of(text) == subject


@pytest.mark.parametrize(
    ("brief", "language", "titles"),
    [
        (
            "Could you make me three Instagram posts announcing our winter pottery classes?",
            "en",
            [f"Social post {n} of 3 — winter pottery classes" for n in (1, 2, 3)],
        ),
        # counted in the person's own language, titled in the planner's
        (
            "drei Instagram-Posts für unseren Töpferkurs",
            "en",
            [f"Social post {n} of 3 — Töpferkurs" for n in (1, 2, 3)],
        ),
        (
            "fais deux autocollants pour la Fête du Cidre",
            "fr",
            [f"Autocollant {n} sur 2 — Fête du Cidre" for n in (1, 2)],
        ),
    ],
)
def test_it_titles_each_piece_by_its_kind_and_the_subject(brief, language, titles):
    assert items_from_brief(brief, language) == titles
    assert {titled_label(title, language) for title in titles} == {label_of(brief)}
