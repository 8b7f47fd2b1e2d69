"""The resume evaluator through `manage.py resume_check`: one case per verdict, from tests/resume_cases/.

Each case file is what the command reads ({checkpoint, context, receipts}) plus `expect`: the fields of the
printed result it must have, or {"exit": 2} for malformed input.
"""

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from agents.resume import Verdict, case_evaluate, checkpoint_parse

CASES = sorted((Path(__file__).parent.parent / "resume_cases").glob("*.json"))
ROOT = Path(__file__).resolve().parents[2]


def _run(path: Path) -> dict:
    out = io.StringIO()
    call_command("resume_check", str(path), stdout=out)
    return json.loads(out.getvalue())


def test_every_verdict_has_a_case():
    verdicts = {json.loads(p.read_text())["expect"].get("verdict") for p in CASES}
    assert {v.value for v in Verdict} <= verdicts


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_case(path):
    expect = json.loads(path.read_text())["expect"]
    if expect.get("exit") == 2:
        with pytest.raises(CommandError) as caught:
            _run(path)
        assert caught.value.returncode == 2
        assert str(caught.value).startswith("Malformed input:") or "missing" in str(caught.value)
        return
    result = _run(path)
    for key, value in expect.items():
        assert result[key] == value, (key, result)
    assert result["writes"] == 0  # a resume never acts on the target
    assert result["proposal"] is (result["verdict"] == "next_step_proposed")
    checkpoint_parse(result["checkpoint"])  # the new checkpoint is itself a valid checkpoint


def test_resuming_a_saved_result_again_looks_nothing_up_and_completes_once():
    case = json.loads((ROOT / "tests/resume_cases/17_receipt_matches.json").read_text())

    first = case_evaluate(case)
    assert first.lookups == 1 and first.to_json()["completed"] == ["88:2:1", "88:3:1"]
    again = {**case, "checkpoint": first.to_json()["checkpoint"]}
    second = case_evaluate(again)
    third = case_evaluate({**case, "checkpoint": second.to_json()["checkpoint"]})
    for result in (second, third):
        assert result.lookups == 0 and result.writes == 0
        assert result.to_json()["completed"] == ["88:2:1", "88:3:1"]
        assert (result.to_json()["spent"], result.to_json()["held"]) == (30, 0)


def test_refusals_never_call_the_lookup():
    case = json.loads((ROOT / "tests/resume_cases/02_tenant_mismatch.json").read_text())
    from agents.resume import context_parse, evaluate

    def lookup(op):
        raise AssertionError("a refused checkpoint must not be looked up")

    result = evaluate(checkpoint_parse(case["checkpoint"]), context_parse(case["context"]), lookup)
    assert result.verdict == Verdict.TENANT_MISMATCH and result.lookups == 0


def test_a_failing_lookup_keeps_the_action_unknown_and_its_hold():
    from agents.resume import ReceiptLookupUnavailable, context_parse, evaluate

    case = json.loads((ROOT / "tests/resume_cases/17_receipt_matches.json").read_text())

    def down(op):
        raise ReceiptLookupUnavailable("the job store did not answer")

    result = evaluate(checkpoint_parse(case["checkpoint"]), context_parse(case["context"]), down)
    out = result.to_json()
    assert out["verdict"] == "action_still_unknown" and out["pendingAction"] == "88:3:1"
    assert (out["spent"], out["held"], out["proposal"]) == (20, 10, False)


def test_the_command_exits_2_with_a_message_on_stdin_garbage():
    done = subprocess.run(
        [sys.executable, "manage.py", "resume_check", "-"], input="{not json", capture_output=True, text=True, cwd=ROOT
    )
    assert done.returncode == 2 and "is not JSON" in done.stderr and done.stdout == ""
    done = subprocess.run(
        [sys.executable, "manage.py", "resume_check", str(ROOT / "tests/resume_cases/13_no_receipt.json")],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 0 and json.loads(done.stdout)["verdict"] == "action_not_found_review"


def test_the_evaluator_is_pure_domain_code():
    """No database, no Django: it can be run anywhere a checkpoint travels (import-linter checks Lomote's apps)."""
    import ast

    tree = ast.parse((ROOT / "agents/resume.py").read_text())
    imported = {
        (node.module if isinstance(node, ast.ImportFrom) else alias.name).split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    assert imported <= {"json", "collections", "dataclasses", "enum", "typing", "pydantic"}, imported
