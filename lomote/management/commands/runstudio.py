"""`manage.py runstudio` (`make run`): daphne beside a qcluster, the runtime watchdog and the generation sweeper,
supervised the way a process manager would.

A background process that dies (a crash, an OOM kill, someone's `kill -9`) is started again after a short pause,
and said so: the runtime is built for it (leases, the watchdog, the sweeps hand out what the dead process held).
One that keeps dying — more than RESTART_LIMIT times within RESTART_WINDOW seconds — is a configuration problem
rather than bad luck: everything stops, with its name. Daphne exiting, Ctrl-C or SIGTERM stop everything.
"""

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
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        manage = [sys.executable, "manage.py"]
        commands = {
            "daphne": [sys.executable, "-m", "daphne", "-b", host, "-p", str(port), "lomote.asgi:application"],
            "qcluster": [*manage, "qcluster"],
            "watchdog": [*manage, "watchdog"],
            "generation_sweeper": [*manage, "generation_sweeper"],
        }
        # Each child leads a process group of its own, so stopping one takes its workers with it.
        start = {
            name: (lambda argv=argv: subprocess.Popen(argv, env=env, start_new_session=True))
            for name, argv in commands.items()
        }
        children = {name: spawn() for name, spawn in start.items()}
        restarts: dict[str, deque[float]] = {name: deque() for name in commands}
        self.stdout.write(
            f"Studio on http://{host}:{port}/ with a qcluster, the watchdog and the generation sweeper; "
            "Ctrl-C stops all."
        )
        stopping = False

        def stop(*_):
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGTERM, stop)
        failed: list[str] = []
        try:
            while not stopping:
                time.sleep(POLL)
                for name, child in list(children.items()):
                    if child.poll() is None:
                        continue
                    if name == "daphne":
                        stopping = True
                        if child.returncode not in (0, -signal.SIGTERM):
                            failed.append(f"daphne exited ({child.returncode})")
                        break
                    now = time.monotonic()
                    recent = restarts[name]
                    while recent and now - recent[0] > RESTART_WINDOW:
                        recent.popleft()
                    if len(recent) >= RESTART_LIMIT:
                        failed.append(f"{name} died {len(recent) + 1} times within {RESTART_WINDOW:g} s")
                        stopping = True
                        break
                    recent.append(now)
                    self.stderr.write(f"{name} exited ({child.returncode}); starting it again")
                    _signal_group(child, signal.SIGKILL)  # what it leaves behind (a qcluster's workers) goes too
                    time.sleep(RESTART_PAUSE)
                    children[name] = start[name]()
        except KeyboardInterrupt:
            pass
        finally:
            _stop_all(children.values())
        if failed:
            self.stderr.write(f"stopped: {'; '.join(failed)}")
            sys.exit(1)


def _stop_all(children, grace: float = 15) -> None:
    """SIGTERM every child's process group at once, give them `grace` seconds together, then SIGKILL the rest."""
    children = list(children)
    for child in children:
        if child.poll() is None:
            _signal_group(child, signal.SIGTERM)
    deadline = time.monotonic() + grace
    for child in children:
        try:
            child.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            _signal_group(child, signal.SIGKILL)
            child.wait(timeout=10)


def _signal_group(child: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(child.pid, sig)
    except ProcessLookupError:
        pass
