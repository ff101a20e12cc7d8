"""Aggregate tables from scored samples."""

from __future__ import annotations

import pytest

from harness.analysis import stats
from harness.analysis.aggregate import AggregateConfig, aggregate
from harness.score.scoring import score_sample
from harness.analysis.verdict import VerdictConfig, decide_model
from tests.harness.sample_scores import sample
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


def _arms(per_scenario: dict[int, tuple[list[int], list[int]]], **kwargs) -> list:
    """Scores from {scenario: ([history_only correctness per epoch], [recall correctness per epoch])}."""
    return [sample(k, arm, epoch, bool(c), **kwargs)
            for k, sides in per_scenario.items() for arm, side in zip(("history_only", "recall"), sides)
            for epoch, c in enumerate(side)]


def test_mcnemar_with_one_epoch_is_the_exact_mcnemar_test_on_scenarios():
    run = {0: ([0], [1]), **{k: ([1], [0]) for k in range(1, 10)}, 10: ([1], [1]), 11: ([0], [0])}
    mc = aggregate(_arms(run))["mcnemar"][0]
    assert (mc["fixed"], mc["broken"], mc["both_correct"], mc["both_wrong"], mc["tied"], mc["n_pairs"]) == \
        (1, 9, 1, 1, 0, 12)
    assert mc["p_value"] == 0.021484375 and mc["test"] == "exact McNemar (1 epoch, scenario pairs)"


@pytest.mark.parametrize("epochs", [1, 3, 10])
def test_mcnemar_p_value_does_not_shrink_when_a_deterministic_run_is_repeated(epochs):
    # The issue: the same starter results gave p = 0.48, 0.13 and 0.004 with 1, 3 and 10 epochs.
    records, scenarios = paired_run(8, recall_right=6, history_right=2, epochs=epochs)
    tables = aggregate(_scored(records, scenarios))
    mc, mde = tables["mcnemar"][0], tables["min_detectable_effect"][0]
    assert (mc["p_value"], mc["n_pairs"], mc["fixed"]) == (0.125, 8, 4)
    assert (mde["n_scenarios"], mde["discordance"]) == (8, 0.5)
    assert len(tables["flips"]) == 4


def test_mcnemar_counts_scenarios_by_the_sign_of_their_mean_difference():
    run = {0: ([1, 1], [1, 1]),   # both correct
           1: ([0, 0], [0, 0]),   # both wrong
           2: ([0, 1], [1, 1]),   # fixed, partly: 0.5 -> 1
           3: ([1, 1], [0, 1]),   # broken, partly
           4: ([0, 1], [1, 0]),   # tied at 0.5
           5: ([0, 0, 0], [1, 1, 1])}
    tables = aggregate(_arms(run))
    mc = tables["mcnemar"][0]
    assert (mc["both_correct"], mc["both_wrong"], mc["fixed"], mc["broken"], mc["tied"], mc["n_pairs"]) == \
        (1, 1, 2, 1, 1, 6)
    assert mc["test"] == "exact sign-flip permutation test on per-scenario mean differences"
    # differences 0, 0, +1/2, -1/2, 0, +1: |sum| >= 1 in 6 of the 8 sign assignments of the non-zero ones
    assert mc["p_value"] == 0.75
    assert {(f["scenario_id"], f["kind"]) for f in tables["flips"]} == {("sc-002", "fixed"), ("sc-003", "broken"),
                                                                       ("sc-005", "fixed")}
    mde = tables["min_detectable_effect"][0]
    # discordance is the mean squared per-scenario difference: (1/4 + 1/4 + 1) / 6
    assert mde["n_scenarios"] == 6 and mde["discordance"] == round(1.5 / 6, 6)
    assert mde["mde"] == round(stats.min_detectable_effect(6, 1.5 / 6), 6)


def test_paired_rows_per_category_come_after_the_all_rows():
    run = {k: ([0], [1 if k < 4 else 0]) for k in range(8)}
    scores = [s.model_copy(update={"category": "preference" if s.scenario_id < "sc-004" else "project_fact"})
              for s in _arms(run)]
    paired = aggregate(scores)["paired"]
    accuracy = [p for p in paired if p["metric"] == "continuity_accuracy"]
    assert [(p["category"], p["diff"], p["n_scenarios"]) for p in accuracy] == \
        [("all", 0.5, 8), ("preference", 1.0, 4), ("project_fact", 0.0, 4)]
    first_other = next(i for i, p in enumerate(paired) if p["category"] != "all")
    assert all(p["category"] == "all" for p in paired[:first_other])
    assert all(p["category"] != "all" for p in paired[first_other:])
    assert set(paired[0]) == {"model", "arm_a", "arm_b", "category", "metric", "diff", "ci_low", "ci_high",
                              "n_scenarios"}
    verdict = decide_model({"metrics": aggregate(scores)["metrics"], "paired": paired}, "m", VerdictConfig())
    assert verdict.checks[0].value == 0.5  # the verdict reads the "all" row


def test_tool_use_rate_counts_ok_samples_offered_tools():
    scores = [sample(0, "recall", 0, True, tool_calls=2), sample(0, "recall", 1, True, tool_calls=0),
              sample(1, "recall", 0, True, tool_calls=1), sample(1, "recall", 1, True, tool_calls=3, ok=False),
              sample(0, "history_only", 0, True)]
    metrics = aggregate(scores)["metrics"]
    rate = _metric({"metrics": metrics}, "recall", "tool_use_rate")
    assert (rate["value"], rate["n"]) == (round(2 / 3, 6), 3) and rate["ci_low"] <= rate["value"] <= rate["ci_high"]
    none = _metric({"metrics": metrics}, "history_only", "tool_use_rate")
    assert (none["value"], none["ci_low"], none["n"]) == (None, None, 0)


def test_cached_samples_are_counted_and_left_out_of_every_latency_figure():
    scores = []
    for k in range(4):
        for epoch in range(3):
            cached = epoch == 2
            scores.append(sample(k, "history_only", epoch, True, latency=100.0 if cached else 1.0, cached=cached))
            scores.append(sample(k, "recall", epoch, True, latency=0.0 if cached else 3.0, cached=cached))
    tables = aggregate(scores)
    cached = _metric(tables, "recall", "cached_samples")
    assert (cached["value"], cached["ci_low"], cached["n"]) == (4, None, 12)
    p95 = _metric(tables, "history_only", "latency_p95_s")
    assert (p95["value"], p95["ci_high"], p95["n"]) == (1.0, 1.0, 8)
    block = next(b for b in tables["latency"] if b["arm"] == "history_only")
    assert block["p95_s"] == 1.0 and block["values_s"] == [1.0] * 8
    added = tables["added_latency"][0]
    assert (added["p50_s"], added["p95_s"], added["ci_high_p50"]) == (2.0, 2.0, 2.0)
    latency_diff = next(p for p in tables["paired"] if p["metric"] == "latency_s")
    assert (latency_diff["diff"], latency_diff["ci_low"], latency_diff["ci_high"]) == (2.0, 2.0, 2.0)


def test_every_interval_resamples_scenarios_not_samples():
    """Few scenarios with many identical epochs are as uncertain as one epoch each; resampling samples would not be."""
    one = [sample(k, arm, 0, bool((k + (arm == "recall")) % 2), latency=1.0 + k + 2 * (arm == "recall"),
                  tokens=100 * (k + 1)) for k in range(4) for arm in ("history_only", "recall")]
    many = [s.model_copy(update={"epoch": e, "sample_id": f"{s.sample_id}/{e}"}) for s in one for e in range(40)]
    config = AggregateConfig(resamples=500)
    a, b = aggregate(one, config=config), aggregate(many, config=config)
    intervals = {
        "metrics": lambda r: (r["metric"], r["arm"], r["category"], r["value"], r["ci_low"], r["ci_high"]),
        "paired": lambda r: (r["metric"], r["category"], r["diff"], r["ci_low"], r["ci_high"], r["n_scenarios"]),
        "added_latency": lambda r: (r["p50_s"], r["ci_low_p50"], r["ci_high_p50"]),
    }
    for block, key in intervals.items():
        assert [key(r) for r in b[block]] == [key(r) for r in a[block]], block
    accuracy = _metric(b, "recall", "continuity_accuracy")
    assert accuracy["ci_high"] - accuracy["ci_low"] >= 0.5
