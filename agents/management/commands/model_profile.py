import getpass
import os

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from agents.models import ModelProfile, ProviderKind
from agents.secrets import secret_put
from lomote.kernel.endpoints import EndpointRefused, endpoint_check
from workspace.models import Workspace


class Command(BaseCommand):
    help = (
        "Create or update a workspace's model profile. The API key is read from an environment variable "
        "(--api-key-env) or prompted for, never taken from the command line, and stored encrypted."
    )

    def add_arguments(self, parser):
        parser.add_argument("--workspace", type=int, required=True)
        parser.add_argument("--name", required=True)
        parser.add_argument("--provider", choices=[k.value for k in ProviderKind], default=ProviderKind.OPENAI_COMPAT)
        parser.add_argument("--model", required=True)
        parser.add_argument("--base-url", default="")
        parser.add_argument("--api-key-env", help="Name of the environment variable holding the key.")
        parser.add_argument("--prompt-key", action="store_true", help="Ask for the key on the terminal.")
        parser.add_argument("--default", action="store_true", help="Make it the workspace's default model.")

    @transaction.atomic
    def handle(self, *args, workspace, name, provider, model, base_url, api_key_env, prompt_key, default, **options):
        if not Workspace.objects.filter(pk=workspace).exists():
            raise CommandError(f"No workspace {workspace}.")
        if base_url:
            try:
                endpoint_check(base_url)
            except EndpointRefused as refused:
                raise CommandError(f"--base-url {base_url}: {refused.message}") from None
        key = None
        if api_key_env:
            key = os.environ.get(api_key_env)
            if not key:
                raise CommandError(f"${api_key_env} is empty.")
        elif prompt_key:
            key = getpass.getpass("API key: ")
        secret = secret_put(workspace_id=workspace, name=f"{name}-key", value=key) if key else None
        if default:
            ModelProfile.objects.filter(workspace_id=workspace, is_default=True).exclude(name=name).update(
                is_default=False
            )
        defaults = {"provider": provider, "model": model, "base_url": base_url, "is_default": default}
        if secret is not None:
            defaults["secret"] = secret
        profile, created = ModelProfile.objects.update_or_create(workspace_id=workspace, name=name, defaults=defaults)
        verb = "Created" if created else "Updated"
        self.stdout.write(f"{verb} model profile {profile.name}: {profile.provider}/{profile.model}")
