"""The routing evaluation set (issue 15 item 2) as a test: CI fails when the scripted Router regresses.

The whole set goes through Main (`main_message_post`: the task index, the Router, the duplicate check, the
pre-execution validation), each workspace state built through the services and rolled back, exactly as
`python manage.py eval_routing` runs it. Thresholds: 95 % overall, 85 % on every route.
"""

from collections import Counter
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from agents.management.commands.eval_routing import (
    DEFAULT_CASES,
    ROUTES,
    DataSetError,
    cases_load,
    evaluate,
    is_held_out,
    report,
)
from agents.models import InboxMessage, MainMessage, Task
from lomote.understanding.languages import EVALUATED
from workspace.models import Artifact, Workspace

pytestmark = pytest.mark.django_db

OVERALL = 0.95
# Asking is the hardest route for a router that reads by meaning (two near-identical series, a change to work no
# task is about, in five languages): measured at 87.9 %, held here with a little room.
PER_ROUTE = 0.85


@pytest.fixture(scope="module")
def data_set():
    return cases_load(DEFAULT_CASES)


def test_the_set_is_large_in_five_languages_and_covers_every_route(data_set):
    # given the data set as committed
    states, cases = data_set

    # then it has at least 200 messages in the five evaluated languages, each with held-out cases of its own,
    # every route, and the workspace kinds
    languages = Counter(c.language for c in cases)
    held_by_language = Counter(c.language for c in cases if c.held_out)
    assert len(cases) >= 200
    assert set(languages) == set(EVALUATED)
    assert all(languages[language] >= 40 and held_by_language[language] >= 8 for language in EVALUATED), languages
    assert {c.route for c in cases} == set(ROUTES)
    assert {"empty", "posters_done", "two_brands", "archived_posters", "deleted"} <= set(states)
    assert any(
        spec.get("tasks", {}).get(key, {}).get("archived") for spec in states.values() for key in spec.get("tasks", {})
    )
    # and about 30 % of it is held out, by a hash that does not depend on the order of the file
    held = sum(c.held_out for c in cases) / len(cases)
    assert 0.22 <= held <= 0.38
    assert is_held_out("empty", "Make them warmer") == is_held_out("empty", "Make them warmer")


def test_the_scripted_router_passes_the_set(data_set):
    # given every state and case of the set
    states, cases = data_set
    counts = (Task.objects.count(), Workspace.objects.count(), MainMessage.objects.count(), Artifact.objects.count())

    # when each message is routed through Main in its state
    evaluation = evaluate(states=states, cases=cases)

    # then the scripted Router reaches the thresholds overall and on every route
    shown = report(evaluation, show_held_out=True)
    assert len(evaluation.outcomes) == len(cases)
    assert evaluation.accuracy() >= OVERALL, shown
    for route, outcomes in evaluation.by_route().items():
        assert evaluation.accuracy(outcomes) >= PER_ROUTE, f"{route}\n{shown}"
    # and every state was rolled back: nothing it built or routed is left
    after = (Task.objects.count(), Workspace.objects.count(), MainMessage.objects.count(), Artifact.objects.count())
    assert after == counts


def test_the_command_prints_the_figures_and_exits_by_the_minimum(capsys, tmp_path: Path):
    # when one state is evaluated with a reachable minimum, then it prints the table and returns normally
    call_command("eval_routing", "--state", "posters_done", "--min-accuracy", "50")
    printed = capsys.readouterr().out
    assert "expected route" in printed and "Confusion" in printed and "held-out split" in printed
    assert "tuning en" in printed and "held-out" in printed
    assert "overall" in printed and "lomote-scripted-router-3" in printed

    # given a set whose one label is wrong on purpose (thanks are never a new task)
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text("states: {empty: {}}\ncases: [{state: empty, route: new_task, en: [Thanks!]}]\n")

    # when it is evaluated with a minimum, then the command fails with exit code 1 and says why
    with pytest.raises(CommandError) as missed:
        call_command("eval_routing", "--cases", str(wrong), "--min-accuracy", "0.5")
    assert missed.value.returncode == 1 and "below --min-accuracy" in str(missed.value)
    # and without a minimum it reports the miss and exits normally
    call_command("eval_routing", "--cases", str(wrong))
    assert "expected new_task; routed answer" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("states: {}\ncases: [{state: nowhere, route: answer, en: [hi]}]", "unknown state"),
        ("states: {s: {}}\ncases: [{state: s, route: teleport, en: [hi]}]", "unknown route"),
        ("states: {s: {}}\ncases: [{state: s, route: follow_up, task: ghost, en: [hi]}]", "not a task"),
        ("states: {s: {tasks: {t: {title: T}}}}\ncases: [{state: s, route: follow_up, en: [hi]}]", "names its task"),
        ("states: {s: {}}\ncases: [{state: s, route: answer}]", "no phrasing"),
        ("states: {s: {}}\ncases: [{state: s, route: answer, en: [hi, hi]}]", "twice"),
        ("- just a list", "expected"),
    ],
)
def test_it_refuses_a_malformed_data_set(tmp_path: Path, text, error):
    # given a data set file with one mistake
    path = tmp_path / "cases.yaml"
    path.write_text(text)

    # when it is loaded, then the mistake is named
    with pytest.raises(DataSetError, match=error):
        cases_load(path)
    assert InboxMessage.objects.count() == 0


def test_the_command_evaluates_a_model_router_from_a_profile(capsys, tmp_path: Path, workspace):
    # given a model profile in a workspace, answered by a fake model that always says "answer"
    from agents.models import ModelProfile, ProviderKind
    from agents.providers import registry
    from agents.providers.base import ModelResponse, ToolCallIntent, Usage

    class AlwaysAnswers:
        def __init__(self):
            self.requests = []

        def complete(self, request):
            self.requests.append(request)
            call = ToolCallIntent("r1", "route_message", {"route": "answer", "reply": "Hello."})
            return ModelResponse(text="", tool_calls=[call], usage=Usage(), model="fake-router-9")

    ModelProfile.objects.create(workspace=workspace, name="fake", provider=ProviderKind.REPLAY, model="m")
    cases = tmp_path / "cases.yaml"
    cases.write_text(
        "states: {empty: {}}\n"
        "cases:\n"
        "  - {state: empty, route: answer, en: [Thanks!]}\n"
        "  - {state: empty, route: new_task, en: [Make three posters for my café]}\n"
    )
    fake = AlwaysAnswers()

    # when the set is evaluated with that profile and a minimum only the scripted Router reaches
    with registry.override(ProviderKind.REPLAY, fake):
        call_command("eval_routing", "--cases", str(cases), "--profile", "fake", "--min-accuracy", "100")

    # then both routers are reported: the scripted one right twice, the model (reached through the profile,
    # copied into each throwaway workspace) right once; the model is reported, not judged, so no failure
    printed = capsys.readouterr().out
    assert "scripted Router" in printed and "model (fake: replay/m) Router" in printed and "fake-router-9" in printed
    assert len(fake.requests) == 2
    scripted, model = printed.split("Routing evaluation")[1:]
    assert "overall               2        2    100.0 %" in scripted
    assert "overall               2        1     50.0 %" in model
    assert ModelProfile.objects.filter(name="fake").count() == 1  # the copies were rolled back
