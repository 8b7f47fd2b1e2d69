"""The periodic-command loop (watchdog, generation sweeper): a sweep that fails is logged and the next one runs."""

import logging
import threading

import pytest
from django.core.management import call_command

from agents.management.commands.watchdog import Command as Watchdog
from lomote.kernel import periodic
from workspace.management.commands.generation_sweeper import Command as GenerationSweeper


@pytest.mark.parametrize("command_class", [Watchdog, GenerationSweeper], ids=["watchdog", "generation_sweeper"])
def test_it_logs_a_sweep_that_dies_mid_way_and_runs_the_next_one(monkeypatch, caplog, command_class):
    # given a command whose first sweep dies with an exception mid-way, and whose second one succeeds
    command = command_class()
    calls = []

    def sweep():
        calls.append(len(calls) + 1)
        if len(calls) == 1:
            raise RuntimeError("the database went away mid-sweep")
        command.stop()  # the second sweep ran: stop the loop after it
        return "swept"

    monkeypatch.setattr(command, "sweep", sweep)
    monkeypatch.setattr(command, "period", lambda: 0.01)
    monkeypatch.setattr(periodic, "close_old_connections", lambda: None)

    # when the loop runs (in a thread, so a loop that died or hung fails the test instead of blocking it)
    caplog.set_level(logging.ERROR, logger="lomote.kernel.periodic")
    monkeypatch.setattr(periodic.signal, "signal", lambda *args: None)  # signals belong to the main thread
    worker = threading.Thread(target=command.handle, kwargs={"once": False})
    worker.start()
    worker.join(timeout=5)

    # then the failure was logged with its traceback, and the next sweep ran
    assert not worker.is_alive()
    assert calls == [1, 2]
    [record] = caplog.records
    assert f"{command.name} failed" in record.getMessage()
    assert record.exc_info and "went away mid-sweep" in str(record.exc_info[1])


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("name", ["watchdog", "generation_sweeper"])
def test_it_sweeps_once_and_prints_the_report(name, capsys):
    call_command(name, "--once")
    assert capsys.readouterr().out.strip()
