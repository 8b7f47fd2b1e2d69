"""A planned task whose request points at the person's material when two files fit as well: the person chooses on
a card, and the work starts from the one chosen (DESIGN §15: abstaining is an answer; the runtime asks). Through
the real runtime on PostgreSQL: REST uploads, Main, the scripted planner, the card, the procedural worker."""

import pytest

from agents.models import Card, CardKind, CardStatus, Task, TaskStatus
from agents.services.card_actions import card_act
from tests.agents.test_sources_flow import ask, owner, provenance, settle, sketch_png, upload  # noqa: F401
from workspace.models import GenerationJob, JobStatus

pytestmark = [pytest.mark.django_db(transaction=True)]


def test_it_asks_which_sketch_on_a_card_and_starts_from_the_one_chosen(owner, workspace, alice, client_for):  # noqa: F811
    # given two sketches uploaded under the same name, a moment apart
    client = client_for(alice)
    first = upload(client, workspace.pk, "sketch.png", sketch_png())
    second = upload(client, workspace.pk, "sketch.png", sketch_png(shift=30))
    # when the person asks for a series made from "my sketch"
    message = ask(client, workspace.pk, "Turn my sketch into three posters for our jazz night")
    settle(owner)
    # then nothing is made yet: the task asks which file, both offered, and "none of these"
    task = Task.objects.get(pk=message["task"])
    [card] = Card.objects.filter(task=task, kind=CardKind.CHOICE)
    assert card.status == CardStatus.OPEN and task.status == TaskStatus.WAITING
    labels = [o["label"] for o in card.options]
    assert any(label.endswith(f"(#{first})") for label in labels)
    assert any(label.endswith(f"(#{second})") for label in labels)
    assert not GenerationJob.objects.filter(task_id=task.pk).exists()
    # when the person chooses the first one
    [option] = [o["id"] for o in card.options if o["label"].endswith(f"(#{first})")]
    card_act(access=owner, card_id=card.pk, action="choose", option=option)
    settle(owner)
    # then every poster starts from it, and says so in its provenance
    jobs = list(GenerationJob.objects.filter(task_id=task.pk).order_by("pk"))
    assert len(jobs) == 3 and all(job.status == JobStatus.SUCCEEDED for job in jobs)
    assert {job.source_artifact_id for job in jobs} == {first}
    for job in jobs:
        derived = provenance(client, workspace.pk, job)["derived_from"]
        assert [(d["relation"], d["artifact_id"]) for d in derived] == [("source", first)]
        assert job.artifact_version.meta["method"] == "trace"
