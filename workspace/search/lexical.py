"""The lexical fingerprint: the last fallback of search, when no sentence-embedding model can be used.

Feature hashing of words, word pairs and character 3/4-grams into DIMENSIONS signed buckets, L2-normalised.
It finds texts that share words and word pieces ("affiches" ~ "affiche", "poster" ~ "posters"); it does not
know that "poster" and "affiche" mean the same thing — that is what the sentence-embedding models are for.
Deterministic and dependency-free (blake2b, not Python's salted hash()), so a stored vector stays valid.
"""

import hashlib
import math
import re

from lomote.understanding.normalise import fold, plural_cut

DIMENSIONS = 256
MAX_CHARS = 4000

_TOKEN = re.compile(r"[a-z0-9]+")
# The commonest function words of English and French: they say nothing about what a text is about. (Higher
# apps pass their own, larger list through `hashed_vector`; this one serves the workspace's own kinds.)
_STOP_WORDS = frozenset(
    """a an and are as at be by for from in into is it its of on or the this that to was were with my your our
    me we you i please make le la les l un une des du de d au aux et ou en est sont pour par avec sur dans ce
    cette ces mon ma mes ton ta tes son sa ses qui que qu je tu il elle nous vous on""".split()
)


def terms(text: str) -> list[str]:
    """Folded, crudely stemmed content words of `text`, in order (duplicates kept)."""
    words = _TOKEN.findall(fold(text[:MAX_CHARS]))
    return [plural_cut(w) for w in words if w not in _STOP_WORDS and (len(w) > 1 or w.isdigit())]


def _bucket(feature: str) -> tuple[int, float]:
    """A stable bucket and sign for a feature (Python's hash() is salted per process, so not that)."""
    digest = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "big")
    return digest % DIMENSIONS, 1.0 if (digest >> 32) & 1 else -1.0


def hashed_vector(words: list[str]) -> list[float]:
    """The fingerprint of a list of content words: hashed words, word pairs and character 3/4-grams.

    Character n-grams make word forms overlap ("warm"/"warmer") and each word's grams share one unit of
    weight, so a long word counts no more than a short one. No words give the zero vector.
    """
    vector = [0.0] * DIMENSIONS

    def add(feature: str, weight: float) -> None:
        index, sign = _bucket(feature)
        vector[index] += sign * weight

    for term in words:
        add("w:" + term, 1.0)
        padded = f"#{term}#"
        grams = [padded[i : i + n] for n in (3, 4) for i in range(len(padded) - n + 1)]
        for gram in grams:
            add("c:" + gram, 1.0 / math.sqrt(len(grams)))
    for first, second in zip(words, words[1:], strict=False):
        add(f"b:{first} {second}", 0.5)
    norm = math.sqrt(sum(x * x for x in vector))
    return [round(x / norm, 6) for x in vector] if norm else vector
