"""What ``compare`` prints by default for runs of the same models: a screen, not a listing.

A nightly compare over a few hundred scenarios used to print every changed
metric row and one line per scenario whose correct rate changed (hundreds of
lines, the regression somewhere in the middle). By default it now prints, per
model and arm, one line: continuity A -> B and how many scenarios broke (the
first few named) and how many were fixed; then only the metric rows that are
worse beyond the intervals (regressions, and latency or cost rows shown as
``not gated``), and a count of what it left out. ``--full`` prints every
changed row and the scenario table as before; ``--html`` and ``--json`` always
write everything.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.runs.comparability import abbreviated

if TYPE_CHECKING:
    from harness.runs.compare import Comparison, MetricChange

#: Broken scenarios named on an arm's line before "and N more".
NAMED_BROKEN = 3
#: The headline metric of each arm's line.
HEADLINE = "continuity_accuracy"


def brief_rows(cmp: Comparison) -> list[MetricChange]:
    """The metric rows the default shows: worse beyond the intervals, gated (a regression) or not."""
    return [c for c in cmp.metrics if c.regression or c.not_gated]


def arm_lines(cmp: Comparison) -> list[str]:
    """One line per model and arm: continuity A -> B, then the scenarios that broke (named) and were fixed."""
    from harness.runs.compare import format_diff, format_row

    headline = {(c.model, c.arm): c for c in cmp.metrics if c.category == "all" and c.metric == HEADLINE}
    groups = list(dict.fromkeys([*((c.model, c.arm) for c in cmp.metrics if c.category == "all"),
                                 *((s["model"], s["arm"]) for s in cmp.scenarios)]))
    lines = []
    for model, arm in groups:
        row = headline.get((model, arm))
        continuity = ("continuity n/a" if row is None else
                      f"continuity {_value(format_row(row.a))} -> {_value(format_row(row.b))}"
                      + ("" if row.diff in (None, 0) else f" ({format_diff(row)})"))
        changed = [s for s in cmp.scenarios if (s["model"], s["arm"]) == (model, arm)]
        broken = [str(s["scenario_id"]) for s in changed if s["change"] == "broken"]
        fixed = len(changed) - len(broken)
        if not changed:
            scenarios = "no scenario's correct rate changed"
        else:
            scenarios = (f"{len(broken)} scenario{'s' if len(broken) != 1 else ''} broken"
                         + (f" ({abbreviated(broken, NAMED_BROKEN)})" if broken else "") + f", {fixed} fixed")
        lines.append(f"{model} · {arm}: {continuity}; {scenarios}")
    return lines


def left_out_line(cmp: Comparison, shown: list[MetricChange], full: list[MetricChange]) -> str | None:
    """What the default left out (changed metric rows, scenario rows) and where to see it; None when nothing."""
    rows = len({id(c) for c in full} - {id(c) for c in shown})
    scenarios = len(cmp.scenarios)
    if not rows and not scenarios:
        return None
    parts = [*([f"{rows} changed metric row{'s' if rows != 1 else ''}"] if rows else []),
             *([f"{scenarios} scenario row{'s' if scenarios != 1 else ''}"] if scenarios else [])]
    return (f"not shown: {' and '.join(parts)}; --full prints them (--html OUT and --json OUT write every row "
            "and scenario)")


def _value(cell: str) -> str:
    """``0.234`` of ``0.234 [0.125, 0.344]``: an arm's line gives the values, the tables their intervals."""
    return cell.split(" [")[0]
