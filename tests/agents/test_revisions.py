"""The scripted planner end to end on the real runtime: plan, quote, approve, generate, then revise.

"Make the posters warmer and move the text" must give new versions of the same artifacts, not copies.
The simulated upstream stands in for the renderer; its completions go through job_event_apply.
"""

import pytest

from agents.models import Card, CardKind, ChecklistItem, TaskStatus, Turn, TurnStatus
from agents.runtime.loop import turn_run
from agents.services.inbox import message_post
from agents.services.tasks import task_create
from billing.models import Order
from billing.services.approvals import approval_grant
from billing.services.wallets import wallet_reconcile, wallet_topup
from tests.support.queued import run_wakeups
from workspace.models import Artifact, GenerationJob, JobStatus
from workspace.selectors import workspace_access
from workspace.services.jobs import job_event_apply

pytestmark = [pytest.mark.django_db(transaction=True)]

PNG = {"b64": "iVBORw0KGgo=", "media_type": "image/png", "filename": "poster.png", "meta": {}}


def run_queued_turns():
    """What the workers would do: run every queued turn until none is left."""
    while turn := Turn.objects.filter(status=TurnStatus.QUEUED).order_by("pk").first():
        turn_run(turn_id=turn.pk, generation=turn.generation)


def complete_open_jobs():
    for job in GenerationJob.objects.exclude(status__in=[JobStatus.SUCCEEDED, JobStatus.FAILED]):
        job_event_apply(job_id=job.pk, status="succeeded", progress=100, result=PNG)
    run_wakeups()
    run_queued_turns()


def approve(access, task):
    task.refresh_from_db()
    assert task.status == TaskStatus.WAITING and task.waiting_for["type"] == "approval", task.waiting_for
    approval_grant(access=access, task_id=task.pk, budget=task.waiting_for["amount"])
    run_queued_turns()


def test_it_revises_finished_posters_as_new_versions_of_the_same_artifacts(workspace, alice, upstream, no_enqueue):
    access = workspace_access(principal=alice, workspace_id=workspace.pk)
    wallet_topup(access=access, amount=1000)

    # given three posters made after one approval
    task = task_create(access=access, title="Posters", brief="Make a series of 3 retro brand posters")
    run_queued_turns()
    approve(access, task)
    complete_open_jobs()
    task.refresh_from_db()
    assert task.status == TaskStatus.DONE
    originals = sorted(Artifact.objects.filter(workspace=workspace).values_list("pk", flat=True))
    assert len(originals) == 3

    # when the person asks for a change days later: three 40-credit revisions, each within the workspace's
    # no-confirmation limits (100 per operation, 500 a day), although the approved budget is used up
    message_post(access=access, task_id=task.pk, text="Make the posters warmer and move the text")
    run_queued_turns()
    # (nobody is asked: an approved budget adds to the limits, it never lowers them — DESIGN §5, issue 31)
    task.refresh_from_db()
    assert task.waiting_for["type"] == "jobs" and Card.objects.filter(task=task, kind=CardKind.QUOTE).count() == 1
    complete_open_jobs()

    # then the same three artifacts got a second version each, asked with the change, and the task is done
    task.refresh_from_db()
    assert task.status == TaskStatus.DONE
    assert sorted(Artifact.objects.filter(workspace=workspace).values_list("pk", flat=True)) == originals
    for artifact in Artifact.objects.filter(pk__in=originals):
        assert list(artifact.versions.order_by("number").values_list("number", flat=True)) == [1, 2]
    revision_jobs = GenerationJob.objects.filter(artifact_id__in=originals).exclude(artifact_version__number=1)
    assert revision_jobs.count() == 3
    assert all("warmer" in job.prompt and "move the text" in job.prompt for job in revision_jobs)
    assert [i.status for i in ChecklistItem.objects.filter(task=task)] == ["done"] * 3
    # six posters paid once each: three under the one approval, three within the limits; never a "continue"
    assert list(Order.objects.values_list("status", flat=True)) == ["captured"] * 6
    assert list(Order.objects.order_by("pk").values_list("authorisation", flat=True)) == ["budget"] * 3 + ["auto"] * 3
    assert wallet_reconcile(workspace.pk)[0]


def test_it_turns_a_photo_of_the_workspace_into_a_video_of_the_asked_length(workspace, alice, upstream, no_enqueue):
    from django.core.files.base import ContentFile
    from django.db import transaction

    from workspace.providers.procedural import render_image
    from workspace.services.artifacts import artifact_create

    access = workspace_access(principal=alice, workspace_id=workspace.pk)
    wallet_topup(access=access, amount=1000)
    # given yesterday's cat photo in the workspace
    with transaction.atomic():
        photo = render_image("a cat photo")
        cat = artifact_create(
            workspace_id=workspace.pk,
            kind="image",
            title="Cat photo",
            file=ContentFile(photo.content, "cat.png"),
            media_type="image/png",
            author_user=alice,
        )
    # when the person asks for a video of it
    task = task_create(access=access, title="Cat video", brief="Turn yesterday's cat photo into a 5-second video")
    run_queued_turns()
    # then the planner found the photo and asked for a 5-second video made from it
    job = GenerationJob.objects.get(task_id=task.pk)
    assert (job.kind, job.params) == ("video", {"seconds": 5, "source_artifact_id": cat.pk})
    complete_open_jobs()
    task.refresh_from_db()
    assert task.status == TaskStatus.DONE
