"""Runs one scenario: a workspace of its own, the real runtime in real background processes, and a scripted
person who acts through the same services the REST API and the studio call.

The person never reaches into the runtime: they write, answer cards, edit artifacts and wait. What happened is
then measured from what was stored (simulation/metrics.py). In the chaos variant a worker is SIGKILLed right
after the step the scenario names (`kill_at`, else the middle step), while the work that step started runs.
"""

import re
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from io import StringIO
from typing import Any

from django.contrib.auth import get_user_model
from django.core.files.base import ContentFile
from django.core.management import call_command
from django.db import close_old_connections, transaction
from django.utils import timezone

from agents.main.messages import main_card_act, main_message_post
from agents.models import (
    Card,
    CardKind,
    CardStatus,
    ChecklistItem,
    InboxMessage,
    InboxStatus,
    Route,
    Step,
    Task,
    TaskStatus,
    Turn,
    TurnStatus,
)
from agents.runtime.resumption import task_resume_checked
from agents.services.flow_runs import flow_run_request, flow_run_rerun_stale_request
from agents.services.inbox import message_post
from agents.services.memory_forget import memory_forget_ask
from agents.services.task_settings import task_settings_update
from agents.services.tasks import task_pause
from billing.services.policy import spend_policy_update
from billing.services.wallets import wallet_reconcile, wallet_topup
from memory.models import MemoryVersion, VersionStatus
from memory.services.evidence import evidence_pending
from memory.services.memories import memory_correct, memory_state
from simulation import spec
from simulation.clock import workspace_age
from simulation.metrics import Intents, Metrics, RevisionIntent, RouteIntent, collaboration_metrics
from simulation.processes import Background
from workspace.flows.authoring import flow_create, flow_edit
from workspace.models import Artifact, ArtifactKind, FlowRun, FlowRunStatus, GenerationJob, NodeStatus
from workspace.models import JobStatus as Job
from workspace.providers.procedural import render_image
from workspace.selectors import workspace_access
from workspace.services.artifacts import artifact_create
from workspace.services.documents import document_edit
from workspace.services.uploads import artifact_upload, artifact_version_upload
from workspace.services.workspaces import workspace_create

ACTIVE_JOBS = [Job.SUBMITTING, Job.SUBMITTED, Job.QUEUED, Job.RUNNING]
POLL = 0.2
QUIET_POLLS = 3  # consecutive quiet looks before the run counts as settled (a turn may be about to start)
REFERENCE = re.compile(r"^(?P<task>[\w-]+)/(?P<kind>[a-z0-9]+)/(?P<n>\d+)$")


class ScenarioFailed(Exception):
    """The scenario could not go on (a timeout, an action refused): its message says where and why."""


@dataclass
class Result:
    name: str
    variant: str  # "clean" or "kill"
    seconds: float = 0.0
    metrics: Metrics = field(default_factory=Metrics)
    checks: int = 0
    failed_checks: list[str] = field(default_factory=list)
    kills: list[str] = field(default_factory=list)
    error: str = ""
    reconciled: bool = True

    @property
    def passed(self) -> bool:
        m = self.metrics
        return (
            not self.error
            and not self.failed_checks
            and self.reconciled
            and m.stalls == 0
            and m.duplicate_generations == 0
            and m.unnecessary_confirmations == 0
            and m.follow_ups_right == m.follow_ups
            and m.split_copies == 0
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "variant": self.variant,
            "passed": self.passed,
            "seconds": round(self.seconds, 1),
            "checks": self.checks,
            "failed_checks": self.failed_checks,
            "kills": self.kills,
            "error": self.error,
            "ledger_reconciles": self.reconciled,
            **self.metrics.as_dict(),
        }


class Run:
    def __init__(self, scenario: spec.Scenario, *, variant: str, workers: int, log):
        self.scenario, self.variant, self.log = scenario, variant, log
        self.background = Background(workers=workers)
        self.tasks: dict[str, int] = {}
        self.flows: dict[str, int] = {}
        self.memories: dict[str, int] = {}
        self.artifacts: dict[str, int] = {}  # named by an upload
        self.intents = Intents()
        self.hidden: list[tuple[frozenset[int], datetime, str]] = []  # memory versions no later call may see
        self.result = Result(name=scenario.name, variant=variant)
        self.started_at: datetime | None = None

    # --- the run ------------------------------------------------------------------------------------------

    def execute(self) -> Result:
        began = time.monotonic()
        self.access = self._set_up()
        self.background.start()
        kill_after = self._kill_step() if self.variant == "kill" else None
        try:
            for index, step in enumerate(self.scenario.steps, start=1):
                close_old_connections()
                self.log(f"  {index:>2}. {_describe(step)}")
                self._do(step)
                if index == kill_after:
                    self._kill_mid_way()
            self._settle(spec.Settle(settle="auto"))
        except ScenarioFailed as exc:
            self.result.error = str(exc)
        finally:
            self.background.stop()
            close_old_connections()
        self._close_revisions()
        self.result.seconds = time.monotonic() - began
        self.result.metrics = collaboration_metrics(
            workspace_id=self.workspace_id, intents=self.intents, since=self.started_at
        )
        self._check_hidden_memories()
        self.result.reconciled = wallet_reconcile(self.workspace_id)[0]
        return self.result

    def _set_up(self):
        user, _ = get_user_model().objects.get_or_create(
            username="scenario-person", defaults={"email": "person@scenarios.invalid"}
        )
        name = f"Scenario {self.scenario.name} ({self.variant}) {timezone.now():%Y-%m-%d %H:%M:%S.%f}"
        workspace = workspace_create(user=user, name=name)
        self.workspace_id = workspace.pk
        access = workspace_access(principal=user, workspace_id=workspace.pk)
        if self.scenario.credits:
            wallet_topup(access=access, amount=self.scenario.credits, memo=f"scenario {self.scenario.name}")
        if self.scenario.policy:
            spend_policy_update(access=access, **self.scenario.policy)
        self.started_at = timezone.now()
        return access

    def _kill_step(self) -> int:
        if self.scenario.kill_at is not None:
            return self.scenario.kill_at
        work = spec.Say | spec.Answer | spec.FlowRun | spec.FlowRerun
        starts_work = [i for i, s in enumerate(self.scenario.steps, start=1) if isinstance(s, work)]
        return starts_work[len(starts_work) // 2] if starts_work else 1

    def _kill_mid_way(self) -> None:
        """SIGKILL the worker running this workspace's turn, caught within a few seconds of the step; if no turn
        runs in that time (the scripted model decides in milliseconds), a process of the cluster."""
        deadline = time.monotonic() + 3
        holder = None
        while time.monotonic() < deadline and holder is None:
            running = (
                Turn.objects.filter(task__workspace_id=self.workspace_id, status=TurnStatus.RUNNING)
                .values_list("lease_holder", flat=True)
                .first()
            )
            if running and ":" in running:
                holder = int(running.rsplit(":", 1)[1])
            else:
                time.sleep(0.002)
        killed = self.background.kill_worker(holder)
        self.result.kills.append(killed)
        self.log(f"      ✂ SIGKILL {killed}")

    # --- the person's actions -------------------------------------------------------------------------------

    def _do(self, step) -> None:
        handler = getattr(self, f"_{type(step).__name__.lower()}")
        try:
            handler(step)
        except ScenarioFailed:
            raise
        except Exception as exc:  # noqa: BLE001 - an action the product refused ends the scenario, with why
            raise ScenarioFailed(f"{_describe(step)}: {type(exc).__name__}: {exc}") from exc

    def _say(self, step: spec.Say) -> None:
        attach = self._artifact(step.attach) if step.attach else None
        message = main_message_post(access=self.access, text=step.say, artifact_id=attach)
        self.log(f"      → {message.route}, task #{message.task_id}")
        meant = self.tasks.get(step.task) if step.task else None
        if message.task_id is not None:
            self._close_revisions(message.task_id)
        if step.route == Route.FOLLOW_UP:
            if meant is None:
                raise ScenarioFailed(f"no task named {step.task!r} yet")
            self.intents.routes.append(RouteIntent(message_id=message.pk, route=step.route, task_id=meant))
        if step.route == Route.NEW_TASK and message.task_id is not None:
            earlier = [name for name, task_id in self.tasks.items() if task_id == message.task_id]
            self._checked(not earlier, f"“{step.say}” meant a new task, went to task {', '.join(earlier)}")
        if step.as_:
            if message.task_id is None:
                raise ScenarioFailed(f"“{step.say}” made no task to call {step.as_!r} (routed {message.route})")
            self.tasks[step.as_] = message.task_id
            if self.scenario.autonomy:
                task_settings_update(access=self.access, task_id=message.task_id, autonomy=self.scenario.autonomy)
        if step.revises:
            task_id = meant or self.tasks[step.as_]
            artifacts = tuple(self._artifact(ref) for ref in step.revises)
            self.intents.revisions.append(RevisionIntent(task_id=task_id, artifact_ids=artifacts, at=timezone.now()))

    def _tell(self, step: spec.Tell) -> None:
        message_post(access=self.access, task_id=self._task(step.task), text=step.tell)

    def _answer(self, step: spec.Answer) -> None:
        task_id = self._task(step.task) if step.task else None
        deadline = time.monotonic() + step.wait
        while True:
            close_old_connections()
            cards = Card.objects.filter(workspace_id=self.workspace_id, status=CardStatus.OPEN, task_id=task_id)
            if step.kind:
                cards = cards.filter(kind=step.kind)
            card = cards.order_by("pk").first()
            if card is not None:
                break
            if time.monotonic() > deadline:
                raise ScenarioFailed(f"no open {step.kind or ''} card for {step.task or 'the workspace'}")
            time.sleep(POLL)
        self._act(card, step.answer, option=step.option, text=step.text)

    def _act(self, card: Card, action: str, *, option: str | None = None, text: str | None = None) -> None:
        chosen = _option(card, option) if action == "choose" else None
        main_card_act(access=self.access, card_id=card.pk, action=action, option=chosen, text=text)
        self.log(f"      ☑ {action} “{card.title}”" + (f" → option {chosen}" if chosen else ""))

    def _settle(self, step: spec.Settle) -> None:
        deadline = time.monotonic() + step.timeout
        quiet = 0
        while True:
            close_old_connections()
            if self._busy():
                quiet = 0
            else:
                quiet += 1
            if quiet >= QUIET_POLLS:
                card = self._open_card()
                if card is None or step.settle == "leave_cards":
                    return
                self._answer_as_the_person(card)
                quiet = 0
            if time.monotonic() > deadline:
                raise ScenarioFailed(f"did not settle within {step.timeout:.0f}s: {self._what_runs()}")
            time.sleep(POLL)

    def _busy(self) -> bool:
        ws = self.workspace_id
        return (
            Turn.objects.filter(task__workspace_id=ws, status__in=[TurnStatus.QUEUED, TurnStatus.RUNNING]).exists()
            or GenerationJob.objects.filter(workspace_id=ws, status__in=ACTIVE_JOBS).exists()
            # A task waiting on jobs moves on by itself once their reaction runs, even when they have all settled.
            or Task.objects.filter(workspace_id=ws, status=TaskStatus.WAITING, waiting_for__type="jobs").exists()
            or InboxMessage.objects.filter(task__workspace_id=ws, status=InboxStatus.PENDING)
            # A paused task, or one waiting on a person's card, reads its messages when the person lets it go on.
            .exclude(task__status__in=[TaskStatus.PAUSED, TaskStatus.CANCELLED, TaskStatus.WAITING])
            .exists()
            or FlowRun.objects.filter(workspace_id=ws, status=FlowRunStatus.RUNNING).exists()
            or evidence_pending().filter(workspace_id=ws).exists()
        )

    def _what_runs(self) -> str:
        ws = self.workspace_id
        turns = list(
            Turn.objects.filter(task__workspace_id=ws, status__in=[TurnStatus.QUEUED, TurnStatus.RUNNING]).values_list(
                "task_id", "status"
            )
        )
        jobs = list(GenerationJob.objects.filter(workspace_id=ws, status__in=ACTIVE_JOBS).values_list("pk", "status"))
        inbox = list(
            InboxMessage.objects.filter(task__workspace_id=ws, status=InboxStatus.PENDING).values_list(
                "task_id", "task__status"
            )
        )
        evidence = evidence_pending().filter(workspace_id=ws).count()
        return f"turns {turns or 'none'}, jobs {jobs or 'none'}, unread messages {inbox or 'none'}, evidence {evidence}"

    def _waiting_cards(self):
        """The open cards that wait on the person: a result card only shows what a quick request made."""
        return Card.objects.filter(workspace_id=self.workspace_id, status=CardStatus.OPEN).exclude(kind=CardKind.RESULT)

    def _open_card(self) -> Card | None:
        return self._waiting_cards().order_by("pk").first()

    def _answer_as_the_person(self, card: Card) -> None:
        person = self.scenario.person
        if card.kind == "quote":
            self._act(card, person.quotes)
        elif card.options:
            self._act(card, "choose", option=person.choices)
        else:
            self._act(card, person.confirmations)

    def _edit(self, step: spec.Edit) -> None:
        artifact = Artifact.objects.get(pk=self._artifact(step.edit))
        if step.replace is not None:
            document_edit(
                workspace_id=self.workspace_id,
                artifact_id=artifact.pk,
                base_version=artifact.current_version,
                edits=[{"old": old, "new": new} for old, new in step.replace.items()],
                author_user=self.access.user,
            )
            return
        image = render_image(step.prompt)
        with transaction.atomic():
            artifact_version_upload(
                workspace_id=self.workspace_id,
                artifact_id=artifact.pk,
                base_version=artifact.current_version,
                file=ContentFile(image.content, "edited.png"),
                author_user=self.access.user,
            )

    def _write(self, step: spec.Write) -> None:
        artifact = artifact_create(
            workspace_id=self.workspace_id,
            kind=ArtifactKind.DOCUMENT,
            title=step.write,
            content=step.text,
            author_user=self.access.user,
        )
        self.artifacts[step.as_] = artifact.pk

    def _flowcreate(self, step: spec.FlowCreate) -> None:
        nodes = {
            node_id: {**node, "params": self._with_artifact_ids(node.get("params") or {})}
            for node_id, node in step.graph.get("nodes", {}).items()
        }
        graph = {**step.graph, "nodes": nodes}
        artifact = flow_create(
            workspace_id=self.workspace_id, title=step.title, graph=graph, author_user=self.access.user
        )
        self.flows[step.flow] = self.artifacts[step.flow] = artifact.pk

    def _with_artifact_ids(self, params: dict[str, Any]) -> dict[str, Any]:
        """A param "@name" is the id of the scenario's artifact of that name (a document the person wrote)."""
        return {
            key: self._artifact(value[1:]) if isinstance(value, str) and value.startswith("@") else value
            for key, value in params.items()
        }

    def _last_run(self, flow: str) -> FlowRun | None:
        runs = FlowRun.objects.filter(workspace_id=self.workspace_id, artifact_id=self.flows[flow])
        return runs.order_by("pk").last()

    def _flowrerun(self, step: spec.FlowRerun) -> None:
        run = self._last_run(step.flow_rerun)
        if run is None:
            raise ScenarioFailed(f"{step.flow_rerun} has no run to re-run")
        flow_run_rerun_stale_request(access=self.access, run_id=run.pk)

    def _flowedit(self, step: spec.FlowEdit) -> None:
        artifact = Artifact.objects.get(pk=self.flows[step.flow_edit])
        author = {"author_user": self.access.user} if step.by == "person" else {"author_task_id": self._task(step.by)}
        base = 1 if step.base == "first" else artifact.current_version
        try:
            flow_edit(
                workspace_id=self.workspace_id,
                artifact_id=artifact.pk,
                base_version=base,
                node_edits={step.node: {"params": step.params}},
                **author,
            )
            outcome = "applied"
        except Exception as exc:  # noqa: BLE001 - the outcome is compared with what the scenario expects
            outcome = getattr(exc, "code", type(exc).__name__)
        self._checked(outcome == step.expect, f"flow edit of {step.node} by {step.by}: {outcome}, {step.expect} meant")

    def _flowrun(self, step: spec.FlowRun) -> None:
        flow_run_request(
            workspace_id=self.workspace_id,
            artifact_id=self.flows[step.flow_run],
            inputs={"text": step.input} if step.input else {},
            started_by=self.access.user,
        )

    def _remember(self, step: spec.Remember) -> None:
        memory = memory_state(access=self.access, content=step.remember, kind=step.kind)
        self.memories[step.as_] = memory.pk

    def _correct(self, step: spec.Correct) -> None:
        memory_correct(access=self.access, memory_id=self.memories[step.correct], content=step.content)

    def _forget(self, step: spec.Forget) -> None:
        memory_forget_ask(access=self.access, memory_id=self.memories[step.forget])

    def _travel(self, step: spec.Travel) -> None:
        self._settle(spec.Settle(settle="leave_cards"))
        moved = workspace_age(workspace_id=self.workspace_id, days=step.travel)
        if self.started_at is not None:
            self.started_at -= timedelta(days=step.travel)
        self.intents.revisions = [
            RevisionIntent(
                task_id=r.task_id,
                artifact_ids=r.artifact_ids,
                at=r.at - timedelta(days=step.travel),
                until=r.until - timedelta(days=step.travel) if r.until else None,
            )
            for r in self.intents.revisions
        ]
        self.hidden = [(ids, at - timedelta(days=step.travel), text) for ids, at, text in self.hidden]
        self.log(f"      ⏱ {step.travel:g} days passed ({moved} stored times moved back)")

    def _configure(self, step: spec.Configure) -> None:
        if step.configure == "policy":
            spend_policy_update(access=self.access, **step.policy)
            return
        call_command(  # the operator's command: the only way a profile is set today
            "model_profile",
            workspace=self.workspace_id,
            name=step.profile,
            provider=step.provider,
            model=step.model,
            default=True,
            stdout=StringIO(),  # the command's own line is not part of the scenario's log
        )

    def _pause(self, step: spec.Pause) -> None:
        task_pause(access=self.access, task_id=self._task(step.pause))

    def _resume(self, step: spec.Resume) -> None:
        _, verdict = task_resume_checked(access=self.access, task_id=self._task(step.resume))
        self.log(f"      ↻ resume verdict: {(verdict or {}).get('verdict', 'none')}")

    def _upload(self, step: spec.Upload) -> None:
        image = render_image(step.prompt)
        with transaction.atomic():
            artifact = artifact_upload(
                workspace_id=self.workspace_id,
                file=ContentFile(image.content, f"{step.as_}.png"),
                title=step.upload,
                author_user=self.access.user,
            )
            if step.days_ago:
                then = timezone.now() - timedelta(days=step.days_ago)
                Artifact.objects.filter(pk=artifact.pk).update(created_at=then, updated_at=then)
        self.artifacts[step.as_] = artifact.pk

    def _kill(self, step: spec.Kill) -> None:
        self._kill_mid_way()

    def _check(self, step: spec.Check) -> None:
        self._settle(spec.Settle(settle="leave_cards"))
        task_id = self._task(step.check) if step.check else None
        where = f"task {step.check}" if step.check else "the workspace"
        if step.status is not None:
            status = Task.objects.get(pk=task_id).status
            self._checked(status == step.status, f"{where} is {status}, {step.status} meant")
        for kind, count in (step.artifacts or {}).items():
            artifacts = Artifact.objects.filter(workspace_id=self.workspace_id, kind=kind, deleted_at__isnull=True)
            if task_id is not None:
                artifacts = artifacts.filter(created_by_task_id=task_id)
            found = artifacts.count()
            self._checked(found == count, f"{where} has {found} {kind} artifact(s), {count} meant")
        for ref, count in (step.versions or {}).items():
            found = Artifact.objects.get(pk=self._artifact(ref)).versions.count()
            self._checked(found == count, f"{ref} has {found} version(s), {count} meant")
        for flow, status in (step.flow_runs or {}).items():
            found = getattr(self._last_run(flow), "status", None)
            self._checked(found == status, f"the last run of {flow} is {found}, {status} meant")
        for flow, nodes in (step.stale or {}).items():
            run = self._last_run(flow)
            found = sorted(run.nodes.filter(status=NodeStatus.STALE).values_list("node_id", flat=True)) if run else []
            self._checked(found == sorted(nodes), f"stale nodes of {flow}: {found or 'none'}, {sorted(nodes)} meant")
        if step.open_cards is not None:
            found = self._waiting_cards().count()
            self._checked(found == step.open_cards, f"{found} open card(s), {step.open_cards} meant")
        for text, held in (step.memory or {}).items():
            current = MemoryVersion.objects.filter(
                workspace_id=self.workspace_id, status=VersionStatus.ACTIVE, content__icontains=text
            ).exists()
            self._checked(current == held, f"a current memory {'holds' if current else 'lacks'} “{text}”")
        if step.not_shown_after:
            versions = frozenset(
                MemoryVersion.objects.filter(
                    workspace_id=self.workspace_id, content__icontains=step.not_shown_after
                ).values_list("pk", flat=True)
            )
            self.hidden.append((versions, timezone.now(), step.not_shown_after))

    def _checked(self, ok: bool, what: str) -> None:
        self.result.checks += 1
        if not ok:
            self.result.failed_checks.append(what)
            self.log(f"      ✗ {what}")

    def _check_hidden_memories(self) -> None:
        for versions, at, text in self.hidden:
            shown = [
                step.pk
                for step in Step.objects.filter(turn__task__workspace_id=self.workspace_id, created_at__gte=at)
                if versions & set((step.memory or {}).get("versions") or [])
            ]
            self._checked(not shown, f"model calls {shown} were shown a memory holding “{text}” after it changed")

    def _close_revisions(self, task_id: int | None = None) -> None:
        """A revision's window ends when the person next writes to that task (or at the end of the scenario)."""
        now = timezone.now()
        self.intents.revisions = [
            r
            if r.until or (task_id is not None and r.task_id != task_id)
            else RevisionIntent(task_id=r.task_id, artifact_ids=r.artifact_ids, at=r.at, until=now)
            for r in self.intents.revisions
        ]

    # --- names ----------------------------------------------------------------------------------------------

    def _task(self, name: str) -> int:
        if name not in self.tasks:
            raise ScenarioFailed(f"no task named {name!r} yet")
        return self.tasks[name]

    def _artifact(self, ref: str) -> int:
        if ref in self.artifacts:
            return self.artifacts[ref]
        flow, _, node_id = ref.partition(".")
        if node_id and flow in self.flows:  # <flow>.<node>: what that node of the Flow's last run made
            run = self._last_run(flow)
            output = (run.nodes.filter(node_id=node_id).values_list("output", flat=True).first() if run else None) or {}
            if not output.get("artifact"):
                raise ScenarioFailed(f"{ref!r}: the last run of {flow} has no artifact from node {node_id}")
            return output["artifact"]
        match = REFERENCE.match(ref)
        if match is None:
            raise ScenarioFailed(f"{ref!r} is neither an uploaded artifact's name nor <task>/<kind>/<n>")
        task_id, kind, n = self._task(match["task"]), match["kind"], int(match["n"])
        made = Artifact.objects.filter(workspace_id=self.workspace_id, created_by_task_id=task_id, kind=kind)
        made = list(made.order_by("pk").values_list("pk", flat=True))
        # In the order of the checklist items that produced them ("poster 3" is item 3's, whichever job ended
        # first), then any other the task made.
        found: list[int] = []
        for item in ChecklistItem.objects.filter(task_id=task_id).order_by("position"):
            for entry in item.artifacts:
                if entry.get("artifact") in made and entry["artifact"] not in found:
                    found.append(entry["artifact"])
        found += [pk for pk in made if pk not in found]
        if not 1 <= n <= len(found):
            raise ScenarioFailed(f"{ref}: the task has {len(found)} {kind} artifact(s)")
        return found[n - 1]


def _option(card: Card, wanted: str | None) -> str:
    options = card.options or []
    if not options:
        raise ScenarioFailed(f"card “{card.title}” has no options to choose from")
    wanted = (wanted or "1").strip()
    for option in options:
        if option["label"].casefold() == wanted.casefold() or option["id"] == wanted:
            return option["id"]
    if wanted.isdigit() and 1 <= int(wanted) <= len(options):
        return options[int(wanted) - 1]["id"]
    raise ScenarioFailed(f"card “{card.title}” has no option {wanted!r}: {[o['label'] for o in options]}")


def _describe(step) -> str:
    action = next(iter(type(step).model_fields))  # the action key is each step model's first field
    data = {action: getattr(step, action), **step.model_dump(by_alias=True, exclude_defaults=True)}
    return ", ".join(f"{key}: {value}" for key, value in data.items())


def scenario_run(scenario: spec.Scenario, *, variant: str = "clean", workers: int = 2, log=print) -> Result:
    return Run(scenario, variant=variant, workers=workers, log=log).execute()
