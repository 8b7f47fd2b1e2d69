"""The understanding layer (DESIGN §15): decisions read by meaning, measured on held-out cases, abstaining on noise.

One classifier per decision is trained once for the whole module (the layer's own per-process cache).
"""

import difflib
import subprocess
import sys
import time

import pytest

from lomote.understanding import decide, decide_all, decision_get
from lomote.understanding.banks import ASK, EVAL, SPLITS, bank_load, cases_load
from lomote.understanding.classifier import clauses
from lomote.understanding.evaluation import evaluate, split_accuracy
from lomote.understanding.languages import EVALUATED
from lomote.understanding.normalise import fold, normalise

HELD_OUT_TARGET = 0.95
# The edit decision's held-out figure when this floor was set (README "Understanding by meaning"): a change
# that makes it worse fails here; the 95 % target is tracked by the strict xfail below.
EDIT_HELD_OUT_FLOOR = 0.88


@pytest.fixture(scope="module")
def reports():
    started = time.monotonic()
    measured = {name: evaluate(name) for name in ("kind", "edit")}
    # Not asserted (the machine is shared), printed for the record: DESIGN §15 asks < 60 s on 2 cores.
    print(f"\nunderstanding: training and evaluation of both decisions took {time.monotonic() - started:.1f} s")
    return measured


def test_it_reads_the_kind_of_work_right_on_at_least_95_percent_of_held_out_cases(reports):
    # Given the kind decision trained on its bank, when it reads the held-out cases (abstentions wrong unless
    # "ask"), then at least 95 % are right, overall and in every evaluated language.
    report = reports["kind"]
    assert split_accuracy(report, "heldout") >= HELD_OUT_TARGET, report.misses
    for language in EVALUATED:
        right, total = report.by_split_language[("heldout", language)]
        assert right / total >= 0.9, (language, right, total)


@pytest.mark.xfail(strict=True, reason="edit intent reads ≈93 % of held-out cases: below the 95 % target (README)")
def test_it_reads_edit_intents_right_on_at_least_95_percent_of_held_out_cases(reports):
    assert split_accuracy(reports["edit"], "heldout") >= HELD_OUT_TARGET


def test_it_keeps_edit_intents_at_least_at_their_measured_held_out_figure(reports):
    assert split_accuracy(reports["edit"], "heldout") >= EDIT_HELD_OUT_FLOOR


def test_it_measures_every_decision_on_enough_cases_in_five_languages_with_30_percent_held_out():
    for name, minimum in (("kind", 400), ("edit", 300)):
        cases = cases_load(name)
        assert len(cases) >= minimum
        assert {case.language for case in cases} >= set(EVALUATED)
        assert sum(case.split == "heldout" for case in cases) / len(cases) >= 0.3
        assert {case.split for case in cases} == set(SPLITS)


def test_it_never_holds_a_held_out_case_or_a_near_copy_of_one_in_an_exemplar_bank():
    for name in ("kind", "edit"):
        bank = [fold(text) for text in bank_load(name).texts]
        held_out = [fold(case.text) for case in cases_load(name) if case.split == "heldout"]
        copies = {text: difflib.get_close_matches(text, bank, n=1, cutoff=0.9) for text in held_out}
        assert not {text: close for text, close in copies.items() if close}


@pytest.mark.parametrize(
    "text",
    [
        "Could you make me three Instagram posts announcing our winter pottery classes?",
        "Peux-tu créer trois visuels carrés pour Instagram annonçant nos cours de poterie d'hiver ?",
    ],
)
def test_it_reads_the_issue_s_requests_as_square_social_posts(text):
    decision = decide("kind", text)
    assert (decision.label, decision.abstained) == ("social_post", False)
    assert decision.ranking[0][0] == "social_post"


@pytest.mark.parametrize(
    "text",
    ["not so dark", "less gloomy", "pas trop sombre", "nicht so dunkel", "no tan oscuro", "não tão escuro"],
)
def test_it_reads_a_negated_darkness_as_a_request_for_brightness(text):
    assert [decision.label for decision in decide_all("edit", text)] == ["brighter"]


def test_it_reads_two_changes_asked_in_one_sentence():
    decisions = decide_all("edit", "The second post is too dark, brighten it and make the text bigger")
    assert {decision.label for decision in decisions} == {"brighter", "text_bigger"}


@pytest.mark.parametrize("text", ["asdf qwerty zxcv", "thanks!", "bonjour", "wie viel Guthaben habe ich noch?"])
def test_it_abstains_on_words_that_ask_for_no_work(text):
    decision = decide("kind", text)
    assert decision.abstained and decision.label == ASK
    assert decision.ranking  # the likely choices for the card that asks the person


def test_it_gives_the_same_answer_twice():
    text = "un cartel para la fiesta del barrio"
    first, second = decide("kind", text), decide("kind", text)
    assert first == second
    assert decision_get("kind") is decision_get("kind")  # trained once per process


def test_it_cuts_a_sentence_where_the_person_joined_two_requests():
    assert clauses("Éclaircis-la et agrandis le texte, s'il te plaît") == [
        "Éclaircis-la",
        "agrandis le texte",
        "s'il te plaît",
    ]
    assert clauses("make it warmer") == ["make it warmer"]


def test_it_normalises_text_once_for_the_encoder_and_folds_it_for_words():
    assert normalise("  L’affiche\u00a0 «rétro»\n") == 'L\'affiche "rétro"'
    assert fold("VIDÉO Straße") == "video strasse"


def test_it_answers_within_20_ms_per_message_once_trained():
    decision_get("kind"), decision_get("edit")
    texts = [case.text for case in cases_load("edit")[:50]]
    started = time.monotonic()
    for text in texts:
        decide("kind", text), decide_all("edit", text)
    per_message = (time.monotonic() - started) / len(texts)
    print(f"\nunderstanding: {per_message * 1000:.1f} ms per message (kind + edit)")
    assert per_message < 0.2  # generous on a shared machine; the figure measured alone is in the README


def test_it_imports_neither_django_nor_any_app():
    # import-linter checks the apps (pyproject.toml); Django is outside its graph, so a fresh interpreter says.
    probe = (
        "import sys, lomote.understanding as u; u.decision_get; "
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'django', 'agents', 'memory', 'billing', 'workspace'} or m.startswith('lomote.kernel')); print(bad)"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_it_keeps_its_labelled_sets_as_data_beside_the_package():
    assert {path.stem for path in EVAL.glob("*.yaml")} >= {"kind", "edit"}


def test_it_tells_the_language_of_texts_it_never_trained_on():
    # Given the language identifier trained on the banks, when it reads every labelled set's texts (never in its
    # training data), then at least 95 % in each evaluated language get their language
    from lomote.understanding.classifier import DECISIONS
    from lomote.understanding.language_id import language_evaluate

    tally = language_evaluate(DECISIONS)
    assert set(EVALUATED) <= set(tally)
    for language, (right, total) in tally.items():
        assert right / total >= HELD_OUT_TARGET, (language, right, total)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("ok", "en"), ("1920x1080", "en"), ("👍", "en"), ("merci", "fr"), ("danke", "de"), ("", "en")],
)
def test_texts_that_say_little_get_the_default_or_their_one_clear_word(text, expected):
    from lomote.understanding.language_id import language_identify

    assert language_identify(text) == expected


def test_links_markup_and_long_unbroken_runs_do_not_outweigh_a_request_s_words():
    from lomote.understanding import decide
    from lomote.understanding.normalise import meaningful

    # given a request for posters with a link, a hash and markup pasted beside it
    url = "https://cdn.example.com/uploads/" + "a1b2c3d4e5" * 10 + "/final.png"
    text = f"Make a series of 3 retro brand posters for {url} {'9f86d081' * 10} <b>bold</b>"
    # then the decision reads the words, as it reads them alone
    assert meaningful(text) == "Make a series of 3 retro brand posters for bold"
    assert decide("kind", text).label == decide("kind", "Make a series of 3 retro brand posters").label == "poster"


@pytest.mark.parametrize("text", ["", "   ", "\n\t"])
def test_a_text_with_nothing_to_read_is_decided_like_any_other_and_never_raises(text):
    # A task title of only spaces reached the router's candidate scoring; its row had the wrong width (a 500).
    decision = decision_get("kind").decide(text)
    assert decision.label in {*decision_get("kind").classes, "ask"}
    assert decide_all("edit", text)
