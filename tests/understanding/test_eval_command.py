"""`manage.py eval_understanding` and the threshold choice: held-out cases measure, they never choose."""

import io
from dataclasses import replace

from django.core.management import call_command

from lomote.understanding import evaluation
from lomote.understanding.banks import cases_load


def test_it_prints_accuracy_per_language_the_abstention_rate_the_confusion_and_the_time():
    # Given the kind decision's labelled set, when the command measures its held-out split
    out = io.StringIO()
    call_command("eval_understanding", "--decision", "kind", "--split", "heldout", "--misses", stdout=out)
    printed = out.getvalue()
    # then it prints one line per language of that split, the overall figure, abstentions, confusion and times
    for language in ("de", "en", "es", "fr", "pt"):
        assert f"heldout  {language}" in printed
    assert "heldout  all" in printed and "train    " not in printed
    assert "abstained" in printed and "confusion" in printed
    assert "time: training" in printed and "total time" in printed


def test_it_chooses_the_same_thresholds_whatever_the_held_out_cases_say(monkeypatch):
    # Given the edit decision's thresholds chosen on its labelled set (on a coarse grid: a short test)
    monkeypatch.setattr(evaluation, "THRESHOLD_GRID", (0.2, 0.3, 0.4, 0.5, 0.6))
    chosen = evaluation.thresholds_choose("edit")
    # when every held-out case is relabelled to something else entirely
    relabelled = tuple(
        replace(case, expected=frozenset({"palette"})) if case.split == "heldout" else case
        for case in cases_load("edit")
    )
    monkeypatch.setattr(evaluation, "cases_load", lambda name: relabelled)
    # then the choice does not move: only the train split chooses
    assert evaluation.thresholds_choose("edit") == chosen
