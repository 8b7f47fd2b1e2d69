"""The web process's PostgreSQL connections come from a bounded pool; a database it cannot reach is a 503.

Under ASGI each request runs on a thread of its own and a persistent connection belongs to its thread: at
100 people, daphne opened one per request thread and PostgreSQL refused the 101st ("too many clients", 500s in
the HTTP load bench). The pool test runs a fresh interpreter, because the pool is chosen when settings load.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.db import OperationalError

from lomote.kernel.database import current_database_url

ROOT = Path(__file__).resolve().parents[2]

# Twelve "requests" at once, each on its own thread, each holding its connection for a while and handing it
# back the way Django does at the end of a request (close with CONN_MAX_AGE = 0).
_REQUESTS_AT_ONCE = """
import json, threading, time
import lomote.asgi  # the web process's entry point: it picks the pool before Django loads its settings
from django.db import connection

barrier = threading.Barrier(12)
pids, errors = [], []

def request():
    barrier.wait()
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid(), pg_sleep(0.2)")
            pids.append(cursor.fetchone()[0])
    except Exception as exc:
        errors.append(repr(exc))
    finally:
        connection.close()

threads = [threading.Thread(target=request) for _ in range(12)]
for t in threads: t.start()
for t in threads: t.join()
options = connection.settings_dict["OPTIONS"]
print(json.dumps({"options": repr(options.get("pool", {}).get("max_size")), "sslmode": options.get("sslmode"),
                  "max_age": connection.settings_dict["CONN_MAX_AGE"], "pids": pids, "errors": errors}))
"""


@pytest.mark.postgres
@pytest.mark.django_db
def test_the_web_process_shares_a_bounded_pool_of_connections_between_its_request_threads():
    env = {
        **os.environ,
        "DATABASE_URL": current_database_url() + "?sslmode=disable",  # an option in the URL stays beside the pool
        "LOMOTE_DB_POOL_SIZE": "3",
        "LOMOTE_DB_POOL_TIMEOUT": "20",
        "DJANGO_SETTINGS_MODULE": "lomote.settings",
    }
    done = subprocess.run(  # noqa: S603 - our own snippet
        [sys.executable, "-c", _REQUESTS_AT_ONCE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["errors"] == []
    assert len(report["pids"]) == 12  # every request was served, waiting its turn for a connection
    assert len(set(report["pids"])) <= 3  # on at most the pool's size of server connections
    assert (report["options"], report["max_age"], report["sslmode"]) == ("3", 0, "disable")


@pytest.mark.postgres
def test_workers_keep_their_persistent_connection_per_thread():
    # A qcluster (and this test process) never imports lomote.asgi: no pool, one persistent connection.
    assert "pool" not in settings.DATABASES["default"].get("OPTIONS", {})
    assert settings.DATABASES["default"]["CONN_MAX_AGE"] > 0


@pytest.mark.django_db
def test_a_database_it_cannot_reach_is_a_503_that_says_to_retry(client, monkeypatch):
    def unreachable(*args, **kwargs):
        raise OperationalError("connection failed: FATAL:  sorry, too many clients already")

    monkeypatch.setattr("workspace.authentication.principal_for_api_key", unreachable)
    response = client.get("/api/v1/workspaces/", HTTP_AUTHORIZATION="Bearer lmk_whatever")
    assert response.status_code == 503
    assert response["Retry-After"] == "2"
    body = response.json()["error"]
    assert body["code"] == "database_unavailable"
    assert "too many clients" not in body["message"]  # the server's own words stay in the log
