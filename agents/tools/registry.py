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


def tools_visible(loaded_domains: set[str] | frozenset[str]) -> list[type[Tool]]:
    """Base tools always, domain tools once loaded. Visibility is not permission (see tools/permissions).

    The order is part of the prompt (base tools first, then by name): keep it stable for prompt caching.
    """
    domains = {BASE_DOMAIN, *loaded_domains}
    tools = _tools.entries().values()
    return sorted((t for t in tools if t.domain in domains), key=lambda t: (t.domain != BASE_DOMAIN, t.name))


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
