"""`manage.py runstudio` (`make run`): daphne beside a qcluster, the runtime watchdog and the generation sweeper,
supervised the way a process manager would.

A background process that dies (a crash, an OOM kill, someone's `kill -9`) is started again after a short pause,
and said so: the runtime is built for it (leases, the watchdog, the sweeps hand out what the dead process held).
One that keeps dying — more than RESTART_LIMIT times within RESTART_WINDOW seconds — is a configuration problem
rather than bad luck: everything stops, with its name. Daphne exiting, Ctrl-C or SIGTERM stop everything.
"""

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections import deque

from django.core.management.base import BaseCommand

RESTART_PAUSE = 1.0  # seconds before a dead background process is started again
RESTART_LIMIT = 5
RESTART_WINDOW = 60.0
POLL = 0.5


class Command(BaseCommand):
    help = (
        "Serve the studio with daphne beside a django-q2 cluster, the runtime watchdog and the generation "
        "sweeper; a background process that dies is started again; Ctrl-C stops all."
    )

    def add_arguments(self, parser):
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", default="8000")

    def handle(self, *args, host, port, **options):
        manage = [sys.executable, "manage.py"]
        supervisor = Supervisor(
            {
                "daphne": [sys.executable, "-m", "daphne", "-b", host, "-p", str(port), "lomote.asgi:application"],
                "qcluster": [*manage, "qcluster"],
                "watchdog": [*manage, "watchdog"],
                "generation_sweeper": [*manage, "generation_sweeper"],
            },
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
            say=self.stderr.write,
        )
        signal.signal(signal.SIGTERM, lambda *_: supervisor.stop())
        self.stdout.write(
            f"Studio on http://{host}:{port}/ with a qcluster, the watchdog and the generation sweeper; "
            "Ctrl-C stops all."
        )
        try:
            with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is the normal way to stop
                supervisor.run()
        finally:
            supervisor.stop_all()
        if supervisor.failed:
            self.stderr.write(f"stopped: {'; '.join(supervisor.failed)}")
            sys.exit(1)


class Supervisor:
    """The studio's processes, each leading a process group of its own (stopping one takes its workers with it)."""

    def __init__(self, commands: dict[str, list[str]], *, env: dict[str, str], say):
        self.commands, self.env, self.say = commands, env, say
        self.children = {name: self._spawn(name) for name in commands}
        self.restarts: dict[str, deque[float]] = {name: deque() for name in commands}
        self.stopping = False
        self.failed: list[str] = []

    def _spawn(self, name: str) -> subprocess.Popen:
        return subprocess.Popen(self.commands[name], env=self.env, start_new_session=True)  # noqa: S603 - ours

    def stop(self) -> None:
        self.stopping = True

    def run(self) -> None:
        while not self.stopping:
            time.sleep(POLL)
            for name, child in list(self.children.items()):
                if child.poll() is not None:
                    self._died(name, child)

    def _died(self, name: str, child: subprocess.Popen) -> None:
        if name == "daphne":  # the studio itself: nothing to serve, everything stops
            self.stopping = True
            if child.returncode not in (0, -signal.SIGTERM):
                self.failed.append(f"daphne exited ({child.returncode})")
            return
        now, recent = time.monotonic(), self.restarts[name]
        while recent and now - recent[0] > RESTART_WINDOW:
            recent.popleft()
        if len(recent) >= RESTART_LIMIT:
            self.failed.append(f"{name} died {len(recent) + 1} times within {RESTART_WINDOW:g} s")
            self.stopping = True
            return
        recent.append(now)
        self.say(f"{name} exited ({child.returncode}); starting it again")
        _signal_group(child, signal.SIGKILL)  # what it leaves behind (a qcluster's workers) goes too
        time.sleep(RESTART_PAUSE)
        self.children[name] = self._spawn(name)

    def stop_all(self, grace: float = 15) -> None:
        """SIGTERM every process group at once, give them `grace` seconds together, then SIGKILL the rest."""
        for child in self.children.values():
            if child.poll() is None:
                _signal_group(child, signal.SIGTERM)
        deadline = time.monotonic() + grace
        for child in self.children.values():
            try:
                child.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _signal_group(child, signal.SIGKILL)
                child.wait(timeout=10)


def _signal_group(child: subprocess.Popen, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(child.pid, sig)
