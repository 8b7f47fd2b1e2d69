"""`python manage.py scenarios` (issue 18): every scenario under scenarios/ runs against the real runtime, real
workers (a django-q2 cluster, the watchdog and the generation sweeper as processes) and PostgreSQL, as written and
with a worker SIGKILLed mid-way, and meets every target; a missed check or a broken file fails the command.
"""

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from simulation.report import report_path
from simulation.spec import scenarios_all

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

TARGETS = ("stalls", "duplicate generations", "unnecessary confirmations", "follow-ups routed right", "split copies")


def test_every_scenario_meets_the_targets_as_written_and_with_a_worker_killed():
    out = StringIO()
    # when every scenario runs, clean and with a kill
    try:
        call_command("scenarios", stdout=out)
    except CommandError:
        pytest.fail(out.getvalue()[-20_000:])  # what each scenario did, and the check it missed
    # then the table names every target as met, and the report says the same
    table = out.getvalue()
    for target in TARGETS:
        assert f"{target}".ljust(28) in table and "MISS" not in table, table
    report = json.loads(report_path().read_text())
    assert report["passed"] is True
    ran = {(row["name"], row["variant"]) for row in report["scenarios"]}
    assert ran == {(s.name, v) for s in scenarios_all() for v in ("clean", "kill")}
    for row in report["scenarios"]:
        assert row["passed"] and not row["failed_checks"] and row["checks"] > 0, row
        assert row["ledger_reconciles"] is True
        if row["variant"] == "kill":
            assert len(row["kills"]) == 1, row  # one SIGKILL, and every target still met
    totals = report["totals"]
    assert totals["stalls"] == totals["duplicate_generations"] == totals["split_copies"] == 0
    assert totals["follow_ups"] > 0 and totals["follow_ups_routed_right"] == 1.0
    assert totals["model_calls"] > 0 and totals["credits"] > 0


def test_a_missed_check_fails_the_command_and_the_report_says_why(tmp_path):
    # given a scenario that expects five posters from a request for one
    (tmp_path / "one_poster.yaml").write_text(
        "name: one_poster\ntitle: One poster, five expected\nsteps:\n"
        "  - say: Make a poster for our spring sale\n    as: spring\n"
        "  - settle: auto\n"
        "  - check: spring\n    artifacts: {image: 5}\n"
    )
    out = StringIO()
    # when it runs, then the command fails
    with pytest.raises(CommandError, match="missed a target or a check"):
        call_command("scenarios", "--dir", str(tmp_path), "--variants", "clean", stdout=out)
    # and the table and the report name the check
    assert "task spring has 1 image artifact(s), 5 meant" in out.getvalue()
    report = json.loads(report_path().read_text())
    assert report["passed"] is False
    assert report["scenarios"][0]["failed_checks"] == ["task spring has 1 image artifact(s), 5 meant"]


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("name: x\ntitle: t\nsteps:\n  - dance: now\n", "step 1: exactly one action"),
        ("name: x\ntitle: t\nsteps:\n  - say: hi\n    route: follow_up\n", "a follow_up names the task"),
        ("name: Bad Name\ntitle: t\nsteps:\n  - settle: auto\n", "name"),
        ("name: x\ntitle: t\nsteps: [\n", "cannot read it"),
    ],
)
def test_a_broken_scenario_file_is_refused_with_what_is_wrong(tmp_path, text, error):
    Path(tmp_path / "broken.yaml").write_text(text)
    with pytest.raises(CommandError, match=error):
        call_command("scenarios", "--dir", str(tmp_path), stdout=StringIO())
