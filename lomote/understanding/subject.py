"""The subject of a request: the words saying what the work is about, read by a token tagger trained on a bank.

`subject_of("Could you make me three Instagram posts announcing our winter pottery classes?")` → "winter pottery
classes"; "un logo pour mon atelier Terre & Feu" → "Terre & Feu". The subject becomes the work's headline and the
checklist's titles, so it keeps the person's own casing, accents and signs ("Crumb & Co") and holds no count, kind
of work, verb of the request, politeness or leading article.

How: the bank (banks/subject.yaml) marks each request's subject [in brackets], in five languages. Every token of a
request is described by what it is and where it stands — its folded form and character n-grams, the words around
it, its relative position, whether it is capitalised or a number — and scikit-learn's LogisticRegression learns
from the bank which tokens belong to a subject. A request's subject is then its one contiguous run of tokens with
the most evidence of belonging (the maximum-sum span of each token's probability minus one half), cut from the
request itself. No word list decides: the bank's phrasings teach which words introduce a subject ("for", "pour",
"für") and which are the work itself ("posts", "affiche", "Plakat"). A phrase the person put in quotes is the
subject as written. Measured on eval/subject.yaml (held-out split never used to choose anything) by
`python manage.py eval_understanding`.
"""

import functools
import re
import threading
import time
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sklearn.feature_extraction import DictVectorizer
from sklearn.linear_model import LogisticRegression
from threadpoolctl import threadpool_limits

from lomote.understanding.banks import BANKS, EVAL, SPLITS, BankInvalid, yaml_read
from lomote.understanding.fitted import digest, fitted
from lomote.understanding.languages import LANGUAGES
from lomote.understanding.normalise import fold, normalise

MAX_SUBJECT_CHARS = 60
MAX_INPUT_CHARS = 400  # a request's opening says what it is about; the tagger reads no further
REGULARISATION = 5.0  # LogisticRegression's C over sparse binary token features (chosen on the train split)
FOLDS = 5  # the first reading of the bank's own tokens comes from models that did not see them
WINDOW = 2  # neighbours on each side a token is described by
SENTENCE_ENDS = frozenset(".!?;")  # a prompt may be a title, then the request, then a change ("…. A bit warmer")

# An elided article or preposition is its own token ("d'" of "d'hiver"), then words (inner apostrophes and
# hyphens kept: "Emma's", "Wetter-App"), then any other sign on its own ("&", ",", "?").
_TOKEN = re.compile(r"(?:[ldjmtsnc]|qu)['’](?=[^\W\d_])|[^\W_]+(?:[-'’][^\W_]+)*|[^\w\s]", re.IGNORECASE)
_MARKED = re.compile(r"\[([^\[\]]*)\]")
_QUOTED = re.compile(r"\"([^\"\n]{2,120}?)\"|“([^”\n]{2,120}?)”|«\s*([^»\n]{2,120}?)\s*»|„([^“”\n]{2,120}?)[“”]")


@dataclass(frozen=True)
class Example:
    text: str  # the request without its brackets
    subject: str  # the bracketed part, "" when none
    language: str
    split: str = "train"


def _parse(line: str, language: str, split: str, path: str) -> Example:
    marked = _MARKED.findall(line)
    if len(marked) > 1:
        raise BankInvalid(f"{path}: more than one [subject] in {line!r}")
    return Example(_MARKED.sub(lambda m: m.group(1), line), marked[0].strip() if marked else "", language, split)


@functools.cache
def examples_load(which: str = "bank") -> tuple[Example, ...]:
    """The bank's exemplars (`which="bank"`) or the labelled set's cases (`which="eval"`), in file order."""
    path = (BANKS if which == "bank" else EVAL) / "subject.yaml"
    data = yaml_read(path)
    groups = [("train", data["exemplars"])] if which == "bank" else [(s, data.get(s) or {}) for s in SPLITS]
    found = []
    for split, by_language in groups:
        for language, lines in by_language.items():
            if language not in LANGUAGES:
                raise BankInvalid(f"{path.name}: unknown language {language!r}")
            found.extend(_parse(str(line), language, split, path.name) for line in lines)
    return tuple(found)


def tokens(text: str) -> list[tuple[str, int, int]]:
    return [(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(text)]


def _shape(token: str) -> str:
    if token.isdigit():
        return "digit"
    if not token[0].isalnum():
        return "sign"
    if token.isupper() and len(token) > 1:
        return "upper"
    return "capital" if token[0].isupper() else "lower"


def _features(words: list[str]) -> list[dict[str, float]]:
    """Each token's description: itself, its shape, its neighbours and where it stands."""
    folded = ["<num>" if w.isdigit() else fold(w) for w in words]
    n = len(words)
    rows = []
    for i, (word, key) in enumerate(zip(words, folded, strict=True)):
        shape = _shape(word)
        row = {f"w={key}": 1.0, f"shape={shape}": 1.0, f"pos={min(4, 5 * i // max(n, 1))}": 1.0}
        for size in (2, 3, 4):
            if len(key) > size:
                row[f"suf{size}={key[-size:]}"] = 1.0
                row[f"pre{size}={key[:size]}"] = 1.0
        for step in range(1, WINDOW + 1):
            before = folded[i - step] if i - step >= 0 else "<s>"
            after = folded[i + step] if i + step < n else "</s>"
            row[f"w-{step}={before}"] = 1.0
            row[f"w+{step}={after}"] = 1.0
        row[f"w-1|w={folded[i - 1] if i else '<s>'}|{key}"] = 1.0
        row[f"w|w+1={key}|{folded[i + 1] if i + 1 < n else '</s>'}"] = 1.0
        if i:
            row[f"shape-1={_shape(words[i - 1])}"] = 1.0
        if i + 1 < n:
            row[f"shape+1={_shape(words[i + 1])}"] = 1.0
        if shape in ("capital", "upper") and i:
            row["capital_inside"] = 1.0
        if i == 0:
            row["first"] = 1.0
        if i == n - 1:
            row["last"] = 1.0
        rows.append(row)
    return rows


def _labelled(example: Example) -> tuple[list[str], list[int]]:
    found = tokens(example.text)
    labels = [0] * len(found)
    if example.subject:
        start = example.text.find(example.subject)
        end = start + len(example.subject)
        labels = [int(start <= s and e <= end) for _w, s, e in found]
    return [w for w, _s, _e in found], labels


def _with_neighbours(rows: list[dict[str, float]], first: np.ndarray) -> list[dict[str, float]]:
    """A token's description with how its neighbours were first read: a subject is a run of tokens, so a token
    between two subject words is likely one too, and one after the subject's end is likely not."""
    out = []
    for i, row in enumerate(rows):
        extra = dict(row)
        for step in (-2, -1, 1, 2):
            j = i + step
            p = first[j] if 0 <= j < len(first) else 0.0
            extra[f"p{step:+d}={min(4, int(p * 5))}"] = 1.0
        extra[f"p0={min(4, int(first[i] * 5))}"] = 1.0
        out.append(extra)
    return out


def _model() -> LogisticRegression:
    return LogisticRegression(C=REGULARISATION, max_iter=2000, random_state=0)


class SubjectTagger:
    """Two readings (stacked sequential learning): the first reads each token alone, the second reads it again
    with its neighbours' first readings."""

    def __init__(self, examples: tuple[Example, ...]):
        sentences = [_labelled(example) for example in examples]
        rows = [_features(words) for words, _marks in sentences]
        flat = [row for each in rows for row in each]
        labels = np.asarray([mark for _words, marks in sentences for mark in marks])
        self.vectoriser = DictVectorizer()
        features = self.vectoriser.fit_transform(flat)
        with threadpool_limits(limits=1):
            self.first = _model().fit(features, labels)
            # The bank's tokens read by models that never saw their sentence, as a new request would be.
            owner = np.asarray([n for n, each in enumerate(rows) for _ in each])
            first = np.zeros(len(flat))
            for fold_index in range(FOLDS):
                held = owner % FOLDS == fold_index
                model = _model().fit(features[~held], labels[~held])
                first[held] = model.predict_proba(features[held])[:, 1]
            stacked, start = [], 0
            for each in rows:
                stacked += _with_neighbours(each, first[start : start + len(each)])
                start += len(each)
            self.second_vectoriser = DictVectorizer()
            self.second = _model().fit(self.second_vectoriser.fit_transform(stacked), labels)

    def probabilities(self, words: list[str]) -> np.ndarray:
        if not words:
            return np.zeros(0)
        rows = _features(words)
        first = self.first.predict_proba(self.vectoriser.transform(rows))[:, 1]
        stacked = self.second_vectoriser.transform(_with_neighbours(rows, first))
        return self.second.predict_proba(stacked)[:, 1]

    def subject(self, text: str, max_chars: int = MAX_SUBJECT_CHARS) -> str:
        """The request's subject as written in it, cut at a word to `max_chars`; "" when it names none."""
        text = normalise(text)[:MAX_INPUT_CHARS]
        quoted = _QUOTED.search(text)
        if quoted:
            return _bounded(next(group for group in quoted.groups() if group), max_chars)
        found = tokens(text)
        scores = self.probabilities([w for w, _s, _e in found]) - 0.5
        # The request comes first and later sentences add detail ("…. A bit warmer"): the first sentence naming a
        # subject names it, and a subject never runs from one sentence into the next.
        ends = [i for i, (word, _s, _e) in enumerate(found) if word in SENTENCE_ENDS]
        for begin, end in zip([0, *(i + 1 for i in ends)], [*ends, len(found)], strict=True):
            span = _best_span(found, scores, begin, end)
            if span is not None:
                first, last = span
                return _bounded(text[found[first][1] : found[last][2]], max_chars)
        return ""


def _best_span(found: list[tuple[str, int, int]], scores: np.ndarray, begin: int, end: int) -> tuple[int, int] | None:
    """The run of tokens in [begin, end) with the most evidence of being the subject (maximum-sum span of each
    token's probability minus one half), without signs at its edges; None when no token leans to the subject."""
    best, best_span, running, start = 0.0, None, 0.0, begin
    for i in range(begin, end):
        if running <= 0:
            running, start = 0.0, i
        running += scores[i]
        if running > best:
            best, best_span = running, (start, i)
    if best_span is None:
        return None
    first, last = best_span
    while first <= last and not found[first][0][0].isalnum():
        first += 1
    while last >= first and not (found[last][0][0].isalnum() or found[last][0] in ')»”"'):
        last -= 1
    return (first, last) if first <= last else None


def _bounded(text: str, max_chars: int) -> str:
    text = " ".join(text.split())
    if len(text) <= max_chars:
        return text
    cut = text[: max_chars + 1].rsplit(" ", 1)[0] if " " in text[: max_chars + 1] else text[:max_chars]
    return cut.rstrip(" ,;:-&")


_tagger: SubjectTagger | None = None
_lock = threading.Lock()


def tagger_get() -> SubjectTagger:
    """The tagger, trained on first use once per bank and code (a second or two), kept on disk (fitted.py)."""
    global _tagger
    with _lock:
        if _tagger is None:
            examples = examples_load("bank")
            code = [Path(__file__), Path(__file__).with_name("normalise.py")]
            key = digest([repr(example) for example in examples], code)
            _tagger = fitted("subject", key, lambda: SubjectTagger(examples))
        return _tagger


def tagger_forget() -> None:
    global _tagger
    with _lock:
        _tagger = None
    examples_load.cache_clear()


def subject_of(text: str, max_chars: int = MAX_SUBJECT_CHARS) -> str:
    """What the request's work is about, in the request's own words; "" when it names nothing beyond the kind."""
    return tagger_get().subject(text, max_chars)


def same_subject(read: str, expected: str) -> bool:
    """Equal once case, accents, edge punctuation and spacing are set aside (the normalised span accuracy)."""
    return _loose(read) == _loose(expected)


def _loose(text: str) -> str:
    cleaned = "".join(ch if ch.isalnum() or ch == "&" else " " for ch in fold(unicodedata.normalize("NFKC", text)))
    return " ".join(cleaned.split())


@dataclass
class SubjectReport:
    """The subject tagger on its labelled set: per (split, language), [exact, normalised, cases]."""

    by_split_language: dict[tuple[str, str], list[int]]
    misses: list[tuple[Example, str]]
    seconds_train: float
    seconds_eval: float

    def accuracy(self, split: str, *, exact: bool = False) -> float:
        tallies = [t for (each, _language), t in self.by_split_language.items() if each == split]
        total = sum(t[2] for t in tallies)
        return sum(t[0 if exact else 1] for t in tallies) / total if total else float("nan")


def subject_evaluate(split: str | None = None) -> SubjectReport:
    started = time.monotonic()
    tagger = tagger_get()
    trained = time.monotonic()
    tallies: dict[tuple[str, str], list[int]] = {}
    misses = []
    for example in examples_load("eval"):
        if split is not None and example.split != split:
            continue
        read = tagger.subject(example.text)
        tally = tallies.setdefault((example.split, example.language), [0, 0, 0])
        tally[0] += read == example.subject
        tally[1] += same_subject(read, example.subject)
        tally[2] += 1
        if not same_subject(read, example.subject):
            misses.append((example, read))
    return SubjectReport(dict(sorted(tallies.items())), misses, trained - started, time.monotonic() - trained)
