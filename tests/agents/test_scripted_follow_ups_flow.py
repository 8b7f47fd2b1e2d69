"""Ordinary phrasing inside a task, on the embedded default, through the real runtime (issue 15, item 3).

A task with three finished posters (made through the scripted planner, billing and the simulated upstream) gets
the messages people actually send: "Make poster 2 warmer", "Add two more posters", "Thanks, nothing more to do";
a series comes with no number; a photo is to be animated; a video made from a photo is to be longer. What is
asserted is what was persisted: generation jobs, the tool calls that asked for them, artifact versions, cards.
"""

import pytest
from django.core.files.base import ContentFile
from django.db import transaction

from agents.models import Card, CardKind, CardStatus, ChecklistItem, Step, Task, TaskStatus, ToolCall, Turn, TurnStatus
from agents.runtime.loop import turn_run
from agents.services.card_actions import card_act
from agents.services.inbox import message_post
from agents.services.tasks import task_create
from billing.services.approvals import approval_grant
from billing.services.wallets import wallet_reconcile, wallet_topup
from tests.support.queued import run_wakeups
from workspace.models import Artifact, GenerationJob, JobStatus
from workspace.providers.procedural import render_image
from workspace.selectors import workspace_access
from workspace.services.artifacts import artifact_create
from workspace.services.jobs import job_event_apply

pytestmark = [pytest.mark.django_db(transaction=True)]

PNG = {"b64": "iVBORw0KGgo=", "media_type": "image/png", "filename": "result.png", "meta": {}}
POSTERS = {"en": "Make a series of 3 retro brand posters", "fr": "Fais une série de 3 affiches rétro pour la marque"}


@pytest.fixture
def access(workspace, alice, upstream, no_enqueue):
    access = workspace_access(principal=alice, workspace_id=workspace.pk)
    wallet_topup(access=access, amount=5000)
    return access


def run_queued_turns():
    """What the workers would do: run every queued turn until none is left."""
    while turn := Turn.objects.filter(status=TurnStatus.QUEUED).order_by("pk").first():
        turn_run(turn_id=turn.pk, generation=turn.generation)


def settle(access, task):
    """Run the task until it rests: approve the spending it asks for (as a person would), complete its jobs."""
    for _ in range(10):
        run_queued_turns()
        task.refresh_from_db()
        if task.status == TaskStatus.WAITING and task.waiting_for.get("type") == "approval":
            approval_grant(access=access, task_id=task.pk, budget=task.waiting_for["amount"])
            continue
        open_jobs = GenerationJob.objects.exclude(status__in=[JobStatus.SUCCEEDED, JobStatus.FAILED])
        if not open_jobs.exists():
            return
        for job in open_jobs:
            job_event_apply(job_id=job.pk, status="succeeded", progress=100, result=PNG)
        run_wakeups()
    raise AssertionError("the task did not come to rest")


def finished_posters(access, language="en") -> tuple[Task, dict[int, int]]:
    """A task whose three posters are made: the task and each position's artifact."""
    task = task_create(access=access, title="Posters", brief=POSTERS[language], language=language)
    settle(access, task)
    task.refresh_from_db()
    assert task.status == TaskStatus.DONE
    items = ChecklistItem.objects.filter(task=task).order_by("position")
    artifacts = {i.position: i.artifacts[-1]["artifact"] for i in items}
    assert sorted(artifacts) == [1, 2, 3]
    return task, artifacts


def cat_photo(workspace, alice) -> Artifact:
    with transaction.atomic():
        return artifact_create(
            workspace_id=workspace.pk,
            kind="image",
            title="Cat photo",
            file=ContentFile(render_image("a cat photo").content, "cat.png"),
            media_type="image/png",
            author_user=alice,
        )


def new_jobs(before: set[int]) -> list[GenerationJob]:
    return list(GenerationJob.objects.exclude(pk__in=before).order_by("pk"))


def asked_with(job: GenerationJob) -> dict:
    """The arguments of the tool call that asked for this job (its key is the call's id)."""
    return ToolCall.objects.get(call_id=job.idempotency_key).input


def versions(artifact_id: int) -> list[int]:
    return list(Artifact.objects.get(pk=artifact_id).versions.order_by("number").values_list("number", flat=True))


@pytest.mark.parametrize(
    ("language", "message"),
    [("en", "Make poster 2 warmer"), ("fr", "Rends l'affiche 2 plus chaude")],
)
def test_it_regenerates_only_the_poster_a_revision_names(access, language, message):
    # given three finished posters
    task, artifacts = finished_posters(access, language)
    before = set(GenerationJob.objects.values_list("pk", flat=True))
    # when the person asks for a change to poster 2
    message_post(access=access, task_id=task.pk, text=message)
    settle(access, task)
    # then exactly one generation was asked, for item 2, as a new version of its artifact
    [job] = new_jobs(before)
    arguments = asked_with(job)
    assert (arguments["checklist_position"], arguments["artifact_id"], job.artifact_id) == (
        2,
        artifacts[2],
        artifacts[2],
    )
    assert message in job.prompt
    assert (versions(artifacts[1]), versions(artifacts[2]), versions(artifacts[3])) == ([1], [1, 2], [1])
    task.refresh_from_db()
    assert task.status == TaskStatus.DONE
    assert wallet_reconcile(task.workspace_id)[0]


@pytest.mark.parametrize(("language", "message"), [("en", "Add two more posters"), ("fr", "ajoute deux affiches")])
def test_it_adds_the_posters_asked_for_and_generates_only_those(access, language, message):
    # given three finished posters
    task, artifacts = finished_posters(access, language)
    before = set(GenerationJob.objects.values_list("pk", flat=True))
    # when the person asks for two more
    message_post(access=access, task_id=task.pk, text=message)
    settle(access, task)
    # then two items were added and generated as new artifacts; the first three were not touched
    jobs = new_jobs(before)
    assert sorted(asked_with(job)["checklist_position"] for job in jobs) == [4, 5]
    assert all(asked_with(job).get("artifact_id") is None for job in jobs)
    items = list(ChecklistItem.objects.filter(task=task).order_by("position"))
    assert [i.status for i in items] == ["done"] * 5
    noun = "Poster" if language == "en" else "Affiche"
    assert [i.title.split(" — ")[0] for i in items[3:]] == [f"{noun} 4", f"{noun} 5"]
    assert all(versions(a) == [1] for a in artifacts.values())
    assert Artifact.objects.filter(workspace=task.workspace, kind="image").count() == 5


@pytest.mark.parametrize(
    ("language", "message"),
    [("en", "Thanks, nothing more to do"), ("en", "ok great"), ("fr", "merci c'est parfait")],
)
def test_it_does_nothing_for_thanks(access, language, message):
    # given three finished posters
    task, _ = finished_posters(access, language)
    before = set(GenerationJob.objects.values_list("pk", flat=True))
    checklist = list(ChecklistItem.objects.filter(task=task).order_by("position").values("title", "status"))
    # when the person thanks the task
    message_post(access=access, task_id=task.pk, text=message)
    settle(access, task)
    # then it answers in a word, calls no tool, regenerates nothing, and the task is done again
    assert new_jobs(before) == []
    turn = Turn.objects.filter(task=task).order_by("-pk").first()
    [step] = Step.objects.filter(turn=turn)
    assert not ToolCall.objects.filter(step=step).exists()
    assert ("changed nothing" if language == "en" else "rien changé") in step.text
    assert list(ChecklistItem.objects.filter(task=task).order_by("position").values("title", "status")) == checklist
    task.refresh_from_db()
    assert task.status == TaskStatus.DONE


@pytest.mark.parametrize(
    ("language", "brief", "options", "chosen", "title"),
    [
        ("en", "Make a series of retro brand posters", ["3", "5", "Other number"], "5", "Poster 1 of 5 — brand"),
        ("fr", "Fais une série d'affiches rétro pour la marque", ["3", "5", "Autre nombre"], "3", "Affiche 1 sur 3"),
    ],
)
def test_it_asks_how_many_for_a_series_without_a_number(access, language, brief, options, chosen, title):
    # given a series asked for with no number
    task = task_create(access=access, title="Series", brief=brief, language=language)
    run_queued_turns()
    # then the task waits on a choice card asking how many, and nothing is planned or spent yet
    card = Card.objects.get(task=task, status=CardStatus.OPEN)
    assert card.kind == CardKind.CHOICE and [o["label"] for o in card.options] == options
    assert not ChecklistItem.objects.filter(task=task).exists() and not GenerationJob.objects.exists()
    # when the person chooses a number
    option = next(o["id"] for o in card.options if o["label"] == chosen)
    card_act(access=access, card_id=card.pk, action="choose", option=option)
    settle(access, task)
    # then that many posters are planned and made
    items = list(ChecklistItem.objects.filter(task=task).order_by("position"))
    assert len(items) == int(chosen) and items[0].title.startswith(title)
    assert GenerationJob.objects.filter(task_id=task.pk, kind="image").count() == int(chosen)


def test_it_asks_the_number_to_type_when_the_person_wants_another(access):
    task = task_create(access=access, title="Series", brief="Make a series of retro brand posters")
    run_queued_turns()
    card = Card.objects.get(task=task, status=CardStatus.OPEN)
    # when the person chooses "Other number"
    card_act(access=access, card_id=card.pk, action="choose", option=card.options[-1]["id"])
    run_queued_turns()
    # then a card asks them to type it, and their answer is the count
    typed = Card.objects.get(task=task, status=CardStatus.OPEN)
    assert "Type the number" in typed.title
    card_act(access=access, card_id=typed.pk, action="answer", text="4")
    run_queued_turns()
    assert ChecklistItem.objects.filter(task=task).count() == 4


@pytest.mark.parametrize(
    ("language", "brief"),
    [
        ("en", "Animate the photo of my cat"),
        ("en", "Bring my cat photo to life"),
        ("fr", "Anime la photo du chat"),
        ("fr", "transforme la photo de chat d'hier en vidéo"),
    ],
)
def test_it_animates_the_photo_a_request_names_as_a_video(access, workspace, alice, language, brief):
    # given the cat photo in the workspace (and other images it must not pick)
    cat = cat_photo(workspace, alice)
    with transaction.atomic():
        artifact_create(workspace_id=workspace.pk, kind="image", title="Jazz festival poster", author_user=alice)
    # when the person asks to animate it
    task = task_create(access=access, title="Cat", brief=brief, language=language)
    run_queued_turns()
    # then the planner found the photo (among the person's files, or by search_assets) and asked for a video of it
    search = ToolCall.objects.filter(turn__task=task, name="search_assets").first()
    assert search is None or search.result["results"][0]["id"] == cat.pk
    [job] = GenerationJob.objects.filter(task_id=task.pk)
    assert (job.kind, job.params["source_artifact_id"]) == ("video", cat.pk)
    assert not GenerationJob.objects.filter(task_id=task.pk, kind="image").exists()


def test_it_adds_a_video_of_the_photo_to_a_task_that_made_posters(access, workspace, alice):
    # given three finished posters and the cat photo
    task, _ = finished_posters(access)
    cat = cat_photo(workspace, alice)
    before = set(GenerationJob.objects.values_list("pk", flat=True))
    # when the person asks, in the same task, to animate the photo
    message_post(access=access, task_id=task.pk, text="Also animate the photo of my cat")
    settle(access, task)
    # then one video is made from it, as a new item; no poster is regenerated
    [job] = new_jobs(before)
    assert (job.kind, job.params["source_artifact_id"]) == ("video", cat.pk)
    assert asked_with(job)["checklist_position"] == 4


@pytest.mark.parametrize(
    ("language", "brief", "message"),
    [
        ("en", "Turn yesterday's cat photo into a 5-second video", "Please make the cat video longer"),
        ("fr", "Transforme la photo du chat en vidéo de 5 secondes", "Rends la vidéo du chat plus longue"),
    ],
)
def test_it_keeps_the_source_photo_when_revising_a_video_made_from_it(
    access, workspace, alice, language, brief, message
):
    # given a 5-second video made from the cat photo
    cat = cat_photo(workspace, alice)
    task = task_create(access=access, title="Cat video", brief=brief, language=language)
    settle(access, task)
    [first] = GenerationJob.objects.filter(task_id=task.pk)
    assert first.params == {"seconds": 5, "source_artifact_id": cat.pk}
    video = first.artifact_id
    # when the person asks for it longer
    message_post(access=access, task_id=task.pk, text=message)
    settle(access, task)
    # then its new version is asked from the same photo, longer, as a new version of the same video
    [second] = new_jobs({first.pk})
    assert (second.kind, second.artifact_id) == ("video", video)
    # the length is asked (twice the current) and the change read by meaning is recorded beside it
    assert second.params == {"seconds": 10, "source_artifact_id": cat.pk, "changes": ["longer"]}
    assert versions(video) == [1, 2]
    # it read the video first, as a model would, to learn what it was made from
    assert ToolCall.objects.filter(turn__task=task, name="read_artifact", input={"artifact_id": video}).exists()


@pytest.mark.parametrize(
    ("language", "message"),
    [
        ("en", "Could you warm up the colours on those posters?"),
        ("fr", "Pourrais-tu réchauffer les couleurs de ces affiches ?"),
    ],
)
def test_it_takes_a_question_about_finished_work_as_a_revision(access, language, message):
    # given three finished posters
    task, artifacts = finished_posters(access, language)
    before = set(GenerationJob.objects.values_list("pk", flat=True))
    # when the person asks, as a question, for a change to them
    message_post(access=access, task_id=task.pk, text=message)
    settle(access, task)
    # then each poster gets a new version, and no card says it cannot answer questions
    assert sorted(job.artifact_id for job in new_jobs(before)) == sorted(artifacts.values())
    assert all(versions(a) == [1, 2] for a in artifacts.values())
    assert not Card.objects.filter(task=task, payload__source="ask_user").exists()
