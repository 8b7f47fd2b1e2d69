"""Provider kind → factory. Explicit registration, no silent fallback (DESIGN §10).

    provider = provider_for_lease(turn.model_lease)
    response = provider.complete(request)

A lease whose kind has no factory is a ModelConfigError, never "use the scripted planner instead". The
`replay` kind has no factory at all: its outputs come from a test, which installs an instance with
`override(kind, provider)`; overrides are process-wide (workers in other threads see them) and nest.
"""

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from agents.exceptions import ModelConfigError
from agents.models import ProviderKind
from agents.providers.base import ModelProvider

Factory = Callable[[Any], ModelProvider]  # called with a ModelLease (or anything with its fields)

_factories: dict[str, Factory] = {}
_overrides: dict[str, list[ModelProvider]] = {}
_lock = threading.Lock()


def register(kind: str, factory: Factory) -> Factory:
    kind = str(kind)
    if kind in _factories and _factories[kind] is not factory:
        raise ValueError(f"model provider kind {kind!r} registered twice")
    _factories[kind] = factory
    return factory


def registered_kinds() -> list[str]:
    return sorted(_factories)


def provider_for_lease(lease: Any) -> ModelProvider:
    """The provider for a lease's exact kind: an override installed by a test, else the registered factory."""
    kind = str(lease.provider)
    with _lock:
        stack = _overrides.get(kind)
        if stack:
            return stack[-1]
    factory = _factories.get(kind)
    if factory is None:
        if kind == ProviderKind.REPLAY:
            raise ModelConfigError(
                "A replay lease needs a replay provider installed with providers.registry.override().",
                code="model_config",
            )
        raise ModelConfigError(f"No model provider is registered for kind {kind!r}.", code="model_config")
    return factory(lease)


@contextmanager
def override(kind: str, provider: ModelProvider) -> Iterator[ModelProvider]:
    """Make every lease of `kind` get this very instance until the block exits (tests only)."""
    kind = str(kind)
    with _lock:
        _overrides.setdefault(kind, []).append(provider)
    try:
        yield provider
    finally:
        with _lock:
            stack = _overrides[kind]
            # Remove this instance even if an inner override leaked, so the outer one is restored exactly.
            for i in range(len(stack) - 1, -1, -1):
                if stack[i] is provider:
                    del stack[i]
                    break
            if not stack:
                del _overrides[kind]


# --- explicit registration: one line per provider module --------------------------------------------------


def _scripted(lease: Any) -> ModelProvider:
    from agents.providers.scripted import ScriptedPlanner

    return ScriptedPlanner.for_lease(lease)


def _openai_compat(lease: Any) -> ModelProvider:
    # Imported on use: the SDK is heavy and offline installs never need it.
    from agents.providers.openai_compat import OpenAICompatProvider

    return OpenAICompatProvider.for_lease(lease)


register(ProviderKind.SCRIPTED, _scripted)
register(ProviderKind.OPENAI_COMPAT, _openai_compat)
