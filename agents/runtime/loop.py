"""The turn loop (DESIGN §3): one job runs a turn's steps back to back while it holds the lease.

Each pass decides from the log: finish the last step's calls; or, if the model answered without tools,
end the cycle; or, if a result asked to wait, suspend; otherwise read the inbox at this safe boundary,
build the context, call the model (no transaction held), and commit the decision, its pending calls and
the consumed inbox messages in ONE fenced transaction before any other tool runs. A step costs one read
statement (agents/runtime/snapshot.py) and that one write transaction (agents/runtime/steplog.py); the
decision's leading transactional (database-only) calls run inside it, so their effects and results commit
with the decision that asked for them (toolexec.calls_run_in_decision); any other call runs after it. A step
whose calls are all read-only runs them after its decision commits and records their results with the next
decision, in its statement; that statement also reads the next step's snapshot (nothing the step does after it
changes what the snapshot reads): such a step is ONE statement, a transaction by itself. Likewise, when all of a
step's calls run in its decision's transaction, the last result's statement reads the next snapshot.

The runner reads the log once when it claims the turn, then keeps what it commits in memory: while it
holds the fence nobody else writes this turn's log, and every write it makes re-checks the fence.
"""

import logging
import os
import socket
import time
from contextlib import nullcontext, suppress
from dataclasses import replace
from datetime import datetime
from functools import partial

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Max, Sum
from django.utils import timezone

from agents.exceptions import Fenced, ModelError
from agents.fencing import fence_task, fence_turn, lease_renew
from agents.leases import lease_claim_turn
from agents.locks import inbox_qs_for_update
from agents.models import InboxMessage, InboxStatus, ModelLease, Step, Task, ToolCall, Turn, TurnStatus
from agents.providers.base import ModelProvider, ModelResponse, ToolCallIntent
from agents.providers.registry import provider_for_lease
from agents.runtime import cycle, resumption
from agents.runtime.compaction import compaction_run
from agents.runtime.context import context_build
from agents.runtime.history import History
from agents.runtime.shortpath import approved_short_call, is_short, short_calls, short_item_position
from agents.runtime.snapshot import TaskSnapshot, task_snapshot
from agents.runtime.steplog import decision_write, task_lock_for_decision
from agents.runtime.toolexec import (
    InlineFailed,
    Outcome,
    RunContext,
    calls_record,
    calls_run,
    calls_run_in_decision,
    calls_run_read_only,
    merge_waits,
    read_only,
    transactional,
)
from agents.services.memory_feed import messages_consumed_follow
from agents.services.understanding_scope import reads_in_workspace
from agents.tools.registry import tool_get
from workspace.services.notices import notices_mark_delivered

logger = logging.getLogger(__name__)


def worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


class _InboxChanged(Exception):
    """A message the model read was withdrawn or replaced meanwhile: that decision must not commit."""


def _turn_workspace(*, turn_id: int, **_) -> int | None:
    return Turn.objects.filter(pk=turn_id).values_list("task__workspace_id", flat=True).first()


@reads_in_workspace(_turn_workspace)  # the scripted planner reads words through the workspace's own model
def turn_run(*, turn_id: int, generation: int, holder: str | None = None) -> str:
    """Run the turn as generation `generation`. Returns what happened (for logs and tests).

    A duplicate job for the same generation, or a stale one, claims nothing and returns "noop".
    """
    claimed = lease_claim_turn(turn_id=turn_id, generation=generation, holder=holder or worker_id())
    if claimed is None:
        return "noop"
    runner = TurnRunner(turn_id, generation, claimed=claimed)
    try:
        return runner.run()
    except Fenced:
        logger.info("turn %s generation %s was fenced out", turn_id, generation)
        return "fenced"
    except ModelError as exc:
        with suppress(Fenced):
            runner.results_record()  # what the last step read stays known to the next turn
        return cycle.turn_fail(turn_id, generation, code=exc.code, message=exc.message)
    except Exception:
        logger.exception("turn %s generation %s crashed", turn_id, generation)
        return cycle.turn_fail(turn_id, generation, code="runtime_error", message="The runtime failed unexpectedly.")


class TurnRunner:
    def __init__(
        self, turn_id: int, generation: int, provider: ModelProvider | None = None, claimed: Turn | None = None
    ):
        self.turn_id = turn_id
        # The turn and its task as the claim that started this run read them, committed: not read a second time.
        self.claimed = claimed
        self.generation = generation
        self.provider = provider
        self.started = time.monotonic()
        self.lease_expires: datetime | None = None
        # The last step's read-only calls, run since its decision committed: the next decision records them.
        self.unrecorded: list[ToolCall] = []
        # What that decision's statement read of the task for the next step (steplog.decision_write's snapshot).
        self.next_snapshot: TaskSnapshot | None = None

    def run(self) -> str:
        turn, self.claimed = self.claimed or Turn.objects.select_related("task").get(pk=self.turn_id), None
        if turn.generation != self.generation or turn.status != TurnStatus.RUNNING:
            raise Fenced()
        task = turn.task
        self.turn = turn
        self.lease_expires = turn.lease_expires_at
        self.run_ctx = RunContext(self.turn_id, self.generation, task.pk, task.workspace_id)
        # A lightweight task's turn is one step (agents/runtime/shortpath.py), decided here from its kind.
        self.short = is_short(task)
        self.lease = ModelLease.objects.select_related("secret").get(turn=turn)
        resume = turn.checkpoint.get("resume")
        if resume and not resume.get("verdict"):
            # Taken over, restarted, or started over an interrupted call: settle and re-check before any decision.
            ended = self._resume_check(task.pk, resume.get("reason") or "takeover")
            if ended is not None:
                return ended
            turn.refresh_from_db(fields=["checkpoint", "made_progress"])
        self.history = History(task, turn_id=turn.pk)
        waiting = bool(turn.checkpoint.get("suspend"))
        tokens = Step.objects.filter(turn=turn).aggregate(p=Sum("prompt_tokens"), c=Sum("completion_tokens"))
        self.tokens = (tokens["p"] or 0) + (tokens["c"] or 0)
        # Steps are numbered across the task's turns; only this runner adds any while it holds the turn.
        self.step_number = Step.objects.filter(turn__task_id=task.pk).aggregate(n=Max("number"))["n"] or 0
        last = Step.objects.filter(turn=turn).order_by("-index").first()
        calls = list(ToolCall.objects.filter(step=last).order_by("index")) if last else []
        consumed: list[str] = []  # texts the last step read, for the history (known only for our own steps)

        while True:
            if last is not None:
                if any(not call.is_finished for call in calls):
                    outcomes = calls_run(self.run_ctx, calls)
                    waiting = waiting or any(o.tool_result and o.tool_result.suspend for o in outcomes)
                    continue
                if self.history.loaded:  # else the first context build reads it from the log
                    self.history.add(last, calls, consumed)
                end = self._end_after(last, calls, waiting)
                if end is not None:
                    self.results_record()
                    return end(self.turn_id, self.generation, task.pk)
            if time.monotonic() - self.started > settings.LOMOTE_TURN_SLICE_SECONDS:
                self.results_record()
                return cycle.turn_hand_off(self.turn_id, self.generation, task.pk)
            try:
                last, calls, consumed, suspended = self._step(task.pk, last, calls)
                waiting = waiting or suspended
            except _InboxChanged:
                continue

    def _end_after(self, last: Step, calls: list[ToolCall], waiting: bool):
        """How the turn ends after its last step, if it does: a `cycle` function of (turn, generation, task)."""
        if self.short:  # its one step is taken: wait for the result it asked for, or end the cycle
            return cycle.turn_suspend if waiting else cycle.cycle_end
        if not calls:
            return cycle.cycle_end
        if waiting:
            return cycle.turn_suspend
        if last.index >= settings.LOMOTE_MAX_STEPS_PER_TURN:
            return partial(cycle.turn_stop, reason="step_cap")
        if self.tokens >= settings.LOMOTE_MAX_TOKENS_PER_TURN:
            return partial(cycle.turn_stop, reason="token_cap")
        return None

    def results_record(self) -> None:
        """Record the last step's read-only results now, when no next decision will carry them."""
        if self.unrecorded:
            calls_record(self.run_ctx, self.unrecorded)
            self.unrecorded = []

    def _resume_check(self, task_id: int, reason: str) -> str | None:
        """Judge the task's checkpoint under the fence (agents/runtime/resumption.py), and end the turn in the
        same transaction when the verdict stops it. None: the turn goes on."""
        with transaction.atomic():
            fence_task(self.turn_id, self.generation, task_id)
            task, turn = Task.objects.get(pk=task_id), Turn.objects.get(pk=self.turn_id)  # both locked now
            judged = resumption.judge(task)
            outcome, settled = resumption.apply(task, judged, reason=reason, turn=turn)
            if settled is not None and settled.suspend:
                # The settled call asked to wait (its job runs): like a result written by this turn.
                turn.checkpoint = {
                    **turn.checkpoint,
                    "suspend": merge_waits(turn.checkpoint.get("suspend"), settled.suspend),
                }
                Turn.objects.filter(pk=self.turn_id).update(checkpoint=turn.checkpoint)
            if outcome not in ("go", "wait_jobs", "replay"):
                return cycle.turn_end_after_resume(task, turn, outcome=outcome)
        foreign = judged.call is None or judged.call.turn_id != self.turn_id
        if outcome == "replay" and foreign:
            # A call an ended turn left started, which nothing proves happened (DESIGN §11, the replay contract): it
            # runs again here under its own id; then the turn waits on what it started, or goes on.
            outcomes = calls_run(self.run_ctx, [judged.call])
            if any(o.tool_result and o.tool_result.suspend for o in outcomes):
                return cycle.turn_suspend(self.turn_id, self.generation, task_id)
            return None
        if outcome == "wait_jobs" and foreign:
            return cycle.turn_suspend(self.turn_id, self.generation, task_id)
        # A call settled, or to run again, in this turn's last step: the loop runs what is unfinished first (the
        # interrupted call under its own id), then suspends if a call asked to wait.
        return None

    def _step(self, task_id: int, last: Step | None, last_calls: list[ToolCall]):
        index = (last.index if last else 0) + 1

        def build():
            # One statement reads the task, its inbox, checklist, cards, notices, spending and profile from one
            # snapshot (agents/runtime/snapshot.py): no transaction of its own needed. After a step of read-only
            # calls, the decision's own statement has read it (they changed nothing since): used once.
            snapshot, self.next_snapshot = self.next_snapshot or task_snapshot(task_id), None
            built = context_build(
                task=snapshot.task,
                turn=self.turn,
                lease=self.lease,
                history=self.history,
                last_index=index - 1,
                last_calls=last_calls if last else None,
                snapshot=snapshot,
                short=self.short,
            )
            return snapshot.task, built

        task, built = build()
        if compaction_run(
            task=task,
            lease=self.lease,
            history=self.history,
            provider=self._provider(),
            request_tokens=built.tokens,
            fence=(self.turn_id, self.generation),
        ):
            task, built = build()
        response = self._infer(built.request)
        intents, dropped = list(response.tool_calls), []
        if self.short:
            # One call to a tool that makes the result, on the task's one item; the rest never runs.
            position = short_item_position(built.request.state.get("checklist") or [])
            intents, dropped = short_calls(intents, position=position)
            approved = approved_short_call(task_id, self.turn_id, built.request.state.get("turn_trigger") or "")
            if approved is not None:  # the person approved that very call: it runs as it was proposed
                dropped += [{"id": i.id, "name": i.name, "reason": "approved_call_runs"} for i in intents]
                intents = [approved]
        # A step of read-only calls runs them once its decision is committed and leaves their results to the next
        # decision (toolexec.calls_run_read_only); otherwise transactional calls at the head of the decision run
        # in its transaction (toolexec.calls_run_in_decision).
        deferred = not self.short and bool(intents) and all(read_only(intent.name) for intent in intents)
        inline = not deferred and bool(intents) and transactional(intents[0].name)
        record = dict(
            step_fields={
                "index": index,
                "number": self.step_number + 1,
                "generation": self.generation,
                "text": response.text,
                "decision": _decision(response, dropped),
                "model": response.model,
                "prompt_tokens": response.usage.prompt_tokens,
                "cached_prompt_tokens": response.usage.cached_prompt_tokens,
                "completion_tokens": response.usage.completion_tokens,
                "prefix_hash": built.prefix_hash,
                "context_tokens": built.tokens,
                "visible_tools": built.visible_tools,
                "memory": built.memory,
            },
            calls=[
                {
                    "index": i,
                    "call_id": f"{self.turn_id}:{index}:{i}",
                    "provider_call_id": intent.id[:200],
                    "name": intent.name[:100],
                    "input": _call_input(intent),
                    "idempotent": _idempotent(intent.name),
                }
                for i, intent in enumerate(intents, start=1)
            ],
            event={
                "task": task_id,
                "turn": self.turn_id,
                "step": index,
                "text": response.text[:2000],
                "tool_calls": [intent.name for intent in intents],
                "consumed_messages": built.new_message_ids,
            },
        )
        failed: dict[int, Outcome] = {}
        while True:
            try:
                written, outcomes = self._decide(task_id, record, built, inline, deferred, failed)
                break
            except InlineFailed as failure:  # all of it rolled back: again, with that call's failure recorded
                failed[failure.index] = failure.outcome
        self.unrecorded = []  # recorded by that decision
        self.next_snapshot = written.snapshot
        if deferred:
            outcomes, self.unrecorded = calls_run_read_only(self.run_ctx, written.calls, written.task)
        step = written.step
        self.lease_expires = written.lease_expires
        self.tokens += response.usage.prompt_tokens + response.usage.completion_tokens
        self.step_number = step.number
        suspended = any(o.tool_result and o.tool_result.suspend for o in outcomes)
        return step, written.calls, [text for _, text in built.new_messages], suspended

    def _decide(self, task_id: int, record: dict, built, inline: bool, deferred: bool, failed: dict[int, Outcome]):
        """The decision's ONE fenced write: the step, its pending calls and event (`record`), the last step's
        read-only results, the consumed inbox and notices, and its leading transactional calls run with their
        results. Raises InlineFailed (nothing kept) when one of those calls fails; `failed` holds the failures
        already known, recorded without running them again.

        On PostgreSQL a decision that consumes nothing and runs no call in its transaction is the decision
        statement alone, which is atomic by itself: no BEGIN and COMMIT round trips around it.
        """
        message_ids = built.new_message_ids
        needs_task = inline or deferred  # their calls' checks read the task's role, permissions and autonomy
        alone = not (inline or message_ids or built.notice_ids) and connection.vendor == "postgresql"
        outcomes = []
        with nullcontext() if alone else transaction.atomic():
            # Every writer locks in the order task, turn, inbox. A decision that reads messages locks the task
            # (when its calls need it), then the turn (fence), then the messages; any other decision's own
            # statement locks the task before the turn.
            locked = task_lock_for_decision(task_id) if needs_task and message_ids else None
            if message_ids:
                fence_turn(self.turn_id, self.generation)
                read = list(inbox_qs_for_update().filter(pk__in=message_ids))
                if any(message.status != InboxStatus.PENDING for message in read):
                    raise _InboxChanged()  # a message the model read was withdrawn or replaced: void
            written = decision_write(
                turn_id=self.turn_id,
                generation=self.generation,
                workspace_id=self.run_ctx.workspace_id,
                **record,
                task_id=task_id if needs_task and locked is None else None,
                results=self.unrecorded,
                # Its statement reads the next step's snapshot when it is the whole transaction and its calls
                # change nothing: a later statement (consumed inbox, notices, inline calls) would make it stale.
                snapshot=deferred and alone,
            )
            if locked is not None:
                written = replace(written, task=locked)
            if message_ids:
                InboxMessage.objects.filter(pk__in=message_ids).update(
                    status=InboxStatus.CONSUMED, consumed_by_step=written.step, consumed_at=timezone.now()
                )
                # What the person said becomes evidence for memory: recorded, then extracted, by q-jobs whose
                # message commits with this decision (agents/services/memory_feed.py).
                messages_consumed_follow(task_id=task_id, message_ids=message_ids)
            if built.notice_ids:
                notices_mark_delivered(task_id=task_id, ids=built.notice_ids)
            if inline:
                outcomes, snapshot = calls_run_in_decision(self.run_ctx, written.calls, written.task, failed)
                written = replace(written, snapshot=snapshot)
        return written, outcomes

    def _provider(self) -> ModelProvider:
        # The lease never changes within a turn: one provider (and its HTTP client) per run.
        self.provider = self.provider or provider_for_lease(self.lease)
        return self.provider

    def _infer(self, request) -> ModelResponse:
        """Call the model with our own bounded retries; the SDK's own retries are off (DESIGN §14)."""
        self._provider()
        attempts = settings.LOMOTE_MODEL_MAX_ATTEMPTS
        for attempt in range(1, attempts + 1):
            self._keep_lease()
            try:
                return self.provider.complete(request)
            except ModelError as exc:
                if not exc.retryable or attempt == attempts:
                    raise
                logger.warning("model attempt %s/%s failed (%s); retrying", attempt, attempts, exc.code)
                time.sleep(min(settings.LOMOTE_MODEL_RETRY_BACKOFF * 2 ** (attempt - 1), 10))
        raise AssertionError("unreachable")

    def _keep_lease(self) -> None:
        """Renew before an inference unless the last fenced write left the lease long enough for it.

        Every fenced write renews the lease, so on the hot path this costs nothing; after a slow tool or a
        retry it is one short transaction, which also checks we still hold the turn before a paid call.
        """
        needed = settings.LOMOTE_MODEL_TIMEOUT + 5
        if self.lease_expires is None or (self.lease_expires - timezone.now()).total_seconds() < needed:
            with transaction.atomic():
                self.lease_expires = lease_renew(self.turn_id, self.generation)


def _idempotent(name: str) -> bool:
    tool = tool_get(name)
    # An unknown tool never runs (it fails validation), so repeating its refusal is harmless.
    return True if tool is None else tool.idempotent


def _call_input(intent: ToolCallIntent) -> dict:
    """A call's logged input. Arguments that are not an object, or a call the provider found invalid even after
    its repair round, are kept aside (`_raw`, `_invalid`): toolexec records that failure and never runs it."""
    if intent.error is not None:
        return {"_raw": intent.arguments, "_invalid": intent.error}
    return intent.arguments if isinstance(intent.arguments, dict) else {"_raw": intent.arguments}


def _decision(response: ModelResponse, dropped: list[dict] | None = None) -> dict:
    """What the model proposed, as it proposed it; on a short step, also what the runtime did not run. How the
    calls were read (structured, or from the text in which format), whether a repair round was needed and the
    tool_choice form the server took are kept when the provider says (DESIGN §10)."""
    decision: dict = {
        "tool_calls": [{"id": i.id, "name": i.name, "arguments": i.arguments} for i in response.tool_calls],
    }
    if response.call_format:
        decision["call_format"] = response.call_format
    if response.repaired:
        decision["repaired"] = True
    if response.tool_choice:
        decision["tool_choice"] = response.tool_choice
    if dropped:
        decision["dropped"] = dropped
    return decision
