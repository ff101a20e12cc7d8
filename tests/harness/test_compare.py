"""recall-eval compare: differences and the regression gate."""

from __future__ import annotations

import shutil
from types import SimpleNamespace

import pytest

from harness.compare import cli_compare, is_regression
from harness.report import build_report
from tests.harness.scoring_factories import paired_run, write_run


def _built(path, **kwargs):
    records, scenarios = paired_run(10, **kwargs)
    run_dir = write_run(path, records)
    build_report(run_dir, scenarios=scenarios)
    return run_dir


def test_identical_runs_exit_zero(tmp_path, capsys):
    a = _built(tmp_path / "a", recall_right=9, history_right=2)
    b = tmp_path / "b"
    shutil.copytree(a, b)
    assert cli_compare(SimpleNamespace(run_a=str(a), run_b=str(b))) == 0
    assert "no regression" in capsys.readouterr().out


def test_regression_beyond_intervals_exits_one(tmp_path, capsys):
    a = _built(tmp_path / "a", recall_right=10, history_right=2)
    b = _built(tmp_path / "b", recall_right=1, history_right=2)
    assert cli_compare(SimpleNamespace(run_a=str(a), run_b=str(b))) == 1
    out = capsys.readouterr().out
    assert "REGRESSION" in out and "broken" in out


def test_improvement_is_not_a_regression(tmp_path):
    a = _built(tmp_path / "a", recall_right=3, history_right=2)
    b = _built(tmp_path / "b", recall_right=10, history_right=2)
    assert cli_compare(SimpleNamespace(run_a=str(a), run_b=str(b))) == 0


def test_missing_run_dir_is_a_clear_error(tmp_path, capsys):
    a = _built(tmp_path / "a", recall_right=9, history_right=2)
    assert cli_compare(SimpleNamespace(run_a=str(a), run_b=str(tmp_path / "nope"))) == 2
    assert "no such run folder" in capsys.readouterr().err


@pytest.mark.parametrize(("metric", "a", "b", "expected"), [
    ("continuity_accuracy", (0.8, 0.7, 0.9), (0.5, 0.4, 0.6), True),
    ("continuity_accuracy", (0.8, 0.7, 0.9), (0.7, 0.6, 0.8), False),
    ("unsupported_claim_rate", (0.0, 0.0, 0.05), (0.2, 0.1, 0.3), True),
    ("latency_p50_s", (1.0, 0.9, 1.1), (0.5, 0.4, 0.6), False),
    ("prompt_tokens", (100, 90, 110), (500, 490, 510), False),
])
def test_is_regression_respects_metric_direction(metric, a, b, expected):
    row = lambda v: {"value": v[0], "ci_low": v[1], "ci_high": v[2]}  # noqa: E731
    assert is_regression(metric, row(a), row(b)) is expected


def test_latency_under_a_second_prints_in_milliseconds():
    from harness.compare import MetricChange, _fmt, _fmt_diff

    a = {"metric": "latency_p50_s", "value": 0.0032, "ci_low": 0.003, "ci_high": 0.0035}
    b = {"metric": "latency_p50_s", "value": 0.0041, "ci_low": 0.0038, "ci_high": 0.0045}
    assert _fmt(a) == "3.2 ms [3.0 ms, 3.5 ms]"
    change = MetricChange("m", "recall", "all", "latency_p50_s", a=a, b=b, regression=True)
    assert _fmt_diff(change) == "+0.90 ms"
    assert _fmt({"metric": "coverage", "value": 0.82, "ci_low": 0.74, "ci_high": 0.891}) == "0.82 [0.74, 0.891]"
