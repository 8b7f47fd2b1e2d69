"""A task an integrator starts with an API key acts with the key's role — while the key is active, never more.

Found by trying the REST API as a new user: an editor key's message started a task that acted as a viewer (it had
no human creator), so its paid generation was refused as `tool_forbidden` and the task went idle saying nothing.
"""

import pytest
from django.utils import timezone

from agents.models import Card, Task, ToolCall, Turn
from agents.runtime.loop import turn_run
from agents.runtime.steplog import task_lock_for_decision
from agents.selectors import task_role, with_acting_role
from agents.services.tasks import task_create
from tests.support.rest import issue_api_key
from workspace.authentication import ApiKeyPrincipal
from workspace.models import ApiKey, Role
from workspace.selectors import workspace_access

pytestmark = pytest.mark.django_db(transaction=True)


def _key_access(workspace, role):
    key, _ = issue_api_key(workspace, role=role, name="Zapier")
    return key, workspace_access(principal=ApiKeyPrincipal(ApiKey.objects.get(pk=key.pk)), workspace_id=workspace.pk)


def _acting_role(task):
    return with_acting_role(Task.objects.filter(pk=task.pk)).values_list("acting_role", flat=True).get()


def test_a_task_started_with_an_editor_key_acts_as_an_editor_until_the_key_is_revoked(workspace, no_enqueue):
    key, access = _key_access(workspace, Role.EDITOR)
    task = task_create(access=access, title="Logo", brief="")
    assert (task.created_by_id, task.created_by_key_id) == (None, key.pk)
    assert task_role(task) == _acting_role(task) == Role.EDITOR

    ApiKey.objects.filter(pk=key.pk).update(revoked_at=timezone.now())
    assert task_role(task) == _acting_role(task) == Role.VIEWER  # a revoked key lends its task nothing


def test_the_decision_lock_reads_the_same_role_as_the_selectors(workspace, no_enqueue):
    from django.db import transaction

    key, access = _key_access(workspace, Role.EDITOR)
    task = task_create(access=access, title="Logo", brief="")
    Task.objects.filter(pk=task.pk).update(status="active")
    with transaction.atomic():
        assert task_lock_for_decision(task.pk).acting_role == Role.EDITOR
    ApiKey.objects.filter(pk=key.pk).update(role=Role.VIEWER)
    with transaction.atomic():
        assert task_lock_for_decision(task.pk).acting_role == Role.VIEWER == task_role(task)


def test_an_editor_keys_request_reaches_its_paid_step_instead_of_being_refused(workspace, no_enqueue):
    _, access = _key_access(workspace, Role.EDITOR)
    task = task_create(access=access, title="Miette logo", brief="Make a logo for a bakery called Miette")
    turn = Turn.objects.get(task=task)

    turn_run(turn_id=turn.pk, generation=turn.generation)

    refused = ToolCall.objects.filter(turn__task=task, error__code="tool_forbidden")
    assert list(refused.values_list("name", flat=True)) == []
    # the paid generation was proposed and is now waiting for a person's approval (or running), not refused
    asked = Card.objects.filter(task=task).values_list("kind", flat=True)
    made = ToolCall.objects.filter(turn__task=task, name__startswith="generate_").count()
    assert made >= 1 and (list(asked) or ToolCall.objects.filter(turn__task=task, status="done").exists())
