"""`make bench`, context section: a 300-step task with mixed tool outputs, with and without compaction.

One process, its own PostgreSQL database (`<name>_ctx`, created and dropped here), the real turn loop. The
model is a fixed one wrapped in the cache meter (agents/providers/cache_meter.py), which measures what an
OpenAI-style prompt cache would serve: the longest prefix shared with the task's earlier requests, from
1,024 tokens in 128-token blocks. Token counts are the offline estimate (agents/tokens.py).

The task: 300 steps over 6 turns of 50 on a 32k-token model (so that compaction happens several times; the
product's default profile is 128k). Each step calls a lookup
whose output cycles through sizes (80 characters to 30 kB: the large ones are shown as read-back stubs), the
task loads a tool domain at steps 20 and 160, and a person's message arrives before each turn. Run twice:
with compaction (the product) and with compaction switched off (the baseline, for comparison).

Printed: prompt tokens per step (p50, max) in both runs and the budget; the share of steps whose prefix hash
equals the previous step's; the cache meter's cached-token ratio at steady state (after the first 10 steps,
without the steps that follow a compaction or a domain load); for each domain load, how much of the previous
request's cacheable part (the tool list and every message before the dynamic tail, as the meter renders them) the
next request repeats byte for byte; for each compaction, how much of the previous stable prefix (the layers
before the verbatim history: tools, rules, profile, guides, summaries, recall) it kept; and the tokens each
re-sent. Targets: within budget at every step; ≥ 95 % cached at steady state; every domain load keeps ≥ 95 %;
every compaction keeps ≥ 90 %. With `--diff`, each compaction's prefix change is printed line by line (the
prefix is one canonical JSON document a line); a compaction under its target always prints it.

Usage: `python -m bench.context_bench [--steps 300] [--diff]`.
"""

import argparse
import difflib
import json
import os
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.runtime_bench import Target, databases_drop, databases_recreate, django_setup, target_from  # noqa: E402

DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/lomote_bench"
STEPS_PER_TURN = 50
# A 32k-token model, so that 300 steps pass the high-water mark several times (the product's default is 128k).
WINDOW = 32_000
SIZES = (80, 1_500, 30_000, 600, 3_800, 200, 9_000, 1_000)  # characters of each lookup's output, in turn
DOMAIN_LOADS = {20: "documents", 160: "image"}
WARM_UP = 10
TARGET_CACHED = 0.95
TARGET_KEPT = 0.90  # of the stable prefix, at each compaction
TARGET_LOAD_KEPT = 0.95  # of the previous request's cacheable part, at each domain load
TAIL_START = "Current task state: "  # the dynamic tail's message (agents/runtime/context.py)
BENCH_TOOL = "bench_lookup"


def ctx_target(url: str) -> Target:
    base = target_from(url)
    name = base.name if base.name.endswith("_ctx") else f"{base.name}_ctx"
    return target_from(urlsplit(url)._replace(path=f"/{name}").geturl())


def output(step: int, size: int) -> str:
    """Text of about `size` characters, different at every step (so no two results are alike)."""
    words = ("swatch", "palette", "poster", "grain", "ochre", "teal", "serif", "margin", "kerning", "halftone")
    text, n = [], step
    while sum(len(w) + 1 for w in text) < size:
        n = (n * 1103515245 + 12345) % 2**31
        text.append(words[n % len(words)])
    return " ".join(text)[:size]


@dataclass
class Run:
    compaction: bool
    steps: list = field(default_factory=list)  # Step rows, in order
    records: list = field(default_factory=list)  # the cache meter's records, in order
    prefixes: list[str] = field(default_factory=list)  # each request's stable prefix bytes
    renders: list[str] = field(default_factory=list)  # each request as the meter renders it: tools, then messages
    cacheable: list[int] = field(default_factory=list)  # each render's length before the tail
    segments: list = field(default_factory=list)
    budget: int = 0


def run_task(steps: int, *, window: int, compaction: bool) -> Run:
    from django.contrib.auth import get_user_model

    import agents.queue as queue
    import agents.runtime.loop as loop
    from agents.models import ContextSegment, ModelProfile, Step, Turn
    from agents.providers.base import ModelResponse, ToolCallIntent, Usage
    from agents.providers.cache_meter import CacheMeter
    from agents.runtime.compaction import context_budget
    from agents.services.inbox import message_post
    from agents.services.tasks import task_create
    from agents.tools import registry as tool_registry
    from agents.tools.base import Tool, ToolArgs, ToolContext, ToolResult
    from workspace.selectors import workspace_access
    from workspace.services.workspaces import workspace_create

    class LookupArgs(ToolArgs):
        size: int

    class BenchLookup(Tool):
        name = BENCH_TOOL
        description = "Look up reference material of the given size (bench tool)."
        Args = LookupArgs

        def run(self, ctx: ToolContext, args: LookupArgs) -> ToolResult:
            return ToolResult(content={"found": output(ctx.step_index + ctx.turn_id * 1000, args.size)})

    class FixedModel:
        kind = "bench"

        def __init__(self):
            self.step = 0

        def complete(self, request):
            run.prefixes.append(request.state["_prefix"])  # what this very request's prefix was
            render, cacheable = rendered(request)
            run.renders.append(render)
            run.cacheable.append(cacheable)
            self.step += 1
            k = self.step
            domain = DOMAIN_LOADS.get(k)
            if domain:
                call = ToolCallIntent(id=f"call_{k}", name="load_tools", arguments={"domain": domain})
            else:
                call = ToolCallIntent(id=f"call_{k}", name=BENCH_TOOL, arguments={"size": SIZES[k % len(SIZES)]})
            text = f"Step {k}: comparing the reference with the brief before the next poster."
            return ModelResponse(text=text, tool_calls=[call], usage=Usage(), model="bench-fixed-1")

    run = Run(compaction=compaction)
    meter = CacheMeter(FixedModel())
    original_build, original_compaction = loop.context_build, loop.compaction_run

    def build(**kwargs):
        built = original_build(**kwargs)
        built.request.state["_prefix"] = built.prefix
        return built

    loop.context_build = build
    loop.provider_for_lease = lambda lease: meter
    if not compaction:
        loop.compaction_run = lambda **kwargs: None
    queue._enqueue = lambda turn_id, generation: None
    try:
        with tool_registry.override(BenchLookup):
            user = get_user_model().objects.create_user(username=f"bench-{compaction}", password=None)
            workspace = workspace_create(user=user, name=f"Context bench ({'with' if compaction else 'without'})")
            profile = ModelProfile.objects.create(
                workspace=workspace, name="default", is_default=True, context_tokens=window
            )
            run.budget = context_budget(profile.context_tokens)
            access = workspace_access(principal=user, workspace_id=workspace.pk)
            # Creating the task with a brief queues its first turn; each later message queues the next one.
            task = task_create(access=access, title="Retro posters", brief="Make a series of 12 retro posters.")
            for n in range(-(-steps // STEPS_PER_TURN)):
                if n:
                    message_post(access=access, task_id=task.pk, text=f"Day {n + 1}: keep the palette warm.")
                turn = Turn.objects.get(task=task, status__in=["queued", "running"])
                loop.turn_run(turn_id=turn.pk, generation=turn.generation)
            run.steps = list(Step.objects.filter(turn__task=task).order_by("number"))
            run.segments = list(ContextSegment.objects.filter(task=task).order_by("number"))
            run.records = list(meter.records)
    finally:
        loop.context_build, loop.compaction_run = original_build, original_compaction
    return run


def rendered(request) -> tuple[str, int]:
    """The request as an OpenAI-style cache hashes it (agents/providers/cache_meter.py: tools, then messages, one
    canonical JSON each, newline-joined), and the length of its part before the dynamic tail."""
    tools = [dumps(tool.as_openai()) for tool in request.tools]
    messages = [dumps(message) for message in request.messages]
    tail = next(
        (i for i, m in enumerate(request.messages) if str(m.get("content") or "").startswith(TAIL_START)),
        len(messages),
    )
    before = "\n".join([*tools, *messages[:tail]])
    return "\n".join([*tools, *messages]), len(before)


def dumps(value) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def kept_share(before: str, after: str) -> float:
    """The share of `before` that `after` starts with."""
    return len(os.path.commonprefix([before, after])) / len(before) if before else 1.0


def prefix_diff(before: str, after: str, width: int = 110) -> list[str]:
    """The prefix's change, line by line (one canonical JSON document a line), each line cut to `width`."""
    old, new = before.split("\n"), after.split("\n")
    first = next((i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), min(len(old), len(new)))
    lines = [f"    first changed line: {first + 1} of {len(old)} (lines before it are byte-identical)"]
    for line in difflib.unified_diff(old, new, lineterm="", n=0):
        if line.startswith(("---", "+++", "@@")):
            continue
        lines.append("    " + (line if len(line) <= width else line[: width - 1] + "…"))
    return lines


def pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def analyse(run: Run) -> dict:
    tokens = [s.context_tokens for s in run.steps]
    same = sum(1 for a, b in zip(run.steps, run.steps[1:], strict=False) if a.prefix_hash == b.prefix_hash)
    changed = {i for i in range(1, len(run.prefixes)) if run.prefixes[i] != run.prefixes[i - 1]}
    loads = {i for i in DOMAIN_LOADS if i < len(run.renders)}  # request i follows the load_tools call of step i
    steady = [r for i, r in enumerate(run.records) if i >= WARM_UP and i not in changed | loads]
    prompt = sum(r.estimated_prompt_tokens for r in steady)
    cached = sum(r.estimated_cached_tokens for r in steady)
    compactions = []
    for i in sorted(changed | loads):
        record = run.records[i]
        domain = i in loads
        if domain:
            # What a provider's cache held: the previous request up to its tail, tools and history included.
            kept = kept_share(run.renders[i - 1][: run.cacheable[i - 1]], run.renders[i])
        else:
            kept = kept_share(run.prefixes[i - 1], run.prefixes[i])
        compactions.append(
            {
                "step": i + 1,
                "index": i,
                "kept": kept,
                "resent": record.estimated_prompt_tokens - record.estimated_cached_tokens,
                "domain": domain,
            }
        )
    return {
        "p50": statistics.median(tokens),
        "max": max(tokens),
        "over": sum(1 for t in tokens if t > run.budget),
        "same": same / max(len(run.steps) - 1, 1),
        "cached": cached / prompt if prompt else 0.0,
        "changes": compactions,
    }


def compaction_kinds(segments: list) -> list[str]:
    """How each compaction changed the summaries, from its segment: appended, folded with the last, folded all."""
    kinds, shown = [], []
    for segment in segments:
        folded = [s for s in shown if s.from_step >= segment.from_step]
        kinds.append("summary appended" if not folded else "last folded" if len(folded) == 1 else "all folded")
        shown = [s for s in shown if s.from_step < segment.from_step] + [segment]
    return kinds


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def report(steps: int, window: int, with_: Run, without: Run, *, diff: bool = False) -> str:
    a, b = analyse(with_), analyse(without)
    load_changes = [c for c in a["changes"] if c["domain"]]
    segment_changes = [c for c in a["changes"] if not c["domain"]]
    kinds = dict(zip((c["index"] for c in segment_changes), compaction_kinds(with_.segments), strict=False))
    lines = [
        f"== context: one task, {steps} steps over {-(-steps // STEPS_PER_TURN)} turns, {window}-token model ==",
        f"budget per request: {with_.budget} tokens (the window less room for the answer); token counts estimated",
        "",
        f"{'':34}{'with compaction':>18}{'without':>14}",
        f"{'prompt tokens per step, p50':34}{a['p50']:>18.0f}{b['p50']:>14.0f}",
        f"{'prompt tokens per step, max':34}{a['max']:>18}{b['max']:>14}",
        f"{'steps over the budget':34}{a['over']:>18}{b['over']:>14}",
        f"{'prefix identical to previous step':34}{pct(a['same']):>18}{pct(b['same']):>14}",
        f"{'cached at steady state (meter)':34}{pct(a['cached']):>18}{pct(b['cached']):>14}",
        f"{'summaries appended':34}{len(with_.segments):>18}{len(without.segments):>14}",
        "",
        "changes (with compaction): step, why, share kept, tokens re-sent. A domain load: of the previous request's",
        "cacheable part (tools and messages before the tail). A compaction: of the previous stable prefix.",
    ]
    for change in a["changes"]:
        why = "domain loaded" if change["domain"] else kinds.get(change["index"], "prefix changed")
        target = TARGET_LOAD_KEPT if change["domain"] else TARGET_KEPT
        lines.append(
            f"  step {change['step']:>4}  {why:<17} kept {pct(change['kept']):>8}   re-sent {change['resent']:>6}"
            f"   {verdict(change['kept'] >= target)}"
        )
        if not change["domain"] and (diff or change["kept"] < TARGET_KEPT):
            i = change["index"]
            lines += prefix_diff(with_.prefixes[i - 1], with_.prefixes[i])
    within = a["over"] == 0
    cached_ok = a["cached"] >= TARGET_CACHED
    loads_ok = bool(load_changes) and all(c["kept"] >= TARGET_LOAD_KEPT for c in load_changes)
    kept_ok = all(c["kept"] >= TARGET_KEPT for c in segment_changes)
    worst_load = min((c["kept"] for c in load_changes), default=0.0)
    worst_kept = min((c["kept"] for c in segment_changes), default=1.0)
    lines += [
        "",
        f"target: within budget at every step ............... {verdict(within)}",
        f"target: >= {pct(TARGET_CACHED)} cached at steady state ........ {verdict(cached_ok)} ({pct(a['cached'])})",
        f"target: each domain load keeps >= {pct(TARGET_LOAD_KEPT)} ....... {verdict(loads_ok)}"
        f" ({len(load_changes)} loads, lowest {pct(worst_load)})",
        f"target: each compaction keeps >= {pct(TARGET_KEPT)} ........ {verdict(kept_ok)}"
        f" ({len(segment_changes)} compactions, lowest {pct(worst_kept)})",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--window", type=int, default=WINDOW, help="the model's context window, in tokens")
    parser.add_argument("--keep", action="store_true", help="keep the bench database afterwards")
    parser.add_argument("--diff", action="store_true", help="print each compaction's prefix change line by line")
    args = parser.parse_args(argv)

    target = ctx_target(os.environ.get("DATABASE_URL") or DEFAULT_URL)
    text = "MISS: the bench did not finish"
    databases_recreate(target)
    try:
        # Turns end at their step cap only: the per-turn token cap (a spending guard) would cut them short.
        os.environ["LOMOTE_MAX_TOKENS_PER_TURN"] = str(10**9)
        django_setup(target.url, STEPS_PER_TURN)
        print(f"bench database {target.name}: {args.steps} steps with compaction ...", flush=True)
        with_ = run_task(args.steps, window=args.window, compaction=True)
        print("... and without ...", flush=True)
        without = run_task(args.steps, window=args.window, compaction=False)
        print()
        text = report(args.steps, args.window, with_, without, diff=args.diff)
        print(text)
    finally:
        if "django.db" in sys.modules:
            from django.db import connections

            connections.close_all()
        if not args.keep:
            databases_drop(target)
    return 1 if "MISS" in text else 0


if __name__ == "__main__":
    sys.exit(main())
