"""``recall-eval compare RUN_A RUN_B`` on a terminal: the differences first, then the metric and scenario tables, and the exit code.

Exit codes: 0 no regression, 1 regression, 2 not comparable or bad input.
Latency and cost rows worse beyond the intervals and floors are marked
``not gated`` and leave the exit code alone unless ``--gate-on latency`` /
``--gate-on cost`` asks for them (:class:`harness.runs.compare.GateOptions`).
``--html OUT`` also writes the comparison as a page
(:mod:`harness.runs.compare_page`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.records import raw_stream
from harness.runs.comparability import (
    CompareError,
    abbreviated,
)
from harness.runs.compare import Comparison, GateOptions, MetricChange, compare_runs, family, format_diff, format_row
from harness.wrapping import PIPED_WIDTH, say, say_path, wrap

# The metric table; a regression is marked REGRESSION after its difference, a worse latency or cost row that
# does not gate "not gated".
_METRIC_COLUMNS = ("metric", "A", "B", "B - A")
_MARKS = ("REGRESSION", "not gated")


def _mark(change: MetricChange) -> str:
    return " REGRESSION" if change.regression else " not gated" if change.not_gated else ""


def _number(cell: str) -> str:
    """The difference of a ``B - A`` cell without its mark."""
    for mark in _MARKS:
        cell = cell.split(f" {mark}")[0]
    return cell


def _console() -> Any:
    """A terminal's own width; elsewhere (CI logs, pipes) ``COLUMNS`` when set, else 80."""
    from rich.console import Console

    console = Console(highlight=False, file=raw_stream(sys.stdout))  # rich's colours pass the terminal guard
    if not console.is_terminal and "COLUMNS" not in os.environ:
        console = Console(highlight=False, width=PIPED_WIDTH, file=raw_stream(sys.stdout))
    return console


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _say(console: Any, text: str, indent: str = "  ") -> None:
    """Prose wrapped at word boundaries to the console's width, continued under ``indent`` past its own indent; never
    parsed as markup (ids and paths may hold brackets). A path or id longer than the width stands alone."""
    for line in wrap(text, max(40, int(getattr(console, "width", 80) or 80)), indent):
        console.print(line, markup=False, soft_wrap=True)


def _header(console: Any, cmp: Comparison) -> None:
    for side, run in (("A", cmp.a), ("B", cmp.b)):
        m = run.manifest
        shape = " x ".join(_plural(n, word) for n, word in ((len(m.scenario_ids), "scenario"), (len(m.arms), "arm"),
                                                             (len(m.models), "model"), (m.epochs, "epoch")))
        _say(console, f"{side}: {run.path}")  # a path cannot wrap: on its own line
        _say(console, f"   {shape}, {m.status}, verdict {run.summary['verdict']['status']}", indent="")
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
    diff = max(*(len(mark) for mark in _MARKS), *(len(_number(r[3])) for r in rows))
    name = longest[0]
    if name + 2 * max(longest[1], longest[2]) > total - overhead - diff:  # wrap names before their category first
        name = max(len(_METRIC_COLUMNS[0]), *(len(word) for r in rows for word in r[0].split(" ")))
    side = max(len("A"), (total - overhead - diff - name) // 2)
    return [name, min(side, longest[1]), min(side, longest[2]), diff]


def _fit(cell: str, width: int) -> str:
    """A cell too wide for its column breaks before its interval or REGRESSION mark, not inside the interval."""
    if len(cell) <= width:
        return cell
    for mark in _MARKS:
        cell = cell.replace(f" {mark}", f"\n{mark}", 1)
    return cell.replace(" [", "\n[", 1)


def _shown(cmp: Comparison, show_all: bool) -> list[MetricChange]:
    """Rows of category ``all`` that changed (every one with ``show_all``), and every regressing row."""
    return [c for c in cmp.metrics if c.regression or (c.category == "all" and (show_all or c.changed))]


def metric_tables(cmp: Comparison, *, show_all: bool = False, width: int = 80,
                  rows_shown: list[MetricChange] | None = None) -> list[Any]:
    """One rich table per model and arm (no column repeats them, so the rest fits ``width`` columns), of
    ``rows_shown`` (by default the changed rows of category all and every regressing row)."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    shown = _shown(cmp, show_all) if rows_shown is None else rows_shown
    if not shown:
        return []
    rows = {id(c): (_name(c), format_row(c.a), format_row(c.b), format_diff(c) + _mark(c)) for c in shown}
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


def print_comparison(cmp: Comparison, *, force: bool = False, show_all: bool = False, full: bool = False) -> None:
    """The report on standard output: the runs, their warnings, comparability, then (when compared) the changes:
    by default a screen (:mod:`harness.runs.compare_brief`), with ``full`` (or ``show_all``) every changed row and
    scenario."""
    console = _console()
    _header(console, cmp)
    if cmp.pairing is not None:
        from harness.runs.paired_text import paired_lines

        for line in paired_lines(cmp, width=int(getattr(console, "width", 80) or 80), force=force):
            _say(console, line)
        return
    _comparability(console, cmp, force)
    if not cmp.comparable and not force:
        return
    _say(console, f"verdict: A {cmp.verdict_a} -> B {cmp.verdict_b}")
    if not (full or show_all):
        _print_brief(console, cmp)
        return
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
    _gate_lines(console, cmp)


def _print_brief(console: Any, cmp: Comparison) -> None:
    """Per model and arm one line, the rows worse beyond the intervals, the gate, and what was left out."""
    from harness.runs.compare_brief import arm_lines, brief_rows, left_out_line

    if not _shown(cmp, False) and not cmp.scenarios:
        _say(console, "no changes: every metric and every scenario's correct rate are the same")
    for line in arm_lines(cmp):
        _say(console, line)
    shown = brief_rows(cmp)
    tables = metric_tables(cmp, width=console.width, rows_shown=shown)
    if tables:
        _say(console, "metrics worse beyond the intervals, in any category:")
    for table in tables:
        console.print(table)
    _gate_lines(console, cmp)
    left_out = left_out_line(cmp, shown, _shown(cmp, False))
    if left_out:
        _say(console, left_out)


def _gate_lines(console: Any, cmp: Comparison) -> None:
    """The verdict regression, latency and cost rows not gated, and the metric regressions with their why."""
    n = len(cmp.regressions)
    if cmp.verdict_regression:
        _say(console, f"verdict regression: A {cmp.verdict_a} -> B {cmp.verdict_b}")
    ungated = cmp.not_gated
    if ungated:
        families = sorted({str(family(c.metric)) for c in ungated})
        _say(console, f"{_plural(len(ungated), 'latency or cost row')} worse beyond the intervals and floors, "
                      f"not gated (--gate-on {' / --gate-on '.join(families)} to fail on them)")
    _say(console, f"{n} metric regression(s) beyond the intervals" if n else "no metric regression beyond the intervals")
    for change in cmp.regressions:  # what the shared paired rule proved: n, units up and down, exact p
        if change.why:
            _say(console, "  " + f"{change.model} · {change.arm} · {change.category}: {change.why}")


def _written(what: str, flag: str, out: Path, write: Any) -> bool:
    """Write ``what`` to ``out`` through ``write(out)`` and say where; False (after saying why) when it cannot."""
    try:
        write(out)
    except OSError as exc:
        say(f"recall-eval compare: {exc.filename or out}: cannot write the {what} ({exc.strerror or exc}); "
            f"choose another {flag} path", file=sys.stderr)
        return False
    say_path(f"{what.lower()}:", out)
    return True


def _write_html(cmp: Comparison, out: Path, force: bool) -> bool:
    """``--html OUT``: the page."""
    from harness.runs.compare_page import write_compare_page

    return _written("page", "--html", out, lambda path: write_compare_page(cmp, path, force=force))


def _write_json(cmp: Comparison, out: Path) -> bool:
    """``--json OUT``: every row of the comparison."""
    from harness.runs.compare_json import write_comparison_json

    return _written("JSON", "--json", out, lambda path: write_comparison_json(cmp, path))


def _refusal(cmp: Comparison) -> str:
    """Why the runs are not compared (without --force), and the way out that fits."""
    what = ", ".join([*(["run problems"] if cmp.problems else []), *(d.name for d in cmp.differences)])
    if cmp.pairing is not None:
        return (f"the model pairing does not hold ({what}); paired models must run the same suite, scenarios, "
                "arms, retrieval budget and judge; or pass --force to compare what both runs have")
    from harness.runs.pairing import split_differences

    breakers, _ = split_differences(cmp.differences)
    hint = ""
    if not cmp.problems and not breakers and len(cmp.a.manifest.models) == 1:
        model_a, model_b = cmp.a.manifest.models[0], cmp.b.manifest.models[0]
        hint = f"; to compare the two model setups as an A/B, pass --pair {model_a}={model_b}"
    return (f"the runs are not comparable ({what}); fix that, or pass --force to compare what both runs have"
            f"{hint}")


def gate_options(args: Any) -> GateOptions:
    """The gate the command line asks for: ``--gate-on`` families and the four floors (their defaults when unset)."""
    defaults = GateOptions()
    flags = {"latency_pct": "latency_floor_pct", "latency_ms": "latency_floor_ms", "cost_pct": "cost_floor_pct",
             "cost_usd": "cost_floor_usd"}
    chosen = {name: getattr(args, flag, None) for name, flag in flags.items()}
    return GateOptions(gate_on=frozenset(getattr(args, "gate_on", None) or ()),
                       **{name: getattr(defaults, name) if value is None else float(value)
                          for name, value in chosen.items()})


def cli_compare(args: Any) -> int:
    """``recall-eval compare RUN_A RUN_B``: exit 1 on a regression, 0 if none, 2 when not comparable or on bad input."""
    from harness.records import ResultsError
    from harness.report import ReportError
    from harness.scenarios import ScenarioError

    force, include_foreign = bool(getattr(args, "force", False)), bool(getattr(args, "include_foreign", False))
    try:
        cmp = compare_runs(Path(args.run_a), Path(args.run_b), include_foreign=include_foreign,
                           gate=gate_options(args), pair=getattr(args, "pair", None))
    except (CompareError, ReportError, ResultsError, ScenarioError) as exc:
        say(f"recall-eval compare: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"recall-eval compare: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    if cmp.nothing_shared:
        print_comparison(cmp, force=False)
        say(f"recall-eval compare: the runs have no {' and no '.join(cmp.nothing_shared)} in common: "
            "nothing to compare, even with --force", file=sys.stderr)
        return 2
    print_comparison(cmp, force=force, show_all=bool(getattr(args, "all", False)),
                     full=bool(getattr(args, "full", False)))
    if getattr(args, "html", None) and not _write_html(cmp, Path(args.html), force):
        return 2
    if getattr(args, "json", None) and not _write_json(cmp, Path(args.json)):
        return 2
    if not cmp.comparable and not force:
        say(f"recall-eval compare: {_refusal(cmp)}", file=sys.stderr)
        return 2
    return 1 if cmp.regressions or cmp.verdict_regression else 0
