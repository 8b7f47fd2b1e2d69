"""The offline writer: what a generate_text node writes when no language model is set up (issue 34 item 4).

    offline_write(*, instructions, template, prompt, material, facts=Facts()) -> dict

It writes real text from the node's input — never its prompt handed back — by filling a template in the input's
language with what the understanding layer reads (lomote/understanding, DESIGN §15):

- the FORM, read by meaning from what the node asks (its instructions and prompt, without the input): the
  `text_form` decision answers caption, title, shot_list, summary or description, or abstains — then it writes a
  description, and its output says the form was not read (`form_read: "ask"`);
- the SUBJECT, read by the subject tagger from the prompt with its input (the request frames it), else the input's
  opening words; the KIND of work the input speaks of (a caption for a poster opens "New poster: …"); the COUNT
  the request asks for (three titles, five shots);
- the input's own sentences (a detail, the opening and the latest of a conversation) and what the workspace's
  memories say of itself (`Facts`: its brand's name and tagline, gathered by agents/services/flow_nodes.py).

The sentences are data (writer.yaml); a sentence whose placeholder has no value is left out. The output says what
wrote it: `writer: "offline"`, `model: "offline-scripted"` and a `note` in the text's language.
"""

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from lomote.understanding import decide
from lomote.understanding.banks import ASK
from lomote.understanding.counts import count_of
from lomote.understanding.language_id import language_identify
from lomote.understanding.normalise import normalise
from lomote.understanding.subject import subject_of

PHRASES = Path(__file__).with_name("writer.yaml")
OFFLINE_MODEL = "offline-scripted"
WRITER = "offline"
# What a node's output keeps of the writer's answer, besides its text and model.
WRITER_FIELDS = ("writer", "form", "form_read", "form_confidence", "language", "subject", "note")
FALLBACK_FORM = "description"
KIND_CONFIDENCE = 0.6  # a kind named in a caption must be read surely: "New poster" about a mug would be wrong
DEFAULT_COUNTS = {"shot_list": 3, "title": 1}
MAX_COUNTS = {"shot_list": 12, "title": 6}
MAX_DETAIL = 240
MAX_DETAILS = 3
MAX_SUBJECT = 60
MAX_MATERIAL = 20_000
MAX_TAG_WORDS = 3
MAX_CLAUSE_WORDS = 10
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_SPEAKER_LINE = re.compile(r"^\s*([^:\n]{1,40}):\s+(\S.*)$")  # a thread transcript's line: "alice: We need posters."
_FIELD = re.compile(r"{(\w+)}")


@dataclass(frozen=True)
class Facts:
    """What the workspace's memories say of itself, as written there."""

    brand: str = ""
    tagline: str = ""


@functools.cache
def _phrases() -> dict[str, Any]:
    return yaml.safe_load(PHRASES.read_text(encoding="utf-8"))


def _clean(text: str) -> str:
    return " ".join(normalise(text).split())


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _fill(line: str, values: dict[str, Any]) -> str | None:
    """The line with its placeholders filled, or None when one of them has no value."""
    if any(not values.get(name) for name in _FIELD.findall(line)):
        return None
    return line.format(**values)


def _first(lines: list[str], values: dict[str, Any]) -> str:
    return next((filled for line in lines if (filled := _fill(line, values)) is not None), "")


def _sentences(material: str) -> list[str]:
    return [_clean(s).rstrip(".").strip() for s in _SENTENCE.split(material) if len(s.split()) >= 2]


def _details(sentences: list[str], subject: str) -> list[str]:
    """The input's sentences that say more than its subject: a sentence opening with the subject keeps the rest
    ("winter pottery classes, every Tuesday evening" → "Every Tuesday evening")."""
    found = []
    for sentence in sentences:
        if subject and sentence.casefold().startswith(subject.casefold()):
            sentence = sentence[len(subject) :].strip(" ,;:—-")
        if len(sentence.split()) >= 2 and not _same(sentence, subject):
            found.append(_capital(sentence))
    return found


def _head(subject: str) -> str:
    """A subject's head: what it names before a comma or a colon, when that is at least two words."""
    head = re.split(r"[,;:—]", subject)[0].strip()
    return head if len(head.split()) >= 2 else subject


def _opening_clause(sentences: list[str]) -> str:
    return re.split(r"[,;:—]", sentences[0])[0].strip() if sentences else ""


def _same(a: str, b: str) -> bool:
    return re.sub(r"\W+", " ", a).strip().casefold() == re.sub(r"\W+", " ", b).strip().casefold()


def _bounded(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[: limit + 1].rsplit(" ", 1)[0].rstrip(" ,;:-") + "…"


def _hashtags(subject: str, brand: str) -> str:
    """A tag for a short subject (or for its three longest words) and one for the brand."""
    words = [w for w in re.findall(r"[^\W_]+", subject) if not w.isdigit()]
    groups = [words] if len(words) <= MAX_TAG_WORDS else [[w] for w in sorted(words, key=len, reverse=True)[:3]]
    groups.append(re.findall(r"[^\W_]+", brand))
    tags = []
    for group in groups:
        tag = "".join(_capital(word) for word in group)[:40]
        if tag and tag.casefold() not in (t.casefold() for t in tags):
            tags.append(tag)
    return " ".join(f"#{tag}" for tag in tags)


def _request(instructions: str, template: str) -> str:
    """What the node asks, without its input: the instructions and the prompt around `{input}`."""
    asked = " ".join(part for part in (instructions, template.replace("{input}", " ")) if part.strip())
    return _clean(asked).strip(" :,;-—")


def _subject(prompt: str, instructions: str, material: str, sentences: list[str]) -> str:
    """The subject tagger's reading of the request with its input, kept to the input's words: the part of it the
    input holds, widened to the input's opening clause when that clause is short and holds it ("mug" in
    "Speckled mug. Stoneware…" is the speckled mug; "Terre & Feu" in "winter pottery classes at Terre & Feu" is
    where the classes are, not what they are)."""
    framed = f"{instructions}: {prompt}" if instructions.strip() else prompt
    subject = subject_of(framed, MAX_SUBJECT) if framed.strip() else ""
    if subject and subject not in material:
        tails = [subject[cut.end() :] for cut in re.finditer(r"[:,—]\s*", subject)]
        subject = next((tail for tail in tails if tail and tail in material), subject)
    clause = _opening_clause(sentences)
    if clause and (not subject or _head(subject) in clause) and len(clause.split()) <= MAX_CLAUSE_WORDS:
        subject = clause
    return _bounded(subject, MAX_SUBJECT)


def _kind(text: str, names: dict[str, str]) -> str:
    decision = decide("kind", text) if text.strip() else None
    if decision is None or decision.abstained or decision.confidence < KIND_CONFIDENCE:
        return ""
    return names.get(decision.label, "")


def offline_write(
    *, instructions: str, template: str, prompt: str, material: str, facts: Facts | None = None
) -> dict[str, Any]:
    """The node's text, written offline (module docstring). Deterministic: the same inputs write the same text."""
    facts = facts or Facts()
    material = (material or "")[:MAX_MATERIAL].strip()
    request = _request(instructions, template)
    reading = request if re.search(r"[^\W\d_]", request) else material[:400]
    decision = decide("text_form", reading) if reading else None
    form = decision.label if decision is not None and not decision.abstained else FALLBACK_FORM
    language = language_identify(_clean(material[:400]) or reading, default=language_identify(reading))
    phrases = _phrases().get(language) or _phrases()["en"]
    language = language if language in _phrases() else "en"

    transcript = [m for line in material.splitlines() if (m := _SPEAKER_LINE.match(_clean(line)))]
    if transcript:
        # A conversation's lines are messages, not a brief: its subject is read from what was said in them.
        said = " ".join(m.group(2) for m in transcript)
        sentences, subject = [], _subject(said, instructions, said, [])
    else:
        sentences = _sentences(material)
        subject = _subject(_clean(prompt), instructions, _clean(material), sentences)
    details = _details(sentences, subject)
    count = count_of(request, language) if form in DEFAULT_COUNTS else None
    values: dict[str, Any] = {
        "subject": subject,
        "Subject": _capital(subject),
        "brand": _clean(facts.brand),
        "tagline": _clean(facts.tagline),
        "detail": " ".join(_bounded(d, MAX_DETAIL).rstrip(".") + "." for d in details[:2]).rstrip("."),
        "details": " ".join(f"{_bounded(d, MAX_DETAIL)}." for d in details[:MAX_DETAILS]),
        # Read only where a sentence names it (a caption's opening): each decision read costs its first use.
        "kind": _kind(material or prompt, phrases["kinds"]) if form == "caption" else "",
        "count": min(count or DEFAULT_COUNTS.get(form, 1), MAX_COUNTS.get(form, 1)),
    }
    if not subject and not transcript:
        fallback = values["detail"] or _bounded(_clean(material), MAX_SUBJECT) or values["brand"]
        values.update(subject=fallback, Subject=_capital(fallback))
    if values["brand"] and values["brand"].casefold() in values["subject"].casefold():
        values["brand"] = ""  # "Terre & Feu, by Terre & Feu": the subject already names it

    text = WRITERS[form](phrases[form], values, transcript, sentences)
    return {
        "text": text,
        "writer": WRITER,
        "model": OFFLINE_MODEL,
        "form": form,
        "form_read": decision.label if decision is not None else ASK,
        "form_confidence": round(decision.confidence, 3) if decision is not None else 0.0,
        "language": language,
        "subject": subject,
        "note": phrases["note"],
    }


def _caption(p: dict, values: dict, transcript: list, sentences: list[str]) -> str:
    lines = [_first(p["opening"], values)]
    lines += [filled for line in p["lines"] if (filled := _fill(line, values))]
    lines.append(_hashtags(values["subject"], values["brand"]))
    return "\n".join(line for line in lines if line)


def _description(p: dict, values: dict, transcript: list, sentences: list[str]) -> str:
    lines = [_first(p["opening"], values)]
    lines += [filled for line in p["lines"] if (filled := _fill(line, values))]
    return "\n".join(line for line in lines if line)


def _title(p: list[str], values: dict, transcript: list, sentences: list[str]) -> str:
    # A title is the head of the subject: "Neue Winterkollektion", not all that follows its colon.
    head = _head(values["subject"])
    values = {**values, "subject": head, "Subject": _capital(head)}
    options = list(dict.fromkeys(filled for line in p if (filled := _fill(line, values))))
    chosen = options[: values["count"]]
    if len(chosen) == 1:
        return chosen[0]
    return "\n".join(f"{n}. {title}" for n, title in enumerate(chosen, start=1))


def _shot_list(p: dict, values: dict, transcript: list, sentences: list[str]) -> str:
    count = values["count"]
    lines = [_fill(p["heading"], values) or "", _fill(p["setting"], values) or ""]
    head = _head(values["subject"])  # each shot names the subject short
    values = {**values, "subject": head, "Subject": _capital(head)}
    for n in range(1, count + 1):
        last = n == count and count >= 3
        action = _first(p["closing"], values) if last else p["actions"][(n - 1) % len(p["actions"])].format(**values)
        framing = p["framings"][(n - 1) % len(p["framings"])]
        lines.append(p["shot"].format(n=n, framing=framing, action=action))
    return "\n".join(line for line in lines if line)


def _summary(p: dict, values: dict, transcript: list, sentences: list[str]) -> str:
    lines = [_first(p["heading"], values)]
    if transcript:
        speakers = list(dict.fromkeys(m.group(1).strip() for m in transcript))
        said = [m.group(2).strip() for m in transcript]
        if len(transcript) > 1:
            lines.append(p["speakers"].format(count=len(transcript), speakers=", ".join(speakers)))
        first, last = said[0], said[-1]
    else:
        first, last = (sentences[0], sentences[-1]) if sentences else ("", "")
    if first:
        lines.append(p["first"].format(first=_bounded(first, MAX_DETAIL)))
    if last and last != first:
        lines.append(p["last"].format(last=_bounded(last, MAX_DETAIL)))
    return "\n".join(line for line in lines if line)


WRITERS = {
    "caption": _caption,
    "description": _description,
    "title": _title,
    "shot_list": _shot_list,
    "summary": _summary,
}
