"""How an artifact version was made (issue 16 item 4): its task, the person's request, the exact model lease,
the tool calls of the step that made it and their results, the human decisions, its own charges, what it came from,
the long-term memories its step was shown and the creative guides its turn read before making it (its sources).

Read-only and scoped to the caller's workspace: another workspace's artifact, a deleted artifact or a version that
does not exist is NotFound. Everything a person asked to forget is shown as removed (agents/services/forgotten.py),
as the rest of the API shows it. A bounded number of queries, whatever the log's size.
"""

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from agents.models import Card, CardKind, InboxMessage, MainMessage, Task, ToolCall, ToolCallStatus
from agents.services.forgotten import Redactor
from agents.services.quote_words import things
from billing.models import Order
from memory.models import MemoryVersion, VersionStatus
from memory.redaction import REDACTED
from workspace.models import ArtifactVersion, GenerationJob
from workspace.selectors import Access, artifact_version_get

# At most this many human decisions (the most recent before the version) and tool calls of its step are shown.
MAX_CARDS = 20
MAX_CALLS = 50
MAX_MESSAGES = 5


@dataclass(frozen=True)
class Provenance:
    artifact: dict[str, Any]
    made_by: str  # "agent" | "person" | "system"
    person: str | None
    task: dict[str, Any] | None
    request: list[dict[str, Any]]
    model: dict[str, Any] | None
    step: dict[str, Any] | None
    tool_calls: list[dict[str, Any]]
    job: dict[str, Any] | None
    decisions: list[dict[str, Any]]
    charges: list[dict[str, Any]]
    derived_from: list[dict[str, Any]]
    memories: list[dict[str, Any]]
    sources: list[dict[str, Any]]


def _username(user) -> str | None:
    return user.get_username() if user is not None else None


def _host(url: str) -> str:
    """Only the host of a base URL: no path, query, user or password can carry a secret out."""
    if not url:
        return ""
    try:
        return urlsplit(url).hostname or ""
    except ValueError:
        return ""


def _writes(call: ToolCall, artifact_id: int, number: int) -> bool:
    """Whether a finished call's result says it wrote this version (document and Flow tools answer so)."""
    result = call.result if isinstance(call.result, dict) else {}
    return result.get("artifact_id") == artifact_id and result.get("version") == number


def _source_of(version: ArtifactVersion, job: GenerationJob | None) -> ToolCall | None:
    """The tool call that made the version: its generation job's call, or the write call of its turn."""
    calls = ToolCall.objects.select_related("step__turn__task__created_by", "step__turn__model_lease")
    if job is not None:
        found = calls.filter(call_id=job.idempotency_key, turn__task__workspace_id=job.workspace_id).first()
        if found is not None:
            return found
    if version.author_turn_id is None:
        return None
    candidates = calls.filter(
        turn_id=version.author_turn_id, turn__task__workspace_id=version.artifact.workspace_id, result__isnull=False
    ).order_by("-step__index", "-index")[:MAX_CALLS]
    return next((c for c in candidates if _writes(c, version.artifact_id, version.number)), None)


def _version_ref(version: ArtifactVersion, relation: str) -> dict[str, Any]:
    return {
        "relation": relation,
        "artifact_id": version.artifact_id,
        "artifact_title": version.artifact.title,
        "artifact_kind": version.artifact.kind,
        "version": version.number,
        "created_at": version.created_at,
    }


def _derived_from(version: ArtifactVersion, job: GenerationJob | None, workspace_id: int) -> list[dict[str, Any]]:
    """The earlier version of the same artifact and, for a generation from a source, the source's version then."""
    found = []
    if version.number > 1:
        previous = (
            ArtifactVersion.objects.select_related("artifact")
            .filter(artifact_id=version.artifact_id, number=version.number - 1)
            .first()
        )
        if previous is not None:
            found.append(_version_ref(previous, "previous_version"))
    source_id = (job.params or {}).get("source_artifact_id") if job is not None else None
    if isinstance(source_id, int) and source_id != version.artifact_id:
        source = (
            ArtifactVersion.objects.select_related("artifact")
            .filter(artifact_id=source_id, artifact__workspace_id=workspace_id, created_at__lte=job.created_at)
            .order_by("-number")
            .first()
        )
        if source is not None:
            found.append(_version_ref(source, "source"))
    return found


def _request(step, task, redact: Redactor) -> list[dict[str, Any]]:
    """What the person asked: the task's brief, then the latest messages its steps had read by this step (the
    step's own, or those before a wake-up after a job or an approval), each with the Main message it came from."""
    messages = list(
        InboxMessage.objects.select_related("author")
        .filter(consumed_by_step__turn__task_id=task.pk, consumed_by_step_id__lte=step.pk)
        .order_by("-id")[:MAX_MESSAGES]
    )[::-1]
    via_main = {
        m.inbox_message_id: m.pk
        for m in MainMessage.objects.filter(inbox_message_id__in=[m.pk for m in messages]).only("id", "inbox_message")
    }
    brief = {
        "kind": "brief",
        "id": task.pk,
        "source": "task",
        "author": _username(task.created_by),
        "text": redact.text(task.brief),
        "main_message_id": None,
        "created_at": task.created_at,
    }
    return [brief] + [
        {
            "kind": "message",
            "id": m.pk,
            "source": m.source,
            "author": _username(m.author),
            "text": redact.text(m.text),
            "main_message_id": via_main.get(m.pk),
            "created_at": m.created_at,
        }
        for m in messages
    ]


def _decisions(task, version: ArtifactVersion, redact: Redactor) -> list[dict[str, Any]]:
    """The cards of the task up to the version, since the task's previous version of the same artifact."""
    cards = Card.objects.select_related("resolved_by").filter(task_id=task.pk, created_at__lte=version.created_at)
    since = (
        ArtifactVersion.objects.filter(
            artifact_id=version.artifact_id, number__lt=version.number, author_task_id=task.pk
        )
        .order_by("-number")
        .values_list("created_at", flat=True)
        .first()
    )
    if since is not None:
        cards = cards.filter(created_at__gt=since)
    return [
        {
            "card_id": c.pk,
            "kind": c.kind,
            "title": redact.text(c.title),
            "status": c.status,
            "resolution": redact.tree(c.resolution),
            "resolved_by": _username(c.resolved_by),
            "resolved_at": c.resolved_at,
            "created_at": c.created_at,
            **_approved(c),
        }
        for c in cards.order_by("-created_at", "-id")[:MAX_CARDS]
    ]


def _approved(card: Card) -> dict[str, Any]:
    """What a quote card asked to approve (one approval may cover a whole series, of which a version is one
    charge) and the approval it recorded, which that version's charge names (`approval_id`)."""
    payload = card.payload if isinstance(card.payload, dict) else {}
    resolution = card.resolution if isinstance(card.resolution, dict) else {}
    covers = None
    if card.kind == CardKind.QUOTE and isinstance(payload.get("amount"), int):
        operation = str(payload.get("operation") or "")
        items = payload["items"] if isinstance(payload.get("items"), int) else None
        covers = {
            "operation": operation,
            "items": items,
            "per_item": payload["per_item"] if isinstance(payload.get("per_item"), int) else None,
            "amount": payload["amount"],
            "things": things(operation, items) if items is not None else operation,
        }
    approval = resolution.get("approval")
    return {"covers": covers, "approval_id": approval if isinstance(approval, int) else None}


def _memories(step, workspace_id: int) -> list[dict[str, Any]]:
    ids = [i for i in (step.memory or {}).get("versions", []) if isinstance(i, int)]
    if not ids:
        return []
    versions = MemoryVersion.objects.select_related("memory").filter(workspace_id=workspace_id, pk__in=ids)
    by_id = {v.pk: v for v in versions}
    shown = []
    for pk in dict.fromkeys(ids):
        v = by_id.get(pk)
        if v is None:
            shown.append({"version_id": pk, "kind": "", "subject": "", "status": "deleted", "content": REDACTED})
            continue
        forgotten = v.status == VersionStatus.FORGOTTEN or v.erased_at is not None
        shown.append(
            {
                "version_id": pk,
                "kind": v.kind,
                "subject": REDACTED if forgotten else v.memory.subject,
                "status": v.status,
                "content": REDACTED if forgotten else v.content,
            }
        )
    return shown


def _guides_read(step) -> list[dict[str, Any]]:
    """The creative guides its turn read (agents/tools/guides.py) at steps before the one that made the version:
    the decision that made it had their text in its context. Once per guide version, in the order read."""
    calls = ToolCall.objects.filter(
        turn_id=step.turn_id, name="read_guide", status=ToolCallStatus.DONE, step__index__lt=step.index
    ).order_by("step__index", "index")[:MAX_CALLS]
    found: dict[tuple, dict[str, Any]] = {}
    for call in calls:
        result = call.result if isinstance(call.result, dict) else {}
        if not isinstance(result.get("name"), str) or not isinstance(result.get("version"), int):
            continue
        found.setdefault(
            (result["name"], result["version"]),
            {
                "kind": "guide",
                "name": result["name"],
                "version": result["version"],
                "builtin": bool(result.get("builtin")),
                "artifact_id": result.get("artifact_id") if isinstance(result.get("artifact_id"), int) else None,
                "purpose": str(result.get("purpose") or ""),
                "call_id": call.call_id,
                "read_at": call.finished_at,
            },
        )
    return list(found.values())


def _call(call: ToolCall, redact: Redactor) -> dict[str, Any]:
    return {
        "call_id": call.call_id,
        "name": call.name,
        "status": call.status,
        "input": redact.tree(call.input),
        "result": redact.tree(call.result),
        "error": redact.tree(call.error),
        "started_at": call.started_at,
        "finished_at": call.finished_at,
    }


def version_provenance(*, access: Access, artifact_id: int, number: int) -> Provenance:
    """How version `number` of an artifact of the caller's workspace was made. Viewers may read it."""
    workspace_id = access.workspace.pk
    version = artifact_version_get(workspace_id=workspace_id, artifact_id=artifact_id, number=number)
    artifact = version.artifact
    redact = Redactor(workspace_id).refresh()
    job = GenerationJob.objects.filter(workspace_id=workspace_id, artifact_version_id=version.pk).first()
    source = _source_of(version, job)
    step = source.step if source is not None else None
    turn = step.turn if step is not None else None
    task = turn.task if turn is not None else None
    if task is None and version.author_task_id is not None:
        task = (
            Task.objects.select_related("created_by")
            .filter(pk=version.author_task_id, workspace_id=workspace_id)
            .first()
        )

    lease = getattr(turn, "model_lease", None) if turn is not None else None
    calls = list(step.tool_calls.order_by("index")[:MAX_CALLS]) if step is not None else []
    # Only the order of the call (and its job) that made this version: an order is keyed by its call's id, and
    # the step's other paid calls (the other images of a series) were charged for other versions.
    keys = {k for k in (source.call_id if source else None, job.idempotency_key if job else None) if k}
    orders = Order.objects.filter(workspace_id=workspace_id, idempotency_key__in=keys).order_by("id") if keys else []
    charges = [
        {
            "order_id": o.pk,
            "call_id": o.idempotency_key,
            "operation": o.operation,
            "amount": o.amount,
            "status": o.status,
            "authorisation": o.authorisation,
            "approval_id": o.approval_id,
            "captured": o.status == "captured",
            "released": o.status in ("released", "refunded"),
            "created_at": o.created_at,
            "settled_at": o.settled_at,
        }
        for o in orders
    ]
    if version.author_user_id is not None:
        made_by = "person"
    elif source is not None or version.author_task_id is not None:
        made_by = "agent"
    else:
        made_by = "system"

    return Provenance(
        artifact={
            "id": artifact.pk,
            "kind": artifact.kind,
            "title": artifact.title,
            "version": version.number,
            "current_version": artifact.current_version,
            "media_type": version.media_type,
            "created_at": version.created_at,
        },
        made_by=made_by,
        person=_username(version.author_user) if version.author_user_id is not None else None,
        task={"id": task.pk, "title": redact.text(task.title), "status": task.status} if task is not None else None,
        request=_request(step, task, redact) if step is not None and task is not None else [],
        model=(
            {
                "lease_id": lease.pk,
                "provider": lease.provider,
                "model": lease.model,
                # Only parameters the provider accepts (agents/providers/openai_compat.py checks them): no secret.
                "params": lease.params,
                "leased_at": lease.created_at,
                "base_url_host": _host(lease.base_url),
                "context_tokens": lease.context_tokens,
                "turn_id": turn.pk,
                "turn_number": turn.number,
            }
            if lease is not None
            else None
        ),
        step=(
            {
                "id": step.pk,
                "number": step.number,
                "turn_number": turn.number,
                "model": step.model,
                "text": redact.text(step.text),
                "created_at": step.created_at,
                "made_by_call": source.call_id,
            }
            if step is not None
            else None
        ),
        tool_calls=[_call(c, redact) for c in calls],
        job=(
            {
                "id": job.pk,
                "kind": job.kind,
                "provider": job.provider,
                "status": job.status,
                "prompt": redact.text(job.prompt),
                "params": redact.tree(job.params),
                "call_id": job.idempotency_key,
                "submitted_at": job.submitted_at,
                "finished_at": job.finished_at,
            }
            if job is not None
            else None
        ),
        decisions=_decisions(task, version, redact) if task is not None and made_by == "agent" else [],
        charges=charges,
        derived_from=_derived_from(version, job, workspace_id),
        memories=_memories(step, workspace_id) if step is not None else [],
        sources=_guides_read(step) if step is not None else [],
    )
