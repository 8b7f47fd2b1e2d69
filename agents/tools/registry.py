"""Tool name → tool class, filled once from the catalog (agents/tools/catalog.py) when the app is ready.

    tool = tool_get(call.name)                 # the class, or None for a name no tool has
    tools = tools_visible(loaded_domains)      # what the model may call this step: base + loaded domains
    tools = tools_offered()                    # the request's tool list: every tool, the same at every step
    with override(MyTool):                     # tests: one more tool (or another class for a name)
        ...

The registry imports no tool module, so a tool may read it (load_tools lists a domain's tools) without
an import circle; AgentsConfig.ready() installs the catalog.
"""

from collections.abc import Iterable, Iterator
from contextlib import ExitStack, contextmanager
from functools import lru_cache
from typing import Any

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


def tools_offered() -> list[type[Tool]]:
    """Every tool, in a fixed order: the request's tool list, byte-identical at every step of every task.

    Tools come before the messages in every provider's prompt, so a list that grew at each domain load rewrote
    the whole cached prompt after it (DESIGN §7). Instead the list names every tool from the start: base tools
    by name with their schemas, then each loadable domain's tools (domains in DOMAINS order, tools by name) as
    stubs (Tool.stub_spec) whose full schemas a load appends to the conversation (load_tools). A call to a tool
    of a domain the task has not loaded is refused by the runtime (agents/runtime/toolexec.py), never run.
    """
    entries = sorted(_tools.entries().values(), key=lambda t: t.name)
    return [t for domain in DOMAINS for t in entries if t.domain == domain]


def domain_tools(domain: str) -> list[type[Tool]]:
    """A loadable domain's tools by name (none for the base domain or an unknown one)."""
    if domain == BASE_DOMAIN:
        return []
    return sorted((t for t in _tools.entries().values() if t.domain == domain), key=lambda t: t.name)


def domain_schemas(domain: str) -> dict[str, Any]:
    """A domain's tools as a load delivers them: their names, and each one's full schema to call it by."""
    tools = tuple(domain_tools(domain))
    return {"tools": [tool.name for tool in tools], "schemas": list(_schemas(tools))}


@lru_cache(maxsize=64)
def _schemas(tools: tuple[type[Tool], ...]) -> tuple[dict[str, Any], ...]:
    # A schema depends only on the tool's class (pydantic's generation is slow): the history renders the loaded
    # domains' schemas with their summaries at every step (agents/runtime/history.py).
    specs = (tool.spec() for tool in tools)
    return tuple({"name": s.name, "description": s.description, "parameters": s.parameters} for s in specs)


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
