"""The verdict: pass, fail and inconclusive."""

from __future__ import annotations

from harness.aggregate import aggregate
from harness.scoring import score_sample
from harness.verdict import VerdictConfig, decide
from tests.harness.scoring_factories import MODEL, make_record, make_scenario, paired_run, tool_call


def _verdict(records, scenarios, config=None):
    scored = [score_sample(r, scenarios[r.scenario_id]) for r in records]
    return decide(aggregate(scored), {s.model for s in scored}, config)


def test_clear_gain_without_leaks_passes():
    v = _verdict(*paired_run(10, recall_right=9, history_right=2))
    assert v["status"] == "pass"
    assert v["reasons"][0].startswith("continuity +0.70")


def test_no_gain_fails():
    v = _verdict(*paired_run(10, recall_right=3, history_right=3))
    assert v["status"] == "fail"
    assert v["per_model"][MODEL]["checks"][0]["passed"] is False


def test_min_gain_threshold_is_configurable():
    v = _verdict(*paired_run(10, recall_right=9, history_right=2), VerdictConfig(min_continuity_gain=0.5))
    assert v["status"] == "fail"


def test_rising_unsupported_claims_fail():
    v = _verdict(*paired_run(10, recall_right=10, history_right=2, unsupported_in_recall=6))
    check = next(c for c in v["per_model"][MODEL]["checks"] if c["name"] == "unsupported_claims_within_tolerance")
    assert check["passed"] is False and v["status"] == "fail"


def test_tool_leak_fails_even_with_a_gain():
    records, scenarios = paired_run(10, recall_right=9, history_right=2)
    leaky = make_record(scenarios["fact-00"], calls=[tool_call(["it-other-ws"])], epoch=5)
    v = _verdict(records + [leaky], scenarios)
    assert v["status"] == "fail" and "tool-level leaks 1" in v["reasons"][0]


def test_missing_arm_is_inconclusive():
    records, scenarios = paired_run(10)
    v = _verdict([r for r in records if r.arm == "recall"], scenarios)
    assert v["status"] == "inconclusive"


def test_all_errors_is_inconclusive():
    sc = make_scenario()
    records = [make_record(sc, arm=a, error=True) for a in ("recall", "history_only")]
    assert _verdict(records, {sc.id: sc})["status"] == "inconclusive"


def test_always_abstaining_arm_does_not_get_a_better_verdict():
    answerable = {f"fact-{i}": make_scenario(f"fact-{i}") for i in range(6)}
    unanswerable = {f"abst-{i}": make_scenario(f"abst-{i}", abstain=True, category="abstention") for i in range(6)}
    scenarios = {**answerable, **unanswerable}
    honest = [make_record(s, "Billing runs Postgres 15.", arm="history_only") for s in answerable.values()]
    honest += [make_record(s, "I don't know.", arm="history_only") for s in unanswerable.values()]
    always = [make_record(s, "I don't know, that was not mentioned.", arm="recall") for s in scenarios.values()]
    v = _verdict(honest + always, scenarios)
    assert v["status"] == "fail"


def test_overall_fails_when_any_model_fails():
    good, scenarios = paired_run(10, recall_right=9, history_right=2)
    bad, _ = paired_run(10, recall_right=2, history_right=2)
    bad = [r.model_copy(update={"model": "other/model"}) for r in bad]
    v = _verdict(good + bad, scenarios)
    assert v["status"] == "fail" and v["per_model"][MODEL]["status"] == "pass"
