"""compare's default screen for runs of the same models (harness.runs.compare_brief), and ``--full``."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from harness.runs.compare import MetricChange, compare_runs
from harness.runs.compare_brief import arm_lines, brief_rows, left_out_line
from harness.runs.compare_cli import cli_compare
from tests.runs.compare_factories import synthetic_run
from tests.score.scoring_factories import MODEL

#: A nightly's size: 200 scenarios; B breaks recall on 80 of them (fact-100 .. fact-179).
IDS = [f"fact-{i:03d}" for i in range(200)]


@pytest.fixture(scope="module")
def nightly(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("nightly")
    return (synthetic_run(root / "a", ids=IDS, recall_right=180, history_right=20),
            synthetic_run(root / "b", ids=IDS, recall_right=100, history_right=20))


def _compare(capsys: pytest.CaptureFixture[str], a: Path, b: Path, **flags: Any) -> tuple[int, str]:
    args = SimpleNamespace(**{"run_a": str(a), "run_b": str(b), "force": False, "all": False, "full": False,
                              "include_foreign": False, **flags})
    code = cli_compare(args)
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_a_nightly_compare_prints_a_screen_the_regression_and_counts_not_every_scenario(
        nightly: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _compare(capsys, *nightly)
    assert code == 1
    lines = out.splitlines()
    assert len(lines) <= 30, out  # was one line per changed scenario: over a hundred
    assert (f"{MODEL} · recall: continuity 0.9 -> 0.5 (-0.4); 80 scenarios broken (fact-100, fact-101, fact-102 "
            "and 77 more), 0 fixed") in out
    assert f"{MODEL} · history_only: continuity 0.1 -> 0.1; no scenario's correct rate changed" in out
    assert "REGRESSION" in out and "continuity_accuracy drop from A to B" in out  # the gate's rows and their why
    assert "fact-103" not in out and "scenarios whose correct rate changed" not in out
    assert "80 scenario rows; --full prints them" in out


def test_full_prints_every_changed_scenario_and_row_with_the_same_exit_code(
        nightly: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    brief_code, brief = _compare(capsys, *nightly)
    code, out = _compare(capsys, *nightly, full=True)
    assert code == brief_code == 1
    assert "scenarios whose correct rate changed" in out
    assert all(f"fact-{i:03d}" in out for i in range(100, 180)) and "fact-180" not in out
    assert "not shown:" not in out and len(out.splitlines()) > 80


def test_only_rows_worse_beyond_the_intervals_are_shown_by_default(nightly: tuple[Path, Path]) -> None:
    cmp = compare_runs(*nightly)
    shown = brief_rows(cmp)
    assert shown and all(c.regression or c.not_gated for c in shown)
    assert {c.metric for c in cmp.metrics if c.changed} - {c.metric for c in shown}  # changed, not worse: left out


def test_an_arm_line_names_the_broken_scenarios_and_counts_the_fixed(tmp_path: Path) -> None:
    a = synthetic_run(tmp_path / "a", recall_right=3)
    b = synthetic_run(tmp_path / "b", recall_right=5)  # fact-03 and fact-04 fixed, none broken
    fixed_only = f"{MODEL} · recall: continuity 0.3 -> 0.5 (+0.2); 0 scenarios broken, 2 fixed"
    assert arm_lines(compare_runs(a, b))[-1] == fixed_only
    assert arm_lines(compare_runs(b, a))[-1] == (f"{MODEL} · recall: continuity 0.5 -> 0.3 (-0.2); 2 scenarios broken "
                                                 "(fact-03, fact-04), 0 fixed")


def test_identical_runs_say_no_changes_in_the_default_screen(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    a = synthetic_run(tmp_path / "a")
    code, out = _compare(capsys, a, synthetic_run(tmp_path / "b"))
    assert code == 0 and "no changes" in out and "not shown" not in out and "B - A" not in out


def _change(arm: str, a: float | None, b: float | None, *, model: str = "m", category: str = "all",
            metric: str = "continuity_accuracy", regression: bool = False, worse: bool = False) -> MetricChange:
    def row(value: float | None) -> dict[str, Any]:
        return {"metric": metric, "value": value, "ci_low": None if value is None else value - 0.1,
                "ci_high": None if value is None else value + 0.1}
    return MetricChange(model=model, arm=arm, category=category, metric=metric, a=row(a), b=row(b),
                        regression=regression, worse=worse)


def _scenario(sid: str, arm: str, change: str, model: str = "m") -> dict[str, Any]:
    return {"model": model, "arm": arm, "scenario_id": sid, "change": change}


def test_each_arm_line_reads_its_overall_continuity_row_and_counts_its_own_scenarios() -> None:
    """Per model and arm, in the order of the overall rows then of arms only the scenario table has: the overall
    continuity row's values (a category's row ignored; no difference shown when there is none or no value), one
    broken scenario in the singular, more than three abbreviated, fixed ones counted."""
    metrics = [_change("recall", 0.8, 0.5, category="project_fact"), _change("recall", 0.9, 0.5),
               _change("history_only", 0.2, 0.2), _change("history_only", 0.1, 0.4, metric="token_f1"),
               _change("full_history", None, 0.3), _change("memory", 0.5, 0.6, category="project_fact")]
    scenarios = [_scenario("s-1", "recall", "broken"), _scenario("s-2", "recall", "fixed"),
                 _scenario("s-3", "recall", "fixed"), *(_scenario(f"t-{i}", "shadow", "broken") for i in range(5)),
                 _scenario("u-1", "history_only", "broken", model="n")]
    cmp = SimpleNamespace(metrics=metrics, scenarios=scenarios)
    assert arm_lines(cmp) == [  # type: ignore[arg-type]
        "m · recall: continuity 0.9 -> 0.5 (-0.4); 1 scenario broken (s-1), 2 fixed",
        "m · history_only: continuity 0.2 -> 0.2; no scenario's correct rate changed",
        "m · full_history: continuity n/a -> 0.3; no scenario's correct rate changed",
        "m · shadow: continuity n/a; 5 scenarios broken (t-0, t-1, t-2 and 2 more), 0 fixed",
        "n · history_only: continuity n/a; 1 scenario broken (u-1), 0 fixed",
    ]


def test_the_default_shows_only_rows_worse_beyond_the_intervals_and_counts_what_it_left_out() -> None:
    regression, not_gated = _change("recall", 0.9, 0.5, regression=True, worse=True), _change(
        "recall", 1.0, 2.0, metric="latency_p50_s", worse=True)
    better = _change("recall", 0.2, 0.4, metric="token_f1")
    cmp = SimpleNamespace(metrics=[better, not_gated, regression], scenarios=[])
    shown = brief_rows(cmp)  # type: ignore[arg-type]
    assert shown == [not_gated, regression]
    assert left_out_line(cmp, shown, shown) is None  # type: ignore[arg-type]
    tail = "; --full prints them (--html OUT and --json OUT write every row and scenario)"
    assert left_out_line(cmp, shown, [better, *shown]) == f"not shown: 1 changed metric row{tail}"  # type: ignore[arg-type]
    cmp.scenarios = [_scenario("s-1", "recall", "broken")]
    assert left_out_line(cmp, shown, shown) == f"not shown: 1 scenario row{tail}"  # type: ignore[arg-type]
    cmp.scenarios.append(_scenario("s-2", "recall", "fixed"))
    copy = _change("recall", 0.2, 0.4, metric="token_f1")  # equal to ``better``, another row: counted apart
    assert left_out_line(cmp, shown, [better, copy, *shown]) == (  # type: ignore[arg-type]
        f"not shown: 2 changed metric rows and 2 scenario rows{tail}")
