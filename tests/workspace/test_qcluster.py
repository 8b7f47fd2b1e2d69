"""A real `manage.py qcluster` on the ORM broker runs a job that appends an event (DESIGN §13, §14).

The cluster is a separate process on the PostgreSQL test database; the job's event must be persisted, its
django-q success recorded, and the event must reach a connected WebSocket client (by push when Redis is
configured, by log tailing otherwise).
"""

import asyncio
import contextlib

import pytest
from channels.db import database_sync_to_async
from django.conf import settings
from django_q.models import OrmQ, Success
from django_q.tasks import async_task

from tests.support import qcluster as cluster
from tests.support.realtime import (
    receive_events,
    receive_replay,
    session_cookie_for,
    websocket,
    worker_env,
    ws_headers,
    ws_path,
)
from workspace.models import Event

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("channel_layer"),
]

JOB = "tests.support.jobs.append_event"
DEADLINE = 30.0


@contextlib.asynccontextmanager
async def qcluster(env: dict[str, str]):
    """A running `manage.py qcluster`; stopped with SIGTERM (then SIGKILL) whatever happens in the test."""
    process, log = cluster.start(env)
    try:
        yield process, log
    finally:
        await asyncio.to_thread(cluster.stop, process, log)


def _job_outcome(task_id: str, workspace_id: int) -> tuple[list, list, int]:
    events = list(Event.objects.filter(workspace_id=workspace_id, kind="job.finished").values_list("seq", "kind"))
    done = list(Success.objects.filter(id=task_id).values_list("success", "result"))
    return events, done, OrmQ.objects.count()


async def test_it_runs_a_job_in_a_real_qcluster_and_streams_its_event(workspace, bob):
    # given a connected client, and a cluster process on the test database (with Redis if configured)
    env = worker_env(redis_url=settings.REDIS_URL or None, Q_WORKERS="1")
    cookie = await database_sync_to_async(session_cookie_for)(bob)
    async with (
        websocket(ws_path(workspace.pk), ws_headers(cookie=cookie)) as (communicator, accepted, _),
        qcluster(env) as (process, log),
    ):
        assert accepted
        await receive_replay(communicator)

        # when a job that appends an event is enqueued on the ORM broker
        task_id = await database_sync_to_async(async_task)(JOB, workspace.pk, "job.finished", {"by": "qcluster"})

        # then the cluster runs it: the event is persisted, the success recorded and the queue acknowledged
        loop = asyncio.get_running_loop()
        deadline = loop.time() + DEADLINE
        while True:
            assert process.poll() is None, f"qcluster exited ({process.returncode}): {cluster.log_tail(log)}"
            events, done, queued = await database_sync_to_async(_job_outcome)(task_id, workspace.pk)
            if events and done and not queued:
                break
            assert loop.time() < deadline, f"job not done in {DEADLINE}s ({events}, {done}): {cluster.log_tail(log)}"
            await asyncio.sleep(0.1)  # polling interval, not the assertion
        assert events == [(2, "job.finished")]
        assert done == [(True, 2)]

        # and the event reaches the client, once
        [event] = await receive_events(communicator, 1, timeout=DEADLINE)
        assert (event["seq"], event["kind"], event["data"]) == (2, "job.finished", {"by": "qcluster"})
        assert await communicator.receive_nothing(timeout=0.3)

    # and the cluster stopped on SIGTERM
    assert process.returncode is not None
