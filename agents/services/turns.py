"""Starting turns. A turn is one run of a task's worker; the queue only wakes it (DESIGN §3)."""

import hashlib
import json
from typing import Any

from django.db.models import Max
from django.utils import timezone

from agents.models import (
    ACTIVE_TURN_STATUSES,
    ModelLease,
    ModelProfile,
    ProviderKind,
    Task,
    TaskStatus,
    ToolCall,
    ToolCallStatus,
    Turn,
)
from agents.queue import enqueue_turn
from agents.services.cards import checklist_item_unstart
from agents.services.task_status import task_status_set
from billing.selectors import spend_policy_get
from workspace.services.events import event_append

SCRIPTED_DEFAULT = {"provider": ProviderKind.SCRIPTED, "model": "lomote-scripted-planner-1", "base_url": ""}


def active_turn(task: Task) -> Turn | None:
    return task.turns.filter(status__in=ACTIVE_TURN_STATUSES).first()


def turn_start(*, task: Task, trigger: str, resume_check: str | None = None) -> Turn:
    """Queue the task's next turn and enqueue its job after commit; returns the active turn if one exists.

    Needs the task row lock (the caller's transaction): that lock is what makes "no active turn" true.
    The turn's first act is a resume check (agents/runtime/resumption.py) when `resume_check` names why, or
    when an earlier turn left a call started with its outcome unknown; otherwise what the work relies on (the
    task's basis) is the present.
    """
    existing = active_turn(task)
    if existing is not None:
        return existing
    unrun_calls_close(task, reason="a new turn started")
    number = (task.turns.aggregate(last=Max("number"))["last"] or 0) + 1
    if resume_check is None and interrupted_calls(task).exists():
        resume_check = "interrupted_call"
    checkpoint = {"resume": {"reason": resume_check}} if resume_check else {}
    turn = Turn.objects.create(
        task=task, number=number, trigger=trigger, enqueued_at=timezone.now(), checkpoint=checkpoint
    )
    lease = _lease_model(turn, task)
    if not resume_check:
        task.basis = basis_now(task, lease)
    saved = ("basis",) if not resume_check else ()
    if not task_status_set(task, TaskStatus.ACTIVE, waiting_for={}, summary=False, also_save=saved) and saved:
        Task.objects.filter(pk=task.pk).update(basis=task.basis)
    event_append(
        workspace_id=task.workspace_id,
        kind="turn.queued",
        data={"task": task.pk, "turn": turn.pk, "number": number, "trigger": trigger},
    )
    enqueue_turn(turn.pk, turn.generation)
    return turn


def _lease_model(turn: Turn, task: Task) -> ModelLease:
    """Fix the turn's exact model. Copied once from the task's (or workspace's default) profile."""
    lease = lease_for(task)
    lease.turn = turn
    lease.save(force_insert=True)
    return lease


def unrun_calls_close(task: Task, *, reason: str) -> int:
    """Calls the model decided in a turn that has ended, which no worker started, are never run: an ended turn is
    never resumed (the next turn is a new one). They fail as `not_started` — the model reads that next time — and
    the checklist items they were for are pending again: an item left "in progress" is never started twice, and
    the task stalled with it (a pause, a takeover ended by a resume review; found by the scenarios and the soak).
    """
    unrun = list(
        ToolCall.objects.filter(turn__task=task, status=ToolCallStatus.PENDING)
        .exclude(turn__status__in=ACTIVE_TURN_STATUSES)
        .values_list("pk", "input")
    )
    error = {"code": "not_started", "message": f"The turn ended ({reason}) before this call ran: nothing was done."}
    closed = ToolCall.objects.filter(pk__in=[pk for pk, _ in unrun], status=ToolCallStatus.PENDING).update(
        status=ToolCallStatus.FAILED, error={**error, "details": {}}, finished_at=timezone.now()
    )
    for _, arguments in unrun:
        checklist_item_unstart(task.pk, arguments)
    return closed


def interrupted_calls(task: Task):
    """Calls of the task left `started` by a turn that ended: their outcome is unknown until a resume settles it."""
    return ToolCall.objects.filter(turn__task=task, status=ToolCallStatus.STARTED).exclude(
        turn__status__in=ACTIVE_TURN_STATUSES
    )


def config_of(task: Task, lease: ModelLease | None = None) -> dict[str, Any]:
    """The configuration a task's work runs under: its exact model (as a lease fixes it) and the spending policy.
    The key is never part of it — only which stored secret is used."""
    lease = lease or lease_for(task)
    policy = spend_policy_get(workspace_id=task.workspace_id)
    return {
        "model": {
            "provider": lease.provider,
            "model": lease.model,
            "base_url": lease.base_url,
            "params": lease.params,
            "context_tokens": lease.context_tokens,
            "secret": lease.secret_id,
        },
        "policy": {
            "no_confirm_threshold": policy.no_confirm_threshold,
            "daily_no_confirm_cap": policy.daily_no_confirm_cap,
        },
    }


def config_version(config: dict[str, Any]) -> str:
    canonical = json.dumps(config, sort_keys=True, separators=(",", ":"), default=str)
    return "cfg-" + hashlib.sha256(canonical.encode()).hexdigest()[:12]


def basis_now(task: Task, lease: ModelLease | None = None) -> dict[str, Any]:
    """What the work relies on if it starts now: the goal revision and the configuration."""
    config = config_of(task, lease)
    return {"goal_revision": task.goal_revision, "config_version": config_version(config), "config": config}


def lease_for(task: Task) -> ModelLease:
    """The lease a turn of the task would take now (unsaved): the task's profile, else the workspace's default,
    else the offline scripted planner."""
    profile = task.model_profile or ModelProfile.objects.filter(workspace_id=task.workspace_id, is_default=True).first()
    return lease_from_profile(profile)


def lease_from_profile(profile: ModelProfile | None, *, params: dict[str, Any] | None = None) -> ModelLease:
    """An unsaved lease fixing a profile's exact provider, model, endpoint and secret (None: the offline scripted
    planner). `params` are laid over the profile's (an assistant preset's model parameters). Flow nodes take
    their lease here too, so they run on the same adapters, with the same secret, as a task's turns."""
    if profile is None:
        return ModelLease(**SCRIPTED_DEFAULT, params=dict(params or {}))
    return ModelLease(
        profile=profile,
        provider=profile.provider,
        model=profile.model,
        base_url=profile.base_url,
        params={**profile.params, **(params or {})},
        secret=profile.secret,
        context_tokens=profile.context_tokens,
    )
