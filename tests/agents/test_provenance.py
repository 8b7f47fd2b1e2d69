"""How an artifact version was made (issue 16 item 4): GET …/artifacts/<aid>/versions/<n>/provenance/.

Posters and videos are made through the real runtime: a scripted model, real tools, the simulated upstream, a
funded wallet, and a quote card a person approves when the policy asks for one.
"""

import json

import pytest
from django.core.files.base import ContentFile
from django.urls import reverse
from django.utils import timezone

from agents.models import Card, CardKind, CardStatus, ChecklistItem, InboxMessage, ModelLease, Turn
from agents.runtime.loop import turn_run
from agents.services.card_actions import card_act
from agents.services.memory_forget import memory_forget_ask
from billing.models import Order
from billing.services.policy import spend_policy_update
from billing.services.wallets import wallet_topup
from memory.models import Memory, MemoryKind, MemoryVersion, VersionOperation
from memory.services.index import index_put
from memory.services.profile import profile_rebuild
from tests.agents.conftest import says
from tests.support.factories import WorkspaceFactory
from tests.support.queued import run_wakeups
from tests.support.rest import assert_error
from workspace.models import GenerationJob
from workspace.selectors import workspace_access
from workspace.services.artifacts import artifact_create
from workspace.services.jobs import job_event_apply

pytestmark = [pytest.mark.django_db(transaction=True)]

PNG = {"b64": "iVBORw0KGgo=", "media_type": "image/png", "filename": "poster.png", "meta": {}}
REQUEST = "Make a retro poster for the bakery's summer fair"
CANARY = "Zorblax the heron is our secret mascot"


@pytest.fixture
def owner(workspace, alice):
    access = workspace_access(principal=alice, workspace_id=workspace.pk)
    wallet_topup(access=access, amount=1000)
    return access


def url(workspace_id: int, artifact_id: int, number: int) -> str:
    return reverse(
        "artifact-version-provenance",
        kwargs={"workspace_id": workspace_id, "artifact_id": artifact_id, "number": number},
    )


def asked(task, person, text=REQUEST) -> InboxMessage:
    return InboxMessage.objects.create(task=task, author=person, source="person", text=text)


def run(task, tools, script, responses, trigger="test"):
    script(responses)
    turn = (
        tools.start_turn(task, trigger=trigger) if trigger == "test" else Turn.objects.get(task=task, trigger=trigger)
    )
    turn_run(turn_id=turn.pk, generation=turn.generation)
    return turn


def complete(job: GenerationJob):
    assert job_event_apply(job_id=job.pk, status="succeeded", progress=100, result=PNG)
    run_wakeups()
    job.refresh_from_db()
    return job.artifact_version


def approved_poster(task, tools, script, owner, alice):
    """A poster under a policy that asks for every order: quote card, alice approves, the job completes."""
    spend_policy_update(access=owner, no_confirm_threshold=0)
    asked(task, alice)
    call = ("generate_image", {"prompt": "retro bakery poster", "checklist_position": 1})
    run(task, tools, script, [says("Quoting the poster.", call)])
    card = Card.objects.get(task=task, kind=CardKind.QUOTE, status=CardStatus.OPEN)
    card_act(access=owner, card_id=card.pk, action="approve")
    run(task, tools, script, [says("Making the poster.", call)], trigger="approved")
    return complete(GenerationJob.objects.get(task_id=task.pk)), card


def test_a_generated_poster_says_which_model_call_job_approval_charge_and_request_made_it(
    task, tools, script, owner, alice, carol, upstream, client_for, django_assert_max_num_queries
):
    # given a poster made after alice approved its quote
    version, card = approved_poster(task, tools, script, owner, alice)

    # when a viewer asks how it was made
    with django_assert_max_num_queries(22):
        response = client_for(carol).get(url(task.workspace_id, version.artifact_id, version.number))

    # then it names the task, the request, the exact lease, the call and its job, the approval and the charge
    assert response.status_code == 200, response.content
    body = response.json()
    job = GenerationJob.objects.get(task_id=task.pk)
    lease = ModelLease.objects.get(turn_id=job.turn_id)
    assert body["made_by"] == "agent" and body["person"] is None
    assert body["task"] == {"id": task.pk, "title": task.title, "status": body["task"]["status"]}
    assert (body["request"][0]["kind"], body["request"][0]["text"]) == ("brief", task.brief)
    asks = [(r["text"], r["author"]) for r in body["request"] if r["source"] == "person"]
    assert asks == [(REQUEST, "alice")]
    assert body["model"]["provider"] == lease.provider and body["model"]["model"] == lease.model
    assert (body["model"]["lease_id"], body["model"]["params"]) == (lease.pk, lease.params)
    assert body["model"]["leased_at"]
    assert body["model"]["turn_id"] == job.turn_id
    assert "secret" not in json.dumps(body["model"])
    [call] = body["tool_calls"]
    assert (call["name"], call["call_id"], call["result"]["job"]) == ("generate_image", job.idempotency_key, job.pk)
    assert body["step"]["made_by_call"] == job.idempotency_key
    assert body["job"]["id"] == job.pk and body["job"]["status"] == "succeeded"
    assert body["job"]["prompt"] == "retro bakery poster"
    decision = next(d for d in body["decisions"] if d["card_id"] == card.pk)
    assert (decision["kind"], decision["status"], decision["resolved_by"]) == ("quote", "resolved", "alice")
    [charge] = body["charges"]
    assert (charge["call_id"], charge["status"], charge["captured"], charge["released"]) == (
        job.idempotency_key,
        "captured",
        True,
        False,
    )
    assert charge["amount"] > 0
    assert body["derived_from"] == []


def test_each_image_of_a_series_made_in_one_step_lists_only_its_own_charge(
    task, tools, script, owner, alice, upstream, client_for
):
    # given three images made by three paid calls of one step, after alice approved one quote for all three
    spend_policy_update(access=owner, no_confirm_threshold=0)
    for n in (1, 2, 3):
        ChecklistItem.objects.create(task=task, position=n, title=f"Poster {n} of 3")
    asked(task, alice, "Make a series of 3 retro posters")
    calls = [("generate_image", {"prompt": f"retro poster {n} of 3", "checklist_position": n}) for n in (1, 2, 3)]
    run(task, tools, script, [says("Quoting the series.", *calls)])
    card = Card.objects.get(task=task, kind=CardKind.QUOTE, status=CardStatus.OPEN)
    card_act(access=owner, card_id=card.pk, action="approve")
    run(task, tools, script, [says("Making the series.", *calls)], trigger="approved")
    jobs = list(GenerationJob.objects.filter(task_id=task.pk).order_by("pk"))
    assert len(jobs) == 3 and len({j.turn_id for j in jobs}) == 1
    versions = [complete(job) for job in jobs]
    orders = {o.idempotency_key: o for o in Order.objects.filter(workspace_id=task.workspace_id)}
    assert sorted(o.amount for o in orders.values()) == [40, 40, 40]
    client = client_for(alice)

    for job, version in zip(jobs, versions, strict=True):
        # when alice asks how one image was made
        body = client.get(url(task.workspace_id, version.artifact_id, version.number)).json()

        # then only the charge of the call that made it is listed: its amount and its order
        order = orders[job.idempotency_key]
        assert [(c["order_id"], c["call_id"], c["amount"], c["captured"]) for c in body["charges"]] == [
            (order.pk, job.idempotency_key, 40, True)
        ]
        # the step's three calls are all shown, the one that made this image marked
        assert [c["call_id"] for c in body["tool_calls"]] == [j.idempotency_key for j in jobs]
        assert body["step"]["made_by_call"] == job.idempotency_key
        # and alice's approval is listed, saying it covered the whole series, this charge under it
        decision = next(d for d in body["decisions"] if d["card_id"] == card.pk)
        assert decision["covers"] == {
            "operation": "image.generate",
            "items": 3,
            "per_item": 40,
            "amount": 120,
            "things": "3 images",
        }
        assert decision["approval_id"] == order.approval_id == body["charges"][0]["approval_id"]


def test_a_second_version_names_the_first_and_a_video_names_its_source_photo(
    task, tools, script, owner, alice, upstream, client_for
):
    # given a poster (version 1), then its second version made from it
    spend_policy_update(access=owner, no_confirm_threshold=1000, daily_no_confirm_cap=1000)
    asked(task, alice)
    run(task, tools, script, [says("Poster.", ("generate_image", {"prompt": "retro poster"}))])
    first = complete(GenerationJob.objects.get(task_id=task.pk))
    asked(task, alice, "Make it warmer")
    again = {"prompt": "warmer retro poster", "artifact_id": first.artifact_id}
    run(task, tools, script, [says("Warmer.", ("generate_image", again))])
    second = complete(GenerationJob.objects.filter(task_id=task.pk).latest("pk"))

    # and a video animated from a photo alice uploaded
    photo = artifact_create(
        workspace_id=task.workspace_id,
        kind="image",
        title="Cat photo",
        file=ContentFile(b"\x89PNG\r\n\x1a\n", name="cat.png"),
        media_type="image/png",
        author_user=alice,
    )
    asked(task, alice, "Bring my cat photo to life")
    animate = {"prompt": "the cat blinks", "source_artifact_id": photo.pk, "seconds": 2}
    run(task, tools, script, [says("Animating.", ("generate_video", animate))])
    video = complete(GenerationJob.objects.get(task_id=task.pk, kind="video"))
    client = client_for(alice)

    # then version 2 names version 1
    body = client.get(url(task.workspace_id, second.artifact_id, second.number)).json()
    assert second.number == 2
    assert [(s["relation"], s["artifact_id"], s["version"]) for s in body["derived_from"]] == [
        ("previous_version", first.artifact_id, 1)
    ]
    assert [r["text"] for r in body["request"] if r["source"] == "person"][-1] == "Make it warmer"
    # the video names the photo as its source
    body = client.get(url(task.workspace_id, video.artifact_id, video.number)).json()
    assert [(s["relation"], s["artifact_id"], s["artifact_title"]) for s in body["derived_from"]] == [
        ("source", photo.pk, "Cat photo")
    ]
    assert body["tool_calls"][0]["name"] == "generate_video"
    # and the photo says alice uploaded it, with no task, model or charge
    body = client.get(url(task.workspace_id, photo.pk, 1)).json()
    assert (body["made_by"], body["person"]) == ("person", "alice")
    assert (body["task"], body["model"], body["tool_calls"], body["charges"]) == (None, None, [], [])


def test_another_workspace_or_a_missing_version_is_not_found(task, tools, script, owner, alice, dave, client_for):
    photo = artifact_create(
        workspace_id=task.workspace_id, kind="document", title="Notes", content="hello", author_user=alice
    )
    # an outsider's own workspace cannot reach it
    elsewhere = WorkspaceFactory(name="Elsewhere", created_by=dave)
    assert_error(client_for(dave).get(url(elsewhere.pk, photo.pk, 1)), 404, "not_found")
    assert client_for(dave).get(url(task.workspace_id, photo.pk, 1)).status_code == 404
    # a version that does not exist
    assert_error(client_for(alice).get(url(task.workspace_id, photo.pk, 2)), 404, "version_not_found")
    # and the author's version reads fine
    assert client_for(alice).get(url(task.workspace_id, photo.pk, 1)).json()["person"] == "alice"


def test_the_memories_the_step_was_shown_are_listed_and_a_forgotten_one_is_removed(
    task, tools, script, owner, alice, upstream, client_for
):
    # given two memories in the profile the poster's step was shown
    kept = _remember(task.workspace, "poster font", "Retro posters use a slab serif.")
    secret = _remember(task.workspace, "mascot", CANARY)
    profile_rebuild(workspace_id=task.workspace_id, reason="test")
    spend_policy_update(access=owner, no_confirm_threshold=1000, daily_no_confirm_cap=1000)
    asked(task, alice)
    run(task, tools, script, [says("Poster.", ("generate_image", {"prompt": "retro poster"}))])
    version = complete(GenerationJob.objects.get(task_id=task.pk))
    client = client_for(alice)
    shown = client.get(url(task.workspace_id, version.artifact_id, 1)).json()["memories"]
    assert {m["version_id"]: m["content"] for m in shown if m["version_id"] in (kept.pk, secret.pk)} == {
        kept.pk: kept.content,
        secret.pk: CANARY,
    }

    # when alice has the mascot forgotten
    _, card = memory_forget_ask(access=owner, memory_id=secret.memory_id)
    card_act(access=owner, card_id=card.pk, action="confirm")

    # then the provenance still lists the memory, but nowhere carries its words
    response = client.get(url(task.workspace_id, version.artifact_id, 1))
    assert response.status_code == 200
    assert "Zorblax" not in response.content.decode()
    memories = {m["version_id"]: m for m in response.json()["memories"]}
    assert memories[secret.pk]["status"] == "forgotten"
    assert memories[kept.pk]["content"] == kept.content


def _remember(workspace, subject: str, content: str) -> MemoryVersion:
    memory = Memory.objects.create(workspace=workspace, subject=subject)
    version = MemoryVersion.objects.create(
        workspace=workspace,
        memory=memory,
        number=1,
        kind=MemoryKind.PREFERENCE,
        operation=VersionOperation.ORIGIN,
        content=content,
        normalised=content.casefold(),
        valid_from=timezone.now(),
    )
    index_put(version)
    return version
