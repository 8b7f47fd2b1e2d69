"""Lomote's scripted planner: the default offline provider. Deterministic rules, not an LLM — and it says so.

It reads `request.state` (filled by the runtime: task, checklist, new messages, results of the previous step,
step index, trigger, visible tools) and answers like a model would: text plus tool-call intents, which go
through the same validation, permission checks and log as a real model's. Same request, same response.

What it does, in order, at each step:
1. An earlier call's outcome is unknown → call `read_task_state` and nothing else (DESIGN §11).
1b. A new message changes what the task must deliver (`goal_change` says when: a replacement cue with another
   deliverable or purpose, or a restated goal) → `revise_goal` with the new brief, then re-plan: pending items
   of the old goal are skipped saying why, finished ones stay as they are, items in progress finish, and the new
   brief's items are planned after them. Added detail ("make the text bigger") is not a new goal: see 3b.
2. No checklist yet → derive items from the brief (a counted series, a numbered or bulleted list, a short
   "a, b and c" list, else one item) and call `read_task_state` + `update_checklist`.
3. Generation results from the previous step → mark items whose artifact already exists as done, otherwise
   report what was submitted or failed and stop (the runtime suspends for jobs; a failed paid action is
   never retried behind the person's back).
3b. A new message asking to change finished work ("make the posters warmer") → reopen the finished items with
   the change as their evidence; their new versions are made as the next steps.
4. Items in progress whose artifact has landed since (a job finished between turns; the checklist state may
   carry each item's `artifacts`) → mark them done.
5. Pending items whose kind (STRATEGIES below) has a visible tool → mark them in progress, then call the
   tool for each. A kind whose tool is not visible → `load_tools` for its domain once.
6. Prose (a description, an email, a slogan, a summary…) is not something rules can write. The planner says
   so at once on a card (`ask_user`): writing needs a model profile, here is how to set one, and meanwhile it
   can make a skeleton document with the brief's headings. Choosing the skeleton makes a real document (the
   item is then skipped, naming it: the text itself was not written); choosing to set a profile leaves a
   confirm card whose answer starts the next turn, on that model.
7. Otherwise answer with the plan and what could not be done and why; if the person asked a question or
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
from agents.providers.goal_change import goal_change
from agents.providers.skeleton import skeleton
from lomote.kernel.subjects import request_subject

MODEL_NAME = "lomote-scripted-planner-1"
MAX_ITEMS = 12
MAX_GENERATIONS_PER_STEP = 6
MAX_UPDATES = 50  # update_checklist takes at most this many `updates` per call
MAX_TITLE = 120
SHORT_REQUEST_WORDS = 5  # a request this short that names only a kind ("an animated logo") is its own title
MAX_PROMPT = 1000


# --- item kind → tool: extend by adding a row ------------------------------------------------------------


@dataclass(frozen=True)
class Strategy:
    kind: str
    domain: str  # the `load_tools` domain that provides `tool`
    tool: str
    keywords: frozenset[str]  # nouns naming what to make: singular, lower case, English, French, German, Spanish
    # Adjectives that make the noun they qualify this kind: an "animated logo" is a video.
    modifiers: frozenset[str] = frozenset()
    # Verbs that decide the kind when they lead the request, whatever it names: "summarise the report".
    leads: frozenset[str] = frozenset()
    # Verbs that decide the kind only when no noun does: "write something about our tea".
    verbs: frozenset[str] = frozenset()
    # Prose takes a language model: the scripted planner cannot write it and says so (see `_Planner.prose`).
    prose: bool = False

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


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# The first noun phrase naming a kind decides: "a poster with a caption" is an image, "storyboard for the video"
# a document. Within a compound the last noun is the head ("video script" is text, "slogan poster" an image)
# unless an adjective decides ("animated logo" is a video).
STRATEGIES: tuple[Strategy, ...] = (
    Strategy(
        "video",
        "video",
        "generate_video",
        _words("video vidéo clip animation animated animé animée teaser film gif reel trailer movie motion"),
        modifiers=_words("animated animé animée motion animiert animado animada"),
        leads=_words("animate anime animer animez animiere animieren anima animar"),
    ),
    Strategy("3d", "3d", "generate_3d", _words("3d mesh sculpture figurine statuette"), modifiers=_words("3d")),
    # What the offline planner can make honestly: structure (an outline, a shot list), not prose.
    Strategy("document", "documents", "write_document", _words("document doc storyboard outline template trame")),
    Strategy(
        "text",
        "documents",
        "write_document",
        _words(
            """text copywriting description article blog essay letter email mail newsletter slogan tagline headline
            caption bio biography summary translation script screenplay speech poem lyric tweet blurb
            announcement report faq manifesto paragraph introduction synopsis transcript wording
            message
            texte accroche légende biographie résumé traduction scénario discours poème communiqué annonce rapport
            paragraphe fiche essai lettre courriel paroles
            beschreibung artikel aufsatz überschrift bildunterschrift biografie zusammenfassung übersetzung skript
            drehbuch rede gedicht pressemitteilung bericht absatz einleitung produktbeschreibung werbetext
            texto descripción artículo ensayo carta correo boletín eslogan lema titular leyenda biografía resumen
            traducción guion guión discurso poema comunicado informe párrafo introducción sinopsis"""
        ),
        leads=_words(
            """summarise summarize translate proofread paraphrase reword rewrite describe
            résume résumer résumez traduis traduire traduisez décris décrire décrivez reformule reformuler réécris
            übersetze übersetzen zusammenfassen beschreibe beschreiben
            traduce traducir resumir describe describir reescribe"""
        ),
        verbs=_words(
            """write writing draft drafting compose
            écris écrire écrivez rédige rédiger rédigez
            schreib schreibe schreiben verfasse verfassen formuliere
            escribe escribir redacta redactar"""
        ),
        prose=True,
    ),
    Strategy(
        "image",
        "image",
        "generate_image",
        _words(
            "poster affiche image illustration logo photo picture banner bannière visual visuel drawing dessin "
            "icon icône flyer cover couverture artwork wallpaper sticker postcard thumbnail miniature portrait "
            "painting peinture mockup packaging label étiquette badge mascot mascotte"
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
# Prose the planner cannot write, for which the person chose a skeleton document on its card.
SKELETON_EVIDENCE = "Skeleton document requested by the person (no language model to write the text)."
# Words of a card answer choosing one of the prose card's options, in any language it offers them in.
SKELETON_WORDS = frozenset("skeleton squelette trame gerüst gliederung esqueleto".split())
PROFILE_WORDS = frozenset("profile profil perfil".split())
# A video "from a photo" starts from an image of the workspace: found with search_assets first.
PHOTO_WORDS = frozenset("photo photos picture pictures image images pic photograph selfie".split())
QUERY_SKIP = frozenset(
    """a an the my our your this that these those of from into in to turn make create yesterday yesterday's
    today today's last recent old new une un le la les de du des ma mon mes ta ton hier d'hier en
    please also could can would you animate transform convert anime animer transforme transformer peux tu
    s'il plaît stp""".split()
)
OF = frozenset("of de du des d".split())


def photo_query(text: str) -> str | None:
    """The words naming the image to start from: `Turn yesterday's cat photo into a video` → "cat photo",
    `Anime la photo de mon chien` → "photo chien"."""
    words = re.findall(r"[\w']+", text.lower().replace("’", "'"))
    for i, word in enumerate(words):
        if word in PHOTO_WORDS:
            before = [w for w in words[max(0, i - 3) : i] if w not in QUERY_SKIP and not w.isdigit()]
            after: list[str] = []
            if i + 1 < len(words) and (words[i + 1] in OF or words[i + 1].startswith("d'")):
                tail = [words[i + 1][2:]] if words[i + 1].startswith("d'") else []
                tail += words[i + 2 : i + 5]
                after = [w for w in tail if w and w not in QUERY_SKIP and not w.isdigit()][:1]
            return " ".join([*before[-2:], word, *after])
    return None


def skeleton_requested(item: dict[str, Any]) -> bool:
    return str(item.get("evidence") or "") == SKELETON_EVIDENCE


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
        "goal_changed": (
            "you changed what this task must deliver (“{text}”). The brief is now “{brief}” (goal revision "
            "{revision}); I re-plan for it, keeping what is already done:"
        ),
        "goal_dropped": "Skipped: no longer part of the goal (goal revision {revision}).",
        "searching": "I am looking for the image to start from: {query}.",
        "prose_needs_model": (
            "I cannot write {items}: I am Lomote's scripted planner, not a language model. Writing text needs a "
            "model profile (an OpenAI-compatible model: OpenAI, vLLM, Ollama, llama.cpp…), set with "
            "`manage.py model_profile … --default` (README, “Agent runtime”). Meanwhile I can create a skeleton "
            "document with the brief's headings for you to fill in."
        ),
        "still_scripted": "This turn still ran on the scripted planner: no model profile is set yet.",
        "opt_skeleton": "Create a skeleton document",
        "opt_profile": "I'll set a model profile",
        "await_profile": (
            "Set the model profile (README, “Agent runtime”: `manage.py model_profile … --default`), then confirm "
            "here: the next turn runs on that model and writes {items}."
        ),
        "skeleton_requested": "you chose a skeleton document for {items}: I am preparing it.",
        "skeleton_made": (
            "Skeleton document {artifact} created (headings only, no text written); the text itself needs a "
            "model profile."
        ),
        "no_prose": "{item}: writing text needs a language model (a model profile), and I am a scripted planner.",
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
        "goal_changed": (
            "vous changez ce que cette tâche doit livrer (« {text} »). La demande est désormais « {brief} » "
            "(révision {revision} de l’objectif) ; je refais le plan en gardant ce qui est déjà fait :"
        ),
        "goal_dropped": "Ignorée : ne fait plus partie de l’objectif (révision {revision} de l’objectif).",
        "searching": "je cherche l’image de départ : {query}.",
        "prose_needs_model": (
            "Je ne peux pas écrire {items} : je suis le planificateur scripté de Lomote, pas un modèle de langage. "
            "Écrire du texte demande un profil de modèle (un modèle compatible OpenAI : OpenAI, vLLM, Ollama, "
            "llama.cpp…), à configurer avec `manage.py model_profile … --default` (README, « Agent runtime »). En "
            "attendant, je peux créer un document squelette avec les titres de la demande, à compléter."
        ),
        "still_scripted": (
            "Ce tour a encore été fait par le planificateur scripté : aucun profil de modèle n’est configuré."
        ),
        "opt_skeleton": "Créer un document squelette",
        "opt_profile": "Je configure un profil de modèle",
        "await_profile": (
            "Configurez le profil de modèle (README, « Agent runtime » : `manage.py model_profile … --default`), "
            "puis confirmez ici : le tour suivant utilisera ce modèle pour écrire {items}."
        ),
        "skeleton_requested": "vous avez choisi un document squelette pour {items} : je le prépare.",
        "skeleton_made": (
            "Document squelette {artifact} créé (des titres seulement, aucun texte écrit) ; le texte lui-même "
            "demande un profil de modèle."
        ),
        "no_prose": "{item} : écrire du texte demande un modèle de langage (un profil de modèle) ; je suis un "
        "planificateur scripté.",
    },
}
# A kind's name for a title when no noun of the request names it ("animate the photo" is a video).
KIND_LABELS = {
    "en": {"image": "image", "video": "video", "3d": "3D model", "document": "document", "text": "text"},
    "fr": {"image": "image", "video": "vidéo", "3d": "modèle 3D", "document": "document", "text": "texte"},
}
KIND_NAMES = {
    "en": {"image": "image", "video": "video", "3d": "3D", "document": "document", "text": "text"},
    "fr": {"image": "d’image", "video": "de vidéo", "3d": "3D", "document": "de document", "text": "de texte"},
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
    """The kind of thing a request (or a checklist item's title) asks to make; None when nothing says.

    In order: a leading verb that decides by itself ("summarise the report" is text, "animate the photo" a
    video); what something is turned *into* ("turn the cat photo into a video" is a video); the first noun
    phrase naming a kind ("a poster with a caption" is an image); a verb of writing ("write something about our
    tea" is text).
    """
    found = _classify(text)
    return found[0] if found else None


def _classify(text: str) -> tuple[Strategy, str | None] | None:
    """`classify`, with the noun that named the kind in the person's words (None when a verb or an adjective
    decided)."""
    lead = _leading_word(text)
    for strategy in STRATEGIES:
        if lead in strategy.leads:
            return strategy, None
    target = re.split(r"\binto\b|\ben\s+(?=(?:une?\s+)?\w+)", text, maxsplit=1, flags=re.IGNORECASE)
    if len(target) == 2 and target[1].strip():
        found = _classify_phrase(target[1])
        if found is not None:
            return found
    found = _classify_phrase(text)
    if found is not None:
        return found
    tokens = set(_tokens(text))
    return next(((strategy, None) for strategy in STRATEGIES if tokens & strategy.verbs), None)


# Words before the verb of a request: "could you please", "peux-tu", "kannst du bitte", "por favor".
FILLER = _words(
    """please also kindly just now then and so can could would will you i i'd d like want need to me us
    s il te plaît plait stp svp merci aussi peux pourrais pouvez pourriez tu vous je veux voudrais aimerais j
    bitte auch kannst könntest du sie ich möchte por favor también puedes podrías quiero"""
)


def _leading_word(text: str) -> str:
    return next((token for token in _tokens(text) if token not in FILLER), "")


def _kind_of(token: str) -> Strategy | None:
    forms = {token, _singular(token, "en"), _singular(token, "fr")}
    return next((strategy for strategy in STRATEGIES if forms & strategy.keywords), None)


def _classify_phrase(text: str) -> tuple[Strategy, str | None] | None:
    """The kind of the first run of adjacent kind words: its deciding adjective, else its last noun (the head)."""
    run: list[tuple[str, Strategy]] = []
    for token in re.findall(r"\w+|[^\w\s]", text.lower()):
        strategy = _kind_of(token) if token[0].isalnum() or token[0] == "_" else None
        if strategy is not None:
            run.append((token, strategy))
            continue
        if run:
            break
    if not run:
        return None
    for token, _ in run:
        decided = next((s for s in STRATEGIES if token in s.modifiers), None)
        if decided is not None:
            return decided, None
    return run[-1][1], run[-1][0]


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


def _kind_label(text: str, lang: str) -> tuple[Strategy | None, str]:
    """The kind a request asks for and the noun to title it with: the person's own ("teaser", "affiche"),
    else the kind's name ("animate the photo" → "Video")."""
    found = _classify(text)
    if found is None:
        return None, ""
    strategy, head = found
    word = _singular(head, lang) if head else KIND_LABELS[lang][strategy.kind]
    return strategy, word[:1].upper() + word[1:]


def _names_a_kind(phrase: str) -> bool:
    return any(_kind_of(token) is not None for token in _tokens(phrase))


def _titles(text: str, lang: str, count: int | None = None) -> list[str]:
    """Titles from the subject of the request, never the request itself: "Also turn yesterday's cat photo into
    a video" → "Video — cat"; "3 posters for a jazz festival" → "Poster 1 of 3 — jazz festival", …

    When the subject is only the kind and its style ("retro posters"), that is the title ("Retro poster 1 of
    3"). [] when the request names no kind of work (the caller keeps its words).
    """
    strategy, label = _kind_label(text, lang)
    if strategy is None:
        return []
    subject = request_subject(text, lang)
    numbers = [f" {i} {WORDS[lang]['of']} {count}" for i in range(1, count + 1)] if count else [""]
    if subject and not _names_a_kind(subject):
        return [_title(f"{label}{number} — {subject}") for number in numbers]
    # No subject beyond the kind itself: a short request is its own name ("an animated logo", "a video
    # teaser"); otherwise the kind with its style words ("retro posters" → "Retro poster 1 of 3").
    own = _strip_article(_strip_lead_in(" ".join(text.split()), lang), lang).rstrip(" ?¿!.")
    if not count and len(own.split()) <= SHORT_REQUEST_WORDS:
        return [_title(own)]
    base = " ".join(w if _kind_of(w) is None else _singular(w, lang) for w in subject.split()) or label
    return [_title(f"{base}{number}") for number in numbers]


def items_from_brief(brief: str, lang: str) -> list[str]:
    """Checklist item titles for a brief; [] when there is nothing to plan from.

    A listed brief (one item per line) keeps the person's own item names. Otherwise each thing to make ("a
    poster, a flyer and a video", a counted series, or one piece) is titled from the request's subject.
    """
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
            titles += _titles(part, lang, counted[0] if counted else None)
        return titles[:MAX_ITEMS]
    bare = re.sub(SERIES[lang], "", _strip_article(core, lang), count=1, flags=re.IGNORECASE)
    counted = _count(bare, lang)
    return _titles(brief, lang, counted[0] if counted else None) or [_title(_strip_article(core, lang))]


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
        generated = [r for r in self.results if r.get("name") in GENERATION_TOOLS]
        goal = self.goal()
        if goal is not None:
            # Messages are read once: the new goal is acted on now, with what the last generations produced.
            landed = self.after_generation(generated) if generated else Decision([])
            return Decision([*landed.lines, *goal.lines], [*landed.calls, *goal.calls])
        if not self.checklist:
            return self.plan()
        if generated:
            return self.after_generation(generated)
        revision = self.revision()
        if revision is not None:
            return revision
        return self.progress()

    def goal(self) -> Decision | None:
        """A new message changing what the task must deliver: revise the goal and re-plan for it.

        Pending items of the old goal are skipped, saying why; done and skipped ones stay as they are; items in
        progress (a job in flight) finish. Several such messages: each reads the brief the previous one made.
        """
        if not (self.can("revise_goal") and self.can("update_checklist")):
            return None
        brief, change = self.task.get("brief") or "", None
        for message in self.messages:
            found = goal_change(message.get("text") or "", brief=brief, lang=self.task.get("language") or self.lang)
            if found is not None:
                brief, change = found.brief, found
        if change is None:
            return None
        w = self.words
        revision = int(self.task.get("goal_revision") or 1) + 1
        calls: list[tuple[str, dict[str, Any]]] = [("revise_goal", {"brief": change.brief, "reason": change.reason})]
        dropped = [i for i in self.checklist if i.get("status") == "pending"]
        evidence = w["goal_dropped"].format(revision=revision)
        for start in range(0, len(dropped), MAX_UPDATES):
            updates = [
                {"position": i["position"], "status": "skipped", "evidence": evidence}
                for i in dropped[start : start + MAX_UPDATES]
            ]
            calls.append(("update_checklist", {"updates": updates}))
        titles = items_from_brief(change.brief, self.lang)
        calls.append(("update_checklist", {"items": [{"title": t, "needs_confirmation": False} for t in titles]}))
        line = w["goal_changed"].format(text=_short(change.reason), brief=_short(change.brief, 160), revision=revision)
        return Decision([line, *(f"{n}. {t}" for n, t in enumerate(titles, 1))], calls)

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
                # A skeleton is not the text asked for: the item is skipped, saying where the skeleton is.
                {
                    "position": item["position"],
                    "status": "skipped",
                    "evidence": w["skeleton_made"].format(artifact=_short(artifact)),
                }
                if skeleton_requested(item)
                else {
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
        prose = [i for i in pending if self.needs_prose(i)]
        skeletons = self.skeletons_chosen(prose)
        if skeletons is not None:
            return skeletons
        actionable: list[tuple[dict[str, Any], Strategy]] = []
        to_load: list[str] = []
        waiting: list[dict[str, Any]] = []
        for item in pending:
            strategy = self.strategy_for(item)
            if strategy is None or item in prose:
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
                        # A revision or a skeleton keeps its request as evidence until the result lands.
                        "evidence": (revision_of(item) or skeleton_requested(item))
                        and item["evidence"]
                        or w["started_evidence"].format(tool=strategy.tool, step=self.step),
                    }
                    for item, strategy in batch
                ]
                calls.append(("update_checklist", {"updates": updates}))
            calls += [(s.tool, self.arguments(item, s)) for item, s in batch]
            return Decision([w["generating"].format(items=self.items_label([i for i, _ in batch]))], calls)
        if prose and self.can("ask_user") and not self.asked():
            return self.ask_about_prose(prose)
        question = self.question()
        if question and self.can("ask_user") and not self.asked():
            return self.ask(w["ask_question"].format(question=_short(question)), [w["opt_keep"], w["opt_new"]])
        return Decision(self.summary())

    # -- prose: the scripted planner cannot write it, and says so on a card --

    def needs_prose(self, item: dict[str, Any]) -> bool:
        """A pending item of text to write, for which no skeleton was chosen."""
        strategy = self.strategy_for(item)
        return strategy is not None and strategy.prose and not skeleton_requested(item)

    def card_answers(self) -> list[str]:
        """What the person answered on cards in the new messages ("" for a bare confirmation)."""
        answers = []
        for message in self.messages:
            text = (message.get("text") or "").strip()
            if text.startswith("[card "):
                match = CARD_ANSWER.match(text)
                answers.append(match.group("answer") if match else "")
        return answers

    def skeletons_chosen(self, prose: list[dict[str, Any]]) -> Decision | None:
        """The person chose a skeleton on the prose card: record it on the items (the choice is read once)."""
        chosen = any(SKELETON_WORDS & _singular_tokens(a) for a in self.card_answers())
        if not prose or not chosen or not self.can("update_checklist"):
            return None
        updates = [{"position": i["position"], "status": "pending", "evidence": SKELETON_EVIDENCE} for i in prose]
        calls: list[tuple[str, dict[str, Any]]] = [("update_checklist", {"updates": updates})]
        if not self.can("write_document") and self.can("load_tools"):
            calls.append(("load_tools", {"domain": "documents"}))
        return Decision([self.words["skeleton_requested"].format(items=self.items_label(prose))], calls)

    def ask_about_prose(self, prose: list[dict[str, Any]]) -> Decision:
        """Say at once what writing needs (a model profile), how to set it, and offer a skeleton meanwhile."""
        w = self.words
        items = ", ".join(f"“{_short(i.get('title'), 60)}”" for i in prose[:3]) + (" …" if len(prose) > 3 else "")
        answers = self.card_answers()
        if any(PROFILE_WORDS & _singular_tokens(a) for a in answers):
            # A confirm card: the person's confirmation starts the next turn, on the profile they set.
            question = w["await_profile"].format(items=items)
            return Decision([question], [("ask_user", {"question": question})])
        question = w["prose_needs_model"].format(items=items)
        if answers:  # answered the earlier card, yet this turn still runs on the scripted planner
            question = f"{w['still_scripted']} {question}"
        return self.ask(question, [w["opt_skeleton"], w["opt_profile"]])

    def asked(self) -> bool:
        return any(r.get("name") == "ask_user" for r in self.results)

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
            query = self.photo_query(item) if strategy.kind == "video" else None
            if query and self.found_image(query) is None and not revision_of(item):
                searches.append((item, query))
        return searches

    def arguments(self, item: dict[str, Any], strategy: "Strategy") -> dict[str, Any]:
        if strategy.prose:  # only with a skeleton chosen: headings to fill in, never pretend text
            title = item.get("title") or self.task.get("title") or "Document"
            brief = (self.task.get("brief") or "").strip() or title
            content = skeleton(title=title, brief=brief, lang=self.lang)
            return {"title": title, "content": content, "checklist_position": item["position"]}
        arguments = strategy.arguments(item=item, task=self.task)
        query = self.photo_query(item) if strategy.kind == "video" else None
        source = self.found_image(query) if query else None
        if source:
            arguments["source_artifact_id"] = source
        duration = r"(\d{1,2})[- ]?(?:s|sec|secs|second|seconds|seconde|secondes)\b"
        seconds = re.search(duration, item.get("title") or "") or re.search(duration, self.task.get("brief") or "")
        if strategy.kind == "video" and seconds and 1 <= int(seconds.group(1)) <= 60:
            arguments["seconds"] = int(seconds.group(1))
        return arguments

    def photo_query(self, item: dict[str, Any]) -> str | None:
        """A title names its subject, not always the photo it starts from: the request says that."""
        return photo_query(item.get("title") or "") or photo_query(self.task.get("brief") or "")

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
            if strategy is None or not self.can(strategy.tool) or self.needs_prose(item):
                blocked.setdefault(strategy, []).append(item)
        if blocked:
            lines.append(w["cannot"])
            for strategy, items in blocked.items():
                label = self.items_label(items)
                if strategy is None:
                    lines.append("- " + _capitalised(w["no_kind"].format(item=label)))
                elif strategy.prose:
                    lines.append("- " + _capitalised(w["no_prose"].format(item=label)))
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


def _singular_tokens(text: str) -> set[str]:
    return {form for token in _tokens(text) for form in (token, _singular(token, "en"), _singular(token, "fr"))}


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
