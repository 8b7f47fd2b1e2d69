"""`make run`'s supervisor (manage.py runstudio): a background process that dies is started again, one that keeps
dying stops everything with its name, and SIGTERM leaves no process behind."""

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from django.conf import settings

from simulation.processes import descendants
from tests.support.qcluster import wait_for
from tests.support.realtime import worker_env
from tests.support.servers import free_port, wait_healthy


def _command_of(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _running(parent: int, name: str) -> list[int]:
    return [pid for pid in descendants(parent) if f"manage.py {name}" in _command_of(pid)]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().split(") ")[-1][:1] != "Z"


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_it_starts_a_dead_background_process_again_and_stops_everything_on_sigterm():
    port = free_port()
    log = tempfile.TemporaryFile()
    studio = subprocess.Popen(  # noqa: S603 - our own manage.py with fixed arguments
        [sys.executable, "manage.py", "runstudio", "--port", str(port)],
        cwd=settings.BASE_DIR,
        env=worker_env(redis_url=None),
        stdout=log,
        stderr=subprocess.STDOUT,
    )

    def log_tail() -> str:
        log.seek(0)
        return log.read().decode(errors="replace")[-3000:]

    try:
        # given the studio served, with its qcluster (and the qcluster's workers) and watchdog running
        wait_healthy(
            f"http://127.0.0.1:{port}",
            name="runstudio",
            alive=lambda: studio.poll() is None,
            log_tail=log_tail,
            timeout=60,
        )
        [watchdog] = wait_for(lambda: _running(studio.pid, "watchdog"), timeout=30, what="the watchdog")
        [cluster] = wait_for(lambda: _running(studio.pid, "qcluster")[:1], timeout=30, what="the qcluster")
        cluster_workers = wait_for(lambda: descendants(cluster)[3:], timeout=30, what="the qcluster's workers")

        # when the watchdog and the qcluster's main process are SIGKILLed
        os.kill(watchdog, signal.SIGKILL)
        os.kill(cluster, signal.SIGKILL)

        # then both are started again, the old cluster's workers do not linger, and the studio keeps serving
        wait_for(
            lambda: [p for p in _running(studio.pid, "watchdog") if p != watchdog], timeout=30, what="a new watchdog"
        )
        wait_for(
            lambda: [p for p in _running(studio.pid, "qcluster") if p != cluster], timeout=30, what="a new qcluster"
        )
        wait_for(
            lambda: not any(_alive(pid) for pid in cluster_workers), timeout=30, what="the dead cluster's workers to go"
        )
        assert studio.poll() is None
        assert "watchdog exited (-9); starting it again" in log_tail()
        wait_healthy(
            f"http://127.0.0.1:{port}",
            name="runstudio",
            alive=lambda: studio.poll() is None,
            log_tail=log_tail,
            timeout=10,
        )
        everything = descendants(studio.pid)

        # when it is stopped
        studio.send_signal(signal.SIGTERM)

        # then it exits cleanly and no process of it is left
        assert studio.wait(timeout=30) == 0, log_tail()
        wait_for(lambda: not any(_alive(pid) for pid in everything), timeout=20, what="every child to stop")
    finally:
        if studio.poll() is None:
            studio.kill()
            studio.wait(timeout=10)
        for pid in descendants(studio.pid):
            os.kill(pid, signal.SIGKILL)
        log.close()


def test_a_process_that_keeps_dying_stops_everything_with_its_name(monkeypatch):
    from lomote.management.commands import runstudio

    # given a supervisor whose "watchdog" dies at once, every time, beside a healthy "daphne"
    monkeypatch.setattr(runstudio, "RESTART_PAUSE", 0.01)
    monkeypatch.setattr(runstudio, "POLL", 0.01)
    said: list[str] = []
    supervisor = runstudio.Supervisor(
        {
            "daphne": [sys.executable, "-c", "import time; time.sleep(60)"],
            "watchdog": [sys.executable, "-c", "raise SystemExit(3)"],
        },
        env=dict(os.environ),
        say=said.append,
    )
    daphne = supervisor.children["daphne"]
    try:
        # when it runs
        supervisor.run()
    finally:
        supervisor.stop_all(grace=5)

    # then the watchdog was started again five times, and the sixth death stopped everything, naming it
    assert said == ["watchdog exited (3); starting it again"] * runstudio.RESTART_LIMIT
    assert supervisor.failed == [f"watchdog died {runstudio.RESTART_LIMIT + 1} times within 60 s"]
    assert daphne.poll() is not None
