"""The turn loop (DESIGN §3): one job runs a turn's steps back to back while it holds the lease.

Each pass decides from the stored log only: finish the last step's calls; or, if the model answered
without tools, end the cycle; or, if a result asked to wait, suspend; otherwise read the inbox at this
safe boundary, build the context, call the model (no transaction held), and commit the decision, its
pending calls and the consumed inbox messages in ONE fenced transaction before any tool runs.
"""

import logging
import os
import socket
import time

from django.conf import settings
from django.db import transaction
from django.db.models import Sum
from django.utils import timezone

from agents.exceptions import Fenced, ModelError
from agents.locks import inbox_qs_for_update
from agents.models import InboxMessage, InboxStatus, ModelLease, Step, ToolCall, Turn, TurnStatus
from agents.providers.base import ModelProvider, ModelResponse
from agents.providers.registry import provider_for_lease
from agents.runtime import cycle
from agents.runtime.context import History, context_build
from agents.runtime.fencing import fence, lease_renew
from agents.runtime.leases import lease_claim
from agents.runtime.toolexec import calls_run
from agents.tools.registry import tool_get
from workspace.services.events import event_append

logger = logging.getLogger(__name__)


def worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


class _InboxChanged(Exception):
    """A message the model read was withdrawn or replaced meanwhile: that decision must not commit."""


def turn_run(*, turn_id: int, generation: int, holder: str | None = None) -> str:
    """Run the turn as generation `generation`. Returns what happened (for logs and tests).

    A duplicate job for the same generation, or a stale one, claims nothing and returns "noop".
    """
    if not lease_claim(turn_id=turn_id, generation=generation, holder=holder or worker_id()):
        return "noop"
    runner = TurnRunner(turn_id, generation)
    try:
        return runner.run()
    except Fenced:
        logger.info("turn %s generation %s was fenced out", turn_id, generation)
        return "fenced"
    except ModelError as exc:
        return cycle.turn_fail(turn_id, generation, code=exc.code, message=exc.message)
    except Exception:
        logger.exception("turn %s generation %s crashed", turn_id, generation)
        return cycle.turn_fail(turn_id, generation, code="runtime_error", message="The runtime failed unexpectedly.")


class TurnRunner:
    def __init__(self, turn_id: int, generation: int, provider: ModelProvider | None = None):
        self.turn_id = turn_id
        self.generation = generation
        self.provider = provider
        self.history: History | None = None
        self.started = time.monotonic()

    def run(self) -> str:
        while True:
            turn = Turn.objects.select_related("task").get(pk=self.turn_id)
            if turn.generation != self.generation or turn.status != TurnStatus.RUNNING:
                raise Fenced()
            last = Step.objects.filter(turn=turn).order_by("-index").first()
            if last is not None:
                calls = list(ToolCall.objects.filter(step=last).order_by("index"))
                if any(not call.is_finished for call in calls):
                    calls_run(turn_id=self.turn_id, generation=self.generation, calls=calls)
                    continue
                if not calls:
                    return cycle.cycle_end(self.turn_id, self.generation)
                if turn.checkpoint.get("suspend"):
                    return cycle.turn_suspend(self.turn_id, self.generation)
                if last.index >= settings.LOMOTE_MAX_STEPS_PER_TURN:
                    return cycle.turn_stop(self.turn_id, self.generation, reason="step_cap")
                if self._tokens_used(turn) >= settings.LOMOTE_MAX_TOKENS_PER_TURN:
                    return cycle.turn_stop(self.turn_id, self.generation, reason="token_cap")
            if time.monotonic() - self.started > settings.LOMOTE_TURN_SLICE_SECONDS:
                return cycle.turn_hand_off(self.turn_id, self.generation)
            try:
                self._step(turn, next_index=(last.index if last else 0) + 1)
            except _InboxChanged:
                continue

    def _tokens_used(self, turn: Turn) -> int:
        totals = Step.objects.filter(turn=turn).aggregate(p=Sum("prompt_tokens"), c=Sum("completion_tokens"))
        return (totals["p"] or 0) + (totals["c"] or 0)

    def _step(self, turn: Turn, *, next_index: int) -> None:
        lease = ModelLease.objects.select_related("secret").get(turn=turn)
        if self.history is None:
            self.history = History(turn.task)
        built = context_build(task=turn.task, turn=turn, lease=lease, history=self.history)
        response = self._infer(lease, built.request)
        with transaction.atomic():
            task, turn = fence(self.turn_id, self.generation)
            if built.new_message_ids:
                read = list(inbox_qs_for_update().filter(pk__in=built.new_message_ids))
                if any(message.status != InboxStatus.PENDING for message in read):
                    raise _InboxChanged()
            step = Step.objects.create(
                turn=turn,
                index=next_index,
                generation=self.generation,
                text=response.text,
                decision=_decision(response),
                model=response.model,
                prompt_tokens=response.usage.prompt_tokens,
                cached_prompt_tokens=response.usage.cached_prompt_tokens,
                completion_tokens=response.usage.completion_tokens,
            )
            ToolCall.objects.bulk_create(
                [
                    ToolCall(
                        turn=turn,
                        step=step,
                        index=i,
                        call_id=f"{turn.pk}:{next_index}:{i}",
                        provider_call_id=intent.id[:200],
                        name=intent.name[:100],
                        input=intent.arguments if isinstance(intent.arguments, dict) else {"_raw": intent.arguments},
                        idempotent=_idempotent(intent.name),
                    )
                    for i, intent in enumerate(response.tool_calls, start=1)
                ]
            )
            if built.new_message_ids:
                InboxMessage.objects.filter(pk__in=built.new_message_ids).update(
                    status=InboxStatus.CONSUMED, consumed_by_step=step, consumed_at=timezone.now()
                )
            event_append(
                workspace_id=task.workspace_id,
                kind="step.committed",
                data={
                    "task": task.pk,
                    "turn": turn.pk,
                    "step": next_index,
                    "text": response.text[:2000],
                    "tool_calls": [intent.name for intent in response.tool_calls],
                    "consumed_messages": built.new_message_ids,
                },
            )

    def _infer(self, lease: ModelLease, request) -> ModelResponse:
        """Call the model with our own bounded retries; the SDK's own retries are off (DESIGN §14)."""
        # The lease never changes within a turn: one provider (and its HTTP client) per run.
        self.provider = self.provider or provider_for_lease(lease)
        provider = self.provider
        attempts = settings.LOMOTE_MODEL_MAX_ATTEMPTS
        for attempt in range(1, attempts + 1):
            lease_renew(self.turn_id, self.generation)
            try:
                return provider.complete(request)
            except ModelError as exc:
                if not exc.retryable or attempt == attempts:
                    raise
                logger.warning("model attempt %s/%s failed (%s); retrying", attempt, attempts, exc.code)
                time.sleep(min(settings.LOMOTE_MODEL_RETRY_BACKOFF * 2 ** (attempt - 1), 10))
        raise AssertionError("unreachable")


def _idempotent(name: str) -> bool:
    tool = tool_get(name)
    # An unknown tool never runs (it fails validation), so repeating its refusal is harmless.
    return True if tool is None else tool.idempotent


def _decision(response: ModelResponse) -> dict:
    return {
        "tool_calls": [{"id": i.id, "name": i.name, "arguments": i.arguments} for i in response.tool_calls],
    }
