"""Generation provider name → factory. Explicit registration, no silent fallback (DESIGN §4).

    provider = provider_get(job.provider)

An unknown name is an error (`unknown_provider`), never "use the procedural renderer instead". The
`simulated` upstream has no factory: a test builds one with the knobs it needs and installs it with
`override("simulated", upstream)`; overrides are process-wide (worker threads see them) and nest.
"""

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from lomote.kernel.exceptions import InvalidInput
from lomote.kernel.registry import Registry
from workspace.providers.base import GenerationProvider, WorkerProvider
from workspace.providers.procedural import ProceduralProvider

Factory = Callable[[], GenerationProvider]

_factories: Registry[Factory] = Registry("generation provider")


def register(name: str, factory: Factory) -> Factory:
    return _factories.register(name, factory)


def provider_names() -> list[str]:
    return _factories.names()


def provider_known(name: str) -> bool:
    return _factories.get(name) is not None


def provider_get(name: str) -> GenerationProvider:
    """The provider called `name`: an override installed by a test, else a new one from its factory."""
    factory = _factories.get(name)
    if factory is None:
        raise InvalidInput(
            f"No generation provider is called {name!r}.",
            code="unknown_provider",
            details={"provider": name, "known": provider_names()},
        )
    return factory()


def provider_is_ours(name: str) -> bool:
    """Whether the provider runs in our own workers (a WorkerProvider): its submission is a message on our own
    broker, and a second message for one job is harmless — so a submission of it is never unknowable."""
    try:
        return isinstance(provider_get(name), WorkerProvider)
    except InvalidInput:
        return False


@contextmanager
def override(name: str, provider: GenerationProvider) -> Iterator[GenerationProvider]:
    """Make `provider_get(name)` return this very instance until the block exits (tests only)."""
    with _factories.override(name, lambda: provider):
        yield provider


# --- explicit registration: one line per provider module --------------------------------------------------


def _openai_images() -> GenerationProvider:
    # Imported on use, deliberately: the openai SDK takes about half a second to import, and only a deployment
    # that names this provider needs it.
    from workspace.providers.openai_images import OpenAIImagesProvider

    return OpenAIImagesProvider.from_settings()


register("procedural", ProceduralProvider)
register("openai_images", _openai_images)
