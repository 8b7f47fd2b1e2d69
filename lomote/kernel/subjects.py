"""The subject of a request: the words that say what a piece of work is about, for titles and poster text.

`request_subject("Can you design a logo for my bakery?")` → "bakery"; "Create two posters for a jazz
festival" → "jazz festival"; "Je voudrais une affiche pour la fête de la musique" → "fête de la musique";
"Also turn yesterday's cat photo into a video" → "cat".

Contract:
- the result is a slice of the request in its own casing, accents and inner punctuation ("Jazz-Festival",
  "Pain d'Or"), whitespace collapsed, at most MAX_SUBJECT_CHARS long (cut at a word);
- a quoted phrase ("…", “…”, «…», „…“, ‘…’) is the subject as written;
- otherwise the words left once politeness, auxiliaries, verbs of making, counts, kinds of work (poster,
  logo, video…), articles and possessives, time words ("yesterday's") and relative time phrases ("the
  other day", "la semaine dernière", "letzte Woche", "el mes pasado"), clock times and measures ("at 3 pm",
  "10h30", "20 cm", "1080p") and style words (retro, minimal…) are set aside, chosen by structure: a name
  after "called / intitulée / namens…" (its capitalised words whatever their class, and the word after an
  elision: "Pain d'Or", "Chez l'Ami"), then the noun phrase a kind of work is for or about ("a poster *for*
  X", "une affiche *pour* X", "ein Plakat *für* X"), then the words right before or after a kind ("a jazz
  festival poster", "une affiche jazz"), then the first words left in a sentence that asks for something,
  then the first words left at all;
- kind words side by side are one kind: a medium or a kind of the same group qualifies it ("a *video*
  teaser", "une figurine *3d*"), another kind says what it shows ("a 3d *mascot* figurine" → "mascot");
- nothing left: the kind with its style words ("retro poster", "video teaser"), else the request's remaining
  words, else the request itself, bounded. Only a request with no letter or digit gives "";
- `keep_style=True` keeps the style words describing the subject ("3 retro brand posters" → "retro brand").

It reads English, French, German, Spanish and Portuguese (word classes in `lomote.kernel.subject_words`); `lang`
picks the language's classes (English ones always apply too, for loanwords like "logo" or "flyer"), and
without it the language whose classes explain the most words is used.
"""

import functools
import re
import unicodedata
from dataclasses import dataclass

from lomote.kernel.subject_words import (
    CONJUNCTIONS,
    KIND_PHRASES,
    LANGUAGES,
    LEXICONS,
    MEDIUM_KINDS,
    TIME_PHRASES,
    UNITS,
)

MAX_SUBJECT_CHARS = 60
MAX_INPUT_CHARS = 2000  # the opening of a long message says what it is about

# Earlier classes win when one language lists a word twice ("print" is a kind before it is a verb).
_PRECEDENCE = ("kind", "verb", "count", "time", "style", "connector", "preposition", "determiner", "function")
_SKIP_TO_PHRASE = {"determiner", "count", "measure", "style", "time", "preposition", "connector", "joiner"}
_I_WORDS = {"i", "i'd", "i'm", "i'll", "i've", "ich"}  # capitalised, yet never part of a name
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
_STYLE = {lang: {_fold(w) for w in lexicon["style"].split()} for lang, lexicon in LEXICONS.items()}

_TOKEN = re.compile(r"\d+(?:[:.,]\d+)+[^\W\d_]*|(?<![^\W_])[aApP]\.[mM]\.|[^\W_]+(?:['’][^\W_]+)*['’]?|\S")
_ELISION = re.compile(r"^(?:[ldjmtsnc]|qu|jusqu|lorsqu|puisqu)['’](?=[^\W\d_])", re.IGNORECASE)
_QUOTED = re.compile(
    r"\"([^\"\n]{1,200}?)\"|“([^”\n]{1,200}?)[”“]|”([^”\n]{1,200}?)”|„([^“”\n]{1,200}?)[“”]|«\s*([^»\n]{1,200}?)\s*»"
    r"|‹([^›\n]{1,200}?)›|‘([^’\n]{1,200}?)’(?!\w)|(?<!\w)'([^'\n]{1,200}?)'(?!\w)"
)
_SENTENCE_END = re.compile(r"(?<=[.!?…;])\s+|\n+")
_YEAR = re.compile(r"^(1[5-9]|2[0-2])\d\d$")
_STYLE_TOKEN = re.compile(r"^(?:\d{2}|\d{4})'?s$|^[aA][0-6]$|^\d+[kK]$", re.IGNORECASE)
_SIZE_TOKEN = re.compile(r"^\d+[xX×]\d+$")
_NUMBER = re.compile(r"^\d+(?:[.,]\d+)+$")
# A clock time or a number with its unit glued on: "10h30", "7:30pm", "11am", "1080p", "20cm", "30s".
_MEASURE = re.compile(
    r"^\d+(?:[.,:]\d+)?(?:am|pm|a\.m\.|p\.m\.|h\d{0,2}|hrs?|min|mins|s|secs?|ms|fps|[mck]?m|mi|ft|k?g|[kmgt]b|px|pt|dpi|ppi|p)$"
    r"|^\d{1,2}[:.]\d{2}$"
)
_LETTERS = {"ñ": "es", "¿": "es", "¡": "es", "ß": "de", "ä": "de", "ö": "de", "ü": "de", "ã": "pt", "õ": "pt"}
_LETTERS |= {"œ": "fr", "è": "fr", "ê": "fr", "ç": "fr"}


@dataclass
class _Token:
    text: str
    start: int
    end: int
    key: str  # lower case, typographic apostrophe made plain
    cls: str  # a lexicon class, "content", "measure" ("3 pm", "20 cm"), "joiner" (a hyphen inside a word) or "punct"
    group: str = ""  # the kind group of a kind noun
    naming: bool = False
    initial: bool = False  # first word of its sentence or clause
    elided: bool = False  # an article or preposition elided onto the next word ("d'" of "d'Or", "l'" of "l'Ami")
    fixed: bool = False  # read as part of a phrase ("brand mark", "the other day"): later readings leave it

    @property
    def word(self) -> bool:
        return self.cls not in ("punct", "joiner")

    @property
    def capitalised(self) -> bool:
        return self.text[:1].isupper()


def request_subject(
    text: str, lang: str | None = None, *, max_chars: int = MAX_SUBJECT_CHARS, keep_style: bool = False
) -> str:
    """The subject phrase of a request (see the module's contract); "" only when it has no letter or digit.

    `max_chars` (at most MAX_SUBJECT_CHARS) bounds it for a smaller place, such as a poster's title.
    `keep_style` keeps the style words that describe the subject itself ("3 retro brand posters" → "retro
    brand", not "brand"); style words of the kind of work ("a retro poster for the jazz festival") stay out.
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
    if best is None:
        return _fallback(text, [t for tokens in sentences for t in tokens], limit)
    (priority, number, _), span = best
    if keep_style and priority > 0:  # a name is kept as written
        return _bounded(text, _with_style(sentences[number], span), limit, ends=("content", "style"))
    return _bounded(text, span, limit)


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
    if _SIZE_TOKEN.match(key) or _NUMBER.match(key):
        return "count", "", False
    if _MEASURE.match(key):
        return "measure", "", False
    cls, group, naming = _lookup(key, lang)
    if cls == "content" and key.endswith(("'s", "'")):
        base_cls, _, _ = _lookup(key.rstrip("s").rstrip("'"), lang)
        if base_cls in ("time", "function"):
            return base_cls, "", False
    return cls, group, naming


def _raw_tokens(part: str, offset: int) -> list[tuple[str, int, int, bool]]:
    raw = []
    for match in _TOKEN.finditer(part):
        word, start = match.group(), offset + match.start()
        elision = _ELISION.match(word)
        if elision and len(word) > elision.end():
            raw.append((word[: elision.end()], start, start + elision.end(), True))
            word, start = word[elision.end() :], start + elision.end()
        raw.append((word, start, start + len(word), False))
    return raw


def _tokens(text: str, part: str, offset: int, lang: str) -> list[_Token]:
    raw = _raw_tokens(part, offset)
    merged: list[tuple[str, int, int, bool]] = []
    i = 0
    while i < len(raw):
        # Hyphenated words the lists know stay whole ("old-school", "peut-être", "week-end"), others split at "-".
        if i + 2 < len(raw) and raw[i + 1][0] == "-" and raw[i][2] == raw[i + 1][1] and raw[i + 1][2] == raw[i + 2][1]:
            whole = text[raw[i][1] : raw[i + 2][2]]
            whole_key = whole.lower().replace("’", "'")
            if _lookup(whole_key, lang)[0] != "content" or _fold(whole_key) in _time_words(lang)[0]:
                merged.append((whole, raw[i][1], raw[i + 2][2], False))
                i += 3
                continue
        merged.append(raw[i])
        i += 1
    tokens: list[_Token] = []
    for index, (word, start, end, elided) in enumerate(merged):
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
        if elided and cls == "content":
            cls = "connector"  # "d'", "l'" in a language whose lists lack them: an article or a preposition
        tokens.append(_Token(word, start, end, key, cls, group, naming, elided=elided))
    _mark_initials(tokens)
    _read_units(tokens, lang)
    _read_phrases(tokens, lang)
    _read_times(tokens, lang)
    _promote_names(tokens, lang)
    _read_kind_runs(tokens, lang)
    _read_compounds(tokens, lang)
    _read_names(tokens, lang)
    return tokens


def _mark_initials(tokens: list[_Token]) -> None:
    previous: _Token | None = None
    for token in tokens:
        if token.word:
            token.initial = previous is None or (previous.cls == "punct" and previous.text not in ",")
        if token.cls != "joiner":
            previous = token


def _read_units(tokens: list[_Token], lang: str) -> None:
    """A unit after a number measures, and so does the number: "at 3 pm", "20 cm", "um 20 Uhr", "50 x 70 cm";
    a capitalised unit word inside a sentence is part of a name ("the 24 Hours of Le Mans")."""
    names = _names_capitalised(tokens, lang)
    for previous, token in zip(tokens, tokens[1:], strict=False):
        named = names and token.capitalised and not token.initial and not token.text.isupper()
        if token.key in UNITS and previous.cls in ("count", "measure") and not named:
            previous.cls = token.cls = "measure"


def _read_phrases(tokens: list[_Token], lang: str) -> None:
    phrases = {**KIND_PHRASES["en"], **KIND_PHRASES[lang]}
    for first, second in zip(tokens, tokens[1:], strict=False):
        group = phrases.get((first.key, second.key))
        if group:
            first.cls = second.cls = "kind"
            first.group = second.group = group
            first.fixed = second.fixed = True


def _names_capitalised(tokens: list[_Token], lang: str) -> bool:
    """Whether a capital inside a sentence marks a name: not in German (every noun) nor in Title Case Requests."""
    words = [t for t in tokens if t.word and sum(ch.isalpha() for ch in t.text) > 1]
    capitalised = sum(1 for t in words if t.capitalised and not t.initial)
    return lang != "de" and bool(words) and capitalised <= 0.6 * len(words)


@functools.cache
def _time_words(lang: str) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """(periods, relative words before, relative words after) of the language and English, without accents."""
    lists = [TIME_PHRASES[language] for language in dict.fromkeys(("en", lang))]
    periods, before, after = (frozenset(_fold(w) for words in lists for w in words[part]) for part in range(3))
    return periods, before, after


def _read_times(tokens: list[_Token], lang: str) -> None:
    """Relative time phrases are when, not what: "the other day", "last week's", "la semaine dernière",
    "vor zwei Tagen", "el mes pasado", "há dois dias" (word lists in `subject_words.TIME_PHRASES`)."""
    periods, before, after = _time_words(lang)
    several = [entry.split() for entry in before if " " in entry]
    names = _names_capitalised(tokens, lang)
    words = [t for t in tokens if t.cls != "joiner"]

    def key(token: _Token) -> str:
        return _fold(token.key.removesuffix("'s").rstrip("'"))

    def relative(token: _Token, listed: frozenset[str], *, time_word: bool = False) -> bool:
        named = names and token.capitalised and not token.initial  # "Next Week Festival" is a name
        return token.word and not named and (key(token) in listed or (time_word and token.cls == "time"))

    def ends_with(q: int, phrase: list[str]) -> bool:
        return q + 1 >= len(phrase) and [w.key for w in words[q + 1 - len(phrase) : q + 1]] == phrase

    marked: list[_Token] = []
    for p, token in enumerate(words):
        if key(token) not in periods or token.cls in ("kind", "verb"):
            continue
        following = words[p + 1] if p + 1 < len(words) else None
        if following is not None and relative(following, after):
            marked += [token, following]
            continue
        if following is not None and following.cls == "content" and not token.key.endswith(("'s", "'")):
            continue  # the period names another noun's kind: "a summer festival", "day trip"
        q = p - 1
        while q >= 0 and words[q].word and words[q].cls in ("determiner", "count"):
            if relative(words[q], before):
                break  # "this", "cette", "diese" are determiners too
            q -= 1
        if q >= 0 and relative(words[q], before, time_word=True):
            marked += [token, words[q]]
        elif q >= 0 and any(ends_with(q, phrase) for phrase in several):
            marked.append(token)  # "il y a deux jours"
        elif q >= 1 and words[q].cls in ("preposition", "connector") and words[q - 1].cls == "time":
            marked.append(token)  # "ayer por la tarde", "ontem à noite"
    for token in marked:
        token.cls, token.fixed = "time", True
    for _ in range(2):  # a period joined to a marked one is part of it: "fin de semana pasado", "week-end dernier"
        for first, between, last in zip(tokens, tokens[1:], tokens[2:], strict=False):
            for one, other in ((first, last), (last, first)):
                if between.cls in ("joiner", "connector") and one.fixed and one.cls == "time" and key(other) in periods:
                    other.cls, other.fixed = "time", True


def _promote_names(tokens: list[_Token], lang: str) -> None:
    """A capitalised style, time or count word inside a sentence is part of a name ("the Blue Note", "Big Sur");
    so is a capitalised word after an elided article or preposition ("Pain d'Or", "Chez l'Ami"), in any case."""
    for previous, token in zip(tokens, tokens[1:], strict=False):
        elided = previous.elided and previous.cls in ("determiner", "connector") and previous.end == token.start
        if elided and token.word and token.capitalised and token.cls not in ("kind", "verb"):
            token.cls = "content"
    if not _names_capitalised(tokens, lang):
        return  # German capitalises every noun; Title Case Requests capitalise everything
    for index, token in enumerate(tokens):
        if not token.capitalised or token.initial or token.fixed or token.key in _I_WORDS:
            continue
        following = next((t for t in tokens[index + 1 :] if t.word), None)
        if token.cls in ("style", "time", "count"):
            token.cls = "content"
        elif token.cls in ("determiner", "connector") and following is not None and following.capitalised:
            token.cls = "content"


def _read_kind_runs(tokens: list[_Token], lang: str) -> None:
    """Kind words side by side make one kind: its head is the work ("figurine"); a medium word or a kind of the
    same group beside it says how it is made ("3d", "video", "teaser": a style); another kind word says what it
    shows ("a 3d mascot figurine" → "mascot", "a logo animation" → "logo").
    A kind of another group after a kind and "of / de / von" is what it shows: "an animation of our logo" → "logo"."""
    languages = dict.fromkeys(("en", lang))
    media = {_fold(w) for language in languages for w in MEDIUM_KINDS[language]}
    media |= {w for language in languages for w in _STYLE[language]}  # "un vídeo corto": a kind and a style word
    i = 0
    while i < len(tokens):
        if tokens[i].cls != "kind":
            i += 1
            continue
        units, j = [[i]], i + 1
        while j < len(tokens):
            if tokens[j].cls == "kind":
                if tokens[j].fixed and tokens[j - 1].fixed and tokens[j - 1].cls == "kind":
                    units[-1].append(j)  # the second word of "brand mark"
                else:
                    units.append([j])
                j += 1
            elif tokens[j].cls == "joiner" and j + 1 < len(tokens) and tokens[j + 1].cls == "kind":
                j += 1
            else:
                break
        head = units[-1] if lang in ("en", "de") else units[0]  # "video teaser", "teaser vidéo"
        before = i - 1
        while before >= 0 and tokens[before].cls in ("style", "joiner"):
            before -= 1
        described = before >= 0 and tokens[before].cls == "content"  # "a jazz festival poster mockup"
        modifiers = [tokens[index] for unit in units if unit is not head for index in unit]
        for token in modifiers:
            if token.fixed:
                continue
            if _fold(token.key) in media or token.group == tokens[head[0]].group:
                token.cls = "style"  # "video teaser", "teaser video", "cover image": how, not what
            elif not described:
                token.cls = "content"
        i = j
    for index, token in enumerate(tokens):
        if token.cls != "kind":
            continue
        k = index + 1
        while k < len(tokens) and tokens[k].cls in ("style", "joiner"):
            k += 1  # "une figurine 3d de mascotte"
        if k >= len(tokens) or tokens[k].cls != "connector" or tokens[k].key in CONJUNCTIONS:
            continue
        k += 1
        while k < len(tokens) and tokens[k].cls == "determiner":
            k += 1
        shown = tokens[k] if k < len(tokens) else None
        if shown is not None and shown.cls == "kind" and not shown.fixed and shown.group != token.group:
            if _fold(shown.key) not in media:  # "un article de blog" is one kind, "a video of the logo" two
                shown.cls = "content"


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


def _read_names(tokens: list[_Token], lang: str) -> None:
    """After "called / intitulé / namens…" a capitalised word starts a name whatever its class: "called Chez
    l'Ami", "named Or Noir", "llamado Sin Nombre", "titled Come Together" (not a kind, nor a verb where
    every word is capitalised)."""
    names = _names_capitalised(tokens, lang)
    for index, token in enumerate(tokens):
        if not token.naming:
            continue
        j = index + 1
        while j < len(tokens) and tokens[j].cls == "determiner" and not tokens[j].capitalised:
            j += 1
        first = tokens[j] if j < len(tokens) else None
        if first is not None and first.word and first.capitalised and first.key not in _I_WORDS:
            if first.cls not in ("kind", "naming") and (names or first.cls != "verb"):
                first.cls = "content"


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
    """After "called", capitalised words of any class belong to the name ("The Red Door", "Florence and The
    Machine"), and so does the word after an elision, in any case ("Pain d'Or", "pain d'or")."""
    end = last
    j = last + 1
    while j < len(tokens):
        token, previous = tokens[j], tokens[j - 1]
        if token.word and previous.elided and previous.end == token.start:
            end = j
        elif token.word and token.capitalised and token.cls not in ("kind", "verb") and token.key not in _I_WORDS:
            end = j
        elif token.cls not in ("joiner", "connector", "determiner"):
            break
        j += 1
    return tokens[first : end + 1]


def _with_style(tokens: list[_Token], span: list[_Token]) -> list[_Token]:
    """The span with the style words on either side of it, unless they stand between it and a kind of work:
    "3 retro brand posters" → "retro brand"; "a jazz festival retro poster" → "jazz festival"."""
    first = next(i for i, t in enumerate(tokens) if t is span[0])
    last = next(i for i, t in enumerate(tokens) if t is span[-1])
    start, end = first, last
    while start > 0 and tokens[start - 1].cls in ("style", "joiner"):
        start -= 1
    if start > 0 and tokens[start - 1].cls == "kind":
        start = first
    while end + 1 < len(tokens) and tokens[end + 1].cls in ("style", "joiner"):
        end += 1
    if end + 1 < len(tokens) and tokens[end + 1].cls == "kind":
        end = last
    while tokens[start].cls == "joiner":
        start += 1
    while tokens[end].cls == "joiner":
        end -= 1
    return tokens[start : end + 1]


def _bounded(text: str, span: list[_Token], limit: int, *, ends: tuple[str, ...] = ("content",)) -> str:
    kept = list(span)
    while len(kept) > 1 and kept[-1].end - kept[0].start > limit:
        kept.pop()
    while len(kept) > 1 and (kept[-1].elided or (kept[-1].cls not in ends and not _holds(kept[-2], kept[-1]))):
        kept.pop()  # never end on "de", "and", "-" or "d'"
    phrase = " ".join(text[kept[0].start : kept[-1].end].split())
    return _cut(phrase, limit)


def _holds(previous: _Token, last: _Token) -> bool:
    """Whether a span may end on a word that is not content: a capitalised one, or the one after an elision."""
    return last.capitalised or (previous.elided and previous.end == last.start)


def _fallback(text: str, tokens: list[_Token], limit: int) -> str:
    kind = next((i for i, t in enumerate(tokens) if t.cls == "kind"), None)
    if kind is not None:
        first = last = kind
        while first > 0 and tokens[first - 1].cls in ("style", "joiner"):
            first -= 1
        while last + 1 < len(tokens) and (
            tokens[last + 1].cls in ("style", "joiner") or (tokens[last + 1].fixed and tokens[last].fixed)
        ):
            last += 1  # "bold brand mark"
        return _bounded(text, tokens[first : last + 1], limit, ends=("kind", "style"))
    left = [t for t in tokens if t.cls in ("style", "time", "count", "measure", "content")]
    if left:
        return _cut(" ".join(t.text for t in left), limit)
    return _cut(" ".join(text.split()).strip(" .!?¿¡,;:"), limit)
