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
    (_, n, p_d, mde, half, needed), = suite_power.power_rows({"(all)": [1.0] * 126 + [0.0] * 174}, 0.10)
    assert (n, round(p_d, 2), round(mde, 3), round(half, 3), needed) == (300, 0.42, 0.105, 0.073, 330)
