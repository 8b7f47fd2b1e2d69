"""`python manage.py eval_routing`: the routing evaluation set through the real Router (issue 15 item 2).

The set (tests/routing/cases.yaml) describes workspace STATES as data — tasks with their brief, summary,
status, age and artifacts, the person's uploads, deleted artifacts, archived tasks, earlier messages to
Main — and CASES: a message, the route it should take and the task it should reach. Each state is built in
the database through the real services (a throwaway user and workspace, in a transaction rolled back at
the end: nothing is left behind, and no job, push or memory extraction leaves, since they all wait for a
commit that never comes). Each message then goes through `main_message_post`, the function Main's REST view
calls — task index, Router, duplicate check, pre-execution validation — in its own savepoint, rolled back
after its outcome is read, so cases never see each other.

The scripted Router always runs. A model Router runs too when a model profile is named (`--profile NAME`,
or $LOMOTE_EVAL_ROUTER_PROFILE): the profile is copied, secret reference included, as the default of each
throwaway workspace, so the Router reaches it exactly as it would in that workspace.

About 30 % of the cases are held out, chosen by a hash of state and text (stable, independent of order): the
Router's candidate model is fitted, and its threshold chosen, on the rest only (`--fit-target`), and held-out
phrasings never pick an exemplar. Accuracy is printed per split and per language (English, French, German,
Spanish, Portuguese). Failures of the held-out cases are listed only with
`--show-held-out`. Exit code 0, unless `--min-accuracy` is given and the scripted Router's overall accuracy
misses it (a model Router is reported, not judged: its figures are the model's).
"""

import hashlib
import os
import statistics
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import yaml
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.utils import timezone

from agents.main.messages import main_message_post, main_recent_messages
from agents.models import MainMessage, ModelProfile, Route, Task, TaskKind, TaskStatus
from agents.scripted.router import MODEL_NAME as SCRIPTED_ROUTER_MODEL
from agents.scripted.router import candidates_from_index
from agents.services.task_index import task_details_get, task_index_get
from agents.services.tasks import task_create
from lomote.understanding.languages import EVALUATED
from lomote.understanding.routing import Example, target_fit, weights_save
from workspace.models import Artifact, ArtifactKind
from workspace.selectors import Access, workspace_access
from workspace.services.workspaces import workspace_create

DEFAULT_CASES = Path(settings.BASE_DIR) / "tests" / "routing" / "cases.yaml"
PROFILE_ENV = "LOMOTE_EVAL_ROUTER_PROFILE"
HELD_OUT_PERCENT = 30
ROUTES = (Route.ANSWER, Route.LIGHTWEIGHT, Route.FOLLOW_UP, Route.NEW_TASK, Route.CLARIFY)
REFUSALS = {"", "task_archived", "task_cancelled", "artifact_deleted"}
STATUSES = {s.value for s in TaskStatus}


# --- the data set -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    state: str
    text: str
    language: str
    route: str
    task: str | None = None
    candidates: tuple[str, ...] = ()
    refusal: str = ""

    @property
    def held_out(self) -> bool:
        return is_held_out(self.state, self.text)


def is_held_out(state: str, text: str) -> bool:
    """Whether a case is in the held-out split: a stable hash of its state and text, 30 in 100."""
    digest = hashlib.sha256(f"{state}\n{text}".encode()).hexdigest()
    return int(digest[:8], 16) % 100 < HELD_OUT_PERCENT


class DataSetError(ValueError):
    pass


def cases_load(path: Path = DEFAULT_CASES) -> tuple[dict[str, dict], list[Case]]:
    """The states and the cases of a data set file, checked: every case names a known state, route, task."""
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise DataSetError(f"cannot read {path}: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("states"), dict) or not data.get("cases"):
        raise DataSetError(f"{path}: expected `states` (a mapping) and `cases` (a list)")
    states = {name: spec or {} for name, spec in data["states"].items()}
    cases, seen = [], set()
    for number, group in enumerate(data["cases"], 1):
        where = f"{path}, case group {number}"
        state = group.get("state")
        if state not in states:
            raise DataSetError(f"{where}: unknown state {state!r}")
        route = group.get("route")
        if route not in ROUTES:
            raise DataSetError(f"{where}: unknown route {route!r}")
        tasks = states[state].get("tasks") or {}
        task = group.get("task")
        candidates = tuple(group.get("candidates") or ())
        for key in ([task] if task else []) + list(candidates):
            if key not in tasks:
                raise DataSetError(f"{where}: {key!r} is not a task of state {state!r}")
        if (route == Route.FOLLOW_UP) != (task is not None):
            raise DataSetError(f"{where}: a follow_up names its task, and only a follow_up does")
        refusal = group.get("refusal", "")
        if refusal not in REFUSALS:
            raise DataSetError(f"{where}: unknown refusal {refusal!r}")
        texts = [(language, text) for language in EVALUATED for text in group.get(language) or ()]
        if not texts:
            raise DataSetError(f"{where}: no phrasing")
        for language, text in texts:
            if (state, text) in seen:
                raise DataSetError(f"{where}: {text!r} is listed twice for {state!r}")
            seen.add((state, text))
            cases.append(Case(state, str(text), language, route, task, candidates, refusal))
    return states, cases


# --- building a state -------------------------------------------------------------------------------------


def _ago(days: float):
    return timezone.now() - timedelta(days=float(days))


def _artifact(workspace_id: int, spec: dict, *, task_id: int | None, days_ago: float) -> Artifact:
    kind = spec.get("kind", ArtifactKind.IMAGE)
    if kind not in ArtifactKind.values:
        raise DataSetError(f"unknown artifact kind {kind!r}")
    when = _ago(spec.get("days_ago", days_ago))
    artifact = Artifact.objects.create(
        workspace_id=workspace_id,
        kind=kind,
        title=spec["title"],
        tags=list(spec.get("tags") or []),
        current_version=1,
        created_by_task_id=task_id,
        deleted_at=timezone.now() if spec.get("deleted") else None,
    )
    Artifact.objects.filter(pk=artifact.pk).update(created_at=when, updated_at=when)
    return artifact


def _task(access: Access, spec: dict) -> Task:
    """A task made through the task service (its first inbox message and turn), then put in the described
    state: summary, status, archive, age. A full save, so the search row follows whatever the index does."""
    status = spec.get("status", TaskStatus.IDLE)
    if status not in STATUSES:
        raise DataSetError(f"unknown task status {status!r}")
    task = task_create(
        access=access,
        title=spec["title"],
        brief=spec.get("brief", spec["title"]),
        language=spec.get("language", "en"),
        kind=spec.get("kind", TaskKind.PERSISTENT),
    )
    task.summary = spec.get("summary", "")
    task.status = status
    task.archived_at = timezone.now() if spec.get("archived") else None
    task.save()
    when = _ago(spec.get("days_ago", 0))
    Task.objects.filter(pk=task.pk).update(created_at=when, updated_at=when)
    return task


def state_build(*, spec: dict, access: Access) -> dict[str, int]:
    """Build one state in `access`'s workspace (caller's transaction). Returns task key → task id.

    Tasks are made oldest first, so ids grow with age as they would have; uploads have no task.
    """
    workspace_id = access.workspace.pk
    tasks = spec.get("tasks") or {}
    ids: dict[str, int] = {}
    for key, task_spec in sorted(tasks.items(), key=lambda item: -float(item[1].get("days_ago", 0))):
        task = _task(access, task_spec)
        ids[key] = task.pk
        for artifact in task_spec.get("artifacts") or ():
            _artifact(workspace_id, artifact, task_id=task.pk, days_ago=task_spec.get("days_ago", 0))
    for upload in (spec.get("uploads") or {}).values():
        _artifact(workspace_id, upload, task_id=None, days_ago=upload.get("days_ago", 0))
    for said in spec.get("history") or ():
        MainMessage.objects.create(
            workspace_id=workspace_id,
            author=access.user,
            text=said["text"],
            language=said.get("language", "en"),
            route=said.get("route", Route.FOLLOW_UP),
            task_id=ids.get(said.get("task")),
        )
    return ids


# --- running the cases ------------------------------------------------------------------------------------


@dataclass
class Outcome:
    case: Case
    route: str
    task: str | None
    refusal: str
    candidates: list[str]
    router_model: str
    ms: float
    correct: bool = False
    why: str = ""


@dataclass
class Evaluation:
    router: str
    outcomes: list[Outcome] = field(default_factory=list)

    def accuracy(self, outcomes: list[Outcome] | None = None) -> float:
        chosen = self.outcomes if outcomes is None else outcomes
        return sum(o.correct for o in chosen) / len(chosen) if chosen else 1.0

    def by_route(self) -> dict[str, list[Outcome]]:
        return {route: [o for o in self.outcomes if o.case.route == route] for route in ROUTES}

    def split(self, held_out: bool) -> list[Outcome]:
        return [o for o in self.outcomes if o.case.held_out == held_out]


def _judge(outcome: Outcome, ids: dict[str, int]) -> None:
    case = outcome.case
    wrong = []
    if outcome.route != case.route:
        wrong.append(f"routed {outcome.route}")
    elif case.route == Route.FOLLOW_UP and outcome.task != case.task:
        wrong.append(f"reached {outcome.task or 'no task'}")
    elif case.route == Route.CLARIFY and not set(case.candidates) <= set(outcome.candidates):
        wrong.append(f"offered {', '.join(outcome.candidates) or 'no task'}")
    elif case.route in (Route.NEW_TASK, Route.LIGHTWEIGHT) and not case.refusal and outcome.task in ids:
        wrong.append(f"no new task ({outcome.task})")
    elif case.route == Route.ANSWER and outcome.task is not None:
        wrong.append(f"touched {outcome.task}")
    if outcome.refusal != case.refusal:
        wrong.append(f"refusal {outcome.refusal or 'none'}")
    outcome.correct = not wrong
    outcome.why = "; ".join(wrong)


def _route_one(access: Access, case: Case, ids: dict[str, int]) -> Outcome:
    keys = {task_id: key for key, task_id in ids.items()}
    started = time.perf_counter()
    message = main_message_post(access=access, text=case.text)
    ms = (time.perf_counter() - started) * 1000
    offered = []
    if message.card is not None:
        offered = [keys.get(t, f"#{t}") for t in (message.card.payload or {}).get("candidates", [])]
    task = keys.get(message.task_id, f"#{message.task_id}") if message.task_id else None
    outcome = Outcome(case, message.route, task, message.refusal, offered, message.router_model, ms)
    _judge(outcome, ids)
    return outcome


class _Rollback(Exception):
    pass


def evaluate(
    *, states: dict[str, dict], cases: list[Case], profile: ModelProfile | None = None, label: str = ""
) -> Evaluation:
    """Route every case through Main in its state, each state in a transaction that is rolled back."""
    evaluation = Evaluation(router=label or (f"{profile.provider}/{profile.model}" if profile else "scripted"))
    by_state: dict[str, list[Case]] = {}
    for case in cases:
        by_state.setdefault(case.state, []).append(case)
    for name, state_cases in by_state.items():
        try:
            with transaction.atomic():
                user = get_user_model().objects.create_user(username=f"eval-routing-{uuid.uuid4().hex[:12]}")
                workspace = workspace_create(user=user, name=f"Routing evaluation: {name}")
                access = workspace_access(principal=user, workspace_id=workspace.pk)
                if profile is not None:
                    ModelProfile.objects.create(
                        workspace=workspace,
                        name=profile.name,
                        provider=profile.provider,
                        model=profile.model,
                        base_url=profile.base_url,
                        params=profile.params,
                        secret_id=profile.secret_id,
                        context_tokens=profile.context_tokens,
                        is_default=True,
                    )
                ids = state_build(spec=states[name], access=access)
                for case in state_cases:
                    with transaction.atomic():
                        evaluation.outcomes.append(_route_one(access, case, ids))
                        transaction.set_rollback(True)
                raise _Rollback
        except _Rollback:
            pass
    return evaluation


# --- fitting the Router's candidate model on the train split ---------------------------------------------


def target_examples(*, states: dict[str, dict], cases: list[Case]) -> list[Example]:
    """The train split's follow-ups and clarifications as the candidate model's examples: each message with the
    index Main would give the Router in its state (built and rolled back as `evaluate` does), and the task it
    means (none for a clarification: no candidate should be followed). Held-out cases are never read."""
    chosen = [c for c in cases if not c.held_out and c.route in (Route.FOLLOW_UP, Route.CLARIFY)]
    examples: list[Example] = []
    by_state: dict[str, list[Case]] = {}
    for case in chosen:
        by_state.setdefault(case.state, []).append(case)
    for name, state_cases in by_state.items():
        try:
            with transaction.atomic():
                user = get_user_model().objects.create_user(username=f"fit-routing-{uuid.uuid4().hex[:12]}")
                workspace = workspace_create(user=user, name=f"Routing fit: {name}")
                access = workspace_access(principal=user, workspace_id=workspace.pk)
                ids = state_build(spec=states[name], access=access)
                recent = main_recent_messages(workspace.pk)
                for case in state_cases:
                    index = task_index_get(workspace_id=workspace.pk, text=case.text).as_prompt()
                    candidates = candidates_from_index(index, recent)
                    if not candidates:
                        continue
                    meant = ids[case.task] if case.route == Route.FOLLOW_UP else None
                    examples.append(Example(case.text, tuple(candidates), meant))
                    # The same message once the Router has opened the candidates (when it would have asked).
                    opened = {c.id: task_details_get(workspace_id=workspace.pk, task_id=c.id) for c in candidates}
                    opened = {task_id: details for task_id, details in opened.items() if details}
                    if len(candidates) > 1:
                        with_details = candidates_from_index(index, recent, opened)
                        examples.append(Example(case.text, tuple(with_details), meant))
                raise _Rollback
        except _Rollback:
            pass
    return examples


# --- the report -------------------------------------------------------------------------------------------


def _pct(value: float) -> str:
    return f"{100 * value:5.1f} %"


def report(evaluation: Evaluation, *, show_held_out: bool = False, failures: bool = True) -> str:
    outcomes = evaluation.outcomes
    languages = Counter(o.case.language for o in outcomes)
    models = Counter(o.router_model or "(no answer: fell back to asking)" for o in outcomes)
    lines = [
        f"Routing evaluation — {evaluation.router} Router (answers from "
        f"{', '.join(f'{m} ×{n}' for m, n in models.most_common())})",
        f"{len(outcomes)} cases ({', '.join(f'{n} {lang}' for lang, n in sorted(languages.items()))}) over "
        f"{len({o.case.state for o in outcomes})} workspace states",
        "",
        f"{'expected route':<16}{'cases':>7}{'correct':>9}{'accuracy':>11}",
    ]
    for route, chosen in evaluation.by_route().items():
        if chosen:
            correct = sum(o.correct for o in chosen)
            lines.append(f"{route:<16}{len(chosen):>7}{correct:>9}{_pct(correct / len(chosen)):>11}")
    refused = [o for o in outcomes if o.case.refusal]
    if refused:
        correct = sum(o.correct for o in refused)
        lines.append(f"{'(of which refused)':<16}{len(refused):>7}{correct:>9}{_pct(correct / len(refused)):>11}")
    correct = sum(o.correct for o in outcomes)
    lines.append(f"{'overall':<16}{len(outcomes):>7}{correct:>9}{_pct(evaluation.accuracy()):>11}")
    for name, held in (("tuning split", False), ("held-out split", True)):
        chosen = evaluation.split(held)
        lines.append(
            f"{name:<16}{len(chosen):>7}{sum(o.correct for o in chosen):>9}{_pct(evaluation.accuracy(chosen)):>11}"
        )
    for language in sorted(languages):
        chosen = [o for o in outcomes if o.case.language == language]
        lines.append(
            f"{'language ' + language:<16}{len(chosen):>7}{sum(o.correct for o in chosen):>9}"
            f"{_pct(evaluation.accuracy(chosen)):>11}"
        )
    for name, held in (("tuning", False), ("held-out", True)):
        for language in sorted(languages):
            chosen = [o for o in evaluation.split(held) if o.case.language == language]
            if chosen:
                lines.append(
                    f"{name + ' ' + language:<16}{len(chosen):>7}{sum(o.correct for o in chosen):>9}"
                    f"{_pct(evaluation.accuracy(chosen)):>11}"
                )
    wrong_target = sum(1 for o in outcomes if o.route == o.case.route and not o.correct)
    timings = sorted(o.ms for o in outcomes)
    lines += [
        "",
        f"Right route but wrong task, candidates or refusal: {wrong_target}",
        f"Per message (index, Router, validation, writes): p50 {statistics.median(timings):.0f} ms, "
        f"p95 {timings[int(0.95 * (len(timings) - 1))]:.0f} ms",
        "",
        "Confusion (rows: expected route, columns: route taken)",
        f"{'':<14}" + "".join(f"{route:>13}" for route in ROUTES),
    ]
    for expected in ROUTES:
        row = Counter(o.route for o in outcomes if o.case.route == expected)
        if sum(row.values()):
            lines.append(f"{expected:<14}" + "".join(f"{row.get(route, 0):>13}" for route in ROUTES))
    if failures:
        shown = [o for o in outcomes if not o.correct and (show_held_out or not o.case.held_out)]
        hidden = sum(1 for o in outcomes if not o.correct and o.case.held_out and not show_held_out)
        lines += ["", f"Failures{' (tuning split; --show-held-out lists the rest)' if hidden else ''}: {len(shown)}"]
        for o in shown:
            expected = o.case.route + (f" → {o.case.task}" if o.case.task else "")
            expected += f" ({o.case.refusal})" if o.case.refusal else ""
            lines.append(f"  [{o.case.state}] {o.case.text!r}: expected {expected}; {o.why}")
        if hidden:
            lines.append(f"  … and {hidden} held-out failure(s), not listed")
    return "\n".join(lines)


# --- the command ------------------------------------------------------------------------------------------


def _fraction(value: str) -> float:
    number = float(value)
    number = number / 100 if number > 1 else number
    if not 0 <= number <= 1:
        raise ValueError(value)
    return number


class Command(BaseCommand):
    help = (
        "Route the routing evaluation set through Main and print accuracy per route, overall, on the held-out "
        "split and the confusion table, for the scripted Router and, with --profile (or "
        f"${PROFILE_ENV}), a model Router. Exit 0 unless the scripted Router misses --min-accuracy."
    )

    def add_arguments(self, parser):
        parser.add_argument("--cases", default=str(DEFAULT_CASES), help="The data set (YAML).")
        parser.add_argument("--profile", default=os.environ.get(PROFILE_ENV, ""), help="A model profile's name.")
        parser.add_argument("--profile-workspace", type=int, help="The workspace of --profile, if ambiguous.")
        parser.add_argument("--split", choices=("all", "tuning", "held-out"), default="all")
        parser.add_argument("--state", action="append", default=[], help="Only these states (repeatable).")
        parser.add_argument(
            "--min-accuracy",
            type=_fraction,
            help="Exit 1 if the scripted Router's overall accuracy is lower (0-1 or %%).",
        )
        parser.add_argument("--show-held-out", action="store_true", help="List held-out failures too.")
        parser.add_argument(
            "--fit-target",
            action="store_true",
            help="First fit the Router's candidate model and its threshold on the train split (never the held-out "
            "one) and save them to lomote/understanding/route_target.yaml.",
        )
        parser.add_argument("--no-failures", action="store_true", help="Do not list failures.")

    def handle(self, *args, **options):
        try:
            states, cases = cases_load(Path(options["cases"]))
        except DataSetError as exc:
            raise CommandError(str(exc)) from None
        if options["fit_target"]:
            examples = target_examples(states=states, cases=cases)
            weights = target_fit(examples)
            weights_save(weights, examples=len(examples))
            fitted = f"candidate model fitted on {len(examples)} train messages, threshold {weights.threshold}"
            self.stdout.write(fitted)
        if options["split"] != "all":
            cases = [c for c in cases if c.held_out == (options["split"] == "held-out")]
        if options["state"]:
            unknown = set(options["state"]) - set(states)
            if unknown:
                raise CommandError(f"unknown state(s): {', '.join(sorted(unknown))}")
            cases = [c for c in cases if c.state in options["state"]]
        if not cases:
            raise CommandError("no case to run")
        routers: list[tuple[str, ModelProfile | None]] = [("scripted", None)]
        if options["profile"]:
            profile = self._profile(options["profile"], options["profile_workspace"])
            routers.append((f"model ({profile.name}: {profile.provider}/{profile.model})", profile))
        scripted_accuracy = 1.0
        for label, profile in routers:
            evaluation = evaluate(states=states, cases=cases, profile=profile, label=label)
            self.stdout.write(
                report(evaluation, show_held_out=options["show_held_out"], failures=not options["no_failures"])
            )
            self.stdout.write("")
            if profile is None:
                scripted_accuracy = evaluation.accuracy()
        # The target is the embedded default's; a model Router is reported, not judged (its figures are the model's).
        if options["min_accuracy"] is not None and scripted_accuracy < options["min_accuracy"]:
            raise CommandError(
                f"the scripted Router ({SCRIPTED_ROUTER_MODEL}) is below --min-accuracy "
                f"{_pct(options['min_accuracy']).strip()}: {_pct(scripted_accuracy).strip()}",
                returncode=1,
            )

    def _profile(self, name: str, workspace_id: int | None) -> ModelProfile:
        profiles = ModelProfile.objects.filter(name=name)
        if workspace_id is not None:
            profiles = profiles.filter(workspace_id=workspace_id)
        found = list(profiles[:2])
        if not found:
            raise CommandError(f"no model profile named {name!r}")
        if len(found) > 1:
            raise CommandError(f"several workspaces have a profile named {name!r}: add --profile-workspace")
        return found[0]


def outcomes_as_rows(evaluation: Evaluation) -> list[dict[str, Any]]:
    """The outcomes as plain rows (for tests and tools)."""
    return [
        {
            "state": o.case.state,
            "text": o.case.text,
            "expected": o.case.route,
            "route": o.route,
            "task": o.task,
            "refusal": o.refusal,
            "correct": o.correct,
            "held_out": o.case.held_out,
        }
        for o in evaluation.outcomes
    ]
