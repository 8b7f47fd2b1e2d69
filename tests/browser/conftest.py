"""A real studio for the browser: daphne and a django-q2 cluster on the PostgreSQL test database, and chromium.

The servers are separate processes (as `make run` starts them), so these tests use `transaction=True`: the
processes only see what the test committed. Without Redis in the daphne process the consumers tail the log.

One studio serves the whole package: daphne, the cluster, the generation sweeper and chromium start once (each
start costs seconds; per test they were most of the package's time). Each test still gets its own person,
workspace and browser context, and the database is flushed after it as before. Between two tests the cluster is
drained first — no queued or running task of the last test may write into the flushed database — and a server a
test stopped (or that died) is started again before the next one.
"""

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connections

from tests.support import qcluster
from tests.support.realtime import worker_env
from tests.support.servers import Daphne, free_port, wait_for_other_sessions_to_end

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOTS = Path(settings.VAR_DIR) / "screenshots"
PASSWORD = "studio-pw-1"  # noqa: S105 - a test persona's password
DRAIN_TIMEOUT = 20  # seconds the last test's tasks get to finish; longer, and a new cluster costs less than waiting
WARM_UP_TIMEOUT = 60  # seconds daphne gets to load the readers of words after it answers /healthz
WARMED_UP = re.compile(rb"understanding (warmed up|warm-up failed)")  # lomote/understanding/warm.py's last words


class Servers:
    """daphne, a django-q2 cluster and the generation sweeper, shared by the package's tests."""

    def __init__(self, env: dict[str, str]):
        self.env = env
        # At INFO, daphne says when its warm-up has loaded the readers of words (lomote/understanding/warm.py).
        self.daphne = Daphne({**env, "LOG_LEVEL": "INFO"}, free_port())
        self.cluster: subprocess.Popen | None = None
        self.cluster_log = None
        self.sweeper: subprocess.Popen | None = None

    def ensure_running(self) -> None:
        """Start whatever is not running: at the package's start, or after a test stopped it or it died."""
        if self.daphne.process is None or self.daphne.process.poll() is not None:
            self.daphne.stop()
            started_at = self.daphne.log_size()
            self.daphne.start()
            self.wait_for_warm_up(started_at)
        if self.cluster is None or self.cluster.poll() is not None:
            self.stop_cluster()
            self.cluster, self.cluster_log = qcluster.start(self.env)
        if self.sweeper is None or self.sweeper.poll() is not None:
            self.stop_sweeper()
            self.sweeper = subprocess.Popen(  # noqa: S603 - our own manage.py with fixed arguments
                [sys.executable, "manage.py", "generation_sweeper"],
                cwd=settings.BASE_DIR,
                env=self.env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )

    def wait_for_warm_up(self, log_offset: int, timeout: float = WARM_UP_TIMEOUT) -> None:
        """Daphne answers /healthz while it still loads the encoder and classifiers that route a message to Main
        (seconds on a loaded machine): a test's first message would wait for them past its expectation's timeout."""
        deadline = time.monotonic() + timeout
        while not WARMED_UP.search(self.daphne.log_since(log_offset)):
            if self.daphne.process.poll() is not None:
                raise AssertionError(f"daphne exited: {self.daphne.log_tail()}")
            if time.monotonic() > deadline:
                return  # not fatal: the first request then loads it
            time.sleep(0.1)  # polling interval

    def warm_up(self) -> None:
        """One message to Main through daphne and the cluster, as the package starts: a process's first message
        loads what routing and a turn need (the banks' embeddings among them; tens of seconds on a loaded
        machine), which the first test would otherwise wait for past its expectations' timeouts. The database is
        flushed after, as after a test."""
        from django.core.management import call_command

        from billing.services.wallets import wallet_topup
        from workspace.selectors import workspace_access
        from workspace.services.workspaces import api_key_create, workspace_create

        user = get_user_model().objects.create_user(username="warm-up")
        workspace = workspace_create(user=user, name="Warm-up")
        access = workspace_access(principal=user, workspace_id=workspace.pk)
        wallet_topup(access=access, amount=2000, memo="warm-up credits")
        _, key = api_key_create(access=access, name="warm-up", role="editor")
        request = urllib.request.Request(  # noqa: S310 - our own test server
            f"{self.daphne.url}/api/v1/workspaces/{workspace.pk}/messages/",
            data=json.dumps({"text": "Generate an image of a ginger cat"}).encode(),
            headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=WARM_UP_TIMEOUT) as response:  # noqa: S310 - our own server
            assert response.status == 201, response.read()
        self.drain(timeout=WARM_UP_TIMEOUT)
        call_command("flush", verbosity=0, interactive=False, reset_sequences=False, inhibit_post_migrate=False)

    def drain(self, timeout: float = DRAIN_TIMEOUT) -> None:
        """Wait until the cluster has no queued or running task (django-q2's monitor deletes a task's queue row
        only after saving its result, and a task queues its follow-ups before it ends). A task still running after
        `timeout` (an agent going on with a task the test has finished with) is killed with its cluster: nothing
        may write into the database the test's teardown flushes. The next test starts a new cluster."""
        from django_q.models import OrmQ

        deadline = time.monotonic() + timeout
        while self.cluster is not None and self.cluster.poll() is None and time.monotonic() < deadline:
            if not OrmQ.objects.exists():
                return
            time.sleep(0.1)  # polling interval
        if self.cluster is not None:
            qcluster.kill(self.cluster)
        self.stop_cluster()

    def stop_cluster(self) -> None:
        if self.cluster is not None:
            qcluster.stop(self.cluster, self.cluster_log)
        self.cluster = self.cluster_log = None

    def stop_sweeper(self) -> None:
        if self.sweeper is None:
            return
        if self.sweeper.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.sweeper.pid, signal.SIGTERM)
            self.sweeper.wait(timeout=10)
        self.sweeper = None

    def stop(self) -> None:
        self.daphne.stop()
        self.stop_sweeper()
        self.stop_cluster()


@dataclass
class Studio:
    server: Daphne
    user: object
    workspace: object
    access: object

    @property
    def url(self) -> str:
        return self.server.url


@pytest.fixture(scope="package")
def async_unsafe_orm():
    """Playwright's sync API runs an event loop on this thread for the whole package; the tests' and fixtures'
    ORM calls (pytest-django's flush among them) are still sync."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        yield


@pytest.fixture(scope="package")
def servers(django_db_setup, django_db_blocker, async_unsafe_orm):
    """The package's servers, on the test database pytest-django made (worker_env names it)."""
    from tests.conftest import redis_url

    env = worker_env(
        redis_url=redis_url() if settings.REDIS_URL else None,
        EVENT_TAIL_INTERVAL="0.2",
        ALLOWED_HOSTS="127.0.0.1,localhost",
        Q_WORKERS="2",
    )
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)  # the servers keep Django's guard
    running = Servers(env)
    try:
        with django_db_blocker.unblock():
            running.ensure_running()
            running.warm_up()
        yield running
    finally:
        running.stop()
        # The servers' PostgreSQL sessions outlive their processes briefly: the test database is dropped after.
        with django_db_blocker.unblock():
            connections.close_all()
            wait_for_other_sessions_to_end()
            connections.close_all()


@pytest.fixture
def studio(servers, browser, transactional_db, make_user):
    """A logged-in-able person (alice, owner, 2000 credits) in a workspace of their own, and the studio served by
    the package's processes."""
    from django.contrib.auth.hashers import PBKDF2PasswordHasher

    from billing.services.wallets import wallet_topup
    from workspace.selectors import workspace_access
    from workspace.services.workspaces import workspace_create

    servers.ensure_running()
    # given a person whose password the daphne process (default hashers) can check
    user = make_user("alice")
    user.password = PBKDF2PasswordHasher().encode(PASSWORD, PBKDF2PasswordHasher().salt())
    user.save(update_fields=["password"])
    workspace = workspace_create(user=user, name="Poster studio")
    access = workspace_access(principal=user, workspace_id=workspace.pk)
    wallet_topup(access=access, amount=2000, memo="browser test credits")
    try:
        yield Studio(server=servers.daphne, user=user, workspace=workspace, access=access)
    finally:
        # No page asks for more work, and the cluster finishes what it has, before the test database is flushed.
        for context in browser.contexts:
            context.close()
        servers.drain()


@pytest.fixture(scope="package")
def browser(async_unsafe_orm):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser, studio, request):
    """A fresh context and page; it asks for the studio so that it is closed (and shot on failure) first."""
    from playwright.sync_api import expect

    # An expectation waits as long as a loaded 2-core CI machine may take to answer (5 s by default).
    expect.set_options(timeout=10_000)
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(20_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    # Whatever the studio's Content-Security-Policy blocks is an error of the page (chromium says so on the console).
    page.on(
        "console",
        lambda message: errors.append(message.text) if "Content Security Policy" in message.text else None,
    )
    page.js_errors = errors
    yield page
    if getattr(request.node, "rep_call", None) is not None and request.node.rep_call.failed:
        shoot(page, f"{request.node.name}-failed")
    context.close()
    # The test's ORM calls ran while Playwright's loop was running, on a connection of their own context:
    # close it here, in that context, or it would keep the test database from being dropped.
    connections.close_all()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.when == "call":
        item.rep_call = report
    return report


def shoot(page, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def log_in(page, studio: Studio) -> None:
    page.goto(f"{studio.url}/")
    # By the fields' ids: their labels are in the browser's language.
    page.locator("#id_username").fill(studio.user.username)
    page.locator("#id_password").fill(PASSWORD)
    page.keyboard.press("Enter")
    page.wait_for_url(f"{studio.url}/")
    page.locator("#studio[data-ready='true']").wait_for()
    page.locator("#connection[data-state='live']").wait_for()
