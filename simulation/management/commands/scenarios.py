"""`python manage.py scenarios [NAME…]`: run the scenarios under scenarios/ against the real runtime and print
the collaboration metrics (seed 000 §11.2–11.3). Exit 1 when a target or a check is missed."""

from pathlib import Path

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from simulation.report import report_table, report_write
from simulation.runner import scenario_run
from simulation.spec import SCENARIOS_DIR, ScenarioError, scenarios_all


class Command(BaseCommand):
    help = "Run scenario simulations (a scripted person, the real runtime and workers) and report the metrics."

    def add_arguments(self, parser):
        parser.add_argument("names", nargs="*", help="Scenario names (default: all under scenarios/).")
        parser.add_argument(
            "--variants",
            default="clean,kill",
            help="clean (as written) and/or kill (a worker SIGKILLed mid-way), comma-separated.",
        )
        parser.add_argument("--workers", type=int, default=2, help="django-q2 workers of each run's cluster.")
        parser.add_argument("--dir", type=Path, default=SCENARIOS_DIR, help="Where the scenario files are.")

    def handle(self, *args, names, variants, workers, dir, **options):  # noqa: A002 - the option's name
        call_command("migrate", verbosity=0, interactive=False)
        try:
            scenarios = scenarios_all(dir)
        except ScenarioError as exc:
            raise CommandError(str(exc)) from None
        known = {s.name: s for s in scenarios}
        unknown = [name for name in names if name not in known]
        if unknown:
            raise CommandError(f"No scenario named {', '.join(unknown)} in {dir} (known: {', '.join(known)})")
        chosen = [known[name] for name in names] if names else scenarios
        wanted = [v.strip() for v in variants.split(",") if v.strip()]
        if not wanted or set(wanted) - {"clean", "kill"}:
            raise CommandError("--variants takes clean, kill or both")
        results = []
        for scenario in chosen:
            for variant in wanted:
                self.stdout.write(self.style.MIGRATE_HEADING(f"\n{scenario.name} ({variant}): {scenario.title}"))
                results.append(scenario_run(scenario, variant=variant, workers=workers, log=self.stdout.write))
        self.stdout.write("\n" + report_table(results))
        path = report_write(results)
        self.stdout.write(f"\nReport: {path}")
        if not all(result.passed for result in results):
            raise CommandError("a scenario missed a target or a check (see above)")
