"""Text normalisation, defined once for the whole layer.

`normalise` is what the encoder reads: the person's text with Unicode compatibility forms unified, typographic
quotes made plain and whitespace collapsed — accents and case kept, because the encoder reads them as meaning.
`fold` is for comparing words: case folded, accents removed, ß written ss ("Vidéo", "VIDEO" → "video").
`plural_cut` is the crude plural strip lexical search shares across languages ("posters", "affiches").
"""

import re
import unicodedata

_SPACES = re.compile(r"\s+")
_QUOTES = str.maketrans({"’": "'", "‘": "'", "´": "'", "“": '"', "”": '"', "«": '"', "»": '"'})


def normalise(text: str) -> str:
    """The text as the encoder should read it: NFKC, plain quotes, one space between words, no edges."""
    return _SPACES.sub(" ", unicodedata.normalize("NFKC", text or "").translate(_QUOTES)).strip()


def fold(text: str) -> str:
    """Case folded and accent free, for comparing words across spellings."""
    decomposed = unicodedata.normalize("NFKD", normalise(text).casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).replace("ß", "ss")


def plural_cut(word: str) -> str:
    """A folded word without its plural ending, crudely and alike in every language ("stories" → "story")."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


# What carries no meaning for a decision: links, markup, and unbroken runs too long to be words (hashes, file
# names, encoded ids). Pasted beside a request, they would outweigh its words in the character n-grams.
_NOISE = re.compile(r"(?:https?://|www\.)\S+|<[^>]{0,200}>|\S{31,}")


def meaningful(text: str) -> str:
    """The text a decision reads: its words, without links, markup or unbroken runs of 31+ characters."""
    return " ".join(_NOISE.sub(" ", text or "").split())
