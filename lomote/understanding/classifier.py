"""One classifier per decision: an exemplar bank's sentences → features → logistic regression.

The features of a sentence are its encoder row (its meaning, across languages) beside the TF-IDF weights of its
folded character n-grams and word pairs, learned from the bank itself (they tell "too dark" from "darker", which
the encoder puts close together; the same sparse-beside-dense design as Rasa's DIET). No word is written in code:
the model weighs whatever the bank's phrasings teach it, and a wording the bank lacks still has its meaning.
scikit-learn's multinomial LogisticRegression over these features gives a probability per label; the top
label answers when its probability reaches the decision's threshold (thresholds.yaml, chosen on the labelled
set's train split) and is not the bank's `none` label. Otherwise the decision abstains: its label is "ask" and
its ranking holds the likely choices for the card that asks the person (DESIGN §15).

A multi-label decision (edit intent: "brighten it and make the text bigger" asks two changes) cuts the sentence
into clauses at punctuation and at the joining words of languages.CLAUSE_JOINERS and reads the whole sentence and
each clause by meaning: the answer is the whole sentence's label plus every label a clause reads with at least the
(higher) clause threshold.

Training is deterministic (lbfgs, fixed random_state) and takes one or two seconds per decision on a quiet machine;
it happens once per bank, model and code, and is kept on disk (fitted.py): other processes read it from there.
"""

import re
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sparse
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from threadpoolctl import threadpool_limits

from lomote.understanding.banks import ASK, Bank, bank_load, thresholds_load
from lomote.understanding.encoder import Encoder, EncoderUnavailable, encode_cached, encoder_current, encoder_default
from lomote.understanding.fitted import digest, fitted
from lomote.understanding.languages import CLAUSE_JOINERS
from lomote.understanding.normalise import fold, meaningful, normalise

DECISIONS = ("kind", "edit", "route_act", "source", "source_time", "text_form", "memory_about")
DEFAULT_THRESHOLD = 0.5  # used until thresholds.yaml names one for the decision
DEFAULT_CLAUSE_THRESHOLD = 0.8  # a clause's label joins the answer from this probability (multi-label decisions)
REGULARISATION = 8.0  # LogisticRegression's C: unit 512-dim rows need a light penalty to separate paraphrases
NGRAMS = (2, 5)  # character n-grams inside word boundaries: stems and endings in every language
PAIR_WEIGHT = 1.0  # word pairs ("too bright", "trop froid") carry polarity; chosen on train (0 and 2 do worse)
NGRAM_WEIGHT = 2.0  # the n-gram block's scale beside the unit encoder row (measured on train: 0.5 and 1.0 do worse)
RANKING_SIZE = 4
# The modules a fit depends on besides the bank: a change to any of them fits again (see fitted.py).
_FIT_CODE = tuple(Path(__file__).parent / name for name in ("classifier.py", "normalise.py", "encoder.py"))
MIN_CLAUSE_CHARS = 3

# Compared without case but with accents: Spanish "más" (more) is not Portuguese "mas" (but).
_JOINERS = sorted({word.casefold() for words in CLAUSE_JOINERS.values() for word in words}, key=len, reverse=True)
_CLAUSE_CUT = re.compile(r"[,;:.!?\n]+|\s(?:" + "|".join(re.escape(word) for word in _JOINERS) + r")\s")


@dataclass(frozen=True)
class Decision:
    label: str  # the answer, or "ask" when the classifier abstains
    confidence: float  # the top label's probability
    abstained: bool
    ranking: tuple[tuple[str, float], ...]  # the likeliest labels, best first, with their probabilities


def clauses(text: str) -> list[str]:
    """The parts of a sentence that may each ask for something, cut where the person joined them.

    Cut on the case-folded text (joiners are compared without case, with their accents), then read back from the
    original so the encoder keeps the case."""
    original = normalise(text)
    folded = original.casefold()
    if len(folded) != len(original):  # a character folded into two ("ß" → "ss"): cut the folded text itself
        original = folded
    parts, start = [], 0
    for match in _CLAUSE_CUT.finditer(folded):
        parts.append(original[start : match.start()])
        start = match.end()
    parts.append(original[start:])
    return [part.strip() for part in parts if len(part.strip()) >= MIN_CLAUSE_CHARS]


class Classifier:
    def __init__(
        self, bank: Bank, threshold: float, encoder: Encoder, clause_threshold: float = DEFAULT_CLAUSE_THRESHOLD
    ):
        self.bank = bank
        self.threshold = threshold
        self.clause_threshold = clause_threshold
        self.encoder = encoder
        key = digest([bank.decision, encoder.model_id, *bank.texts, "\x1f", *bank.labels], _FIT_CODE)
        self.ngrams, self.pairs, self.model, dims = fitted(bank.decision, key, self._fit)
        self.classes: list[str] = [str(label) for label in self.model.classes_]
        # The weights split per feature block: a message is scored without stacking its blocks into one matrix
        # (the stacking cost more than the scoring).
        grams = len(self.ngrams.vocabulary_)
        coef = self.model.coef_
        self._weights = (coef[:, :dims].T, coef[:, dims : dims + grams].T, coef[:, dims + grams :].T)

    def _fit(self) -> tuple[TfidfVectorizer, TfidfVectorizer, LogisticRegression, int]:
        """The bank's vectorizers and model, and the encoder's row width (kept on disk by `fitted`)."""
        texts = list(self.bank.texts)
        self.ngrams = TfidfVectorizer(analyzer="char_wb", ngram_range=NGRAMS, sublinear_tf=True, preprocessor=fold)
        self.ngrams.fit(texts)
        self.pairs = TfidfVectorizer(analyzer="word", ngram_range=(2, 2), sublinear_tf=True, preprocessor=fold)
        self.pairs.fit(texts)
        rows = encode_cached(self.encoder, texts)
        model = LogisticRegression(C=REGULARISATION, max_iter=3000, random_state=0)
        with threadpool_limits(limits=1):  # one BLAS thread: workers share two cores, and results stay the same
            model.fit(self.features(texts, rows), np.asarray(self.bank.labels))
        return self.ngrams, self.pairs, model, rows.shape[1]

    def features(self, texts: list[str], rows: np.ndarray) -> sparse.csr_matrix:
        blocks = [sparse.csr_matrix(rows), NGRAM_WEIGHT * self.ngrams.transform(texts)]
        blocks.append(PAIR_WEIGHT * self.pairs.transform(texts))
        return sparse.hstack(blocks).tocsr()

    def probabilities(self, texts: list[str], encoder: Encoder | None = None) -> np.ndarray:
        """Each text's probability per label: the model's softmax, computed block by block.

        `encoder` is an instance of the model this classifier was trained with (a workspace's own, carrying its
        key); by default the one it was trained through."""
        dense, grams, pairs = self._weights
        texts = [meaningful(text) for text in texts]
        logits = (encoder or self.encoder).encode(texts) @ dense + self.model.intercept_
        logits += NGRAM_WEIGHT * (self.ngrams.transform(texts) @ grams)
        logits += PAIR_WEIGHT * (self.pairs.transform(texts) @ pairs)
        logits -= logits.max(axis=1, keepdims=True)
        exp = np.exp(logits)
        return exp / exp.sum(axis=1, keepdims=True)

    def resolve(self, row: np.ndarray, threshold: float | None = None) -> Decision:
        """The decision one row of probabilities gives at a threshold (the decision's own by default)."""
        threshold = self.threshold if threshold is None else threshold
        order = np.argsort(-row, kind="stable")
        top = self.classes[order[0]]
        ranking = tuple(
            (self.classes[i], round(float(row[i]), 4)) for i in order if self.classes[i] != self.bank.none_label
        )[:RANKING_SIZE]
        confidence = float(row[order[0]])
        if top == self.bank.none_label or confidence < threshold:
            return Decision(ASK, confidence, True, ranking)
        return Decision(top, confidence, False, ranking)

    def decide(self, text: str, encoder: Encoder | None = None) -> Decision:
        return self.resolve(self.probabilities([text], encoder)[0])

    def decide_all(self, text: str, encoder: Encoder | None = None) -> list[Decision]:
        """Every label the text asks for (multi-label decisions), or one abstention."""
        return self.combine(self.probabilities(self.parts(text), encoder))

    def parts(self, text: str) -> list[str]:
        """The whole text first, then its clauses when the decision is multi-label and the text has several."""
        pieces = clauses(text) if self.bank.multi_label else []
        return [text, *pieces] if len(pieces) > 1 else [text]

    def combine(
        self, rows: np.ndarray, threshold: float | None = None, clause_threshold: float | None = None
    ) -> list[Decision]:
        """The labels a text asks: its clauses' labels read with confidence, and the whole text's label.

        A clause is a fragment ("make the text bigger"), so it must be surer than a whole text to add a label.
        A text asking several things reads as a blend of them: its whole reading counts when no clause is sure,
        when it agrees with one, or when it is as sure as a clause must be. Of two opposite labels (the bank's
        `opposites`: brighter and darker) only the likelier stays: nobody asks for both at once."""
        whole = self.resolve(rows[0], threshold)
        if len(rows) == 1:
            return [whole]
        clause_threshold = self.clause_threshold if clause_threshold is None else clause_threshold
        floor = max(clause_threshold, self.threshold if threshold is None else threshold)
        found: dict[str, Decision] = {}
        for row in rows[1:]:
            decision = self.resolve(row, floor)
            if not decision.abstained:
                found[decision.label] = max(found.get(decision.label, decision), decision, key=_surer)
        if not found:
            return [whole]
        if not whole.abstained and (whole.label in found or whole.confidence >= floor):
            found[whole.label] = max(found.get(whole.label, whole), whole, key=_surer)
        for a, b in self.bank.opposites:
            if a in found and b in found:
                found.pop(a if found[a].confidence < found[b].confidence else b)
        return sorted(found.values(), key=_surer, reverse=True)


def _surer(decision: Decision) -> float:
    return decision.confidence


_classifiers: dict[tuple[str, str], Classifier] = {}  # (decision, encoder model) → its classifier
_lock = threading.Lock()


def decision_get(name: str, encoder: Encoder | None = None) -> Classifier:
    """The decision's classifier for `encoder`'s model (the offline one by default), trained once per process and
    model: two workspaces on one endpoint model share it, each reading its messages through its own encoder.

    Raises EncoderUnavailable when a remote encoder cannot encode the bank to train on."""
    if name not in DECISIONS:
        raise KeyError(f"unknown decision {name!r} (known: {', '.join(DECISIONS)})")
    encoder = encoder or encoder_default()
    key = (name, encoder.model_id)
    with _lock:
        if key not in _classifiers:
            chosen = thresholds_load().get(name, {})
            _classifiers[key] = Classifier(
                bank_load(name),
                chosen.get("abstain", DEFAULT_THRESHOLD),
                encoder,
                chosen.get("clause", DEFAULT_CLAUSE_THRESHOLD),
            )
        return _classifiers[key]


def _read(name: str, read):
    """`read(classifier, encoder)` through the current scope's encoder; the offline model answers when that one fails.

    A workspace's threshold stays the one chosen on the offline model: the bank's probabilities are what it was
    chosen on, and the endpoint's classifier is trained on the same bank."""
    encoder = encoder_current()
    default = encoder_default()
    if encoder is not default:
        try:
            return read(decision_get(name, encoder), encoder)
        except EncoderUnavailable:
            pass  # logged by the encoder; this message is read offline
    return read(decision_get(name, default), default)


def decide(name: str, text: str) -> Decision:
    """The one label a decision reads in the text, or an abstention ("ask")."""
    return _read(name, lambda classifier, encoder: classifier.decide(text, encoder))


def decide_all(name: str, text: str) -> list[Decision]:
    """Every label a multi-label decision reads in the text (one per clause asking), or one abstention."""
    return _read(name, lambda classifier, encoder: classifier.decide_all(text, encoder))


def decision_forget(name: str) -> None:
    """Drop the decision's trained classifier: the next use trains it again (after thresholds or a bank change)."""
    with _lock:
        for key in [key for key in _classifiers if key[0] == name]:
            del _classifiers[key]
    bank_load.cache_clear()
