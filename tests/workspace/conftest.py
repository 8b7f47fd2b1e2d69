"""Fixtures for the generation suites: stored files under a temporary MEDIA_ROOT, a recorder of job_settled."""

import pytest

from lomote.kernel import domain_events
from workspace.domain_events import JOB_SETTLED


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path):
    """Artifact files go to a directory of the test's own, never var/media."""
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


@pytest.fixture
def settled():
    """Every JOB_SETTLED published during the test, after the subscribers already registered."""
    calls: list[dict] = []

    def record(**data):
        calls.append(data)

    with domain_events.subscribed(JOB_SETTLED, record):
        yield calls
