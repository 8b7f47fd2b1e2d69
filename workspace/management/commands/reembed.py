from django.core.management.base import BaseCommand, CommandError

from workspace.models import Workspace
from workspace.search import reembed
from workspace.search.query import REEMBED_BATCH, sources


class Command(BaseCommand):
    help = (
        "Bring every searchable object (tasks, artifacts…) under its workspace's current embedding model: embed "
        "what is missing or outdated, then delete vectors of other models and of objects that no longer exist. "
        "Searches do this lazily; run it after changing the model (a new package version, an endpoint profile)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--workspace", type=int, action="append", help="Only this workspace (repeatable).")
        parser.add_argument("--kind", action="append", help="Only this kind, e.g. task or artifact (repeatable).")
        parser.add_argument("--batch", type=int, default=REEMBED_BATCH, help="Texts embedded per call.")

    def handle(self, *args, workspace=None, kind=None, batch=REEMBED_BATCH, **options):
        unknown = sorted(set(kind or ()) - set(sources()))
        if unknown:
            raise CommandError(f"Unknown kind(s): {', '.join(unknown)}. Known: {', '.join(sorted(sources()))}.")
        if workspace:
            missing = sorted(
                set(workspace) - set(Workspace.objects.filter(pk__in=workspace).values_list("pk", flat=True))
            )
            if missing:
                raise CommandError(f"No workspace {', '.join(map(str, missing))}.")
        if batch < 1:
            raise CommandError("--batch must be at least 1.")
        failed = 0
        for report in reembed(workspace_ids=workspace, kinds=kind, batch=batch):
            line = (
                f"workspace {report.workspace_id} {report.kind}: {report.objects} objects, {report.embedded} "
                f"embedded, {report.pruned} pruned, model {report.model_id or '-'}"
            )
            if report.error:
                failed += 1
                self.stderr.write(f"{line}; stopped: {report.error}")
            else:
                self.stdout.write(line)
        if failed:
            raise CommandError(f"{failed} workspace/kind pair(s) could not be re-embedded; their old vectors are kept.")
