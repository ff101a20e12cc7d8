"""recall-eval compare: comparability first, then the changes and the regression gate."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from harness.cli import main
from harness.records import MANIFEST_FILE, RESULTS_FILE
from harness.report import build_report
from harness.runs.compare import GateOptions, compare_runs, is_regression, is_worse
from harness.runs.compare_cli import cli_compare, metric_tables, scenario_table
from tests.runs.compare_factories import comparable_pair, edit_json, synthetic_run
from tests.score.scoring_factories import MODEL, make_record, paired_run, write_run

REPO = Path(__file__).resolve().parents[2]
def _args(a: Path, b: Path, **flags: Any) -> SimpleNamespace:
    return SimpleNamespace(**{"run_a": str(a), "run_b": str(b), "force": False, "all": False, "include_foreign": False,
                              **flags})


def _compare(capsys: pytest.CaptureFixture[str], a: Path, b: Path, **flags: Any) -> tuple[int, str]:
    code = cli_compare(_args(a, b, **flags))
    captured = capsys.readouterr()
    return code, captured.out + captured.err


#: A passing run: recall 180 of 200 right, history_only 20, no unsupported claim in either arm (with none differing,
#: 189 scenarios is the fewest that bound their rise within the default tolerance 0.02).
PASSING: dict[str, Any] = {"ids": [f"fact-{i:03d}" for i in range(200)], "recall_right": 180, "history_right": 20}


def _built(path: Path, **kwargs: Any) -> Path:
    records, scenarios = paired_run(10, **kwargs)
    run_dir = write_run(path, records)
    build_report(run_dir, scenarios=scenarios)
    return run_dir


# ---------------------------------------------------------------- the gate, as before


def test_identical_runs_exit_zero_and_say_no_changes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = synthetic_run(tmp_path / "a")
    b = tmp_path / "b"
    shutil.copytree(a, b)
    code, out = _compare(capsys, a, b)
    assert code == 0
    assert "comparable: same suite" in out and "no changes" in out and "no metric regression" in out
    assert "B - A" not in out  # no table of unchanged rows


def test_regression_beyond_intervals_exits_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _built(tmp_path / "a", recall_right=10, history_right=2)
    b = _built(tmp_path / "b", recall_right=1, history_right=2)
    code, out = _compare(capsys, a, b)
    assert code == 1
    assert "REGRESSION" in out and "broken" in out
    assert "recall · all: continuity_accuracy drop from A to B +0.90 [" in out and "(9 up, 0 down), exact p 0.0039" in out


def test_a_drop_on_three_scenarios_is_no_regression_whatever_the_intervals_say(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """3 scenarios broken, none fixed: exact p 0.25, so the shared paired rule proves nothing. The old rule
    (B's interval below A's) read the run-level intervals alone, unpaired."""
    a = _built(tmp_path / "a", recall_right=10, history_right=2)
    b = _built(tmp_path / "b", recall_right=7, history_right=2)
    cmp = compare_runs(a, b)
    change = next(c for c in cmp.metrics if (c.arm, c.category, c.metric) == ("recall", "all", "continuity_accuracy"))
    assert change.regression is False and "(3 up, 0 down), exact p 0.25" in str(change.why)


def test_improvement_is_not_a_regression(tmp_path: Path) -> None:
    a = _built(tmp_path / "a", recall_right=3, history_right=2)
    b = _built(tmp_path / "b", recall_right=10, history_right=2)
    assert cli_compare(_args(a, b)) == 0


def test_verdict_leaving_pass_is_a_regression(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = synthetic_run(tmp_path / "a", **PASSING)
    b = synthetic_run(tmp_path / "b", ids=PASSING["ids"], recall_right=2, history_right=20)  # a loss: fail
    code, out = _compare(capsys, a, b)
    assert code == 1 and "verdict: A pass -> B fail" in out and "verdict regression: A pass -> B fail" in out


def test_missing_run_dir_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = synthetic_run(tmp_path / "a")
    code, out = _compare(capsys, a, tmp_path / "nope")
    assert code == 2 and "no such run folder" in out


@pytest.mark.parametrize(("metric", "a", "b", "expected"), [
    ("continuity_accuracy", (0.8, 0.7, 0.9), (0.5, 0.4, 0.6), True),
    ("continuity_accuracy", (0.8, 0.7, 0.9), (0.7, 0.6, 0.8), False),
    ("unsupported_claim_rate", (0.0, 0.0, 0.05), (0.2, 0.1, 0.3), True),
    ("latency_p50_s", (1.0, 0.9, 1.1), (0.5, 0.4, 0.6), False),
    ("prompt_tokens", (100, 90, 110), (500, 490, 510), False),
])
def test_is_regression_respects_metric_direction(metric, a, b, expected) -> None:
    def row(v: tuple[float, float, float]) -> dict[str, float]:
        return {"value": v[0], "ci_low": v[1], "ci_high": v[2]}

    assert is_regression(metric, row(a), row(b)) is expected


# ---------------------------------------------------------------- the gate does not cry wolf


def _row(value: float, low: float, high: float) -> dict[str, float]:
    return {"value": value, "ci_low": low, "ci_high": high}


@pytest.mark.parametrize(("a", "b", "worse"), [
    ((1.0, 0.9, 1.1), (1.3, 1.2, 1.4), False),     # +300 ms beyond the intervals: under 50% and under 500 ms
    ((0.1, 0.09, 0.11), (0.4, 0.38, 0.42), False),  # +300 ms is +300%, but under 500 ms: the noise of a busy machine
    ((2.0, 1.9, 2.1), (2.8, 2.7, 2.9), False),     # +800 ms is over 500 ms, but only +40%
    ((1.0, 0.9, 1.1), (2.0, 1.9, 2.1), True),      # +1 s and +100%: beyond both floors
    ((1.0, 0.9, 1.1), (2.0, 1.0, 3.0), False),     # beyond both floors but inside the intervals
])
def test_latency_is_worse_only_beyond_both_floors_and_the_intervals(a, b, worse) -> None:
    for metric in ("latency_p50_s", "latency_p95_s"):
        assert is_worse(metric, _row(*a), _row(*b)) is worse


@pytest.mark.parametrize(("metric", "a", "b", "worse"), [
    ("cost_usd", (0.010, 0.009, 0.011), (0.013, 0.012, 0.014), True),     # +30% and +$0.003
    ("cost_usd", (0.010, 0.009, 0.011), (0.0115, 0.0112, 0.0118), False),  # +15%: under 20%
    ("cost_usd", (0.0001, 0.00009, 0.00011), (0.0005, 0.00048, 0.00052), False),  # +400% but +$0.0004
    ("cost_per_correct", (0.02, 0.018, 0.022), (0.04, 0.035, 0.045), True),
])
def test_cost_is_worse_only_beyond_both_floors_and_the_intervals(metric, a, b, worse) -> None:
    assert is_worse(metric, _row(*a), _row(*b)) is worse


def test_latency_and_cost_never_gate_unless_asked() -> None:
    slow, fast = _row(2.0, 1.9, 2.1), _row(1.0, 0.9, 1.1)
    dear, cheap = _row(0.02, 0.019, 0.021), _row(0.01, 0.009, 0.011)
    assert is_worse("latency_p95_s", fast, slow) and is_worse("cost_usd", cheap, dear)
    assert not is_regression("latency_p95_s", fast, slow) and not is_regression("cost_usd", cheap, dear)
    latency = GateOptions(gate_on=frozenset({"latency"}))
    assert is_regression("latency_p95_s", fast, slow, latency) and not is_regression("cost_usd", cheap, dear, latency)
    cost = GateOptions(gate_on=frozenset({"cost"}))
    assert is_regression("cost_usd", cheap, dear, cost) and not is_regression("latency_p95_s", fast, slow, cost)


def test_the_floors_are_the_users_to_set() -> None:
    a, b = _row(0.1, 0.09, 0.11), _row(0.15, 0.14, 0.16)  # +50 ms, +50%
    assert not is_worse("latency_p50_s", a, b)
    assert is_worse("latency_p50_s", a, b, GateOptions(latency_pct=10, latency_ms=20))
    assert not is_worse("latency_p50_s", a, b, GateOptions(latency_pct=60, latency_ms=20))  # both floors count
    assert not is_worse("latency_p50_s", a, b, GateOptions(latency_pct=10, latency_ms=60))


@pytest.mark.parametrize(("metric", "a", "b"), [
    ("continuity_accuracy", (0.80, 0.79, 0.81), (0.77, 0.76, 0.78)),   # -0.03: far under any latency-style floor
    ("unsupported_claim_rate", (0.01, 0.0, 0.02), (0.04, 0.03, 0.05)),
    ("error_rate", (0.0, 0.0, 0.0), (0.01, 0.005, 0.02)),
])
def test_decision_metrics_gate_by_their_intervals_whatever_the_floors(metric, a, b) -> None:
    wide = GateOptions(latency_pct=1000, latency_ms=1e6, cost_pct=1000, cost_usd=1e6)
    assert is_regression(metric, _row(*a), _row(*b)) and is_regression(metric, _row(*a), _row(*b), wide)


def test_a_slower_run_is_shown_not_gated_and_exits_zero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = synthetic_run(tmp_path / "a", latency=1.0)
    b = synthetic_run(tmp_path / "b", latency=3.0)
    code, out = _compare(capsys, a, b)
    assert code == 0, out
    assert "not gated" in out and "REGRESSION" not in out and "no metric regression beyond the intervals" in out
    assert "worse beyond the intervals and floors, not gated (--gate-on latency to fail on them)" in out


def test_gate_on_latency_fails_a_slower_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = synthetic_run(tmp_path / "a", latency=1.0)
    b = synthetic_run(tmp_path / "b", latency=3.0)
    code, out = _compare(capsys, a, b, gate_on=["latency"])
    assert code == 1 and "REGRESSION" in out and "latency_p50_s" in out
    assert main(["compare", str(a), str(b), "--gate-on", "latency", "--latency-floor-ms", "5000"]) == 0
    assert main(["compare", str(a), str(b), "--gate-on", "cost"]) == 0  # the cost did not change


def test_gate_on_cost_fails_a_dearer_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = synthetic_run(tmp_path / "a", cost=0.01)
    b = synthetic_run(tmp_path / "b", cost=0.03)
    assert _compare(capsys, a, b)[0] == 0
    code, out = _compare(capsys, a, b, gate_on=["cost"])
    assert code == 1 and "cost_usd" in out and "REGRESSION" in out
    assert main(["compare", str(a), str(b), "--gate-on", "cost", "--cost-floor-usd", "0.05"]) == 0


def test_a_negative_floor_is_refused_with_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = synthetic_run(tmp_path / "a")
    with pytest.raises(SystemExit) as exc:
        main(["compare", str(a), str(a), "--latency-floor-ms", "-1"])
    assert exc.value.code == 2 and "0 or more" in capsys.readouterr().err


def _slowed_copy(run: Path, out: Path, seconds: float) -> Path:
    """A copy of a real run whose every sample took ``seconds`` longer (shared by its model calls), its report
    rebuilt."""
    shutil.copytree(run, out)
    lines = []
    for line in (out / RESULTS_FILE).read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        for call in record["model_calls"]:
            call["latency_s"] += seconds / len(record["model_calls"])
        record["wall_time_s"] += seconds
        lines.append(json.dumps(record))
    (out / RESULTS_FILE).write_text("\n".join(lines) + "\n", encoding="utf-8")
    for name in ("summary.json", "scores.jsonl", "metrics.csv", "junit.xml", "index.html"):
        (out / name).unlink(missing_ok=True)
    assert main(["report", str(out)]) in (0, 1)
    return out


def test_a_real_run_slower_by_machine_noise_passes_the_gate(real_runs, tmp_path: Path, capsys) -> None:
    slow = _slowed_copy(real_runs["smoke"], tmp_path / "slow", 0.2)
    capsys.readouterr()
    code, out = _compare(capsys, real_runs["smoke"], slow)
    assert code == 0 and "no metric regression beyond the intervals" in out and "not gated" not in out, out
    # the same 200 ms with the floors at zero: beyond the intervals, shown, still not gated ...
    code, out = _compare(capsys, real_runs["smoke"], slow, latency_floor_pct=0, latency_floor_ms=0)
    assert code == 0 and "not gated" in out, out
    # ... unless asked
    code, out = _compare(capsys, real_runs["smoke"], slow, latency_floor_pct=0, latency_floor_ms=0,
                         gate_on=["latency"])
    assert code == 1 and "REGRESSION" in out


def test_latency_under_a_second_prints_in_milliseconds() -> None:
    from harness.runs.compare import MetricChange, format_diff, format_row

    a = {"metric": "latency_p50_s", "value": 0.0032, "ci_low": 0.003, "ci_high": 0.0035}
    b = {"metric": "latency_p50_s", "value": 0.0041, "ci_low": 0.0038, "ci_high": 0.0045}
    assert format_row(a) == "3.2 ms [3.0 ms, 3.5 ms]"
    change = MetricChange("m", "recall", "all", "latency_p50_s", a=a, b=b, regression=True)
    assert format_diff(change) == "+0.90 ms"
    assert format_row({"metric": "coverage", "value": 0.82, "ci_low": 0.74, "ci_high": 0.891}) == "0.82 [0.74, 0.891]"


def test_token_counts_print_grouped_and_small_differences_keep_their_sign() -> None:
    from harness.runs.compare import MetricChange, format_diff, format_row

    a = {"metric": "prompt_tokens", "value": 3125.4, "ci_low": 2858.0, "ci_high": 3398.2}
    b = {"metric": "prompt_tokens", "value": 3125.2, "ci_low": 2858.0, "ci_high": 3398.2}
    assert format_row(a) == "3,125 [2,858, 3,398]"
    assert format_diff(MetricChange("m", "recall", "all", "prompt_tokens", a=a, b=b, regression=False)) == "-0.2"


# ---------------------------------------------------------------- comparability


def test_runs_of_one_model_each_are_paired_automatically_and_say_so(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    a = synthetic_run(tmp_path / "a")
    b = synthetic_run(tmp_path / "b", model="openai/gpt-4o-mini")
    code, out = _compare(capsys, a, b)
    out = " ".join(out.split())  # the sentence wraps at the terminal's width
    assert code == 0  # the same answers from another model: nothing got worse
    assert f"--pair {MODEL}=openai/gpt-4o-mini says so" in out
    assert f"A's {MODEL} with B's openai/gpt-4o-mini" in out and "NOT COMPARABLE" not in out


def test_different_suites_are_not_comparable_and_the_ids_only_in_one_are_counted_and_listed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = synthetic_run(tmp_path / "a", ids=[f"fact-{i:02d}" for i in range(12)])
    b = synthetic_run(tmp_path / "b", ids=["fact-00", "fact-01", "fact-02", "new-01", "new-02"])
    code, out = _compare(capsys, a, b)
    assert code == 2
    assert "(the suites differ)" in out
    assert "scenario ids: 12 scenarios -> 5 scenarios (3 in both)" in out
    assert "only in A (9): fact-03, fact-04, fact-05, fact-06, fact-07 and 4 more" in out  # truncated, counted
    assert "only in B (2): new-01, new-02" in out


def test_a_scenario_edited_between_the_runs_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = synthetic_run(tmp_path / "a")
    b = tmp_path / "b"
    shutil.copytree(a, b)
    lines = (b / RESULTS_FILE).read_text(encoding="utf-8").splitlines()
    edited = [line.replace(json.loads(line)["scenario_hash"], "f" * 64) if '"fact-03"' in line else line
              for line in lines]
    (b / RESULTS_FILE).write_text("\n".join(edited) + "\n", encoding="utf-8")
    edit_json(b / MANIFEST_FILE, lambda m: m.update(suite_hash="e" * 64))
    code, out = _compare(capsys, a, b)
    assert code == 2 and "suite hash:" in out and "edited: fact-03" in out


def test_parameter_differences_are_printed_as_name_a_to_b(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = synthetic_run(tmp_path / "a")
    b = synthetic_run(tmp_path / "b", parameters={"temperature": 0.7, "max_tool_rounds": 2})
    code, out = _compare(capsys, a, b)
    assert code == 2
    assert "temperature: 0.0 -> 0.7" in out and "max tool rounds: 4 -> 2" in out


@pytest.mark.parametrize(("name", "a", "b", "shown"), [
    ("epochs", 1, 2, "epochs: 1 -> 2"),
    ("seed", 0, 7, "seed: 0 -> 7"),
    ("harness_version", "0.1.0", "0.2.0", "harness version: 0.1.0 -> 0.2.0"),
])
def test_manifest_fields_that_change_results_make_runs_not_comparable(tmp_path, capsys, name, a, b, shown) -> None:
    run_a = synthetic_run(tmp_path / "a")
    run_b = tmp_path / "b"
    shutil.copytree(run_a, run_b)
    edit_json(run_a / MANIFEST_FILE, lambda m: m.update({name: a}))
    edit_json(run_b / MANIFEST_FILE, lambda m: m.update({name: b}))
    code, out = _compare(capsys, run_a, run_b)
    assert code == 2 and shown in out


def test_arms_only_in_one_run_make_it_not_comparable(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = synthetic_run(tmp_path / "a", arms=("history_only", "recall", "full_history"))
    b = synthetic_run(tmp_path / "b")
    code, out = _compare(capsys, a, b)
    assert code == 2 and "arms: full_history, history_only, recall -> history_only, recall" in out
    assert "only in A (1): full_history" in out


def test_settings_that_do_not_change_answers_are_ignored(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = synthetic_run(tmp_path / "a")
    b = synthetic_run(tmp_path / "b", parameters={"workers": 4, "max_concurrency": 32, "cache": False, "retries": 0,
                                                  "cache_dir": "/elsewhere", "timeout_s": 5.0, "filters": ["fact-*"]})
    code, out = _compare(capsys, a, b)
    assert code == 0 and "comparable: same suite" in out


def test_max_tokens_is_compared_and_an_unrecorded_one_reads_as_unset(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    a = synthetic_run(tmp_path / "a")  # written before max_tokens existed: no key
    b = synthetic_run(tmp_path / "b", parameters={"max_tokens": None})
    c = synthetic_run(tmp_path / "c", parameters={"max_tokens": 512})
    assert _compare(capsys, a, b)[0] == 0
    code, out = _compare(capsys, b, c)
    assert code == 2 and "max tokens: none -> 512" in out


def test_a_parameter_compare_does_not_know_counts_as_a_difference(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    a = synthetic_run(tmp_path / "a", parameters={"top_p": 1.0})
    b = synthetic_run(tmp_path / "b", parameters={"top_p": 0.5})
    code, out = _compare(capsys, a, b)
    assert code == 2 and "top p: 1.0 -> 0.5" in out


def test_an_older_run_without_temperature_reads_as_the_default(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    a = synthetic_run(tmp_path / "a")
    b = tmp_path / "b"
    shutil.copytree(a, b)
    edit_json(a / MANIFEST_FILE, lambda m: m["parameters"].pop("temperature"))
    assert _compare(capsys, a, b)[0] == 0


@pytest.mark.parametrize(("change", "shown"), [
    (lambda s: s.update(judge={"model": "openai/gpt-4o", "calls": 3, "cached": 0, "calibration": {}}),
     "judge model: none -> openai/gpt-4o"),
    (lambda s: s["run"].update(excluded_scenarios=["fact-09"]), "excluded scenarios: none -> fact-09"),
    (lambda s: s["verdict"]["config"].update(min_continuity_gain=0.1), "verdict min continuity gain: 0.0 -> 0.1"),
])
def test_scoring_differences_make_runs_not_comparable(tmp_path: Path, capsys, change, shown) -> None:
    a = synthetic_run(tmp_path / "a")
    b = tmp_path / "b"
    shutil.copytree(a, b)
    edit_json(b / "summary.json", change)
    code, out = _compare(capsys, a, b)
    assert code == 2 and shown in out


def test_an_incomplete_run_is_no_basis_for_a_gate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = synthetic_run(tmp_path / "a", **PASSING)
    b = synthetic_run(tmp_path / "b", status="interrupted", **PASSING)
    code, out = _compare(capsys, a, b)
    assert code == 2 and "is not complete" in out and f"--resume {b}" in out
    code, out = _compare(capsys, a, b, force=True)
    # forced, the comparison runs; B's verdict is `incomplete`, which is a verdict regression from A's pass
    assert code == 1 and "compared anyway: --force" in out and "verdict regression: A pass -> B incomplete" in out


def test_an_incomplete_verdict_is_no_basis_for_a_gate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = synthetic_run(tmp_path / "a")
    b = tmp_path / "b"
    shutil.copytree(a, b)
    lines = (b / "results.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (b / "results.jsonl").write_text("".join(lines[:-1]), encoding="utf-8")  # 19 of 20 samples: rebuilt, incomplete
    code, out = _compare(capsys, a, b)
    assert code == 2 and "verdict 'incomplete'" in out


def test_force_compares_the_overlap_and_lists_what_only_one_run_has(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    a = synthetic_run(tmp_path / "a", arms=("history_only", "recall", "full_history"))
    b = synthetic_run(tmp_path / "b", ids=[f"fact-{i:02d}" for i in range(8)] + ["new-01"], recall_right=3)
    code, out = _compare(capsys, a, b, force=True)
    assert code == 1  # recall 9/10 right -> 3/9: a regression on what both runs have
    assert "compared anyway: --force" in out
    assert "arms only in A (1): full_history" in out
    assert "scenarios only in A (2): fact-08, fact-09" in out and "scenarios only in B (1): new-01" in out
    assert "full_history" not in out.split("verdict:")[1]  # no row for an arm B does not have


def test_force_cannot_compare_runs_with_nothing_in_common(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = synthetic_run(tmp_path / "a", arms=("history_only",))
    b = synthetic_run(tmp_path / "b", arms=("recall",))
    code, out = _compare(capsys, a, b, force=True)
    assert code == 2  # a gate never passes on nothing
    assert "no arms in common: nothing to compare, even with --force" in out
    assert "no changes" not in out and "no metric regression" not in out


def test_summary_warnings_of_each_run_are_printed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = synthetic_run(tmp_path / "a")
    b = tmp_path / "b"
    shutil.copytree(a, b)
    edit_json(b / "summary.json", lambda s: s["run"].update(warnings=["2 duplicate records dropped (last kept)"]))
    code, out = _compare(capsys, a, b)
    assert code == 0 and "B warning: 2 duplicate records dropped (last kept)" in out


def test_duplicate_records_are_counted_once_and_said(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = synthetic_run(tmp_path / "a")
    b = tmp_path / "b"
    shutil.copytree(a, b)
    results = b / RESULTS_FILE
    first = results.read_text(encoding="utf-8").splitlines()[0]
    with results.open("a", encoding="utf-8") as handle:
        handle.write(first + "\n")
    code, out = _compare(capsys, a, b)
    assert code == 0 and "B warning: 1 duplicate record(s)" in out


# ---------------------------------------------------------------- output


def _changed_pair(tmp_path: Path) -> tuple[Path, Path]:
    """B breaks recall on most scenarios; history_only is identical in both runs."""
    return synthetic_run(tmp_path / "a", recall_right=10), synthetic_run(tmp_path / "b", recall_right=1)


def test_rows_with_no_change_are_hidden_unless_all(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = _changed_pair(tmp_path)
    code, out = _compare(capsys, a, b)
    assert code == 1
    assert f"{MODEL} / recall" in out and f"{MODEL} / history_only" not in out
    assert "error_rate" not in out  # 0 -> 0 in recall too
    code, out = _compare(capsys, a, b, all=True)
    assert f"{MODEL} / history_only" in out and "error_rate" in out


def test_every_column_has_a_header(tmp_path: Path) -> None:
    a, b = _changed_pair(tmp_path)
    cmp = compare_runs(a, b)
    tables = [*metric_tables(cmp, show_all=True), scenario_table(cmp)]
    assert len(tables) == 3
    for table in tables:
        assert all(str(column.header).strip() for column in table.columns)


def _metric_names(cmp: Any) -> set[str]:
    return {c.metric for c in cmp.metrics}


@pytest.mark.parametrize("width", [80, 100, 160])
def test_metric_names_stay_whole_and_tables_fit_the_width(tmp_path: Path, width: int) -> None:
    from rich.console import Console

    a = synthetic_run(tmp_path / "a", recall_right=10)
    b = synthetic_run(tmp_path / "b", recall_right=1)
    cmp = compare_runs(a, b)
    console = Console(width=width, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    for table in metric_tables(cmp, show_all=True, width=width):
        console.print(table)
    text = console.export_text()
    assert max(len(line) for line in text.splitlines()) <= width
    words = set(text.split())
    assert _metric_names(cmp) <= words  # every name printed whole, never cut or folded
    assert "REGRESSION" in words


def test_a_long_category_is_never_cut_when_only_short_metric_names_show() -> None:
    from types import SimpleNamespace as NS

    from rich.console import Console

    from harness.runs.compare import MetricChange

    a = {"metric": "latency_p50_s", "value": 0.0789, "ci_low": 0.0573, "ci_high": 0.0851}
    b = {"metric": "latency_p50_s", "value": 0.196, "ci_low": 0.0978, "ci_high": 0.230}
    rows = [MetricChange(MODEL, "history_only", category, "latency_p50_s", a=a, b=b, regression=True)
            for category in ("knowledge_update", "recent_history")]
    console = Console(width=80, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    for table in metric_tables(NS(metrics=rows), width=80):
        console.print(table)
    words = set(console.export_text().split())
    assert {"latency_p50_s", "(knowledge_update)", "(recent_history)", "REGRESSION"} <= words


def test_at_80_columns_the_cli_output_keeps_names_whole(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    a, b = _changed_pair(tmp_path)
    code, out = _compare(capsys, a, b, all=True)
    assert code == 1
    table_lines = [line for line in out.splitlines() if "REGRESSION" in line or "continuity_accuracy" in line]
    assert table_lines and all(len(line) <= 80 for line in table_lines)
    assert "abstention_rate_unanswerable" in out.split() and "continuity_accuracy" in out.split()


# ---------------------------------------------------------------- real runs on the offline model


def _run(tmp: Path, name: str, *flags: str) -> Path:
    run_dir = tmp / name
    code = main(["run", *flags, "--out", str(run_dir), "--cache-dir", str(tmp / "cache"), "--no-progress"])
    assert code in (0, 1), f"recall-eval run {flags} exited {code}"
    return run_dir


@pytest.fixture(scope="module")
def real_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Small real runs: the smoke suite twice (the second hotter, with fewer tool rounds) and 5 starter scenarios."""
    tmp = tmp_path_factory.mktemp("real")
    smoke, starter = str(REPO / "scenarios" / "smoke"), str(REPO / "scenarios" / "starter")
    return {
        "smoke": _run(tmp, "smoke", "--scenarios", smoke, "--arms", "history_only", "recall"),
        "smoke_hot": _run(tmp, "smoke_hot", "--scenarios", smoke, "--arms", "history_only", "recall",
                          "--temperature", "0.5", "--max-tool-rounds", "2"),
        "starter": _run(tmp, "starter", "--scenarios", starter, "--filter", "abs-0*",
                        "--arms", "history_only", "recall"),
    }


def test_real_run_against_its_copy_has_no_changes(real_runs, tmp_path: Path, capsys) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(real_runs["smoke"], copy)
    code, out = _compare(capsys, real_runs["smoke"], copy)
    assert code == 0 and "no changes" in out


def test_real_starter_against_smoke_says_the_suites_differ(real_runs, capsys) -> None:
    code, out = _compare(capsys, real_runs["starter"], real_runs["smoke"])
    assert code == 2
    assert "(the suites differ)" in out and "scenario ids: 7 scenarios -> 5 scenarios (0 in both)" in out
    assert "only in A (7): abs-01-billing-staging-host" in out and "and 2 more" in out
    assert "only in B (5): smoke-01-changelog-format" in out


def test_real_runs_differing_in_temperature_and_tool_rounds_say_so(real_runs, capsys) -> None:
    code, out = _compare(capsys, real_runs["smoke"], real_runs["smoke_hot"])
    assert code == 2
    assert "temperature: 0.0 -> 0.5" in out and "max tool rounds: 4 -> 2" in out


@pytest.mark.parametrize(("metric", "gate"), [
    ("latency_p50_s", GateOptions(latency_pct=25, latency_ms=0)),   # the share floor: 25 percent of A's 2 s is 0.5 s
    ("latency_p95_s", GateOptions(latency_pct=0, latency_ms=500)),  # the absolute floor: 500 ms is 0.5 s
    ("cost_usd", GateOptions(cost_pct=25, cost_usd=0)),             # 25 percent of A's $2 is $0.5
])
def test_a_rise_of_exactly_a_floor_is_not_worse_and_a_hair_more_is(metric: str, gate: GateOptions) -> None:
    """The floors are percent of A's value and milliseconds: B - A must exceed them, not reach them."""
    a = _row(2.0, 1.9, 2.1)
    assert not is_worse(metric, a, _row(2.5, 2.4, 2.6), gate)
    assert is_worse(metric, a, _row(2.5001, 2.4, 2.6), gate)


def test_a_difference_with_a_side_unknown_prints_n_a_like_its_row() -> None:
    from harness.runs.compare import MetricChange, format_diff, format_row

    known, unknown = {"metric": "coverage", "value": 0.8}, {"metric": "coverage", "value": None}
    assert format_diff(MetricChange("m", "recall", "all", "coverage", a=known, b=unknown, regression=False)) == "n/a"
    assert format_diff(MetricChange("m", "recall", "all", "coverage", a=unknown, b=known, regression=False)) == "n/a"
    assert format_row(unknown) == "n/a"


@pytest.mark.parametrize(("metric", "a", "b", "shown"), [
    ("prompt_tokens", 2000.0, 3000.0, "+1,000"),        # a token count from 1000 on is grouped, without decimals
    ("prompt_tokens", 3000.0, 2000.0, "-1,000"),
    ("prompt_tokens", 2000.0, 2999.0, "+999"),
    ("tool_leakage_count", 0.0, 1500.0, "+1,500"),
    ("coverage", 0.0, 1500.0, "+1.5e+03"),              # not a count: three significant digits, never grouped
])
def test_a_count_difference_from_a_thousand_on_prints_grouped(metric: str, a: float, b: float, shown: str) -> None:
    from harness.runs.compare import MetricChange, format_diff

    change = MetricChange("m", "recall", "all", metric, a={"metric": metric, "value": a}, b={"metric": metric, "value": b},
                          regression=False)
    assert format_diff(change) == shown


@pytest.mark.parametrize("metric", ["continuity_accuracy", "error_rate", "latency_p50_s", "cost_usd"])
def test_a_row_whose_interval_is_unknown_is_never_worse(metric: str) -> None:
    """One run too small for an interval: no change beyond the intervals can be claimed, whatever the values."""
    good, bad = (0.9, 0.1) if metric == "continuity_accuracy" else (0.1, 9.0)
    for side, bound in (("a", "ci_low"), ("a", "ci_high"), ("b", "ci_low"), ("b", "ci_high")):  # each bound alone
        a, b = _row(good, good, good), _row(bad, bad, bad)
        (a if side == "a" else b)[bound] = None
        assert not is_worse(metric, a, b, GateOptions(latency_pct=0, latency_ms=0, cost_pct=0, cost_usd=0))
        assert not is_regression(metric, a, b, GateOptions(gate_on=frozenset({"latency", "cost"})))


def test_an_error_sample_does_not_break_a_scenario() -> None:
    """Error samples are left out of a scenario's correct rate: a timeout in B is an error, not a wrong answer."""
    from harness.runs.compare import scenario_changes

    def sample(status: str, outcome: str | None, epoch: int) -> dict[str, Any]:
        return {"model": "m", "arm": "recall", "scenario_id": "fact-01", "status": status, "outcome": outcome, "epoch": epoch}

    a = [sample("ok", "correct", 0), sample("ok", "correct", 1)]
    assert scenario_changes(a, [sample("ok", "correct", 0), sample("error", None, 1)]) == []
    broken = scenario_changes(a, [sample("ok", "correct", 0), sample("ok", "wrong", 1)])
    assert [(c["change"], c["b_correct_rate"]) for c in broken] == [("broken", 0.5)]


# ---------------------------------------------------------------- the less-travelled branches (issue 29)

@pytest.mark.parametrize(("row", "shown"), [
    ({"metric": "prompt_tokens", "value": 1000.0}, "1,000"),        # a count from exactly 1000 on is grouped
    ({"metric": "prompt_tokens", "value": 999.0}, "999"),
    ({"metric": "coverage", "value": 1500.0}, "1.5e+03"),           # not a count: never grouped, however large
    ({"metric": "coverage", "value": 0.82, "ci_low": 0.74, "ci_high": 0.89}, "0.82 [0.74, 0.89]"),
    ({"metric": "coverage", "value": 0.82, "ci_low": None, "ci_high": 0.89}, "0.82"),  # half an interval: none shown
    ({"metric": "coverage", "value": 0.82, "ci_low": 0.74, "ci_high": None}, "0.82"),
    ({"metric": "coverage", "value": 0.82}, "0.82"),
])
def test_a_row_prints_grouped_only_as_a_count_and_with_an_interval_only_when_both_bounds_are_known(
        row: dict[str, Any], shown: str) -> None:
    from harness.runs.compare import format_row

    assert format_row(row) == shown


@pytest.mark.parametrize("metric", ["continuity_accuracy", "error_rate", "latency_p50_s", "cost_usd", "tool_leakage_count"])
def test_a_row_whose_value_is_unknown_on_either_side_is_never_worse(metric: str) -> None:
    known = _row(0.5, 0.4, 0.6)
    for a, b in ((_row(0.5, 0.4, 0.6) | {"value": None}, known), (known, _row(0.5, 0.4, 0.6) | {"value": None})):
        assert not is_worse(metric, a, b, GateOptions(latency_pct=0, latency_ms=0, cost_pct=0, cost_usd=0))


def test_one_more_leaked_item_is_worse_whatever_the_intervals_say() -> None:
    """Leakage has no tolerance: B leaking once where A never did is worse even when the intervals overlap
    (and when they are unknown), which the interval rule of the other metrics would not call worse."""
    assert is_worse("tool_leakage_count", _row(0.0, 0.0, 2.0), _row(1.0, 0.0, 3.0))
    assert is_worse("tool_leakage_count", {"value": 0.0}, {"value": 1.0})
    assert not is_worse("tool_leakage_count", _row(1.0, 0.0, 3.0), _row(1.0, 0.0, 3.0))
    assert not is_worse("error_rate", _row(0.0, 0.0, 2.0), _row(1.0, 0.0, 3.0))  # the rule it is an exception to


def test_a_summary_without_metric_rows_shares_no_metric() -> None:
    from harness.runs.compare import metric_changes

    row = {"model": "m", "arm": "recall", "category": "all", "metric": "coverage", "value": 0.8}
    assert metric_changes({}, {"metrics": [row]}) == []
    assert metric_changes({"metrics": [row]}, {}) == []
    assert len(metric_changes({"metrics": [row]}, {"metrics": [row]})) == 1


def test_scenario_changes_name_the_model_arm_and_direction_and_skip_errors_wherever_they_come() -> None:
    from harness.runs.compare import scenario_changes

    def sample(sid: str, status: str, outcome: str | None) -> dict[str, Any]:
        return {"model": "m/one", "arm": "recall", "scenario_id": sid, "status": status, "outcome": outcome}

    a = [sample("fact-01", "error", None), sample("fact-01", "ok", "wrong"), sample("fact-02", "ok", "correct")]
    b = [sample("fact-01", "ok", "correct"), sample("fact-02", "error", None), sample("fact-02", "ok", "wrong")]
    assert scenario_changes(a, b) == [
        {"model": "m/one", "arm": "recall", "scenario_id": "fact-01", "a_correct_rate": 0.0, "b_correct_rate": 1.0,
         "change": "fixed"},
        {"model": "m/one", "arm": "recall", "scenario_id": "fact-02", "a_correct_rate": 1.0, "b_correct_rate": 0.0,
         "change": "broken"},
    ]


def test_compare_runs_refuses_foreign_records_in_either_run_unless_asked(tmp_path: Path) -> None:
    """The library call, as the CLI makes it: by default a record run.json does not plan is refused, in A as in B."""
    from harness.runs import CompareError

    for side in ("a", "b"):
        a, b = comparable_pair(tmp_path / side)
        with ((a if side == "a" else b) / RESULTS_FILE).open("a", encoding="utf-8") as handle:
            handle.write(make_record("other-01", arm="recall").model_dump_json() + "\n")
        with pytest.raises(CompareError, match="does not plan"):
            compare_runs(a, b)
        assert compare_runs(a, b, include_foreign=True).problems == []


def test_each_runs_problems_are_labelled_with_its_side(tmp_path: Path) -> None:
    a = synthetic_run(tmp_path / "a", status="interrupted")
    b = synthetic_run(tmp_path / "b", status="interrupted")
    problems = compare_runs(a, b).problems
    assert [p.split(" is not complete")[0] for p in problems] == [f"A ({a})", f"B ({b})"]
