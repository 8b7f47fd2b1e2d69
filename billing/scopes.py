"""What billing knows of tasks: a port that a higher app fills in.

A person approves spending for what a task is about at that moment; when the task's goal changes, the old
approval must not pay for the new work (a changed goal asks again). Billing cannot import agents (the layers
contract), so agents install a resolver here at start-up, mapping a workspace's task id to the task's current
scope (`"goal:<revision>"`), or to None when that workspace has no such task. Billing stores the scope on quotes
and approvals and lets an approval authorise an order only while its scope is still the task's current one; an
empty scope (made before scopes existed, for no task, or with no resolver installed) is unscoped and always counts.

The same answer tells billing whether a task id a caller sent belongs to the caller's workspace
(`check_task_scope`): a quote or an approval for another workspace's task, or for no task at all, is one and the
same 404, and nothing is written.
"""

from collections.abc import Callable

from django.utils.translation import gettext_noop

from lomote.kernel.exceptions import NotFound

MAX_SCOPE_LENGTH = 64

ScopeResolver = Callable[[int, int], str | None]

_resolver: ScopeResolver | None = None


def scope_resolver_install(fn: ScopeResolver | None) -> ScopeResolver | None:
    """Install the function giving a task's current scope, or remove it with None; returns the one it
    replaced, so a test can put it back.

    `fn(workspace_id, task_id)` returns at most MAX_SCOPE_LENGTH characters ("" for a task without a scope), or
    None when the workspace has no such task — another workspace's task included; it may read the database, and
    is called once per billing call that needs the scope.
    """
    global _resolver
    previous, _resolver = _resolver, fn
    return previous


def _resolve(workspace_id: int, task_id: int) -> str | None:
    if _resolver is None:
        return None
    scope = _resolver(workspace_id, task_id)
    if scope is not None and (not isinstance(scope, str) or len(scope) > MAX_SCOPE_LENGTH):
        # A programming error in the resolver: refuse rather than store a scope that can never match.
        raise ValueError(f"A task scope is a string of at most {MAX_SCOPE_LENGTH} characters, got {scope!r}.")
    return scope


def task_scope(task_id: int | None, *, workspace_id: int) -> str:
    """The task's current scope, or "" when there is no task, no resolver, or the workspace has no such task.

    For ids billing's own callers hold (an order of a task the runtime is running); an id a person sent goes
    through check_task_scope."""
    if task_id is None:
        return ""
    return _resolve(workspace_id, task_id) or ""


def check_task_scope(task_id: int | None, *, workspace_id: int) -> str:
    """Like task_scope, for a task id a caller sent: NotFound unless the workspace has that task.

    Without a resolver billing knows no task at all, so every id is NotFound (fail closed). Another workspace's
    task and a missing one get the same error, word for word.
    """
    if task_id is None:
        return ""
    scope = _resolve(workspace_id, task_id)
    if scope is None:
        raise NotFound(
            gettext_noop("Task not found."), details={"fields": {"task": ["No task with this id in this workspace."]}}
        )
    return scope


def in_scope(scope: str) -> tuple[str, ...]:
    """The stored scopes that count under the current `scope`: the unscoped one and `scope` itself."""
    return ("", scope) if scope else ("",)
