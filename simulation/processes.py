"""The real background processes a scenario runs against, as `make run` starts them: a django-q2 cluster, the
runtime watchdog and the generation sweeper — on the same database, with short leases and sweep periods so a
killed worker's turn is taken over in seconds rather than minutes.
"""

import contextlib
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings

from lomote.kernel.database import current_database_url

# Fast recovery: a dead worker's lease expires after LEASE seconds; the watchdog and the sweeper look every second.
LEASE_SECONDS = 6
FAST = {
    "LOMOTE_LEASE_SECONDS": str(LEASE_SECONDS),
    "LOMOTE_WATCHDOG_PERIOD": "1",
    "LOMOTE_QUEUE_STALE_SECONDS": "5",
    "LOMOTE_GENERATION_SWEEP_PERIOD": "1",
    "LOG_LEVEL": "WARNING",
}


def _children(pid: int) -> list[int]:
    """The process ids whose parent is `pid` (read from /proc: no extra dependency for one question)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # "pid (comm) state ppid …": comm may hold spaces and parentheses, so split after the last ")".
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 1 and int(fields[1]) == pid:
            found.append(int(entry.name))
    return found


def descendants(pid: int) -> list[int]:
    """Every process below `pid`: its children, theirs, and so on."""
    out, todo = [], [pid]
    while todo:
        for child in _children(todo.pop()):
            out.append(child)
            todo.append(child)
    return out


@dataclass
class Background:
    """The cluster, the watchdog and the sweeper of one scenario run."""

    workers: int = 2
    processes: dict[str, subprocess.Popen] = field(default_factory=dict)
    kills: int = 0

    def env(self) -> dict[str, str]:
        return {
            **os.environ,
            **FAST,
            "DATABASE_URL": current_database_url(),
            "Q_WORKERS": str(self.workers),
            "PYTHONUNBUFFERED": "1",
        }

    def _spawn(self, name: str, *args: str) -> None:
        self.processes[name] = subprocess.Popen(  # noqa: S603 - our own manage.py with fixed arguments
            [sys.executable, "manage.py", *args],
            cwd=settings.BASE_DIR,
            env=self.env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # a process group of its own: killing it takes its workers with it
        )

    def start(self) -> None:
        self._spawn("cluster", "qcluster")
        self._spawn("watchdog", "watchdog")
        self._spawn("sweeper", "generation_sweeper")

    def cluster_pids(self) -> list[int]:
        cluster = self.processes.get("cluster")
        return descendants(cluster.pid) if cluster is not None and cluster.poll() is None else []

    def kill_worker(self, holder_pid: int | None) -> str:
        """SIGKILL the worker running a turn (its lease names its pid), else the whole cluster, which a supervisor
        starts again.

        django-q2's sentinel starts a new worker in place of a dead one; the watchdog takes the dead worker's turn
        over once its lease expires. The worker running a turn rather than a random process: that is the kill a
        scenario is about (a random idle one no longer wedges the cluster: lomote/kernel/qcluster_queue.py).
        Returns what was killed, for the report.
        """
        pids = self.cluster_pids()
        if holder_pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(holder_pid, signal.SIGKILL)
            what = f"the worker running a turn (pid {holder_pid})"
        elif pids:
            cluster = self.processes["cluster"]
            with contextlib.suppress(ProcessLookupError):
                os.killpg(cluster.pid, signal.SIGKILL)
            cluster.wait(timeout=10)
            what = f"the whole cluster (pid {cluster.pid} and its {len(pids)} processes)"
        else:
            return "nothing (no cluster process found)"
        self.kills += 1
        self._ensure_cluster()
        return what

    def _ensure_cluster(self) -> None:
        """If the kill took the cluster's sentinel down with it, start a new cluster, as a supervisor would."""
        time.sleep(0.5)
        cluster = self.processes["cluster"]
        if cluster.poll() is not None or not self.cluster_pids():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(cluster.pid, signal.SIGKILL)
            cluster.wait(timeout=10)
            self._spawn("cluster", "qcluster")

    def stop(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + 15
        for process in self.processes.values():
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)
        self.processes.clear()
