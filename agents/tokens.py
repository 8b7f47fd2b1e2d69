"""Token estimates without a tokenizer (tiktoken downloads its encodings on first use, so it fails offline).

Byte-pair encoders give a common word one token and cut long or rare words, numbers and CJK text into
pieces; runs of punctuation ("}, {" in JSON) merge into few tokens. The estimate follows that shape: a run of
letters costs one token per 6 characters (at least one), a CJK character one each, a run of digits one per 3,
a run of punctuation one per 2, and whitespace folds into the word after it. It is an estimate for budgets
and meters; wherever a provider reports usage, the provider's figures are what a step records.
"""

import re

_PIECES = re.compile(r"[^\W\d_]+|\d+|[^\w\s]+|_+", re.UNICODE)
_CJK_START = 0x2E80  # CJK radicals onwards: ideographs, kana and hangul are about a token each


def _ceil(n: int, per: int) -> int:
    return -(-n // per)


# ASCII text (most of a context: JSON, English, code) is counted in one C-level pass: each run of a class is
# cut into chunks of at most its size, so the number of chunks is exactly the sum of ceil(run / size).
_ASCII_CHUNKS = re.compile(r"[A-Za-z]{1,6}|[0-9]{1,3}|[^\w\s]{1,2}|_{1,2}")  # \s as in _PIECES (\x1c-\x1f too)


def estimate_tokens(text: str) -> int:
    """About how many tokens `text` is for an OpenAI-style encoder. 0 for empty text; deterministic."""
    if text.isascii():
        return len(_ASCII_CHUNKS.findall(text))
    total = 0
    for piece in _PIECES.findall(text):
        first = piece[0]
        if first.isalpha():
            wide = 0 if piece.isascii() else sum(1 for ch in piece if ord(ch) >= _CJK_START)
            total += wide + (_ceil(len(piece) - wide, 6) if len(piece) > wide else 0)
        elif first.isdigit():
            total += _ceil(len(piece), 3)
        else:
            total += _ceil(len(piece), 2)
    return total
