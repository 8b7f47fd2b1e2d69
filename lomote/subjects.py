"""The subject of a request: the words that say what a piece of work is about, for titles and poster text.

`request_subject("Can you design a logo for my bakery?")` → "bakery"; "Create two posters for a jazz
festival" → "jazz festival"; "Je voudrais une affiche pour la fête de la musique" → "fête de la musique";
"Also turn yesterday's cat photo into a video" → "cat".

Contract:
- the result is a slice of the request in its own casing, accents and inner punctuation ("Jazz-Festival",
  "Pain d'Or"), whitespace collapsed, at most MAX_SUBJECT_CHARS long (cut at a word);
- a quoted phrase ("…", “…”, «…», „…“, ‘…’) is the subject as written;
- otherwise the words left once politeness, auxiliaries, verbs of making, counts, kinds of work (poster,
  logo, video…), articles and possessives, time words ("yesterday's") and style words (retro, minimal…)
  are set aside, chosen by structure: a name after "called / intitulée / namens…", then the noun phrase a
  kind of work is for or about ("a poster *for* X", "une affiche *pour* X", "ein Plakat *für* X"), then the
  words right before or after a kind ("a jazz festival poster", "une affiche jazz"), then the first words
  left in a sentence that asks for something, then the first words left at all;
- nothing left: the kind with its style words ("retro poster"), else the request's remaining words, else
  the request itself, bounded. Only a request with no letter or digit gives "".

It reads English, French, German, Spanish and Portuguese (word classes in `lomote.subject_words`); `lang`
picks the language's classes (English ones always apply too, for loanwords like "logo" or "flyer"), and
without it the language whose classes explain the most words is used.
"""

import re
import unicodedata
from dataclasses import dataclass

from lomote.subject_words import KIND_PHRASES, LANGUAGES, LEXICONS

MAX_SUBJECT_CHARS = 60
MAX_INPUT_CHARS = 2000  # the opening of a long message says what it is about

# Earlier classes win when one language lists a word twice ("print" is a kind before it is a verb).
_PRECEDENCE = ("kind", "verb", "count", "time", "style", "connector", "preposition", "determiner", "function")
_SKIP_TO_PHRASE = {"determiner", "count", "style", "time", "preposition", "connector", "joiner"}
_BRIDGE = {"joiner", "connector", "determiner", "style"}


def _fold(word: str) -> str:
    decomposed = unicodedata.normalize("NFKD", word)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def _index(lexicon: dict[str, str]) -> tuple[dict[str, tuple[str, str]], dict[str, tuple[str, str]], set[str]]:
    """word → (class, kind group); the same for accent-free spellings of accented words; naming words."""
    exact: dict[str, tuple[str, str]] = {}
    for cls in _PRECEDENCE:
        for name, words in lexicon.items():
            if name.split(":", 1)[0] != cls:
                continue
            group = name.split(":", 1)[1] if ":" in name else ""
            for word in words.split():
                exact.setdefault(word, (cls, group))
    folded = {_fold(w): entry for w, entry in exact.items() if _fold(w) != w}
    return exact, folded, set(lexicon.get("naming", "").split())


_INDEX = {lang: _index(lexicon) for lang, lexicon in LEXICONS.items()}

_TOKEN = re.compile(r"[^\W_]+(?:['’][^\W_]+)*['’]?|\S")
_ELISION = re.compile(r"^(?:[ldjmtsnc]|qu|jusqu|lorsqu|puisqu)['’](?=[^\W\d_])", re.IGNORECASE)
_QUOTED = re.compile(
    r"\"([^\"\n]{1,200}?)\"|“([^”\n]{1,200}?)[”“]|”([^”\n]{1,200}?)”|„([^“”\n]{1,200}?)[“”]|«\s*([^»\n]{1,200}?)\s*»"
    r"|‹([^›\n]{1,200}?)›|‘([^’\n]{1,200}?)’(?!\w)|(?<!\w)'([^'\n]{1,200}?)'(?!\w)"
)
_SENTENCE_END = re.compile(r"(?<=[.!?…;])\s+|\n+")
_YEAR = re.compile(r"^(1[5-9]|2[0-2])\d\d$")
_STYLE_TOKEN = re.compile(r"^(?:\d{2}|\d{4})'?s$|^[aA][0-6]$|^\d+[kK]$", re.IGNORECASE)
_SIZE_TOKEN = re.compile(r"^\d+[xX×]\d+$")
_LETTERS = {"ñ": "es", "¿": "es", "¡": "es", "ß": "de", "ä": "de", "ö": "de", "ü": "de", "ã": "pt", "õ": "pt"}
_LETTERS |= {"œ": "fr", "è": "fr", "ê": "fr", "ç": "fr"}


@dataclass
class _Token:
    text: str
    start: int
    end: int
    key: str  # lower case, typographic apostrophe made plain
    cls: str  # a lexicon class, "content", "joiner" (a hyphen inside a word) or "punct"
    group: str = ""  # the kind group of a kind noun
    naming: bool = False
    initial: bool = False  # first word of its sentence or clause

    @property
    def word(self) -> bool:
        return self.cls not in ("punct", "joiner")

    @property
    def capitalised(self) -> bool:
        return self.text[:1].isupper()


def request_subject(text: str, lang: str | None = None, *, max_chars: int = MAX_SUBJECT_CHARS) -> str:
    """The subject phrase of a request (see the module's contract); "" only when it has no letter or digit.

    `max_chars` (at most MAX_SUBJECT_CHARS) bounds it for a smaller place, such as a poster's title.
    """
    limit = max(1, min(max_chars, MAX_SUBJECT_CHARS))
    text = unicodedata.normalize("NFC", text or "")[:MAX_INPUT_CHARS]
    if not re.search(r"[^\W_]", text):
        return ""
    quoted = _quoted(text, limit)
    if quoted:
        return quoted
    lang = lang if lang in LEXICONS else _language(text)
    sentences = [_tokens(text, part, offset, lang) for part, offset in _sentences(text)]
    best: tuple[tuple[int, int, int], list[_Token]] | None = None
    for number, tokens in enumerate(sentences):
        for span, priority in _spans(tokens, lang):
            rank = (priority, number, span[0].start)
            if best is None or rank < best[0]:
                best = (rank, span)
    if best is not None:
        return _bounded(text, best[1], limit)
    return _fallback(text, [t for tokens in sentences for t in tokens], limit)


# --- reading ----------------------------------------------------------------------------------------------


def _quoted(text: str, limit: int) -> str:
    for match in _QUOTED.finditer(text):
        inner = next(g for g in match.groups() if g is not None).strip(" \t'\"‘’“”«»")
        if re.search(r"[^\W_]", inner):
            return _cut(" ".join(inner.split()), limit)
    return ""


def _cut(phrase: str, limit: int) -> str:
    if len(phrase) <= limit:
        return phrase
    return phrase[: limit + 1].rsplit(" ", 1)[0][:limit].rstrip(" ,;:-–—")


def _language(text: str) -> str:
    scores = dict.fromkeys(LANGUAGES, 0.0)
    for match in _TOKEN.finditer(text.lower()):
        key = match.group().replace("’", "'")
        found = [lang for lang in LANGUAGES if key in _INDEX[lang][0]]
        for lang in found:
            scores[lang] += 1 / len(found)
    for letter, lang in _LETTERS.items():
        scores[lang] += 1.5 * min(text.lower().count(letter), 3)
    best = max(scores.values())
    winners = [lang for lang, score in scores.items() if score == best]
    if best <= 0 or "en" in winners:
        return "en"
    return winners[0]  # "un logo": French and Spanish read it alike


def _sentences(text: str) -> list[tuple[str, int]]:
    parts, at = [], 0
    for match in _SENTENCE_END.finditer(text):
        parts.append((text[at : match.start()], at))
        at = match.end()
    parts.append((text[at:], at))
    return [(part, offset) for part, offset in parts if part.strip()]


def _lookup(key: str, lang: str) -> tuple[str, str, bool]:
    for language in dict.fromkeys((lang, "en")):
        exact, folded, naming = _INDEX[language]
        entry = exact.get(key) or (folded.get(key) if _fold(key) == key else None)
        if entry:
            return entry[0], entry[1], key in naming
        if key in naming:
            return "naming", "", True
    return "content", "", False


def _classify(key: str, lang: str) -> tuple[str, str, bool]:
    if key.isdigit():
        return ("content" if _YEAR.match(key) else "count"), "", False
    if _STYLE_TOKEN.match(key):
        return "style", "", False
    if _SIZE_TOKEN.match(key):
        return "count", "", False
    cls, group, naming = _lookup(key, lang)
    if cls == "content" and key.endswith(("'s", "'")):
        base_cls, _, _ = _lookup(key.rstrip("s").rstrip("'"), lang)
        if base_cls in ("time", "function"):
            return base_cls, "", False
    return cls, group, naming


def _raw_tokens(part: str, offset: int) -> list[tuple[str, int, int]]:
    raw = []
    for match in _TOKEN.finditer(part):
        word, start = match.group(), offset + match.start()
        elision = _ELISION.match(word)
        if elision and len(word) > elision.end():
            raw.append((word[: elision.end()], start, start + elision.end()))
            word, start = word[elision.end() :], start + elision.end()
        raw.append((word, start, start + len(word)))
    return raw


def _tokens(text: str, part: str, offset: int, lang: str) -> list[_Token]:
    raw = _raw_tokens(part, offset)
    merged: list[tuple[str, int, int]] = []
    i = 0
    while i < len(raw):
        # Hyphenated words the lexicon knows stay whole ("old-school", "peut-être"), others split at "-".
        if i + 2 < len(raw) and raw[i + 1][0] == "-" and raw[i][2] == raw[i + 1][1] and raw[i + 1][2] == raw[i + 2][1]:
            whole = text[raw[i][1] : raw[i + 2][2]]
            if _lookup(whole.lower().replace("’", "'"), lang)[0] != "content":
                merged.append((whole, raw[i][1], raw[i + 2][2]))
                i += 3
                continue
        merged.append(raw[i])
        i += 1
    tokens: list[_Token] = []
    for index, (word, start, end) in enumerate(merged):
        key = word.lower().replace("’", "'")
        if not re.search(r"[^\W_]", word):
            inside = word == "-" and 0 < index < len(merged) - 1
            inside = inside and merged[index - 1][2] == start and merged[index + 1][1] == end
            cls = "joiner" if inside or word == "&" else "punct"
            if word == "&":
                cls = "connector"
            tokens.append(_Token(word, start, end, key, cls))
            continue
        cls, group, naming = _classify(key, lang)
        tokens.append(_Token(word, start, end, key, cls, group, naming))
    _mark_initials(tokens)
    _read_phrases(tokens, lang)
    _promote_names(tokens, lang)
    _read_compounds(tokens, lang)
    return tokens


def _mark_initials(tokens: list[_Token]) -> None:
    previous: _Token | None = None
    for token in tokens:
        if token.word:
            token.initial = previous is None or (previous.cls == "punct" and previous.text not in ",")
        if token.cls != "joiner":
            previous = token


def _read_phrases(tokens: list[_Token], lang: str) -> None:
    phrases = {**KIND_PHRASES["en"], **KIND_PHRASES[lang]}
    for first, second in zip(tokens, tokens[1:], strict=False):
        group = phrases.get((first.key, second.key))
        if group:
            first.cls = second.cls = "kind"
            first.group = second.group = group


def _promote_names(tokens: list[_Token], lang: str) -> None:
    """A capitalised style, time or count word inside a sentence is part of a name ("the Blue Note", "Big Sur")."""
    words = [t for t in tokens if t.word and sum(ch.isalpha() for ch in t.text) > 1]
    capitalised = sum(1 for t in words if t.capitalised and not t.initial)
    if lang == "de" or not words or capitalised > 0.6 * len(words):
        return  # German capitalises every noun; Title Case Requests capitalise everything
    for index, token in enumerate(tokens):
        if not token.capitalised or token.initial or token.key in ("i", "i'd", "i'm", "i'll", "i've"):
            continue
        following = next((t for t in tokens[index + 1 :] if t.word), None)
        if token.cls in ("style", "time", "count"):
            token.cls = "content"
        elif token.cls in ("determiner", "connector") and following is not None and following.capitalised:
            token.cls = "content"


def _read_compounds(tokens: list[_Token], lang: str) -> None:
    """Fix classes from their neighbours: word lists cannot tell a verb, a modifier or a modal on their own."""
    seen_kind = False
    for index, token in enumerate(tokens):
        following = tokens[index + 1] if index + 1 < len(tokens) else None
        previous = tokens[index - 1] if index > 0 else None
        leads = previous is None or previous.cls in ("function", "punct") or token.initial
        if token.cls == "kind":
            # English puts the modifier first: in "a poster for a photo exhibition" the kind word is a noun's
            # modifier, not the thing to make. The first kind word is the thing to make.
            modifier = lang == "en" and following is not None and following.cls == "content"
            if modifier and (seen_kind or (previous is not None and previous.cls == "content")):
                token.cls = "content"
            seen_kind = True
        elif token.cls == "verb" and previous is not None and previous.cls == "determiner":
            if following is not None and following.cls == "content":
                token.cls = "content"  # "a design conference"
        elif token.cls == "count" and previous is not None and previous.cls == "content":
            token.cls = "content"  # "Route 66", "Ocean's Eleven"
        elif token.cls == "content" and leads and following is not None and following.cls == "determiner":
            token.cls = "verb"  # a verb the lists lack: "I'm organising a…", "¿me harías un…"
        elif token.cls == "content" and leads and following is not None and following.cls == "verb":
            token.cls = "function"  # a modal the lists lack: "você consegue fazer…"
        elif lang == "de" and token.cls == "content" and token.text.islower():
            if following is None or following.cls == "punct":
                token.cls = "verb"  # German puts the verb last, in lower case: "…für meine Bäckerei basteln?"


# --- choosing ----------------------------------------------------------------------------------------------


def _spans(tokens: list[_Token], lang: str) -> list[tuple[list[_Token], int]]:
    asks = any(t.cls in ("kind", "verb") for t in tokens)
    found = []
    i = 0
    while i < len(tokens):
        if tokens[i].cls != "content":
            i += 1
            continue
        end = i
        while True:
            bridge_end = _bridge(tokens, end + 1)
            if bridge_end is None:
                break
            end = bridge_end
        span = tokens[i : end + 1]
        priority = _priority(tokens, i, end, asks)
        if priority == 0:
            span = _extend_name(tokens, i, end)
        found.append((span, priority))
        i = end + 1
    return found


def _bridge(tokens: list[_Token], start: int) -> int | None:
    """The index of the next content word when only a short bridge leads to it ("de la", "and", "-"), else None."""
    between: list[_Token] = []
    for j in range(start, min(start + 4, len(tokens))):
        token = tokens[j]
        if token.cls == "content":
            if not between:
                return j
            joined = any(t.cls in ("joiner", "connector") for t in between) or all(t.cls == "style" for t in between)
            return j if joined else None
        if token.cls not in _BRIDGE:
            return None
        between.append(token)
    return None


def _priority(tokens: list[_Token], first: int, last: int, asks: bool) -> int:
    before = [t for t in tokens[:first] if t.cls != "joiner"]
    k = len(before) - 1
    while k >= 0 and before[k].cls == "determiner":
        k -= 1
    if k >= 0 and before[k].naming:
        return 0  # "called Night Drive", "avec le texte Soldes d'été"
    seen_preposition = False
    while k >= 0 and before[k].cls in _SKIP_TO_PHRASE:
        seen_preposition = seen_preposition or before[k].cls in ("preposition", "connector")
        k -= 1
    if k >= 0 and before[k].cls == "kind" and seen_preposition:
        return 1  # "a poster for X"
    after = last + 1
    while after < len(tokens) and tokens[after].cls in ("style", "joiner"):
        after += 1
    if after < len(tokens) and tokens[after].cls == "kind":
        return 2  # "a jazz festival poster"
    if k >= 0 and before[k].cls == "kind":
        return 2  # "une affiche jazz"
    return 3 if asks else 4


def _extend_name(tokens: list[_Token], first: int, last: int) -> list[_Token]:
    """After "called", capitalised words of any class belong to the name ("Pain d'Or", "The Red Door")."""
    end = last
    j = last + 1
    while j < len(tokens):
        token = tokens[j]
        if token.word and token.capitalised and token.cls not in ("kind", "verb"):
            end = j
        elif token.cls not in ("joiner", "connector", "determiner"):
            break
        j += 1
    return tokens[first : end + 1]


def _bounded(text: str, span: list[_Token], limit: int, *, ends: tuple[str, ...] = ("content",)) -> str:
    kept = list(span)
    while len(kept) > 1 and kept[-1].end - kept[0].start > limit:
        kept.pop()
    while len(kept) > 1 and kept[-1].cls not in ends and not kept[-1].capitalised:
        kept.pop()  # never end on "de", "and" or "-"
    phrase = " ".join(text[kept[0].start : kept[-1].end].split())
    return _cut(phrase, limit)


def _fallback(text: str, tokens: list[_Token], limit: int) -> str:
    kind = next((i for i, t in enumerate(tokens) if t.cls == "kind"), None)
    if kind is not None:
        first = last = kind
        while first > 0 and tokens[first - 1].cls in ("style", "joiner"):
            first -= 1
        while last + 1 < len(tokens) and tokens[last + 1].cls in ("style", "joiner"):
            last += 1
        return _bounded(text, tokens[first : last + 1], limit, ends=("kind", "style"))
    left = [t for t in tokens if t.cls in ("style", "time", "count", "content")]
    if left:
        return _cut(" ".join(t.text for t in left), limit)
    return _cut(" ".join(text.split()).strip(" .!?¿¡,;:"), limit)
