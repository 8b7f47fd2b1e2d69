"""Measuring a decision on its labelled set, and choosing its threshold on the train split only.

A case is right when the labels read equal the labels expected; an abstention is right only when the expected
label is "ask" (DESIGN §15: abstaining is an answer, but not for a clear request).
"""

import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field

import numpy as np

from lomote.understanding.banks import ASK, Case, cases_load
from lomote.understanding.classifier import Classifier, decision_get
from lomote.understanding.encoder import Encoder

THRESHOLD_GRID = tuple(round(0.2 + 0.01 * step, 2) for step in range(71))  # 0.20 … 0.90
CLAUSE_GRID = tuple(round(0.5 + 0.05 * step, 2) for step in range(10))  # 0.50 … 0.95: a clause must be sure


@dataclass
class Report:
    decision: str
    threshold: float
    cases: int = 0
    right: int = 0
    abstained: int = 0
    by_split_language: dict[tuple[str, str], list[int]] = field(default_factory=dict)  # (split, lang) → [right, n]
    confusion: Counter = field(default_factory=Counter)  # (expected, read) → count
    misses: list[tuple[Case, str]] = field(default_factory=list)
    seconds_train: float = 0.0
    seconds_eval: float = 0.0

    @property
    def accuracy(self) -> float:
        return self.right / self.cases if self.cases else 0.0

    @property
    def abstention_rate(self) -> float:
        return self.abstained / self.cases if self.cases else 0.0


def _label(labels: frozenset[str]) -> str:
    return "+".join(sorted(labels))


class Scored:
    """Every case's probabilities for its whole text and clauses, computed once; read at any threshold."""

    def __init__(self, classifier: Classifier, cases: list[Case]):
        self.classifier = classifier
        self.cases = cases
        parts = [classifier.parts(case.text) for case in cases]
        rows = classifier.probabilities([p for ps in parts for p in ps])
        self.rows, start = [], 0
        for ps in parts:
            self.rows.append(rows[start : start + len(ps)])
            start += len(ps)

    def read(self, index: int, threshold: float | None = None, clause: float | None = None) -> frozenset[str]:
        decisions = self.classifier.combine(self.rows[index], threshold, clause)
        return frozenset(decision.label for decision in decisions)

    def right(self, threshold: float | None = None, clause: float | None = None) -> int:
        return sum(self.read(i, threshold, clause) == case.expected for i, case in enumerate(self.cases))


def thresholds_choose(name: str, encoder: Encoder | None = None) -> dict[str, float]:
    """The thresholds that read most train cases right; on a plateau, its middle (robust either way).

    Only the train split is read: held-out cases never choose a threshold."""
    classifier = decision_get(name, encoder)
    scored = Scored(classifier, [case for case in cases_load(name) if case.split == "train"])
    clauses = CLAUSE_GRID if classifier.bank.multi_label else (classifier.clause_threshold,)
    scores = {(t, c): scored.right(t, c) for t in THRESHOLD_GRID for c in clauses if c >= t}
    best = max(scores.values())
    plateau = sorted(pair for pair, score in scores.items() if score == best)
    abstain, clause = plateau[len(plateau) // 2]
    return {"abstain": abstain, "clause": clause} if classifier.bank.multi_label else {"abstain": abstain}


def evaluate(name: str, split: str | None = None, encoder: Encoder | None = None) -> Report:
    started = time.monotonic()
    classifier = decision_get(name, encoder)
    trained = time.monotonic()
    cases = [case for case in cases_load(name) if split is None or case.split == split]
    scored = Scored(classifier, cases)
    report = Report(decision=name, threshold=classifier.threshold, seconds_train=trained - started)
    tallies: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for index, case in enumerate(cases):
        read = scored.read(index)
        ok = read == case.expected
        report.cases += 1
        report.right += ok
        report.abstained += read == {ASK}
        tallies[(case.split, case.language)][0] += ok
        tallies[(case.split, case.language)][1] += 1
        report.confusion[(_label(case.expected), _label(read))] += 1
        if not ok:
            report.misses.append((case, _label(read)))
    report.by_split_language = dict(sorted(tallies.items()))
    report.seconds_eval = time.monotonic() - trained
    return report


def split_accuracy(report: Report, split: str) -> float:
    pairs = [tally for (each, _language), tally in report.by_split_language.items() if each == split]
    total = sum(n for _right, n in pairs)
    return sum(right for right, _n in pairs) / total if total else float(np.nan)
