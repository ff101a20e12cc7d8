"""The paired model comparison on a terminal: what was paired, what differs with it, then one short table per arm.

A model comparison (``compare --pair OLD=NEW``, or one model each) prints
the regressions first, each with the rule's sentence, so a drop in
continuity is on the first screen; then, per arm, each decision metric's
A and B values and the paired change B - A with its interval, exact p and
status. Every line fits the terminal (80 columns and up); the categories,
latency, cost and the scenarios that changed are in ``--html`` and ``--json``.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["paired_lines"]

#: Decision metrics of the paired table, in this order, with their short names.
_SHORT = {"continuity_accuracy": "continuity", "unsupported_claim_rate": "unsupported", "adherence_rate": "adherence",
          "error_rate": "errors"}
_MARKS = {"worse": "✗ worse", "better": "✓ better", "undecided": "? undecided", "same": "= same"}


def _wrap(text: str, width: int, indent: str = "  ") -> list[str]:
    return textwrap.wrap(text, width, subsequent_indent=indent, break_on_hyphens=False,
                         break_long_words=False) or [""]


def _number(value: float | None) -> str:
    return "  n/a" if value is None else f"{value:.3f}"


def _signed(value: float | None) -> str:
    return "unbounded" if value is None else f"{value:+.2f}"


def _row(change: Any) -> str:
    e = change.paired.evidence
    interval = f"{_signed(e.diff)} [{_signed(e.ci_low)}, {_signed(e.ci_high)}]"
    p = f"{e.p_value:.2g}"
    return (f"  {_SHORT[change.metric]:<12}{_number(change.a.get('value')):>6} {_number(change.b.get('value')):>6}"
            f"  {interval:<22}{p:>6}  {_MARKS[change.paired.status]}")


def _header() -> str:
    return f"  {'metric':<12}{'A':>6} {'B':>6}  {'B - A [interval]':<22}{'p':>6}  status"


def _pairing_lines(cmp: Any, width: int) -> list[str]:
    lines = _wrap(cmp.pairing.sentence(), width)
    if cmp.differences:
        lines += _wrap("the pairing does not hold, these differ: " + ", ".join(d.name for d in cmp.differences),
                       width)
    else:
        lines += _wrap("the pairing holds: same suite, scenarios, arms, retrieval budget and judge", width)
    if cmp.noted:
        lines += _wrap("differs with the models (compared, not refused):", width)
        for difference in cmp.noted:
            for line in difference.lines():
                lines += _wrap(f"  {line}", width, indent="      ")
    return lines


def _why(change: Any) -> str:
    """The rule's sentence for a paired row; for another, both intervals (B's lies beyond A's)."""
    from harness.runs.compare import format_row

    if change.why:
        return change.why
    return f"{change.metric} {format_row(change.a)} -> {format_row(change.b)}, the intervals apart"


def _regression_lines(cmp: Any, width: int) -> list[str]:
    """The regressions of category ``all``, each with why; those of single categories counted."""
    found = [c for c in cmp.metrics if c.regression]
    if not found:
        return ["no regression: B is proven worse on no decision metric"]
    overall = [c for c in found if c.category == "all"]
    lines = [f"{len(found)} regression(s): B proven worse than A (exit 1)"]
    for change in _arm_sorted(overall):
        lines += _wrap(f"  ✗ {change.arm}: {_why(change)}", width, indent="      ")
    if len(found) > len(overall):
        lines += _wrap(f"  and {len(found) - len(overall)} in single categories (--html OUT or --json OUT lists "
                       "them)", width, indent="      ")
    return lines


def _arm_sorted(changes: Iterable[Any]) -> list[Any]:
    """In the report's arm order (history_only, recall, full_history, then the rest), models first."""
    from harness.report import arm_order

    changes = list(changes)
    arms = arm_order(c.arm for c in changes)
    return sorted(changes, key=lambda c: (c.models, arms.index(c.arm)))


def _by_arm(changes: Iterable[Any]) -> dict[tuple[str, str], list[Any]]:
    groups: dict[tuple[str, str], list[Any]] = {}
    for change in _arm_sorted(changes):
        groups.setdefault((change.models, change.arm), []).append(change)
    return groups


def paired_lines(cmp: Any, *, width: int = 80, force: bool = False) -> list[str]:
    """What ``compare`` prints under the run headers for a paired comparison (``cmp.pairing`` set)."""
    width = max(60, width)
    lines = _pairing_lines(cmp, width)
    if (cmp.differences or cmp.problems) and not force:
        return lines
    lines += [f"verdict: A {cmp.verdict_a} -> B {cmp.verdict_b}", *_regression_lines(cmp, width)]
    order: Callable[[Any], int] = lambda c: list(_SHORT).index(c.metric)  # noqa: E731
    rows = sorted((c for c in cmp.metrics if c.category == "all" and c.metric in _SHORT and c.paired is not None),
                  key=order)
    if not rows:
        return [*lines, "no decision metric could be paired: no scenario was scored in both runs"]
    units = rows[0].paired.evidence
    alpha = units.alpha
    lines += _wrap(f"paired change B - A over the {units.n} {units.unit}s both runs scored (exact sign-flip "
                   f"test, {1 - alpha:.0%} interval):", width)
    for (models, arm), changes in _by_arm(rows).items():
        lines += [*_wrap(f"{arm} ({models})", width), _header(), *(_row(c) for c in changes)]
    lines += _wrap("✗ worse: B proven worse (a regression); ✓ better: proven better; ? undecided: not proven "
                   "either way. Every category, latency, cost and scenario: --html OUT or --json OUT.", width)
    return lines
