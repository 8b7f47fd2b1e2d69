"""Which language a person writes in, learned from the exemplar banks (DESIGN §2, §15).

Every phrasing of every bank is labelled with its language, so the banks are a multilingual corpus of exactly the
kind of sentences people send here; banks/language.yaml adds Italian and short everyday turns. Character n-grams
(accents kept: "ñ", "ß", "ã" and endings tell languages apart) and words feed a logistic regression, the way
langid.py and fastText's language identifier work. It is measured on the labelled sets' texts (eval/*.yaml),
which it never trains on (`python manage.py eval_understanding` prints it). A text with no letters, or read with
too little confidence ("ok", "1920x1080"), gets the caller's default.
"""

import functools
import re
import threading
from collections import defaultdict
from pathlib import Path

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import FeatureUnion, make_pipeline
from threadpoolctl import threadpool_limits

from lomote.understanding.banks import BANKS, BankInvalid, bank_load, cases_load, yaml_read
from lomote.understanding.classifier import DECISIONS
from lomote.understanding.fitted import digest, fitted
from lomote.understanding.languages import LANGUAGES
from lomote.understanding.normalise import normalise

DEFAULT_LANGUAGE = "en"
MIN_CONFIDENCE = 0.5  # from this probability the likeliest language answers
MIN_LEAD = 1.5  # below it, the likeliest still answers when it is this many times the second ("merci")
MIN_PROBABLE = 0.3  # and at least this likely; else the text says too little and the default answers
MAX_CHARS = 4000  # the opening of a long message says as much as the whole of it
# The banks it learns languages from: those of requests and changes. memory_about's is left out: its phrasings are
# mostly business names ("Le Fournil", "Bean There"), which teach names rather than languages (with it, a bare
# "Continue" read as French).
LANGUAGE_BANKS = tuple(name for name in DECISIONS if name != "memory_about")
EXTRA = BANKS / "language.yaml"
_LETTER = re.compile(r"[^\W\d_]", re.UNICODE)
WORD = r"[^\W\d_]+"  # letters only: digits and sizes say nothing of a language
_lock = threading.Lock()


def _lowered(text: str) -> str:
    return normalise(text).lower()


def corpus(decisions: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """(texts, languages): every phrasing of the banks of `decisions`, then banks/language.yaml."""
    texts, languages = [], []
    for name in decisions:
        bank = bank_load(name)
        texts += bank.texts
        languages += bank.languages
    for language, sentences in (yaml_read(EXTRA) or {}).items():
        if language not in LANGUAGES:
            raise BankInvalid(f"{EXTRA.name}: unknown language {language!r}")
        texts += [str(sentence) for sentence in sentences]
        languages += [language] * len(sentences)
    return texts, languages


@functools.cache
def identifier():
    """The trained pipeline: fitted once per banks and code (a few seconds), kept on disk (fitted.py)."""
    texts, languages = corpus(LANGUAGE_BANKS)
    key = digest([*texts, "\x1f", *languages], [Path(__file__)])
    return fitted("language", key, lambda: _fit(texts, languages))


def _fit(texts: list[str], languages: list[str]):
    features = FeatureUnion(
        [
            ("chars", TfidfVectorizer(analyzer="char_wb", ngram_range=(1, 4), sublinear_tf=True, lowercase=False)),
            ("words", TfidfVectorizer(analyzer="word", sublinear_tf=True, lowercase=False, token_pattern=WORD)),
        ]
    )
    pipeline = make_pipeline(features, LogisticRegression(C=10.0, max_iter=2000, random_state=0))
    with threadpool_limits(limits=1):
        pipeline.fit([_lowered(text) for text in texts], languages)
    return pipeline


def language_ranking(text: str) -> list[tuple[str, float]]:
    """Each language's probability for `text`, likeliest first (empty for a text with no letters)."""
    if not _LETTER.search(text or ""):
        return []
    with _lock:
        pipeline = identifier()
    row = pipeline.predict_proba([_lowered(text[:MAX_CHARS])])[0]
    order = np.argsort(-row, kind="stable")
    return [(str(pipeline.classes_[i]), float(row[i])) for i in order]


def language_identify(text: str, *, default: str = DEFAULT_LANGUAGE) -> str:
    """The language of the text as a code from LANGUAGES, or `default` when it cannot tell."""
    ranking = language_ranking(text)
    if not ranking:
        return default
    (best, p), (_, second) = ranking[0], ranking[1]
    if p >= MIN_CONFIDENCE or (p >= MIN_PROBABLE and p >= MIN_LEAD * second):
        return best
    return default


def language_evaluate(decisions: tuple[str, ...]) -> dict[str, tuple[int, int]]:
    """(right, total) per language over the labelled sets' texts of `decisions` (never trained on)."""
    tally: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    seen: set[str] = set()
    for name in decisions:
        for case in cases_load(name):
            if case.text in seen:
                continue
            seen.add(case.text)
            tally[case.language][0] += language_identify(case.text, default="?") == case.language
            tally[case.language][1] += 1
    return {language: (right, total) for language, (right, total) in sorted(tally.items())}
