"""Lomote's scripted Router: the default offline routing model. Deterministic rules, not an LLM — and it says so.

It answers the Router's request (agents/main/router.py) like a model would, with one `route_message`
tool call, reading only what a model is given: the message, the bounded task index and, in the duplicate
phase, the closest in-progress tasks. Same request, same decision.

How it decides (`phase == "route"`):
1. Each index entry gets a score: the message's content words found in the entry's title (×3), artifact
   titles (×2), goal or summary (×1), each weighted by its rarity among the entries (a word every entry has
   says nothing), plus twice the lexical similarity the index computed.
2. A message that edits or points back ("make the posters warmer", "the series from the other day") goes to
   the best entry when it clearly leads (`follow_up`); when a second entry is close, the person chooses
   (`clarify`); when nothing matches, the person chooses among the best few.
3. A question with no verb of making or changing → `answer` (from the index when it names a task).
4. A verb of making: one single item ("an image of a ginger cat") → `lightweight`; a series, several
   items, a campaign → `new_task`. A transformation of an existing work into another ("turn yesterday's
   photo into a video") is a new goal even though it points back: checked before step 2.
5. Anything else: follow a clear match, else ask.
In the duplicate phase (a new task looks like in-progress ones): continue the closest when it is very close
and alone, otherwise ask.
"""

import math
import re
from typing import Any

from agents.language import STOP_WORDS, content_terms, fold, words
from agents.providers.base import ModelRequest, ModelResponse, ToolCallIntent, Usage

MODEL_NAME = "lomote-scripted-router-1"

STRONG = 2.0  # score from which an entry is a plausible target
LEAD = 1.5  # the best must beat the second by this factor to be chosen without asking
CLARIFY_MAX = 3
SURE_DUPLICATE = 0.8  # cosine from which the duplicate phase continues the task without asking
CLOSE_DUPLICATES = 0.05  # two duplicates within this cosine are both plausible

_CREATE = set(
    """make create generate draw design render produce paint illustrate animate compose write build turn
    convert transform sketch craft imagine
    fais fait faire cree creer genere generer dessine dessiner concois realise realiser ecris ecrire transforme
    transformer compose imagine anime peins illustre produis convertis
    haz hacer crea crear genera generar dibuja disena convierte transforma escribe pinta produce anima
    mach mache machen erstelle erstellen generiere zeichne entwirf gestalte verwandle schreibe male
    fai fare creare disegna trasforma scrivi dipingi realizza produci
    faz faca fazer cria crie criar gera gere gerar desenha escreve produz""".split()
)
_EDIT = set(
    """change edit modify update adjust tweak fix move redo replace remove swap resize crop recolor recolour
    rework revise improve shift continue retry warmer cooler colder brighter darker bigger smaller larger
    lighter bolder softer sharper more less instead again
    changer modifie modifier deplace deplacer ajuste ajuster corrige corriger refais remplace retire enleve
    passe rends reprends plus moins chaud chaude chauds chaudes froid froide clair claire sombre grand petit
    cambia cambiar modifica mueve ajusta corrige rehaz reemplaza quita mas menos calido calida calidos
    andere aendere bearbeite verschiebe korrigiere ersetze entferne waermer warmer kaelter heller dunkler
    groesser kleiner mehr weniger
    sposta correggi rifai sostituisci rimuovi rendi piu caldo calda caldi calde freddo
    muda mude altera altere move mova ajusta refaz troca tira deixa mais quente quentes frio""".split()
)
# Phrases that point back at earlier work, folded; matched on word boundaries.
_BACK = [
    fold(p)
    for p in """other day|last time|the other time|earlier|previous|from before|the one from|those|that one|yesterday|
    again|last week|l autre fois|la derniere fois|tout a l heure|precedent|precedente|hier|celle de|celui de|ceux de|
    celles de|la otra vez|la ultima vez|el otro dia|de antes|ayer|letztes mal|neulich|gestern|vorhin|l altra volta|
    l ultima volta|l altro giorno|ieri|outro dia|da ultima vez|ontem""".split("|")
]
_QUESTION_START = set(
    """what which how why when where who whose is are does do did can could will would should
    quel quelle quels quelles comment pourquoi quand qui combien est
    que cual como cuando donde quien cuanto
    was welche welcher wie wo warum wann wer
    cosa come dove perche quando quale chi quanto
    qual quais onde quem quanto""".split()
)
# Words asking how work is going: a question with one of these about a clear task is answered from the index.
_STATUS = set(
    """status progress going done ready finished finish state where stand
    avancement avance ou fini finie termine terminee pret prete etat
    estado progreso listo lista terminado terminada va
    stand fertig fortschritt status
    stato pronto pronta finito finita andamento punto
    estado progresso pronto pronta terminado terminada anda""".split()
)
_SERIES = set(
    """series set collection campaign several multiple variations variants storyboard brand identity kit pack
    album book deck presentation sequence
    serie ensemble plusieurs campagne collection declinaison declinaisons variantes
    conjunto varios varias campana coleccion
    reihe kampagne mehrere sammlung varianten
    campagna diversi diverse varie vari collezione
    campanha varios varias colecao""".split()
)
_COUNTS = {
    fold(w)
    for w in """two three four five six seven eight nine ten eleven twelve deux trois quatre cinq six sept huit neuf
    dix douze dos tres cuatro cinco seis siete ocho nueve diez zwei drei vier fuenf sechs sieben acht neun zehn
    due tre quattro cinque sei sette otto nove dieci dois duas quatro cinco seis sete oito nove dez""".split()
}
_DURATION = re.compile(r"#[\s-]*(s|secs?|seconds?|secondes?|segundos?|sekunden|secondi|min|minutes?)\b")
_TRANSFORM = re.compile(r"\b(into|en|in|em|zu)\b")
_TRANSFORM_VERBS = {"turn", "convert", "transform", "transforme", "transformer", "convierte", "transforma"}
_TRANSFORM_VERBS |= {"verwandle", "trasforma", "convertis"}
_CUE_WORDS = _CREATE | _EDIT | _QUESTION_START | _SERIES | _COUNTS
_LEADING = (STOP_WORDS | _CREATE | {"please", "also", "pls", "stp", "svp", "bitte", "por", "favor"}) - _TRANSFORM_VERBS

_REPLIES = {
    "status": {
        "en": "“{title}” (task #{id}) is {state}.",
        "fr": "« {title} » (tâche n° {id}) : {state}.",
        "es": "«{title}» (tarea n.º {id}): {state}.",
        "de": "„{title}“ (Aufgabe #{id}): {state}.",
        "it": "«{title}» (attività n. {id}): {state}.",
        "pt": "«{title}» (tarefa n.º {id}): {state}.",
    },
    "cannot": {
        "en": "I am Lomote's scripted router (offline, not a language model): I can start and route work and "
        "report on your tasks, but I cannot answer open questions.",
        "fr": "Je suis le routeur scripté de Lomote (hors ligne, pas un modèle de langage) : je lance et oriente "
        "le travail et je rends compte de vos tâches, mais je ne sais pas répondre aux questions ouvertes.",
        "es": "Soy el enrutador programado de Lomote (sin conexión, no un modelo de lenguaje): inicio y dirijo el "
        "trabajo e informo de tus tareas, pero no respondo preguntas abiertas.",
        "de": "Ich bin Lomotes geskripteter Router (offline, kein Sprachmodell): Ich starte und verteile Arbeit "
        "und berichte über deine Aufgaben, beantworte aber keine offenen Fragen.",
        "it": "Sono il router programmato di Lomote (offline, non un modello linguistico): avvio e indirizzo il "
        "lavoro e riferisco sulle tue attività, ma non rispondo a domande aperte.",
        "pt": "Sou o roteador programado do Lomote (offline, não um modelo de linguagem): inicio e encaminho o "
        "trabalho e informo sobre as suas tarefas, mas não respondo a perguntas abertas.",
    },
}


def _has_phrase(folded_text: str, phrases: list[str]) -> bool:
    padded = f" {' '.join(words(folded_text))} "
    return any(f" {' '.join(words(p))} " in padded for p in phrases)


def _idf(index: list[dict[str, Any]]) -> dict[str, float]:
    frequency: dict[str, int] = {}
    for entry in index:
        for term in _entry_terms(entry):
            frequency[term] = frequency.get(term, 0) + 1
    n = len(index)
    return {term: math.log((n + 1) / (count + 0.5)) + 0.1 for term, count in frequency.items()}


def _entry_terms(entry: dict[str, Any]) -> dict[str, float]:
    """Each content word of an entry and the weight of the field it appears in (the best one)."""
    weights: dict[str, float] = {}
    fields = [
        (entry.get("goal", "") + " " + entry.get("summary", ""), 1.0),
        (" ".join(str(title) for _, title in entry.get("artifacts", [])), 2.0),
        (entry.get("title", ""), 3.0),
    ]
    for text, weight in fields:
        for term in content_terms(text):
            weights[term] = max(weights.get(term, 0.0), weight)
    return weights


def score_entries(message: str, index: list[dict[str, Any]]) -> list[tuple[float, dict[str, Any]]]:
    """(score, entry) best first; ties broken by the most recent activity, then the highest id."""
    terms = {t for t in content_terms(message) if t not in _CUE_WORDS}
    idf = _idf(index)
    scored = []
    for entry in index:
        weights = _entry_terms(entry)
        lexical = sum(weights[t] * idf.get(t, 0.0) for t in terms if t in weights)
        scored.append((lexical + 2.0 * max(float(entry.get("similarity", 0.0)), 0.0), entry))
    # Equal scores: the most recently active first (the index lists recent tasks first), then the higher id.
    scored.sort(key=lambda item: (-item[0], _inverse(item[1].get("last_activity", "")), -int(item[1]["id"])))
    return scored


def _inverse(text: str) -> tuple[int, ...]:
    return tuple(-ord(ch) for ch in text)


def _title(message: str) -> str:
    """A task title from the person's words: leading politeness and verbs of making dropped, first letter up."""
    tokens = message.split()
    start = 0
    while start < len(tokens) - 1 and fold(tokens[start]).strip(".,;:!?'\"«»“”") in _LEADING:
        start += 1
    title = " ".join(tokens[start:]).strip(" .!?") or message.strip()
    title = title[:1].upper() + title[1:]
    return title if len(title) <= 80 else title[:79].rsplit(" ", 1)[0] + "…"


def _is_one_shot(folded: str, tokens: list[str]) -> bool:
    if any(t in _SERIES for t in tokens) or any(t in _COUNTS for t in tokens):
        return False
    if any(t.isdigit() and int(t) > 1 and not _DURATION.search(folded.replace(t, "#", 1)) for t in tokens):
        return False
    if any(t in _TRANSFORM_VERBS for t in tokens) and _TRANSFORM.search(folded):
        return False
    creative_objects = sum(1 for t in tokens if t in {"and", "et", "y", "und", "e"})
    return creative_objects == 0 and len(tokens) <= 25


class ScriptedRouter:
    """The offline Router. Reads `request.state`; answers with one `route_message` tool call."""

    kind = "scripted_router"

    def complete(self, request: ModelRequest) -> ModelResponse:
        state = request.state
        if state.get("phase") == "duplicates":
            decision = self._duplicates(state.get("duplicates", []))
        else:
            decision = self._route(state.get("message", ""), state.get("index", []), state.get("language", "en"))
        return ModelResponse(
            text="",
            tool_calls=[ToolCallIntent(id="route-1", name="route_message", arguments=decision)],
            usage=Usage(),
            model=MODEL_NAME,
        )

    def _duplicates(self, duplicates: list[dict[str, Any]]) -> dict[str, Any]:
        if not duplicates:
            return {"route": "new_task", "reason": "no duplicate"}
        ranked = sorted(duplicates, key=lambda d: -float(d.get("similarity", 0.0)))
        best = ranked[0]
        close = [d for d in ranked if float(d.get("similarity", 0.0)) >= float(best["similarity"]) - CLOSE_DUPLICATES]
        if len(close) == 1 and float(best["similarity"]) >= SURE_DUPLICATE:
            return {"route": "follow_up", "task": best["id"], "reason": "same goal as an in-progress task"}
        return {
            "route": "clarify",
            "candidates": [d["id"] for d in ranked[:CLARIFY_MAX]],
            "reason": "looks like in-progress work",
        }

    def _route(self, message: str, index: list[dict[str, Any]], language: str) -> dict[str, Any]:
        folded = fold(message)
        tokens = words(message)
        token_set = set(tokens)
        creates = bool(token_set & _CREATE)
        edits = bool(token_set & _EDIT)
        points_back = _has_phrase(folded, _BACK)
        first = tokens[0] if tokens else ""
        question = message.strip().endswith("?") or first in _QUESTION_START or message.strip().startswith("¿")

        scored = score_entries(message, index)
        best_score, best = scored[0] if scored else (0.0, None)
        second_score = scored[1][0] if len(scored) > 1 else 0.0
        strong = [entry for score, entry in scored if score >= STRONG and score * LEAD >= best_score]
        clear = best is not None and best_score >= STRONG and best_score >= LEAD * second_score

        if question and not creates and not edits:
            if clear and token_set & _STATUS:
                state = best.get("state") or best.get("status", "")
                reply = _REPLIES["status"].get(language, _REPLIES["status"]["en"])
                return {"route": "answer", "reply": reply.format(title=best["title"], id=best["id"], state=state)}
            return {"route": "answer", "reply": _REPLIES["cannot"].get(language, _REPLIES["cannot"]["en"])}

        # "Turn yesterday's photo into a video" makes a new work from an old one: an independent goal.
        if token_set & _TRANSFORM_VERBS and _TRANSFORM.search(folded):
            return {"route": "new_task", "title": _title(message), "reason": "a new work made from another"}

        if edits or points_back:
            if clear:
                return {"route": "follow_up", "task": best["id"], "reason": "edits or points back at this task"}
            if len(strong) >= 2:
                return {
                    "route": "clarify",
                    "candidates": [entry["id"] for entry in strong[:CLARIFY_MAX]],
                    "reason": "several tasks fit",
                }
            if not creates:
                return {
                    "route": "clarify",
                    "candidates": [entry["id"] for _, entry in scored[:CLARIFY_MAX]],
                    "reason": "points back at work the index does not clearly show",
                }

        if creates:
            route = "lightweight" if _is_one_shot(folded, tokens) else "new_task"
            return {"route": route, "title": _title(message), "reason": "a request to make something"}

        if clear:
            return {"route": "follow_up", "task": best["id"], "reason": "names this task"}
        return {
            "route": "clarify",
            "candidates": [entry["id"] for _, entry in scored[:CLARIFY_MAX]],
            "reason": "no clear target",
        }
