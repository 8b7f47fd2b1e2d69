"""A workspace's own embedding model reads its words (DESIGN §15): the layer's encoder scope and its fallback.

The remote model here is a function standing in for an endpoint: the offline model's rows turned by a fixed
rotation, so it is another model (other vectors) that understands as well, and its calls can be counted.
"""

import numpy as np
import pytest

from lomote.understanding import RemoteEncoder, decide, decision_get, encoder_scope
from lomote.understanding.banks import bank_load
from lomote.understanding.encoder import encoder_default


class Endpoint:
    def __init__(self):
        self.calls: list[list[str]] = []
        self.failing = False
        rotation, _ = np.linalg.qr(np.random.default_rng(7).normal(size=(512, 512)))
        self.rotation = rotation.astype(np.float32)

    def __call__(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        if self.failing:
            raise ConnectionError("the server said: key sk-secret-123 is not valid")
        return encoder_default().encode(texts) @ self.rotation

    @property
    def inputs(self) -> list[str]:
        return [text for call in self.calls for text in call]


@pytest.fixture
def endpoint(tmp_path, monkeypatch):
    # An empty store of fitted classifiers: these tests see the bank encoded through the endpoint to train on.
    monkeypatch.setenv("LOMOTE_UNDERSTANDING_CACHE", str(tmp_path / "fitted"))
    return Endpoint()


def test_decisions_inside_a_scope_read_through_the_workspace_model(endpoint):
    # given a scope whose encoder is a remote model
    resolved = []

    def resolve():
        resolved.append(1)
        return RemoteEncoder("test-endpoint/rotated-a", endpoint)

    with encoder_scope(resolve):
        assert not resolved  # nothing read yet: the endpoint is not even looked up
        # when two decisions read one message
        kind = decide("kind", "make me a poster for the summer fair")
        decide("edit", "make it brighter")
    # then the scope was resolved once, the bank was encoded by that model to train on, and the message too
    assert resolved == [1]
    assert set(bank_load("kind").texts) <= set(endpoint.inputs)
    assert "make me a poster for the summer fair" in endpoint.inputs
    # and that model's classifier understands like the offline one
    assert kind.label == decide("kind", "make me a poster for the summer fair").label == "poster"
    assert decision_get("kind", RemoteEncoder("test-endpoint/rotated-a", endpoint)).encoder.model_id == (
        "test-endpoint/rotated-a"
    )
    # and outside the scope the remote model is not asked
    before = len(endpoint.calls)
    decide("kind", "draw a lighthouse at dusk")
    assert len(endpoint.calls) == before


def test_a_failing_endpoint_leaves_the_offline_model_reading_and_rests(endpoint, caplog):
    # given a remote model that fails (its error text echoes a key)
    endpoint.failing = True
    encoder = RemoteEncoder("test-endpoint/rotated-b", endpoint)
    # when a decision is taken in its scope
    with encoder_scope(lambda: encoder):
        decision = decide("kind", "make me a poster for the summer fair")
        calls = len(endpoint.calls)
        decide("kind", "a logo for our bakery")
    # then the offline model answered, the endpoint was asked once and then left to rest
    assert decision.label == "poster"
    assert calls == 1 and len(endpoint.calls) == 1
    # and the log names the model and the error's class, never the server's words
    assert "test-endpoint/rotated-b" in caplog.text and "ConnectionError" in caplog.text
    assert "sk-secret-123" not in caplog.text


def test_rows_of_the_wrong_shape_count_as_a_failure():
    # given an endpoint that answers one row for two texts
    encoder = RemoteEncoder("test-endpoint/short", lambda texts: np.ones((1, 8)))
    # when a decision reads through it, then the offline model answers instead
    with encoder_scope(lambda: encoder):
        assert decide("kind", "make me a poster for the summer fair").label == "poster"
    assert encoder.resting
