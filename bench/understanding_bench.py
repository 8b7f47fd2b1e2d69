"""`make bench`, understanding section: every decision of the understanding layer (DESIGN §15, issue 32).

One process, no database (the layer imports no app). It prints, per decision, the accuracy on the held-out split
(the cases never used to pick exemplars or thresholds) and three targets:

- training and evaluation of every decision, from a cold process, take < 60 s on 2 cores;
- each decision reads its held-out split at ≥ 95 % (abstentions are wrong unless the expected label is "ask");
- reading one message through every decision adds < 20 ms (median over distinct messages from the labelled sets,
  so the encoder's cache of recent texts never answers; the encoder alone is the baseline measured in the same run).

Usage: `python -m bench.understanding_bench [--messages 200] [--min-heldout 95] [--max-ms 20] [--max-seconds 60]`.
"""

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.runner import target_line  # noqa: E402
from lomote.understanding.banks import cases_load  # noqa: E402
from lomote.understanding.classifier import DECISIONS, decision_get  # noqa: E402
from lomote.understanding.encoder import encoder_default  # noqa: E402
from lomote.understanding.evaluation import evaluate, split_accuracy  # noqa: E402


def messages_for_timing(count: int) -> list[str]:
    """Distinct texts from every decision's labelled set, in a fixed order."""
    seen: dict[str, None] = {}
    for name in DECISIONS:
        for case in cases_load(name):
            seen.setdefault(case.text, None)
    return list(seen)[:count]


def per_message_ms(texts: list[str], read) -> list[float]:
    timings = []
    for text in texts:
        started = time.perf_counter()
        read(text)
        timings.append((time.perf_counter() - started) * 1000)
    return timings


def read_every_decision(text: str) -> None:
    for name in DECISIONS:
        classifier = decision_get(name)
        classifier.decide_all(text) if classifier.bank.multi_label else classifier.decide(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=200)
    parser.add_argument("--min-heldout", type=float, default=95.0, help="percent, per decision")
    parser.add_argument("--max-ms", type=float, default=20.0, help="median ms per message, every decision")
    parser.add_argument("--max-seconds", type=float, default=60.0, help="training + evaluation, every decision")
    args = parser.parse_args(argv)
    # Training measured for real: an empty store, not the fits a previous process kept (lomote/understanding/fitted.py).
    os.environ["LOMOTE_UNDERSTANDING_CACHE"] = tempfile.mkdtemp(prefix="lomote-understanding-bench-")

    print(f"understanding: {len(DECISIONS)} decisions ({', '.join(DECISIONS)})")
    started = time.monotonic()
    encoder_default().encode(["a first message loads the weights"])
    loaded = time.monotonic()
    reports = [evaluate(name) for name in DECISIONS]
    total = time.monotonic() - started
    print(f"  encoder load {loaded - started:.1f} s; training + evaluation of every decision {total:.1f} s")
    lines = []
    for report in reports:
        heldout = 100 * split_accuracy(report, "heldout")
        train = 100 * split_accuracy(report, "train")
        print(
            f"  {report.decision:10} held-out {heldout:5.1f} %  train {train:5.1f} %  "
            f"abstained {100 * report.abstention_rate:4.1f} %  ({report.cases} cases; "
            f"training {report.seconds_train:.1f} s, evaluation {report.seconds_eval:.1f} s)"
        )
        ok = heldout >= args.min_heldout
        lines.append(target_line(f"{report.decision} held-out >= {args.min_heldout:g} %", ok, f"{heldout:.1f} %"))

    texts = messages_for_timing(args.messages)
    encoder = encoder_default()
    # The baseline first, on other texts than the layer reads after it: neither run is served by the cache.
    half = len(texts) // 2
    baseline = per_message_ms(texts[:half], lambda text: encoder.encode([text]))
    layer = per_message_ms(texts[half:], read_every_decision)
    base_ms, layer_ms = statistics.median(baseline), statistics.median(layer)
    p95 = sorted(layer)[int(0.95 * (len(layer) - 1))]
    print(
        f"  per message, every decision: median {layer_ms:.1f} ms, p95 {p95:.1f} ms over {len(layer)} messages; "
        f"the encoder alone {base_ms:.1f} ms (ratio {layer_ms / base_ms:.2f}x)"
    )
    lines.append(
        target_line(f"per message < {args.max_ms:g} ms (median)", layer_ms < args.max_ms, f"{layer_ms:.1f} ms")
    )
    lines.append(
        target_line(f"training + evaluation < {args.max_seconds:g} s", total < args.max_seconds, f"{total:.1f} s")
    )
    for line in lines:
        print(line)
    return 0 if all(line.endswith("PASS") for line in lines) else 1


if __name__ == "__main__":
    sys.exit(main())
