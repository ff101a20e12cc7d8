"""Statistics against known values, brute force and properties over random inputs."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.analysis import stats


def test_mcnemar_exact_matches_hand_computation():
    assert stats.mcnemar_exact(1, 9) == pytest.approx(2 * (math.comb(10, 0) + math.comb(10, 1)) / 2**10)
    assert stats.mcnemar_exact(1, 9) == 0.021484375
    assert stats.mcnemar_exact(9, 1) == stats.mcnemar_exact(1, 9)


def test_mcnemar_without_discordant_pairs_is_one():
    assert stats.mcnemar_exact(0, 0) == 1.0
    assert stats.mcnemar_exact(5, 5) == 1.0


def test_cluster_mean_ci_contains_the_mean_and_is_deterministic():
    values = [1, 0, 1, 1, 0, 1, 1, 1]
    clusters = ["a", "a", "b", "b", "c", "c", "d", "d"]
    first = stats.cluster_mean_ci(values, clusters)
    assert first.value == 0.75 and first.ci_low <= 0.75 <= first.ci_high and first.n == 4
    assert stats.cluster_mean_ci(values, clusters) == first


def test_cluster_ratio_ci_of_empty_input_is_none():
    assert stats.cluster_ratio_ci([], [], []).value is None


def test_bootstrap_interval_covers_truth_on_clustered_bernoulli_data():
    rng = np.random.default_rng(7)
    truth, covered, reps = 0.6, 0, 200
    for rep in range(reps):
        # 40 scenarios x 3 epochs; each scenario has its own difficulty around the truth (clustering).
        p = np.clip(rng.beta(6, 4, size=40), 0, 1)
        values = (rng.random((40, 3)) < p[:, None]).astype(float).ravel()
        clusters = np.repeat(np.arange(40), 3)
        iv = stats.cluster_mean_ci(values, clusters, resamples=400, seed=rep)
        covered += iv.ci_low <= truth <= iv.ci_high
    assert 0.88 * reps <= covered <= 0.995 * reps


def test_paired_diff_ci_sign_follows_the_better_arm():
    better = stats.paired_diff_ci([0.0, 0.0, 0.5, 0.0, 0.0, 1.0], [1.0, 1.0, 1.0, 0.5, 1.0, 1.0])
    assert better.value > 0 and better.ci_low > 0
    worse = stats.paired_diff_ci([1.0, 1.0, 1.0, 0.5, 1.0, 1.0], [0.0, 0.0, 0.5, 0.0, 0.0, 1.0])
    assert worse.value < 0 and worse.ci_high < 0


def test_paired_diff_ci_of_identical_arms_is_zero():
    iv = stats.paired_diff_ci([1, 0, 1], [1, 0, 1])
    assert (iv.value, iv.ci_low, iv.ci_high) == (0.0, 0.0, 0.0)


def test_cluster_quantile_ci_brackets_the_median():
    values = np.arange(100, dtype=float)
    iv = stats.cluster_quantile_ci(values, np.repeat(np.arange(20), 5), 0.5)
    assert iv.ci_low <= iv.value <= iv.ci_high and 40 <= iv.value <= 60


def test_min_detectable_effect_shrinks_with_more_scenarios():
    small = stats.min_detectable_effect(20, 0.3)
    large = stats.min_detectable_effect(200, 0.3)
    assert large < small <= 1.0
    assert stats.min_detectable_effect(50, 0.2) == pytest.approx((1.959964 + 0.841621) * math.sqrt(0.2 / 50), rel=1e-4)


def test_min_detectable_effect_without_discordance_is_not_zero():
    assert stats.min_detectable_effect(10, 0.0) > 0


def test_mcnemar_exact_handles_thousands_of_pairs():
    assert 0.0 <= stats.mcnemar_exact(900, 1300) < 1e-10
    assert stats.mcnemar_exact(1500, 1500) == 1.0


def test_cluster_quantile_ci_matches_brute_force_resampling():
    rng = np.random.default_rng(3)
    values, clusters = rng.lognormal(size=60), np.repeat([f"s{k:02d}" for k in range(12)], 5)
    iv = stats.cluster_quantile_ci(values, clusters, 0.5, resamples=300, seed=11)
    counts = stats._counts(12, 300, 11)
    brute = []
    for row in counts:
        resampled = np.sort(np.concatenate([np.repeat(values[clusters == f"s{k:02d}"], int(c)) for k, c in enumerate(row)]))
        brute.append(resampled[int(np.ceil(0.5 * len(resampled))) - 1])
    brute.sort()
    # The ends are the same lower quantile of the resampled medians: ranks ceil(0.025 * 300), ceil(0.975 * 300).
    assert (iv.ci_low, iv.ci_high) == (brute[7], brute[292])


def test_interval_ends_are_resampled_values_by_the_same_quantile_rule():
    rng = np.random.default_rng(8)
    baseline, treatment = rng.random(30), rng.random(30)
    iv = stats.paired_diff_ci(baseline, treatment, resamples=500, seed=4)
    resampled = np.sort(stats._counts(30, 500, 4) @ (treatment - baseline) / 30)
    # lower quantiles of 500 resamples: ranks ceil(12.5) = 13 and ceil(487.5) = 488 (1-based); no interpolation
    assert (iv.ci_low, iv.ci_high) == (resampled[12], resampled[487])


def test_quantile_is_the_lower_value_never_an_interpolation():
    assert stats.quantile([1.0, 2.0], 0.5) == 1.0
    assert stats.quantile([4.0, 1.0, 3.0, 2.0], 0.5) == 2.0
    assert stats.quantile([1.0, 2.0, 3.0], 0.5) == 2.0
    assert stats.quantile(list(range(1, 21)), 0.95) == 19.0  # 0.95 * 20 is 19 up to float rounding
    assert stats.quantile([5.0], 0.95) == 5.0 and stats.quantile([], 0.5) is None


def test_quantile_point_of_one_scenario_equals_its_degenerate_interval():
    # One scenario: every resample is the scenario itself, so the interval is the point; an interpolated point
    # (1.5 here) would fall outside [1, 1], as "p50 31.1 ms [24.3 ms, 27.1 ms]" did.
    iv = stats.cluster_quantile_ci([1.0, 2.0], ["a", "a"], 0.5)
    assert (iv.value, iv.ci_low, iv.ci_high) == (1.0, 1.0, 1.0)


def test_interval_ends_snap_to_the_estimate_only_within_float_rounding():
    value = 0.3
    near = stats._interval(value, np.full(100, 0.30000000000000004), 0.95, 3)
    assert (near.ci_low, near.ci_high) == (0.3, 0.30000000000000004)
    far = stats._interval(value, np.full(100, 0.31), 0.95, 3)
    assert far.ci_low == 0.31  # a real miss is reported as it is, not hidden


# --- the point estimate lies within its interval, for every statistic, on awkward inputs -------------------------

_values = st.one_of(
    st.floats(0, 1e4, allow_nan=False, allow_subnormal=False),
    st.sampled_from([0.0, 1.0, 0.1, 2.5]),  # ties
    st.floats(0, 1, allow_nan=False, allow_subnormal=False).map(lambda u: math.exp(30 * u)),  # skewed
)


@st.composite
def _clustered(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(values, 0/1 values, clusters): 1 to 12 scenarios of 1 to 40 samples, sometimes all equal or one giant."""
    sizes = draw(st.lists(st.integers(1, 40), min_size=1, max_size=12))
    n = sum(sizes)
    if draw(st.booleans()):
        values = np.full(n, draw(_values))
    else:
        values = np.array(draw(st.lists(_values, min_size=n, max_size=n)))
    bits = np.array(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)), dtype=float)
    return values, bits, np.repeat(np.arange(len(sizes)), sizes)


def _inside(iv: stats.Interval) -> bool:
    return iv.value is None or iv.ci_low is None or iv.ci_low <= iv.value <= iv.ci_high


@settings(max_examples=250, deadline=None)
@given(_clustered(), st.sampled_from([0.05, 0.5, 0.95]), st.integers(0, 2**32 - 1))
def test_point_estimate_of_every_rate_ratio_and_quantile_lies_within_its_interval(data, q, seed):
    values, bits, clusters = data
    boot = {"resamples": 200, "seed": seed}
    assert _inside(stats.cluster_mean_ci(bits, clusters, **boot))
    assert _inside(stats.cluster_mean_ci(values, clusters, **boot))
    assert _inside(stats.cluster_ratio_ci(values, bits, clusters, **boot))  # e.g. tokens per correct answer
    quantile = stats.cluster_quantile_ci(values, clusters, q, **boot)
    assert quantile.value == stats.quantile(values, q) and _inside(quantile)
    k = int(clusters.max()) + 1
    assert _inside(stats.paired_diff_ci(values[:k] / 1e4, bits[:k], **boot))


# --- the unit of resampling is the scenario ---------------------------------------------------------------------


def test_intervals_resample_scenarios_so_identical_epochs_add_no_evidence():
    # 4 scenarios, 50 identical epochs each: as uncertain as 4 samples. Resampling samples would give a narrow interval.
    per_scenario = np.array([0.0, 1.0, 1.0, 0.0])
    latency = np.array([1.0, 2.0, 5.0, 9.0])
    one = np.arange(4)
    many = np.repeat(one, 50)
    for single, repeated in (
        (stats.cluster_mean_ci(per_scenario, one), stats.cluster_mean_ci(np.repeat(per_scenario, 50), many)),
        (stats.cluster_ratio_ci(latency, per_scenario + 1, one),
         stats.cluster_ratio_ci(np.repeat(latency, 50), np.repeat(per_scenario + 1, 50), many)),
        (stats.cluster_quantile_ci(latency, one, 0.5), stats.cluster_quantile_ci(np.repeat(latency, 50), many, 0.5)),
        (stats.cluster_quantile_ci(latency, one, 0.95), stats.cluster_quantile_ci(np.repeat(latency, 50), many, 0.95)),
    ):
        assert (repeated.value, repeated.ci_low, repeated.ci_high) == pytest.approx(
            (single.value, single.ci_low, single.ci_high), rel=1e-12)
        assert repeated.n == single.n == 4
    assert stats.cluster_mean_ci(np.repeat(per_scenario, 50), many).ci_high - \
        stats.cluster_mean_ci(np.repeat(per_scenario, 50), many).ci_low >= 0.5


# --- the paired test ----------------------------------------------------------------------------------------------


def test_sign_flip_test_on_whole_scenarios_is_the_exact_mcnemar_test():
    result = stats.sign_flip_test([Fraction(1)] + [Fraction(-1)] * 9 + [Fraction(0)] * 5)
    assert result.p_value == 0.021484375 and "sign-flip" in result.test
    assert stats.sign_flip_test([]).p_value == 1.0 and stats.sign_flip_test([Fraction(0)] * 3).p_value == 1.0


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 40), st.integers(0, 40), st.integers(1, 7))
def test_sign_flip_test_of_agreeing_epochs_equals_mcnemar_on_scenarios(fixed, broken, epochs):
    """Scenarios whose epochs all agree differ by exactly -1, 0 or +1, whatever the number of epochs."""
    diffs = [Fraction(epochs, epochs)] * fixed + [Fraction(-epochs, epochs)] * broken + [Fraction(0, epochs)] * 3
    assert stats.sign_flip_test(diffs).p_value == stats.mcnemar_exact(fixed, broken)


def _brute_force_p(diffs: list[Fraction]) -> float:
    observed = abs(sum(diffs))
    totals = [abs(sum(s * d for s, d in zip(signs, diffs))) for signs in itertools.product((1, -1), repeat=len(diffs))]
    return float(Fraction(sum(t >= observed for t in totals), len(totals)))


_diffs = st.lists(st.tuples(st.integers(0, 4), st.integers(1, 4), st.integers(0, 4), st.integers(1, 4))
                  .map(lambda t: Fraction(min(t[0], t[1]), t[1]) - Fraction(min(t[2], t[3]), t[3])),
                  min_size=1, max_size=11)


@settings(max_examples=150, deadline=None)
@given(_diffs)
def test_sign_flip_test_is_exact_on_the_lattice(diffs):
    assert stats.sign_flip_test(diffs).p_value == pytest.approx(_brute_force_p(diffs), rel=1e-9, abs=1e-15)


@settings(max_examples=60, deadline=None)
@given(_diffs)
def test_sign_flip_test_enumerates_when_the_lattice_is_too_large(diffs):
    with mock.patch.object(stats, "_LATTICE_WORK", 0):
        assert stats.sign_flip_test(diffs).p_value == pytest.approx(_brute_force_p(diffs), rel=1e-9, abs=1e-15)


def test_sign_flip_monte_carlo_fallback_is_seeded_and_close_to_exact(monkeypatch):
    rng = np.random.default_rng(5)
    diffs = [Fraction(int(rng.integers(0, 6)), 5) - Fraction(int(rng.integers(0, 4)), 3) for _ in range(14)]
    exact = stats.sign_flip_test(diffs)
    monkeypatch.setattr(stats, "_LATTICE_WORK", 0)
    monkeypatch.setattr(stats, "_ENUMERATE_MAX", 0)
    approx = stats.sign_flip_test(diffs, draws=40_000, seed=3)
    assert "Monte Carlo" in approx.test and "40000" in approx.test and exact.test != approx.test
    assert approx == stats.sign_flip_test(diffs, draws=40_000, seed=3)
    assert abs(approx.p_value - exact.p_value) < 4 * math.sqrt(exact.p_value * (1 - exact.p_value) / 40_000) + 1e-4


def test_quantile_interval_is_the_same_whatever_block_of_resamples_is_held_at_once(monkeypatch):
    rng = np.random.default_rng(5)
    values, clusters = rng.exponential(size=90), np.repeat(np.arange(30), 3)
    whole = stats.cluster_quantile_ci(values, clusters, 0.95, resamples=301, seed=2)
    monkeypatch.setattr(stats, "_QUANTILE_BLOCK", 7 * 90)  # 7 resamples at a time; the last block is partial
    assert stats.cluster_quantile_ci(values, clusters, 0.95, resamples=301, seed=2) == whole
    monkeypatch.setattr(stats, "_QUANTILE_BLOCK", 1)  # one resample at a time
    assert stats.cluster_quantile_ci(values, clusters, 0.95, resamples=301, seed=2) == whole


def _ratio_by_products(num, den, clusters, resamples, seed):
    """The ratio interval computed the long way: both per-resample sums as matrix products."""
    codes, k = stats._codes(clusters)
    num_k, den_k = np.bincount(codes, weights=num, minlength=k), np.bincount(codes, weights=den, minlength=k)
    counts = stats._counts(k, resamples, seed)
    return stats._interval(float(num_k.sum() / den_k.sum()), (counts @ num_k) / (counts @ den_k), 0.95, k)


def test_a_mean_over_equal_epochs_per_scenario_has_the_interval_of_the_full_products():
    rng = np.random.default_rng(9)
    clusters = np.repeat(np.arange(40), 3)  # 3 epochs each: every resample's denominator is 3 x 40
    values = rng.random(120)
    assert stats.cluster_mean_ci(values, clusters, resamples=400, seed=4) == \
        _ratio_by_products(values, np.ones(120), clusters, 400, 4)
    uneven = np.concatenate([clusters, [0, 1]])  # two scenarios with a fourth epoch: the products again
    more = np.concatenate([values, [0.3, 0.9]])
    assert stats.cluster_mean_ci(more, uneven, resamples=400, seed=4) == \
        _ratio_by_products(more, np.ones(122), uneven, 400, 4)
    halves = np.full(120, 0.5)  # equal but not whole denominators take the products too
    assert stats.cluster_ratio_ci(values, halves, clusters, resamples=400, seed=4) == \
        _ratio_by_products(values, halves, clusters, 400, 4)


def test_draw_counts_are_multinomial_rows_whatever_the_block_size(monkeypatch):
    """Each resample draws k scenarios: every row sums to k, each scenario is drawn once per row on average,
    with the multinomial's variance (1 - 1/k), and the counts do not depend on how many rows are drawn at once.

    Bugs planted: the row offsets left out (every draw counted in the first row), indices drawn from ``k - 1``
    scenarios (the last one never drawn), and every block drawn from a fresh generator of the same seed (repeated rows).
    """
    k, resamples = 7, 4000
    whole = stats._counts(k, resamples, 5)
    assert whole.shape == (resamples, k) and (whole.sum(axis=1) == k).all()
    assert np.allclose(whole.mean(axis=0), 1.0, atol=0.06)
    assert np.allclose(whole.var(axis=0), 1 - 1 / k, atol=0.08)
    stats._counts.cache_clear()
    monkeypatch.setattr(stats, "_QUANTILE_BLOCK", 3 * k + 1)  # blocks of 3 rows
    assert np.array_equal(stats._counts(k, resamples, 5), whole)
    stats._counts.cache_clear()


def test_quantiles_drawn_together_are_each_the_brute_force_resampled_quantile():
    """A p50 and a p95 from one pass over the running sums each equal the brute-force resampled quantile.

    Bugs planted: every q read with the first q's target, and the rows of the positions swapped.
    """
    rng = np.random.default_rng(5)
    values, clusters = rng.lognormal(size=48), np.repeat([f"s{k:02d}" for k in range(12)], 4)
    together = stats.cluster_quantile_cis(values, clusters, (0.5, 0.95), resamples=200, seed=3)
    counts = stats._counts(12, 200, 3)
    for q, iv in zip((0.5, 0.95), together):
        brute = []
        for row in counts:
            resampled = np.sort(np.concatenate([np.repeat(values[clusters == f"s{k:02d}"], int(c)) for k, c in enumerate(row)]))
            brute.append(resampled[int(np.ceil(q * len(resampled) * (1 - 1e-9))) - 1])
        brute.sort()
        assert (iv.value, iv.ci_low, iv.ci_high) == (stats.quantile(values, q), brute[4], brute[194])
    assert together[0] != together[1]
