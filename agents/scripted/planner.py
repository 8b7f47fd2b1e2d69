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
   "a, b and c" list, else one item) and call `read_task_state` + `update_checklist`. The kind of work, its
   format, the count and the subject are read by meaning (lomote/understanding through agents/scripted/kinds.py:
   "three Instagram posts announcing our winter pottery classes" → three square social posts titled "Social post
   1 of 3 — winter pottery classes"). Work no tool makes (music, a website…) is said plainly, a recurring job is
   pointed to Flows, and a request whose kind cannot be told is asked about on a card offering its likely kinds. A
   series with no number ("a series of retro brand posters", "une série d'affiches", "some posters") is asked about
   first on a choice card (3 / 5 / another number, then typed); the answer plans that many. With nobody to ask, or
   no number in the answer, it makes 3 and says so.
3. Generation results from the previous step → mark items whose artifact already exists as done, otherwise
   report what was submitted or failed and stop (the runtime suspends for jobs; a failed paid action is
   never retried behind the person's back).
3b. New messages in a planned task, each read on its own (agents/scripted/task_requests.py):
   - new work ("Also animate the photo of my cat", "I'd like a logo too") → new items, the message kept as their
     context; "animate", "bring to life", "make it move", "clip", "vidéo", "animation" are video work, starting
     from the image the message names: an item of the task ("animate poster 2", "make it move") or a photo,
     looked up with `search_assets` (by meaning: "la photo de chat d'hier" finds "Cat photo");
   - more of the same ("Add two more posters", "ajoute deux affiches", "one more") → that many new items titled
     like the others ("Poster 4 — brand"); a plural with no number is asked about on a card;
   - a change to finished work, ordered or asked ("Make poster 2 warmer", "Could you warm up the colours on those
     posters?") → only the items it names ("poster 2", "the last one", "the first two", "all of them",
     "l'affiche 2", "la dernière", "toutes"; else every finished item of the kind it names) are reopened with the
     change as their evidence, and their new versions are made as the next steps;
   - thanks and closings ("Thanks, nothing more to do", "merci c'est parfait") → a short answer, no tool call.
4. Items in progress whose artifact has landed since (a job finished between turns; the checklist state may
   carry each item's `artifacts`) → mark them done.
5. Pending items whose kind (STRATEGIES below) has a visible tool → mark them in progress, then call the
   tool for each. A kind whose tool is not visible → `load_tools` for its domain once. Before that, what a model
   would look up: the photo a video starts from (`search_assets`; not found → the recent images, and the person
   chooses on a card), and what a video to revise was made from (`read_artifact`: its source image and length,
   kept in its new version unless the change says "longer", "shorter" or a length).
6. Prose (a description, an email, a slogan, a summary…) is not something rules can write. The planner says
   so at once on a card (`ask_user`): writing needs a model profile, here is how to set one, and meanwhile it
   can make a skeleton document with the brief's headings. Choosing the skeleton makes a real document (the
   item is then skipped, naming it: the text itself was not written); choosing to set a profile leaves a
   confirm card whose answer starts the next turn, on that model.
7. Otherwise answer with the plan and what could not be done and why; if the person asked a question or
   there is nothing to plan from, ask them with `ask_user` instead.

A lightweight task's short step (`state["mode"] == "one_result"`, decided by the runtime: agents/runtime/
shortpath.py) skips all that: one call to the tool that makes the result — from the brief; or, when the result is
made and the person asks for a change, a new version of it ("make it fluffier"), or another kind of work from it
("now animate it": a video starting from the image) — else a short answer saying why nothing was made.

Creative guides: before work starts on items of a kind a listed guide covers (agents/scripted/guide_match.py
matches the work against the guides' names and purposes), the planner reads that guide with `read_guide` — with
the plan, with `load_tools`, or as its own step just before the generation — once per turn, so what the turn makes
next has the guide among its sources. Work no guide covers reads none.

Items "in progress" are never started again by the planner: a job is in flight or an earlier outcome needs
checking, and repeating a paid action is exactly what must not happen.
"""

import json
import re
from dataclasses import dataclass, field
from typing import Any

from agents.exceptions import ModelConfigError
from agents.language import content_terms, fold, language_detect, stem
from agents.models import REVISION_PREFIX, ProviderKind
from agents.providers.base import ONE_RESULT_MODE, ModelRequest, ModelResponse, ToolCallIntent, Usage
from agents.scripted import planner_words as more_words
from agents.scripted.goal_change import goal_change
from agents.scripted.guide_match import guides_for, kinds_of
from agents.scripted.kinds import (
    FLOW,
    IMAGE_LABELS,
    MAKEABLE,
    OF_WORDS,
    PART_CONFIDENCE,
    UNSUPPORTED,
    choice,
    format_of,
    kind_read,
    label_chosen,
    label_name,
    label_of,
    likely_choices,
    titled_label,
)
from agents.scripted.skeleton import skeleton
from agents.scripted.task_requests import (
    AddRequest,
    Item,
    add_request,
    animate_phrases,
    asks_length,
    change_requested,
    edit_changes,
    first_number,
    is_acknowledgement,
    item_references,
    seconds_wanted,
)
from lomote.understanding import decide
from lomote.understanding.counts import count_of
from lomote.understanding.languages import SERIES_WORDS
from lomote.understanding.sources import Candidate, SourceReading, source_read
from lomote.understanding.subject import subject_of

MODEL_NAME = "lomote-scripted-planner-1"
MAX_ITEMS = 12
MAX_GENERATIONS_PER_STEP = 6
MAX_UPDATES = 50  # update_checklist takes at most this many `updates` per call
MAX_TITLE = 120
SHORT_REQUEST_WORDS = 5  # a request this short that names only a kind ("an animated logo") is its own title
MAX_PROMPT = 1000
DEFAULT_SERIES = 3  # a series with no number, when the person cannot be asked: said aloud
SERIES_OPTIONS = ("3", "5")
ADD_OPTIONS = ("1", "2", "3")


# --- item kind → tool: extend by adding a row ------------------------------------------------------------


@dataclass(frozen=True)
class Strategy:
    kind: str
    domain: str  # the `load_tools` domain that provides `tool`
    tool: str
    labels: frozenset[str]  # the understanding layer's kind labels this strategy makes (agents/scripted/kinds.py)
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
            # A change to something already made: a new version of the same artifact, not a copy. The changes
            # the person asked (read by meaning) are applied to the parameters its current version recorded.
            prompt = f"{prompt}. {revision}"
            arguments["artifact_id"] = artifact
            if changes := edit_changes(revision):
                arguments["changes"] = changes
        return {"prompt": prompt[:MAX_PROMPT], **arguments}


# The kind of work is read by meaning (agents/scripted/kinds.py: the understanding layer's `kind` decision);
# each strategy makes the labels it lists. A `document` is prose (a model must write it) unless it asks for a
# structure — an outline, a storyboard, a template — which the planner can lay out: those words only break that
# tie between two ways of making the same label.
STRATEGIES: tuple[Strategy, ...] = (
    Strategy("video", "video", "generate_video", frozenset({"video"})),
    Strategy("3d", "3d", "generate_3d", frozenset({"model_3d"})),
    Strategy("document", "documents", "write_document", frozenset()),
    Strategy("text", "documents", "write_document", frozenset({"document"}), prose=True),
    Strategy("image", "image", "generate_image", frozenset(IMAGE_LABELS)),
)
STRUCTURE_WORDS = frozenset(
    "outline storyboard template trame plan gliederung vorlage esquema plantilla esboco modelo checklist".split()
)
GENERATION_TOOLS = frozenset(s.tool for s in STRATEGIES)
SOURCE_KINDS = frozenset({"image", "video"})  # the kinds of work that can start from a person's image
_BY_KIND = {strategy.kind: strategy for strategy in STRATEGIES}


def strategy_of(label: str | None, text: str = "") -> "Strategy | None":
    """The strategy that makes a kind label (a structure asked as a document is laid out, not written)."""
    if label == "document" and STRUCTURE_WORDS & set(re.findall(r"\w+", fold(text))):
        return _BY_KIND["document"]
    return next((strategy for strategy in STRATEGIES if label in strategy.labels), None)


# Nouns naming the work already in a task, for references to it ("poster 2", "la vidéo", "the last banner"): they
# find items a message points at (agents/scripted/task_requests.py), they never decide what new work to make.
REFERENCE_NOUNS: dict[str, str] = {
    "video": "video vidéo clip animation teaser film gif reel trailer movie",
    "3d": "3d mesh sculpture figurine",
    "document": "document doc storyboard outline template trame",
    "text": "text texte article email letter lettre slogan description caption légende",
    "image": "poster affiche image illustration logo photo picture banner bannière visual visuel drawing dessin "
    "icon icône flyer cover couverture artwork sticker autocollant post publication story thumbnail miniature "
    "plakat bild cartel cartaz imagen imagem header",
}
FOLDED_KINDS: dict[str, str] = {fold(word): kind for kind, words in REFERENCE_NOUNS.items() for word in words.split()}

# An item added by a message inside the task ("Also animate the photo of my cat"): its request is its context,
# and the image it starts from, once known, is marked on it.
REQUEST_PREFIX = "Requested: "
SOURCE_MARK = re.compile(r"\s*\[from artifact (\d+)\]")
CHOOSE_MARK = " [source image to choose]"
NO_SOURCE_MARK = " [no source image]"
# A choice naming an artifact ("Cat photo (#12)") on the card asking which image to start from.
ARTIFACT_OPTION = re.compile(r"\(#(\d+)\)\s*$")
# Verbs that ask to make something (besides each strategy's leads and verbs): a message inside a task that
# starts with one, naming a kind of work, is new work for this task.
CREATE_VERBS = frozenset(
    """make create generate design draw render produce paint illustrate build prepare compose sketch craft turn
    transform convert animate give do write draft summarise summarize translate
    fais fait faites faire cree creer creez genere generer dessine dessiner realise realiser prepare produis
    transforme transformer convertis anime animer donne ecris ecrire redige traduis resume""".split()
)
INDEFINITE = frozenset("a an some another une un des quelques plusieurs".split())
# Pronouns for the image a video starts from when the message names none: one, or each made image.
ONE_PRONOUNS = frozenset("it this that la le l celle celui".split())
ALL_PRONOUNS = frozenset("them these those all les toutes tous".split())
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
    words = re.findall(r"[\w']+", animate_phrases(text).lower().replace("’", "'"))
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


def request_of(item: dict[str, Any]) -> str | None:
    """What a person asked for when this item was added from one of their messages (its context)."""
    evidence = str(item.get("evidence") or "")
    if not evidence.startswith(REQUEST_PREFIX):
        return None
    text = SOURCE_MARK.sub("", evidence[len(REQUEST_PREFIX) :])
    return text.replace(CHOOSE_MARK, "").replace(NO_SOURCE_MARK, "").strip() or None


def source_of(item: dict[str, Any]) -> int | None:
    """The image this item's video starts from, when it was named (an item of this task, or a chosen image)."""
    match = SOURCE_MARK.search(str(item.get("evidence") or ""))
    return int(match.group(1)) if match else None


def kind_word(token: str) -> str | None:
    """The kind of work already in a task a folded word names, in any of its forms ("affiches" → "image"), else
    None (REFERENCE_NOUNS: references to items, not the kind of new work)."""
    for form in (token, stem(token), _singular(token, "en"), _singular(token, "fr")):
        kind = FOLDED_KINDS.get(form)
        if kind is not None:
            return kind
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


# --- wording: English and French here, German, Spanish and Portuguese in planner_words.py ---------------------

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
        "ack": "you're welcome — I changed nothing.",
        "ack_open": "{done}/{total} checklist items are done; {items} still open.",
        "no_such_item": "this task has no {refs} ({listing}), so I changed nothing.",
        "not_made": "{items}: nothing is made yet, so there is nothing to change there yet.",
        "adding": "you asked for more: I am adding {n} item(s):",
        "adding_new": "you asked for new work in this task: I am adding it:",
        "capped": "I add at most {max} items at a time.",
        "ask_series": "How many {noun} should I make?",
        "ask_add": "How many more {noun} should I add?",
        "type_number": "Type the number (at most {max}).",
        "opt_other": "Other number",
        "series_default": "you did not say how many, so I am making {n} (my default for a series).",
        "series_capped": "I plan at most {max} items at once, so I am making {max}.",
        "reading_source": "before making a new version of {items}, I am reading what it was made from.",
        "no_image_found": (
            "I found no image for “{query}” in this workspace, so I cannot start {item} from it yet. Which image "
            "should I use?"
        ),
        "listing_images": "I found no image for “{query}”; I am listing the workspace's recent images to ask you.",
        "no_images": (
            "I found no image for “{query}” and this workspace holds no image to start {item} from. Add the photo "
            "to the workspace, then answer here."
        ),
        "opt_none_of_these": "None of these",
        "source_chosen": "you chose image {artifact} to start {item} from.",
        "source_declined": "No source image was chosen for this video, so it was left out.",
        "source_declined_line": "no image was chosen to start {item} from, so I am leaving it out.",
        "source_retry": "I am looking for the image to start {item} from again.",
        "no_image_prompt": "I found no image for “{query}”, so {item} starts from its prompt alone.",
        "one_result": "I am making “{title}” with {tool}.",
        "one_revision": "I am making a new version of artifact {artifact} with {tool}: {change}.",
        "from_source": "I am starting from your file “{title}” (#{artifact}).",
        "no_source_fits": "None of your files looks like the one you mean, so I am starting from your words alone.",
        "source_evidence": "To start from the person's file “{title}”.",
        "which_source": "Several of your files could be the one you mean: which should {items} start from?",
        "source_alternatives": "Other files fit as well: {others}. Name one and I will start from it instead.",
        "reading_guide": "I am reading the guide {names} before starting this work.",
        "reading_guides": "I am reading the guides {names} before starting this work.",
        "unsupported": (
            "I cannot make that: I make images (posters, logos, stickers, icons, social posts, story covers, "
            "banners), short videos and animations, 3D models and documents — not audio, music, websites or apps."
        ),
        "flow": (
            "That is recurring work, a Flow: set it up in Flows (it runs on its own each time). I can make one "
            "piece of it now if you describe it."
        ),
        "ask_kind": "What kind of work should I make for “{request}”?",
        "ask_instead": "Should I make one of these instead?",
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
        "ack": "avec plaisir — je n’ai rien changé.",
        "ack_open": "{done}/{total} étapes sont faites ; {items} restent ouvertes.",
        "no_such_item": "cette tâche n’a pas de {refs} ({listing}) : je n’ai rien changé.",
        "not_made": "{items} : rien n’est encore fait, il n’y a donc encore rien à modifier.",
        "adding": "vous en demandez davantage : j’ajoute {n} étape(s) :",
        "adding_new": "vous demandez un nouveau travail dans cette tâche : je l’ajoute :",
        "capped": "j’ajoute au plus {max} étapes à la fois.",
        "ask_series": "Combien {de_noun} dois-je faire ?",
        "ask_add": "Combien {de_noun} de plus dois-je ajouter ?",
        "type_number": "Tapez le nombre (au plus {max}).",
        "opt_other": "Autre nombre",
        "series_default": "vous n’avez pas dit combien : j’en fais {n} (mon nombre par défaut pour une série).",
        "series_capped": "je prévois au plus {max} étapes à la fois : j’en fais donc {max}.",
        "reading_source": "avant de faire une nouvelle version de {items}, je relis ce dont elle est partie.",
        "no_image_found": (
            "Je n’ai trouvé aucune image pour « {query} » dans cet espace : je ne peux pas encore partir d’elle pour "
            "{item}. Quelle image dois-je utiliser ?"
        ),
        "listing_images": (
            "je n’ai trouvé aucune image pour « {query} » ; je liste les images récentes de l’espace pour vous "
            "demander laquelle."
        ),
        "no_images": (
            "Je n’ai trouvé aucune image pour « {query} » et cet espace ne contient aucune image d’où partir pour "
            "{item}. Ajoutez la photo à l’espace, puis répondez ici."
        ),
        "opt_none_of_these": "Aucune de celles-ci",
        "source_chosen": "vous avez choisi l’image {artifact} comme point de départ de {item}.",
        "source_declined": "Aucune image de départ n’a été choisie pour cette vidéo : elle a été laissée de côté.",
        "source_declined_line": "aucune image n’a été choisie pour {item} : je la laisse de côté.",
        "source_retry": "je cherche de nouveau l’image de départ de {item}.",
        "no_image_prompt": "je n’ai trouvé aucune image pour « {query} » : {item} part de sa seule description.",
        "one_result": "je crée « {title} » avec {tool}.",
        "one_revision": "je fais une nouvelle version de l’artefact {artifact} avec {tool} : {change}.",
        "from_source": "je pars de votre fichier « {title} » (#{artifact}).",
        "no_source_fits": "Aucun de vos fichiers ne ressemble à celui dont vous parlez : je pars de vos seuls mots.",
        "source_evidence": "À faire à partir du fichier « {title} » de la personne.",
        "which_source": (
            "Plusieurs de vos fichiers pourraient être celui dont vous parlez : de quel fichier partir pour {items} ?"
        ),
        "source_alternatives": (
            "D’autres fichiers conviendraient aussi : {others}. Nommez-en un et je partirai de lui."
        ),
        "reading_guide": "je lis le guide {names} avant de commencer ce travail.",
        "reading_guides": "je lis les guides {names} avant de commencer ce travail.",
        "unsupported": (
            "je ne sais pas faire cela : je crée des images (affiches, logos, autocollants, icônes, publications, "
            "couvertures de story, bannières), de courtes vidéos et animations, des modèles 3D et des documents — "
            "pas d’audio, de musique, de sites web ni d’applications."
        ),
        "flow": (
            "c’est un travail récurrent, un Flow : configurez-le dans Flows (il tourne seul à chaque fois). Je peux "
            "en faire une pièce maintenant si vous la décrivez."
        ),
        "ask_kind": "Quel type de travail dois-je faire pour « {request} » ?",
        "ask_instead": "Dois-je plutôt faire l'une de ces choses ?",
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


# German, Spanish and Portuguese: the same words, in planner_words.py.
WORDS.update({"de": more_words.DE, "es": more_words.ES, "pt": more_words.PT})
KIND_LABELS.update(more_words.KIND_LABELS)
KIND_NAMES.update(more_words.KIND_NAMES)
DOMAIN_NAMES.update(more_words.DOMAIN_NAMES)


def _language(task: dict[str, Any]) -> str:
    """The task's language when the planner speaks it (en, fr, de, es, pt), else English."""
    language = str(task.get("language") or "").lower()[:2]
    return language if language in WORDS else "en"


# --- from a brief to checklist items ----------------------------------------------------------------------

LIST_MARKER = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)])\s+(?P<text>.+?)\s*$")
# Pieces listed in one sentence ("a poster, a flyer and a video"): each part is a piece when the kind decision
# reads it surely (kinds.PART_CONFIDENCE), so an "and" or "&" inside a subject ("Terre & Feu") cuts nothing.
LIST_SPLIT = re.compile(r"\s*(?:,|;|&|\b(?:and|et|und|y|e)\b)\s*", re.IGNORECASE)
MAX_SUBJECT = 60
# A listed item keeps the person's own words, without the article in front ("- a logo" → "Logo"): presentation
# only, nothing is decided by it.
LEADING_ARTICLE = re.compile(
    r"^(?:(?:an?|the|une?|des|les?|la|eine?n?|el|los|las|um|uma|o|os|as)\s+|l['’]\s*)(?=\w)", re.IGNORECASE
)


# Politeness before the verb of a message ("could you please", "peux-tu"): skipped to find the verb that says
# whether a message inside a task asks for new work (`_Planner.asks_to_make`), never the kind of that work.
LEAD_FILLER = frozenset(
    """please also kindly just now then and so can could would will you i i'd d like want need to me us
    s il te plaît plait stp svp merci aussi peux pourrais pouvez pourriez tu vous je veux voudrais aimerais j
    bitte auch kannst könntest du sie ich möchte por favor también puedes podrías quiero""".split()
)


def _leading_word(text: str) -> str:
    return next((token for token in _tokens(text) if token not in LEAD_FILLER), "")


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
    """The kind of thing a request (or a checklist item's title) asks to make, read by meaning; None when the
    kind decision abstains or reads something the planner does not make (unsupported work, a Flow)."""
    text = animate_phrases(text or "")
    return strategy_of(label_of(text), text)


def _title(text: str) -> str:
    text = " ".join(text.split())
    if len(text) > MAX_TITLE:
        text = text[: MAX_TITLE - 1].rsplit(" ", 1)[0] + "…"
    return text[:1].upper() + text[1:]


def _titles(text: str, lang: str, count: int | None = None, label: str | None = None) -> list[str]:
    """Titles from the kind and the subject of the request, never the request itself: "Could you make me three
    Instagram posts announcing our winter pottery classes?" → "Social post 1 of 3 — winter pottery classes", …;
    "3 retro posters" (no subject beyond the kind) → "Poster 1 of 3", …. [] when no kind the planner makes is
    read (the caller decides what to say)."""
    label = label or label_of(text)
    if label not in MAKEABLE:
        return []
    name = label_name(label, lang)
    subject = subject_of(text, MAX_SUBJECT)
    of = WORDS.get(lang, WORDS["en"])["of"]
    numbers = [f" {i} {of} {count}" for i in range(1, count + 1)] if count else [""]
    return [_title(f"{name}{number}" + (f" — {subject}" if subject else "")) for number in numbers]


def _count(text: str, lang: str) -> int | None:
    """How many pieces the text asks for, its number words read in the text's own language (the planner answers in
    English or French, but "zwei Banner" and "dos portadas" count too); the planner's language when it cannot
    tell."""
    return count_of(text, language_detect(text, default=lang))


def items_from_brief(brief: str, lang: str, *, count: int | None = None, label: str | None = None) -> list[str]:
    """Checklist item titles for a brief; [] when there is nothing to plan from (no kind the planner makes).

    A listed brief (one item per line) keeps the person's own item names. Otherwise each thing to make ("a
    poster, a flyer and a video", a counted series, or one piece) is titled from its kind and the request's
    subject. `count` is how many the person asked for apart from the brief (a series with no number, answered on
    a card); `label` the kind they chose on a card when the brief alone did not say.
    """
    brief = animate_phrases((brief or "").strip())
    if not brief:
        return []
    if count is not None and count >= 2:
        return _titles(brief, lang, count, label)
    lines = [m.group("text") for m in map(LIST_MARKER.match, brief.splitlines()) if m]
    if len(lines) >= 2:
        return [_title(LEADING_ARTICLE.sub("", line, count=1)) for line in lines[:MAX_ITEMS]]
    core = " ".join(brief.split())
    parts = [p for p in LIST_SPLIT.split(core) if p.strip()]
    if label is None and len(parts) >= 2 and all(label_of(p, confidence=PART_CONFIDENCE) in MAKEABLE for p in parts):
        titles: list[str] = []
        for part in parts:
            counted = _count(part, lang)
            for title in _titles(part, lang, counted if counted and counted >= 2 else None):
                # Two pieces of one kind ("a poster, a flyer"): the second keeps the person's own words.
                own = LEADING_ARTICLE.sub("", part.strip(" .!?"), count=1)
                titles.append(_title(own) if title in titles else title)
        return titles[:MAX_ITEMS]
    counted = _count(brief, lang)
    return _titles(brief, lang, min(counted, MAX_ITEMS) if counted and counted >= 2 else None, label)


# Kinds of work whose headline is a wordmark: without a name given, they carry none.
MARKS = ("logo", "icon", "sticker")
# One piece clearly read: route_act's make_one this far above make_series vetoes a series word (set by hand).
SERIES_TIE = 0.15


def series_noun(brief: str, lang: str, label: str | None = None) -> str | None:
    """The plural a brief asks for without saying how many — "a series of retro brand posters", "une série
    d'affiches", "some posters" → the kind's plural ("posters", "affiches") — else None.

    A series word (languages.SERIES_WORDS: "series", "set", "several", "série", "plusieurs"…) and no number.
    Counted briefs, lists, prose and changes to existing work ("retouch my photos") are not asked about.
    """
    text = animate_phrases(" ".join((brief or "").split()))
    if len([m for m in map(LIST_MARKER.match, (brief or "").splitlines()) if m]) >= 2:
        return None
    if _count(text, lang) is not None or change_requested(text, kind_word):
        return None
    label = label or label_of(text)
    if label not in MAKEABLE or label == "document" or len(items_from_brief(text, lang, label=label)) != 1:
        return None
    # A series word ("set", "colección") asks for several only when route_act does not clearly read one piece:
    # "our new mug collection" is one cover about a collection, "a set of icons" several icons.
    words = set(re.findall(r"\w+", fold(text)))
    several = bool(words & {fold(word) for words_of in SERIES_WORDS.values() for word in words_of})
    if several:
        reading = dict(decide("route_act", text).ranking)
        several = reading.get("make_one", 0.0) - reading.get("make_series", 0.0) < SERIES_TIE
    return label_name(label, lang, plural=True) if several else None


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
        lines = [_capitalised(_contracted(line) if planner.lang == "fr" else line) for line in decision.lines]
        text = "\n".join([planner.words["intro"], *lines])
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
        self.mode = state.get("mode") or ""
        self.guides: list[dict[str, Any]] = [g for g in state.get("guides") or [] if isinstance(g, dict)]
        self.guides_read = {str(g.get("name")) for g in state.get("guides_read") or [] if isinstance(g, dict)}
        self.files = [_candidate(f) for f in state.get("workspace_files") or [] if isinstance(f, dict) and f.get("id")]
        self.files_listed = isinstance(state.get("workspace_files"), list)  # an empty workspace is listed as []

    def can(self, tool: str) -> bool:
        return tool in self.visible

    # -- creative guides --

    def guides_needed(self, works: list[tuple[str, "Strategy | None"]]) -> list[str]:
        """The guides the work about to start calls for that this turn has not read yet (none when read_guide is not
        offered, or a read was just tried: a failed read is not retried in a loop)."""
        if not self.guides or not self.can("read_guide") or any(r.get("name") == "read_guide" for r in self.results):
            return []
        needed: list[str] = []
        for text, strategy in works:
            if strategy is not None and strategy.prose:
                continue  # prose is not written here (see `ask_about_prose`)
            for name in guides_for(text, self.guides, planner_kind=strategy.kind if strategy else None):
                if name not in self.guides_read and name not in needed:
                    needed.append(name)
        return needed

    def reading(self, names: list[str]) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
        line = self.words["reading_guides" if len(names) > 1 else "reading_guide"].format(names=", ".join(names))
        return line, [("read_guide", {"name": name}) for name in names]

    def item_work(self, item: dict[str, Any]) -> tuple[str, "Strategy | None"]:
        """What an item makes, in words a guide can be matched on: its title and the request that added it, and the
        brief when they name no kind of work (a listed item titled "Jazz" in a brief for posters) or the item was
        planned from the brief (its title holds the kind and subject read in it, not all its words: "a new menu")."""
        text = f"{item.get('title') or ''}. {request_of(item) or ''}"
        if not kinds_of(text) or request_of(item) is None:
            text = f"{text}. {self.task.get('brief') or ''}"
        return text, self.strategy_for(item)

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
        """The person's question, if a message asks one. A card's answer is never a question, even when the
        card's own title, quoted in it ("[card 53: Continue with: Poster 3?] The person confirmed"), ends in "?"."""
        for message in self.messages:
            text = (message.get("text") or "").strip()
            if "?" in CARD_QUOTE.sub("", text, count=1):
                return text
        return None

    def ask(self, question: str, options: list[str]) -> Decision:
        return Decision(lines=[question], calls=[("ask_user", {"question": question, "options": options})])

    # -- the rules, in order --

    def decide(self) -> Decision:
        if self.mode == ONE_RESULT_MODE:
            return self.one_result()
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
        follow_up = self.follow_up()
        if follow_up is not None:
            return follow_up
        return self.progress()

    def one_result(self) -> Decision:
        """A lightweight task's one step: the call that makes its result, or a new version of the result made.

        The brief is the task's first message; what the person said after the result was made is the change.
        """
        w = self.words
        item = dict(self.checklist[0]) if self.checklist else {"position": None, "title": self.task.get("title")}
        brief = fold(" ".join((self.task.get("brief") or "").split()))
        changes = [t for t in self.person_texts() if fold(" ".join(t.split())) != brief]
        made = _last_artifact(item)
        strategy = self.strategy_for(item)
        title = _short(item.get("title") or self.task.get("title") or "", 80)
        # The change to the result: the person's words now, or the one kept on the item when the step that read
        # them was interrupted (an approval, a killed worker's review).
        change = revision_of(item) if made is not None else None
        if made is not None and changes:
            text = _bounded(" ".join(changes))
            if all(is_acknowledgement(t) for t in changes):
                return Decision([w["ack"]])
            asked = classify(text)
            # "Make the teapot taller" is a change to the result, not new work of another kind.
            new_work = self.asks_to_make(text) and not change_requested(animate_phrases(text), kind_word)
            if asked is not None and asked != strategy and new_work:
                # Another kind of work from the result ("now animate it"): a new artifact, started from it.
                source = f" [from artifact {made}]" if asked.kind == "video" else ""
                item = {"position": item.get("position"), "title": title, "evidence": REQUEST_PREFIX + text + source}
                strategy, change = asked, None
            else:
                item["evidence"] = REVISION_PREFIX + text
                change = text
        line = (
            w["one_revision"].format(artifact=made, tool=strategy.tool if strategy else "", change=change)
            if change
            else ""
        )
        if strategy is None:
            return Decision([w["ask_brief"]])
        label = _capitalised(title or KIND_LABELS[self.lang][strategy.kind])
        if strategy.prose:
            return Decision([w["no_prose"].format(item=f"“{label}”")])
        if not self.can(strategy.tool):
            kind = KIND_NAMES[self.lang][strategy.kind]
            return Decision([w["no_tool"].format(item=f"“{label}”", kind=kind, tool=strategy.tool)])
        arguments = self.arguments(item, strategy)
        if item.get("position") is None:
            arguments.pop("checklist_position", None)
        lines = [line or w["one_result"].format(title=label, tool=strategy.tool)]
        if strategy.kind in SOURCE_KINDS and not arguments.get("source_artifact_id") and not change:
            # "Turn my sketch into a logo": the person's own file is the work's source (DESIGN §15).
            reading = self.source_reading(request_of(item) or self.task.get("brief") or "")
            if reading is not None and reading.ranked:
                top = reading.ranked[0][0]
                arguments["source_artifact_id"] = top.id
                lines.append(w["from_source"].format(title=_short(top.title, 60), artifact=top.id))
                if reading.ambiguous:
                    # A short step makes one result and cannot ask first: it says which file it took and which
                    # others fitted as well, so the person can name another in a word.
                    others = ", ".join(f"“{_short(c.title, 40)}” (#{c.id})" for c in reading.choices[1:])
                    lines.append(w["source_alternatives"].format(others=others))
            elif reading is not None and reading.reference != "none":
                # "My photo of the dog" and no such file: say so rather than quietly start from nothing.
                lines.append(w["no_source_fits"])
        return Decision(lines, [(strategy.tool, arguments)])

    def source_reading(self, text: str) -> SourceReading | None:
        """What the person's words point at among the workspace's files (None: no files listed at this step)."""
        if not self.files_listed or not text.strip():
            return None
        return source_read(text, self.files)

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

    # -- new messages in a planned task (agents/scripted/task_requests.py reads them) --

    def card_replies(self) -> list[tuple[str, str, str]]:
        """(card title, "chose" / "answered" / "asked for changes", answer) for each card answer in the new
        messages."""
        replies = []
        for message in self.messages:
            match = CARD_ANSWER.match((message.get("text") or "").strip())
            if match:
                replies.append((match.group("title"), match.group("verb"), match.group("answer").strip()))
        return replies

    def person_texts(self) -> list[str]:
        """The person's own words: free messages, and what they typed on a card. Runtime notes ("[card 4] The
        person approved…"), options chosen on cards and answers to the planner's own count questions are read by
        the rules that asked for them."""
        texts = []
        for message in self.messages:
            text = (message.get("text") or "").strip()
            if not text.startswith("[card "):
                if text:
                    texts.append(text)
                continue
            match = CARD_ANSWER.match(text)
            if match and match.group("verb") != "chose" and _add_question(match.group("title")) is None:
                texts.append(match.group("answer").strip())
        return texts

    def items(self) -> list[Item]:
        return [
            Item(i["position"], i.get("title") or "", self.kind_of_item(i), str(i.get("status") or ""))
            for i in self.checklist
        ]

    def kind_of_item(self, item: dict[str, Any]) -> str | None:
        strategy = self.strategy_for(item)
        return strategy.kind if strategy else None

    def follow_up(self) -> Decision | None:
        """What the new messages ask of the planned task, each read on its own: new work ("Also animate the photo
        of my cat"), more of the same ("Add two more posters"), a change to named items ("Make poster 2 warmer",
        asked or ordered), thanks. None when they ask none of these (the plan goes on as it was)."""
        if not self.can("update_checklist"):
            return None
        w = self.words
        effects = _Effects()
        for title, verb, answer in self.card_replies():
            self.read_card_reply(effects, title, verb, answer)
        items = self.items()
        for text in self.person_texts():
            refs = item_references(text, items, kind_word)
            if refs is not None and refs.missing and not refs.positions:
                listing = "; ".join(f"{i.position}. {_short(i.title, 40)}" for i in items[:8])
                effects.lines.append(w["no_such_item"].format(refs=", ".join(refs.missing), listing=listing))
                continue
            if self.asks_for_video(text):
                effects.add(self.video_items(text, refs), w["adding_new"], self)
                continue
            more = add_request(text, kind_word) if refs is None else None
            if more is not None and more.kind is None and change_requested(text, kind_word, adding=False):
                more = None  # "une autre version plus chaude": a change, not one more piece
            if more is not None:
                self.more_items(effects, more, text)
                continue
            if change_requested(animate_phrases(text), kind_word) or (
                refs is not None and not is_acknowledgement(text)
            ):
                if self.revise(effects, text, refs):
                    continue
            elif self.asks_to_make(text) and classify(text) is not None:
                titles = items_from_brief(text, self.lang)
                effects.add([(t, REQUEST_PREFIX + _bounded(text)) for t in titles], w["adding_new"], self)
                continue
            elif is_acknowledgement(text):
                effects.acknowledged = True
                continue
            effects.unhandled = True
        return self.apply(effects)

    def read_card_reply(self, effects: "_Effects", title: str, verb: str, answer: str) -> None:
        """Answers to the planner's own cards inside a planned task: how many more, which image to start from."""
        noun = _add_question(title)
        if noun is not None:
            count = first_number(answer)
            if count is None:
                if self.can("ask_user") and _other_chosen(answer):
                    question = f"{self.words['ask_add'].format(noun=noun, de_noun=_de(noun))} " + self.words[
                        "type_number"
                    ].format(max=MAX_ITEMS)
                    effects.ask = (question, None)
                return
            self.more_items(effects, AddRequest(count, kind_word(fold(noun).split()[-1]), noun), answer)
            return
        waiting = [i for i in self.checklist if CHOOSE_MARK in str(i.get("evidence") or "")]
        if not waiting:
            return
        chosen = ARTIFACT_OPTION.search(answer) if verb == "chose" else None
        for item in waiting:
            request = request_of(item) or ""
            if chosen:
                artifact = int(chosen.group(1))
                effects.evidence[item["position"]] = f"{REQUEST_PREFIX}{request} [from artifact {artifact}]"
                effects.lines.append(self.words["source_chosen"].format(artifact=artifact, item=self.item_label(item)))
            elif verb == "chose":  # "None of these"
                effects.skipped[item["position"]] = self.words["source_declined"]
                effects.lines.append(self.words["source_declined_line"].format(item=self.item_label(item)))
            else:  # typed an answer (the photo was added, or named): look for it again
                effects.evidence[item["position"]] = f"{REQUEST_PREFIX}{request}"
                effects.lines.append(self.words["source_retry"].format(item=self.item_label(item)))

    def asks_to_make(self, text: str) -> bool:
        """A message that asks to make something: it starts with a verb of making ("Also animate…", "Fais…"),
        or names a new piece ("I'd like a logo too", "Une vidéo du chat"), or turns something into another."""
        text = animate_phrases(text)
        lead = fold(_leading_word(text))
        if lead in CREATE_VERBS:
            return True
        return lead in INDEFINITE or lead.isdigit() or count_of(lead, self.lang) is not None

    def asks_for_video(self, text: str) -> bool:
        """New video work: "animate", "bring to life", "clip", "vidéo", "make it move"… asked for, not a change to a
        video already made ("make the cat video longer")."""
        found = classify(text)
        if found is None or found.kind != "video":
            return False
        return self.asks_to_make(text) and not change_requested(animate_phrases(text), kind_word)

    def video_items(self, text: str, refs: Any) -> list[tuple[str, str]]:
        """The videos a message asks for, each with what it starts from: the images it names ("Animate poster 2"),
        the image its pronoun stands for ("Make it move"), or the photo it describes (found by search later)."""
        request = REQUEST_PREFIX + _bounded(text)
        made_images = [i for i in self.made() if self.kind_of_item(i) == "image"]
        sources: list[dict[str, Any]] = []
        if refs is not None and refs.positions:
            sources = [i for i in made_images if i["position"] in refs.positions]
        elif photo_query(text) is None:
            words = set(re.findall(r"[a-z]+", fold(animate_phrases(text))))
            if words & ALL_PRONOUNS:
                sources = made_images
            elif words & ONE_PRONOUNS:
                sources = made_images[-1:]
        label = _capitalised(KIND_LABELS[self.lang]["video"])
        if sources:
            return [
                (f"{label} — {_short(i.get('title', '').split(' — ')[0], 60)}", f"{request} [from artifact {a}]")
                for i in sources
                if (a := _last_artifact(i)) is not None
            ]
        return [(t, request) for t in items_from_brief(text, self.lang) or [label]]

    def more_items(self, effects: "_Effects", more: AddRequest, text: str) -> None:
        """More of the same work: titled like the items already there ("Poster 4 — brand"), or for the subject the
        message names ("Poster 4 — jazz night"); a plural with no number is asked about on a card."""
        w = self.words
        live = [i for i in self.checklist if i.get("status") != "skipped"]
        kind = more.kind or next((self.kind_of_item(i) for i in reversed(live)), None)
        noun = more.noun or (KIND_LABELS[self.lang].get(kind or "", "") if kind else "")
        if more.count is None:
            if self.can("ask_user"):
                plural = noun if stem(fold(noun)) != fold(noun) else f"{noun}s"
                effects.ask = (w["ask_add"].format(noun=plural, de_noun=_de(plural)), [*ADD_OPTIONS, w["opt_other"]])
                return
            more = AddRequest(1, more.kind, more.noun)
        count = min(more.count or 1, MAX_ITEMS)
        if (more.count or 1) > MAX_ITEMS:
            effects.lines.append(w["capped"].format(max=MAX_ITEMS))
        same = [i["title"] for i in live if self.kind_of_item(i) == kind]
        same += [t for t, _ in effects.added if (found := classify(t)) is not None and found.kind == kind]
        subject = self.own_subject(text)
        template = same[-1] if same else ""
        head = _unnumbered(template).split(" — ")[0] if template else _capitalised(_singular(noun, self.lang) or "item")
        evidence = REQUEST_PREFIX + _bounded(text) if subject else ""
        titles = []
        for n in range(len(same) + 1, len(same) + count + 1):
            if subject:
                titles.append(_title(f"{head} {n} — {subject}"))
            elif template:
                titles.append(_renumbered(template, n))
            else:
                titles.append(_title(f"{head} {n}"))
        effects.add([(t, evidence) for t in titles], w["adding"].format(n=len(titles)), self)

    def own_subject(self, text: str) -> str:
        """The subject a message names for added work ("two more posters *for the jazz night*"), "" when it names
        only the kind or the count (the subject read by meaning: lomote.understanding.subject)."""
        subject = subject_of(text, MAX_SUBJECT)
        terms = [t for t in content_terms(subject) if kind_word(t) is None and first_number(t) is None]
        return subject if terms else ""

    def made(self) -> list[dict[str, Any]]:
        """Finished items with an artifact: what a change can make a new version of."""
        return [i for i in self.checklist if i.get("status") == "done" and _last_artifact(i) is not None]

    def revise(self, effects: "_Effects", text: str, refs: Any) -> bool:
        """Reopen the items a change names (all the finished ones of the kind it names when it names none), with
        the change as their evidence: their new versions are made as the next steps. False when nothing is made
        yet and the message names no item (the plan goes on as it was)."""
        made = self.made()
        if refs is not None:
            named = [i for i in self.checklist if i["position"] in refs.positions]
            targets = [i for i in named if i in made]
            not_made = [i for i in named if i not in made]
        else:
            kinds = {k for t in re.findall(r"[a-z0-9]+", fold(text)) if (k := kind_word(t)) is not None}
            if not kinds and asks_length(text):
                kinds = {"video"}  # "make it longer": only a video has a length
            targets = [i for i in made if self.kind_of_item(i) in kinds] or made
            not_made = []
        if not targets and not not_made:
            return False
        change = _bounded(text)
        for item in targets:
            effects.reopened[item["position"]] = REVISION_PREFIX + change
        if targets:
            effects.lines.append(self.words["revising"].format(text=_short(change), items=self.items_label(targets)))
        if not_made:
            effects.lines.append(self.words["not_made"].format(items=_capitalised(self.items_label(not_made))))
        return True

    def apply(self, effects: "_Effects") -> Decision | None:
        """One step for everything the messages asked: the added items (the pending ones listed again, as
        `update_checklist` replaces them), then their evidence and the reopened items, then a question."""
        w = self.words
        if not (effects.changes or effects.lines or effects.ask or effects.acknowledged):
            return None
        if not (effects.changes or effects.lines or effects.ask):  # only thanks: nothing to do
            return Decision([w["ack"], *self.status_lines()])
        calls: list[tuple[str, dict[str, Any]]] = []
        updates: dict[int, dict[str, Any]] = {}
        moved: dict[int, int] = {}
        if effects.added:
            kept = [i for i in self.checklist if i.get("status") != "pending"]
            pending = [i for i in self.checklist if i.get("status") == "pending"]
            first = max((i["position"] for i in kept), default=0) + 1
            planned = [{"title": i["title"], "needs_confirmation": bool(i.get("needs_confirmation"))} for i in pending]
            planned += [{"title": t, "needs_confirmation": False} for t, _ in effects.added]
            calls.append(("update_checklist", {"items": planned}))
            for n, item in enumerate(pending):
                moved[item["position"]] = first + n
                if item.get("evidence"):  # listed again, the item is made anew: its evidence is restored
                    updates[first + n] = {"position": first + n, "status": "pending", "evidence": item["evidence"]}
            for n, (_, evidence) in enumerate(effects.added, start=first + len(pending)):
                if evidence:
                    updates[n] = {"position": n, "status": "pending", "evidence": evidence}
        for position, evidence in effects.evidence.items():
            at = moved.get(position, position)
            updates[at] = {"position": at, "status": "pending", "evidence": evidence}
        for position, evidence in effects.skipped.items():
            at = moved.get(position, position)
            updates[at] = {"position": at, "status": "skipped", "evidence": evidence}
        for position, evidence in effects.reopened.items():
            updates[position] = {"position": position, "status": "pending", "evidence": evidence}
        ordered = [updates[p] for p in sorted(updates)]
        for start in range(0, len(ordered), MAX_UPDATES):
            calls.append(("update_checklist", {"updates": ordered[start : start + MAX_UPDATES]}))
        lines = list(effects.lines)
        if effects.ask and self.can("ask_user") and not self.asked():
            question, options = effects.ask
            lines.append(question)
            calls.append(("ask_user", {"question": question, **({"options": options} if options else {})}))
        return Decision(lines or [w["ack"]], calls)

    def status_lines(self) -> list[str]:
        total = len(self.checklist)
        done = sum(1 for i in self.checklist if i.get("status") in ("done", "skipped"))
        if done == total:
            return [self.words["all_done"].format(total=total)]
        still = [i for i in self.checklist if i.get("status") in ("pending", "in_progress")]
        return [self.words["ack_open"].format(done=done, total=total, items=self.items_label(still))]

    def plan(self) -> Decision:
        w = self.words
        source = (self.task.get("brief") or "").strip()
        if not source:
            source = "\n".join(_card_answer(m.get("text") or "") for m in self.messages).strip()
        chosen = next((k for _t, _v, a in self.card_replies() if (k := label_chosen(a, self.lang))), None)
        titles = items_from_brief(source, self.lang, label=chosen)
        if not titles:
            return self.cannot_plan(source)
        said: list[str] = []
        noun = series_noun(source, self.lang, chosen) if len(titles) == 1 else None
        if noun is not None:
            count, answer = self.series_count(source, noun)
            if isinstance(answer, Decision):
                return answer
            said = answer
            titles = items_from_brief(source, self.lang, count=count, label=chosen)
        listing = [f"{n}. {t}" for n, t in enumerate(titles, 1)]
        tried = next((r for r in self.results if r.get("name") == "update_checklist"), None)
        if tried is not None:  # planned at the previous step, yet no checklist: say so instead of looping
            return Decision([w["plan_failed"].format(error=_error_text(tried)), *listing])
        if not self.can("update_checklist"):
            return Decision([*said, w["no_planning_tool"], *listing])
        calls: list[tuple[str, dict[str, Any]]] = []
        if self.can("read_task_state"):
            calls.append(("read_task_state", {}))
        calls.append(("update_checklist", {"items": [{"title": t, "needs_confirmation": False} for t in titles]}))
        lines = [*said, w["planning"].format(n=len(titles)), *listing]
        needed = self.guides_needed([(f"{self.task.get('title') or ''}. {source}", classify(source))])
        if needed:
            line, reads = self.reading(needed)
            lines.append(line)
            calls += reads
        sourced = self.plan_sources(source, titles)
        if sourced is not None:
            lines += sourced.lines
            calls += sourced.calls
        return Decision(lines, calls)

    def plan_sources(self, brief: str, titles: list[str]) -> Decision | None:
        """The person's own file the brief starts from ("Transforme mon croquis en logo"), marked on the planned
        items that can start from an image; when several files fit as well, the person chooses on a card (the
        answer is read by `read_card_reply`, as for a video's photo)."""
        kinds = [classify(t) or classify(brief) for t in titles]
        works = [n for n, kind in enumerate(kinds, 1) if kind is not None and kind.kind in SOURCE_KINDS]
        reading = self.source_reading(brief) if works and self.can("update_checklist") else None
        if reading is None or not reading.ranked:
            return None
        w = self.words
        if reading.ambiguous and self.can("ask_user"):
            evidence = f"{REQUEST_PREFIX}{_bounded(brief)}{CHOOSE_MARK}"
            updates = [{"position": n, "status": "pending", "evidence": evidence} for n in works]
            options = [f"{_short(c.title, 60)} (#{c.id})" for c in reading.choices]
            question = w["which_source"].format(items=self.items_label([{"position": n} for n in works]))
            return Decision(
                [question],
                [
                    ("update_checklist", {"updates": updates}),
                    ("ask_user", {"question": question, "options": [*options, w["opt_none_of_these"]]}),
                ],
            )
        top = reading.ranked[0][0]
        evidence = f"{w['source_evidence'].format(title=_short(top.title, 60))} [from artifact {top.id}]"
        updates = [{"position": n, "status": "pending", "evidence": evidence} for n in works]
        line = w["from_source"].format(title=_short(top.title, 60), artifact=top.id)
        return Decision([line], [("update_checklist", {"updates": updates})])

    def cannot_plan(self, source: str) -> Decision:
        """No kind of work the planner makes was read in the brief: work it cannot make is said plainly (naming
        what it can), a Flow is pointed to the Flow editor, and otherwise the person chooses the kind on a card
        whose choices are the kinds the request most likely means (the kind decision's ranking)."""
        w = self.words
        decision = kind_read(" ".join(source.split())) if source else None
        asked = any(r.get("name") == "ask_user" for r in self.results)
        if decision is not None and not decision.abstained and decision.label == UNSUPPORTED:
            # Said plainly, and never left there: the nearest kinds it makes are offered on a card.
            if self.can("ask_user") and not asked:
                options = [choice(label, self.lang) for label in likely_choices(decision, unsupported=True)]
                return self.ask(f"{w['unsupported']} {w['ask_instead']}", options)
            return Decision([w["unsupported"]])
        if decision is not None and not decision.abstained and decision.label == FLOW:
            return Decision([w["flow"]])
        if decision is None:
            options, question = [w["opt_image"], w["opt_video"], w["opt_document"]], w["ask_brief"]
        else:
            options = [choice(label, self.lang) for label in likely_choices(decision)]
            question = w["ask_kind"].format(request=_short(source))
        if self.can("ask_user") and not asked:
            return self.ask(question, options)
        return Decision([question])

    def series_count(self, source: str, noun: str) -> tuple[int, "list[str] | Decision"]:
        """How many of a series with no number to make: the number the person gave on the card (or typed), else
        the question on a choice card (3 / 5 / another number), else — nobody to ask, or no number in the answer
        — the default, said aloud."""
        w = self.words
        brief = fold(" ".join(source.split()))
        answers = [answer for _, _, answer in self.card_replies()]
        answers += [t for t in self.person_texts() if fold(" ".join(t.split())) != brief and t not in answers]
        for answer in answers:
            count = first_number(answer)
            if count is not None and count >= 1:
                return (MAX_ITEMS, [w["series_capped"].format(max=MAX_ITEMS)]) if count > MAX_ITEMS else (count, [])
        question = w["ask_series"].format(noun=noun, de_noun=_de(noun))
        if self.can("ask_user") and not self.asked():
            if not answers:
                return DEFAULT_SERIES, self.ask(question, [*SERIES_OPTIONS, w["opt_other"]])
            if any(_other_chosen(a) for a in answers):  # "another number": asked again, to be typed
                question = f"{question} {w['type_number'].format(max=MAX_ITEMS)}"
                return DEFAULT_SERIES, Decision([question], [("ask_user", {"question": question})])
        return DEFAULT_SERIES, [w["series_default"].format(n=DEFAULT_SERIES)]

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
        starting = [i for i, _ in actionable if CHOOSE_MARK not in str(i.get("evidence") or "")]
        needed = self.guides_needed([self.item_work(i) for i in [*starting, *waiting]])
        if to_load and self.can("load_tools") and not loaded_just_now:
            domains = ", ".join(DOMAIN_NAMES[self.lang].get(d, d) for d in to_load)
            lines = [w["loading"].format(items=self.items_label(waiting), domains=domains)]
            calls = [("load_tools", {"domain": d}) for d in to_load]
            if needed:  # read with the tools: one step for both
                line, reads = self.reading(needed)
                lines.append(line)
                calls += reads
            return Decision(lines, calls)
        if needed and starting:
            # Before the first output of this turn that the guide covers: its text informs what is made next.
            line, reads = self.reading(needed)
            return Decision([line], reads)
        # A video waiting for the person to choose the image it starts from is not started meanwhile.
        choosing = [i for i, _ in actionable if CHOOSE_MARK in str(i.get("evidence") or "")]
        actionable = [(i, s) for i, s in actionable if i not in choosing]
        lookup = self.lookups(actionable, choosing)
        if lookup is not None:
            return lookup
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
                        "evidence": (revision_of(item) or skeleton_requested(item) or request_of(item))
                        and item["evidence"]
                        or w["started_evidence"].format(tool=strategy.tool, step=self.step),
                    }
                    for item, strategy in batch
                ]
                calls.append(("update_checklist", {"updates": updates}))
            calls += [(s.tool, self.arguments(item, s)) for item, s in batch]
            unfound = [
                w["no_image_prompt"].format(query=q, item=self.item_label(i))
                for i, s in batch
                if s.kind == "video" and (q := self.source_query(i)) and self.found_image(q) == 0
            ]
            return Decision([w["generating"].format(items=self.items_label([i for i, _ in batch])), *unfound], calls)
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

    def search_hits(self, query: str) -> list[dict[str, Any]] | None:
        """What a search for `query` found at the previous step (None: not searched)."""
        for result in self.results:
            content = result.get("result") if isinstance(result.get("result"), dict) else {}
            if result.get("name") == "search_assets" and content.get("query") == query:
                return [h for h in content.get("results") or [] if isinstance(h, dict)]
        return None

    def found_image(self, query: str) -> int | None:
        """The first image a search for `query` found at the previous step: its id, 0 when it found none."""
        hits = self.search_hits(query)
        if hits is None:
            return None
        return next((h.get("id") for h in hits if h.get("kind", "image") == "image"), 0)

    def read_result(self, artifact: int) -> dict[str, Any] | None:
        """What read_artifact gave at the previous step for this artifact ({} when it read, but not this one or
        not successfully); None when nothing was read."""
        reads = [r for r in self.results if r.get("name") == "read_artifact"]
        if not reads:
            return None
        for result in reads:
            content = result.get("result") if isinstance(result.get("result"), dict) else {}
            if (content.get("artifact") or {}).get("id") == artifact:
                return content
        return {}

    def source_query(self, item: dict[str, Any]) -> str | None:
        """The words to search the image a new video starts from (None when it has one, or is a revision)."""
        if source_of(item) or revision_of(item) or NO_SOURCE_MARK in str(item.get("evidence") or ""):
            return None
        return self.photo_query(item)

    def lookups(self, actionable: list[tuple[dict[str, Any], "Strategy"]], choosing: list[dict]) -> Decision | None:
        """What to look up before generating, as a model would with its tools: the photo a video starts from
        (search_assets), what a video to revise was made from (read_artifact: its source image and length), and,
        when the photo is not found, the workspace's recent images to ask the person which one (ask_user)."""
        w = self.words
        recent = self.search_hits("")
        if choosing and recent is not None and self.can("ask_user") and not self.asked():
            item = choosing[0]
            query = self.photo_query(item) or ""
            images = [h for h in recent if h.get("id") and h.get("kind", "image") == "image"][:5]
            if not images:
                question = w["no_images"].format(query=_short(query, 60), item=self.item_label(item))
                return Decision([question], [("ask_user", {"question": question})])
            options = [f"{_short(h.get('title') or '?', 60)} (#{h['id']})" for h in images]
            question = w["no_image_found"].format(query=_short(query, 60), item=self.item_label(item))
            return self.ask(question, [*options, w["opt_none_of_these"]])
        lines: list[str] = []
        calls: list[tuple[str, dict[str, Any]]] = []
        videos = [i for i, s in actionable if s.kind == "video"]
        if self.can("search_assets"):
            searches = [q for i in videos if (q := self.source_query(i)) and self.found_image(q) is None]
            if searches:
                searches = list(dict.fromkeys(searches))
                lines.append(w["searching"].format(query=", ".join(searches)))
                calls += [("search_assets", {"query": q, "kinds": ["image"]}) for q in searches]
            unfound = [i for i in videos if (q := self.source_query(i)) and self.found_image(q) == 0]
            if unfound and self.can("ask_user") and self.can("update_checklist"):
                updates = [
                    {"position": i["position"], "status": "pending", "evidence": self.choosing_evidence(i)}
                    for i in unfound
                ]
                query = ", ".join(dict.fromkeys(self.source_query(i) or "" for i in unfound))
                lines.append(w["listing_images"].format(query=_short(query, 60)))
                calls += [
                    ("update_checklist", {"updates": updates}),
                    ("search_assets", {"query": "", "kinds": ["image"], "limit": 5}),
                ]
        if self.can("read_artifact"):
            revised = [i for i in videos if revision_of(i) and _last_artifact(i) is not None]
            unread = [i for i in revised if self.read_result(_last_artifact(i)) is None]
            if unread:
                lines.append(w["reading_source"].format(items=self.items_label(unread)))
                calls += [("read_artifact", {"artifact_id": a}) for a in dict.fromkeys(map(_last_artifact, unread))]
        return Decision(lines, calls) if calls else None

    def choosing_evidence(self, item: dict[str, Any]) -> str:
        """The item's evidence while the person chooses its image: its request, kept as its context."""
        request = request_of(item) or (self.task.get("brief") or item.get("title") or "")
        return f"{REQUEST_PREFIX}{_bounded(request)}{CHOOSE_MARK}"

    def arguments(self, item: dict[str, Any], strategy: "Strategy") -> dict[str, Any]:
        if strategy.prose:  # only with a skeleton chosen: headings to fill in, never pretend text
            title = item.get("title") or self.task.get("title") or "Document"
            brief = (self.task.get("brief") or "").strip() or title
            content = skeleton(title=title, brief=brief, lang=self.lang)
            return {"title": title, "content": content, "checklist_position": item["position"]}
        arguments = strategy.arguments(item=item, task={**self.task, "brief": self.context(item, strategy)})
        if strategy.kind == "image":
            # The format the kind takes (a social post is square, a story 9:16…) and the headline its subject.
            label = self.label_for(item)
            image_format = format_of(label)
            if image_format:
                arguments["format"] = image_format
            headline = self.headline(item, label)
            if headline:
                arguments["title"] = headline
        if strategy.kind != "video":
            if strategy.kind in SOURCE_KINDS and not revision_of(item) and source_of(item):
                arguments["source_artifact_id"] = source_of(item)  # the person's file it starts from
            return arguments
        revision, artifact = revision_of(item), _last_artifact(item)
        if revision and artifact is not None:
            # A new version of a video keeps what it was made from, and its length unless the change says.
            read = self.read_result(artifact) or {}
            source = _read_source(read)
            seconds = seconds_wanted(revision, _read_seconds(read))
        else:
            query = self.source_query(item)
            source = source_of(item) or (self.found_image(query) if query else None)
            seconds = None
            for text in (item.get("title"), request_of(item), self.task.get("brief")):
                stated = re.search(DURATION, text or "")
                if stated:
                    seconds = int(stated.group(1))
                    break
        if source:
            arguments["source_artifact_id"] = source
        if seconds and 1 <= seconds <= 60:
            arguments["seconds"] = seconds
        return arguments

    def context(self, item: dict[str, Any], strategy: "Strategy") -> str:
        """What the prompt says beside the item's title: the task's brief, or the message that added the item
        (with the brief too when that is the same kind of work)."""
        brief = (self.task.get("brief") or "").strip()
        request = request_of(item)
        if not request:
            return brief
        of_brief = classify(brief)
        return f"{request}. {brief}" if of_brief is not None and of_brief.kind == strategy.kind else request

    def photo_query(self, item: dict[str, Any]) -> str | None:
        """A title names its subject, not always the photo it starts from: the request says that."""
        request = request_of(item)
        found = photo_query(item.get("title") or "") or (photo_query(request) if request else None)
        return found or (None if request else photo_query(self.task.get("brief") or ""))

    def label_for(self, item: dict[str, Any]) -> str | None:
        """The kind of work an item makes: named by the planner's own title ("Social post 2 of 3 — …"), else read
        by meaning in its title, the request that added it, then the task's brief."""
        title = item.get("title") or ""
        found = titled_label(title, self.lang)
        if found is not None:
            return found
        brief = self.task.get("brief") or ""
        texts = [title, request_of(item) or "", brief]
        if title and fold(title) in fold(brief):
            # A title cut from the person's words ("Haiku about autumn leaves" from "Write a haiku about…") lost
            # what they asked to do with it: their whole sentence is read first.
            texts = [brief, *texts[:2]]
        for text in texts:
            label = label_of(animate_phrases(text))
            if label in MAKEABLE:
                return label
        return None

    def strategy_for(self, item: dict[str, Any]) -> Strategy | None:
        label = self.label_for(item)
        return strategy_of(label, f"{item.get('title') or ''} {request_of(item) or self.task.get('brief') or ''}")

    def headline(self, item: dict[str, Any], label: str | None) -> str:
        """What an image's headline says: the subject of its item — after the dash of the planner's own title,
        else read by meaning in its title, its request or the brief — else the kind's name; never a count or the
        planner's numbering. A mark (logo, icon, sticker) with no subject has none: its wordmark would read "Logo"."""
        title = item.get("title") or ""
        if " — " in title:
            return title.split(" — ", 1)[1].strip()[:MAX_SUBJECT]
        for text in (title, request_of(item) or "", self.task.get("brief") or ""):
            subject = subject_of(text, MAX_SUBJECT) if text else ""
            if subject and not titled_label(subject, self.lang):
                return subject
        if label in MARKS:
            return ""
        return _capitalised(label_name(label or "image", self.lang))

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


# The card a runtime message answers, quoted at its start (agents/services/card_actions.py).
CARD_QUOTE = re.compile(r"^\[card \d+: [^\]]*\]")
CARD_ANSWER = re.compile(
    r"^\[card \d+: (?P<title>[^\]]*)\]\s*The person (?P<verb>chose|answered|asked for changes):\s*"
    r"(?P<answer>.+?)\.?$",
    re.S,
)
# The planner's own question asking how many more to add, as its card's title: the noun is read back from it.
ADD_QUESTIONS = (
    re.compile(r"^How many more (?P<noun>.+?) should I add\?"),
    re.compile(r"^Combien (?:de |d’|d')(?P<noun>.+?) de plus dois-je ajouter"),
)
OTHER_WORDS = frozenset("other another autre nombre".split())


@dataclass
class _Effects:
    """What the new messages of a planned task ask, gathered before one step carries it out."""

    lines: list[str] = field(default_factory=list)
    added: list[tuple[str, str]] = field(default_factory=list)  # (title, evidence) of new items
    reopened: dict[int, str] = field(default_factory=dict)  # position → revision evidence
    evidence: dict[int, str] = field(default_factory=dict)  # position → new evidence of a pending item
    skipped: dict[int, str] = field(default_factory=dict)  # position → why it is left out
    ask: tuple[str, list[str] | None] | None = None
    acknowledged: bool = False
    unhandled: bool = False

    @property
    def changes(self) -> bool:
        return bool(self.added or self.reopened or self.evidence or self.skipped)

    def add(self, pairs: list[tuple[str, str]], line: str, planner: "_Planner") -> None:
        """New items, titled apart from every item already there (the checklist never adds a title twice)."""
        taken = {str(i.get("title") or "").casefold() for i in planner.checklist}
        taken |= {t.casefold() for t, _ in self.added}
        room = MAX_ITEMS - len(self.added)
        fresh = []
        for title, evidence in pairs[: max(0, room)]:
            unique, n = title, 2
            while unique.casefold() in taken:
                unique, n = _renumbered(title, n), n + 1
            taken.add(unique.casefold())
            fresh.append((unique, evidence))
        self.added += fresh
        self.lines += [line, *(f"+ {t}" for t, _ in fresh)]


def _add_question(title: str) -> str | None:
    match = next((m for pattern in ADD_QUESTIONS if (m := pattern.match(title.strip()))), None)
    return match.group("noun") if match else None


def _other_chosen(answer: str) -> bool:
    return bool(OTHER_WORDS & set(re.findall(r"[a-z]+", fold(answer))))


def _de(noun: str) -> str:
    """French "de" before a noun, elided before a vowel or a mute h: "d’affiches", "de posters"."""
    return f"d’{noun}" if fold(noun[:1]) in set("aeiouyh") else f"de {noun}"


DURATION = r"(\d{1,2})[- ]?(?:s|sec|secs|second|seconds|seconde|secondes)\b"


def _read_source(read: dict[str, Any]) -> int | None:
    """The image a video was made from, as read_artifact tells it (its generation's parameters, or its meta)."""
    params = (read.get("generation") or {}).get("params") or {}
    source = params.get("source_artifact_id") or (read.get("meta") or {}).get("source_artifact_id")
    return source if isinstance(source, int) and source > 0 else None


def _read_seconds(read: dict[str, Any]) -> int | None:
    params = (read.get("generation") or {}).get("params") or {}
    if isinstance(params.get("seconds"), int):
        return params["seconds"]
    duration = (read.get("meta") or {}).get("duration_ms")
    return max(1, round(duration / 1000)) if isinstance(duration, int | float) and duration > 0 else None


def _bounded(text: str) -> str:
    return " ".join(text.split())[:MAX_PROMPT]


def _unnumbered(title: str) -> str:
    """A title without its place in a series: "Poster 2 of 3 — brand", "Poster 4 — brand" → "Poster — brand"."""
    title = re.sub(rf"\s+\d+\s+(?:{'|'.join(OF_WORDS)})\s+\d+", "", title)
    head, sep, rest = title.partition(" — ")
    return re.sub(r"\s+\d+$", "", head) + sep + rest


def _renumbered(title: str, n: int) -> str:
    head, sep, rest = _unnumbered(title).partition(" — ")
    return f"{head} {n}{sep}{rest}"


def _card_answer(text: str) -> str:
    """A message that can be planned from: a card answer gives its answer ("A video"), a question gives
    nothing (the planner cannot answer questions), anything else is taken as it is."""
    match = CARD_ANSWER.match(text.strip())
    if match:
        return match.group("answer").strip()
    return "" if "?" in text else text


def _singular_tokens(text: str) -> set[str]:
    return {form for token in _tokens(text) for form in (token, _singular(token, "en"), _singular(token, "fr"))}


def _candidate(file: dict[str, Any]) -> Candidate:
    """A workspace file listed in the state (agents/runtime/context.py), as the understanding layer ranks it."""
    return Candidate(
        id=int(file["id"]),
        kind=str(file.get("kind") or ""),
        title=str(file.get("title") or ""),
        filename=str(file.get("filename") or ""),
        description=str(file.get("description") or ""),
        age_seconds=float(file.get("age_seconds") or 0),
        uploaded=bool(file.get("uploaded")),
    )


def _artifact_ref(artifact: Any) -> Any:
    if isinstance(artifact, dict):
        return artifact.get("artifact_id") or artifact.get("id") or artifact.get("artifact") or artifact
    return artifact


def _contracted(line: str) -> str:
    """French contractions an item label makes after a preposition: "de les étapes" → "des étapes"."""
    for wrong, right in (("de les", "des"), ("De les", "Des"), ("à les", "aux"), ("À les", "Aux")):
        line = re.sub(rf"(?<!\w){wrong}(?!\w)", right, line)
    return line


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
