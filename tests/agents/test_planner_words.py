"""The scripted planner speaks English, French, German, Spanish and Portuguese (issue 33 item 4): every language has
every phrase of WORDS["en"] with the same placeholders (French may name a noun with its article, {de_noun}), and a
German, Spanish or Portuguese task is answered in its language, not in English."""

import re

import pytest

from agents.scripted.kinds import LABEL_NAMES, choice, label_chosen, titled_label
from agents.scripted.planner import DOMAIN_NAMES, KIND_LABELS, KIND_NAMES, WORDS, _language, items_from_brief

PLACEHOLDER = re.compile(r"\{(\w+)\}")
LANGUAGES = ("fr", "de", "es", "pt")


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_phrase_is_said_with_the_same_placeholders(language):
    english, said = WORDS["en"], WORDS[language]
    assert set(said) == set(english), set(english) ^ set(said)
    for key, text in english.items():
        wanted = set(PLACEHOLDER.findall(text))
        got = set(PLACEHOLDER.findall(said[key]))
        if language == "fr":
            got = {"noun" if name == "de_noun" else name for name in got}
        assert got == wanted, (language, key, said[key])
    for table in (KIND_LABELS, KIND_NAMES, DOMAIN_NAMES, LABEL_NAMES):
        assert set(table[language]) == set(table["en"]), (language, table)


@pytest.mark.parametrize(
    ("language", "brief", "first_title", "option"),
    [
        ("de", "Drei Retro-Plakate für ein Jazzfestival", "Plakat 1 von 3", "Ein Plakat"),
        ("es", "Tres carteles retro para un festival de jazz", "Cartel 1 de 3", "Una imagen"),
        ("pt", "Três cartazes retro para um festival de jazz", "Cartaz 1 de 3", "Uma imagem"),
    ],
)
def test_a_task_in_another_language_is_planned_and_asked_in_it(language, brief, first_title, option):
    assert _language({"language": language}) == language
    titles = items_from_brief(brief, language)
    assert titles[0].startswith(first_title), titles
    # the planner reads its own titles and card options back in that language
    assert titled_label(titles[1], language) == "poster"
    label = "poster" if language == "de" else "image"
    assert choice(label, language) == option
    assert label_chosen(option, language) == label


def test_an_unknown_language_is_answered_in_english():
    assert _language({"language": "it"}) == "en"
    assert _language({"language": ""}) == "en"


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_skeleton_document_is_headed_in_the_tasks_language(language):
    from agents.scripted.skeleton import DEFAULT_HEADINGS, HEADINGS, skeleton
    from agents.scripted.skeleton import WORDS as SKELETON_WORDS

    for _words, headings in (*HEADINGS, (None, DEFAULT_HEADINGS)):
        assert len(headings[language]) == len(headings["en"]), headings
    assert set(SKELETON_WORDS[language]) == set(SKELETON_WORDS["en"])
    made = skeleton(title="T", brief="newsletter", lang=language)
    assert SKELETON_WORDS[language]["unwritten"] in made
    assert SKELETON_WORDS["en"]["unwritten"] not in made
