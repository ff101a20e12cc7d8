"""``recall-eval compare RUN_A RUN_B``: what changed between two runs, with a regression gate.

A metric *regresses* when B's interval lies entirely on the bad side of A's
(below it for higher-is-better metrics, above it for lower-is-better ones):
a change beyond both intervals, not noise. ``tool_leakage_count`` has no
interval and regresses when B has more leaks than A. Cost and token metrics
are reported but never gate. A verdict that goes from pass to anything else
is a regression too. Exit 1 on any regression, 0 otherwise, 2 on bad input.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HIGHER_IS_BETTER = frozenset({
    "continuity_accuracy", "adherence_rate", "abstention_rate_unanswerable", "coverage", "selective_accuracy",
    "retrieved_precision", "retrieved_recall",
})
LOWER_IS_BETTER = frozenset({
    "unsupported_claim_rate", "answer_leakage_rate", "tool_leakage_count", "over_abstention_rate",
    "latency_p50_s", "latency_p95_s", "error_rate",
})


class CompareError(Exception):
    """A run folder cannot be compared; the message names it."""


@dataclass(frozen=True)
class MetricChange:
    model: str
    arm: str
    category: str
    metric: str
    a: Mapping[str, Any]
    b: Mapping[str, Any]
    regression: bool

    @property
    def diff(self) -> float | None:
        if self.a.get("value") is None or self.b.get("value") is None:
            return None
        return float(self.b["value"]) - float(self.a["value"])


def is_regression(metric: str, a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """True when B is worse than A beyond both intervals (see the module docstring)."""
    if a.get("value") is None or b.get("value") is None:
        return False
    if metric == "tool_leakage_count":
        return float(b["value"]) > float(a["value"])
    if None in (a.get("ci_low"), a.get("ci_high"), b.get("ci_low"), b.get("ci_high")):
        return False
    if metric in HIGHER_IS_BETTER:
        return float(b["ci_high"]) < float(a["ci_low"])
    if metric in LOWER_IS_BETTER:
        return float(b["ci_low"]) > float(a["ci_high"])
    return False


def _load(run_dir: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    from harness.report import SUMMARY_SCHEMA_VERSION, build_report
    from harness.report.outputs import SCORES_FILE, SUMMARY_FILE

    if not run_dir.is_dir():
        raise CompareError(f"{run_dir}: no such run folder")
    summary_path, scores_path = run_dir / SUMMARY_FILE, run_dir / SCORES_FILE
    if not summary_path.is_file() or not scores_path.is_file():
        build_report(run_dir)
    try:
        summary = json.loads(summary_path.read_text(encoding="utf-8"))
        samples = [json.loads(line) for line in scores_path.read_text(encoding="utf-8").splitlines() if line.strip()]
    except (OSError, json.JSONDecodeError) as exc:
        raise CompareError(f"{run_dir}: cannot read its summary or scores ({exc}); run `recall-eval report` on it") from None
    if summary.get("schema_version") != SUMMARY_SCHEMA_VERSION:
        raise CompareError(f"{summary_path}: schema_version {summary.get('schema_version')!r} is not supported")
    return summary, samples


def metric_changes(summary_a: Mapping[str, Any], summary_b: Mapping[str, Any]) -> list[MetricChange]:
    """Every metric present in both runs (same model, arm, category), with its regression flag."""
    def key(row: Mapping[str, Any]) -> tuple[str, str, str, str]:
        return row["model"], row["arm"], row["category"], row["metric"]

    a_rows = {key(r): r for r in summary_a.get("metrics", [])}
    changes = []
    for row in summary_b.get("metrics", []):
        if key(row) in a_rows:
            a = a_rows[key(row)]
            changes.append(MetricChange(*key(row), a=a, b=row, regression=is_regression(row["metric"], a, row)))
    return changes


def scenario_changes(samples_a: list[Mapping[str, Any]], samples_b: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Scenarios whose correct rate changed, per model and arm (error samples left out)."""
    from harness.scoring import CORRECT_OUTCOMES

    def rates(samples: list[Mapping[str, Any]]) -> dict[tuple[str, str, str], float]:
        tally: dict[tuple[str, str, str], list[int]] = {}
        for s in samples:
            if s.get("status") != "ok":
                continue
            good = s.get("outcome") in CORRECT_OUTCOMES
            tally.setdefault((s["model"], s["arm"], s["scenario_id"]), []).append(int(good))
        return {k: sum(v) / len(v) for k, v in tally.items()}

    ra, rb = rates(samples_a), rates(samples_b)
    out = [
        {"model": k[0], "arm": k[1], "scenario_id": k[2], "a_correct_rate": ra[k], "b_correct_rate": rb[k],
         "change": "fixed" if rb[k] > ra[k] else "broken"}
        for k in sorted(ra.keys() & rb.keys()) if ra[k] != rb[k]
    ]
    return out


def compare_runs(run_a: Path, run_b: Path) -> dict[str, Any]:
    """Load (or rebuild) both runs' summaries and diff them."""
    summary_a, samples_a = _load(Path(run_a))
    summary_b, samples_b = _load(Path(run_b))
    status_a, status_b = summary_a["verdict"]["status"], summary_b["verdict"]["status"]
    changes = metric_changes(summary_a, summary_b)
    return {
        "verdict_a": status_a, "verdict_b": status_b,
        "verdict_regression": status_a == "pass" and status_b != "pass",
        "metrics": changes,
        "scenarios": scenario_changes(samples_a, samples_b),
        "regressions": [c for c in changes if c.regression],
    }


def _fmt(row: Mapping[str, Any]) -> str:
    """``0.82 [0.74, 0.89]``; durations as in the HTML report (``3.2 ms [3.0 ms, 3.5 ms]``)."""
    from harness.report.formatting import metric_kind, seconds_interval

    if row.get("value") is None:
        return "n/a"
    if metric_kind(str(row.get("metric", ""))) == "s":
        return seconds_interval(row["value"], row.get("ci_low"), row.get("ci_high"))
    ci = "" if row.get("ci_low") is None else f" [{row['ci_low']:.3g}, {row['ci_high']:.3g}]"
    return f"{row['value']:.3g}{ci}"


def _fmt_diff(change: MetricChange) -> str:
    from harness.report.formatting import metric_kind, seconds

    if change.diff is None:
        return "n/a"
    return seconds(change.diff, sign=True) if metric_kind(change.metric) == "s" else f"{change.diff:+.3g}"


def _print(result: dict[str, Any], run_a: str, run_b: str) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(highlight=False)
    if not console.is_terminal:  # CI logs: wide enough that nothing is cut
        console = Console(highlight=False, width=200)
    console.print(f"verdict: A {result['verdict_a']} -> B {result['verdict_b']}")
    table = Table(title=f"metrics (category all): B={run_b} - A={run_a}")
    for column in ("model", "arm", "metric", "A", "B", "B - A", ""):
        table.add_column(column)
    for c in result["metrics"]:
        if c.category != "all" and not c.regression:
            continue
        diff = _fmt_diff(c)
        metric = c.metric if c.category == "all" else f"{c.metric} ({c.category})"
        table.add_row(c.model, c.arm, metric, _fmt(c.a), _fmt(c.b), diff, "REGRESSION" if c.regression else "")
    console.print(table)
    if result["scenarios"]:
        st = Table(title="scenarios whose correctness changed")
        for column in ("model", "arm", "scenario", "A", "B", "change"):
            st.add_column(column)
        for s in result["scenarios"]:
            st.add_row(s["model"], s["arm"], s["scenario_id"], f"{s['a_correct_rate']:.2f}",
                       f"{s['b_correct_rate']:.2f}", s["change"])
        console.print(st)
    n = len(result["regressions"]) + int(result["verdict_regression"])
    console.print(f"{n} regression(s) beyond the intervals" if n else "no regression beyond the intervals")


def cli_compare(args: Any) -> int:
    """``recall-eval compare RUN_A RUN_B``: exit 1 on a regression, 0 otherwise, 2 on bad input."""
    from harness.report import ReportError
    from harness.results import ResultsError

    try:
        result = compare_runs(Path(args.run_a), Path(args.run_b))
    except (CompareError, ReportError, ResultsError) as exc:
        print(f"recall-eval compare: {exc}", file=sys.stderr)
        return 2
    _print(result, args.run_a, args.run_b)
    return 1 if result["regressions"] or result["verdict_regression"] else 0
