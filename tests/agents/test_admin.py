"""The operators' admin for tasks and the runtime log: pages load, the log is read-only, secrets stay hidden."""

import pytest
from django.urls import reverse

from agents.models import (
    Card,
    CardKind,
    ChecklistItem,
    InboxMessage,
    MainMessage,
    ModelLease,
    ModelProfile,
    ProviderKind,
    ProviderSecret,
    Step,
    Task,
    ToolCall,
    Turn,
    TurnStatus,
)
from tests.support.factories import (
    CardFactory,
    ChecklistItemFactory,
    InboxMessageFactory,
    ModelLeaseFactory,
    ModelProfileFactory,
    ProviderSecretFactory,
    StepFactory,
    TaskFactory,
    ToolCallFactory,
    TurnFactory,
)

pytestmark = pytest.mark.django_db

CIPHERTEXT = b"CIPHERTEXT-sk-live-TOPSECRET"
MODELS = [
    Task, ChecklistItem, ProviderSecret, ModelProfile, Turn, ModelLease, Step, ToolCall, InboxMessage, Card,
    MainMessage,
]  # fmt: skip
READ_ONLY = [Turn, ModelLease, Step, ToolCall, InboxMessage, Card, MainMessage]


@pytest.fixture
def operator(django_user_model):
    return django_user_model.objects.create_superuser("root", "root@example.com", "pw-root")


@pytest.fixture
def admin_client(client, operator):
    client.force_login(operator)
    return client


@pytest.fixture
def rows(workspace, alice):
    """One row of every agents model, linked the way the runtime links them."""
    secret = ProviderSecretFactory(workspace=workspace, name="openai", ciphertext=CIPHERTEXT)
    profile = ModelProfileFactory(
        workspace=workspace, name="gpt", provider=ProviderKind.OPENAI_COMPAT, model="gpt-4.1-mini", secret=secret
    )
    task = TaskFactory(workspace=workspace, title="Retro posters", brief="Make 3", created_by=alice)
    item = ChecklistItemFactory(task=task, title="Plan")
    turn = TurnFactory(task=task, status=TurnStatus.COMPLETED)
    lease = ModelLeaseFactory(
        turn=turn, provider=profile.provider, model=profile.model, params={"temperature": 0}, secret=secret
    )
    step = StepFactory(turn=turn, model="gpt-4.1-mini", prompt_tokens=10)
    call = ToolCallFactory(step=step, done=True)
    message = InboxMessageFactory(task=task, text="Make 3", status="consumed", consumed_by_step=step)
    card = CardFactory(task=task, turn=turn, kind=CardKind.CHOICE, title="Which palette?", options=[])
    main = MainMessage.objects.create(
        workspace=workspace,
        author=alice,
        text="Make the posters warmer",
        route="follow_up",
        task=task,
        inbox_message=message,
        router_lookups=[{"task": task.pk, "result": "opened"}],
    )
    return {
        MainMessage: main,
        Card: card,
        Task: task,
        ChecklistItem: item,
        ProviderSecret: secret,
        ModelProfile: profile,
        Turn: turn,
        ModelLease: lease,
        Step: step,
        ToolCall: call,
        InboxMessage: message,
    }


def _url(model, view: str, *args) -> str:
    return reverse(f"admin:agents_{model._meta.model_name}_{view}", args=args)


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_it_lists_every_agents_model(admin_client, rows, model):
    # when an operator opens the changelist, then searches it
    listing = admin_client.get(_url(model, "changelist"))
    searched = admin_client.get(_url(model, "changelist") + "?q=posters")

    # then both pages load, and the listing shows the row
    assert listing.status_code == 200
    assert searched.status_code == 200
    assert listing.context["cl"].result_count == 1


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_it_opens_each_row(admin_client, rows, model):
    # when an operator opens the row's page
    response = admin_client.get(_url(model, "change", rows[model].pk))

    # then it loads
    assert response.status_code == 200


@pytest.mark.parametrize("model", READ_ONLY, ids=lambda m: m.__name__)
def test_it_keeps_the_log_read_only(admin_client, rows, model):
    # given a row of the append-only log
    row = rows[model]
    before = list(model.objects.filter(pk=row.pk).values())

    # when an operator opens the add page and posts a change
    add = admin_client.get(_url(model, "add"))
    change = admin_client.post(_url(model, "change", row.pk), {"status": "failed", "model": "other"})

    # then adding is forbidden, the change page is view-only, and the row is unchanged
    assert add.status_code == 403
    assert change.status_code == 403
    assert list(model.objects.filter(pk=row.pk).values()) == before


@pytest.mark.parametrize("view", ["changelist", "change", "delete", "history"])
def test_it_never_shows_the_provider_secret(admin_client, rows, view):
    # given a stored secret
    secret = rows[ProviderSecret]
    args = () if view == "changelist" else (secret.pk,)

    # when an operator opens its pages
    response = admin_client.get(_url(ProviderSecret, view, *args))

    # then they show the name but neither the ciphertext nor a field for it
    assert response.status_code == 200
    assert b"openai" in response.content
    assert b"TOPSECRET" not in response.content and b"CIPHERTEXT" not in response.content
    assert b'name="ciphertext"' not in response.content


def test_it_does_not_let_an_operator_overwrite_the_ciphertext(admin_client, rows):
    # given a stored secret
    secret = rows[ProviderSecret]

    # when an operator posts a change that includes a ciphertext
    response = admin_client.post(
        _url(ProviderSecret, "change", secret.pk), {"name": "renamed", "ciphertext": "attacker-chosen"}
    )

    # then the name may change but the ciphertext is ignored, and no new secret can be added here
    assert response.status_code == 302
    secret.refresh_from_db()
    assert (secret.name, bytes(secret.ciphertext)) == ("renamed", CIPHERTEXT)
    assert admin_client.get(_url(ProviderSecret, "add")).status_code == 403


def test_it_does_not_show_the_secret_on_the_lease_or_profile_pages(admin_client, rows):
    # when an operator opens the lease and the profile that use the secret
    pages = [
        admin_client.get(_url(ModelLease, "change", rows[ModelLease].pk)),
        admin_client.get(_url(ModelProfile, "change", rows[ModelProfile].pk)),
        admin_client.get(_url(ModelLease, "changelist")),
    ]

    # then none shows the ciphertext
    for page in pages:
        assert page.status_code == 200
        assert b"TOPSECRET" not in page.content
