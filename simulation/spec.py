"""A scenario file (scenarios/*.yaml): who the person is, what they have, and what they do, step by step.

Each step is a mapping with exactly one action key and that action's fields. Names the scenario gives (`as:`)
stand for tasks, artifacts, Flows and memories made along the way; an artifact is also named by
`<task>/<kind>/<n>` — the task's n-th artifact of that kind, in the order they were made — or by the name an
`upload` gave it.

    say       the person writes to Main; `route` / `task` say what they meant (the ground truth the routing
              metric is measured against), `as` names the task it makes, `revises` the artifacts it asks to change
    tell      the person writes inside a task (an explicit target)
    answer    the person acts on the task's open card: approve, confirm, decline, adjust (text) or choose (option)
    settle    wait until nothing runs; open cards are answered as the scenario's `person` policy says meanwhile
    edit      the person edits a document (replace fragments) or uploads a new version of an image
    flow      the person creates a Flow; `flow_edit` edits one (by the person, or by a task's agent);
              `flow_run` runs it
    remember / correct / forget    the person states, corrects or forgets a memory
    travel    time passes: every stored time of the workspace moves back by `days`
    configure the spend policy or the workspace's default model changes
    pause / resume   the person pauses a task, or resumes it (the resume check runs first)
    upload    the person uploads a picture of their own (`days_ago` dates it back)
    kill      a worker process is SIGKILLed in the middle of whatever runs (the runner restarts the cluster)
    check     what must be true now (task status, artifact and version counts, open cards, memories)
"""

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

SCENARIOS_DIR = Path(__file__).resolve().parent.parent / "scenarios"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Say(_Strict):
    say: str = Field(min_length=1, max_length=4000)
    route: Literal["new_task", "follow_up", "answer", "lightweight"] | None = None
    task: str | None = None  # the task meant, for a follow-up
    as_: str | None = Field(default=None, alias="as")
    revises: list[str] = Field(default_factory=list)
    attach: str | None = None  # an artifact the message is about (the studio sends the open artifact)

    @model_validator(mode="after")
    def _follow_up_names_its_task(self):
        if self.route == "follow_up" and not self.task:
            raise ValueError("a follow_up names the task it is meant for (`task:`)")
        if self.revises and not (self.task or self.as_):
            raise ValueError("`revises` needs the task whose artifacts are revised (`task:`)")
        return self


class Tell(_Strict):
    tell: str = Field(min_length=1, max_length=4000)
    task: str


class Answer(_Strict):
    answer: Literal["approve", "confirm", "decline", "adjust", "choose"]
    task: str | None = None  # None: a card of no task (a Flow run, a forget, a Router question)
    kind: Literal["quote", "confirm", "choice", "clarify"] | None = None
    option: str | None = None  # a choice card's option, by its label (or its position, "1", "2"…)
    text: str | None = None  # what to change, for adjust
    wait: float = Field(default=60, gt=0, le=600)


class Settle(_Strict):
    settle: Literal["auto", "leave_cards"] = "auto"
    timeout: float = Field(default=120, gt=0, le=1200)


class Edit(_Strict):
    edit: str  # an artifact reference
    replace: dict[str, str] | None = None  # document: fragment → new text
    prompt: str | None = None  # image: what the person's own new version shows

    @model_validator(mode="after")
    def _one_kind_of_edit(self):
        if (self.replace is None) == (self.prompt is None):
            raise ValueError("an edit gives either `replace` (a document) or `prompt` (an image's new version)")
        return self


class Write(_Strict):
    write: str = Field(min_length=1, max_length=300, description="the document's title")
    text: str = Field(min_length=1, max_length=20_000)
    as_: str = Field(alias="as")


class FlowCreate(_Strict):
    flow: str  # its name in the scenario (an artifact name too, for checks)
    title: str
    graph: dict[str, Any]  # a node param "@name" stands for the scenario artifact of that name (its id)


class FlowRerun(_Strict):
    flow_rerun: str  # re-run the stale nodes of this Flow's last run, as the person


class FlowEdit(_Strict):
    flow_edit: str
    node: str
    params: dict[str, Any]
    by: str = "person"  # "person", or a task name: that task's agent makes the edit
    base: Literal["latest", "first"] = "latest"  # the version the edit is made on
    expect: Literal["applied", "node_conflict"] = "applied"


class FlowRun(_Strict):
    flow_run: str
    input: str = ""


class Remember(_Strict):
    remember: str = Field(min_length=1, max_length=2000)
    kind: Literal["fact", "preference", "instruction"] = "fact"
    as_: str = Field(alias="as")


class Correct(_Strict):
    correct: str
    content: str = Field(min_length=1, max_length=2000)


class Forget(_Strict):
    forget: str


class Travel(_Strict):
    travel: float = Field(gt=0, le=365, description="days")


class Configure(_Strict):
    """A change to what a task runs on: the spend policy, or the workspace's default model profile."""

    configure: Literal["policy", "model"]
    policy: dict[str, int] | None = None  # no_confirm_threshold, daily_no_confirm_cap
    profile: str | None = None  # the new default profile's name …
    provider: str = "scripted"  # … its provider
    model: str | None = None  # … and model

    @model_validator(mode="after")
    def _says_what_changes(self):
        if self.configure == "policy" and not self.policy:
            raise ValueError("`configure: policy` needs `policy: {no_confirm_threshold: …}`")
        if self.configure == "model" and not (self.profile and self.model):
            raise ValueError("`configure: model` needs `profile:` and `model:`")
        return self


class Pause(_Strict):
    pause: str  # a task name


class Resume(_Strict):
    resume: str  # a task name: resumed as the REST API and the studio resume it (the resume check first)


class Upload(_Strict):
    upload: str = Field(min_length=1, max_length=300, description="the file's title")
    prompt: str = Field(min_length=1, max_length=500, description="what the picture shows")
    as_: str = Field(alias="as")
    days_ago: float = Field(default=0, ge=0, le=365)


class Kill(_Strict):
    kill: Literal["worker"]


class Check(_Strict):
    check: str | None = None  # a task name (optional)
    status: str | None = None
    artifacts: dict[str, int] | None = None  # kind → how many the task (or the workspace) has
    versions: dict[str, int] | None = None  # artifact reference → how many versions it has
    open_cards: int | None = None
    flow_runs: dict[str, str] | None = None  # a Flow's name → the status its last run must have
    stale: dict[str, list[str]] | None = None  # a Flow's name → exactly the nodes of its last run that are stale
    memory: dict[str, bool] | None = None  # text → whether a current memory holds it
    not_shown_after: str | None = None  # no model call from now on may be shown a memory with this text


ACTIONS = {
    "say": Say,
    "tell": Tell,
    "answer": Answer,
    "settle": Settle,
    "edit": Edit,
    "write": Write,
    "flow": FlowCreate,
    "flow_edit": FlowEdit,
    "flow_run": FlowRun,
    "flow_rerun": FlowRerun,
    "remember": Remember,
    "correct": Correct,
    "forget": Forget,
    "travel": Travel,
    "configure": Configure,
    "pause": Pause,
    "resume": Resume,
    "upload": Upload,
    "kill": Kill,
    "check": Check,
}


class Person(_Strict):
    """How the scripted person answers the cards that come up while they wait (`settle`)."""

    quotes: Literal["approve", "decline"] = "approve"
    confirmations: Literal["confirm", "decline"] = "confirm"
    choices: str = "1"  # the option chosen when nothing else was said: a label or a position


class Scenario(_Strict):
    name: str = Field(pattern=r"^[a-z0-9_]{1,64}$")
    title: str
    credits: int = Field(default=2000, ge=0, le=10_000_000)
    policy: dict[str, int] = Field(default_factory=dict)  # no_confirm_threshold, daily_no_confirm_cap
    autonomy: Literal["ask", "checkpoints", "auto"] | None = None  # set on each task the scenario makes
    person: Person = Person()
    steps: list[Any] = Field(min_length=1)
    kill_at: int | None = Field(default=None, ge=1, description="the step after which the chaos variant kills")

    @model_validator(mode="after")
    def _parse_steps(self):
        parsed = [parse_step(raw, index) for index, raw in enumerate(self.steps, start=1)]
        object.__setattr__(self, "steps", parsed)
        if self.kill_at is not None and self.kill_at > len(parsed):
            raise ValueError(f"kill_at {self.kill_at} is past the last step ({len(parsed)})")
        return self


class ScenarioError(Exception):
    """A scenario file that cannot be read: names the file and what is wrong."""


def parse_step(raw: Any, index: int) -> BaseModel:
    if not isinstance(raw, dict):
        raise ValueError(f"step {index}: a mapping with one action ({', '.join(ACTIONS)})")
    actions = [key for key in ACTIONS if key in raw]
    if len(actions) != 1:
        raise ValueError(f"step {index}: exactly one action of {', '.join(ACTIONS)}; found {actions or 'none'}")
    try:
        return ACTIONS[actions[0]].model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or actions[0]}: {e['msg']}" for e in exc.errors())
        raise ValueError(f"step {index} ({actions[0]}): {problems}") from None


def scenario_load(path: Path) -> Scenario:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        return Scenario.model_validate(data)
    except (OSError, yaml.YAMLError) as exc:
        raise ScenarioError(f"{path}: cannot read it ({exc})") from None
    except (ValidationError, ValueError) as exc:
        raise ScenarioError(f"{path}: {exc}") from None


def scenarios_all(directory: Path = SCENARIOS_DIR) -> list[Scenario]:
    return [scenario_load(path) for path in sorted(directory.glob("*.yaml"))]
