import os

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction

from billing.models import LedgerEntry, LedgerKind
from billing.services.wallets import wallet_topup
from workspace.models import Workspace
from workspace.selectors import workspace_access
from workspace.services.workspaces import workspace_create

DEMO_CREDITS = 2000


class Command(BaseCommand):
    help = "Create the demo user and a funded workspace (idempotent) and print how to log in."

    def add_arguments(self, parser):
        parser.add_argument("--username", default=os.environ.get("LOMOTE_DEMO_USER", "demo"))
        parser.add_argument("--password", default=os.environ.get("LOMOTE_DEMO_PASSWORD", "lomote-demo"))
        parser.add_argument("--url", default="http://127.0.0.1:8000/", help="Where the studio will be served.")

    @transaction.atomic
    def handle(self, *args, username, password, url, **options):
        User = get_user_model()
        user, created = User.objects.get_or_create(username=username, defaults={"email": f"{username}@example.com"})
        if created:
            user.set_password(password)
            # The demo account also operates the embedded install, so it may open the admin.
            user.is_staff = user.is_superuser = True
            user.save()
        workspace = Workspace.objects.filter(memberships__user=user).order_by("pk").first()
        if workspace is None:
            workspace = workspace_create(user=user, name="Demo studio")
        access = workspace_access(principal=user, workspace_id=workspace.pk)
        topped_up = LedgerEntry.objects.filter(wallet__workspace=workspace, kind=LedgerKind.TOPUP).exists()
        if not topped_up and access.role == "owner":
            # Demo credits, once, so the first quote card can be approved without a top-up first.
            wallet_topup(access=access, amount=DEMO_CREDITS, memo="demo credits")
        shown = password if created else "(unchanged: the password you set before)"
        self.stdout.write(f"Log in at {url} as {username} / {shown}  (admin: {url.rstrip('/')}/admin/)")
