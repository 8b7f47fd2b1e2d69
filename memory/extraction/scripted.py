"""The embedded extractor: rules over the sentence structure of explicit statements in English and French, and the
understanding layer's reading by meaning for what a business is, where and for whom.

It is not a language model. It reads each sentence of the evidence on its own and recognises six shapes; anything
else yields nothing (a question, a request for work, feedback on the work at
hand, a statement it cannot parse):

1. **Taste** — a speaker, then a verb of taste, then what they mean: "I prefer serif fonts", "we love warm
   palettes", "I don't like gradients", "j'aime les palettes peu saturées", "on préfère un fond blanc".
   → a durable *preference*; "I/je" makes it the person's, "we/on/nous" the workspace's. Its object must be a
   thing, not a pronoun or the work at hand ("I like it", "j'aime bien celle-ci" are feedback, not memory).
2. **Naming** — "our/my/the brand's <thing> is <value>": "our brand's main colour is blue", "notre couleur
   principale est le bleu", "our logo is a fox", "our tagline is 'Made to last'", "notre ton est décontracté".
   → a *fact* stated by the person ("my favourite colour is …": a preference). "our/notre" and the brand make
   it the workspace's, "my/mon" the person's.
3. **Rules** — "always / never / toujours / jamais / ne … jamais" with an imperative or a naming: "always put
   the logo bottom right", "never use gradients", "mets toujours le logo en bas à droite", "n'utilise jamais
   de dégradés". → a durable *preference* (a standing rule) of the workspace ("I always …": the person's).
4. **One-offs** — "this time / just this once / for this one / for this <work> / cette fois / pour celle-ci /
   pour cette <œuvre>" with a taste, a naming or an imperative: "this time, try a very saturated red".
   → a one-off *instruction*: stored, never superseding a durable preference of the same subject.
5. **Additions** — a sentence of none of the shapes above that judges how a value looks or works ("feels",
   "looks", "works", "goes", "ça donne", "rend", …) and names the value of a memory the workspace already has,
   or that an earlier sentence of the same evidence stated: "blue with an off-white feels softer" after "our
   brand's main colour is blue". → a preference with that memory's subject, marked `adds`: memory merges it
   into the existing version instead of replacing it.

6. **Who, where, for whom** — read by meaning, in every language the understanding layer knows, when no shape
   above reads the sentence: the `memory_about` decision (lomote/understanding/banks/memory_about.yaml) tells a
   business's name or trade ("I run a small ceramics studio called Terre & Feu", "nous sommes une boulangerie
   appelée Le Fournil", "it's now called Feu Sacré"), its place ("we are based in Lyon") or its customers from
   everything else. → a *fact* of the workspace under the label's subject ("business name", "business location",
   "audience"), so a new name supersedes the old one.

Each candidate's `subject` is what the statement is about, read from its structure (the noun phrase before
"is/est", the object of prefer/like, the thing after always/never), in canonical English words (reading.py),
so a later statement about the same subject — in either language — refines it: "brand main colour", "logo
position", "title font", "palette". Its `content` is the sentence as the person typed it.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from lomote.understanding import decide
from memory.extraction import lexicon as lx
from memory.extraction.reading import (
    STOP,
    Phrase,
    aspect_of,
    canonical,
    language_guess,
    noun_phrase,
    sentences,
    tokens,
    value_words,
)

MAX_SENTENCE_CHARS = 600
MAX_CANDIDATES = 20
MAX_NAMING_WORDS = 8

PREFERENCE, INSTRUCTION, FACT = "preference", "instruction", "fact"
WORKSPACE, PERSON = "workspace", "person"
# The understanding layer's `memory_about` labels and the subject each one's statements share ("none" and an
# abstention make no memory).
ABOUT_SUBJECTS = {"identity": "business name", "location": "business location", "audience": "audience"}


@dataclass(frozen=True)
class Reading:
    """One statement read: the candidate it makes, and the value words a later addition may refer to."""

    content: str
    subject: str
    kind: str
    scope: str
    value: frozenset[str]
    adds: bool = False

    def candidate(self) -> dict:
        candidate = {"content": self.content, "subject": self.subject, "kind": self.kind, "scope": self.scope}
        if self.adds:
            candidate["adds"] = True
        return candidate


@dataclass(frozen=True)
class Known:
    """A memory a sentence may add to: its subject, scope and value words."""

    subject: str
    scope: str
    value: frozenset[str]


def scripted_extract(text: str, existing: Sequence[Mapping] = ()) -> list[dict]:
    """Candidates from the explicit statements of `text` (see the module docstring), in the order stated.

    `existing`: the workspace's active memories ({"subject", "content", "kind", "scope"}), most recent first,
    for additions; each durable statement read here is known to the sentences after it."""
    known = [
        Known(subject=str(m["subject"]), scope=str(m.get("scope") or WORKSPACE), value=values_of(str(m["content"])))
        for m in existing
        if m.get("kind") in (PREFERENCE, FACT) and m.get("subject") and m.get("content")
    ]
    found: list[dict] = []
    seen: set[str] = set()
    for sentence in sentences(text):
        reading = sentence_read(sentence, known)
        if reading is None or reading.content.casefold() in seen:
            continue
        seen.add(reading.content.casefold())
        found.append(reading.candidate())
        if reading.kind != INSTRUCTION and not reading.adds:
            known.insert(0, Known(subject=reading.subject, scope=reading.scope, value=reading.value))
        if len(found) == MAX_CANDIDATES:
            break
    return found


def values_of(content: str) -> frozenset[str]:
    """The value words a memory's content states ("our brand's main colour is blue" → {"blue"})."""
    values: frozenset[str] = frozenset()
    for sentence in sentences(content.replace("; ", ".\n")):
        reading = sentence_read(sentence, ())
        if reading is not None:
            values |= reading.value
    return values


def statement_subject(content: str) -> str:
    """The subject of a statement a person made directly (memory_state): as read, else its content words."""
    for sentence in sentences(content):
        reading = sentence_read(sentence, ())
        if reading is not None:
            return reading.subject
    words = sorted(value_words(tokens(content)))
    return " ".join(words)[:200] or content.strip().casefold()[:200]


# --- one sentence ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Parse:
    phrase: Phrase
    scope: str
    kind: str
    value: frozenset[str]


def sentence_read(sentence: str, known: Sequence[Known]) -> Reading | None:
    text = sentence.strip()
    if not text or text.endswith("?") or len(text) > MAX_SENTENCE_CHARS:
        return None
    content = text.rstrip(" .!;…")
    words = _strip_openers(tokens(text))
    language = language_guess(words)
    words, one_off = _without_one_off(words)
    words, rule = _without_rule_markers(words)
    loose = one_off or rule
    parse = (
        _taste(words, language, allow_pointing=one_off)
        or _naming(words, language, loose=loose)
        or (_imperative(words, language, allow_pointing=one_off) if loose else None)
    )
    if parse is None:
        return None if loose else _addition(content, words, known) or _about(content)
    subject = parse.phrase.subject_text()
    if not subject:
        return None
    kind = INSTRUCTION if one_off else PREFERENCE if rule else parse.kind
    return Reading(content=content, subject=subject, kind=kind, scope=parse.scope, value=parse.value)


def _about(content: str) -> Reading | None:
    """Shape 6, read by meaning: who the business is, where it is, whom it serves — a fact of the workspace under
    one subject per label, so a later statement of the same kind ("it's now called Feu Sacré") supersedes it."""
    subject = ABOUT_SUBJECTS.get(decide("memory_about", content).label)
    if subject is None:
        return None
    return Reading(content=content, subject=subject, kind=FACT, scope=WORKSPACE, value=value_words(tokens(content)))


def _strip_openers(words: list[str]) -> list[str]:
    changed = True
    while changed and words:
        changed = False
        for opener in lx.OPENERS:
            if tuple(words[: len(opener)]) == opener:
                words, changed = words[len(opener) :], True
        if words and words[0] in lx.FILLERS:
            words, changed = words[1:], True
    return words


def _without_one_off(words: list[str]) -> tuple[list[str], bool]:
    """Remove a one-off marker ("this time", "pour cette affiche"); True if there was one."""
    for i, word in enumerate(words):
        length = next((len(p) for p in lx.ONE_OFF_PHRASES if tuple(words[i : i + len(p)]) == p), 0)
        if not length and word in lx.ONE_OFF_FOR and i + 2 < len(words) and words[i + 1] in lx.ONE_OFF_THIS:
            length = 3  # "for this poster", "pour cette vidéo"
        if length:
            start = i - 1 if i and words[i - 1] in lx.ONE_OFF_LEADS else i
            return words[:start] + words[i + length :], True
    return words, False


def _without_rule_markers(words: list[str]) -> tuple[list[str], bool]:
    kept = [w for w in words if w not in lx.RULE_MARKERS]
    return kept, len(kept) != len(words)


def _scope(phrase: Phrase, speaker_is_person: bool) -> str:
    return PERSON if speaker_is_person or (phrase.my and not phrase.our) else WORKSPACE


def _taste(words: list[str], language: str, *, allow_pointing: bool) -> _Parse | None:
    """'<I|we> [adverbs] [not] <prefer|like|…> <object>'."""
    for i, word in enumerate(words):
        if word not in lx.SPEAKER_I | lx.SPEAKER_WE:
            continue
        j = i + 1
        while j < len(words) and words[j] in lx.ADVERBS | lx.NEGATIONS | lx.RULE_MARKERS:
            j += 1
        if j >= len(words) or words[j] not in lx.PREFERENCE_VERBS:
            continue
        rest = words[j + 1 :]
        while rest and rest[0] in lx.ADVERBS | lx.NEGATIONS:
            rest = rest[1:]
        if rest and rest[0] == "to":
            rest = rest[2:]  # "prefer to use …"
        elif rest and _is_verb(rest, language):
            rest = rest[1:]  # "préfère mettre …"
        # "warm palettes over cold ones", "to cold ones": the comparison is not the subject
        cut = next((k for k, w in enumerate(rest) if w in ("over", "to") and k), len(rest))
        phrase = noun_phrase(rest[:cut], language, naming=False)
        if phrase is None or phrase.pronoun or (phrase.pointing and not allow_pointing):
            return None
        scope = _scope(phrase, speaker_is_person=word in lx.SPEAKER_I)
        return _Parse(phrase=phrase, scope=scope, kind=PREFERENCE, value=frozenset(phrase.value))
    return None


def _naming(words: list[str], language: str, *, loose: bool) -> _Parse | None:
    """'<our|my|the brand's> <thing> <is|est> <value>' (with `loose`, any noun phrase may name the thing)."""
    copula = next((i for i, w in enumerate(words) if w in lx.COPULAS), None)
    if not copula:
        return None
    named = words[:copula]
    while named and named[-1] in ("c'", "ce"):
        named = named[:-1]  # "notre couleur, c'est le bleu"
    if not named or len(named) > MAX_NAMING_WORDS:
        return None
    owned = any(w in lx.OUR | lx.MY for w in named) or any(canonical(w) == "brand" for w in named)
    opens = named[0] in lx.DETERMINERS | lx.OUR | lx.MY or canonical(named[0]) in lx.SUBJECT_WORDS
    if not opens or not (owned or loose):
        return None
    phrase = noun_phrase(named, language, naming=True)
    value = value_words(words[copula + 1 :])
    if phrase is None or phrase.pronoun or not value:
        return None
    if phrase.pointing and not loose:
        return None
    scope = _scope(phrase, speaker_is_person=False)
    if scope == WORKSPACE and (phrase.our or "brand" in phrase.subject):
        phrase.subject.append("brand")  # the workspace is the brand: "our colour" and "the brand's colour" meet
    favourite = any(w in lx.FAVOURITE for w in named)
    return _Parse(phrase=phrase, scope=scope, kind=PREFERENCE if favourite else FACT, value=value)


def _imperative(words: list[str], language: str, *, allow_pointing: bool) -> _Parse | None:
    """'[please|let's] [I|we] [don't] <verb> <object> [complement]', or a bare object ("jamais de rouge")."""
    person = False
    while words and words[0] in lx.POLITE | lx.SPEAKER_I | lx.SPEAKER_WE | lx.NEGATIONS:
        person = person or words[0] in lx.SPEAKER_I
        words = words[1:]
    if not words:
        return None
    verb = None
    if _is_verb(words, language):
        verb, words = words[0], words[1:]
        while words and words[0] in lx.NEGATIONS:
            words = words[1:]
    phrase = noun_phrase(words, language, naming=False)
    if phrase is None:
        if verb is None:
            return None
        phrase = Phrase(head=canonical(verb))  # "always sign with …": about signing
        for word in words:
            phrase.take_value(word)
    if phrase.pronoun or (phrase.pointing and not allow_pointing):
        return None
    if verb is not None and phrase.aspect is None:
        phrase = replace(phrase, aspect=lx.VERB_ASPECTS.get(verb))
    return _Parse(phrase=phrase, scope=_scope(phrase, person), kind=PREFERENCE, value=frozenset(phrase.value))


def _is_verb(words: Sequence[str], language: str) -> bool:
    first = words[0]
    if first in lx.VERBS:
        return True
    if first in STOP or aspect_of(first) or canonical(first) in lx.SUBJECT_WORDS:
        return False
    follows = words[1] if len(words) > 1 else ""
    if follows in lx.DETERMINERS | lx.OUR | lx.MY | lx.OTHER_POSSESSIVES | lx.DEMONSTRATIVES:
        return True
    return language == "fr" and first.endswith(("er", "ez", "ons", "ir")) and len(first) > 3


def _addition(content: str, words: list[str], known: Sequence[Known]) -> Reading | None:
    """A judgement of a known memory's value adds to that memory: the value is named before the judging verb
    ("blue with an off-white feels softer"; a request such as "make it blue" is no judgement). The most
    specific match wins, then the most recent."""
    verb = next((i for i, w in enumerate(words) if w in lx.EVALUATIVE_VERBS | lx.COPULAS), None)
    if not known or not verb:
        return None
    before, said = value_words(words[:verb]), value_words(words)
    best = max(
        (k for k in known if k.value and k.value <= said and k.value & before),
        key=lambda k: len(k.value),
        default=None,
    )
    if best is None:
        return None
    return Reading(
        content=content, subject=best.subject, kind=PREFERENCE, scope=best.scope, value=best.value, adds=True
    )
