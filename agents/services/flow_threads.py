"""Running a Flow over a conversation thread, and posting its result back there (seed 002, "/ai-runs": a run reads
a thread's messages, then runs a stored workflow on that context).

A thread is the workspace's Main thread or a task's conversation:
- Main: the Main messages (the person's words and Main's replies, and earlier Flow results);
- a task: its inbox (the person's messages, earlier Flow results; not withdrawn or replaced ones, not the
  runtime's notes to the model) and what its agent said (the text of its steps).
`flow_thread_run_request` reads the thread's N most recent messages (default 20, at most 50) as a transcript,
bounded in size and with what a person asked to forget redacted, and starts the run with it as its `text`
input through the Flow run request every run takes (agents/services/flow_runs.py): the same pricing, holds,
spend policy and quote cards. The run keeps its thread (FlowRun.thread), so its `flow.run` and `flow.node`
events name it and the studio shows the run live in that thread.

Each time the run ends (done, failed, or declined before it ran) workspace publishes FLOW_RUN_ENDED in the
transaction that ended it, and `flow_result_post` posts the result into the thread in that same transaction:
- Main: a Main message with route `flow` and no author. It is not a person's message: it is never routed, and
  its words are not memory evidence.
- a task: an inbox message with source `flow`. The person sees it in the task's conversation; the agent reads it
  with its other messages at its next turn (a turn already running reads it at its next boundary, as any
  message). Like the runtime's notes it never starts a turn by itself (the watchdog skips it), and it is not
  the person's words (no memory evidence, never "the message that asked").
Once per end: the message records (run, end number) under a unique constraint, so the end processed twice posts
one message, and a retry or a stale re-run that ends the run again posts its new result.
"""

from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.utils.translation import gettext_noop

from agents.models import (
    FLOW_RESULT,
    RUNTIME_NOTE,
    InboxMessage,
    InboxStatus,
    MainMessage,
    Route,
    Step,
    Task,
    TaskStatus,
)
from agents.services.flow_runs import FlowRunRequest, flow_run_request
from agents.services.forgotten import Redactor
from lomote.kernel.exceptions import Conflict, NotFound
from workspace.models import Artifact, FlowRun, FlowThread, Role
from workspace.selectors import Access
from workspace.services.events import event_append

DEFAULT_MESSAGES = 20
MAX_MESSAGES = 50
MESSAGE_CHARS = 2_000  # one message in the transcript, clipped
TRANSCRIPT_CHARS = 12_000  # the whole transcript: the oldest messages drop first (runs take 20 KB of inputs)
RESULT_CHARS = 4_000  # a posted result's text


@dataclass(frozen=True)
class Thread:
    kind: str  # FlowThread.MAIN or FlowThread.TASK
    task_id: int | None = None

    @classmethod
    def of(cls, ref: str | dict[str, Any]) -> "Thread":
        """From the API's spelling: "main" or {"task": id} (the serializer checked the shape)."""
        if ref == "main":
            return cls(FlowThread.MAIN)
        return cls(FlowThread.TASK, int(ref["task"]))


def _clip(text: str, limit: int) -> str:
    text = (text or "").strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- the transcript --------------------------------------------------------------------------------------


def _task_messages(task: Task, limit: int) -> list[tuple[Any, str, str]]:
    """(when, who, text) of the task's conversation, newest last: the inbox and its agent's words."""
    inbox = (
        InboxMessage.objects.filter(task=task, status__in=[InboxStatus.PENDING, InboxStatus.CONSUMED])
        .exclude(source=RUNTIME_NOTE)  # the runtime's notes are instructions to the model, not the conversation
        .select_related("author")
        .order_by("-id")[:limit]
    )
    steps = Step.objects.filter(turn__task=task).exclude(text="").order_by("-id")[:limit]
    entries = []
    for message in inbox:
        if message.source == FLOW_RESULT:
            who = "Flow"
        elif message.author is not None:
            who = message.author.username
        else:
            who = "API client"
        entries.append((message.created_at, who, message.text))
    entries += [(step.created_at, "Agent", step.text) for step in steps]
    return sorted(entries, key=lambda e: e[0])[-limit:]


def _main_messages(workspace_id: int, limit: int) -> list[tuple[Any, str, str]]:
    """(when, who, text) of the Main thread, newest last: the person's messages, Main's replies, Flow results."""
    rows = MainMessage.objects.filter(workspace_id=workspace_id).select_related("author").order_by("-id")[:limit]
    entries = []
    for row in reversed(rows):
        if row.route == Route.FLOW:
            entries.append((row.created_at, "Flow", row.text))
            continue
        entries.append((row.created_at, row.author.username if row.author else "API client", row.text))
        if row.reply:
            entries.append((row.created_at, "Main", row.reply))
    return entries[-limit:]


def thread_transcript(*, workspace_id: int, thread: Thread, messages: int = DEFAULT_MESSAGES) -> str:
    """The thread's `messages` most recent messages as "who: text" lines, oldest first, within TRANSCRIPT_CHARS
    (the oldest drop first). What a person asked to forget is redacted, as in any context a model reads."""
    limit = max(1, min(int(messages), MAX_MESSAGES))
    if thread.kind == FlowThread.TASK:
        entries = _task_messages(Task.objects.get(pk=thread.task_id, workspace_id=workspace_id), limit)
    else:
        entries = _main_messages(workspace_id, limit)
    redact = Redactor(workspace_id).refresh()
    lines: list[str] = []
    size = 0
    for _, who, text in reversed(entries):
        line = f"{who}: {redact.text(_clip(text, MESSAGE_CHARS))}"
        if size + len(line) + 1 > TRANSCRIPT_CHARS:
            break
        lines.append(line)
        size += len(line) + 1
    return "\n".join(reversed(lines))


# --- starting a run ---------------------------------------------------------------------------------------


def _check_thread(access: Access, thread: Thread) -> None:
    """The thread is the caller's: another workspace's task, or none, is 404; a task that takes no more messages
    cannot be answered in (409, as a message to it would be)."""
    if thread.kind != FlowThread.TASK:
        return
    task = Task.objects.filter(pk=thread.task_id, workspace=access.workspace).first()
    if task is None:
        raise NotFound(gettext_noop("Task not found."))
    if task.status == TaskStatus.CANCELLED:
        raise Conflict("This task was cancelled; it takes no more messages.", code="task_cancelled")
    if task.is_archived:
        raise Conflict("This task is archived; unarchive it to run a Flow in it.", code="task_archived")


@transaction.atomic
def flow_thread_run_request(
    *,
    access: Access,
    artifact_id: int,
    thread: Thread,
    messages: int = DEFAULT_MESSAGES,
    idempotency_key: str | None = None,
) -> FlowRunRequest:
    """Run the Flow over the thread's recent messages (module docstring). Editors and owners only.

    A repeated idempotency key returns the run it started, whatever was said in the thread since; the same key
    for another Flow or thread is 409 `idempotency_key_reuse`."""
    access.require(Role.EDITOR)
    _check_thread(access, thread)
    inputs = None
    if idempotency_key is not None:
        # The transcript moves on as people talk: the request is the same if its Flow and thread are.
        inputs = (
            FlowRun.objects.filter(workspace=access.workspace, idempotency_key=idempotency_key)
            .values_list("inputs", flat=True)
            .first()
        )
    if inputs is None:
        text = thread_transcript(workspace_id=access.workspace.pk, thread=thread, messages=messages)
        inputs = {"text": text}
    return flow_run_request(
        workspace_id=access.workspace.pk,
        artifact_id=artifact_id,
        inputs=inputs,
        started_by=access.user,
        api_request=access.api_key is not None,
        idempotency_key=idempotency_key,
        thread=thread.kind,
        thread_task_id=thread.task_id,
    )


# --- posting the result -----------------------------------------------------------------------------------


def _result_text(*, workspace_id: int, run_id: int, artifact_id: int, status: str, outputs, error) -> str:
    title = Artifact.objects.filter(pk=artifact_id, workspace_id=workspace_id).values_list("title", flat=True).first()
    head = f"Flow “{title or f'#{artifact_id}'}” (run #{run_id})"
    outputs = outputs if isinstance(outputs, dict) else {}
    error = error if isinstance(error, dict) else {}
    if status == "done":
        text = _clip(str(outputs.get("text") or ""), RESULT_CHARS)
        made = [
            f"artifact #{a['artifact']} v{a.get('version')}"
            for a in outputs.get("artifacts") or []
            if isinstance(a, dict) and a.get("artifact")
        ]
        body = text or "finished with no text."
        # The offline writer's note: a person reading the thread knows no model wrote this.
        notes = [f"({note})" for note in outputs.get("notes") or [] if isinstance(note, str)]
        return f"{head}:\n{body}" + (f"\nMade: {', '.join(made)}." if made else "") + "".join(f"\n{n}" for n in notes)
    if status == "cancelled":
        why = "its spending was declined" if error.get("code") == "spending_declined" else "it was cancelled"
        return f"{head} did not run: {why}."
    failed = [str(n) for n in error.get("failed") or []]
    return f"{head} failed" + (f" at {', '.join(failed)}." if failed else ".")


def _created(model, **fields):
    """Insert in a savepoint; None when this run's end was already posted (the unique constraint says so)."""
    try:
        with transaction.atomic():
            return model.objects.create(**fields)
    except IntegrityError:
        return None


def flow_result_post(
    *,
    workspace_id: int,
    run_id: int,
    end: int,
    status: str,
    thread: str | dict[str, Any],
    artifact_id: int,
    outputs: Any = None,
    error: Any = None,
    **_: Any,
) -> InboxMessage | MainMessage | None:
    """FLOW_RUN_ENDED: post the run's result to its thread, once per (run, end) (module docstring). Runs in the
    transaction that ended the run, holding the workspace row: it takes no task lock (an inbox message only
    points at its task), so it never waits on a task writer. Returns the message, or None if already posted
    (or the task is gone)."""
    target = Thread.of(thread)
    text = _result_text(
        workspace_id=workspace_id, run_id=run_id, artifact_id=artifact_id, status=status, outputs=outputs, error=error
    )
    once = {"flow_run_id": run_id, "flow_run_end": end}
    if target.kind == FlowThread.TASK:
        if not Task.objects.filter(pk=target.task_id, workspace_id=workspace_id).exists():
            return None
        message = _created(InboxMessage, task_id=target.task_id, source=FLOW_RESULT, text=text, **once)
        if message is not None:
            data = {"task": target.task_id, "message": message.pk, "status": message.status, "source": FLOW_RESULT}
            event_append(workspace_id=workspace_id, kind="inbox.posted", data={**data, "run": run_id})
        return message
    record = _created(MainMessage, workspace_id=workspace_id, text=text, route=Route.FLOW, **once)
    if record is not None:
        event_append(
            workspace_id=workspace_id,
            kind="main.message",
            data={"message": record.pk, "route": Route.FLOW, "task": None, "run": run_id, "delivered": False},
        )
    return record
