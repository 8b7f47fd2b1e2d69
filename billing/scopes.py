"""The scope of a task's spending authority: a port that a higher app fills in.

A person approves spending for what a task is about at that moment; when the task's goal changes, the old
approval must not pay for the new work (a changed goal asks again). Billing cannot import agents (the layers
contract), so agents install a resolver here at start-up, mapping a task id to its current scope
(`"goal:<revision>"`). Billing stores that string on quotes and approvals and lets an approval authorise an
order only while its scope is still the task's current one; an empty scope (made before scopes existed, for
no task, or with no resolver installed) is unscoped and always counts.
"""

from collections.abc import Callable

MAX_SCOPE_LENGTH = 64

ScopeResolver = Callable[[int], str | None]

_resolver: ScopeResolver | None = None


def scope_resolver_install(fn: ScopeResolver | None) -> ScopeResolver | None:
    """Install the function giving a task's current scope, or remove it with None; returns the one it
    replaced, so a test can put it back.

    `fn(task_id)` returns at most MAX_SCOPE_LENGTH characters, or None (or "") for a task it does not know;
    it may read the database, and is called once per billing call that needs the scope.
    """
    global _resolver
    previous, _resolver = _resolver, fn
    return previous


def task_scope(task_id: int | None) -> str:
    """The task's current scope, or "" when there is no task, no resolver, or the resolver knows none."""
    if task_id is None or _resolver is None:
        return ""
    scope = _resolver(task_id) or ""
    if not isinstance(scope, str) or len(scope) > MAX_SCOPE_LENGTH:
        # A programming error in the resolver: refuse rather than store a scope that can never match.
        raise ValueError(f"A task scope is a string of at most {MAX_SCOPE_LENGTH} characters, got {scope!r}.")
    return scope


def in_scope(scope: str) -> tuple[str, ...]:
    """The stored scopes that count under the current `scope`: the unscoped one and `scope` itself."""
    return ("", scope) if scope else ("",)
