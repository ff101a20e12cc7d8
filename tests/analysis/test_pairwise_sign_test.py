"""The pairwise judge's sign test: conversations are the unit, the numbers match a hand computation."""

from __future__ import annotations

import math

import pytest

from harness.analysis import JudgedPair, clopper_pearson, conversation_of, sign_test


def _pairs(scores: dict[str, list[float]]) -> list[JudgedPair]:
    return [JudgedPair(sid, 0, score) for sid, values in scores.items() for score in values]


def test_sign_test_numbers_match_a_hand_computation() -> None:
    """8 conversations won, 2 lost, 2 tied: p = 2 * (C(10,0) + C(10,1) + C(10,2)) / 2^10 = 112 / 1024."""
    scores = {f"won-{i}": [1.0] for i in range(8)} | {f"lost-{i}": [-0.5] for i in range(2)}
    scores |= {"tied-0": [0.0], "tied-1": [1.0, -1.0]}  # the second: a win and a loss that cancel out
    result = sign_test(_pairs(scores))
    assert (result["conversations"], result["wins"], result["ties"], result["losses"]) == (12, 8, 2, 2)
    assert result["p_value"] == 2 * (math.comb(10, 0) + math.comb(10, 1) + math.comb(10, 2)) / 2**10 == 0.109375
    assert result["win_share"] == 0.8 and result["decision"] == "no proven difference"  # p = 0.11
    assert result["win_share_ci"] == pytest.approx([0.443904, 0.974788], abs=2e-6)  # Clopper-Pearson 8 of 10
    assert result["mean_preference"] == pytest.approx((8 * 1.0 + 2 * -0.5) / 12, abs=1e-6)
    low, high = result["mean_preference_ci"]
    assert low <= result["mean_preference"] <= high
    assert (result["probes"], result["probe_wins"], result["probe_ties"], result["probe_losses"]) == (13, 9, 1, 3)


def test_the_unit_of_inference_is_the_conversation_not_the_probe() -> None:
    """One long conversation won on ten probes and three short ones lost: 1 win, 3 losses, not 10 to 3."""
    scores = {f"conv-long/q{i:02d}": [1.0] for i in range(10)}
    scores |= {f"conv-{n}/q01": [-1.0] for n in ("a", "b", "c")}
    result = sign_test(_pairs(scores))
    assert (result["conversations"], result["wins"], result["losses"]) == (4, 1, 3)
    assert result["p_value"] == 0.625  # 2 * (C(4,0) + C(4,1)) / 16; ten probes to three would give 0.092
    assert (result["probe_wins"], result["probe_losses"]) == (10, 3)


def test_a_conversations_score_is_the_mean_over_its_probes_and_epochs() -> None:
    pairs = [JudgedPair("c1/q1", 0, 1.0), JudgedPair("c1/q1", 1, -0.5), JudgedPair("c1/q2", 0, -1.0)]
    assert sign_test(pairs)["losses"] == 1  # (1 - 0.5 - 1) / 3 < 0
    assert sign_test(pairs[:2])["wins"] == 1


def test_position_biased_and_malformed_judgements_are_counted() -> None:
    pairs = [JudgedPair("c1", 0, 0.0, position_biased=True), JudgedPair("c2", 0, 0.0, malformed=2)]
    result = sign_test(pairs)
    assert (result["ties"], result["position_biased"], result["malformed"], result["p_value"]) == (2, 1, 2, 1.0)
    assert result["win_share"] is None and result["win_share_ci"] == [None, None]


def test_the_decision_needs_the_sign_test_below_alpha() -> None:
    """Six conversations all won: p = 2 / 2^6 = 0.03125 < 0.05; five: 0.0625, not enough; six lost: the baseline."""
    assert sign_test(_pairs({f"c{i}": [1.0] for i in range(6)}))["decision"] == "treatment preferred"
    assert sign_test(_pairs({f"c{i}": [1.0] for i in range(5)}))["decision"] == "no proven difference"
    assert sign_test(_pairs({f"c{i}": [-0.5] for i in range(6)}))["decision"] == "baseline preferred"


def test_conversation_of_a_scenario_id() -> None:
    assert conversation_of("conv-26/q017") == "conv-26" and conversation_of("pref-01") == "pref-01"


def test_clopper_pearson_edges() -> None:
    low, high = clopper_pearson(0, 10)
    assert low == 0.0 and high == pytest.approx(1 - 0.025 ** (1 / 10), abs=1e-9)
    low, high = clopper_pearson(10, 10)
    assert high == 1.0 and low == pytest.approx(0.025 ** (1 / 10), abs=1e-9)
    assert clopper_pearson(0, 0) == (None, None)


def test_the_reported_figures_are_rounded_to_six_places_and_the_test_is_named() -> None:
    """1 of 4 conversations won: every share and interval end is written to six places, as summary.json shows them."""
    result = sign_test(_pairs({"a": [1 / 3], "b": [-1 / 7], "c": [-0.55], "d": [-0.15, 1 / 9]}))
    assert result["win_share"] == 0.25 and result["win_share_ci"] == [0.006309, 0.80588]
    assert result["mean_preference"] == -0.094742 and result["mean_preference_ci"] == [-0.417361, 0.214286]
    for value in [*result["win_share_ci"], result["mean_preference"], *result["mean_preference_ci"]]:
        assert value == round(value, 6) != round(value)
    assert result["test"] == "two-sided exact sign test on conversations (ties left out)"
    assert sign_test(_pairs({"a": [1.0], "b": [1.0], "c": [-1.0]}))["win_share"] == 0.666667


def test_the_interval_level_applies_to_both_intervals() -> None:
    scores = {f"w{i}": [1.0] for i in range(6)} | {"l0": [-1.0], "l1": [-0.5], "t": [0.0]}
    wide, narrow = sign_test(_pairs(scores), level=0.99), sign_test(_pairs(scores))
    assert wide["win_share_ci"][0] < narrow["win_share_ci"][0] and wide["win_share_ci"][1] > narrow["win_share_ci"][1]
    assert wide["mean_preference_ci"][0] < narrow["mean_preference_ci"][0]
    assert wide["win_share_ci"] == pytest.approx(list(clopper_pearson(6, 8, 0.99)), abs=1e-6)


def test_a_p_value_exactly_at_alpha_proves_nothing_and_more_losses_prefer_the_baseline() -> None:
    """Six of six won: p = 2/64 = 0.03125. At alpha = 0.03125 that is not below alpha; six lost is the baseline's."""
    won = _pairs({f"c{i}": [1.0] for i in range(6)})
    assert sign_test(won, alpha=0.03125)["decision"] == "no proven difference"
    assert sign_test(won, alpha=0.05)["decision"] == "treatment preferred"
    lost = _pairs({f"c{i}": [-1.0] for i in range(6)})
    assert sign_test(lost)["decision"] == "baseline preferred"
    assert sign_test(lost)["mean_preference"] == -1.0


def test_a_conversation_id_holding_more_slashes_is_its_part_before_the_first() -> None:
    assert conversation_of("conv-26/session-3/q017") == "conv-26"
    result = sign_test(_pairs({"conv-26/s1/q1": [1.0], "conv-26/s2/q2": [1.0], "conv-27/s1/q1": [-1.0]}))
    assert (result["conversations"], result["wins"], result["losses"]) == (2, 1, 1)


def test_a_conversations_score_is_the_mean_of_its_probes() -> None:
    """Probes +1, +1 and -1 (mean +1/3) and a conversation of one -0.5: the mean preference is (1/3 - 0.5) / 2."""
    result = sign_test(_pairs({"a/q1": [1.0], "a/q2": [1.0], "a/q3": [-1.0], "b/q1": [-0.5]}))
    assert result["mean_preference"] == round((1 / 3 - 0.5) / 2, 6)


def test_the_clopper_pearson_ends_at_the_edges_and_for_one_trial() -> None:
    """0 of n: the lower end is 0; n of n: the upper end is 1; one trial, won: ((1 - level) / 2, 1)."""
    low, high = clopper_pearson(0, 5)
    assert low == 0.0 and high == pytest.approx(1 - 0.025 ** (1 / 5), abs=1e-9)
    low, high = clopper_pearson(5, 5)
    assert high == 1.0 and low == pytest.approx(0.025 ** (1 / 5), abs=1e-9)
    assert clopper_pearson(1, 1) == (pytest.approx(0.025, abs=1e-9), 1.0)
    assert clopper_pearson(0, 1) == (0.0, pytest.approx(0.975, abs=1e-9))
    assert clopper_pearson(3, 0) == (None, None)


def test_the_binomial_tail_at_its_edges() -> None:
    from harness.analysis.pairwise import _binomial_tail_at_least

    assert _binomial_tail_at_least(0, 5, 0.3) == 1.0 and _binomial_tail_at_least(-1, 5, 0.0) == 1.0
    assert _binomial_tail_at_least(1, 5, 0.0) == 0.0 and _binomial_tail_at_least(5, 5, 1.0) == 1.0
    assert _binomial_tail_at_least(1, 1, 0.999999) == pytest.approx(0.999999)
    assert _binomial_tail_at_least(1, 2, 0.5) == pytest.approx(0.75)
    assert _binomial_tail_at_least(1, 10, 0.99) == 1.0  # the sum of its terms passes 1 by a rounding error


def test_no_judged_pairs_give_no_figures_and_no_decision() -> None:
    """A run whose pairwise judge was never asked (or every pair malformed away): nothing to estimate, not zeros."""
    result = sign_test([])
    assert (result["conversations"], result["p_value"], result["decision"]) == (0, 1.0, "no proven difference")
    assert result["win_share"] is None and result["win_share_ci"] == [None, None]
    assert result["mean_preference"] is None and result["mean_preference_ci"] == [None, None]
