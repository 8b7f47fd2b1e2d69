"""What the workspace app tells the apps above it, and what it asks of them (DESIGN §1: it never imports them).

Events: published with lomote.kernel.domain_events.publish inside the publisher's transaction, so a subscriber's
reaction commits or rolls back with the change. Subscribe with these constants, never with the strings.

Hooks: work workspace needs from a higher app (a model call, a billing check). The higher app installs its
function at start-up, from its subscribers.install(); until it does, workspace falls back as each hook says.

This module imports nothing from workspace, so any app may import it.
"""

from collections.abc import Callable
from typing import Any

# --- events ------------------------------------------------------------------------------------------------

JOB_SETTLED = "generation.job_settled"
"""A generation job reached a terminal status (succeeded, failed, timed_out), once per job.

Payload: workspace_id, job_id, idempotency_key, status, task_id, turn_id, artifact_id, artifact_version_id.
Published by workspace.services.jobs.job_event_apply while it holds the job, the target artifact and the
workspace row. `artifact_id` is the artifact the result went to (or was to go to); `artifact_version_id` is set
on success only."""

FLOW_NODE_CLOSED = "flow.node_closed"
"""A paid Flow node (a generation node) ended without submitting its job: skipped, or failed first.

Payload: workspace_id, idempotency_key (the node's job key, under which its money was held).
Published by workspace.flows.runner in the transaction that ended the node."""

FLOW_RUN_ENDED = "flow.run_ended"
"""A Flow run over a conversation thread ended: done, failed, or cancelled before it ran (spending declined).

Payload: workspace_id, run_id, end (the run's end number: a retry or a stale re-run ends it again, so
(run_id, end) names one end), status, thread ("main" or {"task": id}), artifact_id, outputs, error.
Published by workspace.flows.runner in the transaction that ended the run, holding the workspace row and the
run; only for runs that name a thread. A subscriber posting the result must do so once per (run_id, end)."""

ARTIFACT_VERSION_ADDED = "artifact.version_added"
"""An artifact got a new version on top of its current one (not its version 1: nothing was made from it yet).

Payload: workspace_id, artifact_id, version (the new version's number).
Published by workspace.services.artifacts.artifact_version_add, holding the artifact lock, after the version,
its event and its change notices are written."""

ARTIFACT_DELETED = "artifact.deleted"
"""A person confirmed an artifact's deletion: it is soft-deleted (`Artifact.deleted_at` set, for good).

Payload: workspace_id, artifact_id.
Published by workspace.services.artifacts.artifact_delete, holding the artifact lock, after its event, its
removal from asset collections and the change notices of the tasks that had seen it are written."""

# --- hooks -------------------------------------------------------------------------------------------------

# (workspace id, node params, prompt, material: the text wired in) → {"text", "model", …}
TextHook = Callable[[int, dict[str, Any], str, str], dict[str, Any]]
# (workspace id, node params, text, routes) → {"choice": a route id or None, "named", "model", …}
ChooseHook = Callable[[int, dict[str, Any], str, dict[str, str]], dict[str, Any]]
_hooks: dict[str, Callable | None] = {"text": None, "choose": None}
# (workspace_id, job key) → whether money is held for that key.
SpendCheck = Callable[[int, str], bool]
_spend_check: list[SpendCheck] = []


def text_hooks_install(*, generate: TextHook | None, choose: ChooseHook | None) -> None:
    """Install the model calls of Flow text and router nodes (agents does): they run on the workspace's model
    profile. Without them (agents not installed) a node uses its offline stand-in, and one naming a preset or a
    profile fails."""
    _hooks["text"], _hooks["choose"] = generate, choose


def text_hook() -> TextHook | None:
    return _hooks["text"]


def choose_hook() -> ChooseHook | None:
    return _hooks["choose"]


def spend_check_install(check: SpendCheck) -> None:
    """Install the check a paid Flow node makes before it submits its job (billing does)."""
    _spend_check[:] = [check]


def money_held(workspace_id: int, job_key: str) -> bool:
    """Whether money is held for this job key. Fails closed: False while no check is installed."""
    return bool(_spend_check) and _spend_check[0](workspace_id, job_key)
