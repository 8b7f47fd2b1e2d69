"""What agents feeds long-term memory (DESIGN §8): the person's own words, and a model to read them with.

- `main_message_recorded`: a person's message to Main becomes MAIN_MESSAGE evidence, in the transaction that
  records it;
- `messages_consumed`: the inbox messages a step read that are a person's own words become TASK_MESSAGE
  evidence — except those that delivered a Main message, already evidence as such. A step queues it for a
  worker in its own commit (`messages_consumed_follow`): five statements off the turn's path, none lost;
- `model_extractor`: installed into memory's extractor hook (subscribers.install); reads evidence with the
  task's model (else the workspace's default) when that is a real model endpoint.
Extraction itself runs later in a q-job enqueued after the commit, never in the turn.
"""

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from django.conf import settings
from django.db import transaction

from agents.models import (
    QUIET_SOURCES,
    Card,
    CardKind,
    InboxMessage,
    MainMessage,
    ModelLease,
    ProviderKind,
    Route,
    Task,
)
from agents.providers.base import ModelRequest
from agents.providers.registry import provider_for_lease
from agents.services.turns import lease_for
from lomote.kernel.deferred import enqueue_with_commit, joins_transaction
from memory.models import EvidenceKind
from memory.services.evidence import evidence_record, extraction_enqueue

EXISTING_SHOWN = 40
EXISTING_CHARS = 300
MODEL_TEXT_CHARS = 8000


def main_message_recorded(message: MainMessage) -> int | None:
    """Record a person's Main message as evidence and enqueue its extraction after commit; returns the
    evidence id (None: not a person's words, or forgotten words). Caller's transaction."""
    if message.author_id is None or not message.text:
        return None
    if message.card_id is not None and message.route != Route.CLARIFY:
        # The person answered the Router's clarification card: these words are the original message's,
        # recorded with it when the card was opened.
        if Card.objects.filter(pk=message.card_id, kind=CardKind.CLARIFY, task__isnull=True).exists():
            return None
    evidence = evidence_record(
        workspace_id=message.workspace_id,
        kind=EvidenceKind.MAIN_MESSAGE,
        source_id=message.pk,
        text=message.text,
        stated_by_id=message.author_id,
        task_id=message.task_id,
    )
    if evidence is None:
        return None
    if evidence.extracted_at is None:
        extraction_enqueue(evidence.pk)
    return evidence.pk


def messages_consumed_follow(*, task_id: int, message_ids: Sequence[int]) -> None:
    """Have a worker record the consumed messages as evidence (`messages_consumed`), by a message that commits
    with the step's transaction (lomote/kernel/deferred.py). Where a message could be lost after the commit (no
    ORM broker in this database) they are recorded here, in the step's transaction, as nothing would find them
    again. Either way idempotent: a replay records nothing new."""
    if not message_ids:
        return
    if not joins_transaction(InboxMessage):
        messages_consumed(task_id=task_id, message_ids=message_ids)
        return
    ids = sorted(message_ids)
    enqueue_with_commit(
        "agents.tasks.messages_consumed_record",
        task_id,
        ids,
        name=f"memory-feed-{task_id}-{ids[0]}",
        group="memory",
        timeout=settings.LOMOTE_TASK_TIMEOUTS["default"],
        written_with=InboxMessage,
    )


@transaction.atomic
def messages_consumed_record(*, task_id: int, message_ids: Sequence[int]) -> list[int]:
    """The queued recording (`messages_consumed_follow`), in a transaction of its own."""
    return messages_consumed(task_id=task_id, message_ids=message_ids)


def messages_consumed(*, task_id: int, message_ids: Sequence[int]) -> list[int]:
    """Record the consumed inbox messages of a task that are a person's own words (an author, not a runtime
    note) as evidence, and enqueue their extraction after commit; returns the evidence ids. Call it in the
    transaction that marks them consumed. Idempotent: a replayed step records nothing new."""
    if not message_ids:
        return []
    delivered_from_main = MainMessage.objects.filter(inbox_message_id__in=message_ids).values("inbox_message_id")
    messages = (
        InboxMessage.objects.filter(pk__in=message_ids, task_id=task_id, author__isnull=False)
        .exclude(source__in=QUIET_SOURCES)
        .exclude(pk__in=delivered_from_main)
        .select_related("task")
        .order_by("pk")
    )
    recorded = []
    for message in messages:
        evidence = evidence_record(
            workspace_id=message.task.workspace_id,
            kind=EvidenceKind.TASK_MESSAGE,
            source_id=message.pk,
            text=message.text,
            stated_by_id=message.author_id,
            task_id=task_id,
        )
        if evidence is None:
            continue
        if evidence.extracted_at is None:
            extraction_enqueue(evidence.pk)
        recorded.append(evidence.pk)
    return recorded


# --- the model extractor ------------------------------------------------------------------------------------

INSTRUCTIONS = """You extract long-term memories from one message a person wrote in a creative studio.
Keep only what the person explicitly states about their lasting tastes, their brand or their way of working,
and one-off instructions for the current piece of work. Ignore requests for work, questions, and feedback on
the work at hand.
Answer with JSON only, no prose and no code fence, exactly this shape:
{"memories": [{"content": "...", "subject": "...", "kind": "preference|instruction|fact", "scope": "workspace|person"}]}
- content: the statement as it should be remembered, in the person's language, one statement per item.
- subject: what it is about, a short lower-case English noun phrase ("brand main colour", "logo position",
  "title font"). When the statement is about an existing memory's subject, reuse that subject exactly; when it
  adds to that memory rather than replacing it, give the whole merged statement as content.
- kind: preference (lasting taste or standing rule: "I prefer", "always", "never"), instruction (only for this
  time: "this time", "for this one"), fact (stated about the brand or the person: "our logo is a fox").
- scope: person when the person speaks of themselves ("I", "my"), workspace for the brand or the team.
Return {"memories": []} when there is nothing to remember."""

_JSON = re.compile(r"[\[{].*[\]}]", re.DOTALL)


def _lease(workspace_id: int, task_id: int | None) -> ModelLease:
    """The lease a turn of the evidence's task would take (unsaved); for words said to Main, the workspace's."""
    task = None
    if task_id is not None:
        task = Task.objects.filter(pk=task_id, workspace_id=workspace_id).select_related("model_profile").first()
    # An unsaved task has no profile of its own: lease_for then takes the workspace's default profile.
    return lease_for(task or Task(workspace_id=workspace_id))


def model_extractor(
    *, workspace_id: int, task_id: int | None, text: str, language: str, existing: Sequence[Mapping]
) -> list[Any] | None:
    """Ask the task's model (else the workspace default) for candidates when it is an OpenAI-compatible
    endpoint; None for the scripted and replay kinds, so memory uses its own scripted extractor. Returns the
    parsed items unvalidated (memory checks each); raises on an answer that is not JSON, so it is retried."""
    lease = _lease(workspace_id, task_id)
    if lease.provider != ProviderKind.OPENAI_COMPAT:
        return None
    shown = [
        {"subject": m.get("subject"), "content": str(m.get("content", ""))[:EXISTING_CHARS], "kind": m.get("kind")}
        for m in list(existing)[:EXISTING_SHOWN]
    ]
    prompt = json.dumps(
        {"language": language, "existing_memories": shown, "message": text[:MODEL_TEXT_CHARS]}, ensure_ascii=False
    )
    response = provider_for_lease(lease).complete(
        ModelRequest(
            model=lease.model,
            params=lease.params,
            messages=[{"role": "system", "content": INSTRUCTIONS}, {"role": "user", "content": prompt}],
            tools=[],
            state={"memory_extraction": True},
        )
    )
    return memories_parse(response.text)


def memories_parse(answer: str) -> list[Any]:
    """The items of a model's JSON answer ({"memories": [...]} or a bare list), unvalidated; ValueError when
    there is no JSON in it."""
    found = _JSON.search(answer or "")
    if found is None:
        raise ValueError("the model's answer holds no JSON")
    parsed = json.loads(found.group(0))
    items = parsed.get("memories") if isinstance(parsed, dict) else parsed
    if not isinstance(items, list):
        raise ValueError("the model's answer has no list of memories")
    return items
