"""The whole REST API under schemathesis, against a live server: no 500, every answer as the schema says.

Daphne serves the PostgreSQL test database from its own process; the owner of a seeded workspace
(tests/contracts/world.py) calls every operation of `/api/schema/` through the coverage, fuzzing and stateful
phases, with each path parameter aimed at a seeded object, so operations answer from real data rather than
404. The seed changes every day (today's date as YYYYMMDD, in UTC), so CI explores new inputs day after day; a
run is still reproducible: the seed is printed in the session summary and in every failure message, and
`LOMOTE_SCHEMATHESIS_SEED=<seed>` replays it (derandomized generation, no example database, no cache carried
over from an earlier run, no time limit).
The README's API section gives the example count.
"""

import os
from collections import defaultdict
from datetime import UTC, datetime

import pytest
from django.db import connections
from django_q.conf import Conf

from tests.contracts.world import World, seed
from tests.support.realtime import worker_env
from tests.support.servers import Daphne, free_port, wait_for_other_sessions_to_end

SEED_VARIABLE = "LOMOTE_SCHEMATHESIS_SEED"
MAX_EXAMPLES = 12
STATEFUL_STEPS = 10
CHECKS = ("not_a_server_error", "status_code_conformance", "response_schema_conformance", "content_type_conformance")
WORKSPACE = "/api/v1/workspaces/{workspace_id}/"
TASK = WORKSPACE + "tasks/{task_id}/"
ARTIFACT = WORKSPACE + "artifacts/{artifact_id}/"
MESSAGE = TASK + "messages/{message_id}/"
# Answers that say only "you cannot" or "there is nothing here": an operation meeting nothing else was not tested.
MEANINGLESS = {401, 403, 404}
RUN_PHASES = ("coverage", "fuzzing", "stateful")


def seed_of_the_day(environ=os.environ, now=None) -> int:
    """The seed `LOMOTE_SCHEMATHESIS_SEED` names, else today's date (UTC) as YYYYMMDD."""
    given = environ.get(SEED_VARIABLE, "").strip()
    if given:
        if not given.isdigit():
            raise pytest.UsageError(f"{SEED_VARIABLE} must be a non-negative integer, not {given!r}")
        return int(given)
    return int((now or datetime.now(UTC)).strftime("%Y%m%d"))


def replay_hint(seed: int) -> str:
    return f"schemathesis seed {seed}: replay with {SEED_VARIABLE}={seed} pytest tests/contracts/test_schemathesis.py"


def _config(world: World, base_url: str, seed: int) -> dict:
    ids = world.ids

    def at(name: str, **parameters: int | str) -> dict:
        return {
            "include-name": name,
            "parameters": {f"path.{k}" if "." not in k else k: v for k, v in parameters.items()},
        }

    return {
        "seed": seed,
        # Nothing carried over from an earlier run: what one run learns must not change the next.
        "cache": {"enabled": False},
        "base-url": base_url,
        "headers": {"Authorization": f"Token {world.token}"},
        "generation": {"max-examples": MAX_EXAMPLES, "deterministic": True, "database": "none"},
        "phases": {
            "examples": {"enabled": True},
            "coverage": {"enabled": True},
            "fuzzing": {"enabled": True},
            "stateful": {"enabled": True, "max-steps": STATEFUL_STEPS},
        },
        "checks": {"enabled": False, **{name: {"enabled": True} for name in CHECKS}},
        # Every operation meets a seeded object; those that change one get an object of their own.
        "parameters": {
            "path.workspace_id": world.workspace,
            "path.membership_id": ids["member"],
            "path.key_id": ids["api_key"],
            "path.task_id": ids["done_task"],
            "path.message_id": ids["message_to_replace"],
            "path.card_id": ids["card"],
            "path.artifact_id": ids["image"],
            "path.number": ids["image_version"],
            "path.job_id": ids["job"],
            "path.run_id": ids["flow_run"],
            "path.node_id": "brief",
            "path.memory_id": ids["memory"],
            "path.collection_id": ids["collection"],
            "path.name": ids["guide"],
            "path.preset_id": ids["preset"],
        },
        "operations": [
            at(f"DELETE {WORKSPACE}", workspace_id=ids["doomed_workspace"]),
            at(f"DELETE {WORKSPACE}members/{{membership_id}}/", membership_id=ids["member_to_remove"]),
            at(f"POST {WORKSPACE}members/", **{"body.user": "erin"}),
            at(f"DELETE {WORKSPACE}api-keys/{{key_id}}/", key_id=ids["api_key_to_revoke"]),
            # A Flow's file is JSON with a schema of its own (an image's bytes are checked in test_response_schemas).
            at(f"GET {ARTIFACT}versions/{{number}}/file", artifact_id=ids["flow"]),
            at(f"PUT {ARTIFACT}document/", artifact_id=ids["document"]),
            at(f"POST {ARTIFACT}document/edits/", artifact_id=ids["document"]),
            at(f"POST {ARTIFACT}flow/edits/", artifact_id=ids["flow"]),
            at(f"POST {ARTIFACT}flow/runs/", artifact_id=ids["flow"]),
            at(f"POST {TASK}cancel/", task_id=ids["task_to_cancel"]),
            at(f"POST {TASK}pause/", task_id=ids["waiting_task"]),
            at(f"POST {TASK}resume/", task_id=ids["paused_task"]),
            at(f"POST {TASK}unarchive/", task_id=ids["archived_task"]),
            at(f"PATCH {TASK}settings/", task_id=ids["paused_task"]),
            at(f"GET {TASK}messages/", task_id=ids["paused_task"]),
            at(f"POST {TASK}messages/", task_id=ids["paused_task"]),
            at(f"PUT {MESSAGE}replace/", task_id=ids["paused_task"]),
            at(f"POST {MESSAGE}replace/", task_id=ids["paused_task"]),
            at(f"POST {MESSAGE}withdraw/", task_id=ids["paused_task"], message_id=ids["message_to_withdraw"]),
            at(f"POST {WORKSPACE}billing/approvals/", **{"body.quote": ids["quote"]}),
            at(f"POST {WORKSPACE}flow-runs/{{run_id}}/nodes/{{node_id}}/retry/", run_id=ids["failed_flow_run"]),
            at(f"DELETE {WORKSPACE}collections/{{collection_id}}/", collection_id=ids["doomed_collection"]),
            at(f"DELETE {WORKSPACE}assistant-presets/{{preset_id}}/", preset_id=ids["preset_to_delete"]),
        ],
    }


@pytest.fixture
def live_api(transactional_db, monkeypatch):
    """The seeded world, served by daphne on the test database."""
    monkeypatch.setattr(Conf, "SYNC", True)  # the seed's jobs run inline; the server enqueues as usual
    world = seed()
    monkeypatch.setattr(Conf, "SYNC", False)
    connections.close_all()
    env = worker_env(redis_url=None, ALLOWED_HOSTS="127.0.0.1,localhost", API_RATE="1000000/min")
    server = Daphne(env, free_port())
    try:
        server.start()
        yield world, server
    finally:
        server.stop()
        wait_for_other_sessions_to_end()


def _run(config: dict):
    """Run every phase; return the failed checks, the errors, the statuses each operation answered, each
    phase's outcome and the engine's last event."""
    import schemathesis
    from schemathesis.engine import events, from_schema

    base_url = config["base-url"]
    schema = schemathesis.openapi.from_url(f"{base_url}/api/schema/", config=schemathesis.Config.from_dict(config))
    failures, errors, statuses, phases = [], [], defaultdict(set), {}
    finished = None
    for event in from_schema(schema).execute():
        if isinstance(event, events.PhaseFinished):
            phases[event.phase.name.value] = event.status.value
        elif isinstance(event, events.ScenarioFinished):
            for case_id, node in event.recorder.cases.items():
                interaction = event.recorder.interactions.get(case_id)
                if interaction is not None and interaction.response is not None:
                    statuses[node.value.operation.label].add(interaction.response.status_code)
            for checks in event.recorder.checks.values():
                failures += [check for check in checks if check.failure_info is not None]
        elif isinstance(event, events.NonFatalError | events.FatalError):
            errors.append(event)
        elif isinstance(event, events.EngineFinished):
            finished = event
    return schema, failures, errors, statuses, phases, finished


def _describe(check) -> str:
    failure = check.failure_info.failure
    curl = check.failure_info.steps[-1].curl if check.failure_info.steps else check.failure_info.code_sample
    return f"{failure.operation} [{check.name}] {failure.title}: {failure.message[:400]}\n    {curl}"


def test_it_takes_its_seed_from_the_environment_or_else_from_the_date():
    # given a run on 6 December 2026, with and without a seed named in the environment
    day = datetime(2026, 12, 6, 23, 59, tzinfo=UTC)

    # then the date gives the seed unless the variable names one, which replays that run
    assert seed_of_the_day({}, day) == 20261206
    assert seed_of_the_day({SEED_VARIABLE: " "}, day) == 20261206
    assert seed_of_the_day({SEED_VARIABLE: "20261201"}, day) == 20261201
    with pytest.raises(pytest.UsageError, match=SEED_VARIABLE):
        seed_of_the_day({SEED_VARIABLE: "yesterday"}, day)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_it_conforms_to_its_schema_under_fuzzing(live_api, replay_note):
    world, server = live_api
    seed = seed_of_the_day()
    hint = replay_hint(seed)
    replay_note(hint)
    print(hint)

    # when schemathesis runs every operation through every phase
    schema, failures, errors, statuses, phases, finished = _run(_config(world, server.url, seed))

    # then the run completed with no failed check and no error
    assert finished is not None and finished.stop_reason == "completed", f"{hint}\n{finished}"
    unique = sorted({_describe(check) for check in failures})
    assert unique == [], f"{hint}\n" + "\n".join(unique) + "\n--- server log ---\n" + server.log_tail()
    assert errors == [], f"{hint}\n{[getattr(e, 'info', e) for e in errors]}"
    # and every phase ran, and every operation was reached and met something real (not only 401/403/404)
    ran = {name: phases.get(name) for name in RUN_PHASES}
    assert ran == dict.fromkeys(RUN_PHASES, "success"), f"{hint}\n{phases}"
    operations = {result.ok().label for result in schema.get_all_operations()}
    untested = sorted(operations - set(statuses))
    blind = sorted(label for label, seen in statuses.items() if seen <= MEANINGLESS)
    assert (untested, blind) == ([], []), f"{hint}\n{ {label: sorted(statuses[label]) for label in blind} }"
