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
from typing import Any

from agents.providers.base import ModelRequest, ModelResponse, ToolCallIntent, Usage
from agents.scripted.router_title import title_from
from lomote.understanding import decide
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
    why = f"reads as {act} ({confidence:.2f})"
    if act == "thanks":
        return {"route": "answer", "reply": _reply("thanks", language), "reason": why}
    if act == "capability":
        return {"route": "answer", "reply": _reply("cannot", language), "reason": why}
    if act == "memory":
        return {"route": "answer", "act": "memory", "reason": why}
    if act in ("make_one", "make_series", "make_from"):
        return {
            "route": "lightweight" if act == "make_one" else "new_task",
            "title": title_from(message),
            "refers_to_existing": act == "make_from",
            "reason": why,
        }
    candidates = candidates_from_index(index, recent, opened)
    if act == "status":
        states = {int(e["id"]): str(e.get("state") or e.get("status", "")) for e in index}
        return _status(message, candidates, states, language, why)
    if not candidates:  # a change or a question with nothing to be about
        if act == "ask_work":
            return {"route": "answer", "reply": _reply("cannot", language), "reason": why + "; no task"}
        return {"route": "new_task", "title": title_from(message), "reason": why + "; no task to change"}
    target = target_score(message, candidates)
    return _follow_or_ask(target, why)


def _follow_or_ask(target: Target, why: str) -> dict[str, Any]:
    if target.chosen is not None:
        return {
            "route": "follow_up",
            "task": target.chosen.candidate.id,
            "refers_to_existing": True,
            "reason": f"{why}; task #{target.chosen.candidate.id} at {target.chosen.probability:.2f}",
        }
    top = target.ranking[0]
    return {
        "route": "clarify",
        "candidates": target.choices(CLARIFY_MAX),
        "reason": f"{why}; no task reaches {target.threshold:.2f} (best #{top.candidate.id} at {top.probability:.2f})",
    }


def _status(
    message: str, candidates: list[Candidate], states: dict[int, str], language: str, why: str
) -> dict[str, Any]:
    """How work is going, from the index: the task meant, or the likeliest few when none is sure."""
    live = [c for c in candidates if not c.closed]
    if not live:
        return {"route": "answer", "reply": _reply("status_none", language), "reason": why + "; no task"}
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
            decision = self._duplicates(message, state.get("duplicates", []))
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

    def _duplicates(self, message: str, duplicates: list[dict[str, Any]]) -> dict[str, Any]:
        if not duplicates:
            return {"route": "new_task", "reason": "no duplicate"}
        ranked = sorted(duplicates, key=lambda d: -float(d.get("similarity", 0.0)))
        best = ranked[0]
        close = [d for d in ranked if float(d.get("similarity", 0.0)) >= float(best["similarity"]) - CLOSE_DUPLICATES]
        if len(close) == 1 and float(best["similarity"]) >= SURE_DUPLICATE:
            return {"route": "follow_up", "task": best["id"], "reason": "same goal as an in-progress task"}
        return {
            "route": "clarify",
            "candidates": [d["id"] for d in close[:CLARIFY_MAX]],
            "reason": "looks like in-progress work",
        }
