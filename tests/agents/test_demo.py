"""`python manage.py demo`: the headline flow, headless, on PostgreSQL and on a fresh SQLite file."""

import os
import subprocess
import sys
from io import StringIO

import pytest
from django.conf import settings
from django.core.management import call_command

from agents.models import MainMessage, Task, TaskStatus
from agents.services.metrics import stalls_count
from billing.models import Order
from workspace.models import Artifact

STALLS = "measured from the stored task status events and cards): 0"


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_it_runs_the_headline_flow_on_postgresql():
    # when the demo runs against the test database, with its own cluster
    out = StringIO()
    call_command("demo", "--timeout", "150", stdout=out)
    # then every message went where it should, every task finished, posters got a second version
    routes = list(MainMessage.objects.order_by("pk").values_list("route", "task_id"))
    assert [route for route, _ in routes] == ["new_task", "new_task", "follow_up"]
    assert routes[2][1] == routes[0][1]
    assert set(Task.objects.values_list("status", flat=True)) == {TaskStatus.DONE}
    posters = Artifact.objects.filter(kind="image").exclude(title="Cat photo")
    assert posters.count() == 3 and all(a.versions.count() == 2 for a in posters)
    # and the works are titled by their kind and the requests' subjects, not with the person's whole sentences
    # ("a series of 3 retro brand posters" names no subject beyond the posters and their style)
    assert sorted(posters.values_list("title", flat=True)) == [f"Poster {n} of 3" for n in (1, 2, 3)]
    assert list(Artifact.objects.filter(kind="video").values_list("title", flat=True)) == ["Video — cat"]
    # and the cat photo came in through the upload path, typed by its content
    cat = Artifact.objects.get(title="Cat photo").versions.get(number=1)
    assert (cat.media_type, cat.meta["upload"]["filename"], cat.meta["format"]) == ("image/png", "cat.png", "png")
    assert set(Order.objects.values_list("status", flat=True)) == {"captured"}
    # and no task ever stopped with work left and nothing to answer, by the stored facts the summary printed
    assert stalls_count(workspace_id=Task.objects.first().workspace_id) == 0
    assert STALLS in out.getvalue()


def test_it_runs_the_headline_flow_on_a_fresh_sqlite_database(tmp_path):
    # given a brand-new SQLite file and nothing else
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL"}}
    env.update(DATABASE_URL=f"sqlite:///{tmp_path / 'demo.sqlite3'}", LOMOTE_VAR_DIR=str(tmp_path), LOG_LEVEL="WARNING")
    # when the demo command runs, exactly as a person would type it
    result = subprocess.run(
        [sys.executable, "manage.py", "demo", "--timeout", "150"],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    # then it exits 0 with the summary
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "→ follow_up" in result.stdout and STALLS in result.stdout
