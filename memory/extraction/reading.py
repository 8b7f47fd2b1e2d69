"""How the scripted extractor reads words: sentences, tokens, a sentence's language, and noun phrases.

A noun phrase is read into what it is *about* (its subject words: the head noun, the nouns and qualifiers
that name which one — "brand", "main", "title" — and the nouns after of/for/on) and what it *says* (its value
words: adjectives and complements, "serif", "warm", "in uppercase"). When the value is a colour, a position,
a size, a case or a language, the subject gains that aspect: "the logo bottom right" is about the logo's
position. English heads come last ("serif title fonts"), French heads first ("les polices sans empattement").
"""

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field

from memory.extraction import lexicon as lx

_ELISION = re.compile(r"\b(l|d|j|n|m|t|s|c|qu)'(?=\w)")
_TOKEN = re.compile(r"[\w'-]+")
_SENTENCE = re.compile(r"(?<=[.!?;…])\s+|\n+|,\s+(?:and|but|et|mais)\s+", re.IGNORECASE)

# Words that carry neither a subject nor a value.
STOP = (
    lx.DETERMINERS
    | lx.ADVERBS
    | lx.NEGATIONS
    | lx.PREPOSITIONS
    | lx.CLAUSE_BREAKS
    | lx.COPULAS
    | lx.MODALS
    | lx.FILLERS
    | lx.OUR
    | lx.MY
    | lx.OTHER_POSSESSIVES
    | lx.DEMONSTRATIVES
    | lx.PRONOUNS
    | lx.SPEAKER_I
    | lx.SPEAKER_WE
    | frozenset({"and", "or", "et", "ou", "c'", "ce", "was", "were", "be", "été", "être", "it's", "i'm", "we're"})
)


def sentences(text: str) -> list[str]:
    """The sentences (and clauses joined by ", and" / ", but" / ", et" / ", mais") of a text, as typed."""
    return [part.strip() for part in _SENTENCE.split(text or "") if part and part.strip()]


def tokens(text: str) -> list[str]:
    """Lower-case words; French elisions stand alone ("j'aime" → "j'", "aime"); "brand's", "bottom-right" and
    "celle-ci" stay whole."""
    folded = unicodedata.normalize("NFKC", text or "").casefold().replace("’", "'").replace("‘", "'")
    folded = _ELISION.sub(r"\1' ", folded)
    words = []
    for raw in _TOKEN.findall(folded):
        if raw.endswith("'") and raw in lx.DETERMINERS | lx.SPEAKER_I | lx.NEGATIONS | {"c'", "qu'", "s'", "m'"}:
            words.append(raw)
            continue
        word = raw.strip("'-_")
        if word:
            words.append(word)
    return words


def language_guess(words: Sequence[str]) -> str:
    """ "fr" when more French than English function words, else "en" (the extractor reads these two)."""
    french = sum(word in lx.LANGUAGE_MARKERS["fr"] for word in words)
    english = sum(word in lx.LANGUAGE_MARKERS["en"] for word in words)
    return "fr" if french > english else "en"


def singular(word: str) -> str:
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def canonical(word: str) -> str:
    """The subject name of a word: its canonical noun ("couleurs" → "colour"), else its singular as typed."""
    if word in lx.NOUNS:
        return lx.NOUNS[word]
    if word.endswith("'s"):
        return canonical(word[:-2])
    one = singular(word)
    return lx.NOUNS.get(one, one)


def aspect_of(word: str) -> tuple[str, str] | None:
    """(aspect, canonical value) when the word is a value of an aspect: "bleue" → ("colour", "blue"). For a
    hyphenated word, its last part decides ("off-white" is a white, "bottom-right" a position)."""
    if word in lx.NOUNS and "-" not in word:
        return None
    candidates = [word, singular(word)]
    if "-" in word:
        last = word.rsplit("-", 1)[1]
        candidates += [last, singular(last)]
    for candidate in candidates:
        for aspect, values in lx.ASPECTS.items():
            if candidate in values:
                return aspect, values[candidate]
    return None


def value_word(word: str) -> str:
    found = aspect_of(word)
    return found[1] if found else canonical(word)


def value_words(words: Sequence[str]) -> frozenset[str]:
    """The content words of a value, canonical ("le bleu" and "blue" are both {"blue"})."""
    return frozenset(value_word(w) for w in words if w not in STOP and not w.isdigit())


@dataclass
class Phrase:
    """A noun phrase read: subject words (canonical, unordered), head, aspect, value words, and what it points
    at: whose it is (`our`, `my`) and whether it points at the work at hand (`pointing`) or is a pronoun."""

    subject: list[str] = field(default_factory=list)
    head: str | None = None
    aspect: str | None = None
    value: set[str] = field(default_factory=set)
    our: bool = False
    my: bool = False
    pointing: bool = False
    pronoun: bool = False

    def take_value(self, word: str) -> None:
        found = aspect_of(word)
        if found is None:
            if word not in STOP:
                self.value.add(canonical(word))
            return
        self.aspect = self.aspect or found[0]
        self.value.add(found[1])

    def subject_text(self) -> str | None:
        """Sorted qualifiers, then the head, then the aspect: "brand main colour", "logo position"."""
        named = {self.head, self.aspect}
        qualifiers = sorted({w for w in self.subject if w not in named and w not in lx.FAVOURITE})
        words = qualifiers + [w for w in (self.head, self.aspect) if w]
        unique = list(dict.fromkeys(words))
        return " ".join(unique)[:200] or None


def _is_position(word: str) -> bool:
    found = aspect_of(word)
    return found is not None and found[0] == "position"


def _is_content(word: str) -> bool:
    return word not in STOP


def _mark(phrase: Phrase, word: str) -> bool:
    """Record what a function word says about the phrase; True if the word is a function word."""
    if word in lx.OUR:
        phrase.our = True
    elif word in lx.MY:
        phrase.my = True
    elif word in lx.DEMONSTRATIVES:
        phrase.pointing = True
    return not _is_content(word)


def _content(phrase: Phrase, words: Sequence[str]) -> list[str]:
    """The content words of a span, marking its possessives and demonstratives on the phrase. A possessive
    right after a determiner is a noun: "notre *ton*" (our tone), "le *son*" (the sound)."""
    content: list[str] = []
    previous = ""
    for word in words:
        owned = previous in lx.DETERMINERS | lx.OUR | lx.MY | lx.OTHER_POSSESSIVES
        if (owned and word in lx.OTHER_POSSESSIVES) or not _mark(phrase, word):
            content.append(word)
        previous = word
    return content


def noun_phrase(words: Sequence[str], language: str, *, naming: bool) -> Phrase | None:
    """Read a noun phrase and its complements. `naming`: the phrase names a thing ("our brand's main colour
    is …"), so all its words are the subject; otherwise it is an object of taste or of a rule ("serif fonts"),
    and only nouns that name a part of the work stay in the subject while adjectives become the value."""
    phrase = Phrase()
    head_part: list[str] = []
    complements: list[tuple[str, list[str]]] = []
    for word in words:
        if word in lx.CLAUSE_BREAKS:
            break
        partitive = word in lx.DETERMINERS and not any(_is_content(w) for w in head_part) and not complements
        if word in lx.PREPOSITIONS and not partitive:
            complements.append((word, []))
            continue
        (complements[-1][1] if complements else head_part).append(word)

    content = _content(phrase, head_part)
    if language == "en":
        # "the logo bottom right": positions after the noun are its complement (colours and sizes come before
        # it in English: "a saturated red", "big titles").
        trailing: list[str] = []
        while len(content) > 1 and _is_position(content[-1]):
            trailing.insert(0, content.pop())
        if trailing and all(aspect_of(w) for w in content):
            content += trailing  # all values ("top left"): no noun to hang them on
            trailing = []
        if trailing:
            complements.insert(0, ("", trailing))
        head, modifiers = (content[-1], content[:-1]) if content else (None, [])
    else:
        while len(content) > 1 and content[0] in lx.FRENCH_PRENOMINAL:
            phrase.take_value(content.pop(0))
        head, modifiers = (content[0], content[1:]) if content else (None, [])

    if head is not None:
        if head in lx.PRONOUNS:
            phrase.pronoun = True
            return phrase
        if aspect_of(head):
            phrase.take_value(head)
        else:
            phrase.head = canonical(head)
    for word in modifiers:
        if aspect_of(word):
            phrase.take_value(word)
        elif naming or canonical(word) in lx.SUBJECT_WORDS:
            phrase.subject.append(canonical(word))
        else:
            phrase.take_value(word)
    for preposition, complement in complements:
        inner = _content(phrase, complement)
        if any(aspect_of(w) for w in inner):
            for word in inner:
                phrase.take_value(word)
        elif naming or preposition in lx.SUBJECT_PREPOSITIONS:
            phrase.subject += [canonical(w) for w in inner]
        else:
            for word in inner:
                phrase.take_value(word)
    if phrase.head is None and phrase.aspect is None and not phrase.subject:
        return None
    return phrase
