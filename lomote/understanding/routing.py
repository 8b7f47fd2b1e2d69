"""Which existing task a message points at, by meaning, with a calibrated confidence (DESIGN §2 step 2, §15).

The runtime gives the candidates (the Router's bounded task index: the recently active tasks plus the ones
search found); this module scores them. For each candidate it measures how close the message is in meaning
to the task's title, its goal, its summary and the titles of its work (and, once the Router opened it, the
lines of its details: checklist items, artifact descriptions, the person's latest messages), through the
same encoder as every other decision, across languages. Beside those it reads how far the candidate leads
the others, how recently it was active, whether the conversation was last about it, whether it is a quick
(lightweight) or closed task, and whether the message and the task name the same kind of work (read by the
"kind" decision: a tie-breaker among these features, never a decision alone).

A small conditional logistic regression over these features (one score per candidate, beside a fixed score 0
for "none of them") gives each candidate the probability of being the one meant: two tasks that fit equally
share it, so neither looks sure.
Its weights are fitted on the routing set's train split (`python manage.py eval_routing --fit-target`) and
kept in route_target.yaml beside the threshold chosen on that same split: the top candidate is followed only
when its probability reaches it; below, the Router asks the person with the likeliest candidates as choices.
A quick task that a message is barely closer to than to nothing never wins: its probability stays low.
The cosines are read through the offline encoder, the one the weights were fitted on: a workspace's own embedding
model spreads cosines on another scale, so its features would not mean what the weights expect.
"""

import functools
import math
import re
import threading
from collections import Counter, OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml
from scipy.optimize import minimize

from lomote.understanding.banks import bank_load, yaml_read
from lomote.understanding.classifier import decision_get
from lomote.understanding.encoder import Encoder, encoder_default
from lomote.understanding.normalise import fold

HERE = Path(__file__).resolve().parent
WEIGHTS = HERE / "route_target.yaml"
FEATURES = (
    "bias",  # 1 for every candidate: how sure meaning must be before any task beats "none of them"
    "title",  # cosine of the message with the task's title
    "goal",  # … with its goal (the person's first request)
    "summary",  # … with its summary
    "work",  # the best cosine with one of its artifacts' titles
    "best",  # the best of the four
    "lead",  # best minus the best of the other candidates (one candidate: its best)
    "alone",  # 1 when it is the only live candidate
    "recent",  # 1 for the most recently active candidate, 1/2 for the next…
    "talked",  # 1 when the person's last messages to Main went to it
    "quick",  # 1 for a lightweight task
    "closed",  # 1 for an archived or cancelled task
    "same_kind",  # 1 when the message and the task read as the same kind of work (a tie-breaker)
    "other_medium",  # the message's likeliest kind's probability when it is in another medium than the task's
    "details",  # the best cosine with a line of its details, once the Router opened it (0 before)
    "words",  # the message's words found in this task's texts and not in every candidate's, by rarity (names)
)
DEFAULT_THRESHOLD = 0.5
THRESHOLD_GRID = tuple(round(0.05 + 0.01 * step, 2) for step in range(91))  # 0.05 … 0.95
MARGIN_GRID = tuple(round(0.05 * step, 2) for step in range(11))  # 0 … 0.5
PENALTY = 0.3  # L2 on the weights: a few hundred messages must not make one feature decide alone
CLARIFY_MAX = 3
CHOICE_RATIO = 0.05  # a task is offered as a choice when at least this likely relative to the likeliest
MIN_WORD = 3  # shorter words ("de", "un") say nothing about which task is meant
# The "kind" decision's labels that are not still pictures (every other label is one).
STILL = "still"
MEDIUM = {"video": "motion", "model_3d": "3d", "document": "text", "flow": "text"}
COMMON_BANKS = ("kind", "edit", "route_act")  # what people ask for and say to Main (the weights were fitted on these)
COMMON = 0.05  # a word in this share of one language's exemplars is a word of every request, not a name
TEXT_ROWS = 2048  # rows kept for candidates' texts: a task's title is encoded once, not at every message


@dataclass(frozen=True)
class Candidate:
    id: int
    title: str
    goal: str = ""
    summary: str = ""
    work: tuple[str, ...] = ()  # its artifacts' titles
    details: tuple[str, ...] = ()  # once opened: checklist items, artifacts' descriptions, the person's messages
    recency: int = 0  # 0 for the most recently active candidate
    talked: bool = False
    quick: bool = False
    closed: bool = False


@dataclass(frozen=True)
class Scored:
    candidate: Candidate
    probability: float
    features: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Target:
    """The candidate followed, or none (`ask`) with the likeliest ones as the choices to offer."""

    chosen: Scored | None
    ranking: tuple[Scored, ...]
    threshold: float

    @property
    def ask(self) -> bool:
        return self.chosen is None

    def choices(self, limit: int = CLARIFY_MAX) -> list[int]:
        """The tasks to offer when asking: the likeliest ones, without those far less likely than the first (a
        cat video is no choice beside two poster series the message may mean)."""
        if not self.ranking:
            return []
        floor = self.ranking[0].probability * CHOICE_RATIO
        return [scored.candidate.id for scored in self.ranking[:limit] if scored.probability >= floor]


class _Rows:
    """Unit rows of candidates' texts, remembered per process (titles and goals rarely change)."""

    def __init__(self):
        self._rows: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, encoder: Encoder, texts: Sequence[str]) -> np.ndarray:
        keys = [(encoder.model_id, text) for text in texts]
        with self._lock:
            known = {key: self._rows[key] for key in keys if key in self._rows}
        missing = list(dict.fromkeys(key for key in keys if key not in known))
        if missing:
            rows = encoder.encode([text for _, text in missing])
            with self._lock:
                for key, row in zip(missing, rows, strict=True):
                    self._rows[key] = known[key] = row
                while len(self._rows) > TEXT_ROWS:
                    self._rows.popitem(last=False)
        return np.stack([known[key] for key in keys]) if keys else np.zeros((0, 1), dtype=np.float32)


_rows = _Rows()


@functools.lru_cache(maxsize=4096)
def _kind(text: str) -> str | None:
    """The kind of work a text names, or None when the "kind" decision abstains (remembered per text: a task's
    title is read once per process)."""
    decision = decision_get("kind").decide(text)
    return None if decision.abstained else decision.label


@functools.lru_cache(maxsize=1024)
def _likeliest_kind(text: str) -> tuple[str | None, float]:
    """The likeliest kind of work a message names and its probability, even below the decision's threshold: a
    change ("make the dog video longer") names its work less plainly than a request for new work."""
    ranking = decision_get("kind").decide(text).ranking
    return ranking[0] if ranking else (None, 0.0)


@functools.cache
def _common_words() -> frozenset[str]:
    """The words requests use whatever they ask ("the", "make", "pour", "und"): those found in at least COMMON of
    one language's exemplars across the banks. Learned from the banks, so no word list is kept in code."""
    texts: dict[str, list[str]] = {}
    for name in COMMON_BANKS:
        bank = bank_load(name)
        for text, language in zip(bank.texts, bank.languages, strict=True):
            texts.setdefault(language, []).append(text)
    common: set[str] = set()
    for said in texts.values():
        counts = Counter(word for text in said for word in set(re.findall(r"\w+", fold(text))))
        common |= {word for word, count in counts.items() if count >= COMMON * len(said)}
    return frozenset(common)


def _medium(kind: str | None) -> str | None:
    """The medium of a kind of work the "kind" decision reads: a poster and a logo are both still pictures, so a
    message about one may well be about a task titled for the other; a video or a text is another medium."""
    return MEDIUM.get(kind or "", STILL) if kind and kind != "unsupported" else None


def _words(text: str) -> set[str]:
    found = {word for word in re.findall(r"\w+", fold(text)) if len(word) >= MIN_WORD and not word.isdigit()}
    return found - _common_words()


def _distinctive(message: str, candidates: Sequence[Candidate]) -> list[float]:
    """Per candidate: the message's words its texts hold, each weighted by how few candidates hold it (a word
    every candidate holds tells none apart). Only a tie-breaker beside meaning: names such as "Acme" or "Zest"
    that the encoder reads as near-nothing."""
    said = _words(message)
    held = [_words(" ".join([c.title, c.goal, c.summary, *c.work, *c.details])) & said for c in candidates]
    n = len(candidates)
    counts = {word: sum(word in h for h in held) for word in said}
    return [sum(math.log((n + 1) / (counts[w] + 0.5)) for w in h if counts[w] < n) for h in held]


def features(message: str, candidates: Sequence[Candidate], encoder: Encoder | None = None) -> list[dict[str, float]]:
    """Each candidate's features for `message` (FEATURES, in order), through the offline encoder by default (the
    weights were fitted on its cosines)."""
    if not candidates:
        return []
    encoder = encoder or encoder_default()
    said = encoder.encode([message])[0]
    said_kind = _kind(message)
    likeliest, likelihood = _likeliest_kind(message)
    said_medium = _medium(likeliest)
    rows = []
    for candidate in candidates:
        fields = [candidate.title, candidate.goal, candidate.summary]
        texts = [text for text in fields + list(candidate.work) + list(candidate.details) if text.strip()]
        cosines = dict(zip(texts, _rows.get(encoder, texts) @ said, strict=True)) if texts else {}
        title, goal, summary = (float(cosines.get(text, 0.0)) if text.strip() else 0.0 for text in fields)
        work = max((float(cosines[text]) for text in candidate.work if text.strip()), default=0.0)
        details = max((float(cosines[text]) for text in candidate.details if text.strip()), default=0.0)
        task_kind = _kind(candidate.title)
        rows.append(
            {
                "bias": 1.0,
                "title": title,
                "goal": goal,
                "summary": summary,
                "work": work,
                "details": details,
                "best": max(title, goal, summary, work),
                "recent": 1.0 / (1 + candidate.recency),
                "talked": float(candidate.talked),
                "quick": float(candidate.quick),
                "closed": float(candidate.closed),
                "same_kind": float(said_kind is not None and said_kind == task_kind),
                "other_medium": likelihood if said_medium and _medium(task_kind) not in (None, said_medium) else 0.0,
            }
        )
    live = [i for i, c in enumerate(candidates) if not c.closed]
    for row, words in zip(rows, _distinctive(message, candidates), strict=True):
        row["words"] = words
    for i, row in enumerate(rows):
        others = [rows[j]["best"] for j in range(len(rows)) if j != i]
        row["lead"] = row["best"] - max(others, default=0.0)
        row["alone"] = float(live == [i])
    return rows


@dataclass(frozen=True)
class Weights:
    coef: tuple[float, ...]
    threshold: float  # the top candidate's probability from which it is followed…
    margin: float = 0.0  # …when it also leads the second by this much (two that fit alike: the person chooses)

    def follows(self, ranked: Sequence[float]) -> bool:
        """Whether the top of these probabilities (best first) is sure enough to be followed."""
        second = ranked[1] if len(ranked) > 1 else 0.0
        return bool(ranked) and ranked[0] >= self.threshold and ranked[0] - second >= self.margin

    def score(self, row: dict[str, float]) -> float:
        return sum(w * row[name] for w, name in zip(self.coef, FEATURES, strict=True))

    def probabilities(self, rows: Sequence[dict[str, float]]) -> list[float]:
        """Each candidate's probability of being the one meant, beside the chance that none is (score 0):
        a conditional logit, so two candidates that fit equally share the probability instead of both
        looking sure."""
        scores = np.asarray([self.score(row) for row in rows] + [0.0])
        exp = np.exp(scores - scores.max())
        return [float(p) for p in exp[:-1] / exp.sum()]


@functools.cache
def weights_load() -> Weights:
    data = yaml_read(WEIGHTS)
    coef = tuple(float(data["coef"][name]) for name in FEATURES)
    return Weights(coef, float(data.get("threshold", DEFAULT_THRESHOLD)), float(data.get("margin", 0.0)))


def target_score(
    message: str, candidates: Sequence[Candidate], weights: Weights | None = None, encoder: Encoder | None = None
) -> Target:
    """The candidate `message` points at when the model is sure enough, else none, with the ranking."""
    weights = weights or weights_load()
    rows = features(message, candidates, encoder)
    probabilities = weights.probabilities(rows) if rows else []
    ranking = sorted(
        (Scored(c, p, row) for c, p, row in zip(candidates, probabilities, rows, strict=True)),
        key=lambda s: (-s.probability, s.candidate.recency, -s.candidate.id),
    )
    chosen = ranking[0] if ranking and weights.follows([s.probability for s in ranking]) else None
    return Target(chosen, tuple(ranking), weights.threshold)


# --- fitting (the routing set's train split only) ----------------------------------------------------------


@dataclass(frozen=True)
class Example:
    """One message of the train split with its candidates and the one it means (None: the person is asked)."""

    message: str
    candidates: tuple[Candidate, ...]
    meant: int | None


def _matrix(rows: list[dict[str, float]]) -> np.ndarray:
    return np.asarray([[row[name] for name in FEATURES] for row in rows], dtype=np.float64)


def _fit_logit(groups: list[tuple[np.ndarray, int | None]]) -> np.ndarray:
    """The conditional logit's weights: each group is one message's candidates (a matrix) and the index of
    the one meant (None: none is, the outside option), fitted by L-BFGS with an L2 penalty."""

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        total, grad = PENALTY * float(w @ w), 2 * PENALTY * w
        for x, meant in groups:
            scores = np.append(x @ w, 0.0)
            top = scores.max()
            exp = np.exp(scores - top)
            p = exp / exp.sum()
            total -= scores[len(x) if meant is None else meant] - top - np.log(exp.sum())
            grad += p[:-1] @ x - (x[meant] if meant is not None else 0.0)
        return total, grad

    return minimize(loss, np.zeros(len(FEATURES)), jac=True, method="L-BFGS-B").x


def target_fit(examples: Sequence[Example], encoder: Encoder | None = None) -> Weights:
    """Fit the candidate model on examples, then choose the threshold and margin that decide most of them right.

    An example is decided right when its meant candidate is followed, or, when none is meant (the person
    should be asked), when the top candidate is not followed. On a plateau of choices, its middle."""
    groups, featured = [], []
    for example in examples:
        rows = features(example.message, example.candidates, encoder)
        ids = [c.id for c in example.candidates]
        groups.append((_matrix(rows), ids.index(example.meant) if example.meant in ids else None))
        featured.append((example, rows))
    coef = tuple(float(w) for w in _fit_logit(groups))
    fitted = Weights(coef, DEFAULT_THRESHOLD)
    tops = []
    for example, rows in featured:
        probabilities = fitted.probabilities(rows)
        order = sorted(range(len(rows)), key=lambda i: (-probabilities[i], example.candidates[i].recency))
        ranked = [probabilities[i] for i in order]
        tops.append((ranked, example.candidates[order[0]].id, example.meant))
    right = {}
    for threshold in THRESHOLD_GRID:
        for margin in MARGIN_GRID:
            rule = Weights(coef, threshold, margin)
            right[(threshold, margin)] = sum(
                (top == meant) if rule.follows(ranked) else (meant is None) for ranked, top, meant in tops
            )
    best = max(right.values())
    plateau = sorted(pair for pair, score in right.items() if score == best)
    threshold, margin = plateau[len(plateau) // 2]
    return Weights(coef, threshold, margin)


def weights_save(weights: Weights, *, examples: int) -> None:
    header = (
        "# The Router's candidate model (lomote/understanding/routing.py): logistic regression weights over the\n"
        "# features of a (message, task) pair and the probability from which the top task is followed. Fitted and\n"
        f"# chosen on the routing set's train split only ({examples} messages), by\n"
        "# `python manage.py eval_routing --fit-target`; never on held-out cases.\n"
    )
    body = {
        "coef": {name: round(w, 4) for name, w in zip(FEATURES, weights.coef, strict=True)},
        "threshold": weights.threshold,
        "margin": weights.margin,
    }
    WEIGHTS.write_text(header + yaml.safe_dump(body, sort_keys=False), encoding="utf-8")
    weights_load.cache_clear()
