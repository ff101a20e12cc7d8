"""Verdict behaviours that survived planted bugs (issue 9), pinned through ``aggregate`` + ``decide``.

Every test here was watched failing against the bug its docstring names, then
passing once the bug was removed.
"""

from __future__ import annotations

from tests.harness.scoring_factories import MODEL, make_record, make_scenario, paired_run, tool_call

from harness.analysis.aggregate import aggregate
from harness.score.scoring import score_sample
from harness.analysis.verdict import VerdictConfig, decide


def _verdict(records, scenarios, config=None):
    scored = [score_sample(r, scenarios[r.scenario_id]) for r in records]
    return decide(aggregate(scored), {s.model for s in scored}, config)


def _check(verdict, name: str, model: str = MODEL) -> dict:
    return next(c for c in verdict["per_model"][model]["checks"] if c["name"] == name)


def _one_leaky_answer(n: int = 20):
    """A clear gain, and one of ``n`` recall answers naming another workspace's canary."""
    records, scenarios = paired_run(n, recall_right=n, history_right=2)
    leaky = next(r for r in records if r.arm == "recall" and r.scenario_id == "fact-00")
    records[records.index(leaky)] = leaky.model_copy(
        update={"final_answer": "Billing runs Postgres 15. Falcon-7 launch code is in the vault."})
    return records, scenarios


def test_one_leaked_answer_among_many_fails_the_answer_leakage_check() -> None:
    """Bug: the verdict read the answer-leakage *rate* (1/20 rounds to 0) instead of the count of leaked answers."""
    v = _verdict(*_one_leaky_answer(20))
    check = _check(v, "no_answer_leakage")
    assert check["passed"] is False and check["value"] == 1
    assert v["status"] == "fail"


def test_one_tool_leak_among_many_samples_fails_the_tool_leakage_check() -> None:
    """Bug: the tool-leak count divided by the samples (a rate) before comparing with zero."""
    records, scenarios = paired_run(20, recall_right=20, history_right=2)
    leaky = next(r for r in records if r.arm == "recall" and r.scenario_id == "fact-03")
    records[records.index(leaky)] = leaky.model_copy(update={"tool_calls": [tool_call(["it-other-ws"])]})
    v = _verdict(records, scenarios)
    check = _check(v, "no_tool_leakage")
    assert check["passed"] is False and check["value"] == 1 and v["status"] == "fail"


def test_tool_leaks_in_the_baseline_arm_fail_too() -> None:
    """Bug: tool leaks counted in the treatment arm only."""
    records, scenarios = paired_run(10, recall_right=10, history_right=2)
    leaky = next(r for r in records if r.arm == "history_only")
    records[records.index(leaky)] = leaky.model_copy(update={"tool_calls": [tool_call(["it-pg-old"])]})
    assert _check(_verdict(records, scenarios), "no_tool_leakage")["passed"] is False


def test_unsupported_rise_exactly_at_the_tolerance_passes() -> None:
    """Bug: the tolerance compared with ``<`` (the docs say "at most"): zero tolerance failed a suite with no rise."""
    v = _verdict(*paired_run(10, recall_right=10, history_right=2), VerdictConfig(unsupported_tolerance=0.0))
    check = _check(v, "unsupported_claims_within_tolerance")
    assert check["ci_high"] == 0.0 and check["passed"] is True
    assert v["status"] == "pass"


def test_unsupported_rise_just_above_the_tolerance_fails() -> None:
    """Bug: the tolerance compared the wrong bound (the point estimate or the lower bound) or with ``>=``."""
    records, scenarios = paired_run(10, recall_right=10, history_right=2, unsupported_in_recall=1)
    v = _verdict(records, scenarios, VerdictConfig(unsupported_tolerance=0.1))
    check = _check(v, "unsupported_claims_within_tolerance")
    assert check["value"] == 0.1 and check["ci_low"] <= 0.0 < 0.1 < check["ci_high"]
    assert check["passed"] is False
    exact = VerdictConfig(unsupported_tolerance=check["ci_high"])
    assert _check(_verdict(records, scenarios, exact), "unsupported_claims_within_tolerance")["passed"] is True


def test_continuity_gain_exactly_at_the_minimum_is_no_proven_gain() -> None:
    """Bug: ``>=`` instead of ``>``: equal arms (interval [0, 0]) passed with the default minimum gain of 0."""
    v = _verdict(*paired_run(10, recall_right=10, history_right=10))
    check = _check(v, "continuity_improves")
    assert check["ci_low"] == 0.0 and check["passed"] is False and v["status"] == "fail"


def test_a_failed_check_with_an_undecided_one_is_a_failure() -> None:
    """Bug: a model with one failed and one undecided check was reported inconclusive."""
    sc = make_scenario("fact-solo")
    records = [make_record(sc, arm="history_only"),
               make_record(sc, arm="recall", calls=[tool_call(["it-other-ws"])])]
    v = _verdict(records, {sc.id: sc})
    checks = {c["name"]: c["passed"] for c in v["per_model"][MODEL]["checks"]}
    assert checks["continuity_improves"] is None and checks["no_tool_leakage"] is False
    assert v["per_model"][MODEL]["status"] == "fail" and v["status"] == "fail"
    assert v["reasons"][0].startswith("tool-level leaks 1")


def test_overall_fails_when_one_model_fails_and_another_is_inconclusive() -> None:
    """Bug: overall status took inconclusive over fail across models."""
    good, scenarios = paired_run(10, recall_right=9, history_right=2)
    leaky = make_record(scenarios["fact-00"], calls=[tool_call(["it-other-ws"])], epoch=5)
    undecided = [r.model_copy(update={"model": "other/model"}) for r in good if r.arm == "recall"]
    v = _verdict(good + [leaky] + undecided, scenarios)
    assert v["per_model"][MODEL]["status"] == "fail"
    assert v["per_model"]["other/model"]["status"] == "inconclusive"
    assert v["status"] == "fail"


def test_only_undecided_checks_make_a_model_inconclusive_not_a_pass() -> None:
    """Bug: undecided checks counted as passed."""
    sc = make_scenario("fact-solo")
    records = [make_record(sc, arm="history_only", answer="I don't know."), make_record(sc, arm="recall")]
    v = _verdict(records, {sc.id: sc})
    assert v["per_model"][MODEL]["status"] == "inconclusive" and v["status"] == "inconclusive"
