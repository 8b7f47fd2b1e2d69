"""Lomote's scripted planner: the default offline provider. Deterministic rules, not an LLM — and it says so.

It reads `request.state` (filled by the runtime: task, checklist, new messages, results of the previous step,
step index, trigger, visible tools) and answers like a model would: text plus tool-call intents, which go
through the same validation, permission checks and log as a real model's. Same request, same response.

What it does, in order, at each step:
1. An earlier call's outcome is unknown → call `read_task_state` and nothing else (DESIGN §11).
2. No checklist yet → derive items from the brief (a counted series, a numbered or bulleted list, a short
   "a, b and c" list, else one item) and call `read_task_state` + `update_checklist`.
3. Generation results from the previous step → mark items whose artifact already exists as done, otherwise
   report what was submitted or failed and stop (the runtime suspends for jobs; a failed paid action is
   never retried behind the person's back).
4. Items in progress whose artifact has landed since (a job finished between turns; the checklist state may
   carry each item's `artifacts`) → mark them done.
5. Pending items whose kind (STRATEGIES below) has a visible tool → mark them in progress, then call the
   tool for each. A kind whose tool is not visible → `load_tools` for its domain once.
6. Otherwise answer with the plan and what could not be done and why; if the person asked a question or
   there is nothing to plan from, ask them with `ask_user` instead.

Items "in progress" are never started again by the planner: a job is in flight or an earlier outcome needs
checking, and repeating a paid action is exactly what must not happen.
"""

import json
import re
from dataclasses import dataclass, field
from typing import Any

from agents.exceptions import ModelConfigError
from agents.models import ProviderKind
from agents.providers.base import ModelRequest, ModelResponse, ToolCallIntent, Usage

MODEL_NAME = "lomote-scripted-planner-1"
MAX_ITEMS = 12
MAX_GENERATIONS_PER_STEP = 6
MAX_TITLE = 120
MAX_PROMPT = 1000


# --- item kind → tool: extend by adding a row ------------------------------------------------------------


@dataclass(frozen=True)
class Strategy:
    kind: str
    domain: str  # the `load_tools` domain that provides `tool`
    tool: str
    keywords: frozenset[str]  # singular, lower case, English and French

    def arguments(self, *, item: dict[str, Any], task: dict[str, Any]) -> dict[str, Any]:
        prompt = item.get("title", "")
        brief = (task.get("brief") or "").strip()
        if brief and brief.lower() not in prompt.lower():
            prompt = f"{prompt}. {brief}"
        arguments: dict[str, Any] = {"checklist_position": item["position"]}
        revision = revision_of(item)
        artifact = _last_artifact(item)
        if revision and artifact is not None:
            # A change to something already made: a new version of the same artifact, not a copy.
            prompt = f"{prompt}. {revision}"
            arguments["artifact_id"] = artifact
        return {"prompt": prompt[:MAX_PROMPT], **arguments}


# The first kind word in a title decides: "animated logo" is a video, "storyboard for the video" a document.
STRATEGIES: tuple[Strategy, ...] = (
    Strategy(
        "video",
        "video",
        "generate_video",
        frozenset("video vidéo clip animation animated animé animée teaser film gif reel trailer movie motion".split()),
    ),
    Strategy("3d", "3d", "generate_3d", frozenset("3d mesh sculpture figurine statuette".split())),
    Strategy(
        "document",
        "documents",
        "write_document",
        frozenset(
            "document doc article text texte script scénario storyboard slogan tagline essay letter lettre email "
            "blog report rapport outline synopsis".split()
        ),
    ),
    Strategy(
        "image",
        "image",
        "generate_image",
        frozenset(
            "poster affiche image illustration logo photo picture banner bannière visual visuel drawing dessin "
            "icon icône flyer cover couverture artwork wallpaper sticker postcard thumbnail miniature portrait "
            "painting peinture mockup packaging label étiquette badge mascot mascotte".split()
        ),
    ),
)
GENERATION_TOOLS = frozenset(s.tool for s in STRATEGIES)

# A follow-up asking to change finished work: "make the posters warmer and move the text".
CHANGE_WORDS = frozenset(
    """warmer cooler colder brighter darker lighter bigger smaller larger move moved shift change tweak adjust
    redo update more less bolder softer saturated vivid calmer chaud chaude chaudes chauds froid froide clair
    claire sombre déplace déplacer bouge bouger change changer modifie modifier refais refaire plus moins""".split()
)
REVISION_PREFIX = "Revision requested: "
# A video "from a photo" starts from an image of the workspace: found with search_assets first.
PHOTO_WORDS = frozenset("photo photos picture pictures image images pic photograph selfie".split())
QUERY_SKIP = frozenset(
    """a an the my our your this that these those of from into in to turn make create yesterday yesterday's
    today today's last recent old new une un le la les de du des ma mon mes ta ton hier d'hier en""".split()
)


def photo_query(title: str) -> str | None:
    """`Turn yesterday's cat photo into a video` → "cat photo" (the words naming the image)."""
    words = re.findall(r"[\w']+", title.lower())
    for i, word in enumerate(words):
        if word in PHOTO_WORDS:
            before = [w for w in words[max(0, i - 3) : i] if w not in QUERY_SKIP and not w.isdigit()]
            return " ".join([*before[-2:], word])
    return None


def revision_of(item: dict[str, Any]) -> str | None:
    """The change a person asked for on this finished item, recorded in its evidence by the planner."""
    evidence = str(item.get("evidence") or "")
    return evidence[len(REVISION_PREFIX) :].strip() or None if evidence.startswith(REVISION_PREFIX) else None


def _last_artifact(item: dict[str, Any]) -> Any:
    for entry in reversed(item.get("artifacts") or []):
        ref = _artifact_ref(entry) if isinstance(entry, dict) else entry
        if isinstance(ref, int):
            return ref
    return None


ARTIFACT_KEYS = ("artifact_id", "artifact", "artifact_version_id")


# --- wording: English and French --------------------------------------------------------------------------

WORDS: dict[str, dict[str, str]] = {
    "en": {
        "intro": "Lomote scripted planner (not an LLM):",
        "unknown_check": (
            "the outcome of {names} is unknown, so I am reading the task state before doing anything else."
        ),
        "unknown_blind": (
            "the outcome of {names} is unknown and I cannot read the task state, so I am not doing anything else."
        ),
        "planning": "I split the brief into {n} checklist item(s) and record them:",
        "plan_failed": "I could not record the plan ({error}). Planned items:",
        "no_planning_tool": "I cannot record a checklist here (no update_checklist tool). Planned items:",
        "ask_brief": (
            "I am Lomote's scripted planner, not an LLM. What should I make? Describe it in one sentence (for "
            "example: a series of 3 retro posters)."
        ),
        "ask_question": (
            "I am Lomote's scripted planner, not an LLM: I cannot answer free-form questions such as “{question}”. "
            "What should I do?"
        ),
        "opt_image": "An image",
        "opt_video": "A video",
        "opt_document": "A document",
        "opt_keep": "Keep the plan as it is",
        "opt_new": "I will describe it as a new task",
        "loading": "to work on {items}, I am loading the {domains} tools.",
        "generating": "I am starting {items}.",
        "started_evidence": "Requested with {tool} by the scripted planner (step {step}).",
        "done_evidence": "Artifact {artifact} produced by {tool}.",
        "attached_evidence": "Artifact {artifact} is attached to this item.",
        "recording_done": "{items}: the artifact exists, so I am marking it done.",
        "plan_header": "Plan for “{title}” ({done}/{total} done):",
        "all_done": "All {total} checklist items are done.",
        "underway": "Underway (started earlier, not repeated): {items}.",
        "cannot": "What I could not do:",
        "no_tool": "{item}: no {kind} tool ({tool}) is available to me.",
        "no_kind": "{item}: I know no tool that could make this.",
        "submitted": "{item}: {tool} accepted the request.",
        "gen_failed": "{item}: {tool} failed ({error}); I am not retrying a generation on my own.",
        "gen_unknown": "{item}: the outcome of {tool} is unknown.",
        "message_read": (
            "I read your message “{text}”; as a scripted planner I only follow the brief and the checklist."
        ),
        "item": "item {position}",
        "items": "items {positions} and {last}",
        "of": "of",
        "status_pending": "pending",
        "status_in_progress": "in progress",
        "status_done": "done",
        "status_skipped": "skipped",
        "needs_confirmation": " (needs your confirmation)",
        "revising": "you asked for a change to finished work (“{text}”): I will make new versions of {items}.",
        "searching": "I am looking for the image to start from: {query}.",
    },
    "fr": {
        "intro": "Planificateur scripté de Lomote (pas un LLM) :",
        "unknown_check": "le résultat de {names} est inconnu : je relis l’état de la tâche avant toute autre action.",
        "unknown_blind": (
            "le résultat de {names} est inconnu et je ne peux pas relire l’état de la tâche : je ne fais rien d’autre."
        ),
        "planning": "je découpe la demande en {n} étape(s) et je les enregistre :",
        "plan_failed": "je n’ai pas pu enregistrer le plan ({error}). Étapes prévues :",
        "no_planning_tool": (
            "je ne peux pas enregistrer de liste d’étapes ici (pas d’outil update_checklist). Étapes prévues :"
        ),
        "ask_brief": (
            "Je suis le planificateur scripté de Lomote, pas un LLM. Que dois-je créer ? Décrivez-le en une phrase "
            "(par exemple : une série de 3 affiches rétro)."
        ),
        "ask_question": (
            "Je suis le planificateur scripté de Lomote, pas un LLM : je ne sais pas répondre aux questions libres "
            "comme « {question} ». Que dois-je faire ?"
        ),
        "opt_image": "Une image",
        "opt_video": "Une vidéo",
        "opt_document": "Un document",
        "opt_keep": "Garder le plan tel quel",
        "opt_new": "Je le décrirai dans une nouvelle tâche",
        "loading": "pour avancer sur {items}, je charge les outils {domains}.",
        "generating": "je lance {items}.",
        "started_evidence": "Demandé avec {tool} par le planificateur scripté (étape {step}).",
        "done_evidence": "Artefact {artifact} produit par {tool}.",
        "attached_evidence": "L’artefact {artifact} est rattaché à cette étape.",
        "recording_done": "{items} : l’artefact existe, je marque comme fait.",
        "plan_header": "Plan pour « {title} » ({done}/{total} faites) :",
        "all_done": "Les {total} étapes sont faites.",
        "underway": "En cours (lancées plus tôt, non relancées) : {items}.",
        "cannot": "Ce que je n’ai pas pu faire :",
        "no_tool": "{item} : aucun outil {kind} ({tool}) n’est disponible.",
        "no_kind": "{item} : je ne connais aucun outil capable de le faire.",
        "submitted": "{item} : {tool} a accepté la demande.",
        "gen_failed": "{item} : {tool} a échoué ({error}) ; je ne relance pas une génération de moi-même.",
        "gen_unknown": "{item} : le résultat de {tool} est inconnu.",
        "message_read": (
            "J’ai lu votre message « {text} » ; en tant que planificateur scripté, je suis seulement la demande et la "
            "liste d’étapes."
        ),
        "item": "l’étape {position}",
        "items": "les étapes {positions} et {last}",
        "of": "sur",
        "status_pending": "à faire",
        "status_in_progress": "en cours",
        "status_done": "faite",
        "status_skipped": "ignorée",
        "needs_confirmation": " (à confirmer par vous)",
        "revising": "vous demandez une modification (« {text} ») : je fais de nouvelles versions de {items}.",
        "searching": "je cherche l’image de départ : {query}.",
    },
}
KIND_NAMES = {
    "en": {"image": "image", "video": "video", "3d": "3D", "document": "document"},
    "fr": {"image": "d’image", "video": "de vidéo", "3d": "3D", "document": "de document"},
}
DOMAIN_NAMES = {
    "en": {"image": "image", "video": "video", "3d": "3D", "documents": "document", "flows": "Flow", "assets": "asset"},
    "fr": {
        "image": "image",
        "video": "vidéo",
        "3d": "3D",
        "documents": "document",
        "flows": "Flow",
        "assets": "ressource",
    },
}


def _language(task: dict[str, Any]) -> str:
    return "fr" if str(task.get("language") or "").lower().startswith("fr") else "en"


# --- from a brief to checklist items ----------------------------------------------------------------------

NUMBER_WORDS = {
    "en": dict(zip("two three four five six seven eight nine ten eleven twelve".split(), range(2, 13), strict=True)),
    "fr": dict(zip("deux trois quatre cinq six sept huit neuf dix onze douze".split(), range(2, 13), strict=True)),
}
LEAD_IN = {
    "en": [
        r"^(?:please\s+)?(?:can|could|would)\s+you\s+(?:please\s+)?",
        r"^i(?:'d| would)?\s+(?:want|need|like)\s+(?:you\s+to\s+)?",
        r"^(?:please\s+)?(?:make|create|generate|design|draw|produce|render|write|build|give|prepare)(?:\s+(?:me|us))?\s+",
    ],
    "fr": [
        r"^(?:s'il te plaît|s’il te plaît|stp)[,\s]+",
        r"^(?:peux-tu|pourrais-tu|tu peux|pouvez-vous|pourriez-vous)\s+(?:me\s+|nous\s+)?",
        r"^(?:je veux|je voudrais|j'aimerais|j’aimerais|il me faut)\s+",
        r"^(?:fais|faites|fait|crée|créez|créer|génère|générer|dessine|réalise|écris|produis|prépare)"
        r"(?:[- ](?:moi|nous))?\s+",
    ],
}
ARTICLE_WORDS = {"en": {"a", "an", "the", "some"}, "fr": {"une", "un", "des", "les", "le", "la"}}
ARTICLES = {"en": r"^(?:an|a|the|some)\s+", "fr": r"^(?:(?:une|un|des|les|le|la)\s+|l['’]\s*)"}
SERIES = {
    "en": r"^(?:series|set|collection|batch|pack|couple)\s+of\s+",
    "fr": r"^(?:série|serie|ensemble|collection|lot)\s+(?:de|d'|d’)\s*",
}
PREPOSITIONS = {
    "en": set("for with about of in on to from featuring that which showing using".split()),
    "fr": set("pour avec sur de du des en à au aux qui que montrant".split()),
}
# A number followed by one of these is a size or a duration, not a count of things to make.
UNITS = set(
    "pm am px cm mm m km kg g s sec second seconds seconde secondes minute minutes min hour hours heure heures "
    "day days jour jours week weeks semaine semaines month months mois year years an ans x k percent".split()
)
LIST_MARKER = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)])\s+(?P<text>.+?)\s*$")
LIST_SPLIT = {"en": re.compile(r"\s*(?:,|;|\band\b|&)\s*"), "fr": re.compile(r"\s*(?:,|;|\bet\b|&)\s*")}


def _tokens(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def _singular(word: str, lang: str) -> str:
    lower = word.lower()
    if lang == "fr":
        if lower.endswith("aux") and len(lower) > 4:
            return word[:-3] + "al"
        if lower[-1:] in ("s", "x") and len(lower) > 3 and not lower.endswith(("ss", "us")):
            return word[:-1]
        return word
    if lower.endswith("ies") and len(lower) > 4:
        return word[:-3] + "y"
    if lower.endswith(("ches", "shes", "sses", "xes")):
        return word[:-2]
    if lower.endswith("s") and len(lower) > 3 and not lower.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def classify(text: str) -> Strategy | None:
    """The strategy of the first kind word in the text: "a poster with a text" is an image.

    What something is turned *into* wins: "turn the cat photo into a video" is a video.
    """
    target = re.split(r"\binto\b|\ben\s+(?=(?:une?\s+)?\w+)", text, maxsplit=1, flags=re.IGNORECASE)
    if len(target) == 2 and target[1].strip():
        found = _classify_tokens(target[1])
        if found is not None:
            return found
    return _classify_tokens(text)


def _classify_tokens(text: str) -> Strategy | None:
    for token in _tokens(text):
        forms = {token, _singular(token, "en"), _singular(token, "fr")}
        for strategy in STRATEGIES:
            if forms & strategy.keywords:
                return strategy
    return None


def _strip_lead_in(text: str, lang: str) -> str:
    text = text.strip().rstrip(".!")
    changed = True
    while changed:
        changed = False
        for pattern in LEAD_IN[lang]:
            stripped = re.sub(pattern, "", text, count=1, flags=re.IGNORECASE)
            if stripped != text and stripped.strip():
                text, changed = stripped.strip(), True
    return text


def _strip_article(text: str, lang: str) -> str:
    stripped = re.sub(ARTICLES[lang], "", text.strip(), count=1, flags=re.IGNORECASE)
    return stripped if stripped.strip() else text.strip()


def _title(text: str) -> str:
    text = " ".join(text.split())
    if len(text) > MAX_TITLE:
        text = text[: MAX_TITLE - 1].rsplit(" ", 1)[0] + "…"
    return text[:1].upper() + text[1:]


def _count(text: str, lang: str) -> tuple[int, str] | None:
    """`3 retro posters for X` → (3, "retro posters for X") when the number counts things to make."""
    numbers = "|".join(NUMBER_WORDS[lang])
    match = re.search(rf"(?<![\w.,-])(?P<n>\d{{1,2}}|{numbers})\s+(?P<phrase>[^\d\n.;:!?]+)", text, re.IGNORECASE)
    if not match:
        return None
    raw = match.group("n").lower()
    n = int(raw) if raw.isdigit() else NUMBER_WORDS[lang][raw]
    words = match.group("phrase").strip(" ,").split()
    # "3 posters in 4 colours" stops at the digit: drop the dangling "in".
    while words and words[-1].lower() in PREPOSITIONS[lang] | ARTICLE_WORDS[lang]:
        words.pop()
    phrase = " ".join(words)
    if not (2 <= n <= MAX_ITEMS) or not words or words[0].lower() in UNITS or not words[0][0].isalpha():
        return None
    return n, phrase


def _series(n: int, phrase: str, lang: str) -> list[str]:
    words = phrase.split()
    cut = next((i for i, w in enumerate(words) if i > 0 and w.lower() in PREPOSITIONS[lang]), len(words))
    if lang == "fr":  # the noun comes first and its adjectives agree with it
        words = [_singular(w, lang) for w in words[:cut]] + words[cut:]
        head = words[0]
    else:
        words[cut - 1] = _singular(words[cut - 1], lang)
        head = words[cut - 1]
    of = WORDS[lang]["of"]
    description = " ".join(words)
    return [_title(f"{head.capitalize()} {i} {of} {n} — {description}") for i in range(1, n + 1)]


def items_from_brief(brief: str, lang: str) -> list[str]:
    """Checklist item titles for a brief; [] when there is nothing to plan from."""
    brief = (brief or "").strip()
    if not brief:
        return []
    lines = [m.group("text") for m in map(LIST_MARKER.match, brief.splitlines()) if m]
    if len(lines) >= 2:
        return [_title(_strip_article(line, lang)) for line in lines[:MAX_ITEMS]]
    core = _strip_lead_in(" ".join(brief.split()), lang)
    parts = [p for p in LIST_SPLIT[lang].split(core) if p.strip()]
    if len(parts) >= 2 and all(classify(p) for p in parts):
        titles: list[str] = []
        for part in parts:
            counted = _count(part, lang)
            titles += _series(*counted, lang) if counted else [_title(_strip_article(part, lang))]
        return titles[:MAX_ITEMS]
    bare = re.sub(SERIES[lang], "", _strip_article(core, lang), count=1, flags=re.IGNORECASE)
    counted = _count(bare, lang)
    if counted:
        return _series(*counted, lang)
    return [_title(_strip_article(core, lang))]


# --- the planner ------------------------------------------------------------------------------------------


@dataclass
class Decision:
    lines: list[str]
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


class ScriptedPlanner:
    kind = ProviderKind.SCRIPTED.value

    def __init__(self, *, model: str = MODEL_NAME):
        if model != MODEL_NAME:
            raise ModelConfigError(
                f"The scripted provider only runs {MODEL_NAME!r}, not {model!r}.", code="model_mismatch"
            )
        self.model = model

    @classmethod
    def for_lease(cls, lease: Any) -> "ScriptedPlanner":
        return cls(model=lease.model or MODEL_NAME)

    def __repr__(self) -> str:
        return f"<ScriptedPlanner {self.model}>"

    def complete(self, request: ModelRequest) -> ModelResponse:
        if request.model and request.model != self.model:
            raise ModelConfigError(
                f"The request asks for model {request.model!r}; this planner is {self.model!r}.",
                code="model_mismatch",
            )
        state = request.state or {}
        visible = state.get("tools")
        if visible is None:
            visible = [tool.name for tool in request.tools]
        planner = _Planner(state, frozenset(visible))
        decision = planner.decide()
        text = "\n".join([planner.words["intro"], *map(_capitalised, decision.lines)])
        step = int(state.get("step_index") or 0)
        calls = [
            ToolCallIntent(id=f"scripted-{step}-{index}", name=name, arguments=arguments)
            for index, (name, arguments) in enumerate(decision.calls)
        ]
        return ModelResponse(text=text, tool_calls=calls, usage=_estimate_usage(request, text, calls), model=self.model)


def _estimate_usage(request: ModelRequest, text: str, calls: list[ToolCallIntent]) -> Usage:
    # Estimates, not measurements: there is no tokenizer here, and the planner reads `state`, not the text.
    # We count about 4 characters per token of what a real model would have been sent (rendered messages and
    # tool specs) and of what it produced, so context-size and budget figures stay comparable with a real
    # model's run. Nothing is cached, so cached_prompt_tokens is 0.
    prompt = json.dumps(request.messages, ensure_ascii=False, sort_keys=True, default=str)
    tools = json.dumps([tool.as_openai() for tool in request.tools], ensure_ascii=False, sort_keys=True, default=str)
    output = text + json.dumps([[c.name, c.arguments] for c in calls], ensure_ascii=False, sort_keys=True)
    return Usage(prompt_tokens=(len(prompt) + len(tools)) // 4, completion_tokens=len(output) // 4)


class _Planner:
    def __init__(self, state: dict[str, Any], visible: frozenset[str]):
        self.task: dict[str, Any] = state.get("task") or {}
        self.lang = _language(self.task)
        self.words = WORDS[self.lang]
        self.checklist: list[dict[str, Any]] = sorted(state.get("checklist") or [], key=lambda i: i.get("position", 0))
        self.messages: list[dict[str, Any]] = state.get("new_messages") or []
        self.results: list[dict[str, Any]] = state.get("last_results") or []
        self.step = int(state.get("step_index") or 0)
        self.visible = visible

    def can(self, tool: str) -> bool:
        return tool in self.visible

    # -- helpers --

    def item_label(self, item: dict[str, Any]) -> str:
        return self.words["item"].format(position=item.get("position"))

    def items_label(self, items: list[dict[str, Any]]) -> str:
        if len(items) == 1:
            return self.item_label(items[0])
        positions = [str(i.get("position")) for i in items]
        return self.words["items"].format(positions=", ".join(positions[:-1]), last=positions[-1])

    def item_at(self, position: Any) -> dict[str, Any] | None:
        return next((i for i in self.checklist if i.get("position") == position), None)

    def question(self) -> str | None:
        return next((m.get("text", "") for m in self.messages if "?" in (m.get("text") or "")), None)

    def ask(self, question: str, options: list[str]) -> Decision:
        return Decision(lines=[question], calls=[("ask_user", {"question": question, "options": options})])

    # -- the rules, in order --

    def decide(self) -> Decision:
        unknown = [r for r in self.results if r.get("status") == "unknown"]
        if unknown:
            names = ", ".join(sorted({str(r.get("name")) for r in unknown}))
            if self.can("read_task_state"):
                return Decision([self.words["unknown_check"].format(names=names)], [("read_task_state", {})])
            return Decision([self.words["unknown_blind"].format(names=names)])
        if not self.checklist:
            return self.plan()
        generated = [r for r in self.results if r.get("name") in GENERATION_TOOLS]
        if generated:
            return self.after_generation(generated)
        revision = self.revision()
        if revision is not None:
            return revision
        return self.progress()

    def revision(self) -> Decision | None:
        """A new message asking to change finished items: reopen them with the change as evidence."""
        change = next(
            (m.get("text", "") for m in self.messages if CHANGE_WORDS & set(_tokens(m.get("text", "")))), None
        )
        made = [i for i in self.checklist if i.get("status") == "done" and _last_artifact(i) is not None]
        if not change or not made or not self.can("update_checklist"):
            return None
        text = " ".join(change.split())[:MAX_PROMPT]
        updates = [{"position": i["position"], "status": "pending", "evidence": REVISION_PREFIX + text} for i in made]
        line = self.words["revising"].format(text=_short(text), items=self.items_label(made))
        return Decision([line], [("update_checklist", {"updates": updates})])

    def plan(self) -> Decision:
        w = self.words
        source = (self.task.get("brief") or "").strip()
        if not source:
            source = "\n".join(_card_answer(m.get("text") or "") for m in self.messages).strip()
        titles = items_from_brief(source, self.lang)
        if not titles:
            options = [w["opt_image"], w["opt_video"], w["opt_document"]]
            asked = any(r.get("name") == "ask_user" for r in self.results)
            if self.can("ask_user") and not asked:
                return self.ask(w["ask_brief"], options)
            return Decision([w["ask_brief"]])
        listing = [f"{n}. {t}" for n, t in enumerate(titles, 1)]
        tried = next((r for r in self.results if r.get("name") == "update_checklist"), None)
        if tried is not None:  # planned at the previous step, yet no checklist: say so instead of looping
            return Decision([w["plan_failed"].format(error=_error_text(tried)), *listing])
        if not self.can("update_checklist"):
            return Decision([w["no_planning_tool"], *listing])
        calls: list[tuple[str, dict[str, Any]]] = []
        if self.can("read_task_state"):
            calls.append(("read_task_state", {}))
        calls.append(("update_checklist", {"items": [{"title": t, "needs_confirmation": False} for t in titles]}))
        return Decision([w["planning"].format(n=len(titles)), *listing], calls)

    def after_generation(self, generated: list[dict[str, Any]]) -> Decision:
        w = self.words
        finished = []
        for result in generated:
            content = result.get("result") if isinstance(result.get("result"), dict) else {}
            artifact = next((content[k] for k in ARTIFACT_KEYS if content.get(k) is not None), None)
            item = self.item_at(content.get("checklist_position"))
            if result.get("status") == "done" and artifact is not None and item and item.get("status") != "done":
                finished.append((item, result.get("name"), artifact))
        if finished and self.can("update_checklist"):
            updates = [
                {
                    "position": item["position"],
                    "status": "done",
                    "evidence": w["done_evidence"].format(artifact=_short(artifact), tool=tool),
                }
                for item, tool, artifact in finished
            ]
            label = self.items_label([item for item, _, _ in finished])
            return Decision([w["recording_done"].format(items=label)], [("update_checklist", {"updates": updates})])
        lines = []
        for result in generated:
            content = result.get("result") if isinstance(result.get("result"), dict) else {}
            item = self.item_at(content.get("checklist_position"))
            label = self.item_label(item) if item else str(result.get("call_id") or "")
            key = {"done": "submitted", "failed": "gen_failed"}.get(str(result.get("status")), "gen_unknown")
            lines.append(w[key].format(item=label, tool=result.get("name"), error=_error_text(result)))
        return Decision([*lines, *self.summary()])

    def progress(self) -> Decision:
        w = self.words
        # An item started earlier whose artifact has landed since (a job completed between turns) is done.
        landed = [
            i
            for i in self.checklist
            if i.get("status") == "in_progress" and i.get("artifacts") and not revision_of(i)  # a revision is in flight
        ]
        if landed and self.can("update_checklist"):
            updates = [
                {
                    "position": item["position"],
                    "status": "done",
                    "evidence": w["attached_evidence"].format(artifact=_short(_artifact_ref(item["artifacts"][-1]))),
                }
                for item in landed
            ]
            return Decision(
                [w["recording_done"].format(items=self.items_label(landed))],
                [("update_checklist", {"updates": updates})],
            )
        pending = [i for i in self.checklist if i.get("status") == "pending"]
        actionable: list[tuple[dict[str, Any], Strategy]] = []
        to_load: list[str] = []
        waiting: list[dict[str, Any]] = []
        for item in pending:
            strategy = self.strategy_for(item)
            if strategy is None:
                continue
            if self.can(strategy.tool):
                actionable.append((item, strategy))
            else:
                waiting.append(item)
                if strategy.domain not in to_load:
                    to_load.append(strategy.domain)
        loaded_just_now = any(r.get("name") == "load_tools" for r in self.results)
        if to_load and self.can("load_tools") and not loaded_just_now:
            domains = ", ".join(DOMAIN_NAMES[self.lang].get(d, d) for d in to_load)
            return Decision(
                [w["loading"].format(items=self.items_label(waiting), domains=domains)],
                [("load_tools", {"domain": d}) for d in to_load],
            )
        searches = self.photo_searches(actionable)
        if searches:
            return Decision(
                [self.words["searching"].format(query=", ".join(q for _, q in searches))],
                [("search_assets", {"query": q, "kinds": ["image"]}) for _, q in searches],
            )
        if actionable:
            batch = actionable[:MAX_GENERATIONS_PER_STEP]
            calls: list[tuple[str, dict[str, Any]]] = []
            if self.can("update_checklist"):
                # Marked first: if the generation's outcome is ever unknown, the item is not started twice.
                updates = [
                    {
                        "position": item["position"],
                        "status": "in_progress",
                        # A revision keeps its request as evidence until the new version lands.
                        "evidence": revision_of(item)
                        and item["evidence"]
                        or w["started_evidence"].format(tool=strategy.tool, step=self.step),
                    }
                    for item, strategy in batch
                ]
                calls.append(("update_checklist", {"updates": updates}))
            calls += [(s.tool, self.arguments(item, s)) for item, s in batch]
            return Decision([w["generating"].format(items=self.items_label([i for i, _ in batch]))], calls)
        question = self.question()
        if question and self.can("ask_user") and not any(r.get("name") == "ask_user" for r in self.results):
            return self.ask(w["ask_question"].format(question=_short(question)), [w["opt_keep"], w["opt_new"]])
        return Decision(self.summary())

    def found_image(self, query: str) -> int | None:
        """The first image a search for `query` found at the previous step."""
        for result in self.results:
            content = result.get("result") if isinstance(result.get("result"), dict) else {}
            if result.get("name") == "search_assets" and content.get("query") == query:
                hits = content.get("results") or []
                return hits[0].get("id") if hits else 0
        return None

    def photo_searches(self, actionable: list[tuple[dict[str, Any], "Strategy"]]) -> list[tuple[dict, str]]:
        """Video items made from a photo whose image was not looked up yet."""
        if not self.can("search_assets"):
            return []
        searches = []
        for item, strategy in actionable:
            query = photo_query(item.get("title") or "") if strategy.kind == "video" else None
            if query and self.found_image(query) is None and not revision_of(item):
                searches.append((item, query))
        return searches

    def arguments(self, item: dict[str, Any], strategy: "Strategy") -> dict[str, Any]:
        arguments = strategy.arguments(item=item, task=self.task)
        query = photo_query(item.get("title") or "") if strategy.kind == "video" else None
        source = self.found_image(query) if query else None
        if source:
            arguments["source_artifact_id"] = source
        seconds = re.search(r"(\d{1,2})[- ]?(?:s|sec|secs|second|seconds|seconde|secondes)\b", item.get("title") or "")
        if strategy.kind == "video" and seconds and 1 <= int(seconds.group(1)) <= 60:
            arguments["seconds"] = int(seconds.group(1))
        return arguments

    def strategy_for(self, item: dict[str, Any]) -> Strategy | None:
        return classify(item.get("title") or "") or classify(self.task.get("brief") or "")

    def summary(self) -> list[str]:
        w = self.words
        total = len(self.checklist)
        done = sum(1 for i in self.checklist if i.get("status") in ("done", "skipped"))
        title = self.task.get("title") or self.task.get("brief") or ""
        lines = [w["plan_header"].format(title=_short(title), done=done, total=total)]
        for item in self.checklist:
            status = w.get(f"status_{item.get('status')}", str(item.get("status")))
            flag = w["needs_confirmation"] if item.get("needs_confirmation") and item.get("status") == "pending" else ""
            lines.append(f"{item.get('position')}. {item.get('title')} — {status}{flag}")
        if done == total:
            lines.append(w["all_done"].format(total=total))
        underway = [i for i in self.checklist if i.get("status") == "in_progress"]
        if underway:
            lines.append(w["underway"].format(items=self.items_label(underway)))
        # Pending items grouped by why nothing could progress them, in checklist order.
        blocked: dict[Strategy | None, list[dict[str, Any]]] = {}
        for item in (i for i in self.checklist if i.get("status") == "pending"):
            strategy = self.strategy_for(item)
            if strategy is None or not self.can(strategy.tool):
                blocked.setdefault(strategy, []).append(item)
        if blocked:
            lines.append(w["cannot"])
            for strategy, items in blocked.items():
                label = self.items_label(items)
                if strategy is None:
                    lines.append("- " + _capitalised(w["no_kind"].format(item=label)))
                else:
                    kind = KIND_NAMES[self.lang][strategy.kind]
                    lines.append("- " + _capitalised(w["no_tool"].format(item=label, kind=kind, tool=strategy.tool)))
        lines += [w["message_read"].format(text=_short(m.get("text", ""))) for m in self.messages if m.get("text")]
        return lines


CARD_ANSWER = re.compile(
    r"^\[card \d+: [^\]]*\]\s*The person (?:chose|answered|asked for changes):\s*(?P<answer>.+?)\.?$", re.S
)


def _card_answer(text: str) -> str:
    """A message that can be planned from: a card answer gives its answer ("A video"), a question gives
    nothing (the planner cannot answer questions), anything else is taken as it is."""
    match = CARD_ANSWER.match(text.strip())
    if match:
        return match.group("answer").strip()
    return "" if "?" in text else text


def _artifact_ref(artifact: Any) -> Any:
    if isinstance(artifact, dict):
        return artifact.get("artifact_id") or artifact.get("id") or artifact.get("artifact") or artifact
    return artifact


def _capitalised(line: str) -> str:
    return line[:1].upper() + line[1:]


def _short(value: Any, limit: int = 80) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _error_text(result: dict[str, Any]) -> str:
    error = result.get("error")
    if isinstance(error, dict):
        error = error.get("message") or error.get("code")
    return _short(error or result.get("status") or "?")
