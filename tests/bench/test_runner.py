"""`python -m bench` (bench/runner.py): every part runs whatever an earlier one did, and the summary and exit
status say what each target and each part came to. The parts here are small real processes printing the forms
the real parts print."""

import io
import re
import sys
from contextlib import redirect_stdout

from bench.runner import MISS, NOT_MEASURED, PARTS, PASS, Part, main, result_of, target_line, verdict_of

ENV = {"PATH": "/usr/bin:/bin"}


def script_part(name: str, source: str) -> Part:
    """A part whose process runs `source` (its command is `python -c <source>`)."""

    class ScriptPart(Part):
        def command(self, environ):
            return [sys.executable, "-c", source]

    return ScriptPart(name, "unused", f"{name.upper()}_ARGS")


PASSING = script_part(
    "passing",
    "print('ms per step 1.25');"
    "print('  flat time within 1.5x: 1.02x -> PASS');"
    "print('target: within budget at every step .......... met')",
)
MISSING = script_part(
    "missing",
    "import sys;print('cached 91.0%');print('target: >= 95% cached at steady state ...... MISSED (91.0%)');sys.exit(1)",
)
CRASHING = script_part("crashing", "print('migrating ...'); raise RuntimeError('the bench database is gone')")
SEARCHING = script_part("searching", "print('ok: p95 12.0 ms per search at 1000 rows (target < 200 ms)')")


def run(parts, argv=()) -> tuple[int, str]:
    out = io.StringIO()
    with redirect_stdout(out):
        status = main(list(argv), parts=parts, environ=ENV)
    return status, out.getvalue()


def summary_rows(out: str) -> list[str]:
    """The summary's lines, runs of spaces made one (the columns' width depends on the names), times left out."""
    lines = out[out.index("bench summary") :].splitlines()
    return [re.sub(r" \[\d+ s\]$", "", " ".join(line.split())) for line in lines]


def test_it_runs_every_part_after_a_miss_and_a_crash_and_exits_non_zero():
    # when a part misses a target, the next crashes, and two more pass
    status, out = run([MISSING, CRASHING, PASSING, SEARCHING])

    # then every part ran, its figures and MISS line shown, and the summary names each target and each part
    assert status == 1
    for shown in ("cached 91.0%", "migrating ...", "RuntimeError: the bench database is gone", "ms per step 1.25"):
        assert shown in out
    rows = summary_rows(out)
    assert rows[2:7] == [
        "missing MISS target: >= 95% cached at steady state ...... MISSED (91.0%)",
        "crashing - (no target line in its output)",
        "passing PASS flat time within 1.5x: 1.02x -> PASS",
        "passing PASS target: within budget at every step .......... met",
        "searching PASS ok: p95 12.0 ms per search at 1000 rows (target < 200 ms)",
    ]
    assert rows[8:] == [
        "parts:",
        "missing MISSED 1 of 1",
        "crashing FAILED (exit 1, traceback)",
        "passing ok",
        "searching ok",
        "bench FAIL: 3 target(s) met, 1 missed, 1 part(s) failed (crashing)",
    ]


def test_it_exits_non_zero_on_a_miss_its_part_did_not_exit_for():
    # given a part that prints a MISS but exits 0 (the runtime and load parts do)
    quiet_miss = script_part("quiet", "print('  >= 2x less time/step than LangGraph: 1.50x -> MISS (1.3x short)')")

    # when it runs beside a passing part
    status, out = run([quiet_miss, PASSING])

    # then the run fails on that target
    assert status == 1
    rows = summary_rows(out)
    assert "quiet MISS >= 2x less time/step than LangGraph: 1.50x -> MISS (1.3x short)" in rows
    assert rows[-1] == "bench FAIL: 2 target(s) met, 1 missed, 0 part(s) failed"


def test_it_exits_zero_when_every_target_is_met():
    # when every part meets every target
    status, out = run([PASSING, SEARCHING])

    # then the summary says so and the exit status is 0
    assert status == 0
    assert out.rstrip().endswith("bench PASS: 3 target(s) met, 0 missed, 0 part(s) failed")


def test_it_fails_a_part_that_exits_non_zero_without_a_target_missed():
    # given a part that refuses to run (SystemExit with a message, no traceback)
    refusing = script_part("refusing", "raise SystemExit('make bench needs PostgreSQL')")

    # when it runs
    status, out = run([refusing])

    # then it counts as failed
    assert status == 1
    assert "refusing FAILED (exit 1)" in summary_rows(out)


def test_it_runs_only_the_parts_named_and_refuses_an_unknown_one():
    # when one part is named, then a part that does not exist
    status, out = run([MISSING, PASSING], argv=["passing"])
    unknown, _ = run([MISSING, PASSING], argv=["nope"])

    # then only that part ran, and an unknown name is a usage error
    assert (status, "cached 91.0%" in out, "ms per step 1.25" in out) == (0, False, True)
    assert unknown == 2


def test_it_reads_the_target_forms_the_parts_print():
    # then each form the real parts print is read as its verdict, and other lines are not targets
    assert verdict_of("  <= 1 commits/step, write transactions: 1.00 -> PASS") == PASS
    assert verdict_of("  callbacks exactly once (…): MISS (2 jobs with two versions)") == MISS
    assert verdict_of("target: recall p95 < 50 ms for task briefs ...... met (12.1 ms)") == PASS
    assert verdict_of("target: forget p95 < 1000 ms, nothing left behind ...... MISSED (1200.0 ms)") == MISS
    assert verdict_of("MISSED: the offline embedding model did not load") == MISS
    assert verdict_of("  HTTP load 0 errors: not measured (locust not installed)") == NOT_MEASURED
    assert verdict_of("search served by the GIN index: NO; recalls timed out: 0") is None
    assert verdict_of("  turn q jobs ended 'suspended' / q failures   200 / 0") is None
    assert verdict_of(target_line("accuracy >= 95", True)) == PASS
    assert verdict_of(target_line("accuracy >= 95", False, miss="93.1 %")) == MISS


def test_it_names_the_targets_after_the_heading_above_them():
    # given the runtime part's targets, listed under each tool's indented heading, and the load part's, under a
    # plain "Targets:" that follows a figure line ending in a colon
    runtime = [
        "Targets (Lomote):",
        " read-only tool:",
        "  flat time: 1.1x -> PASS",
        " transactional tool:",
        "  flat time: 1.9x -> MISS (1.27x over)",
    ]
    load = [
        "Throughput: 10 tasks × 5 steps each, worker processes forked from the bench:",
        "Targets:",
        "  errors = 0: 0 -> PASS",
    ]

    # when their output is read
    runtime_result, load_result = result_of("runtime", 0, runtime), result_of("load", 0, load)

    # then each target carries the heading it is under, and only that
    assert [(t.verdict, t.line) for t in runtime_result.targets] == [
        (PASS, "read-only tool: flat time: 1.1x -> PASS"),
        (MISS, "transactional tool: flat time: 1.9x -> MISS (1.27x over)"),
    ]
    assert (runtime_result.failed, runtime_result.status) == (False, "MISSED 1 of 2")
    assert [t.line for t in load_result.targets] == ["errors = 0: 0 -> PASS"]


def test_it_keeps_the_arguments_each_part_took_from_make():
    # then each part reads the variable `make bench` passed it, and the load part keeps its shorter HTTP run
    assert {part.name: part.args_variable for part in PARTS} == {
        "runtime": "BENCH_ARGS",
        "generation": "GEN_BENCH_ARGS",
        "context": "CTX_BENCH_ARGS",
        "memory": "MEM_BENCH_ARGS",
        "search": "SEARCH_BENCH_ARGS",
        "routing": "ROUTING_BENCH_ARGS",
        "understanding": "UNDERSTANDING_BENCH_ARGS",
        "load": "LOAD_BENCH_ARGS",
    }
    context = next(part for part in PARTS if part.name == "context")
    assert context.command({"CTX_BENCH_ARGS": "--window 128000 --steps 40"})[1:] == [
        "-m",
        "bench.context_bench",
        "--window",
        "128000",
        "--steps",
        "40",
    ]


def test_the_understanding_part_prints_every_decision_and_its_targets(capsys):
    # given the understanding bench on a few messages
    from bench import understanding_bench
    from lomote.understanding.classifier import DECISIONS

    status = understanding_bench.main(["--messages", "20"])
    out = capsys.readouterr().out
    # then every decision has its held-out line and target, and the latency and training targets are read
    targets = [line for line in out.splitlines() if verdict_of(line)]
    assert [line.split(" held-out")[0].strip() for line in targets[: len(DECISIONS)]] == list(DECISIONS)
    assert any("per message < 20 ms" in line for line in targets)
    assert any("training + evaluation < 60 s" in line for line in targets)
    assert status == (0 if all(verdict_of(line) == PASS for line in targets) else 1)
