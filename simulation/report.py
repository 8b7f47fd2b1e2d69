"""The scenarios' report: a table on the terminal and var/scenarios/report.json, with the targets (seed §11.3)."""

import json
from collections.abc import Sequence
from pathlib import Path

from django.conf import settings

from simulation.metrics import totals
from simulation.runner import Result

TARGETS = (
    ("stalls", "0", lambda m: m.stalls == 0),
    ("duplicate generations", "0", lambda m: m.duplicate_generations == 0),
    ("unnecessary confirmations", "0", lambda m: m.unnecessary_confirmations == 0),
    ("follow-ups routed right", "100 %", lambda m: m.follow_ups_right == m.follow_ups),
    ("split copies", "0", lambda m: m.split_copies == 0),
)
COLUMNS = (
    ("scenario", 26),
    ("variant", 7),
    ("ok", 4),
    ("stalls", 6),
    ("dups", 5),
    ("unnec.", 6),
    ("follow-ups", 10),
    ("splits", 6),
    ("checks", 7),
    ("turns", 5),
    ("calls", 5),
    ("tokens", 7),
    ("credits", 7),
    ("secs", 6),
)


def report_path() -> Path:
    return Path(settings.VAR_DIR) / "scenarios" / "report.json"


def _row(result: Result) -> list[str]:
    m = result.metrics
    return [
        result.name,
        result.variant,
        "yes" if result.passed else "NO",
        str(m.stalls),
        str(m.duplicate_generations),
        str(m.unnecessary_confirmations),
        f"{m.follow_ups_right}/{m.follow_ups}",
        str(m.split_copies),
        f"{result.checks - len(result.failed_checks)}/{result.checks}",
        str(m.turns),
        str(m.model_calls),
        str(m.tokens),
        str(m.credits),
        f"{result.seconds:.1f}",
    ]


def report_table(results: Sequence[Result]) -> str:
    lines = ["  ".join(name.ljust(width) for name, width in COLUMNS)]
    for result in results:
        lines.append("  ".join(cell.ljust(width) for cell, (_, width) in zip(_row(result), COLUMNS, strict=True)))
    total = totals(r.metrics for r in results)
    lines.append("")
    for label, target, met in TARGETS:
        value = {
            "stalls": total.stalls,
            "duplicate generations": total.duplicate_generations,
            "unnecessary confirmations": total.unnecessary_confirmations,
            "follow-ups routed right": f"{total.follow_ups_right}/{total.follow_ups} "
            f"({100 * total.follow_ups_routed_right:.0f} %)",
            "split copies": total.split_copies,
        }[label]
        lines.append(f"{label:<28} {value!s:<14} target {target:<6} {'PASS' if met(total) else 'MISS'}")
    lines.append(
        f"{'totals':<28} {total.turns} turns, {total.model_calls} model calls, {total.tokens} tokens, "
        f"{total.credits} credits, {sum(r.seconds for r in results):.0f} s"
    )
    for result in results:
        problems = [*result.metrics.findings, *result.failed_checks, *([result.error] if result.error else [])]
        if not result.reconciled:
            problems.append("the wallet does not reconcile with the ledger")
        for problem in problems:
            lines.append(f"  {result.name} ({result.variant}): {problem}")
    return "\n".join(lines)


def report_write(results: Sequence[Result]) -> Path:
    total = totals(r.metrics for r in results)
    data = {
        "scenarios": [r.as_dict() for r in results],
        "totals": total.as_dict(),
        "targets": {label: {"target": target, "met": met(total)} for label, target, met in TARGETS},
        "passed": all(r.passed for r in results),
    }
    path = report_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path
