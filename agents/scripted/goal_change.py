"""Whether a follow-up message changes what a task must deliver (its goal), and the brief it asks for if so.

The scripted planner's reading (rules, not a model): it decides whether the planner calls `revise_goal`.
A goal change moves the task's goal revision and re-plans its checklist; anything else (added detail, a
change to finished work) stays under the same goal and goes through the planner's revision rule.

What it recognises, in English, French, German, Spanish, Italian and Portuguese:
1. A restated goal: "new goal: …", "change the brief to …", "nouvel objectif : …", "neues Ziel: …", "nuevo
   objetivo: …", "nuovo obiettivo: …", "novo objetivo: …". The words after the cue are the new brief.
2. A replacement cue — "instead (of)", "rather (than)", "no longer", "not … any more", "forget / drop / scrap",
   "switch to", "replace X with Y"; "plutôt (que)", "au lieu de", "à la place (de)", "finalement", "ne … plus",
   "oublie", "laisse tomber", "change de", "remplace X par Y"; "stattdessen", "lieber", "nicht mehr",
   "vergiss"; "en lugar de", "en vez de", "ya no", "olvida"; "invece (di)", "piuttosto", "non … più";
   "em vez de", "não … mais", "esquece" — together with a deliverable other than the brief's:
   - another kind of work (a noun of `lomote.understanding.word_classes`' kind classes), named where a deliverable
     stands: alone ("Flyers instead.") or after a verb that makes or wants something, not after one acting on
     existing work ("put the logo…", "ajoute un chat…"), and not as a part of the brief's deliverable ("a video
     on the poster"); when the message does not name what it replaces, introduced as something new ("a
     video", "des flyers", not "the text");
   - or the same work for another purpose: a "for / about / pour / für / para / per …" phrase whose words are
     not in the brief ("do it for the food fair instead", "plutôt pour Noël"), with no word of appearance
     ("bigger", "plus chaud"): those describe a change to the work itself.
   When the message names what it replaces ("instead of the posters", "forget the jazz festival"), that must
   be the brief's deliverable or something the brief is about: replacing something else ("the photo on the
   poster", "the top corner") is a change inside the work, not to the goal.

What it does not recognise, on purpose: additions and detail without a replacement cue ("make the text
bigger", "ajoute un chat", "add a video link on the poster"), which the planner treats as revisions; a new
count of the same work ("5 posters instead of 3"); a replacement of the look ("warmer colours instead");
and anything that needs the conversation to understand (irony, "the other one", "what we said yesterday").

The new brief is built from the person's words, never invented: for a restated goal, the words after the cue;
for another deliverable, the message with its cue words and the replaced part taken out (its purpose — "for a
jazz festival" — carried over from the previous brief when the message names none); for another purpose, the
previous brief with its purpose phrase replaced by the message's.
"""

import functools
import re
import unicodedata
from dataclasses import dataclass

from agents.language import SUPPORTED, content_terms, language_detect
from lomote.understanding.word_classes import KIND_GROUPS, LEXICONS, TIME_PHRASES

MAX_REASON_CHARS = 1000
MAX_INPUT_CHARS = 2000  # the opening of a long message says whether it replaces the goal


@dataclass(frozen=True)
class GoalChange:
    brief: str  # the new brief
    reason: str  # the message that changed the goal, whitespace collapsed, bounded
    how: str  # "restated" (a new goal spelled out), "deliverable" (another kind of work), "purpose" (another subject)


# --- cues ---------------------------------------------------------------------------------------------------
# Patterns run on the message lower-cased and without accents ("plutôt" → "plutot"), apostrophes made plain.

# A goal spelled out: the rest of the message is the new brief.
RESTATE = [
    r"\b(?:new|updated|revised|different|changed)\s+(?:goal|brief|objective|deliverable|task)\s*(?:is\s*)?[:=\-–—]",
    r"\b(?:change|update|replace|switch)\s+the\s+(?:goal|brief|objective|deliverable)(?:\s*:|\s+(?:to|with)\b:?)",
    r"\bthe\s+(?:goal|brief|objective)\s+is\s+now\b:?",
    r"\bnouv(?:el|eau|elle)\s+(?:objectif|brief|but|consigne|demande|livrable)\s*[:=\-–—]",
    r"\bchange[rz]?\s+(?:l'objectif|le brief|le but|la consigne|le livrable)(?:\s*:|\s+(?:en|pour|par)\b:?)",
    r"\bl'objectif\s+est\s+(?:maintenant|desormais)\b:?",
    r"\bneue[sr]?\s+(?:ziel|auftrag|briefing|vorgabe)\s*[:=\-–—]",
    r"\bdas\s+ziel\s+ist\s+(?:jetzt|nun)\b:?",
    r"\bnuevo\s+(?:objetivo|encargo|brief)\s*[:=\-–—]",
    r"\bel\s+objetivo\s+es\s+ahora\b:?",
    r"\bnuovo\s+(?:obiettivo|brief|incarico)\s*[:=\-–—]",
    r"\bnovo\s+(?:objetivo|briefing|brief)\s*[:=\-–—]",
]

# What follows the cue, to the end of its clause, is what is replaced: "instead of the posters".
OLD_AFTER = [
    r"\binstead\s+of\b",
    r"\brather\s+than\b",
    r"\bin\s+place\s+of\b",
    r"\bau\s+lieu\s+(?:des\b|du\b|de\b|d')",
    r"\bplutot\s+(?:que\b|qu')(?:\s+des\b|\s+de\b|\s+d')?",
    r"\ba\s+la\s+place\s+(?:des\b|du\b|de\b|d')",
    r"\b(?:an)?statt\b",
    r"\banstelle\s+(?:von\b)?",
    r"\ben\s+(?:lugar|vez)\s+(?:de|del)\b",
    r"\binvece\s+(?:di|del|della|dei|delle|dello|degli)\b",
    r"\bal\s+posto\s+(?:di|del|della|dei|delle)\b",
    r"\bpiuttosto\s+che\b",
    r"\bem\s+(?:vez|lugar)\s+(?:de|do|da|dos|das)\b",
]

# The clause holding the cue names what is dropped: "forget the posters", "je ne veux plus d'affiches".
DISMISS = [
    r"\bno\s+longer\b",
    r"\bno\s+more\b",
    r"\bnot\b[^,;:.!?]*\bany\s?more\b",
    r"\b(?:forget|drop|scrap|ditch|cancel)\b",
    r"\bnever\s?mind\b",
    r"\b(?:don't|do\s+not)\s+(?:want|need)\b",
    r"\b(?:ne\s|n')[^,;:.!?]*\bplus\b",
    r"\b(?:oublie[zr]?|annule[zr]?|abandonne[zr]?)\b",
    r"\blaisse[zr]?\s+tomber\b",
    r"\bnicht\s+mehr\b",
    r"\bkeine?[nm]?\b[^,;:.!?]*\bmehr\b",
    r"\bvergiss\b",
    r"\bvergessen\s+sie\b",
    r"\bya\s+no\b",
    r"\bolvid(?:a|ate|e|ad)\b",
    r"\bnon\b[^,;:.!?]*\bpiu\b",
    r"\bdimentica\b",
    r"\blascia\s+(?:perdere|stare)\b",
    r"\bnao\b[^,;:.!?]*\bmais\b",
    r"\besquece\b",
]

# The clause holding the cue is the new deliverable; the cue words go: "a video instead", "plutôt une vidéo".
NEW_MARK = [
    r"\binstead\b",
    r"\brather\b",
    r"\bswitch(?:ing)?\s+to\b",
    r"\bchange\s+of\s+plans?\b",
    r"\bchangement\s+de\s+plans?\b",
    r"\bplananderung\b",
    r"\bcambio\s+de\s+planes\b",
    r"\bchange\s+(?:it\s+)?to\b",
    r"\bplutot\b",
    r"\ba\s+la\s+place\b",
    r"\bfinalement\b",
    r"\bau\s+final\b",
    r"\bchange[rz]?\s+(?:de|d')\s*[^\W\d_]+",  # "change de format": the dimension goes too
    r"\bpass(?:e|ez|ons)\s+a\b",
    r"\bstattdessen\b",
    r"\blieber\b",
    r"\beher\b",
    r"\bwechsle\s+zu\b",
    r"\ben\s+su\s+lugar\b",
    r"\ben\s+cambio\b",
    r"\bmejor\b",
    r"\bal\s+final\b",
    r"\bcambia\s+a\b",
    r"\bmas\s+bien\b",
    r"\binvece\b",
    r"\bpiuttosto\b",
    r"\bal\s+suo\s+posto\b",
    r"\balla\s+fine\b",
    r"\bpassa\s+a\b",
    r"\bem\s+vez\s+disso\b",
    r"\bmelhor\b",
    r"\bno\s+final\b",
    r"\bafinal\b",
    r"\bmuda\s+para\b",
]

# Both parts named by the cue: "replace the posters with a video", "plutôt une vidéo que des affiches".
PAIRED = [
    r"\b(?P<cue>replace)\b(?P<old>[^,;:.!?]+?)\b(?P<cue2>with|by)\b",
    r"\b(?P<cue>switch|change|go|move)\s+from\b(?P<old>[^,;:.!?]+?)\b(?P<cue2>to)\b",
    r"\b(?P<cue>rather)\b(?!\s+than)[^,;:.!?]+?\b(?P<cue2>than)\b(?P<old>[^,;:.!?]+)",
    r"\b(?P<cue>remplace[rz]?)\b(?P<old>[^,;:.!?]+?)\b(?P<cue2>par)\b",
    r"\b(?P<cue>plutot)\b(?!\s+qu)[^,;:.!?]+?\b(?P<cue2>que|qu')(?P<old>[^,;:.!?]+)",
    r"\b(?P<cue>ersetze[n]?)\b(?P<old>[^,;:.!?]+?)\b(?P<cue2>durch)\b",
    r"\b(?P<cue>lieber)\b[^,;:.!?]+?\b(?P<cue2>als)\b(?P<old>[^,;:.!?]+)",
    r"\b(?P<cue>reemplaza|sustituye|cambia)\b(?P<old>[^,;:.!?]+?)\b(?P<cue2>por)\b",
    r"\b(?P<cue>sostituisci)\b(?P<old>[^,;:.!?]+?)\b(?P<cue2>con)\b",
    r"\b(?P<cue>substitu[ia]|troca|troque)\b(?P<old>[^,;:.!?]+?)\b(?P<cue2>por)\b",
]

# Verbs that act on work that exists (place, add, move, edit): what follows them is a part of the work.
EDIT_VERBS = frozenset(
    """put place add insert include attach move shift use apply keep remove delete change tweak adjust modify edit
    fix update improve refine rework retouch crop resize recolor recolour swap
    mets mettez mettre place placez placer ajoute ajoutez ajouter insere inserez inserer inclus inclure deplace
    deplacez deplacer bouge bougez utilise utilisez utiliser applique appliquez garde gardez enleve enlevez retire
    retirez supprime supprimez change changez changer modifie modifiez modifier ajuste ajustez corrige corrigez
    retouche recadre recadrez agrandis agrandissez
    setze setz fuge fug hinzufugen einfugen verschiebe verschieb nutze verwende behalte entferne losche andere
    ander passe korrigiere
    pon ponga poner anade anada anadir agrega agregue inserta incluye mueve mueva usa usar aplica manten quita
    elimina borra cambia modifica ajusta corrige
    metti mettere aggiungi aggiungere inserisci includi sposta spostare usare applica tieni togli rimuovi cambia
    aggiusta correggi
    poe ponha coloca coloque adiciona adicione insere inclui mova aplica mantem tira remove apaga muda mude""".split()
)
# Determiners that introduce something new; any other determiner ("the", "ma", "diese") points at what exists.
INDEFINITE = frozenset(
    """a an some any un une des du de d quelques ein eine einen einem einer eines unos unas uno una dei degli delle
    qualche um uma uns umas""".split()
)
# Prepositions that say what a piece of work is for or about: its purpose.
PURPOSE = frozenset("for about pour sur propos sujet fur uber zum zur para sobre per su sul sulla".split())
# Prepositions after which comes what something becomes, not a part of it: "turn the photo into a video".
TARGET = frozenset("into en em zu".split())
# Verbs of choosing before a preposition ("go with a newsletter", "on part sur une vidéo"): what follows is chosen.
CHOOSE = frozenset("go opt settle decide opte optez optons part partons entscheide entscheiden opta optar".split())
# Clause breaks besides punctuation, and words that join a next request ("… and make a video").
BUT = frozenset("but mais aber sondern pero sino pero porem".split())  # not "ma", "mas": "my", "más" elsewhere
AND = frozenset("and then et puis und dann y luego e poi depois".split())
# Words a new brief does not start with: discourse fillers left once the cue is gone.
LEADING_FILLER = frozenset(
    """actually ok okay so well oh hmm hm um then also and but please bon alors ben euh donc et mais eigentlich
    und aber bueno pues entonces pero allora beh quindi entao""".split()
)
ANSWER_FILLER = frozenset("no non nein nope yes oui ja si sim".split())  # only before a comma: "Non, fais…"
PHRASE_FILLER = ("en fait", "in fact", "de hecho", "in effetti", "na verdade")

_TOKEN = re.compile(r"[^\W_]+")
_BREAK = re.compile(r"[,;:.!?()\[\]\n—–]|\s-\s")


def _fold(text: str) -> str:
    """Lower case without accents, character for character, so positions in it are positions in `text`."""
    out = []
    for ch in text:
        lower = ch.lower()
        plain = "".join(c for c in unicodedata.normalize("NFKD", lower) if not unicodedata.combining(c))
        out.append(plain if len(plain) == 1 else (lower if len(lower) == 1 else ch))
    return "".join(out).replace("’", "'")


# Plural and case endings stripped to compare nouns: "posters", "affiches", "Plakaten", "carteles" are one each.
NOUN_ENDINGS = ("es", "en", "s", "e")


def noun_form(word: str) -> str:
    """A folded noun without its plural ending, to compare two mentions of one kind of work."""
    for ending in NOUN_ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            return word[: -len(ending)]
    return word


def _compiled(patterns: list[str]) -> list[re.Pattern[str]]:
    return [re.compile(p) for p in patterns]


_RESTATE, _OLD_AFTER, _DISMISS, _NEW_MARK, _PAIRED = map(_compiled, (RESTATE, OLD_AFTER, DISMISS, NEW_MARK, PAIRED))


@functools.cache
def _classes(langs: tuple[str, ...]) -> dict[str, frozenset[str]]:
    """Word classes of `lomote.understanding.word_classes` for these languages, folded and split into tokens."""
    classes: dict[str, set[str]] = {}
    for lang in langs:
        for name, words in LEXICONS[lang].items():
            cls = name.split(":", 1)[0]
            classes.setdefault(cls, set()).update(_TOKEN.findall(_fold(words)))
        classes.setdefault("time", set()).update(_fold(w) for w in TIME_PHRASES[lang][0])
    classes["kind"] = classes.get("kind", set()) | {_fold(w) for words in KIND_GROUPS.values() for w in words}
    classes["kind_noun"] = {noun_form(w) for w in classes["kind"]}  # "Plakaten" is a kind its lists spell "Plakate"
    return {name: frozenset(words) for name, words in classes.items()}


def _languages(lang: str, text: str) -> tuple[str, ...]:
    """The task's language, the message's, and English (loanwords like "logo" or "flyer"), as far as the word
    lists have them."""
    detected = language_detect(text) if text else "en"
    ordered = dict.fromkeys((lang[:2].lower() if lang else "en", detected, "en"))
    return tuple(code for code in ordered if code in LEXICONS and code in SUPPORTED)


# --- reading a text -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Word:
    start: int
    end: int
    key: str  # folded


class _Reading:
    """A text's words with their classes, and where its clauses end."""

    def __init__(self, text: str, langs: tuple[str, ...]):
        self.text = text
        self.folded = _fold(text)
        self.classes = _classes(langs)
        self.words = [_Word(m.start(), m.end(), m.group()) for m in _TOKEN.finditer(self.folded)]
        self.breaks = sorted({m.start() for m in _BREAK.finditer(self.folded)})
        self.buts = [w for w in self.words if w.key in BUT]

    def is_(self, word: _Word, cls: str) -> bool:
        return word.key in self.classes.get(cls, frozenset())

    def is_kind(self, index: int) -> bool:
        """A noun of a kind of work, not the same word used as a verb ("post it", "film the launch")."""
        word = self.words[index]
        if not (self.is_(word, "kind") or noun_form(word.key) in self.classes["kind_noun"]) or word.key.isdigit():
            return False
        following = self.words[index + 1] if index + 1 < len(self.words) else None
        if following is None or self.broken(word.end, following.start):
            return True
        used_as_verb = self.is_(following, "determiner") or following.key in ("it", "them", "le", "la", "les")
        return not (used_as_verb and following.key not in INDEFINITE | {"of", "de", "du", "des"})

    def is_content(self, word: _Word) -> bool:
        return not any(
            self.is_(word, cls) for cls in ("determiner", "function", "preposition", "connector", "verb", "time")
        )

    def broken(self, start: int, end: int) -> bool:
        """Whether a clause ends between these positions."""
        return any(start <= b < end for b in self.breaks) or any(start <= w.start < end for w in self.buts)

    def clause_end(self, start: int, *, stop_at_verb: bool = False) -> int:
        """Where the clause going on at `start` ends: punctuation, "but", "… and <verb>", or (with
        `stop_at_verb`) a verb after the clause has named something ("instead of posters make a video")."""
        ends = [b for b in self.breaks if b >= start] + [w.start for w in self.buts if w.start >= start]
        end = min(ends, default=len(self.text))
        named = False
        for index, word in enumerate(self.words):
            if word.start < start or word.start >= end:
                continue
            following = self.words[index + 1] if index + 1 < len(self.words) else None
            if word.key in AND and following is not None and following.start < end and self._starts_request(following):
                return word.start
            if stop_at_verb and named and self.is_(word, "verb"):
                return word.start
            named = named or self.is_(word, "kind") or self.is_content(word)
        return end

    def clause_start(self, position: int) -> int:
        starts = [b + 1 for b in self.breaks if b < position] + [w.end for w in self.buts if w.end <= position]
        start = max(starts, default=0)
        for index, word in enumerate(self.words):
            if start <= word.start < position:
                following = self.words[index + 1] if index + 1 < len(self.words) else None
                if word.key in AND and following is not None and self._starts_request(following):
                    start = word.end
        return start

    def _starts_request(self, word: _Word) -> bool:
        return self.is_(word, "verb") or word.key in EDIT_VERBS or (self.is_(word, "function") and word.key != "the")

    def governed(self, index: int) -> bool:
        """Whether the word at `index` stands in a prepositional phrase ("a logo *on the poster*"): what is
        governed is a part or a purpose of the work, not the work. A series word lets its noun through ("a
        series of posters"), and so does a preposition of becoming ("into a video")."""
        k = index - 1
        while k >= 0 and not self.broken(self.words[k].end, self.words[k + 1].start):
            word = self.words[k]
            if word.key in TARGET:
                return False
            if self.is_(word, "determiner"):
                k -= 1
                continue
            if self.is_(word, "preposition") or self.is_(word, "connector"):
                before = self.words[k - 1] if k > 0 else None
                return not (before is not None and (self.is_(before, "count") or before.key in CHOOSE))
            if self.is_(word, "verb") or word.key in EDIT_VERBS or self.is_(word, "function"):
                return False
            k -= 1
        return False

    def kinds(self, *, governed: bool = False) -> list[tuple[int, str]]:
        """(index, canonical noun) of the kind nouns, those in a prepositional phrase only if `governed`."""
        return [
            (i, noun_form(w.key))
            for i, w in enumerate(self.words)
            if self.is_kind(i) and (governed or not self.governed(i))
        ]

    def clause_words(self, index: int) -> list[int]:
        """Indexes of the words of the clause holding word `index`."""
        word = self.words[index]
        start, end = self.clause_start(word.start), self.clause_end(word.start)
        return [i for i, w in enumerate(self.words) if start <= w.start < end]

    def purpose(self) -> tuple[int, int] | None:
        """The span of the first purpose phrase ("for a jazz festival", "pour la fête de la musique")."""
        for index, word in enumerate(self.words):
            chosen = index > 0 and self.words[index - 1].key in CHOOSE  # "on part sur une vidéo"
            if word.key in PURPOSE and not chosen:
                return word.start, self.clause_end(word.end)
        return None


# --- deciding -----------------------------------------------------------------------------------------------


def goal_change(message: str, *, brief: str, lang: str = "en") -> GoalChange | None:
    """The goal change `message` asks for against the current `brief`, or None when it asks for none."""
    whole = " ".join(unicodedata.normalize("NFC", message or "").replace("’", "'").split())
    current = " ".join(unicodedata.normalize("NFC", brief or "").replace("’", "'").split())
    if not whole or whole.startswith("[card ") or whole.casefold() == current.casefold():
        return None
    text = whole[:MAX_INPUT_CHARS]
    langs = _languages(lang, text)
    reason = whole[:MAX_REASON_CHARS]
    restated = _restated(whole)
    if restated is not None:
        return _different(GoalChange(brief=restated, reason=reason, how="restated"), current)
    reading = _Reading(text, langs)
    cues, old_spans = _cues(reading)
    if not cues:
        return None
    goal = _Reading(current, langs)
    old_text = " ".join(text[s:e] for s, e in old_spans).strip()
    if old_text and not _names_the_goal(_Reading(old_text, langs), goal):
        return None
    new_text = _tidy(_without(text, [*cues, *old_spans]))
    if not new_text:
        return None
    new = _Reading(new_text, langs)
    change = _other_deliverable(new, goal, explicit=bool(old_text), reason=reason)
    if change is None:
        change = _other_purpose(new, goal, reason=reason)
    return _different(change, current) if change is not None else None


def _different(change: GoalChange, current: str) -> GoalChange | None:
    brief = _tidy(change.brief)
    if not brief or brief.casefold() == current.casefold():
        return None
    return GoalChange(brief=brief, reason=change.reason, how=change.how)


def _restated(text: str) -> str | None:
    folded = _fold(text[:MAX_INPUT_CHARS])
    for pattern in _RESTATE:
        match = pattern.search(folded)
        if match:
            goal = text[match.end() :].strip(" :=-–—")
            return goal if re.search(r"[^\W_]", goal) else None
    return None


def _cues(reading: _Reading) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The spans of the cue words, and those of what the message says is replaced."""
    folded = reading.folded
    cues: list[tuple[int, int]] = []
    old: list[tuple[int, int]] = []
    for pattern in _PAIRED:
        for match in pattern.finditer(folded):
            cues += [match.span(name) for name in ("cue", "cue2")]
            start, end = match.span("old")
            if match.start("old") > match.start("cue2"):  # "rather X than Y": Y runs to the clause's end
                end = reading.clause_end(start, stop_at_verb=True)
            old.append((start, end))
    for pattern in _OLD_AFTER:
        for match in pattern.finditer(folded):
            if _inside(match.span(), cues):
                continue
            cues.append(match.span())
            old.append((match.end(), reading.clause_end(match.end(), stop_at_verb=True)))
    for pattern in _DISMISS:
        for match in pattern.finditer(folded):
            if _inside(match.span(), cues):
                continue
            cues.append(match.span())
            old.append((reading.clause_start(match.start()), reading.clause_end(match.end())))
    for pattern in _NEW_MARK:
        for match in pattern.finditer(folded):
            if not _inside(match.span(), cues) and not _inside(match.span(), old):
                cues.append(match.span())
    return cues, old


def _inside(span: tuple[int, int], spans: list[tuple[int, int]]) -> bool:
    return any(s < span[1] and span[0] < e for s, e in spans)


def _without(text: str, spans: list[tuple[int, int]]) -> str:
    keep = [True] * len(text)
    for start, end in spans:
        for i in range(start, min(end, len(text))):
            keep[i] = False
    return "".join(ch if kept else " " for ch, kept in zip(text, keep, strict=True))


def _tidy(text: str) -> str:
    """Whitespace collapsed, no dangling punctuation or filler at either end, a capital first letter."""
    text = " ".join(text.split())
    text = re.sub(r"\s+([,;:.!?])", r"\1", text)
    text = re.sub(r"([,;:])(?:\s*[,;:])+", r"\1", text)
    while True:
        before = text
        text = text.strip(" ,;:-–—").lstrip(".!?")
        folded = _fold(text)
        for filler in PHRASE_FILLER:
            if folded.startswith(filler + " ") or folded.startswith(filler + ","):
                text = text[len(filler) :]
        first = _TOKEN.match(folded)
        following = text[first.end() : first.end() + 1] if first else ""
        if first and len(text) > first.end():
            if (first.group() in LEADING_FILLER and following in " ,") or (
                first.group() in ANSWER_FILLER and following == ","
            ):
                text = text[first.end() :]
        if text == before:
            break
    text = text.rstrip(" ,;:-–—")
    return text[:1].upper() + text[1:]


def _deliverables(goal: _Reading) -> set[str]:
    return {noun for _, noun in goal.kinds()}


def _names_the_goal(old: _Reading, goal: _Reading) -> bool:
    """Whether the replaced part is the brief's deliverable or something the brief is about. A bare pronoun
    ("forget that", "oublie ça") stands for the goal."""
    named = {noun for _, noun in old.kinds()}
    if named:
        return bool(named & _deliverables(goal))
    if {noun for _, noun in old.kinds(governed=True)} & _deliverables(goal):
        return True  # "je ne veux plus d'affiches"
    terms = set(_terms(old))
    return not terms or bool(terms & set(_terms(goal)))


def _terms(reading: _Reading, span: tuple[int, int] | None = None) -> list[str]:
    """Stemmed content words (not kinds, styles, counts or times), within `span` if given."""
    start, end = span or (0, len(reading.text))
    words = [
        w
        for w in reading.words
        if start <= w.start < end
        and reading.is_content(w)
        and not any(reading.is_(w, cls) for cls in ("kind", "style", "count"))
        and w.key not in PURPOSE
    ]
    return [term for w in words for term in content_terms(w.key)]


def _other_deliverable(new: _Reading, goal: _Reading, *, explicit: bool, reason: str) -> GoalChange | None:
    """Another kind of work named where a deliverable stands (see the module's docstring)."""
    current = _deliverables(goal)
    for index, noun in new.kinds():
        if noun in current:
            continue
        clause = new.clause_words(index)
        before = [i for i in clause if i < index]
        after = [i for i in clause if i > index]
        if any(new.words[i].key in EDIT_VERBS for i in before):
            continue  # "put a logo in the corner": a part of the work
        if any(noun_form(new.words[i].key) in current and new.governed(i) for i in after):
            continue  # "a video link on the poster": a part of the poster
        if not explicit and _definite(new, index, before):
            continue  # "make the text bigger instead": the text that exists
        brief = new.text
        purpose = goal.purpose()
        if new.purpose() is None and purpose is not None:
            brief = f"{brief.rstrip(' .!')} {goal.text[purpose[0] : purpose[1]].strip()}"
        return GoalChange(brief=brief, reason=reason, how="deliverable")
    return None


def _definite(new: _Reading, index: int, before: list[int]) -> bool:
    """Whether the nearest determiner before the noun points at something that exists ("the", "ma", "diese")."""
    for i in reversed(before):
        word = new.words[i]
        if word.key in INDEFINITE or word.key.isdigit() or new.is_(word, "count"):
            return False
        if new.is_(word, "determiner"):
            return True
        if new.is_(word, "verb") or new.is_(word, "function") or new.is_(word, "preposition"):
            return False
    return False


def _other_purpose(new: _Reading, goal: _Reading, *, reason: str) -> GoalChange | None:
    """The same work for another purpose: the brief keeps its words, with the new purpose phrase in place."""
    span = new.purpose()
    if span is None:
        return None
    terms = set(_terms(new, span))
    if not terms or terms & set(_terms(goal)):
        return None
    outside = [i for i, w in enumerate(new.words) if not span[0] <= w.start < span[1]]
    if any(new.words[i].key in EDIT_VERBS or new.is_(new.words[i], "style") for i in outside):
        return None  # "use warmer colours for the background": a change to the work itself
    if any(new.is_kind(i) and noun_form(new.words[i].key) not in _deliverables(goal) for i in outside):
        return None  # another kind of work as well: not only a new purpose
    phrase = new.text[span[0] : span[1]].strip(" ,;:.!?")
    phrase = phrase[:1].lower() + phrase[1:]  # a preposition, capitalised only if it opened the message
    current = goal.purpose()
    if current is None:
        brief = f"{goal.text.rstrip(' .!')} {phrase}"
    else:
        brief = f"{goal.text[: current[0]]}{phrase}{goal.text[current[1] :]}"
    return GoalChange(brief=brief, reason=reason, how="purpose")
