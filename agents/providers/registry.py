"""Provider kind → factory. Explicit registration, no silent fallback (DESIGN §10).

    provider = provider_for_lease(turn.model_lease)
    response = provider.complete(request)

A lease whose kind has no factory is a ModelConfigError, never "use the scripted planner instead". The
`replay` kind has no factory at all: its outputs come from a test, which installs an instance with
`override(kind, provider)`; overrides are process-wide (workers in other threads see them) and nest.
"""

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from agents.exceptions import ModelConfigError
from agents.models import ProviderKind
from agents.providers.base import ModelProvider
from lomote.kernel.registry import Registry

Factory = Callable[[Any], ModelProvider]  # called with a ModelLease (or anything with its fields)
RouterFactory = Callable[[], tuple[ModelProvider, str]]  # Main's Router with no profile: (provider, model name)

_factories: Registry[Factory] = Registry("model provider kind")
_routers: Registry[RouterFactory] = Registry("router kind")


def register_router(kind: str, factory: RouterFactory) -> RouterFactory:
    return _routers.register(str(kind), factory)


def router_for(kind: str) -> tuple[ModelProvider, str]:
    """The Router a kind with no model of its own answers with (the scripted one), and its model name."""
    factory = _routers.get(str(kind))
    if factory is None:
        raise ModelConfigError(f"No router is registered for kind {kind!r}.", code="model_config")
    return factory()


def register(kind: str, factory: Factory) -> Factory:
    return _factories.register(str(kind), factory)


def registered_kinds() -> list[str]:
    return _factories.registered_names()


def provider_for_lease(lease: Any) -> ModelProvider:
    """The provider for a lease's exact kind: an override installed by a test, else the registered factory."""
    kind = str(lease.provider)
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
    with _factories.override(str(kind), lambda _lease: provider):
        yield provider


# --- explicit registration: one line per provider module --------------------------------------------------


def _openai_compat(lease: Any) -> ModelProvider:
    # Imported on use: the SDK is heavy and offline installs never need it.
    from agents.providers.openai_compat import OpenAICompatProvider

    return OpenAICompatProvider.for_lease(lease)


register(ProviderKind.OPENAI_COMPAT, _openai_compat)
