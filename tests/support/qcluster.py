"""A real `manage.py qcluster` process for tests, on the test database (see realtime.worker_env)."""

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time

from django.conf import settings


def start(env: dict[str, str]) -> tuple[subprocess.Popen, tempfile.SpooledTemporaryFile]:
    log = tempfile.TemporaryFile()
    process = subprocess.Popen(
        [sys.executable, "manage.py", "qcluster"],
        cwd=settings.BASE_DIR,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group, so its workers die with it
    )
    return process, log


def kill(process: subprocess.Popen) -> None:
    """SIGKILL the whole cluster at once: sentinel, pusher, workers — a machine losing power."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=10)


def stop(process: subprocess.Popen, log) -> None:
    """SIGTERM, then SIGKILL whatever is left; always leaves no process behind."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        pass
    kill(process)
    log.close()


def log_tail(log) -> str:
    log.seek(0)
    return log.read().decode(errors="replace")[-3000:]


@contextlib.contextmanager
def running(env: dict[str, str]):
    process, log = start(env)
    try:
        yield process, log
    finally:
        stop(process, log)


def wait_for(predicate, *, timeout: float, process: subprocess.Popen | None = None, log=None, what: str = ""):
    """Poll `predicate` until it returns something truthy; fail with the cluster's log if it never does."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if process is not None and process.poll() is not None:
            raise AssertionError(f"qcluster exited ({process.returncode}) waiting for {what}: {log_tail(log)}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}: {log_tail(log) if log else ''}")
        time.sleep(0.1)  # polling interval, not the assertion
