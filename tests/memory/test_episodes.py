"""Episodic summaries: one per task, rewritten in place, linked to what they drew on."""

from datetime import timedelta

import pytest

from lomote.kernel.exceptions import InvalidInput
from memory.models import Derivation, DerivationRole, Episode
from memory.services.episodes import episode_write, episodes_for
from tests.memory.rows import T0, remember, statement

pytestmark = pytest.mark.django_db


def links(episode) -> set[tuple]:
    return set(Derivation.objects.filter(episode=episode).values_list("role", "evidence_id", "from_version_id"))


def write(workspace, task_id: int, summary: str, **kwargs) -> Episode:
    return episode_write(
        workspace_id=workspace.pk,
        task_id=task_id,
        title=kwargs.pop("title", "Retro posters"),
        summary=summary,
        period_start=kwargs.pop("period_start", T0),
        period_end=kwargs.pop("period_end", T0 + timedelta(hours=2)),
        **kwargs,
    )


def test_it_writes_an_episode_linked_to_the_evidence_and_versions_it_drew_on(workspace):
    # given
    said = statement(workspace, "Keep the palette warm", task_id=7)
    colour = remember(workspace, "Our brand's main colour is blue")

    # when
    episode = write(
        workspace,
        7,
        "Made 12 retro posters; kept the warm variant; video postponed.",
        evidence_ids=[said.pk, said.pk],
        version_ids=[colour.pk],
    )

    # then
    assert (episode.task_id, episode.title, episode.period_start) == (7, "Retro posters", T0)
    assert links(episode) == {
        (DerivationRole.SUMMARISES, said.pk, None),
        (DerivationRole.SUMMARISES, None, colour.pk),
    }


def test_it_rewrites_the_tasks_episode_in_place_and_only_adds_links(workspace):
    # given
    first_said = statement(workspace, "Keep the palette warm", task_id=7)
    episode = write(workspace, 7, "Made 12 posters.", evidence_ids=[first_said.pk])

    # when the task finishes again, drawing on something new
    later_said = statement(workspace, "Add a teaser video", task_id=7)
    again = write(
        workspace,
        7,
        "Made 12 posters and a teaser.",
        title="Retro posters and teaser",
        period_end=T0 + timedelta(days=2),
        evidence_ids=[first_said.pk, later_said.pk],
    )

    # then one episode, updated, with both links once each
    assert again.pk == episode.pk
    assert Episode.objects.filter(workspace=workspace, task_id=7).count() == 1
    again.refresh_from_db()
    assert (again.title, again.summary, again.period_end) == (
        "Retro posters and teaser",
        "Made 12 posters and a teaser.",
        T0 + timedelta(days=2),
    )
    assert links(again) == {
        (DerivationRole.SUMMARISES, first_said.pk, None),
        (DerivationRole.SUMMARISES, later_said.pk, None),
    }

    # when a rewrite names less than before, the earlier links stay (a forget must still find the episode)
    write(workspace, 7, "Posters and teaser, shorter.", evidence_ids=[later_said.pk])
    assert links(again) == {
        (DerivationRole.SUMMARISES, first_said.pk, None),
        (DerivationRole.SUMMARISES, later_said.pk, None),
    }


def test_each_task_has_its_own_episode_and_they_read_newest_first(workspace):
    # given
    older = write(workspace, 7, "Posters.", period_end=T0 + timedelta(hours=1))
    newer = write(workspace, 8, "Logo.", title="Bakery logo", period_end=T0 + timedelta(days=1))

    # then
    assert list(episodes_for(workspace_id=workspace.pk)) == [newer, older]
    assert list(episodes_for(workspace_id=workspace.pk, task_id=7)) == [older]


def test_it_refuses_sources_from_another_workspace_and_impossible_periods(workspace, dave):
    # given
    from tests.support.factories import WorkspaceFactory

    elsewhere = WorkspaceFactory(created_by=dave, name="Elsewhere")
    foreign_evidence = statement(elsewhere, "Comic Sans everywhere")
    foreign_version = remember(elsewhere, "Comic Sans everywhere")

    # then
    with pytest.raises(InvalidInput) as unknown_evidence:
        write(workspace, 7, "Posters.", evidence_ids=[foreign_evidence.pk])
    with pytest.raises(InvalidInput) as unknown_version:
        write(workspace, 7, "Posters.", version_ids=[foreign_version.pk])
    with pytest.raises(InvalidInput) as backwards:
        write(workspace, 7, "Posters.", period_end=T0 - timedelta(seconds=1))
    with pytest.raises(InvalidInput) as untitled:
        write(workspace, 7, "Posters.", title="   ")
    assert unknown_evidence.value.details == {"evidence": [foreign_evidence.pk]}
    assert unknown_version.value.details == {"versions": [foreign_version.pk]}
    assert (backwards.value.code, untitled.value.code) == ("episode_period_invalid", "episode_title_required")
    assert not Episode.objects.filter(workspace=workspace).exists()
