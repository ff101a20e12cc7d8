"""Statistics for paired, clustered evaluation results (numpy only).

Every interval here is a percentile bootstrap clustered by scenario: a
resample draws scenarios with replacement and keeps all samples (epochs) of a
drawn scenario together, because epochs of one scenario are not independent.
Resamples are drawn as a (resamples x scenarios) matrix of multinomial counts,
so a statistic that is a ratio of per-scenario sums is one matrix product.
The seed is fixed; the same inputs give the same interval.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from statistics import NormalDist

import numpy as np

DEFAULT_RESAMPLES = 2000
DEFAULT_SEED = 20240611


@dataclass(frozen=True)
class Interval:
    """A point estimate with its bootstrap interval; n counts the units behind the estimate."""

    value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int


@lru_cache(maxsize=256)
def _counts(n_clusters: int, resamples: int, seed: int) -> np.ndarray:
    """Draw counts per scenario, one row per resample (cached; read-only)."""
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(n_clusters, np.full(n_clusters, 1.0 / n_clusters), size=resamples).astype(np.float64)
    counts.flags.writeable = False
    return counts


def _codes(clusters: Sequence[object]) -> tuple[np.ndarray, int]:
    """Clusters as codes 0..k-1 in sorted label order; integer arrays (pre-coded scenarios) skip the str pass."""
    labels = clusters if isinstance(clusters, np.ndarray) and clusters.dtype.kind in "iu" else (
        np.asarray(clusters, dtype=object).astype(str))
    _, codes = np.unique(labels, return_inverse=True)
    return codes, int(codes.max()) + 1 if len(codes) else 0


def _percentiles(stats: np.ndarray, level: float) -> tuple[float | None, float | None]:
    finite = stats[np.isfinite(stats)]
    if finite.size == 0:
        return None, None
    tail = (1.0 - level) / 2.0 * 100.0
    low, high = np.percentile(finite, [tail, 100.0 - tail])
    return float(low), float(high)


def cluster_ratio_ci(
    numerator: Sequence[float],
    denominator: Sequence[float],
    clusters: Sequence[object],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    level: float = 0.95,
) -> Interval:
    """Ratio of sums (sum numerator / sum denominator) with a clustered bootstrap interval.

    A mean is the ratio with denominator 1 per sample; tokens per correct
    answer is tokens over correctness. ``n`` is the number of clusters.

    Example:
        >>> cluster_ratio_ci([1, 0, 1, 1], [1, 1, 1, 1], ["a", "a", "b", "b"]).value
        0.75
    """
    num = np.asarray(numerator, dtype=np.float64)
    den = np.asarray(denominator, dtype=np.float64)
    codes, k = _codes(clusters)
    if k == 0 or den.sum() == 0:
        return Interval(None, None, None, k)
    value = float(num.sum() / den.sum())
    num_k = np.bincount(codes, weights=num, minlength=k)
    den_k = np.bincount(codes, weights=den, minlength=k)
    counts = _counts(k, resamples, seed)
    with np.errstate(invalid="ignore", divide="ignore"):
        stats = (counts @ num_k) / (counts @ den_k)
    low, high = _percentiles(stats, level)
    return Interval(value, low, high, k)


def cluster_mean_ci(values: Sequence[float], clusters: Sequence[object], **kwargs: float) -> Interval:
    """Mean of per-sample values with a clustered bootstrap interval (see :func:`cluster_ratio_ci`)."""
    return cluster_ratio_ci(values, np.ones(len(values)), clusters, **kwargs)  # type: ignore[arg-type]


def cluster_quantile_ci(
    values: Sequence[float],
    clusters: Sequence[object],
    q: float,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    level: float = 0.95,
) -> Interval:
    """The q-quantile (lower, no interpolation in resamples) with a clustered bootstrap interval.

    Each resample weights every sample by its scenario's draw count; the
    weighted quantile is found on the values sorted once, by a binary search
    run for all resamples at once (memory: scenarios x samples floats).
    """
    vals = np.asarray(values, dtype=np.float64)
    codes, k = _codes(clusters)
    if k == 0:
        return Interval(None, None, None, 0)
    value = float(np.quantile(vals, q))
    order = np.argsort(vals, kind="stable")
    sorted_vals, sorted_codes = vals[order], codes[order]
    counts = _counts(k, resamples, seed)
    n = len(vals)
    # below[k, j]: samples of scenario k at sorted positions <= j. A resample's cumulative weight at j is
    # counts[b] @ below[:, j]; it grows with j, so each resample's quantile is found by binary search.
    below = np.zeros((k, n))
    below[sorted_codes, np.arange(n)] = 1.0
    np.cumsum(below, axis=1, out=below)
    target = q * (counts @ below[:, -1])
    lo = np.zeros(resamples, dtype=np.int64)
    hi = np.full(resamples, n - 1, dtype=np.int64)
    while np.any(lo < hi):
        mid = (lo + hi) // 2
        reached = np.einsum("bk,kb->b", counts, below[:, mid]) >= target
        hi = np.where(reached, mid, hi)
        lo = np.where(reached, lo, mid + 1)
    stats = sorted_vals[lo]
    low, high = _percentiles(stats, level)
    return Interval(value, low, high, k)


def paired_diff_ci(
    baseline: Sequence[float],
    treatment: Sequence[float],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    level: float = 0.95,
) -> Interval:
    """Mean of per-scenario differences (treatment - baseline) with a paired bootstrap interval.

    ``baseline[i]`` and ``treatment[i]`` are one scenario's means over its
    epochs in each arm; resampling scenarios keeps the pairs together, so a
    positive interval means the treatment is better on the same scenarios.
    """
    diffs = np.asarray(treatment, dtype=np.float64) - np.asarray(baseline, dtype=np.float64)
    n = len(diffs)
    if n == 0:
        return Interval(None, None, None, 0)
    counts = _counts(n, resamples, seed)
    stats = counts @ diffs / n
    low, high = _percentiles(stats, level)
    return Interval(float(diffs.mean()), low, high, n)


def mcnemar_exact(fixed: int, broken: int) -> float:
    """Two-sided exact McNemar p-value: a binomial test of the discordant pairs at 1/2.

    Example (worked by hand: 2 * (C(10,0) + C(10,1)) / 2**10):
        >>> mcnemar_exact(1, 9)
        0.021484375
    """
    n = fixed + broken
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(fixed, broken) + 1))
    return min(1.0, float(Fraction(2 * tail, 2**n)))  # exact: floats overflow past ~1000 pairs


def min_detectable_effect(n_scenarios: int, discordance: float, *, alpha: float = 0.05, power: float = 0.8) -> float:
    """Smallest paired accuracy difference the suite detects (normal approximation to McNemar).

    ``MDE = (z_{1-alpha/2} + z_{power}) * sqrt(p_d / n)`` where ``p_d`` is the
    share of discordant pairs and ``n`` the number of paired scenarios: under
    a small true difference the variance of one pair's difference is about
    ``p_d``. Capped at 1.0; returns 1.0 when there are no scenarios. A ``p_d`` of
    zero is replaced by ``0.5 / n`` so an untested suite does not look perfect.
    """
    if n_scenarios <= 0:
        return 1.0
    p_d = max(discordance, 0.5 / n_scenarios)
    z = NormalDist().inv_cdf(1.0 - alpha / 2.0) + NormalDist().inv_cdf(power)
    return min(1.0, z * math.sqrt(p_d / n_scenarios))
