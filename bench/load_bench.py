"""`make bench`: throughput and latency of the running system (issue 17 item 2).

On its own PostgreSQL database (created, migrated and dropped like bench/runtime_bench.py), with the Redis
channel layer when a Redis server answers (REDIS_URL, default redis://127.0.0.1:6379/0), it measures:

(a) steps/s with 1, 2 and 4 worker processes over 100 concurrent tasks. Each task has a queued turn of
    --steps steps (the fixed model and transactional no-op tool of runtime_bench); worker processes, forked
    from this one, take turns from a shared queue and run them with `turn_run`. steps/s = all steps / wall
    time from the first claim to the last turn's end. The workers share one PostgreSQL on the same 2 cores.
(b) enqueue → turn start on the ORM broker: a real `manage.py qcluster` process; tasks are created one
    after another through `task_create` (the turn is enqueued on commit, as in production), and each turn's
    `started_at - enqueued_at` is read back. The turns run the built-in scripted planner (no network).
(c) event commit → WebSocket client: a real daphne process with the Redis layer, a WebSocket client (the
    `websockets` library) logged in with a session cookie; events are appended one at a time in their own
    transactions, timed right after COMMIT, and the client's receive time of the same seq is subtracted.
(d) HTTP load with locust (bench/locustfile.py) against that daphne, with the qcluster running: simulated
    people post messages, act on their cards and read events. Skipped with a line saying so when locust is
    not installed (it is not in requirements-bench.txt yet: LOCUST_VERSION is the version to pin).

Usage: `python -m bench.load_bench [--tasks 100] [--steps 10] [--workers 1,2,4] [--turns 20] [--turn-gap 1]
[--ws-events 200] [--http-users 100] [--http-seconds 120] [--parts abcd]`. LOMOTE_BENCH_HTTP_SECONDS overrides the HTTP
duration (`make bench` uses a shorter run; the issue's figure is 120 s).
"""

import argparse
import contextlib
import importlib.util
import json
import multiprocessing
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import runtime_bench as rb  # noqa: E402 - after the path set-up above

TARGET_BROKER_P50_MS = 15.0
TARGET_WS_P50_MS = 50.0
TARGET_HTTP_ERRORS = 0
LOCUST_VERSION = "2.47.0"  # the version to pin in requirements-bench.txt
DEFAULT_REDIS = "redis://127.0.0.1:6379/0"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = (len(ordered) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def verdict(ok: bool, miss: str) -> str:
    return "PASS" if ok else f"MISS ({miss})"


def redis_reachable(url: str) -> bool:
    try:
        import redis

        return bool(redis.Redis.from_url(url, socket_connect_timeout=1).ping())
    except Exception:
        return False


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- (a) steps/s with N worker processes ------------------------------------------------------------------


def _worker(turns, results, start, name: str) -> None:
    """A forked worker: its own database connection, the parent's fixed model and tool; runs turns until told.

    It connects first and says so; the clock starts when every worker is ready (a long-lived worker's start-up
    is not part of a step)."""
    from django.db import connection, connections

    import agents.runtime.loop as loop

    connections.close_all()  # never share the parent's socket
    connection.ensure_connection()
    results.put(("ready", name))
    start.wait()
    done, last = 0, None
    while True:
        turn_id = turns.get()
        if turn_id is None:
            break
        outcome = loop.turn_run(turn_id=turn_id, generation=1, holder=name)
        if outcome != "answered":
            results.put(("error", f"turn {turn_id}: {outcome}"))
        done += 1
        last = time.perf_counter()
    connections.close_all()
    results.put(("done", (done, last)))


def throughput(bench: "rb.LomoteBench", *, tasks: int, steps: int, workers: int) -> float:
    from django.db import connections

    from agents.models import Step

    turns = [bench._turn() for _ in range(tasks)]
    connections.close_all()
    ctx = multiprocessing.get_context("fork")
    queue, results, start = ctx.Queue(), ctx.Queue(), ctx.Event()
    for turn in turns:
        queue.put(turn.pk)
    for _ in range(workers):
        queue.put(None)
    processes = [ctx.Process(target=_worker, args=(queue, results, start, f"bench-w{i}")) for i in range(workers)]
    for process in processes:
        process.start()
    ready, finished, errors = 0, [], []
    while ready < workers:
        kind, value = results.get(timeout=120)
        ready += kind == "ready"
    began = time.perf_counter()
    start.set()
    while len(finished) < workers:
        kind, value = results.get(timeout=600)
        (finished if kind == "done" else errors).append(value)
    for process in processes:
        process.join(30)
    ended = max(last for _, last in finished if last is not None)
    if errors:
        raise SystemExit(f"throughput run failed: {errors[:3]}")
    made = Step.objects.filter(turn_id__in=[t.pk for t in turns]).count()
    if made != tasks * steps:
        raise SystemExit(f"throughput run made {made} steps, expected {tasks * steps}")
    return made / (ended - began)


# --- processes: qcluster and daphne -----------------------------------------------------------------------


def child_env(url: str, redis_url: str | None, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"REDIS_URL", "DATABASE_URL"}}
    env.update(
        DATABASE_URL=url,
        DJANGO_SETTINGS_MODULE="lomote.settings",
        DEBUG="0",  # production settings (no query log), but plain HTTP on loopback: no TLS redirect here
        SECURE_SSL_REDIRECT="0",
        LOG_LEVEL="WARNING",
        PYTHONPATH=str(ROOT),
        SECRET_KEY=os.environ["SECRET_KEY"],
        **extra,
    )
    if redis_url:
        env["REDIS_URL"] = redis_url
    return env


@contextlib.contextmanager
def process(args: list[str], env: dict[str, str], ready=None, what: str = ""):
    log = tempfile.TemporaryFile()
    proc = subprocess.Popen(args, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)  # noqa: S603 - our own commands

    def tail(size: int = 2000) -> str:
        log.seek(0)
        return log.read().decode(errors="replace")[-size:]

    proc.tail = tail  # what the process said, for a report on errors

    try:
        deadline = time.monotonic() + 60
        while ready is not None and not ready():
            if proc.poll() is not None:
                raise SystemExit(f"{what} exited ({proc.returncode}): {tail()}")
            if time.monotonic() > deadline:
                raise SystemExit(f"{what} did not start in 60 s: {tail()}")
            time.sleep(0.1)
        yield proc
    finally:
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
        log.close()


def healthy(url: str) -> bool:
    """daphne answers: any HTTP answer of the API (401 without credentials) will do; /healthz needs a login."""
    try:
        with urllib.request.urlopen(f"{url}/api/v1/workspaces/", timeout=2) as response:  # noqa: S310 - local
            return response.status < 500
    except urllib.error.HTTPError as exc:
        return exc.code < 500
    except OSError:
        return False


# --- (b) enqueue → turn start on the ORM broker -----------------------------------------------------------


class FixedChatServer:
    """An OpenAI-compatible endpoint on loopback that answers every chat completion at once with "Done.":
    the broker's turns then finish in one quick step, so the workers are idle when the next turn is enqueued
    and the figure is the broker's latency, not a queue behind slow turns."""

    BODY = json.dumps(
        {
            "id": "chatcmpl-bench",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": "bench-fixed-1",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "Done."}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
        }
    ).encode()

    def __init__(self):
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        body = self.BODY

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server's naming
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                ok = self.path.rstrip("/").endswith("/chat/completions")
                self.send_response(200 if ok else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body) if ok else 2))
                self.end_headers()
                self.wfile.write(body if ok else b"{}")

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def broker_idle(*, count: int, timeout: float) -> None:
    """Wait until `count` turn jobs have finished and nothing is queued."""
    from django_q.models import OrmQ, Success

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if Success.objects.filter(func="agents.tasks.run_turn").count() >= count and not OrmQ.objects.exists():
            time.sleep(1)
            return
        time.sleep(0.2)
    raise SystemExit(f"the warm-up turns did not finish in {timeout:g} s")


def broker_latency(*, access, turns: int, gap: float, timeout: float) -> tuple[list[float], list[float]]:
    """Create tasks one by one (each enqueues its first turn when its transaction commits). Returns, in ms,
    for each turn: the job handed to the broker (`async_task`) → the turn claimed by a worker, and the turn
    created (`enqueued_at`, inside task_create's transaction) → claimed."""
    from django.utils import timezone

    import agents.queue as queue
    from agents.models import Turn
    from agents.services.tasks import task_create

    handed: dict[int, object] = {}
    real = queue._enqueue

    def enqueue(turn_id: int, generation: int) -> None:
        handed[turn_id] = timezone.now()
        real(turn_id, generation)

    queue._enqueue = enqueue
    try:
        created = []
        for i in range(turns):
            task = task_create(access=access, title=f"Broker {i}", brief="Say hello in one line.")
            created.append(task.pk)
            time.sleep(gap)
    finally:
        queue._enqueue = real
    deadline = time.monotonic() + timeout
    while True:
        rows = list(Turn.objects.filter(task_id__in=created, number=1).values_list("pk", "enqueued_at", "started_at"))
        if all(started is not None for _, _, started in rows) or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    ms = 1000
    from_job = [(s - handed[pk]).total_seconds() * ms for pk, _, s in rows if s is not None and pk in handed]
    from_turn = [(s - e).total_seconds() * ms for _, e, s in rows if s is not None]
    return from_job, from_turn


# --- (c) event commit → WebSocket client ------------------------------------------------------------------


def ws_latency(*, base_url: str, workspace_id: int, cookie: str, events: int, gap: float) -> list[float]:
    from django.db import transaction
    from websockets.sync.client import connect

    from workspace.services.events import event_append

    received: dict[int, float] = {}
    replayed = threading.Event()
    host = base_url.removeprefix("http://")
    uri = f"ws://{host}/ws/workspaces/{workspace_id}/"
    headers = {"Cookie": cookie, "Origin": base_url}

    def listen(ws) -> None:
        with contextlib.suppress(Exception):
            for frame in ws:
                now = time.perf_counter()
                message = json.loads(frame)
                if message.get("type") == "replayed":
                    replayed.set()
                elif message.get("type") == "event":
                    received.setdefault(message["seq"], now)

    committed: dict[int, float] = {}
    with connect(uri, additional_headers=headers, open_timeout=10) as ws:
        listener = threading.Thread(target=listen, args=(ws,), daemon=True)
        listener.start()
        if not replayed.wait(10):
            raise SystemExit("the WebSocket did not finish its replay in 10 s")
        for i in range(events):
            stamp: dict[str, float] = {}
            with transaction.atomic():
                # Registered first, so it runs first after COMMIT: before the push hint is sent.
                transaction.on_commit(lambda s=stamp: s.setdefault("t", time.perf_counter()))
                seq = event_append(workspace_id=workspace_id, kind="bench.ping", data={"i": i}).seq
            committed[seq] = stamp["t"]
            time.sleep(gap)
        deadline = time.monotonic() + 10
        while len(received) < len(committed) and time.monotonic() < deadline:
            time.sleep(0.05)
    return [(received[seq] - t) * 1000 for seq, t in committed.items() if seq in received]


def hint_cost(*, redis_url: str, workspace_id: int, hints: int = 500) -> tuple[float, float]:
    """What a committing writer pays for its push hints (lomote.kernel.events): microseconds per hint in the writer,
    and Redis connections opened per hint (async_to_sync opened and closed one for each: ~3.7 ms inside a step)."""
    import redis

    from lomote.kernel.events import hints as sender
    from lomote.kernel.events import push_hint

    stats = redis.Redis.from_url(redis_url)
    opened = stats.info("stats")["total_connections_received"]  # its own connection is open from here on
    start = time.perf_counter()
    for seq in range(1, hints + 1):
        push_hint(workspace_id, seq)
    elapsed = time.perf_counter() - start
    sender.wait_idle(30)
    return elapsed / hints * 1e6, (stats.info("stats")["total_connections_received"] - opened) / hints


# --- (d) HTTP load with locust ----------------------------------------------------------------------------


def locust_available() -> str | None:
    """The locust executable next to this Python, if locust is installed. Looked up, never imported: importing
    locust monkey-patches the whole process with gevent, and the bench's own threads and database stop working."""
    if importlib.util.find_spec("locust") is None:
        return None
    exe = Path(sys.executable).with_name("locust")
    return str(exe) if exe.exists() else shutil.which("locust")


def people_make(*, count: int, per_workspace: int = 10) -> list[dict]:
    """`count` people in workspaces of `per_workspace`: each with a task of their own and an editor API key."""
    from django.contrib.auth import get_user_model

    from agents.services.tasks import task_create
    from workspace.selectors import workspace_access
    from workspace.services.workspaces import api_key_create, workspace_create

    people, owner = [], None
    for i in range(count):
        if i % per_workspace == 0:
            owner = get_user_model().objects.create_user(username=f"load-owner-{i}", password=None)
            workspace = workspace_create(user=owner, name=f"Load {i // per_workspace}")
            access = workspace_access(principal=owner, workspace_id=workspace.pk)
        _, key = api_key_create(access=access, name=f"person {i}", role="editor")
        task = task_create(access=access, title=f"Load task {i}", brief="Say hello in one line.")
        people.append({"workspace": workspace.pk, "task": task.pk, "key": key})
    return people


def http_load(*, exe: str, base_url: str, people: list[dict], users: int, seconds: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        people_file = Path(tmp) / "people.json"
        people_file.write_text(json.dumps(people))
        prefix = str(Path(tmp) / "load")
        env = {**os.environ, "LOMOTE_LOAD_PEOPLE": str(people_file)}
        subprocess.run(  # noqa: S603 - our own locustfile
            [
                exe,
                "-f",
                str(ROOT / "bench" / "locustfile.py"),
                "--headless",
                "--users",
                str(users),
                "--spawn-rate",
                str(max(1, users // 5)),
                "--run-time",
                f"{seconds}s",
                "--host",
                base_url,
                "--csv",
                prefix,
                "--only-summary",
                "--exit-code-on-error",
                "0",
            ],
            env=env,
            cwd=ROOT,
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=seconds + 120,
        )
        import csv

        with open(f"{prefix}_stats.csv", newline="") as f:
            total = next(row for row in csv.DictReader(f) if row["Name"] == "Aggregated")
        with open(f"{prefix}_failures.csv", newline="") as f:  # what went wrong, not only how often
            failures = [
                f"{row['Occurrences']}× {row['Method']} {row['Name']}: {row['Error']}" for row in csv.DictReader(f)
            ]
    return {
        "failures": failures,
        "requests": int(total["Request Count"]),
        "errors": int(total["Failure Count"]),
        "rps": float(total["Requests/s"]),
        "p50": float(total["50%"]),
        "p95": float(total["95%"]),
    }


def last_traceback(log: str) -> list[str]:
    """The last exception a server logged: our own frames in it, then the exception line."""
    said = log.splitlines()
    raised = [i for i, line in enumerate(said) if line.startswith("Traceback")]
    if not raised:
        return []
    block = said[raised[-1] + 1 :]
    end = next((i for i, line in enumerate(block) if not line.startswith(" ")), len(block))
    ours = [line for line in block[:end] if line.strip().startswith('File "') and "/.venv/" not in line]
    return [
        "  daphne's last traceback (our frames, then the exception):",
        *(f"    {line.strip()}" for line in [*ours[-4:], *block[end : end + 1]]),
    ]


# --- main -------------------------------------------------------------------------------------------------


def redis_layer_install(redis_url: str) -> None:
    """django_setup leaves Redis out for runtime_bench; here the layer is part of the figures."""
    from django.conf import settings

    from lomote.channel_layers import redis_channel_layers

    os.environ["REDIS_URL"] = redis_url
    settings.REDIS_URL = redis_url
    settings.CHANNEL_LAYERS = redis_channel_layers(redis_url)


def part_throughput(args, lines: list[str]) -> None:
    import agents.queue as queue
    import agents.runtime.loop as loop

    real_enqueue, real_provider = queue._enqueue, loop.provider_for_lease
    bench = rb.LomoteBench(args.steps)
    bench.tool = rb.BENCH_TOOL  # the transactional no-op: each step's tool commits with its decision
    try:
        rates = {}
        for workers in [int(w) for w in args.workers.split(",")]:
            print(f"throughput, {workers} worker process(es) ...", flush=True)
            rates[workers] = throughput(bench, tasks=args.tasks, steps=args.steps, workers=workers)
    finally:
        bench.close()
        queue._enqueue, loop.provider_for_lease = real_enqueue, real_provider
    lines.append(
        f"Throughput: {args.tasks} concurrent tasks in one workspace × {args.steps} steps each "
        "(fixed model, transactional no-op tool), worker processes forked from the bench:"
    )
    for workers, rate in rates.items():
        lines.append(f"  {workers} worker process(es): {rate:,.0f} steps/s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=100)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--turns", type=int, default=20, help="turns enqueued for the broker latency")
    # Longer than one turn's job (a quick one-step turn), so a turn waits for the broker, not for a busy worker.
    parser.add_argument("--turn-gap", type=float, default=1.0, help="seconds between enqueued turns")
    parser.add_argument("--ws-events", type=int, default=200)
    parser.add_argument("--http-users", type=int, default=100)
    parser.add_argument("--http-seconds", type=int, default=int(os.environ.get("LOMOTE_BENCH_HTTP_SECONDS", "120")))
    parser.add_argument("--parts", default="abcd", help="a: steps/s, b: broker, c: WebSocket, d: HTTP load")
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args(argv)

    url = os.environ.get("DATABASE_URL") or rb.DEFAULT_URL
    target = rb.target_from(url)
    target = rb.target_from(urlunsplit(urlsplit(target.url)._replace(path=f"/{target.name}_load")))
    redis_url = os.environ.get("REDIS_URL") or DEFAULT_REDIS
    redis_url = redis_url if redis_reachable(redis_url) else None
    rb.databases_recreate(target)
    os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(50))
    lines: list[str] = []
    targets: list[str] = []
    try:
        rb.django_setup(target.url, max(args.steps, 50))
        if redis_url:
            redis_layer_install(redis_url)
        from django.conf import settings
        from django.contrib.auth import get_user_model
        from django.test import Client

        from agents.models import ModelProfile, ProviderKind
        from workspace.selectors import workspace_access
        from workspace.services.workspaces import workspace_create

        print(f"bench database {target.name}; Redis layer: {'yes' if redis_url else 'no (not reachable)'}")
        if "a" in args.parts:
            part_throughput(args, lines)
        if not set(args.parts) & set("bcd"):
            print("\n".join(["", *lines]))
            return 0

        user = get_user_model().objects.create_user(username="load-bench", password=None)
        workspace = workspace_create(user=user, name="Load bench")
        access = workspace_access(principal=user, workspace_id=workspace.pk)
        chat = FixedChatServer()
        ModelProfile.objects.create(
            workspace=workspace,
            name="bench fixed",
            provider=ProviderKind.OPENAI_COMPAT,
            model="bench-fixed-1",
            base_url=chat.url,
            is_default=True,
        )
        env = child_env(target.url, redis_url, Q_WORKERS="2", CONN_MAX_AGE="60")
        port = free_port()
        base_url = f"http://127.0.0.1:{port}"
        qcluster = [sys.executable, "manage.py", "qcluster"]
        daphne = [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "lomote.asgi:application"]
        with (
            process(qcluster, env, what="qcluster"),
            process(daphne, env, lambda: healthy(base_url), "daphne") as server,
        ):
            if "b" in args.parts:
                print("enqueue → turn start on the ORM broker ...", flush=True)
                # Warm-up, not counted: a turn for each worker (a worker's first job loads the models its
                # process keeps), then wait until the queue is empty and those jobs have ended.
                broker_idle(count=len(broker_latency(access=access, turns=4, gap=0.1, timeout=180)[1]), timeout=240)
                waits, since_created = broker_latency(access=access, turns=args.turns, gap=args.turn_gap, timeout=60)
                print("  waits (ms):", [round(w) for w in waits], flush=True)
                b50, b95 = percentile(waits, 0.5), percentile(waits, 0.95)
                c50, c95 = percentile(since_created, 0.5), percentile(since_created, 0.95)
                lines.append(
                    f"Enqueue → turn start (ORM broker woken by NOTIFY, poll {settings.Q_CLUSTER['poll']} s, "
                    "2 workers), "
                    f"{len(waits)}/{args.turns} turns one every {args.turn_gap:g} s: job handed to the broker → "
                    f"turn claimed p50 {b50:.1f} ms, p95 {b95:.1f} ms; from the turn's creation in task_create's "
                    f"transaction: p50 {c50:.1f} ms, p95 {c95:.1f} ms"
                )
                targets.append(
                    f"  enqueue → turn start p50 <= {TARGET_BROKER_P50_MS:g} ms: {b50:.1f} ms -> "
                    + verdict(
                        b50 <= TARGET_BROKER_P50_MS and len(waits) == args.turns,
                        f"{b50 - TARGET_BROKER_P50_MS:+.1f} ms",
                    )
                )
            if "c" in args.parts:
                print("event commit → WebSocket client ...", flush=True)
                client = Client()
                client.force_login(user)
                cookie = f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"
                pushes = ws_latency(
                    base_url=base_url, workspace_id=workspace.pk, cookie=cookie, events=args.ws_events, gap=0.02
                )
                w50, w95 = percentile(pushes, 0.5), percentile(pushes, 0.95)
                layer = "Redis layer" if redis_url else "in-memory layer (Redis not reachable)"
                lines.append(
                    f"Event commit → WebSocket client ({layer}, daphne), {len(pushes)}/{args.ws_events} events, "
                    f"one every 20 ms: p50 {w50:.1f} ms, p95 {w95:.1f} ms"
                )
                if redis_url:
                    micros, opened = hint_cost(redis_url=redis_url, workspace_id=workspace.pk)
                    lines.append(
                        f"Push hint in the committing writer (Redis layer): {micros:.0f} µs each, "
                        f"{opened:.3f} Redis connections opened per hint"
                    )
                ok = w50 < TARGET_WS_P50_MS and bool(redis_url) and len(pushes) == args.ws_events
                targets.append(
                    f"  event commit → WebSocket p50 < {TARGET_WS_P50_MS:g} ms: {w50:.1f} ms -> "
                    + verdict(ok, f"{w50:.1f} ms" if redis_url else "no Redis layer")
                )
            if "d" in args.parts:
                exe = locust_available()
                if exe is None:
                    lines.append(
                        "HTTP load (locust): locust is not installed in this environment — skipped "
                        f"(bench/locustfile.py is ready; it needs locust=={LOCUST_VERSION} in requirements-bench.txt)"
                    )
                    targets.append("  HTTP load 0 errors: not measured (locust not installed)")
                else:
                    print(f"HTTP load: {args.http_users} people for {args.http_seconds} s ...", flush=True)
                    people = people_make(count=args.http_users)
                    load = http_load(
                        exe=exe, base_url=base_url, people=people, users=args.http_users, seconds=args.http_seconds
                    )
                    lines.append(
                        f"HTTP load (locust, {args.http_users} people, {args.http_seconds} s, daphne + qcluster): "
                        f"{load['requests']} requests, {load['rps']:.1f} req/s, p50 {load['p50']:.0f} ms, "
                        f"p95 {load['p95']:.0f} ms, {load['errors']} errors"
                    )
                    lines.extend(f"  {failure}" for failure in load["failures"][:10])
                    if load["errors"]:  # the server's own words for them
                        lines.extend(last_traceback(server.tail(200_000)))
                    targets.append(
                        f"  HTTP load errors = {TARGET_HTTP_ERRORS}: {load['errors']} -> "
                        + verdict(load["errors"] == TARGET_HTTP_ERRORS, f"{load['errors']} errors")
                    )
        print("\n".join(["", *lines, "Targets:", *targets]))
    finally:
        if "django.db" in sys.modules:
            from django.db import connections

            connections.close_all()
        if not args.keep:
            rb.databases_drop(target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
