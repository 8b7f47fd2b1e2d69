"""Turns run by real django-q2 clusters on the ORM broker, including clusters killed mid-turn."""

from datetime import timedelta

import pytest
from django.utils import timezone
from django_q.models import Success

from agents.models import ChecklistItem, ModelProfile, ProviderKind, Step, TaskStatus, Turn, TurnStatus
from agents.runtime.watchdog import watchdog_sweep
from agents.services.tasks import task_create
from billing.models import Order
from billing.services.approvals import approval_grant
from billing.services.wallets import wallet_reconcile, wallet_topup
from tests.support import qcluster as cluster
from tests.support.fake_openai import FakeOpenAIServer, Reply, completion
from tests.support.realtime import worker_env
from workspace.models import Artifact
from workspace.selectors import workspace_access

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("local_model_servers"),
]


def test_it_makes_three_posters_on_a_real_qcluster_after_one_approval(workspace, alice):
    # given a funded workspace and a person asking for posters (the turn is enqueued on commit)
    access = workspace_access(principal=alice, workspace_id=workspace.pk)
    wallet_topup(access=access, amount=1000)
    task = task_create(access=access, title="Posters", brief="Make a series of 3 retro brand posters")

    with cluster.running(worker_env(redis_url=None, Q_WORKERS="2")) as (process, log):
        # when the scripted planner has planned and quoted the series
        def quoted():
            task.refresh_from_db()
            return task.status == TaskStatus.WAITING and task.waiting_for.get("type") == "approval"

        cluster.wait_for(quoted, timeout=60, process=process, log=log, what="the quote for the plan")
        # and the person approves it (the only thing they do)
        approval_grant(access=access, task_id=task.pk, budget=task.waiting_for["amount"])

        # then the cluster renders the posters and the task finishes by itself
        def done():
            task.refresh_from_db()
            return task.status == TaskStatus.DONE

        cluster.wait_for(done, timeout=120, process=process, log=log, what="the posters")

    items = list(ChecklistItem.objects.filter(task=task).order_by("position"))
    assert [i.status for i in items] == ["done"] * 3
    assert all("not an LLM" in s.text for s in Step.objects.filter(turn__task=task))
    images = Artifact.objects.filter(workspace=workspace, kind="image")
    assert images.count() == 3
    for artifact in images:
        version = artifact.versions.get()
        with version.file.open("rb") as f:
            assert f.read(8) == b"\x89PNG\r\n\x1a\n"  # a real PNG, rendered by the procedural provider
    assert list(Order.objects.values_list("status", flat=True)) == ["captured"] * 3
    assert wallet_reconcile(workspace.pk)[0]
    assert Success.objects.filter(func="agents.tasks.run_turn").exists()


def test_it_fails_a_turn_whose_workers_are_killed_repeatedly_instead_of_looping(workspace, alice, settings):
    # given a model endpoint that never answers in time, so every worker is mid-turn when killed
    settings.LOMOTE_MAX_TURN_ATTEMPTS = 3
    env = worker_env(redis_url=None, Q_WORKERS="1", LOMOTE_MAX_TURN_ATTEMPTS="3", LOMOTE_MODEL_ALLOW_PRIVATE="1")
    with FakeOpenAIServer(default=Reply(body=completion(), delay=120)) as server:
        ModelProfile.objects.create(
            workspace=workspace,
            name="slow",
            provider=ProviderKind.OPENAI_COMPAT,
            model="fake-model-1",
            base_url=server.url,
            is_default=True,
        )
        access = workspace_access(principal=alice, workspace_id=workspace.pk)
        task = task_create(access=access, title="Posters", brief="Make 3 posters")
        turn = Turn.objects.get(task=task)

        for attempt in (1, 2, 3):
            # when a cluster picks the turn up and is SIGKILLed in the middle of the inference
            process, log = cluster.start(env)
            try:
                cluster.wait_for(
                    lambda attempt=attempt: (
                        server.calls >= attempt
                        and Turn.objects.filter(pk=turn.pk, status=TurnStatus.RUNNING, attempts=attempt).exists()
                    ),
                    timeout=60,
                    process=process,
                    log=log,
                    what=f"attempt {attempt} to be in flight",
                )
                cluster.kill(process)
            finally:
                cluster.stop(process, log)
            # and the watchdog finds its lease expired
            report = watchdog_sweep(now=timezone.now() + timedelta(seconds=settings.LOMOTE_LEASE_SECONDS + 1))
            turn.refresh_from_db()
            if attempt < 3:
                # then it is redelivered as a new generation, our own attempt counter rising
                assert report.taken_over == [turn.pk]
                assert (turn.status, turn.generation, turn.attempts) == (TurnStatus.QUEUED, attempt + 1, attempt)

        # then at the cap the turn failed with a reason instead of looping, and nothing was committed
        assert report.failed == [turn.pk]
        assert not report.started and not watchdog_sweep().started  # the unread brief does not restart it
        assert Turn.objects.filter(task=task).count() == 1
        assert (turn.status, turn.stop_reason, turn.attempts) == (TurnStatus.FAILED, "attempt_cap", 3)
        assert not Step.objects.filter(turn=turn).exists()
        assert server.calls == 3  # one inference per attempt, never a hidden retry
        task.refresh_from_db()
        assert (task.status, task.stop_reason) == (TaskStatus.IDLE, "attempt_cap")
