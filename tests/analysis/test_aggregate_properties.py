"""Aggregate tables over random runs: scenarios are the unit, and every estimate lies within its interval.

The samples are built as ``SampleScores`` directly (no transcripts), so
hypothesis can draw hundreds of runs. Latencies and costs are multiples of
powers of 1/2, so float sums are exact and "unchanged" can mean equal.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from harness.analysis import stats
from harness.analysis.aggregate import AggregateConfig, aggregate
from harness.score.models import SampleScores
from tests.analysis.sample_scores import sample

ARMS = ("history_only", "recall")
CATEGORIES = ("project_fact", "preference", "abstention")
FAST = AggregateConfig(resamples=200)


@st.composite
def runs(draw: st.DrawFn, max_epochs: int = 3) -> list[SampleScores]:
    """1 to 10 scenarios x 2 arms x 1 to ``max_epochs`` epochs of random correctness, latency, errors, cache hits."""
    out = []
    for k in range(draw(st.integers(1, 10))):
        category = draw(st.sampled_from(CATEGORIES))
        abstain = category == "abstention"
        for arm in ARMS:
            for epoch in range(draw(st.integers(1, max_epochs))):
                out.append(sample(
                    k, arm, epoch, draw(st.booleans()), latency=draw(st.integers(1, 400)) / 8, category=category,
                    ok=draw(st.integers(0, 9)) > 0, cached=draw(st.integers(0, 5)) == 0,
                    tool_calls=draw(st.integers(0, 2)) if arm == "recall" else 0, abstain=abstain,
                    unsupported=draw(st.integers(0, 4)) == 0, tokens=draw(st.integers(0, 3000))))
    return out


def repeated(scores: list[SampleScores], times: int) -> list[SampleScores]:
    """Every sample repeated as epochs 0..times-1 of its own (a deterministic model run with ``times`` x the epochs)."""
    return [s.model_copy(update={"epoch": s.epoch * times + r, "sample_id": f"{s.sample_id}/{r}"})
            for s in scores for r in range(times)]


def without_sample_counts(tables: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """The tables minus what legitimately grows with epochs: sample counts and the raw latency list."""
    out: dict[str, Any] = {}
    for key, rows in tables.items():
        dropped = {"n", "values_s", "test"}  # the mcnemar test's name says "1 epoch" only when there was one
        counts = ("tool_leakage_count", "cached_samples")
        out[key] = [{k: v for k, v in row.items() if k not in dropped}
                    for row in rows if not (key == "metrics" and row["metric"] in counts)]
    return out


@settings(max_examples=60, deadline=None)
@given(runs(), st.integers(2, 5))
def test_repeating_a_deterministic_run_changes_no_p_value_interval_flip_or_mde(scores, times):
    once, many = aggregate(scores, config=FAST), aggregate(repeated(scores, times), config=FAST)
    assert [r["p_value"] for r in many["mcnemar"]] == [r["p_value"] for r in once["mcnemar"]]
    assert many["paired"] == once["paired"]
    assert many["flips"] == once["flips"] and many["min_detectable_effect"] == once["min_detectable_effect"]
    assert without_sample_counts(many) == without_sample_counts(once)


@settings(max_examples=60, deadline=None)
@given(runs(max_epochs=1))
def test_one_epoch_mcnemar_is_the_exact_mcnemar_test_on_scenario_pairs(scores):
    row = aggregate(scores, config=FAST)["mcnemar"][0]
    if row["n_pairs"]:
        assert row["test"] == "exact McNemar (1 epoch, scenario pairs)" and row["tied"] == 0
        assert row["p_value"] == stats.mcnemar_exact(row["fixed"], row["broken"])
    assert row["n_pairs"] == row["both_correct"] + row["fixed"] + row["broken"] + row["both_wrong"]


def _inside(value: float | None, low: float | None, high: float | None) -> bool:
    return value is None or low is None or low <= value <= high


@settings(max_examples=80, deadline=None)
@given(runs(max_epochs=4))
def test_every_reported_estimate_lies_within_its_interval(scores):
    tables = aggregate(scores, config=FAST)
    for row in tables["metrics"]:
        assert _inside(row["value"], row["ci_low"], row["ci_high"]), row
    for row in tables["paired"]:
        assert _inside(row["diff"], row["ci_low"], row["ci_high"]), row
    for row in tables["added_latency"]:
        assert _inside(row["p50_s"], row["ci_low_p50"], row["ci_high_p50"]), row


@settings(max_examples=60, deadline=None)
@given(runs(max_epochs=4))
def test_one_quantile_definition_for_metric_rows_latency_block_and_added_latency(scores):
    tables = aggregate(scores, config=FAST)
    for block in tables["latency"]:
        live = [s.latency_s for s in scores if s.arm == block["arm"] and s.status == "ok" and not s.cached]
        rows = {r["metric"]: r for r in tables["metrics"] if r["arm"] == block["arm"] and r["category"] == "all"}
        assert block["p50_s"] == rows["latency_p50_s"]["value"] == stats.quantile(live, 0.5)
        assert block["p95_s"] == rows["latency_p95_s"]["value"] == stats.quantile(live, 0.95)
        assert sorted(block["values_s"]) == sorted(live)
    for row in tables["added_latency"]:
        live = {(s.scenario_id, s.epoch, s.arm): s.latency_s for s in scores if s.status == "ok" and not s.cached}
        diffs = [live[(sc, ep, "recall")] - b for (sc, ep, arm), b in live.items()
                 if arm == "history_only" and (sc, ep, "recall") in live]
        assert row["p50_s"] == stats.quantile(diffs, 0.5) and row["p95_s"] == stats.quantile(diffs, 0.95)
