"""Statistics for paired, clustered evaluation results (numpy only).

The unit of inference is the scenario: epochs refine a scenario's estimate,
they never add independent evidence. So every interval here is a percentile
bootstrap clustered by scenario: a resample draws scenarios with replacement
and keeps all samples (epochs) of a drawn scenario together. Resamples are
drawn as a (resamples x scenarios) matrix of multinomial counts, so a
statistic that is a ratio of per-scenario sums is one matrix product. The
paired test (:func:`sign_flip_test`) works on per-scenario mean differences
for the same reason. The seed is fixed; the same inputs give the same result.

One quantile definition serves everywhere (point estimates, bootstrap
resamples and the percentile interval's ends): :func:`quantile`, the lower
(inverted-CDF) quantile, which is always one of the values, never an
interpolation between two.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from statistics import NormalDist

import numpy as np

DEFAULT_RESAMPLES = 2000
DEFAULT_SEED = 20240611
#: Draws of the Monte Carlo sign-flip test, used only when the exact lattice is too large.
SIGN_FLIP_DRAWS = 20_000
#: Largest (non-zero differences x lattice span) the exact sign-flip recursion may take (about 0.1 s of numpy).
_LATTICE_WORK = 20_000_000
_ENUMERATE_MAX = 20  # up to 2^20 sign assignments are enumerated when the lattice is too large
_REL_TOL = 1e-9  # cumulative weights are integers; this only absorbs float rounding of q * total
#: Cells (resamples x samples) of cumulative weights :func:`cluster_quantile_ci` holds at once (32 MB of floats).
_QUANTILE_BLOCK = 4_000_000


@dataclass(frozen=True)
class Interval:
    """A point estimate with its bootstrap interval; n counts the units behind the estimate."""

    value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int


@dataclass(frozen=True)
class PairedTest:
    """A p-value and, in plain words, the test that produced it."""

    p_value: float
    test: str


def quantile(values: Sequence[float] | np.ndarray, q: float) -> float | None:
    """The lower q-quantile: the smallest value whose cumulative share reaches q (inverted CDF).

    This is the one quantile definition of the harness: the bootstrap of
    :func:`cluster_quantile_ci` and the percentile interval ends use the same
    rule, so a point estimate and its interval always agree on what "p50" is.
    None for no values.

    Example:
        >>> quantile([4.0, 1.0, 3.0, 2.0], 0.5)
        2.0
    """
    vals = np.sort(np.asarray(values, dtype=np.float64))
    if vals.size == 0:
        return None
    return float(vals[_rank(q, vals.size)])


def _rank(q: float, total: int) -> int:
    """0-based index of the lower q-quantile among ``total`` equally weighted sorted values."""
    return min(total - 1, max(0, math.ceil(q * total * (1.0 - _REL_TOL)) - 1))


class _HeldByBytes:
    """``fn(*key)``, its read-only arrays kept while they fit in ``max_bytes`` together (least recently used dropped).

    An ``lru_cache`` of 256 entries held every count matrix a report asked for:
    on LoCoMo's 1,986 questions, one per category subset, ~250 MB beside a
    1 GB target. A dropped matrix is drawn again identically (same seed), so
    the bound costs time, never a different number. The newest entry is always
    kept, however large.
    """

    def __init__(self, fn: Callable[..., np.ndarray], max_bytes: int) -> None:
        self.fn, self.max_bytes = fn, max_bytes
        self._held: OrderedDict[tuple[int, ...], np.ndarray] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def __call__(self, *key: int) -> np.ndarray:
        with self._lock:
            held = self._held.get(key)
            if held is not None:
                self._held.move_to_end(key)
                return held
        made = self.fn(*key)
        with self._lock:
            if key not in self._held:
                self._held[key] = made
                self._bytes += made.nbytes
                while self._bytes > self.max_bytes and len(self._held) > 1:
                    _, dropped = self._held.popitem(last=False)
                    self._bytes -= dropped.nbytes
            return self._held[key]

    def cache_clear(self) -> None:
        with self._lock:
            self._held.clear()
            self._bytes = 0


COUNTS_CACHE_BYTES = 96 * 2**20
"""What the bootstrap's count matrices may hold together (each is resamples x scenarios float64: 32 MB for LoCoMo)."""


def _draw_counts(n_clusters: int, resamples: int, seed: int) -> np.ndarray:
    """Draw counts per scenario, one row per resample (cached by :data:`_counts`; read-only).

    A resample draws ``n_clusters`` scenario indices uniformly with
    replacement; its row counts how often each scenario was drawn (a
    multinomial row). Counting index draws is the definition of those counts
    and, for the thousands of scenarios of a benchmark suite, about twice as
    fast as numpy's ``multinomial``, which draws one binomial per cell. Rows
    are made in blocks of about :data:`_QUANTILE_BLOCK` cells, so the index
    draws in flight stay bounded.
    """
    rng = np.random.default_rng(seed)
    counts = np.empty((resamples, n_clusters), dtype=np.float64)
    rows = max(1, _QUANTILE_BLOCK // max(n_clusters, 1))
    for start in range(0, resamples, rows):
        block = counts[start:start + rows]
        draws = rng.integers(0, n_clusters, size=block.shape)
        draws += np.arange(0, block.size, n_clusters)[:, None]  # row r's draws count into cells r*k .. r*k+k-1
        block[:] = np.bincount(draws.ravel(), minlength=block.size).reshape(block.shape)
    counts.flags.writeable = False
    return counts


_counts = _HeldByBytes(_draw_counts, COUNTS_CACHE_BYTES)


def _transposed_counts(n_clusters: int, resamples: int, seed: int) -> np.ndarray:
    """:func:`_counts` transposed into rows per scenario (cached; read-only), for :func:`cluster_quantile_ci`.

    As 32-bit integers: the running sums over them are exact whatever their
    type, and half the bytes halve the memory traffic that bounds that loop.
    """
    by_scenario = np.ascontiguousarray(_counts(n_clusters, resamples, seed).T, dtype=np.int32)
    by_scenario.flags.writeable = False
    return by_scenario


_counts_by_scenario = _HeldByBytes(_transposed_counts, COUNTS_CACHE_BYTES // 2)


def _codes(clusters: Sequence[object] | np.ndarray) -> tuple[np.ndarray, int]:
    """Clusters as codes 0..k-1 in sorted label order; integer arrays (pre-coded scenarios) skip the str pass."""
    labels = clusters if isinstance(clusters, np.ndarray) and clusters.dtype.kind in "iu" else (
        np.asarray(clusters, dtype=object).astype(str))
    _, codes = np.unique(labels, return_inverse=True)
    return codes, int(codes.max()) + 1 if len(codes) else 0


def _interval(value: float, resampled: np.ndarray, level: float, n: int) -> Interval:
    """Percentile interval of the resampled statistic; its ends are lower quantiles, as :func:`quantile`.

    Why the estimate is always inside (no widening needed): for a ratio of
    sums R, a resample lies at or above the estimate exactly when
    ``sum_j c_j (num_j - R den_j) >= 0``; the residuals ``num_j - R den_j``
    sum to zero and the multinomial counts ``c`` make that sum one of k
    independent draws from them, which falls on either side of zero (ties
    included) in at least about 40% of resamples for any residuals (1/2 for
    large k; found by exhaustive enumeration for k <= 9 and random search
    over residuals), far from the 2.5% that would put the estimate outside.
    A quantile is the same argument on the cumulative counts. What remains
    is float rounding: a resample equal to the estimate in exact arithmetic
    may differ from it in the last bits, so an end within a relative 1e-9 of
    the estimate is snapped to it.
    """
    finite = np.sort(resampled[np.isfinite(resampled)])
    if finite.size == 0:
        return Interval(value, None, None, n)
    tail = (1.0 - level) / 2.0
    low, high = float(finite[_rank(tail, finite.size)]), float(finite[_rank(1.0 - tail, finite.size)])
    slack = _REL_TOL * max(1.0, abs(value))
    if value < low <= value + slack:
        low = value
    if value - slack <= high < value:
        high = value
    return Interval(value, low, high, n)


def cluster_ratio_ci(
    numerator: Sequence[float],
    denominator: Sequence[float],
    clusters: Sequence[object] | np.ndarray,
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
    num_k = np.bincount(codes, weights=num, minlength=k)
    den_k = np.bincount(codes, weights=den, minlength=k)
    value = float(num_k.sum() / den_k.sum())
    counts = _counts(k, resamples, seed)
    if den_k[0] == np.rint(den_k[0]) and (den_k == den_k[0]).all():
        # Every scenario has the same whole number of samples (a mean over epochs that all ran): each resample
        # draws k scenarios, so its denominator is exactly that number times k, no product needed.
        den_resampled = np.full(resamples, den_k[0] * k)
    else:
        den_resampled = counts @ den_k
    with np.errstate(invalid="ignore", divide="ignore"):
        resampled = (counts @ num_k) / den_resampled
    return _interval(value, resampled, level, k)


def cluster_mean_ci(values: Sequence[float], clusters: Sequence[object], **kwargs: float) -> Interval:
    """Mean of per-sample values with a clustered bootstrap interval (see :func:`cluster_ratio_ci`)."""
    return cluster_ratio_ci(values, np.ones(len(values)), clusters, **kwargs)  # type: ignore[arg-type]


def cluster_quantile_ci(
    values: Sequence[float],
    clusters: Sequence[object] | np.ndarray,
    q: float,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    level: float = 0.95,
) -> Interval:
    """The q-quantile (:func:`quantile`) with a clustered bootstrap interval (see :func:`cluster_quantile_cis`)."""
    return cluster_quantile_cis(values, clusters, (q,), resamples=resamples, seed=seed, level=level)[0]


def cluster_quantile_cis(
    values: Sequence[float],
    clusters: Sequence[object] | np.ndarray,
    qs: Sequence[float],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    level: float = 0.95,
) -> list[Interval]:
    """Several quantiles (:func:`quantile`) of the same values, each with its clustered bootstrap interval.

    Each resample weights every sample by its scenario's draw count and takes
    the same lower quantile of the weighted values: on the values sorted
    once, a resample's cumulative weight at each position is a running sum of
    its draw counts read in sorted order, and its q-quantile is the first
    position where that reaches ``q`` of its total. The running sums are made
    once for all ``qs`` (a p50 and a p95 cost one pass). Resamples go through
    in blocks of about :data:`_QUANTILE_BLOCK` cells, so memory stays bounded
    for any number of samples. The weights are integers, so every cumulative
    sum is exact and the result does not depend on how it is summed.
    """
    vals = np.asarray(values, dtype=np.float64)
    codes, k = _codes(clusters)
    if k == 0:
        return [Interval(None, None, None, 0) for _ in qs]
    order = np.argsort(vals, kind="stable")
    sorted_vals, sorted_codes = vals[order], codes[order]
    by_scenario = _counts_by_scenario(k, resamples, seed)
    n = len(vals)
    positions = np.empty((len(qs), resamples), dtype=np.int64)
    block = max(1, _QUANTILE_BLOCK // n)
    for start in range(0, resamples, block):
        # cumulative[j, b]: draws, in resample b, of the samples at sorted positions <= j (rows are contiguous,
        # so the running sum adds whole rows, in place).
        cumulative = by_scenario[sorted_codes, start:start + block]
        np.cumsum(cumulative, axis=0, out=cumulative)
        for row, q in enumerate(qs):
            target = q * cumulative[-1] * (1.0 - _REL_TOL)
            # The first position whose cumulative weight reaches the target (it only grows down a column; the
            # last row, the total, always reaches it: q <= 1 and the target is shaved by _REL_TOL). "Reaches" is
            # strictly past the target (a shaved target is never a whole number, so this is the same for q > 0):
            # at q = 0 that is the first sample the resample drew, its minimum, not the sample sorted first.
            positions[row, start:start + block] = (cumulative <= target).sum(axis=0)
    return [_interval(quantile(vals, q), sorted_vals[positions[row]], level, k)  # type: ignore[arg-type]
            for row, q in enumerate(qs)]


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
    return _interval(float(diffs.mean()), counts @ diffs / n, level, n)


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


def sign_flip_test(diffs: Sequence[Fraction], *, draws: int = SIGN_FLIP_DRAWS, seed: int = DEFAULT_SEED) -> PairedTest:
    """Two-sided sign-flip permutation test of per-scenario mean differences (b - a).

    Under the null hypothesis the two arms are exchangeable within a scenario,
    so each scenario's difference is as likely to have either sign; the
    p-value is the share of the ``2^n`` sign assignments whose total
    ``|sum d|`` is at least the observed one. The differences of means over
    epochs are rationals, so scaled to integers they lie on a lattice and the
    distribution of the sum is computed exactly by convolving the +-|k_i| of
    one scenario at a time. When every non-zero difference has the same size
    (every scenario's epochs agree, e.g. one epoch) this is the exact sign test,
    i.e. the exact McNemar test on discordant scenarios, and the result is
    :func:`mcnemar_exact` to the bit. When the lattice is too large (epoch
    counts that differ from scenario to scenario after errors, say 64 to 67 of
    67) up to 20 scenarios' sign assignments are enumerated; only beyond that
    does it fall back to ``draws`` seeded random sign assignments,
    p = (1 + hits) / (1 + draws) (valid, resolution about 1 / draws).

    Example (one scenario improved, nine broken, as McNemar b=1, c=9):
        >>> sign_flip_test([Fraction(1)] + [Fraction(-1)] * 9).p_value
        0.021484375
    """
    nonzero = [Fraction(d) for d in diffs if d != 0]
    exact = "exact sign-flip permutation test on per-scenario mean differences"
    if not nonzero:
        return PairedTest(1.0, exact)
    scale = math.lcm(*(d.denominator for d in nonzero))
    ints = [int(d * scale) for d in nonzero]
    common = math.gcd(*ints)
    ints = [k // common for k in ints]
    sizes = [abs(k) for k in ints]
    if max(sizes) == 1:
        positive = sum(k > 0 for k in ints)
        return PairedTest(mcnemar_exact(positive, len(ints) - positive), exact)
    span = sum(sizes)
    if len(sizes) * span <= _LATTICE_WORK:
        # dist[x]: probability that the scenarios given a + sign sum to x (in lattice units); total = 2x - span.
        dist = np.zeros(span + 1)
        dist[0] = 1.0
        reach = 0
        for size in sorted(sizes):
            reach += size
            dist[size:reach + 1] = 0.5 * (dist[size:reach + 1] + dist[:reach + 1 - size])
            dist[:size] *= 0.5
        observed = abs(sum(ints))
        totals = 2 * np.arange(span + 1) - span
        return PairedTest(min(1.0, float(dist[np.abs(totals) >= observed].sum())), exact)
    values = np.array([float(d) for d in nonzero])
    tolerance = 1e-9 * float(np.abs(values).sum())  # float sums of rationals that are equal in exact arithmetic
    if len(values) <= _ENUMERATE_MAX:
        totals_f = np.zeros(1)
        for value in values:
            totals_f = np.concatenate((totals_f + value, totals_f - value))
        return PairedTest(min(1.0, float(np.mean(np.abs(totals_f) >= abs(float(sum(nonzero))) - tolerance))), exact)
    # A draw's total is sum(+-v) = 2 * (plus-bits @ v) - sum(v); bits come packed, 8 signs per random byte.
    threshold = (abs(float(sum(nonzero))) - tolerance + values.sum()) / 2.0
    low_threshold = (values.sum() - abs(float(sum(nonzero))) + tolerance) / 2.0
    rng = np.random.default_rng(seed)
    hits, chunk = 0, max(1, min(draws, 2_000_000 // len(values)))
    for done in range(0, draws, chunk):  # a `for`, not `while done < draws`: bounded whatever the body does
        size = min(chunk, draws - done)
        packed = rng.integers(0, 256, size=(size, (len(values) + 7) // 8), dtype=np.uint8)
        plus = np.unpackbits(packed, axis=1, count=len(values)) @ values
        hits += int(((plus >= threshold) | (plus <= low_threshold)).sum())
    return PairedTest((1 + hits) / (1 + draws),
                      f"Monte Carlo sign-flip permutation test on per-scenario mean differences ({draws} seeded draws)")


def min_detectable_effect(n_scenarios: int, discordance: float, *, alpha: float = 0.05, power: float = 0.8) -> float:
    """Smallest paired accuracy difference the suite detects (normal approximation to the scenario test).

    ``MDE = (z_{1-alpha/2} + z_{power}) * sqrt(p_d / n)`` where ``n`` is the
    number of paired scenarios and ``p_d`` the mean squared per-scenario
    difference of accuracy, ``mean((b_i - a_i)^2)``: that is the null variance
    of one scenario's term in the sign-flip test, and with one epoch (or
    epochs that agree) it is the share of discordant scenarios, as in
    McNemar's test. Capped at 1.0; returns 1.0 when there are no scenarios. A
    ``p_d`` of zero is replaced by ``0.5 / n`` so an untested suite does not look perfect.
    """
    if n_scenarios <= 0:
        return 1.0
    p_d = max(discordance, 0.5 / n_scenarios)
    z = NormalDist().inv_cdf(1.0 - alpha / 2.0) + NormalDist().inv_cdf(power)
    return min(1.0, z * math.sqrt(p_d / n_scenarios))
