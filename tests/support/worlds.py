"""A test module's world, built once per module instead of once per test.

A module whose tests all read and poke at the same set of rows (a workspace, its members, keys, artifacts…)
builds them once, in an atomic block opened on the test database for the whole module; each test then runs,
as pytest-django's `db` fixture always runs it, inside its own savepoint that is rolled back after it. So a test
sees exactly the rows the world built, whatever the tests before it wrote, and the world is rolled back when
the module ends. This is Django's `TestCase.setUpTestData` (one class-wide transaction, per-test savepoints),
for module-level pytest tests.

    world_built = built_once(_build_world)       # module scope: runs _build_world() once

    @pytest.fixture
    def world(world_built, db):
        return world_built.fresh()               # a deep copy: a test mutating an instance changes no other test

`fresh()` deep-copies what the builder returned, the way `setUpTestData`'s `TestData` descriptors do, so
shared references stay shared within one test (`world.users["owner"] is world.alice`). Rows the builder wrote
are re-read from the database by any query a test runs, and the savepoint gives each test the built state back.

Files the builder stored go to a MEDIA_ROOT of the module's own; `media_copy(to)` hands a test a private copy
of them, so what a test uploads or deletes is gone for the next one, as the rows are.

The builder runs outside any test, so it cannot use function-scoped fixtures (`make_user`, `monkeypatch`,
`settings`): `person()` and `shared_workspace()` make the suite's personas as the conftest fixtures do, and
`pytest.MonkeyPatch.context()` patches for the length of the build. Passwords are hashed with the fast
hasher the suite uses.

The module's tests share the world's users, so a module that builds alice also gives its tests' `alice`,
`workspace`… fixtures from the world (the conftest's would create a second alice). Rows keep their ids from
one test to the next: what lives outside the database keyed by an id (the API throttle's counters in the
cache) is shared by the module's tests, as it was for anonymous callers already.

The cost, measured but not proven in its cause: a test's calls get slower (1.2-2x in the API modules).
Likely the open transaction holds back PostgreSQL's xmin horizon, so the row versions each test writes and
rolls back (the same world rows, test after test) are not pruned until the module ends. It pays off when
building the world costs more than that (measured per module in the commit that converted it).

Not for modules with transactional tests (`transaction=True`, `transactional_db`, `live_server`): those
flush or commit the database, which an open module-wide transaction forbids, and `built_once` refuses such a
module rather than letting them fail strangely. `django_capture_on_commit_callbacks` works as before: it
captures the callbacks registered inside the test's savepoint.
"""

import copy
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.db import connections, transaction
from django.test import override_settings

FAST_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
TRANSACTIONAL_FIXTURES = {"transactional_db", "live_server", "django_db_reset_sequences"}
DATABASES = ("default",)  # the aliases pytest-django's `db` wraps in a transaction


@dataclass
class BuiltWorld:
    """What the builder returned (`data`), and where the files it stored live (`media`)."""

    data: Any
    media: Path

    def fresh(self) -> Any:
        """A deep copy of the world, for one test."""
        return copy.deepcopy(self.data)

    def media_copy(self, to: Path) -> Path:
        """A copy of the world's stored files at `to` (a test's own MEDIA_ROOT); returns `to`."""
        shutil.copytree(self.media, to, dirs_exist_ok=True)
        return to


def person(username: str):
    """A user as the conftest's `make_user` makes one (same email and password)."""
    from django.contrib.auth import get_user_model

    return get_user_model().objects.create_user(
        username=username, email=f"{username}@example.com", password="pw-" + username
    )


def shared_workspace(alice, bob, carol):
    """The conftest's `workspace`: "Poster studio", alice its owner, bob an editor, carol a viewer."""
    from tests.support.factories import WorkspaceFactory
    from workspace.models import Role

    return WorkspaceFactory(name="Poster studio", created_by=alice, members={bob: Role.EDITOR, carol: Role.VIEWER})


def _transactional(item: pytest.Item) -> bool:
    marker = item.get_closest_marker("django_db")
    if marker is not None and (marker.kwargs.get("transaction") or marker.kwargs.get("reset_sequences")):
        return True
    return bool(TRANSACTIONAL_FIXTURES & set(getattr(item, "fixturenames", ())))


def _refuse_transactional_tests(request: pytest.FixtureRequest) -> None:
    module = request.module
    offenders = [
        item.nodeid
        for item in request.session.items
        if getattr(item, "module", None) is module and _transactional(item)
    ]
    if offenders:
        raise pytest.UsageError(
            f"{module.__name__} builds its world once (tests/support/worlds.py) but has transactional tests, "
            f"which cannot run inside the module's transaction: {offenders[:3]}"
        )


def _enter_atomics() -> dict:
    atomics = {}
    for alias in DATABASES:
        atomic = transaction.atomic(using=alias)
        # as TestCase marks its own: a durable block inside (a service's, or the test's) is allowed
        atomic._from_testcase = True
        atomic.__enter__()
        atomics[alias] = atomic
    return atomics


def _rollback_atomics(atomics: dict) -> None:
    for alias in reversed(DATABASES):
        transaction.set_rollback(True, using=alias)
        atomics[alias].__exit__(None, None, None)


def built_once(build: Callable[[], Any]):
    """A module-scoped fixture: `build()` run once in a transaction rolled back when the module ends.

    It yields a `BuiltWorld`; a function-scoped fixture of the module hands each test `fresh()`."""

    @pytest.fixture(scope="module")
    def world_built(request, django_db_setup, django_db_blocker, tmp_path_factory):
        _refuse_transactional_tests(request)
        media = tmp_path_factory.mktemp("world-media")
        with django_db_blocker.unblock():
            atomics = _enter_atomics()
        try:
            with django_db_blocker.unblock(), override_settings(PASSWORD_HASHERS=FAST_HASHERS, MEDIA_ROOT=media):
                data = build()
            yield BuiltWorld(data=data, media=media)
        finally:
            with django_db_blocker.unblock():
                _rollback_atomics(atomics)
                for alias in DATABASES:
                    assert not connections[alias].in_atomic_block, "a test left a transaction of its own open"

    return world_built


# The personas of a module that builds its world, read from the module's `world` fixture (the conftest's own would
# create a second alice): a module imports these fixtures (world_alice… register as alice…) beside `built_once`.
@pytest.fixture(name="alice")
def world_alice(world):
    return world.users["owner"]


@pytest.fixture(name="bob")
def world_bob(world):
    return world.users["editor"]


@pytest.fixture(name="carol")
def world_carol(world):
    return world.users["viewer"]


@pytest.fixture(name="dave")
def world_dave(world):
    return world.users["outsider"]
