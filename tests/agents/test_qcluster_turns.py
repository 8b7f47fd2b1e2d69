"""Turns run by real django-q2 clusters on the ORM broker, including clusters killed mid-turn."""

from datetime import timedelta

import pytest
from django.utils import timezone
from django_q.models import Success

from agents.models import ChecklistItem, ModelProfile, ProviderKind, Step, TaskStatus, Turn, TurnStatus
from agents.runtime.watchdog import watchdog_sweep
from agents.services.tasks import task_create
from tests.support import qcluster as cluster
from tests.support.fake_openai import FakeOpenAIServer, Reply, completion
from tests.support.realtime import worker_env
from workspace.selectors import workspace_access

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def test_it_runs_a_task_on_a_real_qcluster_with_the_scripted_planner(workspace, alice):
    # given a task created by a person (its first turn is enqueued when the transaction commits)
    access = workspace_access(principal=alice, workspace_id=workspace.pk)
    task = task_create(access=access, title="Posters", brief="Make a series of 3 retro brand posters")
    turn = Turn.objects.get(task=task)

    # when a real cluster is running
    with cluster.running(worker_env(redis_url=None, Q_WORKERS="1")) as (process, log):
        cluster.wait_for(
            lambda: Turn.objects.filter(pk=turn.pk, status=TurnStatus.COMPLETED).exists(),
            timeout=60,
            process=process,
            log=log,
            what="the turn to complete",
        )
        cluster.wait_for(
            lambda: Success.objects.filter(func="agents.tasks.run_turn").exists(),
            timeout=20,
            process=process,
            log=log,
            what="django-q to record the job",
        )

    # then the scripted planner planned the three posters through real tool calls, and said what it is
    titles = list(ChecklistItem.objects.filter(task=task).values_list("title", flat=True))
    assert len(titles) == 3
    steps = list(Step.objects.filter(turn=turn).order_by("index"))
    assert steps[0].model == "lomote-scripted-planner-1"
    assert "not an LLM" in steps[-1].text
    task.refresh_from_db()
    assert task.status in (TaskStatus.IDLE, TaskStatus.DONE)  # with no generation tools it stops and says why


def test_it_fails_a_turn_whose_workers_are_killed_repeatedly_instead_of_looping(workspace, alice, settings):
    # given a model endpoint that never answers in time, so every worker is mid-turn when killed
    settings.LOMOTE_MAX_TURN_ATTEMPTS = 3
    env = worker_env(redis_url=None, Q_WORKERS="1", LOMOTE_MAX_TURN_ATTEMPTS="3")
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
