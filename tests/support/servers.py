"""Real server processes for tests that need a live Lomote (the browser suite, the schemathesis contract).

Daphne serves `lomote.asgi` from a separate process on the PostgreSQL test database, so tests using it need
`transaction=True`: the server only sees what the test committed.
"""

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

from django.conf import settings


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_healthy(url: str, *, name: str, alive, log_tail, timeout: float) -> None:
    """Poll `url`/healthz until it answers 200; fail with the process's log if it exits or never answers."""
    deadline = time.monotonic() + timeout
    while True:
        if not alive():
            raise AssertionError(f"{name} exited: {log_tail()}")
        with contextlib.suppress(OSError):
            with urllib.request.urlopen(f"{url}/healthz", timeout=2) as response:  # noqa: S310 - local
                if response.status == 200:
                    return
        if time.monotonic() > deadline:
            raise AssertionError(f"{name} did not answer in {timeout}s: {log_tail()}")
        time.sleep(0.1)


class Daphne:
    """`python -m daphne` serving lomote.asgi on a fixed port; can be stopped and started again."""

    def __init__(self, env: dict[str, str], port: int):
        self.env, self.port = env, port
        self.process: subprocess.Popen | None = None
        self.log = tempfile.TemporaryFile()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 30) -> None:
        self.process = subprocess.Popen(  # noqa: S603 - our own server with fixed arguments
            [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(self.port), "lomote.asgi:application"],
            cwd=settings.BASE_DIR,
            env=self.env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        wait_healthy(
            self.url, name="daphne", alive=lambda: self.process.poll() is None, log_tail=self.log_tail, timeout=timeout
        )

    def stop(self) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)
        self.process = None

    def log_size(self) -> int:
        return os.fstat(self.log.fileno()).st_size

    def log_since(self, offset: int) -> bytes:
        """What the process wrote after `offset`. Read with pread: the process writes through the same open file,
        so moving its offset (seek) would make it write over what it wrote before."""
        return os.pread(self.log.fileno(), max(self.log_size() - offset, 0), offset)

    def log_tail(self, chars: int = 3000) -> str:
        return self.log_since(0).decode(errors="replace")[-chars:]


def wait_for_other_sessions_to_end(timeout: float = 10) -> None:
    """A killed process's PostgreSQL backend outlives it briefly; the test database is dropped only after."""
    from django.db import connection

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
            if cursor.fetchone()[0] == 0:
                return
        time.sleep(0.1)  # polling interval
