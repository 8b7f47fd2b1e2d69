"""Record the built-in guides' current files as their next versions (also done after every migrate)."""

from django.core.management.base import BaseCommand

from workspace.services.guides import builtin_files, guides_sync


class Command(BaseCommand):
    help = "Record the shipped creative guides (workspace/builtin_guides/*.md); unchanged files add nothing."

    def handle(self, *args, **options):
        added = guides_sync()
        for guide in added:
            self.stdout.write(f"added {guide.name} v{guide.version}")
        self.stdout.write(f"{len(builtin_files())} built-in guides, {len(added)} new version(s).")
