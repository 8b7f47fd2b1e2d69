"""The soak's own parts that need no cluster: the Procfile it starts, the restart capability checks, the person."""

import sys

import pytest

from tests.soak.infra import PostgresRestarter, RedisRestarter
from tests.soak.person import ScriptedPerson
from tests.soak.procfile import ProcessSet, expand, procfile_lines


def test_the_procfile_runs_two_web_servers_two_clusters_and_the_sweepers():
    lines = dict(procfile_lines())
    assert [name for name in lines if name.startswith("web")] == ["web1", "web2"]
    assert [name for name, command in lines.items() if command.endswith("manage.py qcluster")] == ["worker1", "worker2"]
    assert {"watchdog1", "sweeper1"} <= set(lines)


def test_it_expands_the_procfile_ports_and_refuses_a_missing_one():
    procs = ProcessSet.from_procfile({}, ports={"WEB1_PORT": 8101, "WEB2_PORT": 8102})
    assert procs.web_urls == ["http://127.0.0.1:8101", "http://127.0.0.1:8102"]
    assert all(line.argv[0] == sys.executable for line in procs.lines)
    with pytest.raises(KeyError, match="WEB1_PORT"):
        expand("python -m daphne -p $WEB1_PORT lomote.asgi:application", {})


def test_it_says_why_it_cannot_restart_a_remote_or_absent_service():
    assert "not this machine" in PostgresRestarter("postgres://u@db.example.com:5432/x").why_not()
    assert "not this machine" in RedisRestarter("redis://cache.example.com:6379/0").why_not()
    assert "no REDIS_URL" in RedisRestarter("").why_not()


@pytest.mark.parametrize(
    ("card", "answer"),
    [
        ({"actions": ["approve", "decline", "adjust"]}, {"action": "approve"}),
        ({"actions": ["confirm", "adjust"]}, {"action": "confirm"}),
        ({"actions": ["choose"], "options": [{"id": "a", "label": "A"}]}, {"action": "choose", "option": "a"}),
        ({"actions": []}, None),
    ],
)
def test_the_scripted_person_approves_confirms_or_takes_the_first_option(card, answer):
    assert ScriptedPerson.answer(card) == answer
