"""How many pieces a request asks for: a digit or a number word (languages.NUMBER_WORDS) counting them.

"Could you make me three Instagram posts…" → 3; "trois visuels carrés" → 3; "5 banners" → 5. A number followed by
a unit ("10 seconds", "at 3 pm", "20 cm") measures something and is not a count; a number inside a name or a date
("the 2024 fair") is not either (only 1 to MAX_COUNT counts). None when the request says no number.
"""

import re

from lomote.understanding.languages import NUMBER_FORMS, NUMBER_WORDS, UNIT_WORDS
from lomote.understanding.normalise import fold

MAX_COUNT = 12

_FORMS = {fold(word): value for word, value in NUMBER_FORMS.items()}
# Per language: "elf" is eleven in German and a creature in English, "once" eleven in Spanish only.
_VALUES: dict[str, dict[str, int]] = {
    language: {fold(word): value for value, word in enumerate(words, start=1)} | _FORMS
    for language, words in NUMBER_WORDS.items()
}
_ANY: dict[str, int] = {}
for _values in _VALUES.values():
    for _word, _value in _values.items():
        _ANY.setdefault(_word, _value)
_UNITS = frozenset(fold(word) for word in UNIT_WORDS)
_TOKEN = re.compile(r"\d+(?:[.,:]\d+)*[^\W\d_]*|[^\W\d_]+")
_SINGULAR = frozenset(fold(words[0]) for words in NUMBER_WORDS.values()) | {
    fold(w) for w, v in NUMBER_FORMS.items() if v == 1
}


def count_of(text: str, language: str | None = None, *, singular: bool = False) -> int | None:
    """The first number in the text that counts pieces (1 to MAX_COUNT), or None.

    Number words are read in `language` when it is one of languages.NUMBER_WORDS, else in any of them. "one",
    "un", "ein"… are also articles: they count only with `singular=True` (an answer typed on a card)."""
    values = _VALUES.get((language or "")[:2].lower(), _ANY)
    tokens = _TOKEN.findall(fold(text))
    for at, token in enumerate(tokens):
        following = tokens[at + 1] if at + 1 < len(tokens) else ""
        if token.isdigit():
            value = int(token)
        elif token in values and (singular or token not in _SINGULAR):
            value = values[token]
        else:
            continue
        if following in _UNITS or not 1 <= value <= MAX_COUNT:
            continue
        return value
    return None
