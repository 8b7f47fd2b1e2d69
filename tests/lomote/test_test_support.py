"""The suite's own helpers: a world built once per module (tests/support/worlds.py) and ordering hooks
(tests/support/ordering.py). The world tests run in file order: each later one checks that what an earlier
one did is gone."""

import threading
from types import SimpleNamespace

import pytest
from django.core.files.base import ContentFile
from django.db import transaction

from tests.support.factories import ArtifactFactory
from tests.support.ordering import run_after, run_before, wait_until
from tests.support.worlds import built_once, person, shared_workspace
from workspace.models import Artifact, Workspace

pytestmark = pytest.mark.django_db

BUILDS = []


def _build_world() -> SimpleNamespace:
    BUILDS.append(1)
    alice, bob, carol = (person(name) for name in ("alice", "bob", "carol"))
    workspace = shared_workspace(alice, bob, carol)
    with transaction.atomic(durable=True):  # a service's own durable block works while the world is built
        poster = ArtifactFactory(workspace=workspace, kind="image", title="Poster", file=ContentFile(b"png", "p.png"))
    return SimpleNamespace(workspace=workspace, version=poster.versions.get(), alice=alice, owner=alice)


world_built = built_once(_build_world)


@pytest.fixture
def world(world_built, db):
    return world_built.fresh()


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path, world_built):
    settings.MEDIA_ROOT = world_built.media_copy(tmp_path / "media")
    return settings.MEDIA_ROOT


def test_a_test_changes_the_world_rows_objects_and_files(world, settings):
    # when a test renames the workspace, mutates its Python object, adds a row and deletes the stored file
    Workspace.objects.filter(pk=world.workspace.pk).update(name="Renamed")
    world.workspace.name = "Mutated"
    ArtifactFactory(workspace=world.workspace, title="Extra")
    world.version.file.delete(save=False)
    # then within the test all of it holds, and one object is shared by two names as the builder left it
    assert Workspace.objects.get(pk=world.workspace.pk).name == "Renamed"
    assert world.owner is world.alice
    assert Artifact.objects.filter(workspace=world.workspace).count() == 2


def test_the_next_test_finds_the_world_as_built(world, settings):
    # then the rows, the objects and the files are as the builder made them, built once for the module
    assert BUILDS == [1]
    assert Workspace.objects.get(pk=world.workspace.pk).name == "Poster studio"
    assert world.workspace.name == "Poster studio"
    assert Artifact.objects.filter(workspace=world.workspace).count() == 1
    with world.version.file.open() as stored:
        assert stored.read() == b"png"


def test_a_durable_block_and_on_commit_callbacks_work_in_a_test(world, django_capture_on_commit_callbacks):
    # when a test opens a durable block, as an entry point does, and registers a callback after commit
    ran = []
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        with transaction.atomic(durable=True):
            Workspace.objects.filter(pk=world.workspace.pk).update(name="Durable")
            transaction.on_commit(lambda: ran.append("committed"))
    # then both behave as in any TestCase test
    assert (len(callbacks), ran) == (1, ["committed"])
    assert Workspace.objects.get(pk=world.workspace.pk).name == "Durable"


def test_run_before_and_run_after_run_at_their_points(monkeypatch):
    # given a function the code under test calls through its module
    calls = []
    monkeypatch.setattr(f"{__name__}._step", lambda value: calls.append(("step", value)) or value * 2)

    # when it is called with a hook before and one after it
    with (
        run_before(f"{__name__}._step", lambda value: calls.append(("before", value))),
        run_after(f"{__name__}._step", lambda value, result: calls.append(("after", value, result))),
    ):
        assert _step(3) == 6
    # then each hook ran at its point with the call's arguments (and result); outside the block none runs
    assert calls == [("before", 3), ("step", 3), ("after", 3, 6)]
    _step(1)
    assert calls[-1] == ("step", 1)


def test_run_before_lets_a_racing_thread_start_at_an_exact_point():
    # given a second thread that must reach its point while the first is inside a call
    inside = threading.Event()
    order = []

    def other():
        assert inside.wait(10)
        order.append("other")

    holder = SimpleNamespace(work=lambda: order.append("work"))
    thread = threading.Thread(target=other)
    thread.start()

    # when the first thread's call waits, right before it runs, until the other thread has gone
    def let_other_go_first():
        inside.set()
        wait_until(lambda: not thread.is_alive(), what="the other thread")

    with run_before((holder, "work"), let_other_go_first):
        holder.work()
    thread.join(10)

    # then the order is exact, and a condition that never comes fails loudly
    assert order == ["other", "work"]
    with pytest.raises(AssertionError, match="never did not happen within"):
        wait_until(lambda: False, timeout=0.05, what="never")


def _step(value):
    return value
