"""A workspace with one of everything the REST API can point at, made through the real services.

Main, the runtime, billing and the procedural provider do the work as they would in production; django-q
runs each job inline (its `sync` mode) instead of on a cluster, so the world is complete when `seed()`
returns. Each operation that changes an object's state gets an object of its own (a task to pause, one to
resume, one to cancel...), so the contract run meets every operation with something it can act on.
"""

from dataclasses import dataclass, field

from django.contrib.auth import get_user_model
from django_q.conf import Conf
from rest_framework.authtoken.models import Token

from agents.main.messages import main_message_post
from agents.models import Card, CardStatus, InboxMessage, InboxStatus, Step, Task, TaskStatus, ToolCall
from agents.services.flow_runs import flow_run_request
from agents.services.inbox import message_post
from agents.services.presets import preset_create
from agents.services.tasks import task_archive, task_cancel, task_create, task_pause
from billing.services.approvals import approval_grant
from billing.services.quotes import quote_create
from billing.services.wallets import wallet_topup
from memory.services.memories import memory_state
from workspace.flows.authoring import flow_create
from workspace.models import ArtifactKind, ArtifactVersion, FlowRunStatus, GenerationJob, Membership, Role
from workspace.selectors import workspace_access
from workspace.services.artifacts import artifact_create
from workspace.services.collections import collection_create
from workspace.services.documents import document_write
from workspace.services.guides import guide_create
from workspace.services.workspaces import api_key_create, membership_add, workspace_create

FLOW = {
    "nodes": {
        "brief": {"type": "text_input"},
        "poster": {"type": "generate_image", "params": {"prompt": "Jazz night poster: {input}"}},
        "end": {"type": "finish"},
    },
    "edges": [["brief", "poster"], ["poster", "end"]],
    "start": "brief",
}


@dataclass
class World:
    token: str
    workspace: int
    ids: dict[str, int | str] = field(default_factory=dict)


def _user(username: str):
    return get_user_model().objects.create_user(username=username, email=f"{username}@example.com", password="-")


def _only(queryset, what: str):
    found = list(queryset[:2])
    assert len(found) == 1, f"the seed expected one {what}, found {len(found)}"
    return found[0]


def seed() -> World:
    """Seed the world (django-q must be in sync mode) and return the owner's token and the ids to aim at."""
    alice, _bob, carol, erin = (_user(name) for name in ("alice", "bob", "carol", "erin"))
    workspace = workspace_create(user=alice, name="Jazz festival studio")
    doomed = workspace_create(user=alice, name="Workspace to delete")
    access = workspace_access(principal=alice, workspace_id=workspace.pk)
    bob_membership = membership_add(access=access, user_identifier="bob", role=Role.EDITOR)
    membership_add(access=access, user_identifier="carol", role=Role.VIEWER)
    carol_membership = Membership.objects.get(workspace=workspace, user=carol)
    key, _ = api_key_create(access=access, name="ci", role=Role.EDITOR)
    revoked_key, _ = api_key_create(access=access, name="to revoke", role=Role.VIEWER)
    wallet_topup(access=access, amount=1_000_000, memo="contract test credits")

    # Through Main, as a person would: two posters are made at once (turns, steps, tool calls, jobs, images);
    # a bigger series waits on its quote card.
    done = main_message_post(access=access, text="Make 2 retro posters for a jazz festival").task
    waiting = main_message_post(access=access, text="Make a series of 6 neon posters for the late-night concerts").task
    done.refresh_from_db()
    waiting.refresh_from_db()
    assert done.status == TaskStatus.DONE, (done.status, done.stop_reason)
    assert waiting.status == TaskStatus.WAITING, (waiting.status, waiting.stop_reason)
    card = _only(Card.objects.filter(task=waiting, status=CardStatus.OPEN), "open card")
    image = _only(ArtifactVersion.objects.filter(artifact__workspace=workspace, number=1).order_by("pk")[:1], "image")
    job = GenerationJob.objects.filter(task_id=done.pk).order_by("pk").first()
    assert job is not None and Step.objects.filter(turn__task=done).exists() and ToolCall.objects.exists()

    def new_task(title: str) -> Task:
        # Its first turn is only queued (nothing runs it during the contract run): what the planner would make of
        # the brief must not decide whether the task can still be paused, cancelled or archived.
        Conf.SYNC = False
        try:
            return task_create(access=access, title=title, brief=f"{title}, for the jazz festival")
        finally:
            Conf.SYNC = True

    paused = new_task("Programme booklet")
    task_pause(access=access, task_id=paused.pk)
    to_replace = message_post(access=access, task_id=paused.pk, text="Use the festival's colours")
    to_withdraw = message_post(access=access, task_id=paused.pk, text="Add the sponsors' logos")
    assert {m.status for m in InboxMessage.objects.filter(pk__in=[to_replace.pk, to_withdraw.pk])} == {
        InboxStatus.PENDING
    }
    to_cancel = new_task("Ticket design")
    archived = new_task("Old flyer")
    task_cancel(access=access, task_id=archived.pk)
    task_archive(access=access, task_id=archived.pk)

    document = artifact_create(
        workspace_id=workspace.pk,
        kind=ArtifactKind.DOCUMENT,
        title="Press release",
        content="# Jazz festival\n\nThree nights of jazz by the river.\n",
        author_user=alice,
    )
    document_write(
        workspace_id=workspace.pk,
        artifact_id=document.pk,
        base_version=1,
        content="# Jazz festival\n\nThree nights of jazz by the river, from 8 pm.\n",
        author_user=alice,
    )
    flow = flow_create(workspace_id=workspace.pk, title="Poster flow", graph=FLOW, author_user=alice)
    run = flow_run_request(
        workspace_id=workspace.pk, artifact_id=flow.pk, inputs={"text": "saxophone"}, started_by=alice
    )
    # A run whose first node fails (its input is not text), leaving a node to retry.
    failed = flow_run_request(workspace_id=workspace.pk, artifact_id=flow.pk, inputs={"text": 5}, started_by=alice)
    failed.run.refresh_from_db()
    assert failed.run.status == FlowRunStatus.FAILED, failed.run.status

    quote = quote_create(workspace_id=workspace.pk, operation="image.generate", params={"count": 2}, created_by=alice)
    spare_quote = quote_create(workspace_id=workspace.pk, operation="video.generate", created_by=alice)
    approval_grant(access=access, quote_id=quote.pk)

    memory = memory_state(access=access, content="The festival's main colour is midnight blue.", kind="fact")

    # Asset collections: one to work on (the image and the press release, in that order), one to delete.
    collection = collection_create(
        workspace_id=workspace.pk, name="Festival picks", artifact_ids=[image.artifact_id, document.pk]
    )
    doomed_collection = collection_create(workspace_id=workspace.pk, name="Collection to delete")

    # A guide of the workspace's own, beside the built-in ones (guides are addressed by name).
    guide = guide_create(
        workspace_id=workspace.pk, name="festival-style", purpose="The festival's house style.", content="# Style\n"
    )
    # Assistant presets: one to read and edit, one to delete.
    preset = preset_create(access=access, name="Festival copywriter", instructions="Write jazz festival copy.")
    doomed_preset = preset_create(access=access, name="Preset to delete", params={"temperature": 0.5})

    return World(
        token=Token.objects.create(user=alice).key,
        workspace=workspace.pk,
        ids={
            "doomed_workspace": doomed.pk,
            "member": bob_membership.pk,
            "member_to_remove": carol_membership.pk,
            "api_key": key.pk,
            "api_key_to_revoke": revoked_key.pk,
            "done_task": done.pk,
            "waiting_task": waiting.pk,
            "paused_task": paused.pk,
            "task_to_cancel": to_cancel.pk,
            "archived_task": archived.pk,
            "message_to_replace": to_replace.pk,
            "message_to_withdraw": to_withdraw.pk,
            "card": card.pk,
            "image": image.artifact_id,
            "image_version": image.number,
            "job": job.pk,
            "document": document.pk,
            "flow": flow.pk,
            "flow_run": run.run.pk,
            "failed_flow_run": failed.run.pk,
            "quote": spare_quote.pk,
            "user_to_add": erin.pk,
            "memory": memory.pk,
            "collection": collection.pk,
            "doomed_collection": doomed_collection.pk,
            "guide": guide.name,
            "preset": preset.pk,
            "preset_to_delete": doomed_preset.pk,
        },
    )
