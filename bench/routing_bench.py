"""`make bench`, routing section: the routing evaluation set through Main (issue 15 item 2).

One process, its own PostgreSQL database (`<name>_routing`, created, migrated and dropped here), then
`manage.py eval_routing`: accuracy per route, overall, on the held-out split, by language, the confusion table
and the time per message, for the scripted Router — judged: it must reach 95 % overall (exit 1 otherwise) —
and, when a model endpoint is given in the environment, for a model Router too (reported, not judged: its
figures are the model's):

    LOMOTE_EVAL_ROUTER_BASE_URL   an OpenAI-compatible endpoint (vLLM, Ollama, llama.cpp server, OpenAI…)
    LOMOTE_EVAL_ROUTER_MODEL      the model name at that endpoint
    LOMOTE_EVAL_ROUTER_API_KEY    its key, if it needs one (stored encrypted in the bench database only)

Usage: `python -m bench.routing_bench [--min-accuracy 95] [--keep]`.
"""

import argparse
import os
import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.runner import target_line  # noqa: E402
from bench.runtime_bench import Target, databases_drop, databases_recreate, django_setup, target_from  # noqa: E402

DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/lomote_bench"
PROFILE = "bench-router"


def routing_target(url: str) -> Target:
    """The bench database with `_routing` added to its name (its monitor database is made and dropped too)."""
    base = target_from(url)
    parts = urlsplit(base.url)
    name = f"{base.name}_routing"
    return Target(
        url=urlunsplit(parts._replace(path=f"/{name}")),
        name=name,
        admin_url=base.admin_url,
        monitor_url=urlunsplit(parts._replace(path=f"/{name}_monitor")),
        monitor_name=f"{name}_monitor",
    )


def model_profile_install() -> str:
    """A workspace holding the model profile named in the environment; its name, or '' when none is given."""
    base_url = os.environ.get("LOMOTE_EVAL_ROUTER_BASE_URL", "")
    model = os.environ.get("LOMOTE_EVAL_ROUTER_MODEL", "")
    if not (base_url and model):
        return ""
    from django.contrib.auth import get_user_model

    from agents.models import ModelProfile, ProviderKind
    from agents.secrets import secret_put
    from workspace.services.workspaces import workspace_create

    owner = get_user_model().objects.create_user(username="routing-bench")
    workspace = workspace_create(user=owner, name="Routing bench: model profile")
    key = os.environ.get("LOMOTE_EVAL_ROUTER_API_KEY", "")
    secret = secret_put(workspace_id=workspace.pk, name=f"{PROFILE}-key", value=key) if key else None
    ModelProfile.objects.create(
        workspace=workspace,
        name=PROFILE,
        provider=ProviderKind.OPENAI_COMPAT,
        model=model,
        base_url=base_url,
        secret=secret,
        is_default=True,
    )
    return PROFILE


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--min-accuracy", default="95", help="the scripted Router's overall target, in %%")
    parser.add_argument("--keep", action="store_true", help="keep the bench database afterwards")
    args = parser.parse_args(argv)

    target = routing_target(os.environ.get("DATABASE_URL") or DEFAULT_URL)
    databases_recreate(target)
    try:
        django_setup(target.url, 1)
        from django.core.management import call_command
        from django.core.management.base import CommandError

        profile = model_profile_install()
        print(f"bench database {target.name}: routing evaluation", flush=True)
        options = ["--min-accuracy", args.min_accuracy, "--no-failures"]
        if profile:
            options += ["--profile", profile]
        label = f"the scripted Router's overall accuracy >= --min-accuracy {args.min_accuracy}"
        try:
            call_command("eval_routing", *options)
        except CommandError as exc:
            print(target_line(label, False, miss=str(exc)))
            return 1
        print(target_line(label, True))
    finally:
        if "django.db" in sys.modules:
            from django.db import connections

            connections.close_all()
        if not args.keep:
            databases_drop(target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
