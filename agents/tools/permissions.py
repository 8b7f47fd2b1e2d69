"""Server-side execution rights of tools (DESIGN §5, §7).

Which tools a model was shown is not a security boundary: every call is checked here when it runs,
against the role the task acts with right now — its creator's current membership role — and against the
permissions the person gave the task (its allowed tool domains, whether irreversible tools may run at all).
"""

from agents.exceptions import ToolPermissionDenied
from agents.selectors import task_permissions
from agents.tools.base import BASE_DOMAIN, Tool, ToolContext
from workspace.models import role_at_least


def check_tool_permission(tool_cls: type[Tool], ctx: ToolContext) -> None:
    """Raise ToolPermissionDenied unless the task's role reaches the tool's required role and the task's
    permissions allow the tool's domain (and, for an irreversible tool, irreversible operations).

    The runtime passes the permissions it read with the task row (`ctx.permissions`); without them they are
    read here, and only for a tool outside the always-allowed base domain.
    """
    try:
        allowed = role_at_least(ctx.role, tool_cls.required_role)
    except ValueError:  # an unknown role grants nothing
        allowed = False
    if not allowed:
        raise ToolPermissionDenied(
            f"This task may not use {tool_cls.name}: it needs the {tool_cls.required_role} role and the task "
            f"acts as {ctx.role}. Ask the person to do it, or to grant the role.",
            details={"tool": tool_cls.name, "required_role": tool_cls.required_role, "task_role": ctx.role},
        )
    if tool_cls.domain == BASE_DOMAIN and not tool_cls.irreversible:
        return
    permissions = ctx.permissions if ctx.permissions is not None else task_permissions(ctx.task_id)
    domains = permissions.get("domains")
    if tool_cls.domain != BASE_DOMAIN and (not isinstance(domains, list) or tool_cls.domain not in domains):
        raise ToolPermissionDenied(
            f"This task is not allowed to use {tool_cls.domain} tools such as {tool_cls.name}. Tell the person; "
            "they can allow it in the task's settings.",
            details={"tool": tool_cls.name, "domain": tool_cls.domain, "allowed_domains": domains or []},
        )
    if tool_cls.irreversible and permissions.get("irreversible") is not True:
        raise ToolPermissionDenied(
            f"This task is not allowed irreversible operations such as {tool_cls.name}. Tell the person; they "
            "can allow them in the task's settings (each one is still confirmed first).",
            details={"tool": tool_cls.name, "irreversible": True},
        )
