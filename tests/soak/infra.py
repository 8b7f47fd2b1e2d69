"""Restarting the shared services under the cluster: PostgreSQL (`pg_ctlcluster`) and Redis.

Each restarter first says whether it can restart the service here (`why_not()` is None when it can). A soak
that cannot restart one reports "skipped: cannot restart … here" with the reason: never a pretend restart.
"""

import contextlib
import getpass
import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1", ""}


def _port_open(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def _wait(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} within {timeout:g} s")
        time.sleep(0.1)  # polling interval


@dataclass(frozen=True)
class PgCluster:
    version: str
    name: str
    port: int
    owner: str


class PostgresRestarter:
    """Restarts the Debian PostgreSQL cluster serving DATABASE_URL, with `pg_ctlcluster … restart -m fast`."""

    def __init__(self, database_url: str):
        parts = urlsplit(database_url)
        self.host, self.port = parts.hostname or "", parts.port or 5432
        self.cluster = self._find_cluster()

    def _find_cluster(self) -> PgCluster | None:
        if self.host not in LOCAL_HOSTS or not shutil.which("pg_lsclusters"):
            return None
        listing = subprocess.run(["pg_lsclusters", "-h"], capture_output=True, text=True, check=False).stdout
        for row in listing.splitlines():
            fields = row.split()
            if len(fields) >= 5 and fields[2] == str(self.port):
                return PgCluster(version=fields[0], name=fields[1], port=self.port, owner=fields[4])
        return None

    def why_not(self) -> str | None:
        if self.host not in LOCAL_HOSTS:
            return f"the database is on {self.host}, not this machine"
        if self.cluster is None:
            return f"no pg_lsclusters cluster serves port {self.port}"
        if not shutil.which("pg_ctlcluster"):
            return "pg_ctlcluster is not installed"
        if os.geteuid() != 0 and getpass.getuser() != self.cluster.owner:
            return f"this user is neither root nor the cluster's owner ({self.cluster.owner})"
        return None

    def restart(self) -> float:
        """Restart it and wait until it accepts connections again; returns the seconds it took."""
        started = time.monotonic()
        cluster = self.cluster
        subprocess.run(
            ["pg_ctlcluster", cluster.version, cluster.name, "restart", "-m", "fast"],  # noqa: S607 - Debian tool
            check=True,
            capture_output=True,
            timeout=120,
        )
        _wait(lambda: _port_open(self.host or "127.0.0.1", self.port), 60, "PostgreSQL did not come back")
        return time.monotonic() - started


class RedisRestarter:
    """Restarts the Redis at REDIS_URL: SHUTDOWN NOSAVE, then the same server binary with the same port, bind
    address and data directory (read from the server before it stops). If something else brings it back (a
    supervisor), that one is used and nothing is started."""

    KEPT = ("port", "bind", "dir", "save", "appendonly", "dbfilename", "maxmemory")

    def __init__(self, redis_url: str):
        self.url = redis_url
        parts = urlsplit(redis_url) if redis_url else None
        self.host = (parts.hostname or "127.0.0.1") if parts else ""
        self.port = (parts.port or 6379) if parts else 0

    def _client(self):
        import redis

        return redis.Redis.from_url(self.url, socket_timeout=2)

    def _executable(self) -> str | None:
        reported = self._client().info("server").get("executable", "")
        if reported and os.access(reported, os.X_OK):
            return reported
        return shutil.which("redis-server")

    def why_not(self) -> str | None:
        if not self.url:
            return "no REDIS_URL: the cluster runs without a Redis layer"
        if self.host not in LOCAL_HOSTS:
            return f"Redis is on {self.host}, not this machine"
        try:
            executable = self._executable()
        except Exception as exc:  # noqa: BLE001 - any failure to talk to it means we cannot restart it
            return f"Redis does not answer ({type(exc).__name__})"
        if executable is None:
            return "no redis-server binary here to start it again"
        return None

    def restart(self) -> float:
        started = time.monotonic()
        client = self._client()
        executable = self._executable()
        config = {key: value for key in self.KEPT for key, value in client.config_get(key).items()}
        # The server closes the connection as it goes: that error is the answer.
        with contextlib.suppress(Exception):
            client.shutdown(nosave=True)
        _wait(lambda: not _port_open(self.host, self.port), 30, "Redis did not stop")
        time.sleep(0.5)  # a supervisor, if there is one, would start it again now
        if not _port_open(self.host, self.port):
            argv = [executable, "--daemonize", "yes"]
            for key, value in config.items():
                if key == "save":
                    argv += ["--save", value]  # "" keeps persistence off, as it was
                elif value != "":
                    argv += [f"--{key}", *value.split()]
            subprocess.run(argv, check=True, timeout=30, capture_output=True)  # noqa: S603 - its own binary
        _wait(self._pings, 30, "Redis did not come back")
        return time.monotonic() - started

    def _pings(self) -> bool:
        try:
            return bool(self._client().ping())
        except Exception:  # noqa: BLE001 - not up yet
            return False
