"""Aggregate tables from scored samples."""

from __future__ import annotations

from harness.aggregate import aggregate
from harness.scoring import score_sample
from tests.harness.scoring_factories import make_record, make_scenario, paired_run


def _scored(records, scenarios):
    return [score_sample(r, scenarios[r.scenario_id]) for r in records]


def _metric(tables, arm, metric, category="all"):
    return next(m for m in tables["metrics"] if m["arm"] == arm and m["metric"] == metric and m["category"] == category)


def test_metrics_have_rows_per_arm_and_category_with_intervals():
    records, scenarios = paired_run(8, recall_right=6, history_right=2, epochs=2)
    tables = aggregate(_scored(records, scenarios))
    acc = _metric(tables, "recall", "continuity_accuracy")
    assert acc["value"] == 0.75 and acc["ci_low"] <= 0.75 <= acc["ci_high"] and acc["n"] == 16
    assert _metric(tables, "history_only", "continuity_accuracy", "project_fact")["value"] == 0.25


def test_paired_mcnemar_and_flips_count_fixed_and_broken():
    records, scenarios = paired_run(8, recall_right=6, history_right=2, epochs=2)
    tables = aggregate(_scored(records, scenarios))
    paired = next(p for p in tables["paired"] if p["metric"] == "continuity_accuracy")
    assert paired["diff"] == 0.5 and paired["ci_low"] > 0 and paired["n_scenarios"] == 8
    mc = tables["mcnemar"][0]
    assert (mc["fixed"], mc["broken"], mc["both_correct"], mc["both_wrong"], mc["tied"]) == (4, 0, 2, 2, 0)
    assert mc["n_pairs"] == 8 and mc["p_value"] == 0.125  # 4 discordant scenarios, not 8 (scenario, epoch) pairs
    assert {f["scenario_id"] for f in tables["flips"] if f["kind"] == "fixed"} == {"fact-02", "fact-03", "fact-04", "fact-05"}


def test_error_samples_count_in_error_rate_not_accuracy():
    sc = make_scenario()
    records = [make_record(sc, epoch=0), make_record(sc, epoch=1, error=True)]
    tables = aggregate([score_sample(r, sc) for r in records])
    assert _metric(tables, "recall", "continuity_accuracy")["value"] == 1.0
    assert _metric(tables, "recall", "error_rate")["value"] == 0.5


def test_always_abstaining_has_no_coverage_and_zero_accuracy():
    answerable = make_scenario("fact-a")
    unanswerable = make_scenario("abst-a", abstain=True, category="abstention")
    scored = [score_sample(make_record(s, "I don't know.", arm="recall"), s) for s in (answerable, unanswerable)]
    tables = aggregate(scored)
    assert _metric(tables, "recall", "coverage")["value"] == 0.0
    assert _metric(tables, "recall", "over_abstention_rate")["value"] == 1.0
    assert _metric(tables, "recall", "abstention_rate_unanswerable")["value"] == 1.0
    assert _metric(tables, "recall", "selective_accuracy")["value"] is None
    assert _metric(tables, "recall", "continuity_accuracy")["value"] == 0.5


def test_added_latency_is_paired_per_scenario_and_epoch():
    records, scenarios = paired_run(6, epochs=2)
    tables = aggregate(_scored(records, scenarios))
    added = tables["added_latency"][0]
    assert 1.0 <= added["p50_s"] <= 1.06 and added["ci_low_p50"] <= added["p50_s"] <= added["ci_high_p50"]


def test_tokens_per_correct_divides_tokens_by_correct_answers():
    records, scenarios = paired_run(4, recall_right=2, history_right=0)
    tables = aggregate(_scored(records, scenarios))
    assert _metric(tables, "recall", "tokens_per_correct")["value"] == 120 * 4 / 2


def test_min_detectable_effect_reported_per_comparison():
    records, scenarios = paired_run(10, recall_right=7, history_right=3)
    mde = aggregate(_scored(records, scenarios))["min_detectable_effect"][0]
    assert mde["n_scenarios"] == 10 and 0 < mde["mde"] <= 1
