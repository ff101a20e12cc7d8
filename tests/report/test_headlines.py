"""Honest headlines: each says its fact only where true; leads (incomplete, errors, low tool use) come first."""

from __future__ import annotations

import json
from pathlib import Path

from harness.analysis.verdict import RunHealth, VerdictConfig, terminal_lines
from harness.report import build_report
from harness.report.headlines import headlines, tool_use, unsupported_by_kind
from harness.report.inputs import ReportInputs
from harness.score.scoring import score_sample
from tests.score.scoring_factories import make_record, make_scenario, paired_run, tool_call, write_run

CFG = VerdictConfig()


def _codes(outcome) -> list[str]:
    return [h["code"] for h in outcome.headlines]


def _renamed(records, model: str):
    return [r.model_copy(update={"model": model, "sample_id": r.sample_id.replace(r.model, model)}) for r in records]


def test_offline_baseline_is_said_only_for_the_offline_model(tmp_path: Path) -> None:
    records, scenarios = paired_run(6, recall_right=6, history_right=1)
    offline = build_report(write_run(tmp_path / "a", records), scenarios=scenarios)
    assert "offline_baseline" in _codes(offline)
    real = build_report(write_run(tmp_path / "b", _renamed(records, "openai/gpt-x"), models=("openai/gpt-x",)),
                        scenarios=scenarios)
    assert "offline_baseline" not in _codes(real)


def test_unjudged_rubric_scenarios_are_counted_without_a_judge(tmp_path: Path) -> None:
    rubric = {"rubric": "Pass only if it names Postgres 15."}
    scenarios = {sid: make_scenario(sid, expect=rubric if sid != "fact-02" else None)
                 for sid in ("fact-00", "fact-01", "fact-02")}
    records = [make_record(sc, arm=arm) for sc in scenarios.values() for arm in ("recall", "history_only")]
    outcome = build_report(write_run(tmp_path / "run", records), scenarios=scenarios)
    (note,) = [h for h in outcome.headlines if h["code"] == "unjudged_rubric"]
    assert note["text"].startswith("2 rubric scenario(s) went unjudged (no --judge-model)")


def _summary(diff: float, mde: float, tool_rows=()) -> dict:
    return {"run": {"models": ["openai/x"], "samples": 20},
            "paired": [{"model": "openai/x", "metric": "continuity_accuracy", "arm_a": "history_only",
                        "arm_b": "recall", "diff": diff, "ci_low": diff - 0.1, "ci_high": diff + 0.1,
                        "n_scenarios": 10, "category": "all"}],
            "min_detectable_effect": [{"model": "openai/x", "arm_a": "history_only", "arm_b": "recall",
                                       "n_scenarios": 10, "mde": mde}],
            "tool_use": list(tool_rows)}


def _headlines(summary: dict, health: RunHealth | None = None) -> list[dict]:
    health = health or RunHealth(planned=20, present=20, samples=20)
    inputs = ReportInputs(records=[], planned=health.planned, present=health.present, run_status=health.run_status)
    return headlines(summary, health=health, inputs=inputs, config=CFG, unjudged_rubric=0)


def test_an_effect_below_the_minimum_detectable_effect_is_said() -> None:
    (note,) = [h for h in _headlines(_summary(0.10, 0.25)) if h["code"] == "below_mde"]
    assert "+0.10" in note["text"] and "minimum detectable effect 0.25 (10 scenarios" in note["text"]
    assert not [h for h in _headlines(_summary(-0.30, 0.25)) if h["code"] == "below_mde"]
    assert not [h for h in _headlines(_summary(0.25, 0.25)) if h["code"] == "below_mde"]


def test_the_below_mde_note_reads_the_overall_row_not_a_category_row() -> None:
    summary = _summary(0.40, 0.25)
    summary["paired"].insert(0, {**summary["paired"][0], "category": "preference", "diff": 0.01})
    assert not [h for h in _headlines(summary) if h["code"] == "below_mde"]


def test_low_tool_use_in_the_treatment_arm_leads_the_headlines_and_the_terminal(tmp_path: Path) -> None:
    scenarios = {f"fact-{i}": make_scenario(f"fact-{i}") for i in range(5)}
    records = [make_record(sc, "I don't know.", arm="history_only") for sc in scenarios.values()]
    records += [make_record(sc, "Billing runs Postgres 15.", arm="recall") for sc in scenarios.values()]  # no calls
    outcome = build_report(write_run(tmp_path / "run", records), scenarios=scenarios)
    assert outcome.headlines[0]["code"] == "low_tool_use" and outcome.headlines[0]["lead"]
    assert "in 0 of 5 samples (rate 0.00)" in outcome.headlines[0]["text"]
    assert "says little about memory" in outcome.headlines[0]["text"]
    out, _ = terminal_lines(outcome)
    assert out[0] == outcome.headlines[0]["text"] and out[1].startswith("verdict: ")
    summary = json.loads(outcome.summary_json.read_text())
    assert summary["tool_use"] == [{"model": "offline/reference", "arm": "recall", "offered": 5, "used": 0,
                                    "rate": 0.0}]


def test_tool_use_at_half_is_not_low_and_another_arm_is_only_a_note() -> None:
    rows = [{"model": "m", "arm": "recall", "offered": 4, "used": 2, "rate": 0.5},
            {"model": "m", "arm": "memory_document", "offered": 4, "used": 1, "rate": 0.25}]
    found = [h for h in _headlines(_summary(0.4, 0.1, rows)) if h["code"] == "low_tool_use"]
    assert len(found) == 1 and not found[0]["lead"] and "memory_document" in found[0]["text"]


def test_tool_use_prefers_the_aggregate_metric_and_counts_offered_samples() -> None:
    records, scenarios = paired_run(4, recall_right=4)
    records[0] = make_record(scenarios["fact-00"], arm="recall")  # offered tools, called none
    scored = [score_sample(r, scenarios[r.scenario_id]) for r in records]
    assert tool_use(scored) == [{"model": "offline/reference", "arm": "recall", "offered": 4, "used": 3,
                                 "rate": 0.75}]
    metric = {"model": "offline/reference", "arm": "recall", "category": "all", "metric": "tool_use_rate",
              "value": 0.6, "n": 5}
    assert tool_use(scored, [metric])[0]["rate"] == 0.6


def test_leads_come_in_order_incomplete_errors_low_tool_use() -> None:
    health = RunHealth(planned=30, present=20, run_status="interrupted", errors=5, samples=20)
    rows = [{"model": "m", "arm": "recall", "offered": 10, "used": 1, "rate": 0.1}]
    found = _headlines(_summary(0.4, 0.1, rows), health)
    assert [h["code"] for h in found if h["lead"]] == ["incomplete", "errors", "low_tool_use"]
    assert all(h["lead"] for h in found[:3]) and not any(h["lead"] for h in found[3:])


def test_nothing_is_said_of_a_clean_complete_run_of_a_real_model() -> None:
    rows = [{"model": "m", "arm": "recall", "offered": 10, "used": 9, "rate": 0.9}]
    assert _headlines(_summary(0.4, 0.1, rows)) == []


def test_unsupported_claims_are_split_by_kind(tmp_path: Path) -> None:
    records, scenarios = paired_run(4, recall_right=4, unsupported_in_recall=2)
    records.append(make_record(scenarios["fact-03"], "Postgres 16 and the Falcon-7 launch code", arm="recall",
                               epoch=1, calls=[tool_call(["it-pg-version"])]))
    rows = unsupported_by_kind([score_sample(r, scenarios[r.scenario_id]) for r in records])
    assert {(r["kind"], r["claims"], r["samples"]) for r in rows} == {("stale", 2, 2), ("invented", 1, 1),
                                                                      ("leakage", 1, 1)}
    model = records[0].model
    scored = [score_sample(r, scenarios[r.scenario_id]) for r in records]
    failed = [s.model_copy(update={"status": "error"}) if s.unsupported_claims else s for s in scored]
    assert unsupported_by_kind(failed) == []  # an error sample's claims are not counted (it has no answer to trust)
    assert rows == [{"model": model, "arm": "recall", "kind": kind, "claims": claims, "samples": samples}
                    for kind, claims, samples in sorted([("stale", 2, 2), ("invented", 1, 1), ("leakage", 1, 1)])]
    outcome = build_report(write_run(tmp_path / "run", records), scenarios=scenarios)
    page = outcome.index_html.read_text()
    assert "Unsupported claims by kind" in page and "unsupported_claims 2 (invented 1, leakage 1)" in page


def _protocol_summary(rows: list[dict], **protocol) -> dict:
    summary = _summary(0.40, 0.25)
    summary["protocol"] = {"description": "LoCoMo as mem0 reports it: single_hop, multi_hop",
                           "tables": [{"rows": rows}], **protocol}
    return summary


def _row(category: str, group: str = "headline", scenarios: int = 10, no_relevant_item: int = 0) -> dict:
    return {"category": category, "group": group, "scenarios": scenarios, "no_relevant_item": no_relevant_item}


def _notes(summary: dict, code: str) -> list[str]:
    return [h["text"] for h in _headlines(summary) if h["code"] == code and not h["lead"]]


def test_a_protocol_says_what_decides_the_headline_and_nothing_more_when_all_is_judged_and_found() -> None:
    summary = _protocol_summary([_row("headline", scenarios=20), _row("single_hop"), _row("multi_hop")])
    assert _notes(summary, "protocol") == [
        "the suite's protocol decides the headline: LoCoMo as mem0 reports it: single_hop, multi_hop; the verdict's "
        "continuity and unsupported claims are over these scenarios, each group reported apart has its own line, "
        "and the leakage checks and the rows marked all cover every scenario"]
    assert not _notes(summary, "not_judged") and not _notes(summary, "no_relevant_item")
    assert not _notes(_summary(0.40, 0.25), "protocol")  # no protocol, no note


def test_mixed_protocols_are_said_after_the_first_ones_description() -> None:
    notes = _notes(_protocol_summary([_row("headline")], mixed=True), "protocol")
    assert notes[1:] == ["the run's scenarios declare different protocols; the first one's is reported"]
    assert len(_notes(_protocol_summary([_row("headline")], mixed=False), "protocol")) == 1


def test_unjudged_categories_are_listed_with_their_counts() -> None:
    rows = [_row("headline", scenarios=30), _row("single_session_user", scenarios=30),
            _row("single_session_preference", group="not_judged", scenarios=7),
            _row("tone", group="not_judged", scenarios=2), _row("abstention", group="apart", scenarios=5)]
    assert _notes(_protocol_summary(rows), "not_judged") == [
        "not judged: single_session_preference (7), tone (2) can only be graded by a judge (no --judge-model); they "
        "count in no accuracy and not in the headline"]


def test_scenarios_without_a_relevant_item_are_counted_per_category_and_in_the_headline() -> None:
    rows = [_row("headline", scenarios=40, no_relevant_item=3), _row("single_hop", no_relevant_item=0),
            _row("open_domain", no_relevant_item=2), _row("temporal", no_relevant_item=None),
            _row("adversarial", group="apart", no_relevant_item=4)]
    assert _notes(_protocol_summary(rows), "no_relevant_item") == [
        "6 answerable scenario(s) have no relevant item (open_domain 2, adversarial 4; 3 in the headline): "
        "retrieval recall leaves them out of its n"]


def test_without_a_headline_row_the_missing_items_are_counted_without_a_headline_figure() -> None:
    rows = [_row("open_domain", no_relevant_item=2)]
    assert _notes(_protocol_summary(rows), "no_relevant_item") == [
        "2 answerable scenario(s) have no relevant item (open_domain 2): retrieval recall leaves them out of its n"]
    # a protocol whose run has no table yet says only what decides the headline
    assert [h["code"] for h in _headlines(_protocol_summary([])) if h["code"] in ("protocol", "not_judged",
                                                                                 "no_relevant_item")] == ["protocol"]
    empty = _summary(0.40, 0.25)
    empty["protocol"] = {"description": "x"}
    assert len(_notes(empty, "protocol")) == 1


def test_the_below_mde_note_takes_a_paired_row_without_a_category_as_overall_and_says_nothing_without_one() -> None:
    summary = _summary(0.10, 0.25)
    del summary["paired"][0]["category"]  # an older summary.json: rows had no category, all were overall
    assert [h["code"] for h in _headlines(summary)].count("below_mde") == 1
    summary["paired"] = []  # no paired row for the model: nothing to compare the MDE with
    assert "below_mde" not in [h["code"] for h in _headlines(summary)]


def test_the_below_mde_note_reads_only_the_verdicts_arms_and_a_known_mde() -> None:
    summary = _summary(0.10, 0.25)
    summary["min_detectable_effect"][0].update(arm_b="full_history")  # another pair's MDE is not the verdict's
    assert "below_mde" not in [h["code"] for h in _headlines(summary)]
    summary = _summary(0.10, 0.25)
    summary["min_detectable_effect"][0]["mde"] = None  # unknown (too few scenarios): no claim either way
    assert "below_mde" not in [h["code"] for h in _headlines(summary)]


_BELOW = ("is below the suite's minimum detectable effect 0.25 (10 scenarios, 80% power): the suite is too small to "
          "detect an effect of this size reliably")


def _below(summary: dict) -> list[str]:
    return _notes(summary, "below_mde")


def test_the_below_mde_note_is_said_in_full_for_each_model_it_holds_for_past_rows_it_skips() -> None:
    summary = _summary(0.10, 0.25)
    first_paired, first_mde = summary["paired"][0], summary["min_detectable_effect"][0]
    summary["paired"] = [{**first_paired, "model": "openai/y", "diff": 0.40},          # another model, first
                         {**first_paired, "metric": "tool_use_rate", "diff": 0.02},     # another metric
                         first_paired]
    summary["min_detectable_effect"] = [{**first_mde, "arm_b": "full_history"},        # skipped, not the end
                                        {**first_mde, "model": "openai/y"},            # its gain is over the MDE
                                        first_mde]
    assert _below(summary) == [f"openai/x: the observed continuity difference +0.10 (recall - history_only) {_BELOW}"]


def test_under_a_protocol_the_below_mde_note_reads_the_headline_row_else_the_overall_one() -> None:
    summary = _protocol_summary([_row("headline")])
    summary["paired"].append({**summary["paired"][0], "category": "headline", "diff": 0.05})
    assert _below(summary) == [f"openai/x: the observed continuity difference +0.05 (recall - history_only) {_BELOW}"]
    summary["paired"].pop()  # no headline row: the overall one
    summary["paired"][0]["diff"] = 0.20
    assert _below(summary) == [f"openai/x: the observed continuity difference +0.20 (recall - history_only) {_BELOW}"]
    summary["paired"][0]["diff"] = None  # unknown difference: no claim, and no crash
    assert _below(summary) == []


def _metric(metric: str, value, model: str = "openai/x", arm: str = "recall", **extra) -> dict:  # noqa: ANN001
    return {"metric": metric, "value": value, "model": model, "arm": arm, **extra}


def test_refused_cross_workspace_reads_are_said_per_arm_from_the_overall_rows_only() -> None:
    summary = _summary(0.40, 0.25)
    summary["metrics"] = [
        _metric("out_of_scope_attempts", 3, category="all"),
        _metric("out_of_scope_attempts", 9, category="preference"),            # a category row: not the total
        _metric("out_of_scope_attempts", 2, arm="full_history"),               # no category: an overall row
        _metric("out_of_scope_attempts", 0, arm="history_only", category="all"),  # none: nothing to say
        _metric("tool_use_rate", 4, category="all"),
        _metric("tool_leakage_count", 7, model="openai/y", category="all"),    # another model's leaks
        _metric("tool_leakage_count", 1, arm="full_history", category="all"),
        _metric("tool_leakage_count", 5, category="preference"),
    ]
    assert _notes(summary, "out_of_scope_attempts") == [
        "blocked: openai/x in arm recall asked memory_get for another workspace's items 3 time(s), and the Host "
        "refused each (tool-level leaks 0): the arm was under attack (a prompt-injected item, say), and the scope "
        "gate held",
        "blocked: openai/x in arm full_history asked memory_get for another workspace's items 2 time(s), and the "
        "Host refused each (tool-level leaks 1): the arm was under attack (a prompt-injected item, say), and the "
        "scope gate held for these calls; the leaks are another matter",
    ]


def test_low_tool_use_without_a_count_of_offered_samples_says_only_the_rate() -> None:
    rows = [{"model": "openai/x", "arm": "recall", "offered": 0, "used": 0, "rate": 0.1},
            {"model": "openai/x", "arm": "full_history", "offered": 10, "used": 2, "rate": 0.2}]
    leads = [h["text"] for h in _headlines(_summary(0.40, 0.25, rows)) if h["code"] == "low_tool_use"]
    assert leads == [
        "low tool use: openai/x called the tools it was offered in arm recall (rate 0.10), so the recall-vs-"
        "history_only comparison says little about memory",
        "low tool use: openai/x called the tools it was offered in arm full_history in 2 of 10 samples (rate 0.20)"]


def test_unlabelled_samples_are_summed_over_models_and_arms_from_the_overall_rows() -> None:
    summary = _summary(0.40, 0.25)
    summary["metrics"] = [_metric("unlabelled_probes", 3, category="all"),
                          _metric("unlabelled_probes", 2.0, arm="history_only", category="all"),
                          _metric("unlabelled_probes", None, arm="full_history", category="all"),
                          _metric("unlabelled_probes", 7, category="preference"),
                          _metric("unlabelled_probes", 11),                       # no category: not counted
                          _metric("abstention_rate", 4, category="all")]
    assert _notes(summary, "unlabelled") == [
        "5 sample(s) answer unlabelled probes (logged traffic, no gold): continuity n/a for them, left out of every "
        "accuracy and of over-abstention; unsupported claims, leakage and costs count as for any sample"]
    summary["metrics"] = summary["metrics"][2:]
    assert _notes(summary, "unlabelled") == []


def test_each_plain_note_is_said_in_full() -> None:
    summary = _summary(0.40, 0.25)
    summary["run"] = {"models": ["offline/reference", "openai/x"], "samples": 20,
                      "parameters": {"incomplete_suites": ["locomo-suite", "lme-suite"]}}
    health = RunHealth(planned=20, present=20, samples=20, errors=1)
    inputs = ReportInputs(records=[], planned=20, present=20, run_status=health.run_status)
    said = {h["code"]: h["text"] for h in headlines(summary, health=health, inputs=inputs, config=CFG,
                                                    unjudged_rubric=2)}
    assert said["suite_incomplete"] == (
        "incomplete suite: locomo-suite, lme-suite says complete: false (the import stopped before the end of its "
        "source file); every figure covers only the part imported, not the benchmark")
    assert said["offline_baseline"] == (
        "offline/reference is the offline keyword baseline, a lexical agent and not an LLM: its figures describe "
        "keyword search, not a language model")
    assert said["unjudged_rubric"] == "2 rubric scenario(s) went unjudged (no --judge-model): scored by their patterns only"
    assert said["errors"] == ("1 of 20 samples ended in error (5.0%), within --max-error-rate 0.05; error samples are "
                              "left out of every rate")


def test_tool_use_reads_an_overall_rate_without_a_category_counts_one_tool_and_keeps_four_decimals() -> None:
    records, scenarios = paired_run(3, recall_right=3)
    records[0] = make_record(scenarios["fact-00"], arm="recall")  # offered tools, called none
    scored = [score_sample(r, scenarios[r.scenario_id]) for r in records]
    one_tool = [s.model_copy(update={"tools_offered": 1}) if s.tools_offered else s for s in scored]
    assert tool_use(one_tool) == [{"model": "offline/reference", "arm": "recall", "offered": 3, "used": 2,
                                   "rate": 0.6667}]
    metric = {"model": "offline/reference", "arm": "recall", "metric": "tool_use_rate", "value": 0.5}  # no category
    per_category = {**metric, "category": "preference", "value": 0.1}
    assert tool_use(scored, [metric, per_category])[0]["rate"] == 0.5  # a category row does not override it


def test_what_reading_the_results_found_is_said_in_full() -> None:
    health = RunHealth(planned=20, present=20, samples=20)
    inputs = ReportInputs(records=[], planned=20, present=20, run_status=health.run_status,
                          problems=["results.jsonl:7: not JSON", "results.jsonl:9: not JSON"], duplicates=3,
                          foreign_ids=frozenset({"x/recall/1", "y/recall/1"}))
    said = {h["code"]: h["text"] for h in headlines(_summary(0.40, 0.25), health=health, inputs=inputs, config=CFG,
                                                    unjudged_rubric=0)}
    assert said["unusable_lines"] == ("2 unusable line(s) in results.jsonl were skipped (nothing was deleted); "
                                      "first: results.jsonl:7: not JSON")
    assert said["duplicates"] == "3 duplicate record(s) dropped; the last record of each sample id was kept"
    assert said["foreign"] == "2 record(s) outside run.json were scored (--include-foreign)"
