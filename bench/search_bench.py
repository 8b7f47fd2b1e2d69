"""`make bench`, search section: the offline embedding model's cost, and a semantic search over 1,000 rows.

One process, its own PostgreSQL database (`<name>_search`, created and dropped here), the real services.
Printed: the offline model's load time and resident memory; ms per text embedded alone and in batches; the
time to embed 1,000 artifacts and 1,000 tasks (`reembed`, `task_embeddings_backfill`); then, after 10
unmeasured searches, p50/p95/max of `artifact_search_meaning` and of the Router's `task_search_similar` over
those 1,000 rows, and how many French requests found the English object they mean (and the reverse) first.
Target: p95 < 200 ms per search at 1,000 rows: a search runs once before a Router or planner decision, which
takes a model call of 0.5 s and more when a model decides. A search is a few round trips (the endpoint lookup,
one read of the candidates with their rows' text hashes, the vectors the process cache lacks) and one numpy
product, so its figure follows the machine's load. Exits 1 on a miss.

Usage: `python -m bench.search_bench [--rows 1000] [--queries 50]`.
"""

import argparse
import os
import random
import resource
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.runtime_bench import Target, databases_drop, databases_recreate, django_setup, target_from  # noqa: E402

DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/lomote_bench"
WARM_UP = 10
TARGET_P95_MS = 200.0

KINDS = ["poster", "logo", "banner", "flyer", "teaser video", "menu", "mascot", "label", "storyboard", "brochure"]
STYLES = ["retro", "minimal", "bold", "playful", "warm", "pastel", "art deco", "neon", "vintage", "calm"]
PLACES = ["coffee shop", "bakery", "jazz night", "yoga studio", "bookshop", "brewery", "florist", "cinema"]
# (French request, the English title it means): placed among the rows, each must come first.
CROSS = [
    ("affiches rétro pour le café", "Retro posters for the coffee shop"),
    ("la photo de mon chat", "Cat photo"),
    ("logo pour la boulangerie", "Bakery logo, hand-drawn"),
    ("menu de la brasserie", "Brewery menu card"),
    ("storyboard de la pub pour le cinéma", "Cinema ad storyboard"),
]
# (English request, the French title it means).
CROSS_BACK = [
    ("the flyer for the jazz evening", "Flyer pour la soirée jazz"),
    ("yoga studio mascot", "Mascotte du studio de yoga"),
]


def search_target(url: str) -> Target:
    base = target_from(url)
    name = base.name if base.name.endswith("_search") else f"{base.name}_search"
    return target_from(urlsplit(url)._replace(path=f"/{name}").geturl())


def titles(rng: random.Random, n: int) -> list[str]:
    return [
        f"{rng.choice(STYLES).capitalize()} {rng.choice(KINDS)} for the {rng.choice(PLACES)} #{i}" for i in range(n)
    ]


def timed(calls) -> tuple[list[float], list]:
    times, results = [], []
    for call in calls:
        started = time.perf_counter()
        results.append(call())
        times.append((time.perf_counter() - started) * 1000)
    return times, results


def p95(times: list[float]) -> float:
    ordered = sorted(times)
    return ordered[max(0, round(0.95 * len(ordered)) - 1)]


def figures(times: list[float]) -> str:
    return f"p50 {statistics.median(times):6.1f}  p95 {p95(times):6.1f}  max {max(times):6.1f} ms"


def run(rows: int, queries: int) -> str:
    from django.contrib.auth import get_user_model

    from agents.models import Task, TaskStatus
    from agents.services.task_index import task_embeddings_backfill, task_search_similar
    from workspace.models import Artifact
    from workspace.search import artifact_search_meaning, reembed
    from workspace.search.embedders import offline_embedder, offline_embedder_reset
    from workspace.services.workspaces import workspace_create

    rng = random.Random(15)  # noqa: S311 - reproducible bench data, not a secret
    lines = []

    offline_embedder_reset()
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    model = offline_embedder()
    load = time.perf_counter() - started
    if model is None:
        return "MISSED: the offline embedding model did not load"
    rss = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before) / 1024
    lines.append(f"offline model {model.model_id}: loaded in {load:.2f} s, +{rss:.0f} MB resident")

    texts = [f"Make a {t.lower()} with the opening hours as text" for t in titles(rng, 200)]
    alone, _ = timed([lambda t=t: model.embed([t]) for t in texts])
    started = time.perf_counter()
    model.embed(texts)
    batched = (time.perf_counter() - started) * 1000 / len(texts)
    lines.append(f"embed one text: {figures(alone)}; in a batch of {len(texts)}: {batched:.2f} ms per text")

    owner = get_user_model().objects.create_user("bench-owner")
    workspace = workspace_create(user=owner, name="search bench")
    names = titles(rng, rows - len(CROSS) - len(CROSS_BACK))
    names += [title for _, title in CROSS + CROSS_BACK]
    rng.shuffle(names)
    Artifact.objects.bulk_create(
        [Artifact(workspace=workspace, kind="image", title=name, current_version=1) for name in names]
    )
    started = time.perf_counter()
    [report] = reembed(workspace_ids=[workspace.pk], kinds=["artifact"])
    embed_all = time.perf_counter() - started
    lines.append(f"{report.embedded} artifacts embedded in {embed_all:.2f} s ({embed_all * 1000 / rows:.2f} ms each)")

    Task.objects.bulk_create(
        [
            Task(workspace=workspace, created_by=owner, title=name, brief=f"Make it: {name.lower()}", status=status)
            for name, status in zip(names, [TaskStatus.IDLE, TaskStatus.DONE] * rows, strict=False)
        ]
    )
    started = time.perf_counter()
    task_embeddings_backfill(workspace_id=workspace.pk)
    backfill = time.perf_counter() - started
    lines.append(f"{rows} tasks indexed (keyword rows and vectors) in {backfill:.2f} s")

    asks = [f"the {rng.choice(STYLES)} {rng.choice(KINDS)} for the {rng.choice(PLACES)}" for _ in range(queries)]
    for ask in asks[:WARM_UP]:
        artifact_search_meaning(workspace_id=workspace.pk, text=ask)
    artifact_times, _ = timed([lambda a=a: artifact_search_meaning(workspace_id=workspace.pk, text=a) for a in asks])
    task_times, _ = timed([lambda a=a: task_search_similar(workspace_id=workspace.pk, text=a) for a in asks])
    lines.append(f"artifact_search_meaning over {rows} artifacts: {figures(artifact_times)}")
    lines.append(f"task_search_similar over {rows} tasks:         {figures(task_times)}")

    first = 0
    for ask, title in CROSS + CROSS_BACK:
        found = artifact_search_meaning(workspace_id=workspace.pk, text=ask, limit=1)
        first += bool(found) and found[0][0].title == title
    lines.append(f"across languages: {first}/{len(CROSS) + len(CROSS_BACK)} requests found the object they mean first")

    worst = max(p95(artifact_times), p95(task_times))
    verdict = "ok" if worst < TARGET_P95_MS else "MISSED"
    load = os.getloadavg()[0]
    lines.append(
        f"{verdict}: p95 {worst:.1f} ms per search at {rows} rows (target < {TARGET_P95_MS:.0f} ms; "
        f"machine load {load:.1f} on {os.cpu_count()} cores)"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--keep", action="store_true", help="keep the bench database afterwards")
    args = parser.parse_args(argv)

    target = search_target(os.environ.get("DATABASE_URL") or DEFAULT_URL)
    text = "MISSED: the bench did not finish"
    databases_recreate(target)
    try:
        django_setup(target.url, 1)
        print(f"bench database {target.name}: semantic search over {args.rows} rows ...", flush=True)
        text = run(args.rows, args.queries)
        print(text)
    finally:
        if "django.db" in sys.modules:
            from django.db import connections

            connections.close_all()
        if not args.keep:
            databases_drop(target)
    return 1 if "MISSED" in text else 0


if __name__ == "__main__":
    sys.exit(main())
