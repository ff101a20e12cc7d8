"""build_report and its machine-readable outputs; the report command."""

from __future__ import annotations

import csv
import json
import xml.etree.ElementTree as ET
from types import SimpleNamespace

import pytest

from harness.analysis import VerdictConfig
from harness.records import ResultsError
from harness.report import ReportError, build_report, cli_report
from tests.score.scoring_factories import make_record, paired_run, write_run


@pytest.fixture()
def scenarios_patch(monkeypatch):
    """Let build_report find the hand-built scenarios instead of loading the manifest's paths."""
    def install(scenarios):
        monkeypatch.setattr("harness.report.build.load_run_scenarios", lambda manifest: scenarios)
    return install


# One error in 17 samples (5.9%): above the default --max-error-rate, so tests wanting a pass allow 10%. And 9
# scenarios with no unsupported claim in either arm bound a rise only to +0.30 (z^2 / (9 + z^2)), so they allow
# that much (the default 0.02 needs 189 scenarios, docs/statistics.md).
LENIENT = VerdictConfig(max_error_rate=0.1, unsupported_tolerance=0.35)


def _run(tmp_path, history_right=2, **kwargs):
    # 9 scenarios x 2 arms, every planned sample present: fact-08's recall sample is an error, fact-07's is wrong.
    # history_right=0 makes 7 scenarios fixed and none broken, the fewest an exact test passes at will (p 1/64).
    records, scenarios = paired_run(9, recall_right=7, history_right=history_right, **kwargs)
    records = [r for r in records if not (r.scenario_id == "fact-08" and r.arm == "recall")]
    records.append(make_record(scenarios["fact-08"], arm="recall", error=True))
    return write_run(tmp_path / "run", records), scenarios


def _args(run_dir, **flags):
    values = {"run_dir": str(run_dir), "judge_model": None, "exclude": [], "gate": False, "min_gain": None,
              "unsupported_tolerance": LENIENT.unsupported_tolerance, "max_error_rate": 0.1, "include_foreign": False}
    return SimpleNamespace(**(values | flags))


def test_summary_json_has_verdict_first_and_contract_keys(tmp_path):
    run_dir, scenarios = _run(tmp_path, history_right=0)
    outcome = build_report(run_dir, scenarios=scenarios, thresholds=LENIENT)
    summary = json.loads(outcome.summary_json.read_text())
    assert list(summary)[:4] == ["schema_version", "generated_at", "harness_version", "verdict"]
    assert {"run", "metrics", "paired", "mcnemar", "flips", "latency", "added_latency", "min_detectable_effect",
            "judge"} <= set(summary)
    assert summary["verdict"]["status"] == outcome.verdict == "pass"
    assert summary["run"]["errors"] == 1 and summary["run"]["samples"] == 18


def test_metrics_csv_has_one_row_per_metric(tmp_path):
    run_dir, scenarios = _run(tmp_path)
    build_report(run_dir, scenarios=scenarios)
    rows = list(csv.DictReader((run_dir / "metrics.csv").open()))
    assert list(rows[0]) == ["model", "arm", "category", "metric", "value", "ci_low", "ci_high", "n"]
    acc = [r for r in rows if r["arm"] == "recall" and r["metric"] == "continuity_accuracy" and r["category"] == "all"]
    assert len(acc) == 1 and float(acc[0]["value"]) == pytest.approx(7 / 8)


def test_junit_xml_parses_with_gates_cases_and_error_samples(tmp_path):
    run_dir, scenarios = _run(tmp_path)
    build_report(run_dir, scenarios=scenarios)
    root = ET.parse(run_dir / "junit.xml").getroot()
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert [c.get("name") for c in suites["gates"]] == [
        "continuity_improves", "unsupported_claims_within_tolerance", "no_tool_leakage", "no_answer_leakage",
        "run_complete", "error_rate_within_max"]
    error_gate = suites["gates"][-1].find("failure")  # 1 error in 17 samples is above the default 5%
    assert error_gate is not None and error_gate.get("message").startswith("errors: 1 of 18 samples (5.6%)")
    assert suites["gates"].get("failures") == "1" and suites["gates"][-2].find("failure") is None


def test_junit_xml_test_cases_are_the_gates_checks_only(tmp_path):
    run_dir, scenarios = _run(tmp_path)
    build_report(run_dir, scenarios=scenarios)
    root = ET.parse(run_dir / "junit.xml").getroot()
    cases = list(root.iter("testcase"))
    assert cases and all(c.get("classname").startswith("gates.") for c in cases)
    failed = [c.get("name") for c in cases if c.find("failure") is not None or c.find("error") is not None]
    summary = json.loads((run_dir / "summary.json").read_text())
    checks = [c for mv in summary["verdict"]["per_model"].values() for c in mv["checks"]]
    checks += summary["verdict"]["run_checks"]
    assert failed == [c["name"] for c in checks if c["passed"] is False]
    assert sum(int(s.get("failures")) + int(s.get("errors")) for s in root.iter("testsuite")) == len(failed)


def test_junit_xml_records_every_samples_outcome_as_properties_without_failing(tmp_path):
    run_dir, scenarios = _run(tmp_path)
    build_report(run_dir, scenarios=scenarios)
    root = ET.parse(run_dir / "junit.xml").getroot()
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    for arm, right, wrong, errors in (("recall", 7, 1, 1), ("history_only", 2, 7, 0)):
        suite = suites[f"outcomes offline/reference / {arm}"]
        assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("0", "0", "0")
        assert suite.find("testcase") is None
        properties = {p.get("name"): p.get("value") for p in suite.find("properties")}
        assert (properties["correct"], properties["not_correct"], properties["errors"]) == tuple(
            map(str, (right, wrong, errors)))
        samples = {k: v for k, v in properties.items() if "[epoch" in k}
        assert len(samples) == right + wrong + errors
        assert sum(v == "correct" for v in samples.values()) == right
    recall = {p.get("name"): p.get("value") for p in suites["outcomes offline/reference / recall"].find("properties")}
    assert recall["fact-07 [epoch 0]"].startswith("wrong: ") and "continuity" in recall["fact-07 [epoch 0]"]
    assert recall["fact-08 [epoch 0]"] == "error: Timeout: provider timed out"


def test_junit_xml_of_a_real_failing_run_is_red_only_for_its_failed_checks(tmp_path):
    from tests.integration.offline_runs import offline_run

    run_dir = offline_run(tmp_path)  # the offline model gets some of it wrong in both arms
    root = ET.parse(run_dir / "junit.xml").getroot()
    summary = json.loads((run_dir / "summary.json").read_text())
    wrong = sum(s.get("outcome") not in ("correct", "abstained_correctly")
                for s in map(json.loads, (run_dir / "scores.jsonl").read_text().splitlines()))
    checks = [c for mv in summary["verdict"]["per_model"].values() for c in mv["checks"]]
    failed = sum(c["passed"] is False for c in [*checks, *summary["verdict"]["run_checks"]])
    assert wrong > 0
    assert sum(int(s.get("failures")) + int(s.get("errors")) for s in root.iter("testsuite")) == failed


def test_junit_xml_fails_the_run_complete_gate_of_an_incomplete_run(tmp_path):
    run_dir, scenarios = _run(tmp_path)
    lines = (run_dir / "results.jsonl").read_text().splitlines(keepends=True)
    (run_dir / "results.jsonl").write_text("".join(lines[:-3]))
    build_report(run_dir, scenarios=scenarios, thresholds=LENIENT)
    root = ET.parse(run_dir / "junit.xml").getroot()
    assert root.get("status") == "incomplete"
    case = next(c for c in root.iter("testcase") if c.get("name") == "run_complete")
    assert case.find("failure").get("message").startswith("incomplete: 15 of 18 samples")


def test_junit_xml_survives_control_characters_in_answers(tmp_path):
    records, scenarios = paired_run(3)
    records.append(make_record(scenarios["fact-00"], "bad \x00\x07 answer", epoch=3))
    run_dir = write_run(tmp_path / "run", records)
    build_report(run_dir, scenarios=scenarios)
    ET.parse(run_dir / "junit.xml")


def test_index_html_and_scores_written(tmp_path):
    run_dir, scenarios = _run(tmp_path)
    outcome = build_report(run_dir, scenarios=scenarios)
    assert outcome.index_html.read_text().lstrip().lower().startswith("<!doctype html")
    assert len((run_dir / "scores.jsonl").read_text().splitlines()) == 18


def test_exclude_leaves_a_scenario_out(tmp_path):
    run_dir, scenarios = _run(tmp_path)
    build_report(run_dir, scenarios=scenarios, exclude=["fact-0[01]"])
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["run"]["excluded_scenarios"] == ["fact-00", "fact-01"]
    assert summary["run"]["samples"] == 14


def test_exclude_matching_no_scenario_is_an_error_with_a_did_you_mean(tmp_path, scenarios_patch, capsys):
    run_dir, scenarios = _run(tmp_path)
    scenarios_patch(scenarios)
    assert cli_report(_args(run_dir, exclude=["fact-00", "fact-00x"])) == 2
    err = capsys.readouterr().err
    assert "--exclude 'fact-00x' matches no scenario id in the results (did you mean 'fact-00'?); fix or drop it" in err
    assert "fact-00' matches" not in err and not (run_dir / "summary.json").exists()


def test_exclude_matching_nothing_names_a_scenario_only_when_one_is_close(tmp_path):
    run_dir, scenarios = _run(tmp_path)
    with pytest.raises(ReportError, match=r"--exclude 'nope' matches no scenario id in the results; fix or drop it"):
        build_report(run_dir, scenarios=scenarios, exclude=["nope"])


def test_report_on_a_folder_without_manifest_is_a_clear_error(tmp_path, capsys):
    with pytest.raises(ResultsError, match="run manifest"):
        build_report(tmp_path)
    assert cli_report(SimpleNamespace(run_dir=str(tmp_path), judge_model=None, exclude=[], gate=False)) == 2
    assert "run manifest" in capsys.readouterr().err


def test_report_on_missing_folder_is_a_clear_error(tmp_path):
    with pytest.raises(ReportError, match="no such folder"):
        build_report(tmp_path / "nope")


def test_a_broken_results_line_is_named_and_the_report_still_built(tmp_path, scenarios_patch, capsys):
    run_dir, scenarios = _run(tmp_path)
    scenarios_patch(scenarios)
    text = (run_dir / "results.jsonl").read_text().splitlines()
    (run_dir / "results.jsonl").write_text("\n".join(text[:2] + ["{broken"] + text[2:]) + "\n")
    assert cli_report(_args(run_dir)) == 0  # an extra bad line: every planned sample is still there
    captured = capsys.readouterr()
    assert "results.jsonl:3: not valid JSON" in captured.err and "Traceback" not in captured.err + captured.out
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["run"]["unusable_lines"] == 1 and summary["run"]["complete"] is True
    assert [h["code"] for h in summary["headlines"]].count("unusable_lines") == 1


def test_cli_report_prints_the_verdict_and_gates(tmp_path, scenarios_patch, capsys):
    run_dir, scenarios = _run(tmp_path, history_right=0)
    scenarios_patch(scenarios)
    args = _args(run_dir, gate=True)
    assert cli_report(args) == 0
    assert "\nverdict: PASS\n" in capsys.readouterr().out
    args.min_gain = 0.9
    assert cli_report(args) == 1
    assert "\nverdict: FAIL\n" in capsys.readouterr().out


def test_build_report_restores_the_garbage_collector_state(tmp_path):
    import gc

    records, scenarios = paired_run(3)
    write_run(tmp_path / "run", records)
    assert gc.isenabled()
    try:
        build_report(tmp_path / "run", scenarios=scenarios)
        assert gc.isenabled()
        with pytest.raises(ReportError):
            build_report(tmp_path / "missing")
        assert gc.isenabled()
        gc.disable()
        build_report(tmp_path / "run", scenarios=scenarios)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_judge_verdicts_decide_rubric_scenarios_through_build_report(tmp_path) -> None:
    from harness.score.judge import Judge
    from tests.score.scoring_factories import make_record, make_scenario, write_run

    scenarios = {
        sid: make_scenario(sid, expect={"rubric": "Pass only if it names Postgres 15 as what billing runs now."})
        for sid in ("fact-01", "fact-02")
    }
    records = [make_record(sc, "Billing runs Postgres 15.", arm=arm) for sc in scenarios.values() for arm in ("recall", "history_only")]
    run_dir = write_run(tmp_path / "run", records)
    asked: list[str] = []

    def complete(model, messages):
        asked.append(messages[-1]["content"])
        return '{"verdict": "fail", "reason": "scripted strict judge"}'

    judge = Judge(model="test/judge", cache_dir=tmp_path / "judge", complete=complete)
    import harness.report as report
    import harness.report.build as build

    original = build.judge_for
    build.judge_for = lambda model, cache, **prompt: judge
    try:
        outcome = report.build_report(run_dir, judge_model="test/judge", scenarios=scenarios)
    finally:
        build.judge_for = original
    scores = [json.loads(line) for line in (run_dir / "scores.jsonl").read_text().splitlines()]
    assert asked and all(s["outcome"] == "wrong" for s in scores)  # the judge, not the patterns, decided
    assert outcome.summary_json.is_file()


def test_a_scenario_edited_since_the_run_is_named_in_the_warnings_after_the_other_warnings(tmp_path):
    """The hash check runs beside scoring; its warnings still reach summary.json and the outcome, last, once each.

    Bugs planted: the check's result dropped (no warning), added to the outcome only, and added twice.
    """
    records, scenarios = paired_run(4)
    run_dir = write_run(tmp_path / "run", records)
    edited = {sid: sc for sid, sc in scenarios.items() if sid != "fact-03"}  # its results are "not scored": a warning
    edited["fact-02"] = scenarios["fact-02"].model_copy(update={"title": "Edited after the run"})
    outcome = build_report(run_dir, scenarios=edited)
    summary = json.loads(outcome.summary_json.read_text())
    changed = [w for w in outcome.warnings if "changed since the run" in w]
    assert len(changed) == 1 and changed[0].startswith("scenario 'fact-02' changed since the run (hash ")
    assert outcome.warnings[-1] == changed[0] and outcome.warnings[0].startswith("not scored: scenarios ['fact-03']")
    assert summary["run"]["warnings"] == outcome.warnings
    assert not [w for w in build_report(run_dir, scenarios=scenarios).warnings if "changed since" in w]
