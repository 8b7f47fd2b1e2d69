"""Generation provider name → factory. Explicit registration, no silent fallback (DESIGN §4).

    provider = provider_get(job.provider)

An unknown name is an error (`unknown_provider`), never "use the procedural renderer instead". The
`simulated` upstream has no factory: a test builds one with the knobs it needs and installs it with
`override("simulated", upstream)`; overrides are process-wide (worker threads see them) and nest.
"""

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from lomote.exceptions import InvalidInput
from workspace.generation.base import GenerationProvider

Factory = Callable[[], GenerationProvider]

_factories: dict[str, Factory] = {}
_overrides: dict[str, list[GenerationProvider]] = {}
_lock = threading.Lock()


def register(name: str, factory: Factory) -> Factory:
    if name in _factories and _factories[name] is not factory:
        raise ValueError(f"generation provider {name!r} registered twice")
    _factories[name] = factory
    return factory


def provider_names() -> list[str]:
    with _lock:
        return sorted(set(_factories) | set(_overrides))


def provider_known(name: str) -> bool:
    with _lock:
        return name in _factories or bool(_overrides.get(name))


def provider_get(name: str) -> GenerationProvider:
    """The provider called `name`: an override installed by a test, else a new one from its factory."""
    with _lock:
        stack = _overrides.get(name)
        if stack:
            return stack[-1]
        factory = _factories.get(name)
    if factory is None:
        raise InvalidInput(
            f"No generation provider is called {name!r}.",
            code="unknown_provider",
            details={"provider": name, "known": provider_names()},
        )
    return factory()


@contextmanager
def override(name: str, provider: GenerationProvider) -> Iterator[GenerationProvider]:
    """Make `provider_get(name)` return this very instance until the block exits (tests only)."""
    with _lock:
        _overrides.setdefault(name, []).append(provider)
    try:
        yield provider
    finally:
        with _lock:
            stack = _overrides[name]
            for i in range(len(stack) - 1, -1, -1):
                if stack[i] is provider:
                    del stack[i]
                    break
            if not stack:
                del _overrides[name]


# --- explicit registration: one line per provider module --------------------------------------------------


def _procedural() -> GenerationProvider:
    from workspace.generation.procedural import ProceduralProvider

    return ProceduralProvider()


def _openai_images() -> GenerationProvider:
    # Imported on use: the SDK is heavy and offline installs never need it.
    from workspace.generation.openai_images import OpenAIImagesProvider

    return OpenAIImagesProvider.from_settings()


register("procedural", _procedural)
register("openai_images", _openai_images)
