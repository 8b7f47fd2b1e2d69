"""Lomote's scripted Router: the default offline routing model. It reads by meaning, not by keyword rules.

It answers the Router's request (agents/main/router.py) like a model would, with one `route_message` tool call
naming tasks by the labels the request offers, reading only what a model is given: the message, its language,
the bounded task index, the last few messages to Main and, in the duplicate phase, the closest in-progress
tasks. Same request, same decision.

Two readings of the understanding layer (lomote/understanding, DESIGN §15) make the decision:
- the message's ACT (the "route_act" decision): new work in one piece or several, a new work made from an
  existing one, a change to existing work, a question about it, a question about how work is going, a question
  about what Lomote can do, thanks or a greeting, or a request to forget or correct what Main remembers;
- its TARGET among the index's tasks (lomote/understanding/routing.py): each candidate scored by meaning —
  the message against the task's title, goal, summary and its work's titles, with how far it leads the
  others, recency, the conversation's last task, quick and closed tasks — into a calibrated probability.

Then: thanks, greetings and questions about Lomote → `answer`; a question about how work is going → `answer`
from the index; a request to forget or correct → `answer` marked `act: memory` (Main's memory path takes it);
new work → `lightweight` for one piece, `new_task` for several or for a work made from an existing one; a
change or a question about existing work → `follow_up` of the target when its probability reaches the
threshold chosen on the routing set's train split, otherwise — when there are candidates — `clarify` with the
likeliest ones as choices (never a guess), and with no task at all, a new task. Before asking, when the
request offers the `open_task` tool, it opens the candidates (one call each) and scores them again with what
their details hold (checklist, artifacts and their descriptions, the person's latest messages), as a model
would read before deciding.

In the duplicate phase (a new task looks like in-progress ones), the search's similarity decides: one very
close in-progress task is continued; otherwise the person chooses among them (or a new task).
"""

import json
import re
from typing import Any

from agents.providers.base import ModelRequest, ModelResponse, ToolCallIntent, Usage
from agents.scripted.router_title import title_from
from lomote.understanding import decide
from lomote.understanding.classifier import decision_get
from lomote.understanding.routing import Candidate, Target, target_score

MODEL_NAME = "lomote-scripted-router-3"

CLARIFY_MAX = 3
SURE_DUPLICATE = 0.8  # search similarity from which the duplicate phase continues the task without asking
CLOSE_DUPLICATES = 0.05  # two duplicates within this similarity are both plausible
CLOSED = {"archived", "cancelled"}
LOOKUP_TOOL = "open_task"
ABOUT_EXISTING = ("change", "ask_work")

_REPLIES = {
    "status": {
        "en": "“{title}” (task #{id}) is {state}.",
        "fr": "« {title} » (tâche n° {id}) : {state}.",
        "es": "«{title}» (tarea n.º {id}): {state}.",
        "de": "„{title}“ (Aufgabe #{id}): {state}.",
        "it": "«{title}» (attività n. {id}): {state}.",
        "pt": "«{title}» (tarefa n.º {id}): {state}.",
    },
    "status_none": {
        "en": "I see no task about that yet. Tell me what to make and I will start one.",
        "fr": "Je ne vois encore aucune tâche à ce sujet. Dites-moi quoi créer et je la lance.",
        "es": "Aún no veo ninguna tarea sobre eso. Dime qué hacer y la empiezo.",
        "de": "Dazu sehe ich noch keine Aufgabe. Sag mir, was ich machen soll, und ich lege los.",
        "it": "Non vedo ancora attività su questo. Dimmi cosa creare e la avvio.",
        "pt": "Ainda não vejo nenhuma tarefa sobre isso. Diga-me o que fazer e eu começo.",
    },
    "cannot": {
        "en": "I am Lomote's scripted router (offline, not a language model): I start and route work — images, "
        "posters, short videos, 3D models, documents, and series of them — change what your tasks made and "
        "report on them, but I cannot answer open questions.",
        "fr": "Je suis le routeur scripté de Lomote (hors ligne, pas un modèle de langage) : je lance et oriente "
        "le travail — images, affiches, courtes vidéos, modèles 3D, documents, et des séries de ceux-ci —, je "
        "modifie ce que vos tâches ont produit et j'en rends compte, mais je ne sais pas répondre aux questions "
        "ouvertes.",
        "es": "Soy el enrutador programado de Lomote (sin conexión, no un modelo de lenguaje): inicio y dirijo el "
        "trabajo e informo de tus tareas, pero no respondo preguntas abiertas.",
        "de": "Ich bin Lomotes geskripteter Router (offline, kein Sprachmodell): Ich starte und verteile Arbeit "
        "und berichte über deine Aufgaben, beantworte aber keine offenen Fragen.",
        "it": "Sono il router programmato di Lomote (offline, non un modello linguistico): avvio e indirizzo il "
        "lavoro e riferisco sulle tue attività, ma non rispondo a domande aperte.",
        "pt": "Sou o roteador programado do Lomote (offline, não um modelo de linguagem): inicio e encaminho o "
        "trabalho e informo sobre as suas tarefas, mas não respondo a perguntas abertas.",
    },
    "thanks": {
        "en": "You're welcome. Nothing more will run; I'm here when you need something else.",
        "fr": "Avec plaisir. Rien d'autre ne sera lancé ; je suis là quand vous aurez besoin d'autre chose.",
        "es": "De nada. No se ejecutará nada más; aquí estoy cuando necesites algo.",
        "de": "Gern geschehen. Es läuft nichts weiter; ich bin da, wenn du etwas brauchst.",
        "it": "Prego. Non verrà avviato altro; sono qui quando ti serve qualcosa.",
        "pt": "De nada. Nada mais será executado; estou aqui quando precisar de algo.",
    },
    "unclear": {
        "en": "I'm not sure what you would like me to do. Tell me what to make, or which work to change.",
        "fr": "Je ne vois pas bien ce que vous voulez que je fasse. Dites-moi quoi créer, ou quel travail modifier.",
        "es": "No sé bien qué quieres que haga. Dime qué crear o qué trabajo cambiar.",
        "de": "Ich weiß nicht genau, was ich tun soll. Sag mir, was ich machen oder welche Arbeit ich ändern soll.",
        "it": "Non ho capito cosa vuoi che faccia. Dimmi cosa creare o quale lavoro modificare.",
        "pt": "Não percebi o que quer que eu faça. Diga-me o que criar ou que trabalho alterar.",
    },
    "hello": {
        "en": "Hello! Tell me what you would like to make, or what to change in your work.",
        "fr": "Bonjour ! Dites-moi ce que vous voulez créer, ou ce qu'il faut changer dans votre travail.",
        "es": "¡Hola! Dime qué quieres crear o qué cambiar en tu trabajo.",
        "de": "Hallo! Sag mir, was du machen möchtest oder was an deiner Arbeit geändert werden soll.",
        "it": "Ciao! Dimmi cosa vuoi creare o cosa cambiare nel tuo lavoro.",
        "pt": "Olá! Diga-me o que quer criar ou o que mudar no seu trabalho.",
    },
}


# Why a message went where it went, in the person's words: what it reads as (the route_act decision), then what
# that meant among the tasks. Shown under the message in the studio (MainMessage.route_reason).
_ACTS = {
    "make_one": {
        "en": "It asks for one piece of work",
        "fr": "Le message demande une seule création",
        "de": "Die Nachricht bittet um ein einzelnes Werk",
        "es": "El mensaje pide una sola pieza",
        "pt": "A mensagem pede uma única peça",
    },
    "make_series": {
        "en": "It asks for new work in several pieces or steps",
        "fr": "Le message demande un nouveau travail en plusieurs pièces ou étapes",
        "de": "Die Nachricht bittet um neue Arbeit in mehreren Teilen oder Schritten",
        "es": "El mensaje pide un trabajo nuevo en varias piezas o pasos",
        "pt": "A mensagem pede um trabalho novo em várias peças ou etapas",
    },
    "make_from": {
        "en": "It asks for new work made from something already there",
        "fr": "Le message demande un nouveau travail à partir de quelque chose d'existant",
        "de": "Die Nachricht bittet um neue Arbeit aus etwas, das schon da ist",
        "es": "El mensaje pide un trabajo nuevo a partir de algo que ya existe",
        "pt": "A mensagem pede um trabalho novo a partir de algo que já existe",
    },
    "change": {
        "en": "It asks to change work already made",
        "fr": "Le message demande de modifier un travail déjà fait",
        "de": "Die Nachricht bittet, eine fertige Arbeit zu ändern",
        "es": "El mensaje pide cambiar un trabajo ya hecho",
        "pt": "A mensagem pede para alterar um trabalho já feito",
    },
    "ask_work": {
        "en": "It asks about work already made",
        "fr": "Le message porte sur un travail déjà fait",
        "de": "Die Nachricht fragt nach einer fertigen Arbeit",
        "es": "El mensaje pregunta por un trabajo ya hecho",
        "pt": "A mensagem pergunta por um trabalho já feito",
    },
    "status": {
        "en": "It asks how work is going",
        "fr": "Le message demande où en est le travail",
        "de": "Die Nachricht fragt, wie die Arbeit vorankommt",
        "es": "El mensaje pregunta cómo va el trabajo",
        "pt": "A mensagem pergunta como vai o trabalho",
    },
    "thanks": {
        "en": "It thanks or closes: nothing runs",
        "fr": "Le message remercie ou conclut : rien n'est lancé",
        "de": "Die Nachricht bedankt sich oder schließt ab: nichts wird gestartet",
        "es": "El mensaje agradece o cierra: no se ejecuta nada",
        "pt": "A mensagem agradece ou encerra: nada é executado",
    },
    "capability": {
        "en": "It asks something outside what I do",
        "fr": "Le message demande quelque chose que je ne fais pas",
        "de": "Die Nachricht fragt nach etwas, das ich nicht tue",
        "es": "El mensaje pide algo que no hago",
        "pt": "A mensagem pede algo que eu não faço",
    },
    "memory": {
        "en": "It states something to remember",
        "fr": "Le message énonce quelque chose à retenir",
        "de": "Die Nachricht nennt etwas, das ich mir merken soll",
        "es": "El mensaje indica algo que recordar",
        "pt": "A mensagem indica algo a lembrar",
    },
}
_OUTCOMES = {
    "sure": {
        "en": " ({p} % sure).",
        "fr": " (sûr à {p} %).",
        "de": " (zu {p} % sicher).",
        "es": " (seguro al {p} %).",
        "pt": " (certeza de {p} %).",
    },
    "follow": {
        "en": "; it is about task #{id} “{title}” ({p} % likely).",
        "fr": " ; il concerne la tâche n° {id} « {title} » (probable à {p} %).",
        "de": "; sie betrifft Aufgabe #{id} „{title}“ (zu {p} % wahrscheinlich).",
        "es": "; trata de la tarea n.º {id} «{title}» (probable al {p} %).",
        "pt": "; é sobre a tarefa n.º {id} «{title}» (provável a {p} %).",
    },
    "ask": {
        "en": "; no task is likely enough to choose alone (the likeliest, #{id} “{title}”, at {p} %), so I ask.",
        "fr": " ; aucune tâche n'est assez probable pour choisir seul (la plus probable, n° {id} « {title} », à "
        "{p} %), donc je demande.",
        "de": "; keine Aufgabe ist wahrscheinlich genug, um allein zu wählen (die wahrscheinlichste, #{id} "
        "„{title}“, zu {p} %), also frage ich.",
        "es": "; ninguna tarea es lo bastante probable para elegir solo (la más probable, n.º {id} «{title}», al "
        "{p} %), así que pregunto.",
        "pt": "; nenhuma tarefa é provável o bastante para escolher sozinho (a mais provável, n.º {id} «{title}», "
        "a {p} %), por isso pergunto.",
    },
    "new": {
        "en": ", and no task under way has the same goal.",
        "fr": ", et aucune tâche en cours n'a le même but.",
        "de": ", und keine laufende Aufgabe hat dasselbe Ziel.",
        "es": ", y ninguna tarea en curso tiene el mismo objetivo.",
        "pt": ", e nenhuma tarefa em curso tem o mesmo objetivo.",
    },
    "same_goal": {
        "en": ", and task #{id} “{title}”, under way, has the same goal ({p} % alike): it goes on there.",
        "fr": ", et la tâche n° {id} « {title} », en cours, a le même but (semblable à {p} %) : elle continue là.",
        "de": ", und die laufende Aufgabe #{id} „{title}“ hat dasselbe Ziel (zu {p} % ähnlich): sie geht dort weiter.",
        "es": ", y la tarea n.º {id} «{title}», en curso, tiene el mismo objetivo (parecida al {p} %): sigue allí.",
        "pt": ", e a tarefa n.º {id} «{title}», em curso, tem o mesmo objetivo (semelhante a {p} %): continua lá.",
    },
    "under_way": {
        "en": ", but it looks like work already under way (#{id} “{title}”, {p} % alike), so I ask.",
        "fr": ", mais il ressemble à un travail déjà en cours (n° {id} « {title} », semblable à {p} %), donc je "
        "demande.",
        "de": ", aber sie ähnelt laufender Arbeit (#{id} „{title}“, zu {p} % ähnlich), also frage ich.",
        "es": ", pero se parece a un trabajo ya en curso (n.º {id} «{title}», parecido al {p} %), así que pregunto.",
        "pt": ", mas parece trabalho já em curso (n.º {id} «{title}», semelhante a {p} %), por isso pergunto.",
    },
    "no_task": {
        "en": "; there is no task it could be about.",
        "fr": " ; aucune tâche ne peut être concernée.",
        "de": "; es gibt keine Aufgabe, die gemeint sein könnte.",
        "es": "; no hay ninguna tarea a la que pueda referirse.",
        "pt": "; não há nenhuma tarefa a que possa referir-se.",
    },
}


def _why(act: str, confidence: float, language: str, outcome: str = "sure", **values: Any) -> str:
    """Why the message went where it did, in the person's language (English when we do not speak it)."""
    said = _ACTS.get(act, _ACTS["change"])
    then = _OUTCOMES[outcome]
    p = round(100 * (values.pop("probability", confidence)))
    if "title" in values:
        values["title"] = str(values["title"])[:80]  # the reason stays one line (RouterDecision.reason ≤ 500)
    return said.get(language, said["en"]) + then.get(language, then["en"]).format(p=p, **values)


def _reply(key: str, language: str, **values: Any) -> str:
    texts = _REPLIES[key]
    return texts.get(language, texts["en"]).format(**values)


def _labels(state: dict[str, Any]) -> dict[str, int]:
    """Label → task id of every task the request shows (the model-facing names; agents/main/router.py)."""
    shown = [*state.get("index", []), *state.get("duplicates", [])]
    return {str(entry["label"]): int(entry["id"]) for entry in shown if entry.get("label")}


def _looked_up(messages: list[dict[str, Any]], by_label: dict[str, int]) -> tuple[set[int], dict[int, dict[str, Any]]]:
    """What this conversation already asked `open_task` for, and the details its answers carried, by task id."""
    asked: set[int] = set()
    opened: dict[int, dict[str, Any]] = {}
    for message in messages:
        for call in message.get("tool_calls") or []:
            function = call.get("function", {})
            if function.get("name") == LOOKUP_TOOL:
                try:
                    label = json.loads(function.get("arguments") or "{}")["task"]
                except (ValueError, TypeError, KeyError):
                    continue
                if label in by_label:
                    asked.add(by_label[label])
        if message.get("role") == "tool":
            try:
                result = json.loads(message.get("content") or "")
            except ValueError:
                continue
            details = result.get("task") if isinstance(result, dict) else None
            if isinstance(details, dict) and details.get("label") in by_label:
                opened[by_label[details["label"]]] = details
    return asked, opened


def _named(decision: dict[str, Any], by_label: dict[str, int]) -> dict[str, Any]:
    """The decision as the model-facing tool takes it: tasks by label, never by id."""
    label_of = {task_id: label for label, task_id in by_label.items()}
    named = dict(decision)
    if named.get("task") is not None:
        named["task"] = label_of[int(named["task"])]
    if named.get("candidates"):
        named["candidates"] = [label_of[int(c)] for c in named["candidates"]]
    return named


# --- the candidates -----------------------------------------------------------------------------------------


def _last_task(recent: list[dict[str, Any]]) -> int | None:
    for said in reversed(recent):
        if said.get("task"):
            return int(said["task"])
    return None


def _detail_lines(details: dict[str, Any]) -> list[str]:
    """What an opened task holds beyond the index line: checklist items, artifacts, the person's messages."""
    lines = [str(item.get("title", "")) for item in details.get("checklist", [])]
    lines += [f"{a.get('title', '')}: {a.get('description', '')}".strip(": ") for a in details.get("artifacts", [])]
    lines += [str(text) for text in details.get("recent_messages", [])]
    return [line for line in lines if line.strip()]


def candidates_from_index(
    index: list[dict[str, Any]], recent: list[dict[str, Any]], opened: dict[int, dict[str, Any]] | None = None
) -> list[Candidate]:
    """The index's entries as the layer's candidates (recency ranked by last activity, newest first)."""
    opened = opened or {}
    last = _last_task(recent)
    # "YYYY-MM-DD HH:MM" sorts as time does.
    order = sorted(index, key=lambda e: (str(e.get("last_activity", "")), int(e["id"])), reverse=True)
    rank = {int(entry["id"]): position for position, entry in enumerate(order)}
    candidates = []
    for entry in index:
        task_id = int(entry["id"])
        work = [str(title) for _, title in entry.get("artifacts", [])]
        candidates.append(
            Candidate(
                id=task_id,
                title=str(entry.get("title", "")),
                goal=str(entry.get("goal", "")),
                summary=str(entry.get("summary", "")),
                work=tuple(dict.fromkeys(work)),
                details=tuple(dict.fromkeys(_detail_lines(opened.get(task_id, {})))),
                recency=rank[task_id],
                talked=task_id == last,
                quick=entry.get("kind") == "lightweight",
                closed=entry.get("status") in CLOSED,
            )
        )
    return candidates


# --- the decision -------------------------------------------------------------------------------------------


def read_act(message: str) -> tuple[str, float]:
    """The message's act and its probability; when the layer abstains, its likeliest act all the same (the
    target's own threshold is what makes the Router ask)."""
    decision = decide("route_act", message)  # through the workspace's encoder when its profile sets one
    if decision.abstained and decision.ranking:
        return decision.ranking[0]
    return decision.label, decision.confidence


def route(
    message: str,
    index: list[dict[str, Any]],
    *,
    language: str = "en",
    recent: list[dict[str, Any]] | None = None,
    opened: dict[int, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The scripted decision for one message (the arguments of a route_message call)."""
    recent = recent or []
    act, confidence = read_act(message)
    why = _why(act, confidence, language)
    if act == "thanks":
        return {"route": "answer", "reply": _reply("thanks", language), "reason": why}
    if act == "capability":
        return {"route": "answer", "reply": _reply("cannot", language), "reason": why}
    if act == "memory":
        return {"route": "answer", "act": "memory", "reason": why}
    if act in MAKING_ACTS:
        return {
            "route": "lightweight" if act == "make_one" else "new_task",
            "title": title_from(asking_sentence(message)),
            "refers_to_existing": act == "make_from",
            "reason": why,
        }
    candidates = candidates_from_index(index, recent, opened)
    if act == "status":
        states = {int(e["id"]): str(e.get("state") or e.get("status", "")) for e in index}
        return _status(message, candidates, states, language, why)
    if not candidates:  # a change or a question with nothing to be about
        why = _why(act, confidence, language, "no_task")
        if act == "ask_work":
            return {"route": "answer", "reply": _reply("cannot", language), "reason": why}
        return {"route": "new_task", "title": title_from(message), "reason": why}
    target = target_score(message, candidates)
    return _follow_or_ask(target, act, confidence, language)


SENTENCES = re.compile(r"(?<=[.!?…])\s+|\n+")


MAKING_ACTS = ("make_one", "make_series", "make_from")


def asking_sentence(message: str) -> str:
    """The sentence of a message that asks for the work, read by meaning: the one the route_act decision reads
    likeliest as asking to make something ("Hi! I run a small pottery studio. Could you make three posts…" → the
    last one), so a task is titled by what was asked, not by the greeting or the context before it."""
    sentences = [part.strip() for part in SENTENCES.split(message) if len(part.split()) >= 3]
    if len(sentences) < 2:
        return message
    classifier = decision_get("route_act")
    asking = [i for i, label in enumerate(classifier.classes) if label in MAKING_ACTS]
    probabilities = classifier.probabilities(sentences)[:, asking].sum(axis=1)
    return sentences[int(probabilities.argmax())]


def _follow_or_ask(target: Target, act: str, confidence: float, language: str) -> dict[str, Any]:
    if target.chosen is not None:
        chosen = target.chosen
        return {
            "route": "follow_up",
            "task": chosen.candidate.id,
            "refers_to_existing": True,
            "reason": _why(
                act,
                confidence,
                language,
                "follow",
                id=chosen.candidate.id,
                title=chosen.candidate.title,
                probability=chosen.probability,
            ),
        }
    top = target.ranking[0]
    return {
        "route": "clarify",
        "candidates": target.choices(CLARIFY_MAX),
        "reason": _why(
            act,
            confidence,
            language,
            "ask",
            id=top.candidate.id,
            title=top.candidate.title,
            probability=top.probability,
        ),
    }


def _status(
    message: str, candidates: list[Candidate], states: dict[int, str], language: str, why: str
) -> dict[str, Any]:
    """How work is going, from the index: the task meant, or the likeliest few when none is sure."""
    live = [c for c in candidates if not c.closed]
    if not live:
        return {"route": "answer", "reply": _reply("status_none", language), "reason": why}
    target = target_score(message, live)
    chosen = [target.chosen] if target.chosen is not None else list(target.ranking[:CLARIFY_MAX])
    replies = [
        _reply("status", language, title=s.candidate.title, id=s.candidate.id, state=states[s.candidate.id])
        for s in chosen
    ]
    return {"route": "answer", "reply": " ".join(replies), "reason": why}


class ScriptedRouter:
    """The offline Router. Reads `request.state` and the answers of its own look-ups in `request.messages`;
    answers with `open_task` calls (once, when it would ask) or one `route_message` call."""

    kind = "scripted_router"

    def complete(self, request: ModelRequest) -> ModelResponse:
        state = request.state
        message = state.get("message", "")
        index = state.get("index", [])
        by_label = _labels(state)
        if state.get("phase") == "duplicates":
            decision = self._duplicates(message, state.get("duplicates", []), state.get("language", "en"))
        else:
            asked, opened = _looked_up(request.messages, by_label)
            kwargs = {"language": state.get("language", "en"), "recent": state.get("recent", [])}
            decision = route(message, index, opened=opened, **kwargs)
            candidates = [int(c) for c in decision.get("candidates", [])] if decision["route"] == "clarify" else []
            offered = any(tool.name == LOOKUP_TOOL for tool in request.tools)
            left = int(state.get("lookups_left", 0))
            # One round of look-ups, only when every candidate can be opened: a choice among some is no choice.
            if len(candidates) >= 2 and offered and not asked & set(candidates) and len(candidates) <= left:
                label_of = {task_id: label for label, task_id in by_label.items()}
                calls = [
                    ToolCallIntent(id=f"open-{c}", name=LOOKUP_TOOL, arguments={"task": label_of[c]})
                    for c in candidates
                ]
                return ModelResponse(text="", tool_calls=calls, usage=Usage(), model=MODEL_NAME)
        return ModelResponse(
            text="",
            tool_calls=[ToolCallIntent(id="route-1", name="route_message", arguments=_named(decision, by_label))],
            usage=Usage(),
            model=MODEL_NAME,
        )

    def _duplicates(self, message: str, duplicates: list[dict[str, Any]], language: str = "en") -> dict[str, Any]:
        if not duplicates:
            return {"route": "new_task", "reason": _why("make_series", 1.0, language, "new")}
        ranked = sorted(duplicates, key=lambda d: -float(d.get("similarity", 0.0)))
        best = ranked[0]
        close = [d for d in ranked if float(d.get("similarity", 0.0)) >= float(best["similarity"]) - CLOSE_DUPLICATES]
        similar = {"id": best["id"], "title": best.get("title", ""), "probability": float(best["similarity"])}
        if len(close) == 1 and float(best["similarity"]) >= SURE_DUPLICATE:
            reason = _why("make_series", 1.0, language, "same_goal", **similar)
            return {"route": "follow_up", "task": best["id"], "reason": reason}
        return {
            "route": "clarify",
            "candidates": [d["id"] for d in close[:CLARIFY_MAX]],
            "reason": _why("make_series", 1.0, language, "under_way", **similar),
        }
