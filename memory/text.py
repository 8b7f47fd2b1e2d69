"""How memory compares and fingerprints statements: one normal form for duplicates, tombstones and forgets."""

import hashlib
import re
import unicodedata

_SPACE = re.compile(r"\s+")
_EDGE_PUNCTUATION = " \t\n.!?;:,…\"'«»“”‘’()[]"


def normalise(text: str) -> str:
    """Case-, accent-form- and spacing-insensitive: NFKC, casefolded, one space, no surrounding punctuation."""
    folded = unicodedata.normalize("NFKC", text or "").casefold()
    return _SPACE.sub(" ", folded).strip(_EDGE_PUNCTUATION)


def content_hash(text: str) -> str:
    """SHA-256 of the normal form: what a tombstone and an evidence row keep of a statement."""
    return hashlib.sha256(normalise(text).encode()).hexdigest()
