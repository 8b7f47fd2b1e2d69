"""The processes of deploy/Procfile.cluster, started, supervised and killed the way a process manager would.

    procs = ProcessSet.from_procfile(env, ports={"WEB1_PORT": 8001, "WEB2_PORT": 8002})
    procs.start()                 # every line, each in its own process group
    procs.supervise()             # restart any line whose process exited (call it every second or so)
    procs.kill_random_worker(rng) # SIGKILL one process inside a qcluster, a watchdog or the sweeper
    procs.stop()                  # SIGTERM, then SIGKILL whatever is left; never leaves a process behind

Only this harness's own processes are ever signalled: the ones it started and their descendants (found through
their process group, which each line leads).
"""

import contextlib
import os
import random
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings

from tests.support.servers import wait_healthy

PROCFILE = Path(settings.BASE_DIR) / "deploy" / "Procfile.cluster"
_VARIABLE = re.compile(r"\$(\w+)|\$\{(\w+)\}")


def procfile_lines(path: Path = PROCFILE) -> list[tuple[str, str]]:
    """(name, command) for every `name: command` line; comments and blank lines skipped."""
    lines = []
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        name, _, command = line.partition(":")
        lines.append((name.strip(), command.strip()))
    return lines


def expand(command: str, variables: dict[str, str]) -> list[str]:
    """The command's argv: `$VAR` from `variables`, `python` as this interpreter. A missing variable is an error."""

    def value(match: re.Match) -> str:
        name = match.group(1) or match.group(2)
        if name not in variables:
            raise KeyError(f"the Procfile needs {name}")
        return variables[name]

    argv = shlex.split(_VARIABLE.sub(value, command))
    return [sys.executable if argv[0] == "python" else argv[0], *argv[1:]]


def _group_members(pgid: int) -> list[int]:
    """Pids in process group `pgid` (read from /proc, so only processes this user can see)."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] != "Z" and int(fields[2]) == pgid:  # state, ppid, pgrp
            members.append(int(entry))
    return members


@dataclass
class Line:
    name: str
    argv: list[str]
    env: dict[str, str]
    process: subprocess.Popen | None = None
    log: tempfile.SpooledTemporaryFile = field(default_factory=tempfile.TemporaryFile)
    starts: int = 0

    @property
    def is_cluster(self) -> bool:
        return "qcluster" in self.argv

    @property
    def is_web(self) -> bool:
        return "daphne" in self.argv

    def start(self) -> None:
        self.process = subprocess.Popen(  # noqa: S603 - our own Procfile, fixed arguments
            self.argv,
            cwd=settings.BASE_DIR,
            env=self.env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # it leads its own group: its workers are found, and die, with it
        )
        self.starts += 1

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def kill_group(self) -> None:
        if self.process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=10)

    def log_tail(self, chars: int = 2000) -> str:
        self.log.seek(0)
        return self.log.read().decode(errors="replace")[-chars:]


class ProcessSet:
    def __init__(self, lines: list[Line]):
        self.lines = lines
        self.restarts: list[str] = []  # names of lines the supervisor had to start again

    @classmethod
    def from_procfile(
        cls, env: dict[str, str], *, ports: dict[str, int], only: set[str] | None = None, path: Path = PROCFILE
    ) -> "ProcessSet":
        variables = {**env, **{k: str(v) for k, v in ports.items()}}
        return cls(
            [
                Line(name, expand(command, variables), env)
                for name, command in procfile_lines(path)
                if only is None or name in only
            ]
        )

    @property
    def web_urls(self) -> list[str]:
        urls = []
        for line in self.lines:
            if line.is_web:
                port = line.argv[line.argv.index("-p") + 1]
                urls.append(f"http://127.0.0.1:{port}")
        return urls

    def start(self) -> None:
        for line in self.lines:
            line.start()

    def supervise(self) -> list[str]:
        """Start again every line whose process exited (a process manager's job); returns their names."""
        restarted = []
        for line in self.lines:
            if line.process is not None and line.process.poll() is not None:
                line.kill_group()  # a qcluster's orphaned sentinel or workers would otherwise run on
                line.start()
                restarted.append(line.name)
        self.restarts.extend(restarted)
        return restarted

    def worker_pids(self) -> list[tuple[str, int]]:
        """(line, pid) of every process doing background work: a qcluster's sentinel, pusher, monitor and
        workers (not its launcher), the watchdogs and the sweeper. Web servers are left alone."""
        pids = []
        for line in self.lines:
            if not line.alive() or line.is_web:
                continue
            if line.is_cluster:
                pids.extend((line.name, pid) for pid in _group_members(line.process.pid) if pid != line.process.pid)
            else:
                pids.append((line.name, line.process.pid))
        return pids

    def kill_random_worker(self, rng: random.Random) -> tuple[str, int] | None:
        """SIGKILL one background process chosen at random; returns (line, pid), or None if none runs."""
        candidates = self.worker_pids()
        if not candidates:
            return None
        name, pid = rng.choice(candidates)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        return name, pid

    def wait_web_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        for url, line in zip(self.web_urls, [li for li in self.lines if li.is_web], strict=True):
            wait_healthy(
                url,
                name=line.name,
                alive=line.alive,
                log_tail=line.log_tail,
                timeout=max(0.1, deadline - time.monotonic()),
            )

    def stop(self, grace: float = 15) -> None:
        """SIGTERM every line at once, give them `grace` seconds together, then SIGKILL what is left."""
        for line in self.lines:
            if line.alive():
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(line.process.pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        for line in self.lines:
            if line.process is not None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    line.process.wait(timeout=max(0.1, deadline - time.monotonic()))
            line.kill_group()
        for line in self.lines:
            line.log.close()

    def logs(self) -> str:
        return "\n".join(f"--- {line.name} (started {line.starts}×)\n{line.log_tail()}" for line in self.lines)
