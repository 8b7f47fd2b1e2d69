"""`python manage.py demo`: the headline flow, headless, on whatever database is configured.

A person asks Main for a series of posters, approves the quote card, asks meanwhile for a video of
yesterday's cat photo, and days later for warmer posters with the text moved. Everything runs through the
real router, runtime, generation jobs (a real django-q2 cluster started for the occasion) and billing; the
person's only actions are their three messages and their approvals. It ends with a summary and fails
(exit 1) if the flow did not happen as it should.
"""

import os
import subprocess
import sys
import time
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.files.base import ContentFile
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import close_old_connections, transaction
from django.db.models import Count, Sum
from django.utils import timezone

from agents.main.messages import main_message_post
from agents.models import Card, CardKind, CardStatus, MainMessage, Route, Task, TaskStatus
from agents.runtime.watchdog import watchdog_sweep
from agents.services.card_actions import card_act
from agents.services.metrics import stalls_list
from billing.models import Order
from billing.services.wallets import wallet_reconcile, wallet_topup
from lomote.kernel.database import current_database_url
from workspace.models import Artifact, Event
from workspace.providers.procedural import render_image
from workspace.selectors import workspace_access
from workspace.services.jobs import jobs_poll_silent
from workspace.services.uploads import artifact_upload
from workspace.services.workspaces import workspace_create

POSTERS = "Make a series of 3 retro brand posters"
CAT_VIDEO = "Also turn yesterday's cat photo into a 5-second video"
FOLLOW_UP = "Make the posters from the other day warmer and move the text"
SHOWN_EVENTS = {
    "task.created",
    "task.status",
    "card.opened",
    "card.resolved",
    "generation.succeeded",
    "generation.failed",
    "billing.capture",
}


class Command(BaseCommand):
    help = "Run the headline flow headlessly on the embedded defaults and print what happened."

    def add_arguments(self, parser):
        parser.add_argument("--timeout", type=float, default=240, help="Seconds to wait for each phase.")
        parser.add_argument("--workers", type=int, default=2, help="django-q2 workers of the demo's cluster.")

    def handle(self, *args, timeout: float, workers: int, **options):
        call_command("migrate", verbosity=0, interactive=False)
        self.timeout = timeout
        self.access = self._set_up()
        self.workspace_id = self.access.workspace.pk
        self.last_seq = Event.objects.filter(workspace_id=self.workspace_id).count()
        cluster = self._start_cluster(workers)
        try:
            self._run()
        finally:
            cluster.terminate()
            try:
                cluster.wait(timeout=15)
            except subprocess.TimeoutExpired:
                cluster.kill()
        self._summary()

    # --- set-up ---------------------------------------------------------------------------------------

    def _set_up(self):
        user, _ = get_user_model().objects.get_or_create(username="demo", defaults={"email": "demo@example.com"})
        name = f"Headline demo {timezone.now():%Y-%m-%d %H:%M:%S}"
        workspace = workspace_create(user=user, name=name)
        access = workspace_access(principal=user, workspace_id=workspace.pk)
        wallet_topup(access=access, amount=2000, memo="demo credits")
        # The person's own photo, brought in through the upload path the REST API and the studio use: its kind
        # comes from its content, checked like any upload.
        photo = render_image("a cat photo, tabby cat on a sunny windowsill")
        with transaction.atomic():
            cat = artifact_upload(
                workspace_id=workspace.pk,
                file=ContentFile(photo.content, "cat.png"),
                title="Cat photo",
                tags=["cat", "photo"],
                author_user=user,
            )
            yesterday = timezone.now() - timedelta(days=1)
            Artifact.objects.filter(pk=cat.pk).update(created_at=yesterday, updated_at=yesterday)
        self.stdout.write(
            f"Workspace “{name}” (#{workspace.pk}), 2000 credits, and yesterday's cat photo (uploaded as "
            f"{cat.versions.get(number=1).media_type}, artifact #{cat.pk})."
        )
        return access

    def _start_cluster(self, workers: int) -> subprocess.Popen:
        env = {**os.environ, "DATABASE_URL": current_database_url(), "Q_WORKERS": str(workers), "LOG_LEVEL": "WARNING"}
        process = subprocess.Popen(  # noqa: S603 - our own manage.py with fixed arguments
            [sys.executable, "manage.py", "qcluster"], cwd=settings.BASE_DIR, env=env, stdout=subprocess.DEVNULL
        )
        self.stdout.write(f"Started a django-q2 cluster ({workers} workers) on the same database.")
        return process

    # --- the flow -------------------------------------------------------------------------------------

    def _say(self, text: str) -> MainMessage:
        self.stdout.write(self.style.MIGRATE_HEADING(f"\nPerson → Main: {text}"))
        message = main_message_post(access=self.access, text=text)
        task = f"task #{message.task_id} “{message.task.title}”" if message.task_id else "no task"
        self.stdout.write(f"  routed: {message.route} → {task}")
        return message

    def _run(self) -> None:
        posters = self._say(POSTERS)
        self._approve_quote(posters.task_id)
        video = self._say(CAT_VIDEO)
        self._wait(lambda: self._done(posters.task_id) and self._done(video.task_id), "the posters and the video")
        before_follow_up = self._last_seq()
        follow_up = self._say(FOLLOW_UP)
        if follow_up.route != Route.FOLLOW_UP or follow_up.task_id != posters.task_id:
            raise CommandError(f"the follow-up was routed {follow_up.route} to task {follow_up.task_id}")

        # Revisions within the no-confirmation limits go ahead without a card (README, Billing: the spending
        # rule); a person approves one only if the rule asks.
        def warmer_done():
            if quote := self._open_quote(posters.task_id):
                self._approve(quote)
            return self._done(posters.task_id, since=before_follow_up)

        self._wait(warmer_done, "the warmer posters")

    def _open_quote(self, task_id: int) -> Card | None:
        return Card.objects.filter(task_id=task_id, kind=CardKind.QUOTE, status=CardStatus.OPEN).first()

    def _approve_quote(self, task_id: int) -> None:
        self._approve(self._wait(lambda: self._open_quote(task_id), "the quote card"))

    def _approve(self, card: Card) -> None:
        self.stdout.write(f"  Person approves the card “{card.title}”.")
        card_act(access=self.access, card_id=card.pk, action="approve")

    def _done(self, task_id: int, *, since: int = 0) -> bool:
        """The task is done, and (with `since`) finished again after that event: it did the newer request too."""
        if not Task.objects.filter(pk=task_id, status=TaskStatus.DONE).exists():
            return False
        finished = Event.objects.filter(
            workspace_id=self.workspace_id, seq__gt=since, kind="task.status", data__task=task_id, data__status="done"
        )
        return not since or finished.exists()

    def _last_seq(self) -> int:
        return Event.objects.filter(workspace_id=self.workspace_id).order_by("-seq").values_list("seq", flat=True)[0]

    def _wait(self, ready, what: str):
        deadline = time.monotonic() + self.timeout
        while True:
            close_old_connections()
            self._print_events()
            value = ready()
            if value:
                return value
            if time.monotonic() > deadline:
                raise CommandError(f"timed out after {self.timeout:.0f}s waiting for {what}")
            # The watchdog and the generation sweeper, as `make run` would run them.
            watchdog_sweep()
            jobs_poll_silent()
            time.sleep(0.3)

    def _print_events(self) -> None:
        events = Event.objects.filter(workspace_id=self.workspace_id, seq__gt=self.last_seq).order_by("seq")
        for event in events:
            self.last_seq = event.seq
            if event.kind in SHOWN_EVENTS:
                self.stdout.write(f"  [{event.seq:>4}] {event.kind}: {_brief(event.data)}")

    # --- the summary ----------------------------------------------------------------------------------

    def _summary(self) -> None:
        out = self.stdout.write
        out(self.style.MIGRATE_HEADING("\nSummary"))
        out("Messages to Main and their routes:")
        for message in MainMessage.objects.filter(workspace_id=self.workspace_id).order_by("pk"):
            out(f"  “{message.text}” → {message.route} (task #{message.task_id})")
        out("Tasks:")
        for task in Task.objects.filter(workspace_id=self.workspace_id).order_by("pk"):
            out(
                f"  #{task.pk} {task.title} — {task.kind}, {task.status} ({task.stop_reason}), language {task.language}"
            )
        out("Artifacts and versions:")
        artifacts = Artifact.objects.filter(workspace_id=self.workspace_id).annotate(n=Count("versions"))
        for artifact in artifacts.order_by("pk"):
            out(f"  #{artifact.pk} {artifact.kind} “{artifact.title}”: {artifact.n} version(s)")
        orders = Order.objects.filter(workspace_id=self.workspace_id)
        captured = orders.filter(status="captured").aggregate(total=Sum("amount"))["total"] or 0
        out(f"Charges: {orders.filter(status='captured').count()} captured, {captured} credits")
        ok, expected, actual = wallet_reconcile(self.workspace_id)
        out(f"Wallet: {actual} — {'reconciles with the ledger' if ok else f'DOES NOT reconcile: expected {expected}'}")
        stalls = stalls_list(workspace_id=self.workspace_id)
        out(
            f"Stalls (a task stopped with open checklist items and no card open, measured from the stored "
            f"task status events and cards): {len(stalls)}"
        )
        for stall in stalls:
            when = f"{stall.at:%H:%M:%S}"
            out(f"  task #{stall.task_id} at {when}: {stall.status} ({stall.reason}), {stall.open_items} item(s) open")
        if not ok or stalls:
            raise CommandError("the demo did not end as it should")


def _brief(data: dict) -> str:
    keys = ("task", "status", "stop_reason", "title", "job", "artifact_id", "version", "amount", "kind")
    return ", ".join(f"{k}={data[k]}" for k in keys if data.get(k) not in (None, "", {}))
