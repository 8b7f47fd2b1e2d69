"""A task's autonomy and permissions: two of its three separate settings (DESIGN §5).

The third, the budget, lives in billing as a person's approvals. Allowing auto-run is not allowing spending,
and approving a budget is not approving every action: each setting is checked on its own, by the runtime.
"""

from typing import Any

from django.db import transaction

from agents.locks import task_locked
from agents.models import PERMISSION_DOMAINS, Autonomy, Task, TaskStatus
from lomote.kernel.exceptions import Conflict, InvalidInput
from workspace.models import Role
from workspace.selectors import Access
from workspace.services.events import event_append

PERMISSION_KEYS = ("domains", "irreversible")


def check_permissions(permissions: Any) -> dict[str, Any]:
    """A valid, normalised permissions change: known keys only, known domains (each once, in a fixed order)."""
    if not isinstance(permissions, dict):
        raise InvalidInput("Permissions must be an object.", code="invalid_permissions")
    unknown = sorted(set(permissions) - set(PERMISSION_KEYS))
    if unknown:
        raise InvalidInput(
            f"Unknown permission {', '.join(unknown)}.", code="invalid_permissions", details={"unknown": unknown}
        )
    checked: dict[str, Any] = {}
    if "domains" in permissions:
        domains = permissions["domains"]
        if not isinstance(domains, list) or not all(isinstance(d, str) for d in domains):
            raise InvalidInput("`domains` must be a list of domain names.", code="invalid_permissions")
        bad = sorted(set(domains) - set(PERMISSION_DOMAINS))
        if bad:
            raise InvalidInput(
                f"Unknown tool domain {', '.join(bad)}.",
                code="invalid_permissions",
                details={"unknown_domains": bad, "domains": list(PERMISSION_DOMAINS)},
            )
        checked["domains"] = [d for d in PERMISSION_DOMAINS if d in domains]
    if "irreversible" in permissions:
        if not isinstance(permissions["irreversible"], bool):
            raise InvalidInput("`irreversible` must be true or false.", code="invalid_permissions")
        checked["irreversible"] = permissions["irreversible"]
    return checked


@transaction.atomic
def task_settings_update(
    *, access: Access, task_id: int, autonomy: str | None = None, permissions: dict[str, Any] | None = None
) -> Task:
    """Change the task's autonomy and/or permissions (the keys given replace theirs). Editors and owners.

    Takes effect at the next decision: the runtime reads both with the task row at every tool call and at
    the end of every cycle. A cancelled task keeps its settings (409 `task_cancelled`).
    """
    access.require(Role.EDITOR)
    if autonomy is not None and autonomy not in Autonomy.values:
        raise InvalidInput(
            f"Unknown autonomy {autonomy!r}.", code="invalid", details={"autonomy": list(Autonomy.values)}
        )
    change = check_permissions(permissions) if permissions is not None else {}
    task = task_locked(access=access, task_id=task_id)
    if task.status == TaskStatus.CANCELLED:
        raise Conflict("This task was cancelled; its settings no longer change.", code="task_cancelled")
    fields = []
    if autonomy is not None and autonomy != task.autonomy:
        task.autonomy = autonomy
        fields.append("autonomy")
    merged = {**(task.permissions or {}), **change}
    if merged != task.permissions:
        task.permissions = merged
        fields.append("permissions")
    if fields:
        task.save(update_fields=[*fields, "updated_at"])
        event_append(
            workspace_id=task.workspace_id,
            kind="task.settings",
            data={"task": task.pk, "autonomy": task.autonomy, "permissions": task.permissions, "by": access.actor},
        )
    return task
