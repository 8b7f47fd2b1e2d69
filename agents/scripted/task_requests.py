"""What a person's message asks of a task that already has a plan: the scripted planner's reading (rules, not a model).

The planner (agents/scripted/planner.py) reads each new message of a planned task with these functions, in
English and French (the words below are folded: lower case, no accents):

- `is_acknowledgement`: thanks and closings ("Thanks, nothing more to do", "merci c'est parfait", "ok great") —
  nothing to do. A negated closing ("nothing more", "rien de plus", "pas besoin") is a closing, not a request.
- `add_request`: more of the same work ("Add two more posters", "ajoute deux affiches", "one more", "deux de
  plus", "une autre affiche") — how many (None: a plural with no number, to be asked) and of what kind.
- `edit_changes`: the changes a message asks of finished work, read by meaning — the understanding layer's
  `edit` decision (DESIGN §15): "too dark, brighten it and make the text bigger" → brighter, text_bigger; "not
  so warm" → cooler. No word list here decides a look, a size or a length.
- `change_requested`: a change to finished work, also asked as a question ("Could you warm up the colours on
  those posters?"): an edit the layer reads, else a generic verb of change ("move", "fix", "redo", "modifie"),
  a comparative said of the work ("make the mascot cuddlier"), "more" / "plus" next to what should change ("make
  it pop more"), or adding something onto existing work.
- `item_references`: which checklist items a message names — "poster 2", "posters 1 and 3", "items 2-4", "the
  second one", "the last one", "the first two", "all of them", "both", "l'affiche 2", "la dernière", "les deux
  premières", "toutes", "l'avant-dernière". An index counts among the items of the kind the message names
  (a poster is the 2nd poster, whatever else the checklist holds), preferring an item whose title carries that
  number ("Poster 2 of 3"); "item 2" / "étape 2" is a checklist position. Time phrases are not references
  ("last week", "la dernière fois").
- `animate_phrases`: "bring X to life", "make it move", "set X in motion", "donne vie à X", "fais-la bouger",
  "mets X en mouvement" are said as "animate X" / "anime X", so the rest of the planner reads them as video work.
- `seconds_wanted`: the length a video revision asks for: stated ("10 seconds", "8 s"), else longer (twice, at
  most 60 s) or shorter (half, at least 1 s) as the layer reads it, else the current length.

Everything here is pure: a message and the checklist in, a reading out. What a word names as a kind of work comes
from the planner (`kind_of`), so the planner keeps one vocabulary of kinds.
"""

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agents.language import STOP_WORDS, fold, stem
from lomote.understanding import decide_all

KindOf = Callable[[str], str | None]  # a folded word → the kind of work it names ("affiche" → "image"), or None

MAX_SECONDS = 60
MAX_COUNT = 99  # a number above this is not a count of things to make

# --- vocabulary (folded) ------------------------------------------------------------------------------------

CARDINALS = {
    **dict(zip("one two three four five six seven eight nine ten eleven twelve".split(), range(1, 13), strict=True)),
    **dict(zip("un deux trois quatre cinq six sept huit neuf dix onze douze".split(), range(1, 13), strict=True)),
    "une": 1,
}
ORDINALS = {
    **dict(
        zip(
            "second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth".split(),
            range(2, 13),
            strict=True,
        )
    ),
    **dict(
        zip(
            """deuxieme troisieme quatrieme cinquieme sixieme septieme huitieme neuvieme dixieme onzieme
            douzieme""".split(),
            range(2, 13),
            strict=True,
        )
    ),
    "seconde": 2,
    "deuxiemes": 2,
    # German, Spanish and Portuguese, as far as a series usually goes ("das zweite Plakat", "el segundo cartel").
    **{
        f"{stem}{ending}": n
        for stem, n in (("zweit", 2), ("dritt", 3), ("viert", 4), ("funft", 5))
        for ending in "e en er es".split()
    },
    **{
        word: n
        for n, words in ((2, "segundo segunda"), (3, "tercero tercera tercer terceiro terceira"))
        for word in words.split()
    },
}
ORDINAL_SUFFIX = re.compile(r"^(\d{1,2})(?:st|nd|rd|th|e|er|re|ere|eme|em|es|eres|emes)$")
FIRST = frozenset(
    """first premier premiere premiers premieres 1st 1er 1re 1ere erste ersten erstes erster primero primera
    primeiro primeira""".split()
)
LAST = frozenset(
    "last final latest derniere dernier dernieres derniers letzte letzten letztes letzter ultimo ultima".split()
)
ALL = frozenset("all every each everything both toutes tous chacune chacun chaque".split())
# Words that name a checklist position ("item 2", "étape 2"), and words before a number that name the number.
ITEM_WORDS = frozenset("item items step steps etape etapes".split())
NUMBER_WORDS = frozenset("number numero num no n nr".split())
# Words of time: "last" or "dernière" next to one is a time phrase ("last week", "la semaine dernière").
TIME_NOUNS = frozenset(
    """time times day days week weeks weekend month months year years night nights morning evening session
    fois jour jours semaine semaines mois an ans annee annees soir soiree matin nuit""".split()
)
# Words measuring a number: "video 10 seconds long" does not name video number 10.
UNITS = frozenset(
    """s sec secs second seconds seconde secondes min mins minute minutes px cm mm m k x fps h hour hours heure
    heures percent pourcent times fois""".split()
)
RANGE_WORDS = frozenset("to through thru a jusqu -".split())
JOIN_WORDS = frozenset("and et & or ou".split())

ADD_VERBS = frozenset("add adds adding ajoute ajouter ajoutez rajoute rajouter rajoutez include".split())
MORE_WORDS = frozenset(
    """more another extra additional additionnel additionnelle additionnels additionnelles supplementaire
    supplementaires autre autres encore""".split()
)
MORE_PHRASES = re.compile(r"\b(?:de plus|en plus|de mieux)\b")

# Closings and thanks. A negated "more" ("nothing more", "rien de plus") is a closing, not a request for more.
ACK_WORDS = frozenset(
    """thanks thank thx ty cheers merci great perfect parfait parfaite ok okay oki okey k cool nice super
    awesome excellent good bon bien genial geniale top bravo wonderful lovely amazing fantastic brilliant
    love adore aime sounds looks fine nickel impeccable formidable magnifique beautiful beau belle superbe
    done fini finie termine terminee finished enough suffit alright yes yep yeah oui ouais parfaitement
    exactly exactement job travail glad ravi ravie content contente happy""".split()
)
CLOSINGS = re.compile(
    r"\b(?:nothing (?:more|else)(?: to do)?|that'?s all|that is all|all (?:good|set)|we'?re done|we are done|"
    r"no more|no need|no thanks|c'?est tout|rien de plus|rien d'?autre|plus rien|pas besoin(?: de plus)?|"
    r"ca ira|c'?est bon|ca me va|ca (?:me )?suffit|rien a (?:faire|changer)|nothing to (?:do|change)|"
    r"(?:do not|don'?t) (?:change|touch|modify|redo) (?:anything|a thing|it|them)|no changes?|"
    r"ne (?:change|touche|modifie|refais) rien|n'y touche pas|aucun changement)\b"
)
NEGATIONS = frozenset("not don't dont doesn't doesnt didn't didnt never pas ne jamais hate deteste".split())

# A change to finished work beyond what the layer's `edit` labels cover (brightness, warmth, colour, contrast,
# text size and place, palette, length, roundness, mood — read by meaning in `edit_changes`): generic verbs of
# change, and comparatives of what the labels do not name (speed, sound, proportions). Whole words, and stems
# for their forms (English and French).
CHANGE_WORDS = frozenset(
    """faster slower bolder sharper louder quieter wider narrower taller thicker thinner richer deeper stronger
    redder bluer greener cleaner simpler busier punchier move moved moving shift shifted""".split()
)
CHANGE_STEMS = tuple(
    """resiz reposition rotat tweak adjust modif improv rework revis retouch redo redraw regenerat remak retry
    chang edit fix updat replac remov swap enlarg shrink zoom crop flip sharpen blur speed
    acceler ralenti deplac decal modifi ajust corrig refai refair recommenc remplac enlev retir amelior recadr
    pivot""".split()
)
CHANGE_PHRASES = re.compile(
    r"\b(?:try again|one more time|do it again|make it again|once more|encore une fois|une nouvelle fois|"
    r"tone (?:it |them )?down|turn (?:it |them )?(?:up|down))\b"
)
COMPARATIVES = frozenset("more less plus moins".split())
# "Make the bakery logo rounder", "get them a bit friendlier": a making verb, something already there (a definite
# object, never "a logo"), and a comparative — any adjective's, not only the ones listed above. The object's words
# stop at a preposition, so "make the poster for my sister" is not read as "…sister-er".
_PREPOSITIONS = r"(?:for|of|with|to|in|on|at|from|by|about|and|or|into|than)"
_DETERMINERS = r"(?:the|my|our|your|this|that|these|those)"
_DEFINITE = rf"(?:it|them|this|that|{_DETERMINERS}(?:\s+(?!{_PREPOSITIONS}\b)[a-z'-]+){{1,4}}?)"
_DEGREE = r"(?:(?:a\s+)?(?:bit|little|lot|tad)\s+|much\s+|slightly\s+|even\s+|way\s+|far\s+)?"
RESULTATIVE = re.compile(rf"\b(?:make|makes|get|render|keep)\s+{_DEFINITE}\s+{_DEGREE}(?P<adj>[a-z]{{2,}}(?:ier|er))\b")
NOT_COMPARATIVES = frozenset(
    "under over after other another rather either neither never ever whether together however her per hers "
    "water paper poster sticker banner flyer cover letter header footer character order number folder corner".split()
)
# "too dark", "trop petit": what is wrong says what to change.
TOO = re.compile(r"\b(?:too|trop|un peu trop|a bit too|way too)\s+[a-z]{3,}")
# A length for work already made ("make the video 10 seconds"); with an indefinite article it is new work ("a
# 10-second video").
INDEFINITE_ARTICLE = re.compile(r"\b(?:a|an|another|une?|d'autres|des)\b")
DURATION = re.compile(r"\b(\d{1,3})\s*[- ]?(?:s|sec|secs|second|seconds|seconde|secondes)\b")

# "Bring X to life", "make it move"… said as "animate X" (English) or "anime X" (French).
_OBJECT = r"(?P<obj>it|them|this|that|him|her|(?:the|my|our|your|this|that|these|those)\s+[\w'’-]+(?:\s+[\w'’-]+){0,3})"
_DIRECTION = r"(?!\s+(?:to|up|down|left|right|over|closer|away|a\s+bit|slightly|towards?|into|in|on|off)\b)"
ANIMATE_PHRASES = (
    (re.compile(r"\bbring(?:s|ing)?\s+(?P<obj>[^.!?;\n]{1,80}?)\s+(?:back\s+)?to\s+life\b", re.I), "animate"),
    (re.compile(rf"\b(?:make|get|let)\s+{_OBJECT}\s+(?:move|moving|come\s+alive|dance){_DIRECTION}", re.I), "animate"),
    (re.compile(r"\b(?:set|put)\s+(?P<obj>[^.!?;\n]{1,80}?)\s+in\s+motion\b", re.I), "animate"),
    (re.compile(r"\bdonne[rz]?\s+vie\s+(?:à|a)\s+(?P<obj>[^.!?;\n]{1,80})", re.I), "anime"),
    (re.compile(r"\bdonne[rz]?\s+vie\s+(?P<obj>aux?\s+[^.!?;\n]{1,80})", re.I), "anime"),
    (re.compile(r"\bfai(?:s|tes|re)[- ](?P<obj>la|le|les|l['’]\w+)\s+bouger\b", re.I), "anime"),
    (re.compile(r"\bfai(?:s|tes|re)\s+bouger\s+(?P<obj>[^.!?;\n]{1,80})", re.I), "anime"),
    (re.compile(r"\bmet(?:s|tez|tre)[- ](?:(?P<obj>la|le|les)\s+)?en\s+mouvement\b", re.I), "anime"),
)

_TOKEN = re.compile(r"#?\d+[a-z]*|[a-z]+(?:'[a-z]+)?|[-–]")


def _tokens(folded: str) -> list[str]:
    # Elided articles split off ("l'affiche" → "l", "affiche"), English contractions stay ("that's", "don't").
    words = []
    for word in _TOKEN.findall(folded):
        head, _, tail = word.partition("'")
        if tail and len(head) <= 2 and head in {"l", "d", "j", "m", "t", "s", "n", "c", "qu"}:
            words += [head, tail]
        elif tail == "s":  # a possessive: "last week's posters"
            words.append(head)
        else:
            words.append("-" if word == "–" else word)
    return words


def _folded(text: str) -> str:
    return " ".join(fold(text or "").split())


def _without_closings(folded: str) -> str:
    return CLOSINGS.sub(" ", folded)


def _number(word: str) -> int | None:
    if word.startswith("#"):
        word = word[1:]
    if word.isdigit():
        return int(word) if len(word) <= 3 else None
    return CARDINALS.get(word)


def _ordinal(word: str) -> int | None:
    if word in ORDINALS:
        return ORDINALS[word]
    match = ORDINAL_SUFFIX.match(word)
    return int(match.group(1)) if match else None


# --- acknowledgements, additions, changes -------------------------------------------------------------------


def is_acknowledgement(text: str) -> bool:
    """Thanks, praise or a closing with no negation and no question: nothing to do. The caller checks first
    that the message asks for nothing else (`add_request`, `change_requested`, new work)."""
    if "?" in (text or ""):
        return False
    folded = _folded(text)
    words = _tokens(folded)
    closing = CLOSINGS.search(folded) is not None
    if not closing and not any(t in ACK_WORDS for t in words):
        return False
    return not any(t in NEGATIONS for t in _tokens(_without_closings(folded)))


@dataclass(frozen=True)
class AddRequest:
    count: int | None  # None: more of a plural with no number ("more posters"), to be asked
    kind: str | None  # the kind the message names, None when it names none ("two more")
    noun: str  # the person's word for it ("affiches"), "" when none


def add_request(text: str, kind_of: KindOf) -> AddRequest | None:
    """More of the same work: a count or a kind with "add", "more", "another", "de plus", "autres"…

    "Add more contrast" names neither a count nor a kind: it is a change, not an addition. The count must stand
    before the kind it counts ("ajoute deux affiches", not "ajoute un chat sur l'affiche").
    """
    folded = _without_closings(_folded(text))
    words = _tokens(folded)
    more = any(t in MORE_WORDS for t in words) or MORE_PHRASES.search(folded) is not None
    if not more and not any(t in ADD_VERBS for t in words):
        return None
    for j, word in enumerate(words):
        kind = kind_of(word)
        if kind is None:
            continue
        count, near_more = _count_before(words, j)
        if count is not None:
            return AddRequest(count if 1 <= count <= MAX_COUNT else None, kind, word)
        if near_more or (more and _after_more(words, j)):
            plural = stem(word) != word
            return AddRequest(None if plural else 1, kind, word)
    # No kind named: "two more", "one more", "another one", "deux de plus", "encore une".
    if more:
        for j, word in enumerate(words):
            count = _number(word)
            if count is not None and 1 <= count <= MAX_COUNT and _more_near(words, j, folded):
                return AddRequest(count, None, "")
        if "another" in words:
            return AddRequest(1, None, "")
    return None


def _count_before(words: list[str], j: int) -> tuple[int | None, bool]:
    """The count standing before the kind at `j` ("two more retro posters", "deux affiches", "a poster"), and
    whether "more" / "another" stands there. Only "more" words and up to two describing words may come between:
    in "un chat sur l'affiche" the count is the cat's."""
    more, described = False, 0
    for word in reversed(words[max(0, j - 5) : j]):
        if word in MORE_WORDS:
            more = True
        elif (n := _number(word)) is not None:
            return n, more
        elif word in ("a", "an"):
            return 1, more
        elif word not in STOP_WORDS and word.isalpha() and described < 2:
            described += 1
        else:
            break
    return None, more


def _after_more(words: list[str], j: int) -> bool:
    """A kind right after "more" / "de plus" phrases: "des affiches en plus" ends with it."""
    after = words[j + 1 : j + 3]
    return after[:2] in (["de", "plus"], ["en", "plus"]) or any(t in MORE_WORDS for t in after)


def _more_near(words: list[str], j: int, folded: str) -> bool:
    window = words[max(0, j - 2) : j + 3]
    if any(t in MORE_WORDS for t in window):
        return True
    return words[j + 1 : j + 3] in (["de", "plus"], ["en", "plus"])


def change_requested(text: str, kind_of: KindOf, *, adding: bool = True) -> bool:
    """A change to finished work, said as an order or asked as a question (see the module docstring). With
    `adding` False, "add" alone does not count ("add 2 more" is more work, "add a border" a change)."""
    folded = _without_closings(_folded(text))
    if folded.strip() and edit_changes(text):
        return True
    if CHANGE_PHRASES.search(folded) or TOO.search(folded):
        return True
    if DURATION.search(folded) and not INDEFINITE_ARTICLE.search(folded):
        return True
    if any(m["adj"] not in NOT_COMPARATIVES for m in RESULTATIVE.finditer(folded)):
        return True
    words = _tokens(folded)
    negated = any(t in NEGATIONS for t in words)
    for j, word in enumerate(words):
        if word in CHANGE_WORDS or word.startswith(CHANGE_STEMS) or (adding and word in ADD_VERBS):
            return True
        near = [*words[max(0, j - 1) : j], *words[j + 1 : j + 3]]
        if word in COMPARATIVES and not negated and any(_says_what(t, kind_of) for t in near):
            return True
    return False


def _says_what(word: str, kind_of: KindOf) -> bool:
    """A word that can be what changes ("pop" in "make it pop more", "rouge" in "plus de rouge")."""
    if word in STOP_WORDS or word in ACK_WORDS or word in MORE_WORDS or not word.isalpha():
        return False
    return kind_of(word) is None and _number(word) is None and len(word) > 2


# --- which items a message names ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Item:
    position: int
    title: str
    kind: str | None
    status: str


@dataclass(frozen=True)
class Selection:
    positions: list[int]  # the items named, in checklist order
    missing: list[str]  # references that name no item ("poster 7" with three posters)


def item_references(text: str, items: Sequence[Item], kind_of: KindOf) -> Selection | None:
    """The items a message names, or None when it names none in particular ("make them warmer")."""
    words = _tokens(_folded(text))
    if not words:
        return None
    live = [i for i in items if i.status != "skipped"]
    named_kinds = {k for t in words if (k := kind_of(t)) is not None}
    space = [i for i in live if i.kind in named_kinds] or live
    chosen: list[Item] = []
    missing: list[str] = []
    found = False
    consumed: set[int] = set()

    def pick(index: int, label: str) -> None:
        if 1 <= index <= len(space):
            chosen.append(space[index - 1])
        else:
            missing.append(label)

    for j, word in enumerate(words):
        if j in consumed:
            continue
        before, after = words[j - 1] if j else "", words[j + 1] if j + 1 < len(words) else ""
        if word in ALL or (word == "deux" and before == "les" and after not in FIRST | LAST and not kind_of(after)):
            chosen += space
            found = True
        elif _penultimate(words, j):
            consumed.update(range(j, j + 5))
            found = True
            pick(len(space) - 1, "penultimate")
        elif word in FIRST or word in LAST:
            if _is_time(words, j) or (word in FIRST and after == "of"):
                continue
            count = next((n for t in (after, before) if (n := _number(t)) is not None and 1 <= n <= len(space)), 1)
            found = True
            chosen += space[:count] if word in FIRST else space[-count:]
        elif (n := _ordinal(word)) is not None:
            measured = _number(before) is not None or (before == "-" and j > 1 and _number(words[j - 2]) is not None)
            if after in UNITS or measured or (word in ("second", "segundo") and before in ("a", "one", "un", "um")):
                continue  # "10 second video", "a 10-second clip", "wait a second"
            found = True
            pick(n, word)
        elif word in ("la", "le") and _bare_number(words, j, kind_of):
            found = True
            pick(_number(after) or 0, f"{word} {after}")
        elif kind_of(word) is not None or word in ITEM_WORDS or word in NUMBER_WORDS or word.startswith("#"):
            numbers, end = _numbers_after(words, j)
            if not numbers:
                continue
            found = True
            consumed.update(range(j, end))
            for n in numbers:
                if word in ITEM_WORDS:
                    item = next((i for i in live if i.position == n), None)
                    chosen.append(item) if item else missing.append(f"{word} {n}")
                else:
                    titled = _titled(space, n, kind_of(word), kind_of)
                    if titled is not None:
                        chosen.append(titled)
                    else:
                        pick(n, f"{word} {n}")
    if not found:
        return None
    positions = sorted({i.position for i in chosen})
    return Selection(positions, missing)


def _bare_number(words: list[str], j: int, kind_of: KindOf) -> bool:
    """ "la 2", "le 3": in French a definite article before a bare number names the item of that number (a count
    stands before a noun: "les 2 affiches")."""
    after = words[j + 1 : j + 3]
    if not after or not after[0].isdigit():
        return False
    nxt = after[1] if len(after) > 1 else ""
    return not (nxt in UNITS or nxt in MORE_WORDS or kind_of(nxt) is not None)


def _penultimate(words: list[str], j: int) -> bool:
    word = words[j]
    nxt = words[j + 1 : j + 4]
    if word == "penultimate":
        return True
    if word == "avant":
        return nxt[:1] in (["derniere"], ["dernier"]) or nxt[:2] in (["-", "derniere"], ["-", "dernier"])
    if word in ("second", "next"):
        return nxt[:2] == ["to", "last"] or nxt[:3] == ["-", "to", "-"]
    return False


def _is_time(words: list[str], j: int) -> bool:
    near = words[max(0, j - 2) : j] + words[j + 1 : j + 3]
    return any(t in TIME_NOUNS for t in near)


def _numbers_after(words: list[str], j: int) -> tuple[list[int], int]:
    """The numbers a noun is followed by: "poster 2", "posters 1 and 3", "items 2-4", "affiche n° 2", "#3"."""
    if words[j].startswith("#") and _number(words[j]) is not None:
        return [_number(words[j])], j + 1
    k = j + 1
    while k < len(words) and words[k] in NUMBER_WORDS and words[k] != words[j]:
        k += 1
    numbers: list[int] = []
    while k < len(words):
        n = _number(words[k])
        if n is None or (k + 1 < len(words) and words[k + 1] in UNITS):
            break
        if numbers and words[k - 1] in RANGE_WORDS and n >= numbers[-1]:
            numbers += list(range(numbers[-1] + 1, min(n, numbers[-1] + MAX_COUNT) + 1))
        else:
            numbers.append(n)
        k += 1
        if k < len(words) and (words[k] in JOIN_WORDS or words[k] in RANGE_WORDS):
            if k + 1 < len(words) and _number(words[k + 1]) is not None:
                k += 1
                continue
            break
    # A spelled number right after a noun may count something else ("the poster one more time").
    spelled = numbers and not any(t.isdigit() or t.startswith("#") for t in words[j + 1 : k])
    if spelled and k < len(words) and (words[k] in MORE_WORDS or words[k] in TIME_NOUNS or words[k] in UNITS):
        return [], j
    return numbers, k


def _titled(space: Sequence[Item], n: int, kind: str | None, kind_of: KindOf) -> Item | None:
    """The one item whose title names this number after a word of the same kind ("Poster 2 of 3", "Affiche 2")."""
    if kind is None:
        return None
    matches = []
    for item in space:
        words = _tokens(_folded(item.title))
        if any(kind_of(w) == kind and words[i + 1 : i + 2] == [str(n)] for i, w in enumerate(words)):
            matches.append(item)
    return matches[0] if len(matches) == 1 else None


# --- video ----------------------------------------------------------------------------------------------------


def animate_phrases(text: str) -> str:
    """The text with "bring X to life", "make it move", "donne vie à X"… said as "animate X" / "anime X"."""
    for pattern, verb in ANIMATE_PHRASES:
        text = pattern.sub(lambda m, verb=verb: f"{verb} {m.group('obj') or ''}".rstrip(), text)
    return text


def edit_changes(text: str) -> list[str]:
    """The changes a message asks of finished work, read by meaning (the understanding layer's `edit` labels,
    several when it asks several), [] when the layer reads none (it abstains: not a change it knows)."""
    return [decision.label for decision in decide_all("edit", text) if not decision.abstained]


def seconds_wanted(text: str, current: int | None) -> int | None:
    """The length a revision asks for: stated, longer (twice), shorter (half), else the current one."""
    stated = DURATION.search(_folded(text))
    if stated and 1 <= int(stated.group(1)) <= MAX_SECONDS:
        return int(stated.group(1))
    if current is None:
        return None
    changes = edit_changes(text)
    if "longer" in changes:
        return min(MAX_SECONDS, max(current + 1, current * 2))
    if "shorter" in changes:
        return max(1, current // 2)
    return current


def asks_length(text: str) -> bool:
    """Whether a change is about a length ("longer", "plus courte", "10 seconds"): only timed work has one."""
    return bool(DURATION.search(_folded(text))) or bool({"longer", "shorter"} & set(edit_changes(text)))


def first_number(text: str) -> int | None:
    """The first count in a person's answer ("5", "Other number. 7", "sept", "10 posters")."""
    for word in _tokens(_folded(text)):
        n = _number(word)
        if n is not None:
            return n
    return None
