"""The operators' admin for memory: every model's pages load, nothing can be added, changed or deleted there,
and what a forget erased shows as erased."""

import pytest
from django.contrib import admin as django_admin
from django.urls import reverse

from agents.services.card_actions import card_act
from agents.services.memory_forget import memory_forget_ask
from memory.models import (
    Derivation,
    Episode,
    Evidence,
    ForgetRequest,
    ForgottenTerm,
    Memory,
    MemoryIndex,
    MemoryVersion,
    ProfileEntry,
    ProfileVersion,
    Tombstone,
    VersionStatus,
)
from memory.services.episodes import episode_write
from memory.services.memories import memory_correct, memory_state
from workspace.selectors import workspace_access

pytestmark = pytest.mark.django_db

MODELS = [
    Evidence,
    Memory,
    MemoryVersion,
    Derivation,
    Episode,
    ProfileVersion,
    ProfileEntry,
    MemoryIndex,
    Tombstone,
    ForgetRequest,
    ForgottenTerm,
]
CANARY = "Brixolan-4471"


@pytest.fixture
def operator(django_user_model):
    return django_user_model.objects.create_superuser("root", "root@example.com", "pw-root")


@pytest.fixture
def admin_client(client, operator):
    client.force_login(operator)
    return client


@pytest.fixture
def forgotten(workspace, alice):
    """A memory refined once, in the profile and an episode, then forgotten through its card; and one that stays."""
    access = workspace_access(principal=alice, workspace_id=workspace.pk)
    memory_state(access=access, content="Our brand's main colour is blue.", kind="fact")
    mascot = memory_state(access=access, content=f"Our mascot is {CANARY}.", kind="fact")
    memory_correct(access=access, memory_id=mascot.pk, content=f"Our mascot is {CANARY} the fox.")
    from django.utils import timezone

    now = timezone.now()
    episode_write(
        workspace_id=workspace.pk,
        task_id=1,
        title="Mascot",
        summary=f"{CANARY} was drawn.",
        period_start=now,
        period_end=now,
        version_ids=list(MemoryVersion.objects.filter(memory=mascot).values_list("pk", flat=True)),
    )
    _, card = memory_forget_ask(access=access, memory_id=mascot.pk)
    card_act(access=access, card_id=card.pk, action="confirm")
    return mascot


def test_it_registers_every_memory_model():
    assert [m for m in MODELS if not django_admin.site.is_registered(m)] == []


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_every_page_loads_read_only_and_shows_nothing_forgotten(admin_client, forgotten, model):
    # given rows of every model, some of them forgotten
    meta = model._meta
    row = model.objects.order_by("pk").first()
    assert row is not None, meta.model_name

    # when the operator opens the list and a row
    listed = admin_client.get(reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist"))
    opened = admin_client.get(reverse(f"admin:{meta.app_label}_{meta.model_name}_change", args=[row.pk]))

    # then both load, the forgotten words are nowhere, and there is no way to add, save or delete
    for page in (listed, opened):
        assert page.status_code == 200
        assert CANARY.casefold() not in page.content.decode().casefold()
    assert b'name="_save"' not in opened.content
    assert b"deletelink" not in opened.content
    assert reverse(f"admin:{meta.app_label}_{meta.model_name}_add").encode() not in listed.content
    assert b'value="delete_selected"' not in listed.content


def test_forgotten_versions_show_as_erased(admin_client, forgotten):
    versions = admin_client.get(reverse("admin:memory_memoryversion_changelist")).content.decode()
    erased = MemoryVersion.objects.filter(memory=forgotten, status=VersionStatus.FORGOTTEN)

    assert erased.count() == 2
    assert versions.count("(erased)") >= 2
    assert "Our brand&#x27;s main colour is blue." in versions


@pytest.mark.parametrize("model", [Evidence, Derivation], ids=lambda m: m.__name__)
def test_evidence_and_derivations_cannot_be_deleted_even_by_url(admin_client, forgotten, model):
    row = model.objects.order_by("pk").first()
    url = reverse(f"admin:memory_{model._meta.model_name}_delete", args=[row.pk])

    assert admin_client.post(url, {"post": "yes"}).status_code == 403
    assert model.objects.filter(pk=row.pk).exists()
