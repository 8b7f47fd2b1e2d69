"""Edits as parameter changes, end to end on the embedded default (issue 32 item 2, DESIGN §15).

A poster series is made through the real runtime (scripted planner, billing, the procedural renderer run by its
worker function); then a person posts a change to the task's own messages endpoint. The change is read by meaning
(the understanding layer's `edit` decision) into changes that the renderer applies to the parameters recorded on
the version being edited. What is asserted is measured: the new version's pixels (mean luminance, with PIL), its
recorded parameters, its title, and that the other items were left alone.
"""

import io

import pytest
from PIL import Image, ImageStat

from agents.models import ChecklistItem, Task, TaskStatus, Turn, TurnStatus
from agents.runtime.loop import turn_run
from agents.services.tasks import task_create
from billing.services.approvals import approval_grant
from billing.services.wallets import wallet_reconcile, wallet_topup
from tests.support.queued import run_wakeups
from workspace.models import Artifact, ArtifactVersion, GenerationJob, JobStatus
from workspace.selectors import workspace_access
from workspace.tasks import generation_work

pytestmark = [pytest.mark.django_db(transaction=True)]

SERIES = {
    "en": "Make a series of 3 posters for our winter pottery classes",
    "fr": "Fais une série de 3 affiches pour nos cours de poterie d'hiver",
    "de": "Gestalte 3 Poster für unsere Töpferkurse im Winter",
}
# The scripted planner does not yet plan a series from a Spanish brief (kind and count are read elsewhere): a
# Spanish change is asked of the English series, since reading the change is what is under test here.
SERIES["es"] = SERIES["en"]
# One poster, so a change that names no item is for it.
ONE_POSTER = "Make a poster for our winter pottery classes"


@pytest.fixture
def access(workspace, alice, no_enqueue, settings):
    settings.LOMOTE_DEFAULT_GENERATION_PROVIDER = "procedural"  # the real renderer, run by its worker function
    access = workspace_access(principal=alice, workspace_id=workspace.pk)
    wallet_topup(access=access, amount=5000)
    return access


def settle(access, task):
    """Run the task until it rests: approve what it asks to spend, render its jobs as a worker would."""
    for _ in range(12):
        while turn := Turn.objects.filter(status=TurnStatus.QUEUED).order_by("pk").first():
            turn_run(turn_id=turn.pk, generation=turn.generation)
        task.refresh_from_db()
        if task.status == TaskStatus.WAITING and task.waiting_for.get("type") == "approval":
            approval_grant(access=access, task_id=task.pk, budget=task.waiting_for["amount"])
            continue
        open_jobs = GenerationJob.objects.exclude(status__in=[JobStatus.SUCCEEDED, JobStatus.FAILED])
        if not open_jobs.exists():
            return
        for job in open_jobs:
            assert generation_work(job.pk) == "succeeded"
        run_wakeups()
    raise AssertionError("the task did not come to rest")


def finished(access, brief: str, language: str, count: int) -> tuple[Task, dict[int, int]]:
    task = task_create(access=access, title="Posters", brief=brief, language=language)
    settle(access, task)
    task.refresh_from_db()
    assert task.status == TaskStatus.DONE
    items = ChecklistItem.objects.filter(task=task).order_by("position")
    artifacts = {i.position: i.artifacts[-1]["artifact"] for i in items}
    assert sorted(artifacts) == list(range(1, count + 1))
    return task, artifacts


def ask(client_for, alice, task, text: str) -> None:
    """The person's message, posted to the task's own messages endpoint (routing is not under test here)."""
    response = client_for(alice).post(
        f"/api/v1/workspaces/{task.workspace_id}/tasks/{task.pk}/messages/", {"text": text}, format="json"
    )
    assert response.status_code == 201, response.content


def version(artifact_id: int, number: int) -> ArtifactVersion:
    return ArtifactVersion.objects.get(artifact_id=artifact_id, number=number)


def numbers(artifact_id: int) -> list[int]:
    return list(Artifact.objects.get(pk=artifact_id).versions.order_by("number").values_list("number", flat=True))


def pixels(v: ArtifactVersion) -> Image.Image:
    with v.file.open("rb") as f:
        return Image.open(io.BytesIO(f.read())).convert("RGB")


def luminance(v: ArtifactVersion) -> float:
    return ImageStat.Stat(pixels(v).convert("L")).mean[0]


def warmth(v: ArtifactVersion) -> float:
    r, _, b = ImageStat.Stat(pixels(v)).mean
    return r - b


def edit(access, client_for, alice, language: str, text: str, position: int = 2):
    """A finished series (one poster when `position` is None), then `text` asked of it: the edited item's v1 and
    v2, after checking that the other items were left untouched."""
    if position is None:
        task, artifacts = finished(access, ONE_POSTER, "en", 1)
        position = 1
    else:
        task, artifacts = finished(access, SERIES[language], language, 3)
    ask(client_for, alice, task, text)
    settle(access, task)
    edited = artifacts[position]
    assert numbers(edited) == [1, 2], "a new version of the named item"
    assert all(numbers(a) == [1] for p, a in artifacts.items() if p != position), "the other items are untouched"
    task.refresh_from_db()
    assert task.status == TaskStatus.DONE
    assert wallet_reconcile(task.workspace_id)[0]
    return version(edited, 1), version(edited, 2)


def assert_same_work(v1: ArtifactVersion, v2: ArtifactVersion) -> None:
    """The headline stays the work's subject and the composition stays: only the asked things change."""
    assert v2.meta["title"] == v1.meta["title"]
    assert v2.meta["seed"] == v1.meta["seed"] and v2.meta["palette"] == v1.meta["palette"]
    assert " of 3" not in v2.meta["title"].casefold()  # never the internal label "POSTER 2 OF 3 — …"
    assert v2.meta["derived_from_version"] == 1


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("en", "The second post is too dark, brighten it and make the text bigger"),
        ("fr", "La deuxième affiche est trop sombre, éclaircis-la et agrandis le texte"),
        ("de", "Das zweite Plakat ist zu dunkel, hell es auf und mach die Schrift größer"),
    ],
)
def test_too_dark_brighten_it_and_make_the_text_bigger(access, client_for, alice, language, text):
    v1, v2 = edit(access, client_for, alice, language, text)
    assert set(v2.meta["changes"]) == {"brighter", "text_bigger"}
    assert luminance(v2) > luminance(v1)
    assert v2.meta["brightness"] > v1.meta["brightness"]
    assert v2.meta["text_scale"] > v1.meta["text_scale"] and v2.meta["title_px"] > v1.meta["title_px"]
    assert_same_work(v1, v2)


def test_french_trop_sombre_eclaircis_la(access, client_for, alice):
    v1, v2 = edit(access, client_for, alice, "fr", "La deuxième affiche est trop sombre, éclaircis-la")
    assert v2.meta["changes"] == ["brighter"]
    assert luminance(v2) > luminance(v1)
    assert v2.meta["text_scale"] == v1.meta["text_scale"]  # nothing else asked, nothing else moved
    assert_same_work(v1, v2)


def test_a_negation_not_so_warm_is_cooler(access, client_for, alice):
    v1, v2 = edit(access, client_for, alice, "en", "The first poster: not so warm please", position=1)
    assert v2.meta["changes"] == ["cooler"]
    assert v2.meta["warmth"] < v1.meta["warmth"] and warmth(v2) < warmth(v1)
    assert_same_work(v1, v2)


@pytest.mark.parametrize(
    ("language", "text", "changes"),
    [
        (
            "es",
            "El segundo cartel está demasiado oscuro, acláralo y haz el título más grande",
            {"brighter", "text_bigger"},
        ),
        ("de", "Mach das zweite Plakat wärmer und die Schrift kleiner", {"warmer", "text_smaller"}),
    ],
)
def test_several_changes_at_once_in_spanish_and_german(access, client_for, alice, language, text, changes):
    v1, v2 = edit(access, client_for, alice, language, text)
    assert set(v2.meta["changes"]) == changes
    if "brighter" in changes:
        assert luminance(v2) > luminance(v1) and v2.meta["text_scale"] > v1.meta["text_scale"]
    else:
        assert warmth(v2) > warmth(v1) and v2.meta["text_scale"] < v1.meta["text_scale"]
    assert_same_work(v1, v2)


def test_one_poster_less_gloomy_and_a_smaller_title(access, client_for, alice):
    """One poster: a change that names no item is for it; "less gloomy" is read as brighter."""
    v1, v2 = edit(access, client_for, alice, "en", "less gloomy please, and shrink the title a little", position=None)
    assert set(v2.meta["changes"]) == {"brighter", "text_smaller"}
    assert luminance(v2) > luminance(v1)
    assert v2.meta["text_scale"] < v1.meta["text_scale"] and v2.meta["title_px"] < v1.meta["title_px"]
    assert_same_work(v1, v2)
