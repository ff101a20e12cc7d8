"""pandas views of a run: the same scores the report uses, one row per sample."""

from __future__ import annotations

import json

from harness.report import build_report
from harness.report.frames import metrics_frame, scores_frame
from tests.score.scoring_factories import make_record, make_scenario, write_run


def _run(tmp_path, monkeypatch):
    scenario = make_scenario("fact-01")
    records = [
        make_record(scenario, "Billing runs Postgres 15.", arm="recall"),
        make_record(scenario, "I don't know.", arm="history_only"),
        make_record(scenario, None, arm="recall", epoch=1, error=True),
    ]
    run_dir = write_run(tmp_path / "run", records)
    import harness.report.build as report

    monkeypatch.setattr(report, "load_run_scenarios",
                        lambda manifest: {scenario.id: scenario} if scenario.id in manifest.scenario_ids else {})
    return run_dir


def test_scores_frame_has_one_row_per_sample_with_the_report_scores(tmp_path, monkeypatch) -> None:
    frame = scores_frame(_run(tmp_path, monkeypatch))
    assert len(frame) == 3
    ok = frame[frame.status == "ok"].set_index("arm")
    assert bool(ok.loc["recall", "continuity_correct"]) is True
    assert bool(ok.loc["history_only", "abstained"]) is True
    assert frame[frame.status == "error"].continuity_correct.isna().all()
    assert {"unsupported_claims", "tool_leaks", "retrieved_precision", "latency_s"} <= set(frame.columns)


def test_metrics_frame_builds_the_report_when_missing(tmp_path, monkeypatch) -> None:
    run_dir = _run(tmp_path, monkeypatch)
    frame = metrics_frame(run_dir)
    assert (run_dir / "metrics.csv").is_file()
    row = frame[(frame.arm == "recall") & (frame.category == "all") & (frame.metric == "continuity_accuracy")]
    assert float(row.value.iloc[0]) == 1.0
    assert build_report(run_dir).summary_json.is_file()


def test_scores_frame_loads_only_the_scenarios_the_results_name(tmp_path, monkeypatch) -> None:
    run_dir = _run(tmp_path, monkeypatch)
    import harness.report.build as report

    asked: list[set[str]] = []
    real = report.load_run_scenarios
    monkeypatch.setattr(report, "load_run_scenarios", lambda manifest: asked.append(set(manifest.scenario_ids)) or real(manifest))
    manifest = run_dir / "run.json"
    data = json.loads(manifest.read_text())
    data["scenario_ids"] = [*data["scenario_ids"], "never-run-01"]  # planned, not in the results
    manifest.write_text(json.dumps(data))
    assert len(scores_frame(run_dir)) == 3
    assert asked == [{"fact-01"}]
    assert len(scores_frame(run_dir, exclude=["fact-01"])) == 0 and asked[-1] == set()
