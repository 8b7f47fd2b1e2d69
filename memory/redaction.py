"""Keeping forgotten content out of every later context (DESIGN §8, seed §7.3), without keeping the content.

A request already sent to a model cannot be recalled, and the conversation history, artifacts and ledger are
not deleted (other lifecycles). What a forget can do is make sure nothing that carried the forgotten content —
the person's message, a tool result, the agent's own later words — reaches a model again. So a forget keeps,
as salted hashes only, the *terms* of what it erased:

- every run of three words of the erased statement (a phrase repeated or quoted), and
- every word of it that is distinctive — four characters or more, or containing a digit — and appears in none
  of the workspace's remaining evidence and active memories (a name, a code, a made-up word).

A later context shows any message containing one of those terms as removed. Words the remaining memory still
uses ("blue", when "blue with an off-white" still stands) are not terms, so what survives stays readable.
"""

import hashlib
import re
import unicodedata
from collections.abc import Iterable

_WORD = re.compile(r"[^\W_]+(?:[-'’][^\W_]+)*", re.UNICODE)
REDACTED = "[removed: this relied on something the person asked to forget]"


def _words(text: str) -> list[str]:
    folded = unicodedata.normalize("NFKC", text or "").casefold()
    return _WORD.findall(folded)


def _hash(term: str, salt: str) -> str:
    return hashlib.sha256(f"{salt}\x00{term}".encode()).hexdigest()


def _distinctive(word: str) -> bool:
    return len(word) >= 4 or any(ch.isdigit() for ch in word)


def _phrases(words: list[str]) -> Iterable[str]:
    return (" ".join(words[i : i + 3]) for i in range(len(words) - 2))


_SENTENCE_END = re.compile(r"(?<=[.!?\n])\s+")


def sentences(text: str) -> list[str]:
    """`text` cut after each sentence's end, empty pieces dropped: what redaction removes one at a time."""
    return [s for s in _SENTENCE_END.split(text or "") if s.strip()]


def distinctive_words(text: str) -> set[str]:
    """The words of `text` that can become forgotten terms (case-folded)."""
    return {w for w in _words(text) if _distinctive(w)}


def forgotten_terms(erased: Iterable[str], remaining: Iterable[str], *, salt: str) -> set[str]:
    """The hashed terms of the erased texts that the remaining texts do not also carry."""
    kept_words, kept_phrases = set(), set()
    for text in remaining:
        words = _words(text)
        kept_words.update(words)
        kept_phrases.update(_phrases(words))
    terms: set[str] = set()
    for text in erased:
        words = _words(text)
        terms.update(_hash(p, salt) for p in _phrases(words) if p not in kept_phrases)
        terms.update(_hash(w, salt) for w in words if _distinctive(w) and w not in kept_words)
    return terms


def text_terms(text: str, *, salt: str) -> set[str]:
    """The hashed terms a text carries, to intersect with a workspace's forgotten terms."""
    words = _words(text)
    return {_hash(w, salt) for w in words if _distinctive(w)} | {_hash(p, salt) for p in _phrases(words)}


def mentions(text: str, terms: set[str], *, salt: str) -> bool:
    return bool(terms) and not terms.isdisjoint(text_terms(text, salt=salt))
