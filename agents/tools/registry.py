"""Tool name → tool class, filled once from the catalog (agents/tools/catalog.py) when the app is ready.

    tool = tool_get(call.name)                 # the class, or None for a name no tool has
    tools = tools_visible(loaded_domains)      # what the model is offered this step, in a stable order
    with override(MyTool):                     # tests: one more tool (or another class for a name)
        ...

The registry imports no tool module, so a tool may read it (load_tools lists a domain's tools) without
an import circle; AgentsConfig.ready() installs the catalog.
"""

from collections.abc import Iterable, Iterator
from contextlib import ExitStack, contextmanager

from agents.tools.base import BASE_DOMAIN, DOMAINS, Tool
from lomote.kernel.registry import Registry

_tools: Registry[type[Tool]] = Registry("tool")


def install(tools: Iterable[type[Tool]]) -> None:
    for tool in tools:
        _tools.register(tool.name, _checked(tool))


def tool_get(name: str) -> type[Tool] | None:
    return _tools.get(name)


def tool_names_keeping_receipts() -> list[str]:
    """The tools whose calls a resume settles by receipt (DESIGN §11): their operation ids are the completed actions."""
    return sorted(name for name, tool in _tools.entries().items() if tool.keeps_receipts)


def tools_visible(loaded_domains: Iterable[str]) -> list[type[Tool]]:
    """Base tools always, then each loaded domain's tools in the order the domains were loaded. Visibility is
    not permission (see tools/permissions).

    The order is part of the prompt and of its cached prefix (DESIGN §7): base tools by name, then a domain's
    tools by name after those of every domain loaded before it. Loading a domain only appends; registration
    order never matters.
    """
    entries = sorted(_tools.entries().values(), key=lambda t: t.name)
    visible = [t for t in entries if t.domain == BASE_DOMAIN]
    for domain in dict.fromkeys(loaded_domains):
        if domain != BASE_DOMAIN:
            visible.extend(t for t in entries if t.domain == domain)
    return visible


@contextmanager
def override(*tools: type[Tool]) -> Iterator[None]:
    """Make these tools visible under their names until the block exits (tests, or one run's plugins)."""
    with ExitStack() as stack:
        for tool in tools:
            stack.enter_context(_tools.override(tool.name, _checked(tool)))
        yield


def _checked(tool: type[Tool]) -> type[Tool]:
    if tool.domain not in DOMAINS:
        raise ValueError(f"unknown tool domain {tool.domain!r}")
    return tool
