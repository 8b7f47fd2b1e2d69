"""The import contracts in pyproject.toml hold, and they catch what they are for: a circle, or a layer crossed
upward. `make lint` runs the same contracts on the real tree; here one import at a time is added to the real
graph. The check runs in a fresh interpreter: import-linter's option validation trips over the zope.interface
descriptors that Django's test process has loaded (through twisted)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CIRCLES = "No import circles inside any app, at any depth"

SCENARIOS: dict[str, list[tuple[str, str]]] = {
    "tree": [],
    "service imports the runtime loop": [("agents.services.tasks", "agents.runtime.loop")],
    "cards import card actions": [("agents.services.cards", "agents.services.card_actions")],
    "workspace imports billing": [("workspace.services.jobs", "billing.services.orders")],
    "kernel imports an app": [("lomote.kernel.events", "workspace.models")],
    "graph imports models": [("workspace.flows.graph", "workspace.models")],
    "a tool imports the runtime": [("agents.tools.base", "agents.runtime.loop")],
}

CHECK = """
import copy, json, sys
import grimp
from importlinter.application import use_cases
from importlinter.configuration import configure

configure()
options = use_cases.read_user_options(config_filename=sys.argv[1])
use_cases._register_contract_types(options)  # what `lint-imports` does before checking (import-linter is pinned)
graph = grimp.build_graph(*options.session_options["root_packages"], cache_dir=None)
broken = {}
for name, added in json.loads(sys.argv[2]).items():
    changed = copy.deepcopy(graph)
    for importer, imported in added:
        changed.add_import(importer=importer, imported=imported, line_number=1, line_contents="import " + imported)
    report = use_cases._build_report(graph=changed, graph_building_duration=0, user_options=options,
                                     limit_to_contracts=(), show_timings=False, verbose=False)
    broken[name] = sorted(c.name for c, check in report.get_contracts_and_checks() if not check.kept)
print(json.dumps(broken))
"""


@pytest.fixture(scope="module")
def broken() -> dict[str, list[str]]:
    done = subprocess.run(
        [sys.executable, "-c", CHECK, str(ROOT / "pyproject.toml"), json.dumps(SCENARIOS)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_tree_keeps_every_contract(broken):
    assert broken["tree"] == []


def test_a_service_importing_the_runtime_loop_crosses_the_agents_layers_and_makes_a_circle(broken):
    names = broken["service imports the runtime loop"]
    assert any(name.startswith("Inside agents") for name in names)
    assert CIRCLES in names


def test_a_circle_between_two_services_of_one_layer_is_caught(broken):
    # the low cards layer reading the person actions that import it: no layer is crossed, only a circle made
    assert broken["cards import card actions"] == [CIRCLES]


@pytest.mark.parametrize(
    ("scenario", "contract"),
    [
        ("workspace imports billing", "One-way layers"),
        ("kernel imports an app", "The shared kernel imports no app"),
        ("graph imports models", "A Flow's graph is pure"),
        ("a tool imports the runtime", "Inside agents"),
    ],
)
def test_each_contract_catches_an_upward_import(broken, scenario, contract):
    assert any(name.startswith(contract) for name in broken[scenario])
