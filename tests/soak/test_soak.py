"""Several clusters on one database, and the chaos soak (issue 17 items 3 and 4), on real processes.

Both start every line of deploy/Procfile.cluster (two daphne, two qclusters, two watchdogs, the sweeper) on
the test database and drive them with the scripted person of tests/soak/person.py. See tests/soak/run.py.
The full-size soak is `make soak` (100 tasks, 5 minutes); the one here is its 60-second CI version.
"""

import pytest

from tests.conftest import redis_url
from tests.soak.run import SoakConfig, soak
from tests.support.realtime import database_url_of_test_db
from tests.support.servers import wait_for_other_sessions_to_end

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def _run(config: SoakConfig):
    try:
        report = soak(config)
    finally:
        wait_for_other_sessions_to_end(timeout=30)
    print(report.text())
    assert report.passed, f"{report.text()}\n{report.logs[-8000:]}"
    return report


def test_two_clusters_on_one_database_run_100_paid_tasks_once_each():
    # given two qclusters and two daphne processes on one database, and 100 tasks asking for paid posters
    # when the person approves every budget card through either web server
    report = _run(
        SoakConfig(
            database_url=database_url_of_test_db(), redis_url=redis_url(), chaos=False, seconds=0, drain_timeout=600
        )
    )

    # then every task finished, each paid item was charged once, the log has no gap, no turn overlapped
    findings = report.findings
    assert findings.statuses == {"done": 100}
    assert report.items_done == 200
    assert findings.orders == {"captured": 200}
    assert findings.paid_steps >= 100  # at least one paid step per task, each charged once (checked per item)
    assert not report.kills and not report.supervisor_restarts


def test_a_60_second_chaos_soak_loses_nothing():
    # given the same cluster under load, with a worker process SIGKILLed every 3 seconds, PostgreSQL restarted
    # once during a recovery and Redis once (or reported "skipped" with the reason where this machine cannot)
    config = SoakConfig(
        database_url=database_url_of_test_db(), redis_url=redis_url(), seconds=60, tasks=20, drain_timeout=60
    )
    report = _run(config)

    # then (asserted in _run) every task is terminal or on a card, nothing runs past its lease, nothing is
    # bought or submitted twice, the ledger reconciles and the event log has no gap
    assert len(report.kills) >= 15
    assert report.recoveries, "no kill was recovered from"
    assert report.postgres.startswith(("restarted", "skipped: cannot restart PostgreSQL here"))
    assert report.redis.startswith(("restarted", "skipped: cannot restart Redis here"))
