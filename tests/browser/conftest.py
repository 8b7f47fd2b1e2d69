"""A real studio for the browser: daphne and a django-q2 cluster on the PostgreSQL test database, and chromium.

The servers are separate processes (as `make run` starts them), so these tests use `transaction=True`: the
processes only see what the test committed. Without Redis in the daphne process the consumers tail the log.
"""

import contextlib
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.conf import settings
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


@dataclass
class Studio:
    server: Daphne
    user: object
    workspace: object
    access: object

    @property
    def url(self) -> str:
        return self.server.url


@pytest.fixture
def studio(transactional_db, settings, monkeypatch, make_user):
    """A logged-in-able person (alice, owner, 2000 credits) and the studio served by real processes."""
    from django.contrib.auth.hashers import PBKDF2PasswordHasher

    from billing.services.wallets import wallet_topup
    from tests.conftest import redis_url
    from workspace.selectors import workspace_access
    from workspace.services.workspaces import workspace_create

    # given a person whose password the daphne process (default hashers) can check
    user = make_user("alice")
    user.password = PBKDF2PasswordHasher().encode(PASSWORD, PBKDF2PasswordHasher().salt())
    user.save(update_fields=["password"])
    workspace = workspace_create(user=user, name="Poster studio")
    access = workspace_access(principal=user, workspace_id=workspace.pk)
    wallet_topup(access=access, amount=2000, memo="browser test credits")

    env = worker_env(
        redis_url=redis_url() if settings.REDIS_URL else None,
        EVENT_TAIL_INTERVAL="0.2",
        ALLOWED_HOSTS="127.0.0.1,localhost",
        Q_WORKERS="2",
    )
    server = Daphne(env, free_port())
    cluster, cluster_log = qcluster.start(env)
    sweeper = subprocess.Popen(  # noqa: S603 - our own manage.py with fixed arguments
        [sys.executable, "manage.py", "generation_sweeper"],
        cwd=settings.BASE_DIR,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    # Playwright's sync API runs an event loop on this thread; the test's own ORM calls are still sync.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    try:
        server.start()
        yield Studio(server=server, user=user, workspace=workspace, access=access)
    finally:
        server.stop()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(sweeper.pid, signal.SIGTERM)
        sweeper.wait(timeout=10)
        qcluster.stop(cluster, cluster_log)
        wait_for_other_sessions_to_end()


@pytest.fixture
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser, request):
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
    page.get_by_label("Username").fill(studio.user.username)
    page.get_by_label("Password").fill(PASSWORD)
    page.keyboard.press("Enter")
    page.wait_for_url(f"{studio.url}/")
    page.locator("#studio[data-ready='true']").wait_for()
    page.locator("#connection[data-state='live']").wait_for()
