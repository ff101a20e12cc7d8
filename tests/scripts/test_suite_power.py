"""``scripts/suite_power.py``: the power table SUITE.md quotes, from a run's scores."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

_SPEC = importlib.util.spec_from_file_location("suite_power", Path(__file__).parents[2] / "scripts" / "suite_power.py")
suite_power = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(suite_power)


def _scores(path: Path, rows: list[tuple[str, str, str, int, str]]) -> Path:
    with path.open("w", encoding="utf-8") as handle:
        for sid, category, arm, epoch, outcome in rows:
            handle.write(json.dumps({"scenario_id": sid, "category": category, "arm": arm, "model": "m",
                                     "epoch": epoch, "outcome": outcome}) + "\n")
    return path


def test_the_discordance_is_the_mean_squared_difference_over_epochs(tmp_path: Path) -> None:
    """Two epochs where the arm is right once and the baseline never: a difference of 0.5, squared 0.25."""
    scores = _scores(tmp_path / "scores.jsonl", [
        ("a", "fact", "recall", 0, "correct"), ("a", "fact", "recall", 1, "wrong"),
        ("a", "fact", "history_only", 0, "wrong"), ("a", "fact", "history_only", 1, "wrong"),
        ("b", "fact", "recall", 0, "abstained_correctly"), ("b", "fact", "recall", 1, "abstained_correctly"),
        ("b", "fact", "history_only", 0, "correct"), ("b", "fact", "history_only", 1, "correct"),
        ("c", "temporal", "recall", 0, "wrong"), ("c", "temporal", "history_only", 0, "correct"),
        ("d", "temporal", "full_history", 0, "correct"),  # another arm: not paired
    ])
    diffs = suite_power.paired_differences(scores, "recall", "history_only")
    assert diffs == {"fact": [0.5, 0.0], "temporal": [-1.0], "(all)": [0.5, 0.0, -1.0]}
    rows = {row[0]: row for row in suite_power.power_rows(diffs, 0.10)}
    assert rows["fact"][1:3] == (2, pytest.approx(0.125))
    assert rows["(all)"][1:3] == (3, pytest.approx((0.25 + 1.0) / 3))
    assert list(rows)[-1] == "(all)"


def test_the_scenarios_needed_follow_the_mde_formula() -> None:
    """At p_d 0.42, +0.10 needs 330 scenarios: n = p_d * ((z_0.975 + z_0.8) / 0.10)^2, rounded up."""
    (_, n, p_d, mde, needed, _, _), = suite_power.power_rows({"(all)": [1.0] * 126 + [0.0] * 174}, 0.10)
    assert (n, round(p_d, 2), round(mde, 3), needed) == (300, 0.42, 0.105, 330)


def test_the_half_width_is_the_reports_interval_not_the_null_variances() -> None:
    """18 fixed of 28, none broken (the offline decision category): the report prints [+0.44, +0.83].

    ``1.96 * sqrt(p_d / n)`` would say ±0.30; the interval's width follows ``p_d - diff^2``.
    """
    diffs = [1.0] * 18 + [0.0] * 10
    (_, _, p_d, _, _, half, _), = suite_power.power_rows({"decision": diffs}, 0.10)
    assert round(p_d, 2) == 0.64 and round(half, 2) == 0.19


def test_the_scenarios_for_a_half_width_are_the_fewest_that_reach_it() -> None:
    """In the same proportions, the n returned fits the target and one fewer does not."""
    diffs = [1.0] * 3 + [-1.0] * 18 + [0.0] * 13  # the offline abstention category: 3 up, 18 down of 34
    needed = suite_power.scenarios_for_half_width(diffs, 0.15)
    assert needed is not None and needed > len(diffs)
    assert suite_power.half_width(suite_power.stretched(diffs, needed)) <= 0.15
    assert suite_power.half_width(suite_power.stretched(diffs, needed - 1)) > 0.15
    assert suite_power.stretched([0.0, 1.0], 4) == [0.0, 0.0, 1.0, 1.0]


def test_a_category_with_no_breaks_is_bounded_at_every_fix_rate() -> None:
    """The worst fix rate (about half) sets the n; at that n every rate fits and one fewer has a rate that does not."""
    size = suite_power.one_sided_worst_case(0.15)
    assert all(suite_power.half_width([1.0] * k + [0.0] * (size - k)) <= 0.15 for k in range(size + 1))
    assert any(suite_power.half_width([1.0] * k + [0.0] * (size - 1 - k)) > 0.15 for k in range(size))
