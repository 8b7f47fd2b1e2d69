"""Which of the workspace's files a request starts from ("my sketch", "the photo I just uploaded", "ce croquis",
"yesterday's cat photo"), by meaning and recency (DESIGN §15: a person's own material is the job's source).

Two decisions read the words: `source` (does the request point at the person's own material, and which kind —
sketch, photo, logo, document, video — or none) and `source_time` (latest, yesterday, or unspecified). Then each
candidate (the workspace's recent files, as a selector lists them) is scored by

    meaning(request, candidate) + GLOSS_WEIGHT · fit(kind, candidate) + w(when) · recency + named + own

where a candidate's text is its title, file name and description, `meaning` is the encoder's cosine, `fit` is how
much closer the candidate reads to the bank's description of the kind asked ("a sketch, a hand drawing,
croquis, Skizze…": a file named "logo-sketch.png" reads as a sketch in any language) than to the other kinds
its artifact could be (so it is a poor answer to "my photo"), recency weighs time as the person said it ("just
uploaded": minutes count; "yesterday's": the day before counts; nothing said: a mild preference for the newer),
`named` counts a file whose own name the request writes ("animate IMG_2041") and `own` prefers what the person
uploaded over what a task made ("just uploaded" counts from the person's newest upload and never credits a
task's result). Candidates of a kind of artifact the reference cannot be (a document for "my photo") are not
ranked, nor those whose evidence (the sum without `own`) is below MIN_EVIDENCE: then nothing fits and the work
starts from the person's words. Two candidates scoring within MARGIN of each other are a question for the
person, not a guess: the reading is `ambiguous` and names them.

Pure: no Django, no database. The caller lists the candidates (workspace/selectors.py) and acts on the reading.
"""

import functools
import math
import re
from dataclasses import dataclass

import numpy as np

from lomote.understanding.banks import BANKS, yaml_read
from lomote.understanding.classifier import decide
from lomote.understanding.encoder import Encoder, encoder_default
from lomote.understanding.normalise import fold

NONE = "none"
# The kinds of artifact each kind of material can be.
ARTIFACT_KINDS: dict[str, frozenset[str]] = {
    "sketch": frozenset({"image"}),
    "photo": frozenset({"image"}),
    "logo": frozenset({"image"}),
    "document": frozenset({"document"}),
    "video": frozenset({"video"}),
}
GLOSS_WEIGHT = 0.5
# How much recency weighs, per time the person said: "just uploaded" makes the newest file win against a
# slightly better title; with nothing said, recency only breaks near-ties.
RECENCY_WEIGHT = {"latest": 0.6, "yesterday": 0.6, "unspecified": 0.1}
LATEST_SCALE = 15 * 60.0  # seconds: "just now" fades over a quarter of an hour
UNSPECIFIED_SCALE = 3 * 86400.0
DAY = 86400.0
OWN_BONUS = 0.1  # a person's upload over a task's result, all else equal
# Below this a file fits neither by meaning nor by time ("my photo of the dog" and only a file named
# "logo-sketch"): it is not ranked, and the work starts from the person's words alone.
MIN_EVIDENCE = 0.2
MARGIN = 0.04  # two candidates this close are asked about
MAX_CHOICES = 4
NAMED_BONUS = 0.5  # the file's own name written in the request
_WORD = re.compile(r"[^\W_]+")
COPY_COUNTER = re.compile(r"\s*(\(\d+\)|copy( \d+)?)$", re.IGNORECASE)


@dataclass(frozen=True)
class Candidate:
    id: int
    kind: str  # the artifact's kind: image, video, document, 3d…
    title: str
    filename: str = ""
    description: str = ""
    age_seconds: float = 0.0  # how long ago it was added
    uploaded: bool = False  # a person's own file (not a task's result)

    @property
    def text(self) -> str:
        # "sketch (1).png" is a second copy of "sketch.png", not a different meaning: drop the copy counter.
        stem = COPY_COUNTER.sub("", self.filename.rsplit(".", 1)[0]).replace("_", " ").replace("-", " ")
        parts = [self.title, stem if stem.casefold() not in self.title.casefold() else "", self.description]
        return ". ".join(part.strip() for part in parts if part and part.strip())[:300]


@dataclass(frozen=True)
class SourceReading:
    reference: str  # the kind of material the request points at, or "none"
    confidence: float
    when: str  # latest | yesterday | unspecified
    ranked: tuple[tuple[Candidate, float], ...]  # the candidates it can be, best first, with their scores
    ambiguous: bool

    @property
    def chosen(self) -> Candidate | None:
        """The source to use: the best candidate when it stands out, else None (none named, none fits, or a
        question for the person)."""
        return self.ranked[0][0] if self.ranked and not self.ambiguous else None

    @property
    def choices(self) -> tuple[Candidate, ...]:
        """What to ask the person about when ambiguous: the candidates, best first."""
        return tuple(candidate for candidate, _ in self.ranked[:MAX_CHOICES])


@functools.cache
def glosses() -> dict[str, str]:
    data = yaml_read(BANKS / "source.yaml")
    return {str(label): str(text) for label, text in (data.get("glosses") or {}).items()}


def recency(age_seconds: float, when: str) -> float:
    """In [0, 1]: how well a file added `age_seconds` ago fits the time the person said."""
    age = max(0.0, float(age_seconds))
    if when == "latest":
        return math.exp(-age / LATEST_SCALE)
    if when == "yesterday":
        # The day before (give or take the clock: "yesterday" said at 1 a.m. may be three hours ago).
        if 0.1 * DAY <= age <= 2 * DAY:
            return 1.0
        return math.exp(-min(abs(age - 0.1 * DAY), abs(age - 2 * DAY)) / (0.5 * DAY))
    return math.exp(-age / UNSPECIFIED_SCALE)


def _words(text: str) -> tuple[str, ...]:
    return tuple(_WORD.findall(fold(text)))


def named(text: str, candidate: Candidate) -> bool:
    """The request writes the file's name ("animate IMG_2041", "the logo-sketch one"): identity, not meaning. A
    name of one plain word ("logo", "sketch") says no more than the kind and is left to meaning."""
    said = f" {' '.join(_words(text))} "
    for name in (candidate.title, COPY_COUNTER.sub("", candidate.filename.rsplit(".", 1)[0])):
        words = _words(name)
        if (len(words) >= 2 or any(ch.isdigit() for ch in "".join(words))) and f" {' '.join(words)} " in said:
            return True
    return False


def sources_rank(
    text: str, reference: str, when: str, candidates: list[Candidate], encoder: Encoder | None = None
) -> list[tuple[Candidate, float]]:
    """The candidates the reference can be, scored (module docstring), best first; ties go to the newer."""
    kinds = ARTIFACT_KINDS.get(reference)
    fitting = [c for c in candidates if kinds is None or c.kind in kinds]
    if not fitting:
        return []
    encoder = encoder or encoder_default()
    # The other kinds the same artifacts could be: a file that reads more as a sketch than as a photo is a
    # worse answer to "the photo I just uploaded" than an unnamed "IMG_2041".
    others = [k for k, each in ARTIFACT_KINDS.items() if k != reference and each & (kinds or frozenset())]
    described = [glosses().get(k, "") for k in (reference, *others)]
    rows = encoder.encode([text, *described, *(c.text or c.kind for c in fitting)])
    request, gloss_rows, files = rows[0], rows[1 : 1 + len(described)], rows[1 + len(described) :]
    meaning = files @ request
    fit = np.zeros(len(fitting))
    if described[0]:
        by_gloss = files @ gloss_rows.T
        fit = by_gloss[:, 0] - (by_gloss[:, 1:].mean(axis=1) if others else 0.0)
    weight = RECENCY_WEIGHT.get(when, RECENCY_WEIGHT["unspecified"])
    # "The photo I just uploaded", "my latest upload": what the person added last, even when they took a while to
    # ask (time counts from their newest fitting upload, not from now); a task's result was not uploaded by them.
    uploads = [c.age_seconds for c in fitting if c.uploaded]
    newest = min(uploads) if when == "latest" and uploads else 0.0
    scored = []
    for i, c in enumerate(fitting):
        timely = 0.0 if when == "latest" and not c.uploaded else recency(c.age_seconds - newest, when)
        evidence = float(meaning[i] + GLOSS_WEIGHT * fit[i] + weight * timely + NAMED_BONUS * named(text, c))
        if evidence >= MIN_EVIDENCE:
            scored.append((c, evidence + OWN_BONUS * c.uploaded))
    # Scores equal up to float noise (the same words encoded in another batch) are a tie: the newer file wins.
    return sorted(scored, key=lambda pair: (-round(pair[1], 6), pair[0].age_seconds, -pair[0].id))


def source_read(text: str, candidates: list[Candidate], encoder: Encoder | None = None) -> SourceReading:
    """What the request points at among the candidates (module docstring). An abstention on either decision is
    read as its neutral answer: no material named, no time said."""
    reference = decide("source", text)
    label = NONE if reference.abstained else reference.label
    said = decide("source_time", text)
    when = "unspecified" if said.abstained else said.label
    if label == NONE:
        return SourceReading(NONE, reference.confidence, when, (), False)
    ranked = tuple(sources_rank(text, label, when, candidates, encoder))
    ambiguous = len(ranked) > 1 and ranked[0][1] - ranked[1][1] < MARGIN
    return SourceReading(label, reference.confidence, when, ranked, ambiguous)
