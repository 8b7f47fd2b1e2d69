"""Task summaries: one paragraph on where a task stands, written when a turn ends (issue 10, item 8a).

The README says the Router searches task summaries: these tests hold it to that — the summary is written from
stored state at each turn end (by a worker, queued with the turn's end: issue 31 item 4), in the task's language,
and the index's search and entries read it.
"""

import pytest

from agents.models import Task, TaskEmbedding
from agents.runtime.loop import turn_run
from agents.services.task_index import task_index_get, task_search_keyword
from agents.services.tasks import task_cancel
from agents.tasks import summary_refresh
from billing.services.wallets import wallet_topup
from tests.agents.conftest import says
from tests.support.cards import PNG, access_of
from tests.support.queued import queued, run_summaries, run_wakeups
from workspace.models import GenerationJob
from workspace.providers import registry
from workspace.providers.simulated import SimulatedUpstream
from workspace.services.artifacts import artifact_create
from workspace.services.jobs import job_event_apply

pytestmark = [pytest.mark.django_db(transaction=True)]

PLAN = (
    "update_checklist",
    {"items": [{"title": "Launch poster"}, {"title": "Teaser clip for the bakery"}, {"title": "Menu card"}]},
)


def _run(task, script, tools, responses):
    script(responses)
    outcome = turn_run(turn_id=tools.start_turn(task).pk, generation=1)
    run_summaries()
    return outcome


def test_it_writes_the_summary_when_a_turn_ends_and_the_index_searches_it(task, script, tools):
    # given a task whose turn plans three items, finishes the first, and leaves an artifact
    artifact = artifact_create(workspace_id=task.workspace_id, kind="document", title="Launch poster notes",
                               content="Warm tones", author_task_id=task.pk)  # fmt: skip
    outcome = _run(
        task,
        script,
        tools,
        [
            says("Planning.", PLAN),
            says("First one done.", ("update_checklist", {"updates": [{"position": 1, "status": "done"}]})),
            says("I will stop here for now."),
        ],
    )
    # then the summary says the goal, what is done, what is left, why it stopped and the latest artifact
    task.refresh_from_db()
    assert outcome == "auto_continue"
    assert task.summary == (
        "Make 3 retro posters. Done 1/3: Launch poster. Left: Teaser clip for the bakery; Menu card. "
        f"Going on by itself. Latest artifacts: #{artifact.pk} “Launch poster notes”."
    )
    # and the Router's search reads it: a word found only in the summary finds the task, and its entry shows it
    assert "teaser clip for the bakery" in TaskEmbedding.objects.get(task=task).document
    assert [found for found, _ in task_search_keyword(workspace_id=task.workspace_id, text="the bakery teaser")] == [
        task.pk
    ]
    entry = task_index_get(workspace_id=task.workspace_id, text="bakery teaser").get(task.pk)
    assert entry.summary.startswith("Make 3 retro posters. Done 1/3: Launch poster.")


def test_it_says_what_the_task_waits_for_in_the_task_language(workspace, alice, script, tools, no_enqueue):
    # given a French task whose model plans and then asks the person
    task = Task.objects.create(
        workspace=workspace, title="Affiches", brief="Fais deux affiches rétro", language="fr", created_by=alice
    )
    _run(
        task,
        script,
        tools,
        [
            says("Plan.", ("update_checklist", {"items": [{"title": "Affiche 1"}, {"title": "Affiche 2"}]})),
            says("?", ("ask_user", {"question": "Quelle palette ?", "options": ["Chaude", "Froide"]})),
        ],
    )
    # then the summary is French and names the card waiting for the person
    task.refresh_from_db()
    assert task.summary == (
        "Fais deux affiches rétro. Rien de fait pour l’instant (0/2). Reste : Affiche 1; Affiche 2. "
        "Attend la réponse de la personne : « Quelle palette ? »."
    )


def test_a_turn_end_queues_the_summary_for_a_worker_which_may_run_it_twice(task, script, tools):
    # given a turn that plans and stops
    script([says("Planning.", PLAN), says("I will stop here for now.")])
    turn_run(turn_id=tools.start_turn(task).pk, generation=1)
    # then the turn's end committed the summary's message, not the summary
    task.refresh_from_db()
    assert task.summary == ""
    assert queued("agents.tasks.summary_refresh") == [(task.pk,)]
    assert not TaskEmbedding.objects.filter(task=task, document__contains="teaser clip").exists()
    # when a worker runs it, twice (the broker is at-least-once)
    written = run_summaries()
    again = summary_refresh(task.pk)
    # then the summary and the search row say where the task stands, the same both times
    task.refresh_from_db()
    assert written == [task.summary] and again == task.summary
    assert task.summary.startswith("Make 3 retro posters. Nothing done yet (0/3). Left: Launch poster;")
    assert "teaser clip for the bakery" in TaskEmbedding.objects.get(task=task).document


def test_it_rewrites_the_summary_when_a_person_cancels_the_task(task, script, tools, workspace, alice):
    # given a task that stopped with its plan
    _run(task, script, tools, [says("Planning.", PLAN), says("Stopping.")])
    # when the person cancels it (its turn, if any, ends too)
    task_cancel(access=access_of(alice, workspace), task_id=task.pk)
    # then the summary no longer says it stopped for lack of progress
    task.refresh_from_db()
    assert task.summary.endswith("Left: Launch poster; Teaser clip for the bakery; Menu card. Cancelled.")


def test_it_rewrites_the_summary_when_the_last_job_finishes_the_task(task, script, tools, workspace, alice, settings):
    # given a one-item task waiting for its generation job
    settings.LOMOTE_DEFAULT_GENERATION_PROVIDER = "simulated"
    wallet_topup(access=access_of(alice, workspace), amount=1000)
    script(
        [
            says("Plan.", ("update_checklist", {"items": [{"title": "Poster — jazz festival"}]})),
            says("Making it.", ("generate_image", {"prompt": "jazz festival poster", "checklist_position": 1})),
        ]
    )
    with registry.override("simulated", SimulatedUpstream(deliver=lambda headers, body: 200)):
        assert turn_run(turn_id=tools.start_turn(task).pk, generation=1) == "suspended"
        run_summaries()
        task.refresh_from_db()
        assert "Waiting for 1 generation job(s)." in task.summary
        # when the job succeeds (no turn runs after it: the task is finished by the job's reaction)
        job = GenerationJob.objects.get(task_id=task.pk)
        job_event_apply(job_id=job.pk, status="succeeded", progress=100, result=PNG)
        run_wakeups()
    # then the summary says so, instead of still waiting
    task.refresh_from_db()
    assert task.status == "done"
    assert task.summary.startswith(
        "Make 3 retro posters. Done 1/1: Poster — jazz festival. Finished. Latest artifacts: #"
    )
