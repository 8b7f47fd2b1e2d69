"""The scripted model: the embedded default's planner, router and their readers, with no API key.

It reads a person's words through the understanding layer (lomote/understanding, DESIGN §15) and answers the
runtime as any model provider does (agents/providers/base.py). Nothing in the runtime, Main, the services,
memory or workspace imports it (an import-linter contract): the provider registry builds it for a lease whose kind
is `scripted`, and Main asks the registry for the scripted router.
"""


def install() -> None:
    """Register the scripted planner for `scripted` leases and the scripted Router for Main (agents/apps.py)."""
    from agents.models import ProviderKind
    from agents.providers.registry import register, register_router
    from agents.scripted.planner import ScriptedPlanner
    from agents.scripted.router import MODEL_NAME, ScriptedRouter

    register(ProviderKind.SCRIPTED, ScriptedPlanner.for_lease)
    register_router(ProviderKind.SCRIPTED, lambda: (ScriptedRouter(), MODEL_NAME))
