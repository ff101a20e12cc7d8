"""``recall-eval compare RUN_A RUN_B``: what changed between two runs, with a regression gate.

Two runs are compared only when their numbers mean the same thing (see
:mod:`harness.runs.comparability`: suite, models, arms, epochs, seed, the parameters
that change answers, judge, scoring setup, harness version) and both are
complete and readable. Every difference is printed as ``name: A -> B``; runs
that differ are *not comparable* (exit 2) unless ``--force``, which compares
what both runs have and lists what only one of them has (models, arms,
scenarios, categories). Rows that did not change are hidden unless ``--all``.

A metric *regresses* when B's interval lies entirely on the bad side of A's
(below it for higher-is-better metrics, above it for lower-is-better ones):
a change beyond both intervals, not noise. ``tool_leakage_count`` has no
interval and regresses when B has more leaks than A. Cost and token metrics
are reported but never gate. A verdict that goes from pass to anything else
is a regression too.

Exit codes: 0 no regression, 1 regression, 2 not comparable or bad input.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.runs.comparability import (
    CompareError,
    Difference,
    RunData,
    abbreviated,
    differences,
    load_run,
    only_in,
    run_problems,
)

__all__ = ["CompareError", "Comparison", "MetricChange", "cli_compare", "compare_runs", "is_regression"]

HIGHER_IS_BETTER = frozenset({
    "continuity_accuracy", "adherence_rate", "abstention_rate_unanswerable", "coverage", "selective_accuracy",
    "retrieved_precision", "retrieved_recall",
})
LOWER_IS_BETTER = frozenset({
    "unsupported_claim_rate", "answer_leakage_rate", "tool_leakage_count", "over_abstention_rate",
    "latency_p50_s", "latency_p95_s", "error_rate",
})

_MANIFEST_FIELD = {"models": "models", "arms": "arms", "scenarios": "scenario_ids"}
# The metric table; a regression is marked REGRESSION after its difference.
_METRIC_COLUMNS = ("metric", "A", "B", "B - A")


@dataclass(frozen=True)
class MetricChange:
    """One metric row (model, arm, category, metric) present in both runs: A's and B's summary rows."""

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

    @property
    def changed(self) -> bool:
        """False when A and B print the same (value and interval): such rows are hidden unless ``--all``."""
        return _fmt(self.a) != _fmt(self.b)


@dataclass
class Comparison:
    """Everything ``compare`` found; :func:`cli_compare` prints it and picks the exit code."""

    a: RunData
    b: RunData
    differences: list[Difference]
    #: Why a run is no basis for a gate (incomplete, unreadable lines).
    problems: list[str]
    verdict_a: str
    verdict_b: str
    metrics: list[MetricChange]
    scenarios: list[dict[str, Any]]
    #: kind -> (only in A, only in B), for models, arms, scenarios and categories.
    only_in: dict[str, tuple[list[str], list[str]]]

    @property
    def comparable(self) -> bool:
        return not self.differences and not self.problems

    @property
    def nothing_shared(self) -> list[str]:
        """The kinds (models, arms, scenarios) of which the runs have none in common: then nothing can be compared."""
        return [kind for kind, (a_only, _) in self.only_in.items()
                if kind != "categories" and len(a_only) == len(getattr(self.a.manifest, _MANIFEST_FIELD[kind]))]

    @property
    def verdict_regression(self) -> bool:
        return self.verdict_a == "pass" and self.verdict_b != "pass"

    @property
    def regressions(self) -> list[MetricChange]:
        return [c for c in self.metrics if c.regression]


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


# ---------------------------------------------------------------- what changed


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
    from harness.score.scoring import CORRECT_OUTCOMES

    def rates(samples: list[Mapping[str, Any]]) -> dict[tuple[str, str, str], float]:
        tally: dict[tuple[str, str, str], list[int]] = {}
        for s in samples:
            if s.get("status") != "ok":
                continue
            good = s.get("outcome") in CORRECT_OUTCOMES
            tally.setdefault((s["model"], s["arm"], s["scenario_id"]), []).append(int(good))
        return {k: sum(v) / len(v) for k, v in tally.items()}

    ra, rb = rates(samples_a), rates(samples_b)
    return [
        {"model": k[0], "arm": k[1], "scenario_id": k[2], "a_correct_rate": ra[k], "b_correct_rate": rb[k],
         "change": "fixed" if rb[k] > ra[k] else "broken"}
        for k in sorted(ra.keys() & rb.keys()) if ra[k] != rb[k]
    ]


def compare_runs(run_a: Path, run_b: Path, *, include_foreign: bool = False) -> Comparison:
    """Load (or rebuild) both runs, check they are comparable, and diff what they share."""
    a = load_run(Path(run_a), include_foreign=include_foreign)
    b = load_run(Path(run_b), include_foreign=include_foreign)
    problems = [*run_problems("A", a), *run_problems("B", b)]
    return Comparison(
        a=a, b=b, differences=differences(a, b), problems=problems,
        verdict_a=a.summary["verdict"]["status"], verdict_b=b.summary["verdict"]["status"],
        metrics=metric_changes(a.summary, b.summary), scenarios=scenario_changes(a.samples, b.samples),
        only_in=only_in(a, b),
    )


# ---------------------------------------------------------------- printing


def _fmt(row: Mapping[str, Any]) -> str:
    """``0.82 [0.74, 0.89]``; durations as in the HTML report (``3.2 ms [3.0 ms, 3.5 ms]``); tokens grouped."""
    from harness.report.formatting import metric_kind, seconds_interval

    if row.get("value") is None:
        return "n/a"
    kind = metric_kind(str(row.get("metric", "")))
    if kind == "s":
        return seconds_interval(row["value"], row.get("ci_low"), row.get("ci_high"))

    def one(v: float) -> str:
        return f"{v:,.0f}" if kind == "int" and abs(v) >= 1000 else f"{v:.3g}"

    low, high = row.get("ci_low"), row.get("ci_high")
    return one(row["value"]) + ("" if low is None or high is None else f" [{one(low)}, {one(high)}]")


def _fmt_diff(change: MetricChange) -> str:
    from harness.report.formatting import metric_kind, seconds

    if change.diff is None:
        return "n/a"
    kind = metric_kind(change.metric)
    if kind == "s":
        return seconds(change.diff, sign=True)
    return f"{change.diff:+,.0f}" if kind == "int" and abs(change.diff) >= 1000 else f"{change.diff:+.3g}"


def _console() -> Any:
    """A terminal's own width; elsewhere (CI logs, pipes) ``COLUMNS`` when set, else 120."""
    from rich.console import Console

    console = Console(highlight=False)
    if not console.is_terminal and "COLUMNS" not in os.environ:
        console = Console(highlight=False, width=120)
    return console


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _say(console: Any, text: str) -> None:
    """A plain line: never parsed as markup (ids and paths may hold brackets), wrapped by the terminal only."""
    console.print(text, markup=False, soft_wrap=True)


def _header(console: Any, cmp: Comparison) -> None:
    for side, run in (("A", cmp.a), ("B", cmp.b)):
        m = run.manifest
        shape = " x ".join(_plural(n, word) for n, word in ((len(m.scenario_ids), "scenario"), (len(m.arms), "arm"),
                                                             (len(m.models), "model"), (m.epochs, "epoch")))
        _say(console, f"{side}: {run.path}: {shape}, {m.status}, verdict {run.summary['verdict']['status']}")
    for side, run in (("A", cmp.a), ("B", cmp.b)):
        warnings = run.warnings
        for warning in warnings:
            _say(console, f"{side} warning: {warning}")
        if run.scan.duplicates and not any("duplicate" in w for w in warnings):
            _say(console, f"{side} warning: {run.scan.duplicates} duplicate record(s) in results.jsonl "
                          "(the last one per sample id counts)")
        if run.foreign:
            _say(console, f"{side} warning: {len(run.foreign)} record(s) outside run.json, counted "
                          f"(--include-foreign): {abbreviated(run.foreign, 3)}")


def _comparability(console: Any, cmp: Comparison, force: bool) -> None:
    if cmp.comparable:
        _say(console, "comparable: same suite, models, arms, epochs, seed, parameters and scoring")
        return
    _say(console, "NOT COMPARABLE" + (" (compared anyway: --force)" if force else "") + ":")
    for problem in cmp.problems:
        _say(console, f"  {problem}")
    for difference in cmp.differences:
        for line in difference.lines():
            _say(console, f"  {line}")
    if cmp.only_in:
        _say(console, "only in one run" + (", so left out of the comparison:" if force else ":"))
        for kind, (a_only, b_only) in cmp.only_in.items():
            for side, ids in (("A", a_only), ("B", b_only)):
                if ids:
                    _say(console, f"  {kind} only in {side} ({len(ids)}): {abbreviated(ids)}")


def _name(change: MetricChange) -> str:
    return change.metric if change.category == "all" else f"{change.metric} ({change.category})"


def _widths(total: int, rows: Sequence[Sequence[str]]) -> list[int]:
    """Widths of the metric table's columns that fit ``total`` columns without cutting a metric name.

    The metric column gets its longest name (when room is short, its longest
    word: a name wraps before its "(category)", never inside a word), ``B - A`` its longest number (a REGRESSION mark then
    goes on a second line), and A and B share the rest, wrapping an interval
    under its value on a narrow terminal. No column is narrower than its header.
    """
    longest = [max([len(header), *(len(r[i]) for r in rows)]) for i, header in enumerate(_METRIC_COLUMNS)]
    overhead = 3 * (len(_METRIC_COLUMNS) - 1)  # between columns: a divider and a space each side
    if sum(longest) + overhead <= total:
        return longest
    diff = max(len("REGRESSION"), *(len(r[3].split(" REGRESSION")[0]) for r in rows))
    name = longest[0]
    if name + 2 * max(longest[1], longest[2]) > total - overhead - diff:  # wrap names before their category first
        name = max(len(_METRIC_COLUMNS[0]), *(len(word) for r in rows for word in r[0].split(" ")))
    side = max(len("A"), (total - overhead - diff - name) // 2)
    return [name, min(side, longest[1]), min(side, longest[2]), diff]


def _fit(cell: str, width: int) -> str:
    """A cell too wide for its column breaks before its interval or REGRESSION mark, not inside the interval."""
    if len(cell) <= width:
        return cell
    return cell.replace(" [", "\n[", 1).replace(" REGRESSION", "\nREGRESSION", 1)


def _shown(cmp: Comparison, show_all: bool) -> list[MetricChange]:
    """Rows of category ``all`` that changed (every one with ``show_all``), and every regressing row."""
    return [c for c in cmp.metrics if c.regression or (c.category == "all" and (show_all or c.changed))]


def metric_tables(cmp: Comparison, *, show_all: bool = False, width: int = 80) -> list[Any]:
    """One rich table per model and arm (no column repeats them, so the rest fits ``width`` columns)."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    shown = _shown(cmp, show_all)
    if not shown:
        return []
    rows = {id(c): (_name(c), _fmt(c.a), _fmt(c.b), _fmt_diff(c) + (" REGRESSION" if c.regression else ""))
            for c in shown}
    widths = _widths(width, list(rows.values()))
    groups: dict[tuple[str, str], list[MetricChange]] = {}
    for c in shown:
        groups.setdefault((c.model, c.arm), []).append(c)
    tables = []
    for (model, arm), changes in groups.items():
        table = Table(title=Text(f"{model} / {arm}"), title_justify="left", box=box.SIMPLE_HEAD, show_edge=False,
                      pad_edge=False, padding=(0, 1))
        for column, column_width in zip(_METRIC_COLUMNS, widths, strict=True):
            table.add_column(column, width=column_width, justify="left" if column == "metric" else "right",
                             overflow="fold")
        for c in changes:
            table.add_row(*(Text(_fit(cell, w)) for cell, w in zip(rows[id(c)], widths, strict=True)))
        tables.append(table)
    return tables


def scenario_table(cmp: Comparison) -> Any:
    """The scenarios whose correct rate changed, per model and arm."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    table = Table(title="scenarios whose correct rate changed", box=box.SIMPLE_HEAD, show_edge=False,
                  title_justify="left", pad_edge=False)
    for column in ("model", "arm", "scenario", "A", "B", "change"):
        table.add_column(column, overflow="fold")
    for s in cmp.scenarios:
        cells = (s["model"], s["arm"], s["scenario_id"], f"{s['a_correct_rate']:.2f}", f"{s['b_correct_rate']:.2f}",
                 s["change"])
        table.add_row(*(Text(cell) for cell in cells))
    return table


def print_comparison(cmp: Comparison, *, force: bool = False, show_all: bool = False) -> None:
    """The report on standard output: the runs, their warnings, comparability, then (when compared) the changes."""
    console = _console()
    _header(console, cmp)
    _comparability(console, cmp, force)
    if not cmp.comparable and not force:
        return
    _say(console, f"verdict: A {cmp.verdict_a} -> B {cmp.verdict_b}")
    tables = metric_tables(cmp, show_all=show_all, width=console.width)
    if tables:
        _say(console, "metrics, category all and any regressing category: "
                      + ("every row" if show_all else "rows that changed (--all shows every row)"))
    for table in tables:
        console.print(table)
    if cmp.scenarios:
        console.print(scenario_table(cmp))
    if not tables and not cmp.scenarios:
        _say(console, "no changes: every metric and every scenario's correct rate are the same")
    elif not tables:
        _say(console, "no metric changed")
    n = len(cmp.regressions)
    if cmp.verdict_regression:
        _say(console, f"verdict regression: A {cmp.verdict_a} -> B {cmp.verdict_b}")
    _say(console, f"{n} metric regression(s) beyond the intervals" if n else "no metric regression beyond the intervals")


def _write_html(cmp: Comparison, out: Path, force: bool) -> bool:
    """``--html OUT``: write the page and say where; False (after saying why) when it cannot be written."""
    from harness.runs.compare_page import write_compare_page

    try:
        write_compare_page(cmp, out, force=force)
    except OSError as exc:
        print(f"recall-eval compare: {exc.filename or out}: cannot write the page ({exc.strerror or exc}); "
              "choose another --html path", file=sys.stderr)
        return False
    print(f"page: {out}")
    return True


def cli_compare(args: Any) -> int:
    """``recall-eval compare RUN_A RUN_B``: exit 1 on a regression, 0 if none, 2 when not comparable or on bad input."""
    from harness.report import ReportError
    from harness.records import ResultsError
    from harness.scenarios import ScenarioError

    force, include_foreign = bool(getattr(args, "force", False)), bool(getattr(args, "include_foreign", False))
    try:
        cmp = compare_runs(Path(args.run_a), Path(args.run_b), include_foreign=include_foreign)
    except (CompareError, ReportError, ResultsError, ScenarioError) as exc:
        print(f"recall-eval compare: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"recall-eval compare: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    if cmp.nothing_shared:
        print_comparison(cmp, force=False)
        print(f"recall-eval compare: the runs have no {' and no '.join(cmp.nothing_shared)} in common: "
              "nothing to compare, even with --force", file=sys.stderr)
        return 2
    print_comparison(cmp, force=force, show_all=bool(getattr(args, "all", False)))
    if getattr(args, "html", None) and not _write_html(cmp, Path(args.html), force):
        return 2
    if not cmp.comparable and not force:
        what = ", ".join([*(["run problems"] if cmp.problems else []), *(d.name for d in cmp.differences)])
        print(f"recall-eval compare: the runs are not comparable ({what}); fix that, or pass --force to compare "
              "what both runs have", file=sys.stderr)
        return 2
    return 1 if cmp.regressions or cmp.verdict_regression else 0
