"""Trained classifiers kept on disk (lomote/understanding/fitted.py): a second process reads what the first fitted,
a changed input or unreadable file fits again, and a cache that cannot be written never stops a decision."""

import pickle

import pytest

from lomote.understanding import fitted as store
from lomote.understanding.banks import bank_load
from lomote.understanding.classifier import Classifier
from lomote.understanding.encoder import encoder_default


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("LOMOTE_UNDERSTANDING_CACHE", str(tmp_path / "understanding"))
    return tmp_path / "understanding"


class Fit:
    def __init__(self, value):
        self.value, self.calls = value, 0

    def __call__(self):
        self.calls += 1
        return self.value


def test_a_fit_is_kept_and_read_back_instead_of_fitted_again(cache):
    first, second = Fit({"weights": [1, 2]}), Fit({"weights": [9]})
    key = store.digest(["bank text"], [])

    assert store.fitted("kind", key, first) == {"weights": [1, 2]}
    assert store.fitted("kind", key, second) == {"weights": [1, 2]}, "read from disk, not fitted again"
    assert (first.calls, second.calls) == (1, 0)
    assert [path.name.split("-")[0] for path in cache.iterdir()] == ["kind"], "one file, no temporary left"


def test_another_bank_or_code_is_another_key(cache, tmp_path):
    code = tmp_path / "fit.py"
    code.write_text("C = 1\n")
    before = store.digest(["a", "b"], [code])
    assert store.digest(["a", "c"], [code]) != before
    code.write_text("C = 2\n")
    assert store.digest(["a", "b"], [code]) != before


def test_an_unreadable_file_is_fitted_again_and_replaced(cache):
    key = store.digest(["x"], [])
    store.fitted("edit", key, Fit("first"))
    (path,) = cache.iterdir()
    path.write_bytes(b"cut sh")

    again = Fit("fresh")
    assert store.fitted("edit", key, again) == "fresh"
    assert again.calls == 1
    assert pickle.loads(path.read_bytes()) == "fresh"  # noqa: S301 — written by the test itself


def test_a_cache_that_cannot_be_written_still_answers(tmp_path, monkeypatch):
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory")
    monkeypatch.setenv("LOMOTE_UNDERSTANDING_CACHE", str(blocked / "understanding"))

    assert store.fitted("kind", store.digest(["y"], []), Fit(42)) == 42


def test_a_classifier_read_from_disk_decides_as_the_one_fitted(cache):
    bank = bank_load("source_time")
    fitted = Classifier(bank, 0.5, encoder_default())
    read = Classifier(bank, 0.5, encoder_default())
    assert len(list(cache.iterdir())) == 1

    for text in ("the photo from yesterday", "la photo que je viens d'envoyer", "el boceto de la semana pasada"):
        assert fitted.decide(text).ranking == read.decide(text).ranking
