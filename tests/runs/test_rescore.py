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
    assert str(caught.value).endswith(" any more: compare the run where its suite is (compare has no --scenarios)); "
                                      "compare scores every sample of results.jsonl again with the run's scenarios")
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


def _garbled_grounding_judge(model: str, messages: list[dict[str, Any]], **_: Any) -> str:
    """As :func:`_scripted_judge`, but the grounding judge's reply on the answer naming a server is not JSON."""
    system = messages[0]["content"] if messages[0]["role"] == "system" else ""
    if "unsupported claims" in system and "a Postgres server" in messages[-1]["content"]:
        return "I think the claims are fine"
    return _scripted_judge(model, messages)


def _garbled_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A judged run whose grounding judge's reply on q-2 was unreadable; q-1's answer invents claims of its own."""
    monkeypatch.setattr(judge_module, "litellm_complete", _garbled_grounding_judge)
    monkeypatch.setitem(sys.modules, "litellm", types.SimpleNamespace(completion=None))
    scenarios = {sid: make_scenario(sid, category="multi_session", expect={"rubric": "The gold answer is 'Postgres 15'."})
                 for sid in ("q-1", "q-2")}
    answers = {("q-1", "recall"): "Billing runs Postgres 15 next to Postgres 16, not on a MySQL box.",
               ("q-2", "recall"): "Billing runs on a Postgres server."}
    records = [make_record(scenarios[sid], answer, arm=arm) for (sid, arm), answer in answers.items()]
    run_dir = with_suite(write_run(tmp_path / "run", records, arms=("recall",)), scenarios)
    build_report(run_dir, judge_model="test/j", judge_cache_dir=tmp_path / "judge-cache")
    return run_dir


def test_a_judged_run_with_an_unreadable_grounding_reply_and_invented_claims_is_scored_again_around_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The grounding judge's unreadable reply (its reason read back from the row) and an answer's own invented
    claim beside the judge's finding: the rows agree with their transcripts."""
    from harness.score import GROUNDING_UNREADABLE

    run_dir = _garbled_run(tmp_path, monkeypatch)
    rows = [json.loads(line) for line in (run_dir / "scores.jsonl").read_text(encoding="utf-8").splitlines()]
    assert {row["grounding"] for row in rows} == {"grounded", "malformed"}
    assert any(c["kind"] != "ungrounded" for row in rows for c in row["unsupported_claims"])
    reasons = [s["reason"] for row in rows for s in row["scores"] if s["name"] == "grounding" and row["grounding"]
               == "malformed"]
    assert len(reasons) == 1 and reasons[0].startswith(GROUNDING_UNREADABLE) and reasons[0] != GROUNDING_UNREADABLE
    assert _disagreement(run_dir) is None  # the judge's error read back from the row, as it was written


def test_a_number_agrees_as_int_or_float_but_a_bool_for_a_count_is_named(tmp_path: Path) -> None:
    run_dir = synthetic_run(tmp_path / "a")
    edit_scores(run_dir, lambda row: row.update(prompt_tokens=float(row["prompt_tokens"]), latency_s=row["latency_s"]))
    assert _disagreement(run_dir) is None
    edit_scores(run_dir, lambda row: row.update(tool_calls=bool(row["tool_calls"])))
    assert _disagreement(run_dir) == ("row 1 (sample fact-00|history_only|offline/reference|0) has tool_calls False, "
                                      "but its transcript in results.jsonl scores 0")


def test_a_long_value_is_cut_to_eighty_characters_in_the_message(tmp_path: Path) -> None:
    run_dir = synthetic_run(tmp_path / "a")
    edit_scores(run_dir, lambda row: row.update(uncredited_items=["x" * 100]) if row["scenario_id"] == "fact-00" else None)
    why = _disagreement(run_dir)
    assert why == ("row 1 (sample fact-00|history_only|offline/reference|0) has uncredited_items "
                   f"{repr(['x' * 100])[:77]}..., but its transcript in results.jsonl scores []")
    edit_scores(run_dir, lambda row: row.update(uncredited_items=["x" * 76]) if row["scenario_id"] == "fact-00" else None)
    assert len(repr(["x" * 76])) == 80
    assert f"has uncredited_items {['x' * 76]!r}, but" in str(_disagreement(run_dir))  # 80 characters: shown whole
    edit_scores(run_dir, lambda row: row.update(uncredited_items=["x" * 77]) if row["scenario_id"] == "fact-00" else None)
    assert f"has uncredited_items {repr(['x' * 77])[:77]}..., but" in str(_disagreement(run_dir))  # 81: cut


def test_a_row_no_record_or_scenario_stands_behind_is_named(tmp_path: Path) -> None:
    run_dir = synthetic_run(tmp_path / "a")
    path = run_dir / "scores.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    foreign = json.loads(lines[3])
    foreign["sample_id"] = "fact-01|recall|offline/reference|7"
    path.write_text("\n".join([*lines, json.dumps(foreign)]) + "\n", encoding="utf-8")
    assert _disagreement(run_dir) == ("row 21 scores sample 'fact-01|recall|offline/reference|7', which results.jsonl "
                                      "has no record of")
    (tmp_path / "a-suite" / "fact-00.yaml").unlink()
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert _disagreement(run_dir) == "row 1 scores scenario 'fact-00', which the run's scenarios lack"


def test_several_samples_left_out_are_counted(tmp_path: Path) -> None:
    run_dir = synthetic_run(tmp_path / "a")
    path = run_dir / "scores.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("".join(line + "\n" for line in lines if '"fact-0' not in line[:80] or "fact-09" in line), encoding="utf-8")
    assert _disagreement(run_dir) == ("results.jsonl's sample 'fact-00|history_only|offline/reference|0' has no row in "
                                      "scores.jsonl (17 more missing)")
    path.write_text("".join(line + "\n" for line in lines if '"fact-00|' not in line[:80]), encoding="utf-8")
    assert _disagreement(run_dir) == ("results.jsonl's sample 'fact-00|history_only|offline/reference|0' has no row in "
                                      "scores.jsonl (1 more missing)")


def test_a_scenario_changed_since_the_run_is_named_with_both_hashes(tmp_path: Path) -> None:
    """The transcript scores otherwise against the scenario's new answer key: the message says the key changed."""
    from harness.scenarios import scenario_hash

    run_dir = synthetic_run(tmp_path / "a", recall_right=10, history_right=0)
    record = json.loads((run_dir / RESULTS_FILE).read_text(encoding="utf-8").splitlines()[0])
    old = make_scenario("fact-00")
    new = make_scenario("fact-00", expect={"must_contain_any": ["Postgres 99"]})
    assert record["scenario_hash"] == scenario_hash(old)
    (tmp_path / "a-suite" / "fact-00.yaml").write_text(json.dumps(new.model_dump(mode="json", exclude_defaults=True)),
                                                       encoding="utf-8")
    why = str(_disagreement(run_dir))
    assert why.endswith(f"; scenario 'fact-00' changed since the run (hash {scenario_hash(old)[:12]}, now "
                        f"{scenario_hash(new)[:12]})")
    assert why.startswith("row 2 (sample fact-00|recall|offline/reference|0) has ")


def test_compare_names_the_other_harness_version_that_scored_a_disagreeing_run(tmp_path: Path) -> None:
    from harness import __version__
    from tests.runs.compare_factories import edit_json

    run_dir = synthetic_run(tmp_path / "a", recall_right=2, history_right=9)
    edit_scores(run_dir, _made_correct)
    edit_json(run_dir / "summary.json", lambda data: data.update(harness_version="0.0.1"))
    with pytest.raises(CompareError) as caught:
        load_run(run_dir)
    assert f"the file was edited, or scored by another harness version (0.0.1; this is {__version__}); rebuild" in str(
        caught.value)
    edit_json(run_dir / "summary.json", lambda data: data.update(harness_version=__version__))
    with pytest.raises(CompareError) as caught:
        load_run(run_dir)
    assert "scored by another harness version; rebuild the report" in str(caught.value)


def test_a_field_a_row_lacks_is_named_as_missing_even_where_the_transcript_scores_none(tmp_path: Path) -> None:
    """A row without ``judge_verdict`` (an unjudged run's transcript scores None there) is not taken as agreeing."""
    run_dir = synthetic_run(tmp_path / "a")
    edit_scores(run_dir, lambda row: row.pop("judge_verdict") if row["scenario_id"] == "fact-00" else None)
    assert _disagreement(run_dir) == ("row 1 (sample fact-00|history_only|offline/reference|0) has judge_verdict "
                                      "'(missing)', but its transcript in results.jsonl scores None")


def test_a_summary_without_a_run_block_excludes_nothing(tmp_path: Path) -> None:
    run_dir = synthetic_run(tmp_path / "a")
    rows = [json.loads(line) for line in (run_dir / "scores.jsonl").read_text(encoding="utf-8").splitlines()]
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    for run in (None, "damaged"):
        summary["run"] = run
        assert rescore_disagreement(read_manifest(run_dir), scan_results(run_dir / RESULTS_FILE), rows, summary) is None
    del summary["run"]
    assert rescore_disagreement(read_manifest(run_dir), scan_results(run_dir / RESULTS_FILE), rows, summary) is None


def test_a_run_of_rubric_scenarios_reported_without_a_judge_agrees_with_its_transcripts(tmp_path: Path) -> None:
    """No judge verdict in the rows: the rubric scenarios are scored again as the report scored them, unjudged."""
    scenarios = {sid: make_scenario(sid, category="multi_session", expect={"rubric": "The gold answer is 'Postgres 15'."})
                 for sid in ("q-1", "q-2")}
    answers = {"q-1": "Billing runs Postgres 15.", "q-2": "I don't know."}
    records = [make_record(scenarios[sid], answer, arm="recall") for sid, answer in answers.items()]
    run_dir = with_suite(write_run(tmp_path / "run", records, arms=("recall",)), scenarios)
    build_report(run_dir)
    rows = [json.loads(line) for line in (run_dir / "scores.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [row["judge_verdict"] for row in rows] == [None, None]
    assert _disagreement(run_dir) is None


def _judge_passed(row: dict[str, Any]) -> None:
    """A judge's pass written into a row, its continuity reason rewritten as a judged row's reads."""
    row.update(judge_verdict="pass", judge_reason="forged")
    row["scores"][0]["reason"] = row["scores"][0]["reason"].replace("checks pass", "judge pass: forged (patterns: pass)")


def test_judge_words_in_the_rows_of_a_run_no_judge_graded_are_named_not_trusted(tmp_path: Path) -> None:
    """summary.json names no judge: a judge's verdict (and grounding) a row claims is scored as absent, not read."""
    scenarios = {"q-1": make_scenario("q-1", category="multi_session", expect={"rubric": "The gold is 'Postgres 15'."})}
    run_dir = with_suite(write_run(tmp_path / "run", [make_record(scenarios["q-1"], "Billing runs Postgres 15.",
                                                                  arm="recall")], arms=("recall",)), scenarios)
    build_report(run_dir)
    edit_scores(run_dir, _judge_passed)
    assert _disagreement(run_dir) == ("row 1 (sample q-1|recall|offline/reference|0) has judge_verdict 'pass', but its "
                                      "transcript in results.jsonl scores None")
    edit_scores(run_dir, lambda row: row.update(judge_verdict=None, judge_reason=None, grounding="grounded"))
    assert "has grounding 'grounded', but its transcript in results.jsonl scores None" in str(_disagreement(run_dir))


def test_an_unreadable_grounding_rows_score_deleted_is_named_not_a_crash(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The row's grounding score (where the judge's error is read back from) removed: the row is named."""
    run_dir = _garbled_run(tmp_path, monkeypatch)
    edit_scores(run_dir, lambda row: row.update(scores=[s for s in row["scores"] if s["name"] != "grounding"])
                if row["grounding"] == "malformed" else None)
    why = str(_disagreement(run_dir))
    assert why.startswith("row 2 (sample q-2|recall|offline/reference|0) has scores [{'name': 'continuity'")


def test_a_judged_row_whose_judges_reason_was_blanked_is_named(judged_run: Path) -> None:
    edit_scores(judged_run, lambda row: row.update(judge_reason=None) if row["judge_verdict"] == "pass" else None)
    assert _disagreement(judged_run) == ("row 1 (sample q-1|recall|offline/reference|0) has judge_reason None, "
                                         "but its transcript in results.jsonl scores ''")  # the row's own words, none


def test_a_row_moved_to_a_suite_scenario_no_sample_ran_is_named_against_its_records_scenario(tmp_path: Path) -> None:
    """The row's own scenario is loaded too (not only the records'): the message names the scenario it was moved to."""
    run_dir = synthetic_run(tmp_path / "a")
    extra = make_scenario("fact-10")
    (tmp_path / "a-suite" / "fact-10.yaml").write_text(json.dumps(extra.model_dump(mode="json", exclude_defaults=True)),
                                                       encoding="utf-8")
    edit_scores(run_dir, lambda row: row.update(scenario_id="fact-10") if row["sample_id"].startswith("fact-00|") else None)
    assert _disagreement(run_dir) == ("row 1 (sample fact-00|history_only|offline/reference|0) has scenario_id "
                                      "'fact-10', but its transcript in results.jsonl scores 'fact-00'")


def test_a_judged_protocol_runs_headline_and_groups_apart_are_scored_again_and_a_moved_sample_is_named(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A suite's protocol (an adversarial category apart, a judge-only category in the headline because a judge
    graded it): each row's place is the protocol's, and a sample moved into the headline is named."""
    monkeypatch.setattr(judge_module, "litellm_complete", _scripted_judge)
    monkeypatch.setitem(sys.modules, "litellm", types.SimpleNamespace(completion=None))
    protocol = {"name": "paper", "reported_apart": ["adversarial"], "judge_only": ["open_domain"],
                "recent_history": {"kind": "none"}}
    rubric = {"rubric": "The gold answer is 'Postgres 15'."}
    declared = {"single_hop": "one fact", "adversarial": "a trap", "open_domain": "world knowledge"}
    scenarios = {sid: type(sc).model_validate({**sc.model_dump(mode="json"), "protocol": protocol, "categories": declared})
                 for sid, sc in ((sid, make_scenario(sid, category=category, expect=rubric))
                                 for sid, category in (("q-1", "single_hop"), ("q-2", "adversarial"), ("q-3", "open_domain")))}
    records = [make_record(scenarios[sid], "Billing runs Postgres 15.", arm="recall") for sid in scenarios]
    run_dir = with_suite(write_run(tmp_path / "run", records, arms=("recall",)), scenarios)
    build_report(run_dir, judge_model="test/j", judge_cache_dir=tmp_path / "judge-cache")
    rows = [json.loads(line) for line in (run_dir / "scores.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(r["scenario_id"], r["headline"], r["apart"], r["outcome"]) for r in rows] == [
        ("q-1", True, [], "correct"), ("q-2", False, ["adversarial"], "correct"), ("q-3", True, [], "correct")]
    assert _disagreement(run_dir) is None
    edit_scores(run_dir, lambda row: row.update(headline=True, apart=[]) if row["scenario_id"] == "q-2" else None)
    assert _disagreement(run_dir) == ("row 2 (sample q-2|recall|offline/reference|0) has headline True, but its "
                                      "transcript in results.jsonl scores False")


def test_a_judged_runs_errored_sample_of_a_rubric_scenario_agrees_with_its_transcript(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No judge was asked about a sample that errored: its row holds no verdict, and none is read from it."""
    monkeypatch.setattr(judge_module, "litellm_complete", _scripted_judge)
    monkeypatch.setitem(sys.modules, "litellm", types.SimpleNamespace(completion=None))
    scenario = make_scenario("q-1", category="multi_session", expect={"rubric": "The gold answer is 'Postgres 15'."})
    records = [make_record(scenario, "Billing runs Postgres 15.", arm="recall"), make_record(scenario, arm="recall",
                                                                                            epoch=1, error=True)]
    run_dir = with_suite(write_run(tmp_path / "run", records, arms=("recall",)), {"q-1": scenario})
    build_report(run_dir, judge_model="test/j", judge_cache_dir=tmp_path / "judge-cache")
    rows = [json.loads(line) for line in (run_dir / "scores.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(row["status"], row["judge_verdict"]) for row in rows] == [("ok", "pass"), ("error", None)]


def _gating_protocol(i: int, scenario: Any) -> Any:
    """LoCoMo's protocol with ``apart_gates: true``: the last 2 of the 10 scenarios adversarial (reported apart)."""
    from harness.importers.locomo import CATEGORY_TEXT, PROTOCOL
    from harness.scenarios import Scenario

    return Scenario.model_validate({**scenario.model_dump(mode="json", exclude_defaults=True),
                                    "protocol": {**PROTOCOL, "apart_gates": True}, "categories": CATEGORY_TEXT,
                                    "category": "adversarial" if i >= 8 else "single_hop"})


def test_apart_gates_edited_in_the_scores_is_named_and_a_row_written_before_it_is_not(tmp_path: Path) -> None:
    """Bug this guards: ``apart_gates`` left out of the fields scored again, so rows edited to say the protocol's
    groups reported apart do not gate (the verdict check then drops a failing apart line) agreed with their
    transcripts. A row of format 2, written before the flag, lacks it and is not called edited for that."""
    run_dir = synthetic_run(tmp_path / "a", scenario_change=_gating_protocol)
    assert _disagreement(run_dir) is None
    edit_scores(run_dir, lambda row: row.update(apart_gates=False))
    assert _disagreement(run_dir) == ("row 1 (sample fact-00|history_only|offline/reference|0) has apart_gates False, "
                                      "but its transcript in results.jsonl scores True")
    edit_scores(run_dir, lambda row: [row.pop("apart_gates"), row.update(schema_version=2)])
    assert _disagreement(run_dir) is None
