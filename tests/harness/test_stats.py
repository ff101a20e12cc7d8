"""Statistics against known values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from harness import stats


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
    assert (iv.ci_low, iv.ci_high) == pytest.approx(tuple(np.percentile(brute, [2.5, 97.5])))
