"""`make bench` (`python -m bench`): every bench part in turn, each in a process of its own, then one summary.

A part that misses a target, or fails outright, does not stop the others: each runs, its output is shown as it
comes, and its target lines are collected. Then a table gives every target of every part, PASS or MISS, and
each part that failed; the exit status is 1 if any target was missed or any part failed, else 0.

Target lines are read from what the parts print (`verdict_of`): `… -> PASS` / `… -> MISS (why)` (runtime,
generation, load), `target: … met` / `… MISSED` (context, memory, routing) and `ok: …` / `MISSED: …` (search);
a part may print `target_line(...)` to use the first form. A part fails when it exits non-zero without having
missed a target (it crashed, or refused to run), or prints a Python traceback.

Arguments for each part come from the environment, as `make bench` always took them: BENCH_ARGS (runtime),
GEN_BENCH_ARGS, CTX_BENCH_ARGS, MEM_BENCH_ARGS, SEARCH_BENCH_ARGS, ROUTING_BENCH_ARGS,
UNDERSTANDING_BENCH_ARGS, LOAD_BENCH_ARGS.
DATABASE_URL defaults to postgres://postgres@127.0.0.1:5432/lomote_bench; the load part's
LOMOTE_BENCH_HTTP_SECONDS to 30. `python -m bench context memory` runs only the parts named.
"""

import os
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/lomote_bench"
PASS, MISS, NOT_MEASURED = "PASS", "MISS", "n/a"


@dataclass(frozen=True)
class Part:
    name: str
    module: str
    args_variable: str
    env_defaults: Mapping[str, str] = field(default_factory=dict)

    def command(self, environ: Mapping[str, str]) -> list[str]:
        return [sys.executable, "-m", self.module, *shlex.split(environ.get(self.args_variable, ""))]


PARTS = (
    Part("runtime", "bench.runtime_bench", "BENCH_ARGS"),
    Part("generation", "bench.generation_bench", "GEN_BENCH_ARGS"),
    Part("context", "bench.context_bench", "CTX_BENCH_ARGS"),
    Part("memory", "bench.memory_bench", "MEM_BENCH_ARGS"),
    Part("search", "bench.search_bench", "SEARCH_BENCH_ARGS"),
    Part("routing", "bench.routing_bench", "ROUTING_BENCH_ARGS"),
    Part("understanding", "bench.understanding_bench", "UNDERSTANDING_BENCH_ARGS"),
    Part("load", "bench.load_bench", "LOAD_BENCH_ARGS", {"LOMOTE_BENCH_HTTP_SECONDS": "30"}),
)

# --- reading a part's output ------------------------------------------------------------------------------

_ARROW = re.compile(r"(?:->|:)\s*(PASS|MISS)\b")  # "… -> PASS", "…: MISS (2 occupied)"
_TARGET = re.compile(r"^\s*target:.*(?<![\w-])(met|MISSED)\b")  # "target: … ...... met (12 ms)"
_LEADING = re.compile(r"^\s*(ok|MISSED):")  # "ok: p95 …", "MISSED: the model did not load"
_NOT_MEASURED = re.compile(r":\s*not measured\b")  # "HTTP load 0 errors: not measured (locust not installed)"
_TRACEBACK = "Traceback (most recent call last):"


def verdict_of(line: str) -> str | None:
    """PASS, MISS or NOT_MEASURED when `line` states a target's outcome in one of the forms the parts print."""
    if match := _ARROW.search(line):
        return match.group(1)
    if match := _TARGET.search(line):
        return PASS if match.group(1) == "met" else MISS
    if match := _LEADING.search(line):
        return PASS if match.group(1) == "ok" else MISS
    if _NOT_MEASURED.search(line):
        return NOT_MEASURED
    return None


def target_line(label: str, ok: bool, figure: str = "", miss: str = "") -> str:
    """A target's outcome in the form `verdict_of` reads first: `  <label>: <figure> -> PASS | MISS (<miss>)`."""
    shown = f"{label}: {figure} -> " if figure else f"{label} -> "
    outcome = PASS if ok else f"{MISS} ({miss or figure or 'missed'})"
    return f"  {shown}{outcome}"


@dataclass
class Target:
    verdict: str
    line: str


@dataclass
class PartResult:
    name: str
    returncode: int
    targets: list[Target]
    traceback: bool = False
    seconds: float = 0.0
    error: str = ""  # why the part could not be started at all

    @property
    def missed(self) -> list[Target]:
        return [t for t in self.targets if t.verdict == MISS]

    @property
    def failed(self) -> bool:
        """It crashed or refused to run: a traceback, or a non-zero exit that no missed target explains."""
        return bool(self.error) or self.traceback or (self.returncode != 0 and not self.missed)

    @property
    def status(self) -> str:
        if self.error:
            return f"FAILED ({self.error})"
        if self.failed:
            return f"FAILED (exit {self.returncode}{', traceback' if self.traceback else ''})"
        if self.missed:
            return f"MISSED {len(self.missed)} of {len(self.targets)}"
        if not self.targets:
            return "ok (no target reported)"
        return "ok"


def result_of(name: str, returncode: int, lines: Iterable[str], seconds: float = 0.0) -> PartResult:
    """What one part's exit status and output lines say: its targets, whether it crashed."""
    targets, traceback, context = [], False, ""
    for raw in lines:
        line = raw.rstrip("\n")
        if _TRACEBACK in line:
            traceback = True
        verdict = verdict_of(line)
        if verdict is None:
            # An indented heading such as " read-only tool:" names the targets under it; a line that is not
            # indented ("Targets (Lomote):", a blank line) ends what it named.
            indented = line[:1].isspace() and line.strip()
            if indented and line.rstrip().endswith(":"):
                context = line.strip()
            elif not indented:
                context = ""
            continue
        label = " ".join(line.split())
        targets.append(Target(verdict, f"{context} {label}" if context else label))
    return PartResult(name, returncode, targets, traceback, seconds)


# --- running ------------------------------------------------------------------------------------------------


def part_environment(part: Part, environ: Mapping[str, str]) -> dict[str, str]:
    env = dict(environ)
    env.setdefault("DATABASE_URL", DEFAULT_DATABASE_URL)
    if not env["DATABASE_URL"]:
        env["DATABASE_URL"] = DEFAULT_DATABASE_URL
    for name, value in part.env_defaults.items():
        if not env.get(name):
            env[name] = value
    env["PYTHONUNBUFFERED"] = "1"  # its lines reach the screen as they are printed
    return env


def part_run(part: Part, environ: Mapping[str, str], out: Callable[[str], None]) -> PartResult:
    """Run one part, echoing its output (stdout and stderr) line by line through `out`."""
    command = part.command(environ)
    out(f"\n=== bench part: {part.name} ({shlex.join(command[1:])}) ===\n")
    started = time.monotonic()
    lines: list[str] = []
    try:
        process = subprocess.Popen(  # noqa: S603 - our own interpreter and modules, arguments from the caller
            command,
            env=part_environment(part, environ),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
        )
    except OSError as exc:
        return PartResult(part.name, -1, [], error=f"could not start: {exc}")
    with process:
        assert process.stdout is not None
        for line in process.stdout:
            out(line)
            lines.append(line)
        returncode = process.wait()
    return result_of(part.name, returncode, lines, time.monotonic() - started)


def summary(results: Sequence[PartResult]) -> tuple[str, int]:
    """The closing table (every target of every part, then each part's status) and the exit status."""
    out = ["", "=" * 100, "bench summary: every target of every part", "=" * 100]
    width = max((len(r.name) for r in results), default=4)
    for result in results:
        for target in result.targets:
            out.append(f"{result.name:<{width}}  {target.verdict:<4}  {target.line}")
        if not result.targets:
            out.append(f"{result.name:<{width}}  {'-':<4}  (no target line in its output)")
    out += ["-" * 100, "parts:"]
    for result in results:
        out.append(f"  {result.name:<{width}}  {result.status}  [{result.seconds:.0f} s]")
    missed = sum(len(r.missed) for r in results)
    failed = [r.name for r in results if r.failed]
    passed = sum(1 for r in results for t in r.targets if t.verdict == PASS)
    verdict = "FAIL" if missed or failed else "PASS"
    out.append(
        f"bench {verdict}: {passed} target(s) met, {missed} missed, {len(failed)} part(s) failed"
        + (f" ({', '.join(failed)})" if failed else "")
    )
    return "\n".join(out), 1 if missed or failed else 0


def main(
    argv: Sequence[str] | None = None, parts: Sequence[Part] = PARTS, environ: Mapping[str, str] | None = None
) -> int:
    names = list(sys.argv[1:] if argv is None else argv)
    known = {part.name: part for part in parts}
    unknown = [name for name in names if name not in known]
    if unknown:
        print(f"unknown bench part(s): {', '.join(unknown)}; parts: {', '.join(known)}", file=sys.stderr)
        return 2
    chosen = [known[name] for name in names] if names else list(parts)
    environ = os.environ if environ is None else environ

    def out(text: str) -> None:
        sys.stdout.write(text)
        sys.stdout.flush()

    results = [part_run(part, environ, out) for part in chosen]
    text, status = summary(results)
    print(text, flush=True)
    return status
