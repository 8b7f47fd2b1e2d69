"""Explicit tool registry: one module per domain registers its tools here."""

from collections.abc import Iterator
from contextlib import contextmanager

from agents.tools.base import Tool

BASE_DOMAIN = "base"
DOMAINS = ("base", "image", "video", "3d", "documents", "flows", "assets")

_registry: dict[str, type[Tool]] = {}


def register(tool: type[Tool]) -> type[Tool]:
    if tool.domain not in DOMAINS:
        raise ValueError(f"unknown tool domain {tool.domain!r}")
    if tool.name in _registry and _registry[tool.name] is not tool:
        raise ValueError(f"tool {tool.name!r} registered twice")
    _registry[tool.name] = tool
    return tool


@contextmanager
def registered(*tools: type[Tool]) -> Iterator[None]:
    """Register tools for the duration of a block (tests and plugins loaded for one run)."""
    _load_builtin_tools()
    added = [tool for tool in tools if _registry.get(tool.name) is not tool]
    for tool in added:
        register(tool)
    try:
        yield
    finally:
        for tool in added:
            _registry.pop(tool.name, None)


def tool_get(name: str) -> type[Tool] | None:
    _load_builtin_tools()
    return _registry.get(name)


def tools_visible(loaded_domains: set[str] | frozenset[str]) -> list[type[Tool]]:
    """Base tools always, domain tools once loaded. Visibility is not permission (see tools/permissions)."""
    _load_builtin_tools()
    domains = {BASE_DOMAIN, *loaded_domains}
    return sorted((t for t in _registry.values() if t.domain in domains), key=lambda t: (t.domain != "base", t.name))


def _load_builtin_tools() -> None:
    from agents.tools import base_tools, documents, flows, generation  # noqa: F401 - register on import
