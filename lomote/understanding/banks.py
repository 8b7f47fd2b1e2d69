"""Exemplar banks and labelled sets, read from the YAML beside this module (STYLE rule 19: phrases are data).

A bank (banks/<decision>.yaml) lists, per label and per language, phrasings that mean that label. Its `none`
label, when it has one, holds what people say that is not this decision at all (thanks, a question about the
bill): reading it is an abstention, not a label. A labelled set (eval/<decision>.yaml) groups its cases by split
(`train` or `heldout`), language and expected label; a multi-label case names its labels joined by "+", and "ask"
means the right answer is to abstain and ask the person.
"""

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from lomote.understanding.languages import LANGUAGES

HERE = Path(__file__).resolve().parent
BANKS = HERE / "banks"
EVAL = HERE / "eval"
THRESHOLDS = HERE / "thresholds.yaml"
SPLITS = ("train", "heldout")
ASK = "ask"


class BankInvalid(ValueError):
    """A bank or labelled set that cannot be read as one: the message says which file and where."""


@dataclass(frozen=True)
class Bank:
    decision: str
    multi_label: bool
    none_label: str | None
    texts: tuple[str, ...]
    labels: tuple[str, ...]  # one per text
    languages: tuple[str, ...]  # one per text
    opposites: tuple[tuple[str, str], ...] = ()  # label pairs nobody asks at once (multi-label decisions)

    @property
    def label_set(self) -> tuple[str, ...]:
        return tuple(sorted(set(self.labels) - {self.none_label}))


@dataclass(frozen=True)
class Case:
    text: str
    expected: frozenset[str]
    language: str
    split: str


def _check_language(path: Path, language: str) -> None:
    if language not in LANGUAGES:
        raise BankInvalid(f"{path.name}: unknown language {language!r} (known: {', '.join(LANGUAGES)})")


def yaml_read(path: Path) -> Any:
    """A YAML file of ours, parsed by libyaml where PyYAML has it (the banks are large: ten times faster)."""
    return yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506 — a safe loader


@functools.cache
def bank_load(decision: str) -> Bank:
    path = BANKS / f"{decision}.yaml"
    data = yaml_read(path)
    texts, labels, languages = [], [], []
    for label, by_language in data["labels"].items():
        for language, phrasings in by_language.items():
            _check_language(path, language)
            for text in phrasings:
                texts.append(str(text))
                labels.append(label)
                languages.append(language)
    none_label = data.get("none_label")
    opposites = tuple((str(a), str(b)) for a, b in data.get("opposites") or ())
    if unknown := {label for pair in opposites for label in pair} - set(labels):
        raise BankInvalid(f"{path.name}: opposites name unknown label(s) {sorted(unknown)}")
    if none_label is not None and none_label not in labels:
        raise BankInvalid(f"{path.name}: none_label {none_label!r} has no exemplars")
    return Bank(
        decision=decision,
        multi_label=bool(data.get("multi_label", False)),
        none_label=none_label,
        texts=tuple(texts),
        labels=tuple(labels),
        languages=tuple(languages),
        opposites=opposites,
    )


@functools.cache
def cases_load(decision: str) -> tuple[Case, ...]:
    path = EVAL / f"{decision}.yaml"
    data = yaml_read(path)
    known = set(bank_load(decision).label_set) | {ASK}
    cases = []
    for split in SPLITS:
        for language, by_label in (data.get(split) or {}).items():
            _check_language(path, language)
            for key, texts in by_label.items():
                expected = frozenset(str(key).split("+"))
                if unknown := expected - known:
                    raise BankInvalid(f"{path.name}: {split}/{language}: unknown label(s) {sorted(unknown)}")
                cases.extend(Case(str(text), expected, language, split) for text in texts)
    return tuple(cases)


def thresholds_load() -> dict[str, dict[str, float]]:
    """Per decision: `abstain` (the top label's probability below which it asks) and, for multi-label
    decisions, `clause` (the probability from which a clause adds its label)."""
    if not THRESHOLDS.exists():
        return {}
    data = yaml_read(THRESHOLDS) or {}
    return {name: {key: float(value) for key, value in values.items()} for name, values in data.items()}


def thresholds_save(values: dict[str, dict[str, float]]) -> None:
    header = (
        "# Each decision's thresholds on its labels' probabilities, chosen on the labelled set's train split\n"
        "# only (python manage.py eval_understanding --choose-thresholds); never on held-out cases.\n"
    )
    rounded = {name: {key: round(value, 2) for key, value in sorted(each.items())} for name, each in values.items()}
    body = yaml.safe_dump(dict(sorted(rounded.items())), sort_keys=True)
    THRESHOLDS.write_text(header + body, encoding="utf-8")
