"""Statistics against known values, brute force and properties over random inputs."""

from __future__ import annotations

import math
import warnings
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
    """Every sign assignment's total in exact rationals, the totals of the first k differences doubled with the
    (k+1)-th added and subtracted (2^n additions, not n * 2^n products)."""
    observed = abs(sum(diffs))
    totals = [Fraction(0)]
    for d in diffs:
        totals = [t + d for t in totals] + [t - d for t in totals]
    assert len(totals) == 2 ** len(diffs)
    return float(Fraction(sum(abs(t) >= observed for t in totals), len(totals)))


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


def test_the_count_matrices_held_stay_within_their_byte_bound_least_recently_used_first() -> None:
    """A report asks for one count matrix per subset size; they are held only up to a byte bound (LoCoMo's
    1,986 questions held ~250 MB of them beside a 1 GB target), and a dropped one is drawn again identically.

    Bugs planted: the oldest entry kept instead of dropped (``popitem(last=True)``), a hit not moved to the end
    (plain FIFO), the bytes not subtracted on a drop (everything dropped after the bound is first reached).
    """
    one = 10 * 50 * 8  # a 50-resample, 10-cluster matrix of float64
    cache = stats._HeldByBytes(stats._draw_counts, max_bytes=3 * one)
    first = cache(10, 50, 1).copy()
    cache(10, 50, 2)
    cache(10, 50, 3)
    assert cache(10, 50, 1) is cache(10, 50, 1)  # a hit: the same array, now the most recently used
    cache(10, 50, 4)  # over the bound: the least recently used (seed 2) goes, seed 1 stays
    assert set(cache._held) == {(10, 50, 1), (10, 50, 3), (10, 50, 4)} and cache._bytes == 3 * one
    cache(10, 50, 5)
    cache(10, 50, 6)
    assert set(cache._held) == {(10, 50, 4), (10, 50, 5), (10, 50, 6)}
    assert np.array_equal(cache(10, 50, 1), first)  # drawn again: the same counts
    big = cache(1000, 50, 1)  # larger than the bound on its own: kept, as the newest
    assert list(cache._held) == [(1000, 50, 1)] and cache(1000, 50, 1) is big and cache._bytes == big.nbytes
    cache.cache_clear()
    assert not cache._held and cache._bytes == 0


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


# --- Statistics at the edges mutation testing found unpinned: path switches, budgets, float rounding, labels.
#
# Each test pins one behaviour a realistic slip would change (a ``<`` for ``<=``
# at a budget, a lost cap, a tolerance divided instead of multiplied); see
# docs/mutation-testing.md, "harness/analysis/stats.py".


EXACT = "exact sign-flip permutation test on per-scenario mean differences"


def _exact_p(diffs: list[Fraction]) -> float:
    """Brute force over all 2^n sign assignments in integer arithmetic: the total of every assignment, made by
    doubling the totals of the first k scenarios with the (k+1)-th added and subtracted (2^21 totals in 16 MB; a
    matrix of the assignments was 352 MB and seconds to build)."""
    scale = 1
    for d in diffs:
        scale = scale * d.denominator // np.gcd(scale, d.denominator)
    ints = [int(d * scale) for d in diffs]
    totals = np.zeros(1, dtype=np.int64)
    for k in ints:
        totals = np.concatenate((totals + k, totals - k))
    assert len(totals) == 2 ** len(ints)
    return float(np.mean(np.abs(totals) >= abs(sum(ints))))


def test_every_exact_path_of_the_sign_flip_test_names_the_exact_test(monkeypatch):
    assert stats.sign_flip_test([Fraction(0)] * 3).test == EXACT  # no discordant scenario
    assert stats.sign_flip_test([Fraction(1), Fraction(-1)]).test == EXACT  # McNemar
    assert stats.sign_flip_test([Fraction(1, 2), Fraction(-1)]).test == EXACT  # lattice
    monkeypatch.setattr(stats, "_LATTICE_WORK", 0)
    assert stats.sign_flip_test([Fraction(1, 2), Fraction(-1)]).test == EXACT  # enumeration


def test_the_lattice_takes_exactly_its_work_budget_and_one_unit_more_falls_back(monkeypatch):
    # 21 scenarios (too many to enumerate) on a lattice of unit 1/2: sizes 1 (x10) and 2 (x11), span 32, work 21 * 32.
    diffs = [Fraction(1, 2)] * 10 + [Fraction(-1)] * 11
    work = 21 * 32
    monkeypatch.setattr(stats, "_LATTICE_WORK", work)
    on_budget = stats.sign_flip_test(diffs)
    assert on_budget.test == EXACT and on_budget.p_value == pytest.approx(_exact_p(diffs), rel=1e-12)
    monkeypatch.setattr(stats, "_LATTICE_WORK", work - 1)
    assert "Monte Carlo" in stats.sign_flip_test(diffs, draws=200).test


def test_twenty_scenarios_are_enumerated_exactly_and_twenty_one_fall_back_to_monte_carlo(monkeypatch):
    rng = np.random.default_rng(12)
    diffs = [Fraction(int(rng.integers(0, 6)), 5) - Fraction(int(rng.integers(0, 4)), 3) or Fraction(1, 15)
             for _ in range(21)]
    monkeypatch.setattr(stats, "_LATTICE_WORK", 0)
    twenty = stats.sign_flip_test(diffs[:20])
    assert twenty.test == EXACT and twenty.p_value == pytest.approx(_exact_p(diffs[:20]), rel=1e-12)
    assert "Monte Carlo" in stats.sign_flip_test(diffs, draws=200).test


@pytest.mark.parametrize("diffs", [
    [Fraction(1, 5), Fraction(-3, 5), Fraction(1, 5), Fraction(1, 7)],
    [Fraction(1, 6), Fraction(1, 3), Fraction(1, 5), Fraction(1, 3), Fraction(1, 5), Fraction(-1, 7), Fraction(-1, 2)],
])
def test_the_enumerated_p_value_does_not_depend_on_the_scale_of_the_differences(monkeypatch, diffs):
    # Sign assignments tied with the observed total in exact arithmetic differ from it by float rounding, which
    # grows with the scale; the tolerance must grow with it too, or ties at 1e9 are lost and p shrinks.
    exact = _exact_p(diffs)
    monkeypatch.setattr(stats, "_LATTICE_WORK", 0)
    for scale in (1, 10**9):
        assert stats.sign_flip_test([d * scale for d in diffs]).p_value == pytest.approx(exact, rel=1e-12)


def test_the_lattice_p_value_is_at_most_one_when_float_rounding_sums_past_it():
    # 260 scenarios whose differences cancel exactly: every assignment is as extreme as the observed 0, so p = 1;
    # the lattice's probabilities sum to 1.0000000000000002 in floats.
    diffs = [Fraction(1, 2), Fraction(-1, 2), Fraction(1), Fraction(-1)] * 65
    assert stats.sign_flip_test(diffs).p_value == 1.0


def test_monte_carlo_p_value_of_differences_that_cancel_is_exactly_one(monkeypatch):
    # 152 scenarios: the draws come in chunks of 2_000_000 // 152 = 13157, so 20000 draws take two chunks of
    # different sizes. Every draw is as extreme as the observed 0: hits = draws and p = (1 + draws) / (1 + draws).
    diffs = [Fraction(1, 2), Fraction(-1, 2), Fraction(1), Fraction(-1)] * 38
    monkeypatch.setattr(stats, "_LATTICE_WORK", 0)
    result = stats.sign_flip_test(diffs)
    assert result.p_value == 1.0 and "(20000 seeded draws)" in result.test


def test_monte_carlo_p_value_of_a_one_sided_result_is_its_floor_one_over_draws_plus_one(monkeypatch):
    # 30 scenarios all improved: only the observed assignment and its mirror reach |sum| (2 of 2^30), so no
    # draw of 2000 hits and p = 1 / 2001, the smallest the Monte Carlo test can say.
    diffs = [Fraction(k % 4 + 1, 4) for k in range(30)]
    monkeypatch.setattr(stats, "_LATTICE_WORK", 0)
    assert stats.sign_flip_test(diffs, draws=2000).p_value == 1 / 2001


@pytest.mark.parametrize("sign", [1, -1])
def test_monte_carlo_p_value_agrees_with_the_exact_one_whichever_arm_is_better(monkeypatch, sign):
    # Both tails count: a draw is a hit when its total is at least |observed| above or below zero.
    diffs = [sign * d for d in (Fraction(1, 2), Fraction(-1, 3), Fraction(2, 3), Fraction(1, 4), Fraction(-1, 2),
                                Fraction(3, 4), Fraction(1, 3), Fraction(-1, 4), Fraction(1, 2), Fraction(-2, 3),
                                Fraction(1, 4), Fraction(1, 6))]
    exact = stats.sign_flip_test(diffs)
    assert exact.p_value == pytest.approx(_exact_p(diffs), rel=1e-12) and 0.1 < exact.p_value < 0.5
    monkeypatch.setattr(stats, "_LATTICE_WORK", 0)
    monkeypatch.setattr(stats, "_ENUMERATE_MAX", 0)
    approx = stats.sign_flip_test(diffs, draws=20_000)
    assert abs(approx.p_value - exact.p_value) < 5 * np.sqrt(exact.p_value * (1 - exact.p_value) / 20_000)


@pytest.mark.parametrize("n", [8, 10])
def test_monte_carlo_draws_every_sign_assignment_including_all_minus_and_the_last_scenarios(monkeypatch, n):
    # n scenarios all improved: only all-plus and all-minus reach |observed|, exact p = 2 / 2^n. A draw that never
    # gives some scenario a + sign (too few random bytes) or never all minus (no zero byte) misses one of the two.
    diffs = [Fraction(k % 3 + 1, 3) for k in range(n)]
    assert stats.sign_flip_test(diffs).p_value == 2 / 2**n
    monkeypatch.setattr(stats, "_LATTICE_WORK", 0)
    monkeypatch.setattr(stats, "_ENUMERATE_MAX", 0)
    approx = stats.sign_flip_test(diffs, draws=100_000).p_value
    assert abs(approx - 2 / 2**n) < 4 * np.sqrt(2 / 2**n / 100_000)


def test_the_quantile_at_zero_is_the_minimum_and_at_one_the_maximum():
    assert stats.quantile([3.0, 1.0, 2.0], 0.0) == 1.0
    assert stats.quantile([3.0, 1.0, 2.0], 1.0) == 3.0
    assert stats.quantile([2.0, 1.0], 1.0) == 2.0


@pytest.mark.parametrize("value", [0.3, 1.0, -4.0, 1e6])
def test_interval_ends_snap_to_the_estimate_within_a_relative_1e9_on_both_sides_and_no_further(value):
    slack = 1e-9 * max(1.0, abs(value))  # relative to the estimate, absolute below 1
    at_edge_above = stats._interval(value, np.full(50, value + slack), 0.95, 3)
    at_edge_below = stats._interval(value, np.full(50, value - slack), 0.95, 3)
    assert (at_edge_above.ci_low, at_edge_below.ci_high) == (value, value)
    beyond_above = stats._interval(value, np.full(50, value + 1.5 * slack), 0.95, 3)
    beyond_below = stats._interval(value, np.full(50, value - 1.5 * slack), 0.95, 3)
    assert (beyond_above.ci_low, beyond_below.ci_high) == (value + 1.5 * slack, value - 1.5 * slack)


def test_interval_of_resamples_with_one_finite_value_is_that_value_and_of_none_is_open():
    one = stats._interval(0.5, np.array([np.nan, np.inf, 0.5, np.nan]), 0.95, 2)
    assert (one.value, one.ci_low, one.ci_high, one.n) == (0.5, 0.5, 0.5, 2)
    none = stats._interval(0.5, np.array([np.nan, -np.inf]), 0.95, 2)
    assert (none.value, none.ci_low, none.ci_high, none.n) == (0.5, None, None, 2)


Z_80_POWER_5_PERCENT = 1.959963984540054 + 0.8416212335729143  # z_{0.975} + z_{0.8}


def test_min_detectable_effect_of_no_scenarios_is_the_largest_effect_one():
    assert stats.min_detectable_effect(0, 0.3) == 1.0
    assert stats.min_detectable_effect(-2, 0.3) == 1.0


def test_min_detectable_effect_is_capped_at_one_when_few_scenarios_disagree_often():
    # 2 scenarios, both discordant: (z + z) * sqrt(1 / 2) is about 1.98, but no accuracy difference exceeds 1.
    assert stats.min_detectable_effect(2, 1.0) == 1.0
    assert stats.min_detectable_effect(4, 0.2) == pytest.approx(Z_80_POWER_5_PERCENT * (0.2 / 4) ** 0.5)


def test_min_detectable_effect_without_discordance_uses_half_a_discordant_scenario():
    # p_d = 0 is replaced by 0.5 / n: MDE = z * sqrt(0.5 / n^2).
    assert stats.min_detectable_effect(100, 0.0) == pytest.approx(Z_80_POWER_5_PERCENT * (0.5 / 100**2) ** 0.5)
    assert stats.min_detectable_effect(100, 0.01) == pytest.approx(Z_80_POWER_5_PERCENT * (0.01 / 100) ** 0.5)


def test_min_detectable_effect_of_one_scenario_follows_the_formula_at_a_lenient_alpha_and_power():
    # alpha 0.5, power 0.5: z = z_{0.75} + z_{0.5} = 0.6745; one discordant scenario gives 0.6745, below the cap.
    z = 0.6744897501960817
    assert stats.min_detectable_effect(1, 1.0, alpha=0.5, power=0.5) == pytest.approx(z)
    assert stats.min_detectable_effect(1, 0.0, alpha=0.5, power=0.5) == pytest.approx(z * 0.5**0.5)


def test_ratio_interval_ends_are_the_lower_quantiles_of_the_resampled_ratios_at_95_percent():
    rng = np.random.default_rng(5)
    num, den = rng.integers(0, 5, 40).astype(float), rng.integers(1, 4, 40).astype(float)
    clusters = np.repeat([f"s{k:02d}" for k in range(10)], 4)
    iv = stats.cluster_ratio_ci(num, den, clusters, resamples=400, seed=9)
    counts = stats._counts(10, 400, 9)
    resampled = np.sort((counts @ num.reshape(10, 4).sum(axis=1)) / (counts @ den.reshape(10, 4).sum(axis=1)))
    # ranks ceil(0.025 * 400) = 10 and ceil(0.975 * 400) = 390 (1-based)
    assert (iv.value, iv.ci_low, iv.ci_high, iv.n) == (num.sum() / den.sum(), resampled[9], resampled[389], 10)


def test_cluster_mean_ci_draws_with_the_given_resamples_and_seed():
    values, clusters = np.arange(30, dtype=float) % 7, np.repeat([f"s{k}" for k in range(10)], 3)
    given = stats.cluster_mean_ci(values, clusters, resamples=60, seed=5)
    assert given == stats.cluster_ratio_ci(values, np.ones(30), clusters, resamples=60, seed=5)
    assert given != stats.cluster_mean_ci(values, clusters)


def test_integer_scenario_codes_draw_the_same_interval_as_labels_sorted_in_the_same_order():
    # 12 scenarios: coded as text, "10" and "11" would sort before "2" and take other scenarios' draws.
    values = np.array([k * k % 7 for k in range(12)], dtype=float).repeat(2)
    codes, labels = np.arange(12).repeat(2), np.array([f"s{k:02d}" for k in range(12)]).repeat(2)
    for q in (0.5, 0.9):
        assert stats.cluster_quantile_ci(values, codes, q, resamples=300, seed=3) == \
            stats.cluster_quantile_ci(values, labels, q, resamples=300, seed=3)
    assert stats.cluster_mean_ci(values, codes, resamples=300, seed=3) == \
        stats.cluster_mean_ci(values, labels, resamples=300, seed=3)


def test_no_scenarios_give_no_estimate_and_n_zero_from_every_interval():
    empty = stats.Interval(None, None, None, 0)
    assert stats.cluster_ratio_ci([], [], []) == empty
    assert stats.cluster_mean_ci([], []) == empty
    assert stats.cluster_quantile_ci([], [], 0.5) == empty
    assert stats.paired_diff_ci([], []) == empty


def test_a_ratio_over_a_zero_denominator_is_undefined_but_counts_its_scenarios():
    assert stats.cluster_ratio_ci([3.0, 1.0], [0.0, 0.0], ["a", "b"]) == stats.Interval(None, None, None, 2)


def test_one_scenario_or_one_sample_gives_its_own_value_with_a_degenerate_interval():
    assert stats.cluster_ratio_ci([1.0, 0.0, 1.0], [1.0, 1.0, 1.0], ["a"] * 3) == \
        stats.Interval(2 / 3, 2 / 3, 2 / 3, 1)
    assert stats.cluster_mean_ci([0.4], ["a"]) == stats.Interval(0.4, 0.4, 0.4, 1)
    assert stats.paired_diff_ci([0.25], [0.75]) == stats.Interval(0.5, 0.5, 0.5, 1)
    assert stats.cluster_quantile_ci([3.0], ["a"], 0.5) == stats.Interval(3.0, 3.0, 3.0, 1)


def test_resamples_that_draw_only_zero_denominator_scenarios_are_skipped_without_warnings():
    # Tokens per correct answer where one of two scenarios has no correct answer: some resamples draw only it.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        divide = stats.cluster_ratio_ci([100.0, 50.0], [1.0, 0.0], ["a", "b"], resamples=200, seed=1)
        invalid = stats.cluster_ratio_ci([100.0, 0.0], [1.0, 0.0], ["a", "b"], resamples=200, seed=1)
    assert (divide.value, invalid.value) == (150.0, 100.0)
    assert invalid.ci_low == invalid.ci_high == 100.0


def test_the_cached_draws_are_read_only_so_no_caller_can_change_a_later_interval():
    """Bugs planted: either ``flags.writeable = False`` dropped, or set to True (None is read as False).

    The draws are shared through ``lru_cache``: a caller that scaled them in place would silently change
    every later interval of the same size and seed.
    """
    for draws in (stats._counts(6, 50, 2), stats._counts_by_scenario(6, 50, 2)):
        with pytest.raises(ValueError, match="read-only"):
            draws[0, 0] = 99
    assert stats._counts_by_scenario(6, 50, 2).shape == (6, 50)


def test_the_minimum_of_a_resample_is_the_smallest_value_it_drew_not_the_smallest_of_all():
    """Bug this found (it was the code, kept as the planted one): ``cumulative < target`` in the quantile
    bootstrap. At q = 0 the target is 0, so every resample "reached" it at the first sorted sample and took
    the global minimum, even the resamples that never drew that scenario: the interval was [min, min].
    """
    values, clusters = np.arange(1.0, 7.0), np.array(["a", "a", "b", "b", "c", "c"])
    iv = stats.cluster_quantile_ci(values, clusters, 0.0, resamples=400, seed=6)
    counts = stats._counts(3, 400, 6)
    minima = np.sort([min(values[2 * k] for k in range(3) if row[k]) for row in counts])
    assert (iv.value, iv.ci_low, iv.ci_high) == (1.0, minima[9], minima[389]) and iv.ci_high > 1.0


def test_one_quantile_passes_its_level_on():
    """Bug planted (a mutation survivor): ``cluster_quantile_ci`` calling ``cluster_quantile_cis`` without ``level``."""
    values, clusters = np.arange(40, dtype=float), np.repeat(np.arange(10), 4)
    half = stats.cluster_quantile_ci(values, clusters, 0.5, resamples=300, seed=2, level=0.5)
    assert half == stats.cluster_quantile_cis(values, clusters, (0.5,), resamples=300, seed=2, level=0.5)[0]
    assert half != stats.cluster_quantile_ci(values, clusters, 0.5, resamples=300, seed=2)
