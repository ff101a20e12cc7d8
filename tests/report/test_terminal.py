"""The end of `run` and `report` in the terminal: the per-arm table, the verdict and its checks, in the same words."""

from __future__ import annotations

import types
from pathlib import Path

import pytest

from harness.cli import main
from harness.report.terminal import arm_table, check_mark, report_lines, wrap_line

MODEL = "openai/gpt-4o-mini"


def _row(arm: str, metric: str, value: float | None, n: int = 10, low: float | None = None,
         high: float | None = None) -> dict:
    return {"model": MODEL, "arm": arm, "category": "all", "metric": metric, "value": value, "ci_low": low,
            "ci_high": high, "n": n}


def _summary() -> dict:
    metrics = []
    for arm, acc, errors, leaks in (("history_only", 0.4, 0.0, 0), ("recall", 0.7, 0.2, 1)):
        metrics += [
            _row(arm, "continuity_accuracy", acc, 8, acc - 0.1, acc + 0.1),
            _row(arm, "unsupported_claim_rate", 0.125, 8),
            _row(arm, "tool_leakage_count", float(leaks), 8),
            _row(arm, "answer_leakage_rate", 0.25 if leaks else 0.0, 8),
            _row(arm, "error_rate", errors, 10),
            _row(arm, "prompt_tokens", 1200.0, 8),
            _row(arm, "completion_tokens", 34.4, 8),
            _row(arm, "cost_usd", 0.00123, 8),
            _row(arm, "cached_samples", 3.0, 10),
            {**_row(arm, "continuity_accuracy", 0.0, 2), "category": "preference"},  # per category: not a row
        ]
    checks = [
        {"name": "continuity_improves", "passed": True, "reason": "continuity +0.30 [+0.10, +0.50] > 0.00"},
        {"name": "unsupported_claims_within_tolerance", "passed": None, "reason": "unsupported claims undecided: x"},
        {"name": "no_tool_leakage", "passed": False, "reason": "tool-level leaks 1 (Host defect when > 0; must be 0)"},
    ]
    return {"run": {"arms": ["history_only", "recall"]}, "metrics": metrics,
            "verdict": {"status": "fail", "per_model": {MODEL: {"status": "fail", "checks": checks}}}}


def test_the_arm_table_has_a_row_per_arm_with_interval_claims_leaks_errors_tokens_cost_and_cache() -> None:
    lines = arm_table(_summary())
    assert lines[0].split("  ")[0].strip() == "model · arm" and len(lines) == 6
    assert lines[1] == MODEL  # the model on a line of its own, its arms indented under it
    recall = lines[3]
    assert recall.startswith("  recall ")
    for shown in ("0.70 [0.60, 0.80]", "0.12", "1/2", "2/10", "1,234", "$0.00123"):
        assert shown in recall, (shown, recall)
    assert "0/10" in lines[2] and "0/0" in lines[2]  # history_only: no error, no leak
    assert lines[4] == "continuity [95% CI]; leaks tool-level/answers; tokens and cost per sample"
    assert lines[5].startswith("cached: 3/10 in every arm")


def test_the_arm_table_columns_line_up() -> None:
    lines = arm_table(_summary())
    rows = [lines[0], *(line for line in lines if line.startswith("  "))]
    assert len(rows) == 3 and len({len(line) for line in rows}) == 1


def test_the_arm_table_and_notes_of_the_built_in_arms_fit_80_columns() -> None:
    summary = _summary()
    for row in list(summary["metrics"]):
        if row["arm"] == "recall":
            summary["metrics"].append({**row, "arm": "full_history"})
    summary["metrics"] = [{**r, "value": 0.00123456} if r["metric"] == "cost_usd" else r for r in summary["metrics"]]
    summary["run"]["arms"] = ["history_only", "recall", "full_history"]
    lines = arm_table(summary)
    assert len(lines) == 7 and all(len(line) <= 80 for line in lines), "\n".join(lines)
    note = ("note: offline/reference: the observed continuity difference +0.07 (recall - history_only) is below the "
            "suite's minimum detectable effect 0.20 (60 scenarios, 80% power)")
    wrapped = wrap_line(note, 80)
    assert len(wrapped) == 3 and all(len(line) <= 80 for line in wrapped) and wrapped[1].startswith("      history")
    assert " ".join(line.strip() for line in wrapped) == note


def test_an_empty_summary_prints_no_table() -> None:
    assert arm_table({}) == []


@pytest.mark.parametrize(("passed", "word"), [(True, "✓ pass"), (False, "✗ fail"), (None, "? undecided")])
def test_checks_are_marked_with_the_words_of_the_html_report(passed: bool | None, word: str) -> None:
    assert check_mark(passed) == word


def test_the_verdict_follows_the_table_and_each_check_is_marked() -> None:
    summary = _summary()
    reasons = [c["reason"] for c in summary["verdict"]["per_model"][MODEL]["checks"]]
    outcome = types.SimpleNamespace(verdict="fail", reasons=reasons, headlines=[], warnings=[], summary=summary)
    out, _ = report_lines(outcome)
    at = out.index("verdict: FAIL")
    assert out[0].startswith("model · arm") and at == 7
    assert out[at + 1:at + 4] == [
        "  ✓ pass  continuity +0.30 [+0.10, +0.50] > 0.00",
        "  ? undecided  unsupported claims undecided: x",
        "  ✗ fail  tool-level leaks 1 (Host defect when > 0; must be 0)",
    ]
    assert not any(line.startswith("  - ") for line in out)  # each reason is said once, as its check


def test_a_lead_comes_before_the_table(tmp_path: Path) -> None:
    lead = "incomplete: 3 of 10 samples; every figure covers only these, so there is no pass or fail"
    outcome = types.SimpleNamespace(verdict="incomplete", reasons=[lead], warnings=[], summary=_summary(),
                                    headlines=[{"code": "incomplete", "lead": True, "text": lead}])
    out, _ = report_lines(outcome)
    assert out[0] == lead and out[1].startswith("model · arm") and out.count(lead) == 1


def _printed(text: str) -> list[str]:
    """The table, verdict and check lines of a command's output (the paths and progress differ)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("model · arm"))
    end = next(i for i, line in enumerate(lines) if line.startswith("verdict: "))
    checks = [line for line in lines[end + 1:] if line.startswith(("  ✓ pass", "  ✗ fail", "  ? undecided"))]
    return lines[start:end + 1] + checks


def test_run_and_report_print_the_same_table_verdict_and_checks(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    from tests.memory_systems.prompt_factories import write_small_suite

    suite = write_small_suite(tmp_path / "suite")
    run_dir = tmp_path / "run"
    main(["run", "--scenarios", str(suite), "--out", str(run_dir), "--cache-dir", str(tmp_path / "cache"),
          "--no-progress"])
    after_run = _printed(capsys.readouterr().out)
    main(["report", str(run_dir)])
    after_report = _printed(capsys.readouterr().out)
    assert after_run == after_report
    assert len(after_run) >= 4 + 1 + 4  # header, three arms, blank, verdict, four checks
    assert all(line.startswith(("  ✓ pass", "  ✗ fail", "  ? undecided")) for line in after_run[-4:])


def test_an_undecided_check_keeps_about_with_its_number_when_wrapped() -> None:
    """The starter suite's continuity line: "about 9,545 scenarios" is one phrase, never "about" at a line's end."""
    line = ("  ? undecided  continuity +0.02 [-0.12, +0.15], 64 scenarios (10 up, 9 down), exact p 1.00: gain not "
            "proven, the suite detects 0.19; about 9,545 scenarios would decide it")
    wrapped = wrap_line(line, 80)
    assert all(len(piece) <= 80 for piece in wrapped) and not any(p.endswith("about") for p in wrapped)
    assert "about 9,545 scenarios" in "\n".join(wrapped) and " ".join(" ".join(wrapped).split()) == " ".join(line.split())
    assert "\u00a0" not in "".join(wrapped)
