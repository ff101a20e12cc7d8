"""compare scores every transcript of results.jsonl again and refuses a scores.jsonl that is not what they score."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest

import harness.score.judge as judge_module
from harness.records import RESULTS_FILE, read_manifest, scan_results
from harness.report import build_report
from harness.runs.comparability import CompareError, load_run
from harness.runs.rescore import rescore_disagreement
from tests.runs.compare_factories import edit_scores, synthetic_run, with_suite
from tests.score.scoring_factories import make_record, make_scenario, write_run


def _disagreement(run_dir: Path) -> str | None:
    rows = [json.loads(line) for line in (run_dir / "scores.jsonl").read_text(encoding="utf-8").splitlines()]
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    return rescore_disagreement(read_manifest(run_dir), scan_results(run_dir / RESULTS_FILE), rows, summary)


def _made_correct(row: dict[str, Any]) -> None:
    """A wrong recall sample's row rewritten as correct, every field a reader of the tables sees consistent."""
    if row["arm"] == "recall" and row["outcome"] != "correct":
        row.update(outcome="correct", continuity_correct=True, pattern_correct=True, abstained=False)


def test_an_untouched_report_agrees_with_its_transcripts(tmp_path: Path) -> None:
    assert _disagreement(synthetic_run(tmp_path / "a", recall_right=2, history_right=9)) is None


def test_a_wrong_sample_rewritten_as_correct_is_named_against_its_transcript(tmp_path: Path) -> None:
    """The forgery compare's table check cannot see: rows, tables and digest rewritten to agree with each other."""
    run_dir = synthetic_run(tmp_path / "a", recall_right=2, history_right=9)
    edit_scores(run_dir, _made_correct)
    assert _disagreement(run_dir) == ("row 6 (sample fact-02|recall|offline/reference|0) has outcome 'correct', but "
                                      "its transcript in results.jsonl scores 'abstained_wrongly'")
    with pytest.raises(CompareError) as caught:
        load_run(run_dir)
    assert str(caught.value).startswith(f"{run_dir / 'scores.jsonl'}: row 6 (sample fact-02|recall|")
    assert str(caught.value).endswith(f"rebuild the report from the transcripts with `recall-eval report {run_dir}`")


def test_a_sample_left_out_of_the_scores_is_named(tmp_path: Path) -> None:
    """A failing sample's row deleted (and the tables aggregated without it): the transcript is still there."""
    run_dir = synthetic_run(tmp_path / "a", recall_right=2, history_right=9)
    path = run_dir / "scores.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("".join(line + "\n" for line in lines if '"fact-09|recall|' not in line), encoding="utf-8")
    edit_scores(run_dir, lambda row: None)  # the summary's tables and digest made to agree with the shorter file
    assert _disagreement(run_dir) == "results.jsonl's sample 'fact-09|recall|offline/reference|0' has no row in scores.jsonl"


def test_a_row_of_an_excluded_scenario_is_named(tmp_path: Path) -> None:
    run_dir = synthetic_run(tmp_path / "a")
    build_report(run_dir, exclude=["fact-09"])
    assert _disagreement(run_dir) is None
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    summary["run"]["excluded_scenarios"] = ["fact-08", "fact-09"]
    assert rescore_disagreement(read_manifest(run_dir), scan_results(run_dir / RESULTS_FILE), [
        json.loads(line) for line in (run_dir / "scores.jsonl").read_text(encoding="utf-8").splitlines()], summary) \
        == ("row 17 scores sample 'fact-08|history_only|offline/reference|0' of scenario 'fact-08', which "
            "summary.json's run.excluded_scenarios leaves out")


def test_a_run_whose_scenarios_are_gone_cannot_be_checked_and_compare_says_so(tmp_path: Path) -> None:
    run_dir = synthetic_run(tmp_path / "a")
    for path in (tmp_path / "a-suite").iterdir():
        path.unlink()
    (tmp_path / "a-suite").rmdir()
    with pytest.raises(CompareError) as caught:
        load_run(run_dir)
    assert "cannot be checked against the transcripts it scores (cannot load the run's scenarios" in str(caught.value)
    assert "compare the run where its suite is (compare has no --scenarios)" in str(caught.value)
    assert "pass --scenarios" not in str(caught.value)


def _scripted_judge(model: str, messages: list[dict[str, Any]], **_: Any) -> str:
    """The rubric judge passes the answer naming Postgres 15; the grounding judge finds "a Postgres server" unsupported."""
    system = messages[0]["content"] if messages[0]["role"] == "system" else ""
    text = messages[-1]["content"]
    if "unsupported claims" in system:
        return json.dumps({"unsupported": ["a Postgres server"] if "a Postgres server" in text else []})
    return json.dumps({"verdict": "pass" if "Billing runs Postgres 15." in text else "fail", "reason": "scripted"})


@pytest.fixture
def judged_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A run graded by a (scripted) rubric and grounding judge: compare calls no judge, so it reads their words."""
    monkeypatch.setattr(judge_module, "litellm_complete", _scripted_judge)
    monkeypatch.setitem(sys.modules, "litellm", types.SimpleNamespace(completion=None))
    scenarios = {sid: make_scenario(sid, category="multi_session", expect={"rubric": "The gold answer is 'Postgres 15'."})
                 for sid in ("q-1", "q-2")}
    answers = {("q-1", "recall"): "Billing runs Postgres 15.", ("q-2", "recall"): "Billing runs on a Postgres server.",
               ("q-1", "history_only"): "Billing runs Postgres 15.", ("q-2", "history_only"): "I don't know."}
    records = [make_record(scenarios[sid], answer, arm=arm) for (sid, arm), answer in answers.items()]
    run_dir = with_suite(write_run(tmp_path / "run", records), scenarios)
    build_report(run_dir, judge_model="test/j", judge_cache_dir=tmp_path / "judge-cache")
    return run_dir


def test_a_judged_run_is_scored_again_around_its_judges_words(judged_run: Path) -> None:
    rows = [json.loads(line) for line in (judged_run / "scores.jsonl").read_text(encoding="utf-8").splitlines()]
    assert {row["judge_verdict"] for row in rows} == {"pass", "fail"} and {row["grounding"] for row in rows} >= {"grounded", "ungrounded"}
    assert _disagreement(judged_run) is None


def test_a_judged_row_whose_patterns_were_forged_is_named(judged_run: Path) -> None:
    edit_scores(judged_run, lambda row: row.update(abstained=False) if row["outcome"] == "abstained_wrongly" else None)
    assert "has abstained False, but its transcript in results.jsonl scores True" in str(_disagreement(judged_run))
