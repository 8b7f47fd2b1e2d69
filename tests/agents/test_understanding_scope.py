"""A workspace whose profile sets an embedding model reads people's words through it (DESIGN §15, issue 32)."""

import logging

import pytest

from agents.models import ModelProfile, ProviderKind
from agents.secrets import secret_put
from agents.services.understanding_scope import reads_in_workspace, understanding_encoder
from lomote.understanding import decide
from lomote.understanding.banks import bank_load
from tests.support.fake_embeddings import FakeEmbeddingServer

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("local_model_servers")]

SECRET = "sk-test-understanding-1a2b3c4d5e"  # noqa: S105 - a test key, asserted never to leak


def _profile(workspace, server) -> ModelProfile:
    return ModelProfile.objects.create(
        workspace=workspace,
        name="embeddings",
        provider=ProviderKind.OPENAI_COMPAT,
        model="chat-model-unused",
        base_url=server.url,
        params={"embedding_model": "fake-embed-understanding"},
        secret=secret_put(workspace_id=workspace.pk, name="embeddings-key", value=SECRET),
    )


@reads_in_workspace(lambda workspace_id, text: workspace_id)
def _kind_of(workspace_id: int, text: str) -> str:
    return decide("kind", text).label


def test_an_entry_point_of_a_workspace_with_an_endpoint_reads_through_it(workspace, caplog):
    with FakeEmbeddingServer() as server:
        # given a workspace whose profile sets an embedding model
        _profile(workspace, server)
        # when an entry point of that workspace takes a decision
        with caplog.at_level(logging.DEBUG):
            _kind_of(workspace.pk, "a poster for the spring market")
        # then the endpoint encoded the bank (to train on) and the message, with the workspace's key
        assert set(bank_load("kind").texts[:50]) <= set(server.inputs)
        assert "a poster for the spring market" in server.inputs
        assert set(server.authorizations) == {f"Bearer {SECRET}"}
        # and the key reached no log line
        assert SECRET not in caplog.text


def test_a_workspace_without_an_endpoint_reads_offline(workspace):
    # given no profile with an embedding model, then the offline model reads
    assert understanding_encoder(workspace.pk) is None
    assert _kind_of(workspace.pk, "a logo for our bakery") == "logo"


def test_an_endpoint_that_fails_leaves_the_offline_model_reading(workspace):
    with FakeEmbeddingServer() as server:
        # given an endpoint that answers 500
        _profile(workspace, server)
        ModelProfile.objects.filter(workspace=workspace).update(params={"embedding_model": "fake-embed-failing"})
        for _ in range(3):
            server.fail(500)
        # when a decision is taken, then the offline model gives the answer
        assert _kind_of(workspace.pk, "a logo for our bakery") == "logo"
