"""compare's paired regression: run B against run A on the scenarios both scored, by the shared decision rule."""

from __future__ import annotations

from typing import Any

import pytest

from harness.runs.regression import SAMPLE_METRICS, regression_decision


def _sample(sid: str, *, continuity: bool | None = None, unsupported: bool | None = None,
            adherence: bool | None = None, status: str = "ok", model: str = "m", arm: str = "recall",
            category: str = "decision") -> dict[str, Any]:
    scores = [{"name": name, "value": value} for name, value in
              (("continuity", continuity), ("unsupported_claims", unsupported), ("adherence", adherence))]
    return {"scenario_id": sid, "model": model, "arm": arm, "category": category, "status": status,
            "scores": scores}


def _decide(a: list[dict[str, Any]], b: list[dict[str, Any]], metric: str = "continuity_accuracy",
            higher_is_better: bool = True, category: str = "all", **kw: Any) -> Any:
    return regression_decision(a, b, model="m", arm="recall", category=category, metric=metric,
                               higher_is_better=higher_is_better, **kw)


def _runs(before: list[bool], after: list[bool], **kw: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    return ([_sample(f"s{i}", continuity=v, **kw) for i, v in enumerate(before)],
            [_sample(f"s{i}", continuity=v, **kw) for i, v in enumerate(after)])


def test_six_scenarios_broken_and_none_fixed_is_a_proven_regression() -> None:
    a, b = _runs([True] * 6, [False] * 6)
    decided = _decide(a, b)
    assert decided.passed is True
    assert decided.reason == ("continuity_accuracy drop from A to B +1.00 [+0.22, +1.00], 6 scenarios (6 up, 0 down), "
                              "exact p 0.031 > 0.00")


def test_a_gain_from_a_to_b_is_no_regression() -> None:
    a, b = _runs([False] * 8, [True] * 8)
    decided = _decide(a, b)
    assert decided.passed is False and decided.reason.endswith(": no gain")
    assert "drop from A to B -1.00" in decided.reason


def test_for_a_lower_is_better_metric_the_rise_is_the_regression() -> None:
    a = [_sample(f"s{i}", unsupported=False) for i in range(6)]
    b = [_sample(f"s{i}", unsupported=True) for i in range(6)]
    rise = _decide(a, b, metric="unsupported_claim_rate", higher_is_better=False)
    assert rise.passed is True and rise.reason.startswith("unsupported_claim_rate rise from A to B +1.00")
    fall = _decide(b, a, metric="unsupported_claim_rate", higher_is_better=False)
    assert fall.passed is False


def test_only_scenarios_scored_in_both_runs_are_paired() -> None:
    """A scenario only A scored (or only B) cannot be paired: it is left out, not counted as a change."""
    a, b = _runs([True] * 6, [False] * 6)
    a += [_sample("only-a", continuity=False)]
    b += [_sample("only-b", continuity=True)]
    assert "6 scenarios (6 up, 0 down)" in _decide(a, b).reason


def test_other_models_arms_and_categories_are_left_out() -> None:
    a, b = _runs([True] * 6, [False] * 6)
    for other in ({"model": "n"}, {"arm": "history_only"}, {"category": "preference"}):
        a += [_sample(f"s{i}", continuity=False, **other) for i in range(6)]
        b += [_sample(f"s{i}", continuity=True, **other) for i in range(6)]
    assert _decide(a, b, category="decision").passed is True
    assert "(6 up, 0 down)" in _decide(a, b, category="decision").reason
    # over every category the preference samples count too (their gain cancels the decision drop)
    assert _decide(a, b, category="all").passed is not True
    assert _decide(a, b, category="preference").passed is False


def test_each_scenarios_epochs_are_averaged_before_pairing() -> None:
    """s0 right in one of two epochs in A, never in B: a drop of 0.5, one unit, not two."""
    a = [_sample("s0", continuity=True), _sample("s0", continuity=False)] + [_sample(f"s{i}", continuity=True)
                                                                             for i in range(1, 6)]
    b = [_sample(f"s{i}", continuity=False) for i in range(6)]
    decided = _decide(a, b)
    assert "+0.92 [" in decided.reason and "6 scenarios (6 up, 0 down)" in decided.reason


def test_error_samples_count_for_the_error_rate_and_are_left_out_of_the_scores() -> None:
    a = [_sample(f"s{i}", continuity=True) for i in range(6)]
    b = [_sample(f"s{i}", continuity=True, status="error") for i in range(6)]
    assert _decide(a, b) is None  # B scored no scenario: nothing to pair
    errors = _decide(a, b, metric="error_rate", higher_is_better=False)
    assert errors.passed is True and "error_rate rise from A to B +1.00" in errors.reason


@pytest.mark.parametrize("metric", ["continuity_accuracy", "unsupported_claim_rate", "adherence_rate"])
def test_a_true_score_is_one_and_a_false_score_zero(metric: str) -> None:
    name = {"continuity_accuracy": "continuity", "unsupported_claim_rate": "unsupported",
            "adherence_rate": "adherence"}[metric]
    value = SAMPLE_METRICS[metric]
    assert value(_sample("s", **{name: True})) == 1.0 and value(_sample("s", **{name: False})) == 0.0
    assert value(_sample("s", **{name: None})) is None  # the score does not apply to this sample
    assert value(_sample("s", **{name: True}, status="error")) is None
    assert value({"status": "ok", "scores": ["not a score", {"name": "other", "value": True}]}) is None
    assert value({"status": "ok"}) is None


def test_the_error_rate_is_one_for_every_sample_that_is_not_ok() -> None:
    value = SAMPLE_METRICS["error_rate"]
    assert [value({"status": s}) for s in ("ok", "error", "timeout")] == [0.0, 1.0, 1.0]


def test_probes_of_one_conversation_are_one_unit() -> None:
    """12 probes of two conversations, all broken: two units, and no test of two units rejects."""
    a = [_sample(f"conv-{i % 2}/q{i}", continuity=True) for i in range(12)]
    b = [_sample(f"conv-{i % 2}/q{i}", continuity=False) for i in range(12)]
    decided = _decide(a, b)
    assert decided.passed is None and "2 conversations of 12 scenarios (2 up, 0 down)" in decided.reason


def test_the_level_of_the_test_is_the_one_asked_for() -> None:
    """3 broken, none fixed: exact p 0.25, no regression at 0.05, a proven one at alpha 0.3."""
    a, b = _runs([True] * 3, [False] * 3)
    assert _decide(a, b).passed is None
    assert _decide(a, b, alpha=0.3).passed is True


def test_metrics_without_a_per_sample_form_the_headline_and_unpaired_runs_are_not_decided_here() -> None:
    a, b = _runs([True] * 6, [False] * 6)
    assert _decide(a, b, metric="answer_leak_rate") is None
    assert _decide(a, b, category="headline") is None
    assert _decide(a, [_sample("other", continuity=False)]) is None
