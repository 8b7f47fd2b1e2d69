"""Main: the single entry point of the person's messages (DESIGN §2, seed §3, figure 4).

`main_message_post` routes one message, in this order:
1. an explicit target goes straight to its task with no model call — a task id (a reply in a task panel),
   an artifact (the task that made it), a card (its task, or the choice a clarification card offers);
2. otherwise the Router model decides over the bounded task index (agents/main/router.py): answer,
   lightweight, follow_up, new_task or clarify — after opening, read-only, the details of a few close candidates
   if it needs to (agents/main/lookups.py; capped per message, recorded in `router_lookups`);
3. before a persistent task is created, the 50 most recent in-progress tasks are compared with the request;
   near-duplicates go back to the Router with the closest few, which continues one, asks, or confirms;
4. the target is validated under its lock before anything runs: it exists in this workspace and accepts
   the message (an archived or cancelled task, a deleted artifact or a closed card → the person is told in
   `reply`, `refusal` says why, and nothing is delivered). A routed message about existing work (a
   follow-up, or a new work made from an existing one) that names an artifact since deleted — by its title's
   words, number included ("poster 2", "the photo of my cat") — is refused the same way, unless a live
   artifact answers to the same words.
A clarification creates a card (the candidates plus "new task") and routes nothing until the person
chooses (`main_clarification_apply`). A lightweight task the person keeps iterating on — a second
follow-up — is promoted to persistent, keeping its inbox, turns and artifacts (agents/services/lightweight.py,
applied by the inbox to every message; `task_promote` promotes on request).

Routing never grants execution rights: the task's runtime checks authorisation and budget on its own, and
`api_request` marks messages from the open API, whose paid operations are confirmed one by one (billing;
the inbox message's `source` is "api_key" for the runtime to pass on). Every message appends a
"main.message" event in the transaction that records it. No transaction is held across the Router's model
call: the index is read, the model called, then one short transaction validates and writes.
"""

from dataclasses import dataclass

from django.db import transaction
from django.db.models import QuerySet
from django.utils import translation
from django.utils.translation import gettext_noop

from agents.language import STOP_WORDS, language_detect, stem, words
from agents.locks import task_locked
from agents.main.forget_intent import ForgetIntent, forget_intent
from agents.main.lookups import Lookups
from agents.main.router import RouterResult, route_decide
from agents.media_words import media_kind
from agents.models import (
    CARD_ANSWER,
    Card,
    CardKind,
    CardStatus,
    InboxMessage,
    MainMessage,
    Route,
    Task,
    TaskKind,
    TaskStatus,
)
from agents.services.card_actions import card_act, card_reply
from agents.services.cards import card_open, card_resolve
from agents.services.forgotten import Redactor
from agents.services.inbox import message_post
from agents.services.lightweight import PERSON_SOURCES, do_task_promote
from agents.services.memory_feed import main_message_recorded
from agents.services.memory_forget import memory_forget_ask
from agents.services.task_index import TaskIndex, task_duplicates_find, task_index_get
from agents.services.tasks import task_create
from agents.services.understanding_scope import reads_in_workspace
from lomote.kernel.exceptions import Conflict, InvalidInput, NotFound
from memory.services.forget import forget_match
from workspace.models import Artifact, ArtifactVersion, GenerationJob, Role
from workspace.search import EmbeddingFailed, artifact_search_meaning, artifact_text, query_embed
from workspace.selectors import Access
from workspace.services.events import event_append

MAX_TEXT = 20_000
TITLE_CHARS = 200
NEW_TASK_OPTION = "new_task"
CLARIFY_OPTIONS = 3
RECENT_MESSAGES = 3
RECENT_MESSAGE_CHARS = 160

_TEXT = {
    "task_archived": {
        "en": "“{title}” is archived, so nothing was sent to it. Unarchive it or start a new task.",
        "fr": "« {title} » est archivée : rien ne lui a été envoyé. Désarchivez-la ou lancez une nouvelle tâche.",
        "es": "«{title}» está archivada: no se le envió nada. Desarchívala o empieza una tarea nueva.",
        "de": "„{title}“ ist archiviert, daher wurde nichts gesendet. Hol sie zurück oder starte eine neue Aufgabe.",
        "it": "«{title}» è archiviata: non le è stato inviato nulla. Ripristinala o avvia una nuova attività.",
        "pt": "«{title}» está arquivada: nada lhe foi enviado. Desarquive-a ou comece uma nova tarefa.",
    },
    "task_cancelled": {
        "en": "“{title}” was cancelled; it takes no more messages. Start a new task to go on.",
        "fr": "« {title} » a été annulée ; elle ne prend plus de messages. Lancez une nouvelle tâche pour continuer.",
        "es": "«{title}» se canceló; ya no acepta mensajes. Empieza una tarea nueva para seguir.",
        "de": "„{title}“ wurde abgebrochen und nimmt keine Nachrichten mehr an. Starte eine neue Aufgabe.",
        "it": "«{title}» è stata annullata; non accetta altri messaggi. Avvia una nuova attività per continuare.",
        "pt": "«{title}» foi cancelada; já não aceita mensagens. Comece uma nova tarefa para continuar.",
    },
    "artifact_deleted": {
        "en": "“{title}” was deleted, so it can no longer be changed or used. Nothing was sent.",
        "fr": "« {title} » a été supprimé : il ne peut plus être modifié ni utilisé. Rien n'a été envoyé.",
        "es": "«{title}» se eliminó, así que ya no se puede cambiar ni usar. No se envió nada.",
        "de": "„{title}“ wurde gelöscht und kann nicht mehr geändert oder verwendet werden. Nichts wurde gesendet.",
        "it": "«{title}» è stato eliminato e non si può più modificare né usare. Non è stato inviato nulla.",
        "pt": "«{title}» foi eliminado e já não pode ser alterado nem usado. Nada foi enviado.",
    },
    "card_closed": {
        "en": "This card is already {status}; nothing was sent.",
        "fr": "Cette carte est déjà close ({status}) ; rien n'a été envoyé.",
        "es": "Esta tarjeta ya está cerrada ({status}); no se envió nada.",
        "de": "Diese Karte ist bereits geschlossen ({status}); nichts wurde gesendet.",
        "it": "Questa scheda è già chiusa ({status}); non è stato inviato nulla.",
        "pt": "Este cartão já está fechado ({status}); nada foi enviado.",
    },
    "clarify": {
        "en": "Which work is this about?",
        "fr": "De quel travail s'agit-il ?",
        "es": "¿De qué trabajo se trata?",
        "de": "Um welche Arbeit geht es?",
        "it": "Di quale lavoro si tratta?",
        "pt": "De que trabalho se trata?",
    },
    "new_task": {
        "en": "Start a new task",
        "fr": "Lancer une nouvelle tâche",
        "es": "Empezar una tarea nueva",
        "de": "Neue Aufgabe starten",
        "it": "Avvia una nuova attività",
        "pt": "Começar uma nova tarefa",
    },
    "forget_confirm": {
        "en": "I will forget “{what}” and everything built on it once you confirm on the card.",
        "fr": "J'oublierai « {what} » et tout ce qui en découle dès que vous aurez confirmé sur la carte.",
        "es": "Olvidaré «{what}» y todo lo que se basa en ello en cuanto lo confirmes en la tarjeta.",
        "de": "Ich vergesse „{what}“ und alles, was darauf aufbaut, sobald du es auf der Karte bestätigst.",
        "it": "Dimenticherò «{what}» e tutto ciò che ne deriva non appena confermi sulla scheda.",
        "pt": "Vou esquecer «{what}» e tudo o que dele deriva assim que confirmar no cartão.",
    },
    "forget_done": {
        "en": "That is already forgotten.",
        "fr": "C'est déjà oublié.",
        "es": "Eso ya está olvidado.",
        "de": "Das ist bereits vergessen.",
        "it": "È già dimenticato.",
        "pt": "Isso já foi esquecido.",
    },
    "forget_none": {
        "en": "I don't remember anything like that, so there is nothing to forget.",
        "fr": "Je ne me souviens de rien de tel : il n'y a rien à oublier.",
        "es": "No recuerdo nada parecido, así que no hay nada que olvidar.",
        "de": "Ich erinnere mich an nichts dergleichen, es gibt also nichts zu vergessen.",
        "it": "Non ricordo nulla del genere, quindi non c'è niente da dimenticare.",
        "pt": "Não me lembro de nada assim, por isso não há nada a esquecer.",
    },
    "answer": {
        "en": "Noted.",
        "fr": "C'est noté.",
        "es": "Anotado.",
        "de": "Notiert.",
        "it": "Preso nota.",
        "pt": "Anotado.",
    },
}


def _say(key: str, language: str, **values) -> str:
    texts = _TEXT[key]
    return texts.get(language, texts["en"]).format(**values)


@dataclass(frozen=True)
class _Message:
    access: Access
    text: str
    language: str
    api_request: bool


# --- the entry point --------------------------------------------------------------------------------------


@reads_in_workspace(lambda *, access, **_: access.workspace.pk)  # the Router reads through the workspace's model
def main_message_post(
    *,
    access: Access,
    text: str,
    task_id: int | None = None,
    artifact_id: int | None = None,
    card_id: int | None = None,
    api_request: bool = False,
) -> MainMessage:
    """Route one message from the person (see the module docstring). Editors and owners only.

    Raises NotFound for a task, artifact or card outside the workspace (the caller learns nothing), and
    InvalidInput for an empty or oversized text or more than one explicit target.
    """
    access.require(Role.EDITOR)
    text = (text or "").strip()
    if not text:
        raise InvalidInput("The message is empty.", code="empty_message")
    if len(text) > MAX_TEXT:
        raise InvalidInput(f"A message holds at most {MAX_TEXT} characters.", code="message_too_long")
    if sum(target is not None for target in (task_id, artifact_id, card_id)) > 1:
        raise InvalidInput("Name at most one of task, artifact and card.", code="too_many_targets")
    # The person's own wording decides the language, never a rephrasing by the Router.
    message = _Message(
        access=access,
        text=text,
        language=language_detect(text),
        api_request=api_request or access.api_key is not None,
    )
    if task_id is not None:
        return _deliver(message, task_id=task_id, route=Route.DIRECT)
    if artifact_id is not None:
        return _post_about_artifact(message, artifact_id)
    if card_id is not None:
        return _post_to_card(message, card_id)
    return _post_routed(message)


# --- explicit targets: no model call ----------------------------------------------------------------------


def _task_refusal(task: Task) -> str:
    if task.is_archived:
        return "task_archived"
    if task.status == TaskStatus.CANCELLED:
        return "task_cancelled"
    return ""


@transaction.atomic
def _deliver(
    message: _Message,
    *,
    task_id: int,
    route: str,
    inbox_text: str | None = None,
    candidates: list[dict] | None = None,
    router: RouterResult | None = None,
    router_chars: int = 0,
    card: Card | None = None,
) -> MainMessage:
    """Put the message in the task's inbox after checking, under the task lock, that the task takes it."""
    task = task_locked(access=message.access, task_id=task_id)
    refusal = _task_refusal(task)
    if refusal:
        return _record(
            message,
            route=route,
            task=task,
            refusal=refusal,
            reply=_say(refusal, message.language, title=task.title),
            candidates=candidates,
            router=router,
            router_chars=router_chars,
            card=card,
        )
    # The inbox promotes a lightweight task the person keeps iterating on (agents/services/lightweight.py).
    inbox = message_post(access=message.access, task_id=task.pk, text=inbox_text or message.text)
    return _record(
        message,
        route=route,
        task=task,
        inbox=inbox,
        candidates=candidates,
        router=router,
        router_chars=router_chars,
        card=card,
    )


def _artifact_owner(message: _Message, artifact: Artifact) -> int | None:
    """The task the artifact belongs to: the one that created it, else the last to add a version, else the
    last whose generation job produced it — among this workspace's tasks."""
    owners = [artifact.created_by_task_id]
    owners.append(
        ArtifactVersion.objects.filter(artifact=artifact, author_task_id__isnull=False)
        .order_by("-number")
        .values_list("author_task_id", flat=True)
        .first()
    )
    owners.append(
        GenerationJob.objects.filter(workspace_id=artifact.workspace_id, artifact=artifact, task_id__isnull=False)
        .order_by("-created_at", "-id")
        .values_list("task_id", flat=True)
        .first()
    )
    for task_id in owners:
        if task_id is not None and Task.objects.filter(pk=task_id, workspace=message.access.workspace).exists():
            return task_id
    return None


def _artifact_note(artifact: Artifact) -> str:
    # The worker must know which work the person means; the note follows their words, never replaces them.
    return f"\n\n[about artifact #{artifact.pk} “{artifact.title}”, version {artifact.current_version}]"


def _post_about_artifact(message: _Message, artifact_id: int) -> MainMessage:
    artifact = Artifact.objects.filter(pk=artifact_id, workspace=message.access.workspace).first()
    if artifact is None:
        raise NotFound(gettext_noop("Artifact not found."))
    owner = _artifact_owner(message, artifact)
    if artifact.is_deleted:
        with transaction.atomic():
            task = Task.objects.filter(pk=owner).first() if owner else None
            return _record(
                message,
                route=Route.DIRECT,
                task=task,
                refusal="artifact_deleted",
                reply=_say("artifact_deleted", message.language, title=artifact.title),
            )
    if owner is None:
        # A work no task made (uploaded, or edited by people only): the Router decides, knowing what it is.
        return _post_routed(message, note=_artifact_note(artifact))
    return _deliver(message, task_id=owner, route=Route.DIRECT, inbox_text=message.text + _artifact_note(artifact))


def _post_to_card(message: _Message, card_id: int) -> MainMessage:
    """A card answered from the main thread: validated here, then handed to the cards service.

    A clarification card of the Router routes the original message to the chosen option (its id or label
    typed); any other card's answer is the cards service's `card_reply` (an option typed chooses it, other
    text answers it, a quote is never approved by text), which delivers the resolution to the card's task.
    """
    card = Card.objects.filter(pk=card_id, workspace=message.access.workspace).select_related("task").first()
    if card is None:
        raise NotFound(gettext_noop("Card not found."))
    refusal = "card_closed" if card.status != CardStatus.OPEN else ""
    reply = _say("card_closed", message.language, status=card.get_status_display().lower()) if refusal else ""
    if not refusal and card.task is not None and _task_refusal(card.task):
        refusal = _task_refusal(card.task)
        reply = _say(refusal, message.language, title=card.task.title)
    if refusal:
        with transaction.atomic():
            return _record(message, route=Route.DIRECT, task=card.task, card=card, refusal=refusal, reply=reply)
    if card.kind == CardKind.CLARIFY and card.task_id is None:
        option = _option_named(card, message.text)
        if option is None:
            raise InvalidInput(
                "Answer a clarification card with one of its options.",
                code="invalid_option",
                details={"options": [o.get("id") for o in card.options]},
            )
        return main_clarification_apply(access=message.access, card_id=card.pk, option_id=option)
    with transaction.atomic():
        last = InboxMessage.objects.order_by("-pk").values_list("pk", flat=True).first() or 0
        card_reply(access=message.access, card_id=card.pk, text=message.text)
        # The person's answer, as the cards service put it in the inbox (under the task lock it still holds).
        inbox = (
            InboxMessage.objects.filter(task_id=card.task_id, pk__gt=last, source__in=(*PERSON_SOURCES, CARD_ANSWER))
            .order_by("-pk")
            .first()
        )
        return _record(message, route=Route.DIRECT, task=card.task, card=card, inbox=inbox)


def _option_named(card: Card, text: str) -> str | None:
    wanted = text.strip().casefold()
    for option in card.options:
        if wanted in (str(option.get("id", "")).casefold(), str(option.get("label", "")).casefold()):
            return str(option["id"])
    return None


# --- semantic routing -------------------------------------------------------------------------------------


def main_recent_messages(workspace_id: int) -> list[dict]:
    rows = MainMessage.objects.filter(workspace_id=workspace_id).order_by("-id")[:RECENT_MESSAGES]
    redact = Redactor(workspace_id).refresh()  # what a person asked to forget never reaches the Router
    return [
        {"text": redact.text(row.text[:RECENT_MESSAGE_CHARS]), "route": row.route, "task": row.task_id}
        for row in reversed(rows)
    ]


def _considered(index: TaskIndex, ids: list[int] | None = None, limit: int = 5) -> list[dict]:
    """The candidates a message's record keeps: the index entries most similar to it, or the given ids."""
    if ids is None:
        entries = sorted(index.entries, key=lambda e: -e.similarity)[:limit]
    else:
        entries = [e for e in (index.get(i) for i in ids) if e is not None]
    return [{"task": e.id, "title": e.title, "similarity": round(e.similarity, 3)} for e in entries]


def _post_forget(message: _Message, intent: ForgetIntent) -> MainMessage:
    """ "Forget that …": the memory it names gets a confirmation card (or Main says there is none). The words
    are not memory evidence: a request to forget must not feed memory with what it asks to forget."""
    person = message.access.user.pk if message.access.user is not None else None
    memory = forget_match(workspace_id=message.access.workspace.pk, person_id=person, description=intent.what)
    with transaction.atomic():
        if memory is None:
            return _record(message, route=Route.ANSWER, reply=_say("forget_none", message.language), remember=False)
        with translation.override(message.language):  # the card speaks the person's language, as Main does
            request, card = memory_forget_ask(access=message.access, memory_id=memory.pk)
        current = memory.versions.filter(status="active").values_list("content", flat=True).first() or intent.what
        reply = (
            _say("forget_confirm", message.language, what=current) if card else _say("forget_done", message.language)
        )
        return _record(message, route=Route.ANSWER, card=card, reply=reply, remember=False)


def _post_routed(message: _Message, *, note: str = "") -> MainMessage:
    intent = forget_intent(message.text) if not note else None
    if intent is not None:
        return _post_forget(message, intent)
    workspace_id = message.access.workspace.pk
    text = message.text + note
    index = task_index_get(workspace_id=workspace_id, text=text)
    lookups = Lookups(workspace_id=workspace_id)  # one budget for the message, both passes
    result = route_decide(
        workspace_id=workspace_id,
        text=text,
        language=message.language,
        index=index,
        recent=main_recent_messages(workspace_id),
        lookups=lookups,
    )
    decision, chars = result.decision, result.prompt_chars
    candidates = _considered(index)
    first_refers = decision.refers_to_existing  # the second pass judges duplicates, not what the words name

    if decision.route == Route.NEW_TASK:
        duplicates = task_duplicates_find(workspace_id=workspace_id, text=message.text)
        if duplicates:
            shown = _duplicate_entries(workspace_id, duplicates)
            second = route_decide(
                workspace_id=workspace_id,
                text=text,
                language=message.language,
                index=index,
                recent=main_recent_messages(workspace_id),
                duplicates=shown,
                lookups=lookups,
            )
            result, decision, chars = second, second.decision, chars + second.prompt_chars
            candidates = [{"task": d["id"], "title": d["title"], "similarity": d["similarity"]} for d in shown]

    if decision.route == Route.FOLLOW_UP:
        chosen = _considered(index, [decision.task]) or [{"task": decision.task}]
        candidates = chosen + [c for c in candidates if c["task"] != decision.task]
    about_existing = decision.route == Route.FOLLOW_UP or (
        decision.route in (Route.NEW_TASK, Route.LIGHTWEIGHT) and first_refers
    )
    gone = _deleted_named(workspace_id, message.text) if about_existing else None
    if gone is not None:
        with transaction.atomic():
            task = Task.objects.filter(pk=decision.task, workspace_id=workspace_id).first() if decision.task else None
            return _record(
                message,
                route=decision.route,
                task=task if decision.route == Route.FOLLOW_UP else None,
                refusal="artifact_deleted",
                reply=_say("artifact_deleted", message.language, title=gone.title),
                candidates=candidates,
                router=result,
                router_chars=chars,
            )

    if decision.route == Route.FOLLOW_UP:
        return _deliver(
            message,
            task_id=decision.task,
            route=Route.FOLLOW_UP,
            inbox_text=text,
            candidates=candidates,
            router=result,
            router_chars=chars,
        )
    if decision.route in (Route.NEW_TASK, Route.LIGHTWEIGHT):
        kind = TaskKind.PERSISTENT if decision.route == Route.NEW_TASK else TaskKind.LIGHTWEIGHT
        return _create(
            message,
            kind=kind,
            title=decision.title,
            brief=text,
            route=decision.route,
            router=result,
            router_chars=chars,
            candidates=candidates,
        )
    if decision.route == Route.CLARIFY:
        return _clarify(
            message, decision.candidates, index=index, candidates=candidates, router=result, router_chars=chars
        )
    # A correction or a forget request the forget intent did not take: Main notes it and the words go to memory
    # as evidence (memory extraction supersedes what they correct); no task is touched.
    reply = _say("answer", message.language) if decision.act == "memory" else decision.reply
    with transaction.atomic():
        return _record(
            message,
            route=Route.ANSWER,
            reply=reply or _say("answer", message.language),
            candidates=candidates,
            router=result,
            router_chars=chars,
        )


DELETED_SCAN = 50  # the most recently deleted artifacts a message is compared with
NAMED_BY_MEANING = 0.25  # search's common scale: a deleted artifact of the kind the message names, this close
MEANING_MARGIN = 0.05  # …and closer than any live artifact of its kind by this much


def _artifact_words(text: str) -> set[str]:
    """What names an artifact: its kinds of work in any language ("affiche" = "poster"), its numbers, and its
    other content words (folded, plural cut)."""
    named = set()
    for word in words(text):
        kind = media_kind(word)
        if kind is not None:
            named.add(f"kind:{kind}")
        elif word.isdigit():
            named.add(word)
        elif word not in STOP_WORDS and len(word) > 1:
            named.add(stem(word))
    return named


def _numbers_fit(title: str, said: set[str]) -> bool:
    return {w for w in _artifact_words(title) if w.isdigit()} <= said


def _naming(title: str, said: set[str]) -> int:
    """How many words of an artifact's title the message says; 0 unless it says enough of them to name it:
    every number of the title ("poster 2" is not "poster 1"), at least two words, two thirds of the title."""
    title_words = _artifact_words(title)
    if not title_words or not _numbers_fit(title, said):
        return 0
    hits = len(title_words & said)
    return hits if hits >= 2 and 3 * hits >= 2 * len(title_words) else 0


def _deleted_named(workspace_id: int, text: str) -> Artifact | None:
    """The deleted artifact the message names, if it names one and no live artifact answers as well."""
    deleted = list(
        Artifact.objects.filter(workspace_id=workspace_id, deleted_at__isnull=False)
        .order_by("-deleted_at", "-id")
        .only("pk", "title", "kind", "description", "tags")[:DELETED_SCAN]
    )
    if not deleted:
        return None
    said = _artifact_words(text)
    scored = sorted(((_naming(a.title, said), a) for a in deleted), key=lambda item: -item[0])
    best, artifact = scored[0]
    if not best:
        return _deleted_meant(workspace_id, text, deleted, said)
    # A live artifact of the same kind answering to as many of the words is what the person means.
    live = Artifact.objects.filter(workspace_id=workspace_id, deleted_at__isnull=True, kind=artifact.kind)
    for title in live.order_by("-updated_at", "-id").values_list("title", flat=True)[:DELETED_SCAN]:
        if _naming(title, said) >= best:
            return None
    return artifact


def _deleted_meant(workspace_id: int, text: str, deleted: list[Artifact], said: set[str]) -> Artifact | None:
    """The deleted artifact the message means in other words ("la photo de mon chat" for "Cat photo"): one of
    the kind of work the message names, its numbers all said, close in meaning (workspace search's embedder)
    and closer than every live artifact of its kind."""
    kinds = {w for w in said if w.startswith("kind:")}
    candidates = [a for a in deleted if _artifact_words(a.title) & kinds and _numbers_fit(a.title, said)]
    if not candidates:
        return None
    query = query_embed(workspace_id=workspace_id, text=text)
    if query.empty:
        return None
    try:
        vectors = query.embedder.embed(
            [artifact_text(title=a.title, description=a.description, tags=a.tags) for a in candidates]
        )
    except EmbeddingFailed:
        return None  # no meaning to judge by: only the words decide, and they did not name it
    if vectors.shape[1] != query.vector.shape[0]:
        return None
    scores = query.embedder.score(vectors @ query.vector)
    best = int(scores.argmax())
    score, artifact = float(scores[best]), candidates[best]
    if score < max(NAMED_BY_MEANING, query.embedder.related):
        return None
    live = artifact_search_meaning(
        workspace_id=workspace_id, text=text, kinds=[artifact.kind], query=query, limit=1, min_score=0.0
    )
    if live and live[0][1] > score - MEANING_MARGIN:
        return None
    return artifact


def _duplicate_entries(workspace_id: int, duplicates: list[tuple[int, float]]) -> list[dict]:
    tasks = Task.objects.filter(workspace_id=workspace_id, pk__in=[i for i, _ in duplicates]).in_bulk()
    return [
        {"id": i, "title": tasks[i].title[:80], "status": tasks[i].status, "similarity": round(s, 3)}
        for i, s in duplicates
        if i in tasks
    ]


def _title(decision_title: str | None, text: str) -> str:
    title = " ".join((decision_title or "").split()) or " ".join(text.split())
    return title if len(title) <= TITLE_CHARS else title[: TITLE_CHARS - 1].rstrip() + "…"


@transaction.atomic
def _create(
    message: _Message,
    *,
    kind: str,
    title: str | None,
    brief: str,
    route: str,
    router: RouterResult | None = None,
    router_chars: int = 0,
    candidates: list[dict] | None = None,
    card: Card | None = None,
) -> MainMessage:
    task = task_create(
        access=message.access, title=_title(title, message.text), brief=brief, language=message.language, kind=kind
    )
    inbox = InboxMessage.objects.filter(task=task).order_by("pk").first()
    return _record(
        message,
        route=route,
        task=task,
        inbox=inbox,
        candidates=candidates,
        router=router,
        router_chars=router_chars,
        card=card,
    )


@transaction.atomic
def _clarify(
    message: _Message,
    ids: list[int],
    *,
    index: TaskIndex,
    candidates: list[dict],
    router: RouterResult | None,
    router_chars: int,
) -> MainMessage:
    """Ask the person with a card: the candidate tasks (checked to be in this workspace) and "new task"."""
    tasks = Task.objects.filter(workspace=message.access.workspace, pk__in=ids).in_bulk()
    chosen = [tasks[i] for i in ids if i in tasks][:CLARIFY_OPTIONS]
    options = [{"id": f"task:{t.pk}", "label": f"{t.title[:120]} (#{t.pk})"} for t in chosen]
    options.append({"id": NEW_TASK_OPTION, "label": _say("new_task", message.language)})
    card = card_open(
        None,
        workspace_id=message.access.workspace.pk,
        kind=CardKind.CLARIFY,
        title=_say("clarify", message.language),
        body=message.text[:500],
        options=options,
        payload={
            "source": "router",
            "text": message.text,
            "language": message.language,
            "api_request": message.api_request,
            "candidates": [t.pk for t in chosen],
        },
        supersede=False,
    )
    considered = [{"task": t.pk, "title": t.title[:80]} for t in chosen] or candidates
    record = _record(
        message,
        route=Route.CLARIFY,
        card=card,
        candidates=considered,
        router=router,
        router_chars=router_chars,
    )
    card.payload["message"] = record.pk
    card.save(update_fields=["payload"])
    return record


def main_card_act(
    *,
    access: Access,
    card_id: int,
    action: str,
    option: str | None = None,
    text: str | None = None,
    budget: int | None = None,
) -> Card:
    """A person's action on a card. The Router's clarification cards are Main's: choosing one routes the
    person's original message (main_clarification_apply); every other card goes to the cards service."""
    card = Card.objects.filter(pk=card_id, workspace=access.workspace).values("kind", "task_id").first()
    if card is None:
        raise NotFound(gettext_noop("Card not found."))
    if card["kind"] != CardKind.CLARIFY or card["task_id"] is not None:
        return card_act(access=access, card_id=card_id, action=action, option=option, text=text, budget=budget)
    access.require(Role.EDITOR)
    if action != "choose":
        raise InvalidInput(
            f"A clarify card takes choose; not {action!r}.",
            code="invalid_action",
            details={"allowed": ["choose"], "action": action},
        )
    if budget is not None:
        raise InvalidInput("A budget goes only with approve.", code="invalid", details={"action": action})
    main_clarification_apply(access=access, card_id=card_id, option_id=str(option))
    return Card.objects.get(pk=card_id)


def main_clarification_apply(*, access: Access, card_id: int, option_id: str) -> MainMessage:
    """The person chose an option of a clarification card: route the original message there.

    `option_id` is "task:<id>" (delivered to that task, validated like any explicit target) or "new_task"
    (a persistent task is created without a second duplicate check: the person has just decided). The card
    is resolved under its row lock in the same transaction, so two clicks route the message once (the
    second is a 409 `card_resolved`, as for any card). Returns the new Main message recording where it went.
    `main_card_act(action="choose")` calls this for the API's card action.
    """
    access.require(Role.EDITOR)
    with transaction.atomic():
        card = (
            Card.objects.select_for_update(of=("self",), no_key=True)
            .filter(pk=card_id, workspace=access.workspace, kind=CardKind.CLARIFY)
            .first()
        )
        if card is None:
            raise NotFound(gettext_noop("Card not found."))
        if card.status != CardStatus.OPEN:
            raise Conflict(
                "This card was already answered.",
                code="card_resolved" if card.status == CardStatus.RESOLVED else "card_cancelled",
                details={"status": card.status, "resolution": card.resolution},
            )
        if option_id not in {str(o.get("id")) for o in card.options}:
            raise InvalidInput(
                "Not one of the card's options.",
                code="invalid_option",
                details={"options": [o.get("id") for o in card.options]},
            )
        label = next(str(o.get("label", "")) for o in card.options if str(o.get("id")) == option_id)
        resolution = {"action": "choose", "option": option_id, "label": label, "by": access.actor}
        card_resolve(card, resolution=resolution, by=access.actor, user=access.user, option=option_id)
        payload = card.payload or {}
        text = str(payload.get("text", ""))
        message = _Message(
            access=access,
            text=text,
            language=str(payload.get("language") or language_detect(text)),
            api_request=bool(payload.get("api_request")) or access.api_key is not None,
        )
        candidates = [{"task": c} for c in payload.get("candidates", [])]
        if option_id == NEW_TASK_OPTION:
            return _create(
                message,
                kind=TaskKind.PERSISTENT,
                title=None,
                brief=text,
                route=Route.NEW_TASK,
                candidates=candidates,
                card=card,
            )
        task_id = int(option_id.split(":", 1)[1])
        return _deliver(message, task_id=task_id, route=Route.DIRECT, candidates=candidates, card=card)


# --- promotion --------------------------------------------------------------------------------------------


@transaction.atomic
def task_promote(*, access: Access, task_id: int) -> Task:
    """Promote a lightweight task to persistent, keeping its history. Promoting twice changes nothing."""
    access.require(Role.EDITOR)
    task = task_locked(access=access, task_id=task_id)
    return do_task_promote(task, by=access.actor)


# --- the record -------------------------------------------------------------------------------------------


def _record(
    message: _Message,
    *,
    route: str,
    task: Task | None = None,
    card: Card | None = None,
    inbox: InboxMessage | None = None,
    candidates: list[dict] | None = None,
    reply: str = "",
    refusal: str = "",
    router: RouterResult | None = None,
    router_chars: int = 0,
    remember: bool = True,
) -> MainMessage:
    """Store the Main message and its routing, append the "main.message" event and record the words as memory
    evidence (caller's transaction)."""
    record = MainMessage.objects.create(
        workspace=message.access.workspace,
        author=message.access.user,
        text=message.text,
        language=message.language,
        route=route,
        task=task,
        card=card,
        candidates=candidates or [],
        reply=reply,
        refusal=refusal,
        inbox_message=inbox,
        api_request=message.api_request,
        api_key=message.access.api_key,
        route_reason=(router.decision.reason or "")[:500] if router is not None else "",
        router_model=router.model if router is not None else "",
        router_prompt_chars=router_chars,
        router_lookups=router.lookups if router is not None else [],
        router_call=router.call if router is not None else {},
    )
    event_append(
        workspace_id=record.workspace_id,
        kind="main.message",
        data={
            "message": record.pk,
            "route": route,
            "task": task.pk if task is not None else None,
            "card": card.pk if card is not None else None,
            "candidates": [c.get("task") for c in record.candidates],
            "refusal": refusal,
            "lookups": record.router_lookups,
            "delivered": inbox is not None,
            "by": message.access.actor,
        },
    )
    if remember:
        main_message_recorded(record)  # the person's words become memory evidence, extracted after commit
    return record


# --- reads ------------------------------------------------------------------------------------------------


def main_message_list(*, access: Access) -> QuerySet[MainMessage]:
    """The workspace's Main messages, newest first."""
    return MainMessage.objects.filter(workspace=access.workspace).select_related("author", "api_key").order_by("-id")


def main_message_get(*, access: Access, message_id: int) -> MainMessage:
    record = main_message_list(access=access).filter(pk=message_id).first()
    if record is None:
        raise NotFound(gettext_noop("Message not found."))
    return record
