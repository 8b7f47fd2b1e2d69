"""A task's summary: one paragraph on where it stands, rewritten when a turn ends (DESIGN §2).

A turn's end queues the rewrite for a worker with its own commit (`task_summary_follow`, lomote/kernel/deferred.py):
the summary and the search row it feeds are derived from what the turn committed, and composing them (three reads,
the row's upsert) is no part of what the worker owes the turn's wait. Job reactions and status moves made by a
person's request, already off a turn's path, rewrite it in their own transaction (`task_summary_write`).

Goal, what is done, what remains, what the task waits for (or why it stopped), and its latest artifacts —
composed from stored state only, in the task's language (English and French phrases; English otherwise). The
Router's index searches and shows it (agents/services/task_index.py): saving it refreshes the task's search
row in the same transaction.
"""

from django.conf import settings
from django.db import transaction
from django.db.models import Q

from agents.locks import task_qs_for_update
from agents.models import Card, CardStatus, ChecklistStatus, Task, TaskStatus
from agents.services.task_index import task_artifacts_recent
from lomote.kernel.deferred import enqueue_with_commit

MAX_SUMMARY = 600
GOAL_CHARS = 100
TITLES_SHOWN = 4
TITLE_CHARS = 60

PHRASES = {
    "en": {
        "no_plan": "No plan yet.",
        "done": "Done {done}/{total}: {titles}.",
        "none_done": "Nothing done yet (0/{total}).",
        "left": "Left: {titles}.",
        "skipped": "Skipped: {titles}.",
        "in_progress": " (in progress)",
        "waiting_card": "Waiting for the person's answer: “{card}”.",
        "waiting_approval": "Waiting for the person to approve the spending.",
        "waiting_jobs": "Waiting for {n} generation job(s).",
        "waiting": "Waiting.",
        "active": "Going on by itself.",
        "paused": "Paused by the person.",
        "stopped": "Stopped: {reason}.",
        "finished": "Finished.",
        "cancelled": "Cancelled.",
        "failed": "Failed: {reason}.",
        "artifacts": "Latest artifacts: {refs}.",
        "more": "and {n} more",
    },
    "fr": {
        "no_plan": "Pas encore de plan.",
        "done": "Fait {done}/{total} : {titles}.",
        "none_done": "Rien de fait pour l’instant (0/{total}).",
        "left": "Reste : {titles}.",
        "skipped": "Ignoré : {titles}.",
        "in_progress": " (en cours)",
        "waiting_card": "Attend la réponse de la personne : « {card} ».",
        "waiting_approval": "Attend que la personne approuve la dépense.",
        "waiting_jobs": "Attend {n} génération(s) en cours.",
        "waiting": "En attente.",
        "active": "Continue d’elle-même.",
        "paused": "Mise en pause par la personne.",
        "stopped": "Arrêtée : {reason}.",
        "finished": "Terminée.",
        "cancelled": "Annulée.",
        "failed": "Échec : {reason}.",
        "artifacts": "Derniers artefacts : {refs}.",
        "more": "et {n} de plus",
    },
    "de": {
        "no_plan": "Noch kein Plan.",
        "done": "Erledigt {done}/{total}: {titles}.",
        "none_done": "Noch nichts erledigt (0/{total}).",
        "left": "Offen: {titles}.",
        "skipped": "Übersprungen: {titles}.",
        "in_progress": " (in Arbeit)",
        "waiting_card": "Wartet auf die Antwort der Person: „{card}“.",
        "waiting_approval": "Wartet darauf, dass die Person die Ausgabe genehmigt.",
        "waiting_jobs": "Wartet auf {n} Generierung(en).",
        "waiting": "Wartet.",
        "active": "Macht von selbst weiter.",
        "paused": "Von der Person pausiert.",
        "stopped": "Angehalten: {reason}.",
        "finished": "Fertig.",
        "cancelled": "Abgebrochen.",
        "failed": "Fehlgeschlagen: {reason}.",
        "artifacts": "Neueste Elemente: {refs}.",
        "more": "und {n} weitere",
    },
    "es": {
        "no_plan": "Aún no hay plan.",
        "done": "Hecho {done}/{total}: {titles}.",
        "none_done": "Aún no hay nada hecho (0/{total}).",
        "left": "Falta: {titles}.",
        "skipped": "Omitido: {titles}.",
        "in_progress": " (en curso)",
        "waiting_card": "Espera la respuesta de la persona: «{card}».",
        "waiting_approval": "Espera que la persona apruebe el gasto.",
        "waiting_jobs": "Espera {n} generación(es) en curso.",
        "waiting": "En espera.",
        "active": "Sigue por sí sola.",
        "paused": "Pausada por la persona.",
        "stopped": "Detenida: {reason}.",
        "finished": "Terminada.",
        "cancelled": "Cancelada.",
        "failed": "Fallida: {reason}.",
        "artifacts": "Últimos elementos: {refs}.",
        "more": "y {n} más",
    },
    "pt": {
        "no_plan": "Ainda não há plano.",
        "done": "Feito {done}/{total}: {titles}.",
        "none_done": "Ainda nada feito (0/{total}).",
        "left": "Falta: {titles}.",
        "skipped": "Ignorado: {titles}.",
        "in_progress": " (em curso)",
        "waiting_card": "Aguarda a resposta da pessoa: «{card}».",
        "waiting_approval": "Aguarda que a pessoa aprove a despesa.",
        "waiting_jobs": "Aguarda {n} geração(ões) em curso.",
        "waiting": "À espera.",
        "active": "Continua sozinha.",
        "paused": "Pausada pela pessoa.",
        "stopped": "Parada: {reason}.",
        "finished": "Concluída.",
        "cancelled": "Cancelada.",
        "failed": "Falhou: {reason}.",
        "artifacts": "Últimos elementos: {refs}.",
        "more": "e mais {n}",
    },
}
# Stop reasons in words; an unknown reason is shown as it is stored.
REASONS = {
    "en": {
        "no_progress": "no progress in its last turn",
        "auto_turn_cap": "too many turns in a row without the person",
        "generation_failed": "a generation failed",
        "spending_declined": "the person declined the spending",
        "step_cap": "step limit reached",
        "token_cap": "token limit reached",
        "answered": "answered",
    },
    "fr": {
        "no_progress": "aucun progrès au dernier tour",
        "auto_turn_cap": "trop de tours d’affilée sans la personne",
        "generation_failed": "une génération a échoué",
        "spending_declined": "la personne a refusé la dépense",
        "step_cap": "limite d’étapes atteinte",
        "token_cap": "limite de jetons atteinte",
        "answered": "réponse donnée",
    },
    "de": {
        "no_progress": "kein Fortschritt im letzten Schritt",
        "auto_turn_cap": "zu viele Schritte hintereinander ohne die Person",
        "generation_failed": "eine Generierung ist fehlgeschlagen",
        "spending_declined": "die Person hat die Ausgabe abgelehnt",
        "step_cap": "Schrittlimit erreicht",
        "token_cap": "Tokenlimit erreicht",
        "answered": "beantwortet",
    },
    "es": {
        "no_progress": "sin avance en su último paso",
        "auto_turn_cap": "demasiados pasos seguidos sin la persona",
        "generation_failed": "una generación falló",
        "spending_declined": "la persona rechazó el gasto",
        "step_cap": "límite de pasos alcanzado",
        "token_cap": "límite de tokens alcanzado",
        "answered": "respondido",
    },
    "pt": {
        "no_progress": "sem progresso no último passo",
        "auto_turn_cap": "demasiados passos seguidos sem a pessoa",
        "generation_failed": "uma geração falhou",
        "spending_declined": "a pessoa recusou a despesa",
        "step_cap": "limite de passos atingido",
        "token_cap": "limite de tokens atingido",
        "answered": "respondido",
    },
}


def _cut(text: str, limit: int) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _listing(titles: list[str], phrases: dict[str, str]) -> str:
    shown = [_cut(t, TITLE_CHARS) for t in titles[:TITLES_SHOWN]]
    if len(titles) > TITLES_SHOWN:
        shown.append(phrases["more"].format(n=len(titles) - TITLES_SHOWN))
    return "; ".join(shown)


def _state(task: Task, phrases: dict[str, str], lang: str) -> str:
    reason = REASONS[lang].get(task.stop_reason, task.stop_reason.replace("_", " "))
    if task.status == TaskStatus.WAITING:
        waiting = task.waiting_for or {}
        if waiting.get("type") == "jobs":
            return phrases["waiting_jobs"].format(n=len(waiting.get("jobs") or []))
        card = Card.objects.filter(task=task, status=CardStatus.OPEN).filter(
            Q(pk=waiting.get("card")) if waiting.get("card") else Q()
        )
        title = card.order_by("-created_at").values_list("title", flat=True).first()
        if title:
            return phrases["waiting_card"].format(card=_cut(title, 120))
        return phrases["waiting_approval"] if waiting.get("type") == "approval" else phrases["waiting"]
    if task.status == TaskStatus.IDLE:
        return phrases["stopped"].format(reason=reason) if reason else ""
    if task.status == TaskStatus.FAILED:
        return phrases["failed"].format(reason=reason)
    key = {
        TaskStatus.ACTIVE: "active",
        TaskStatus.PAUSED: "paused",
        TaskStatus.DONE: "finished",
        TaskStatus.CANCELLED: "cancelled",
    }[task.status]
    return phrases[key]


def task_summary_compose(task: Task) -> str:
    """The paragraph for the task as it stands in the database now."""
    lang = (task.language or "").lower()[:2]
    lang = lang if lang in PHRASES else "en"
    phrases = PHRASES[lang]
    goal = _cut(task.brief or task.title, GOAL_CHARS).rstrip(".!?…") or _cut(task.title, GOAL_CHARS)
    parts = [f"{goal[:1].upper()}{goal[1:]}." if goal else ""]
    items = list(task.checklist.order_by("position").values_list("title", "status"))
    if not items:
        parts.append(phrases["no_plan"])
    else:
        done = [t for t, s in items if s == ChecklistStatus.DONE]
        left = [t for t, s in items if s == ChecklistStatus.PENDING]
        left = [t + phrases["in_progress"] for t, s in items if s == ChecklistStatus.IN_PROGRESS] + left
        skipped = [t for t, s in items if s == ChecklistStatus.SKIPPED]
        if done:
            parts.append(phrases["done"].format(done=len(done), total=len(items), titles=_listing(done, phrases)))
        else:
            parts.append(phrases["none_done"].format(total=len(items)))
        if left:
            parts.append(phrases["left"].format(titles=_listing(left, phrases)))
        if skipped:
            parts.append(phrases["skipped"].format(titles=_listing(skipped, phrases)))
    parts.append(_state(task, phrases, lang))
    refs = task_artifacts_recent(workspace_id=task.workspace_id, task_ids=[task.pk]).get(task.pk, [])
    if refs:
        parts.append(phrases["artifacts"].format(refs=", ".join(f"#{pk} “{title}”" for pk, title in refs)))
    return _cut(" ".join(p for p in parts if p), MAX_SUMMARY)


def task_summary_write(task: Task) -> str:
    """Rewrite the summary of `task` (its row locked by the caller, at the end of a turn). Saving it refreshes
    the task's search row in the same transaction (the post_save receiver of agents/services/task_index.py)."""
    summary = task_summary_compose(task)
    if summary != task.summary:
        task.summary = summary
        task.save(update_fields=["summary"])
    return summary


def task_summary_follow(task: Task) -> None:
    """Have a worker rewrite the summary of `task` once the caller's transaction commits (module docstring).

    On the ORM broker in the task's database the message commits with the turn's end or not at all; elsewhere it
    is queued after the commit, and a lost one leaves the summary as it was until the task's next rewrite."""
    enqueue_with_commit(
        "agents.tasks.summary_refresh",
        task.pk,
        name=f"task-summary-{task.pk}",
        group="summaries",
        timeout=settings.LOMOTE_TASK_TIMEOUTS["default"],
        written_with=Task,
    )


@transaction.atomic
def task_summary_refresh(*, task_id: int) -> str | None:
    """The queued rewrite: the task locked (every task writer takes its lock first), its summary composed from what
    is stored now. Safe to run twice, or late: it always writes the present state. None when the task is gone."""
    task = task_qs_for_update().filter(pk=task_id).first()
    return None if task is None else task_summary_write(task)
