"""Long-term memory in the context (issues 12 and 13): the profile slot shows the profile's current version,
the recall layer the memories the goal calls for, and every step records which memory versions it was shown."""

import pytest
from django.utils import timezone

from agents.models import Step
from agents.runtime.loop import turn_run
from memory.models import Memory, MemoryKind, MemoryVersion, VersionOperation
from memory.selectors import Recall
from memory.services.index import index_put
from memory.services.profile import profile_rebuild
from tests.agents.conftest import says

pytestmark = [pytest.mark.django_db(transaction=True)]


def _remember(workspace, subject: str, content: str, kind=MemoryKind.PREFERENCE) -> MemoryVersion:
    memory = Memory.objects.create(workspace=workspace, subject=subject)
    version = MemoryVersion.objects.create(
        workspace=workspace,
        memory=memory,
        number=1,
        kind=kind,
        operation=VersionOperation.ORIGIN,
        content=content,
        normalised=content.casefold(),
        valid_from=timezone.now(),
    )
    index_put(version)
    return version


def test_the_model_sees_the_profile_and_the_recalled_memories_and_the_step_records_them(
    task, tools, script, workspace, settings
):
    # given a durable preference in the profile, and a later fact about retro posters for recall
    palette = _remember(workspace, "palette saturation", "We like low-saturation palettes.")
    profile = profile_rebuild(workspace_id=workspace.pk, reason="test")
    serif = _remember(workspace, "poster font", "Retro posters use a slab serif.", kind=MemoryKind.FACT)
    settings.LOMOTE_MAX_STEPS_PER_TURN = 2
    model = script([says("Looking.", ("test_noop", {}))])

    # when the task (retro posters) runs
    turn = tools.start_turn(task)
    turn_run(turn_id=turn.pk, generation=turn.generation)

    # then the model read the profile in the prefix and the recalled memory, and each step says so
    messages = [m["content"] for m in model.requests[0].messages if m["role"] == "system"]
    assert any("low-saturation palettes" in text and f"profile version {profile.number}" in text for text in messages)
    assert any("slab serif" in text and f"memory version {serif.pk}" in text for text in messages)
    for step in Step.objects.filter(turn=turn):
        assert step.memory["profile_version"] == profile.number
        assert {palette.pk, serif.pk} <= set(step.memory["versions"]) and step.memory["recall"] == "ok"


def test_a_recall_that_times_out_lets_the_turn_go_on_and_is_recorded(task, tools, script, monkeypatch, settings):
    # given a memory store that does not answer in time
    monkeypatch.setattr("agents.runtime.context.recall", lambda **kwargs: Recall(memories=[], timed_out=True))
    settings.LOMOTE_MAX_STEPS_PER_TURN = 2
    script([says("Looking.", ("test_noop", {}))])

    # when the task runs
    turn = tools.start_turn(task)
    outcome = turn_run(turn_id=turn.pk, generation=turn.generation)

    # then it went on without memories, and the steps record the timeout
    assert outcome == "step_cap"
    assert [s.memory["recall"] for s in Step.objects.filter(turn=turn)] == ["timed_out", "timed_out"]
