"""The one decision rule: a paired difference decided by an exact test and the interval inverted from it.

Every place that says a difference is proven (the verdict's checks, the
layer ladder, ``compare``'s regressions, the pages that print the paired
rows) reads a :class:`PairedEvidence` made by :func:`paired_evidence` and
decides it with :func:`decide_paired`. So a printed interval and a printed
p-value never disagree: the interval is the set of differences the same
test does not reject.

The unit of inference is the *unit* (the scenario; the conversation of a
benchmark suite, whose probes share sessions and a store): a unit's
statistic is the sum of its scenarios' differences (each a mean over
epochs), and the estimate is the sum over units divided by the scenarios
behind it, so every scenario weighs the same while the test flips whole
units.

* **The test** at 0: the two-sided sign-flip permutation test of the unit
  sums (:func:`harness.analysis.stats.sign_flip_test`): exact (on the lattice
  of the rational differences, or by enumeration), and when every non-zero
  unit differs by the same amount it *is* the exact McNemar test on
  discordant units. Three units fixed and none broken give p = 0.25.
* **The interval** at level 1 - alpha: every mu0 the sign-flip test of
  ``T_u - mu0 * m_u`` does not reject (inverted test; valid for a shift, and
  its null variance is the data's own, so it keeps its coverage at small n:
  ``benchmarks/bench_verdict_coverage.py``). The sign assignments are all
  ``2^n`` of them up to :data:`ENUMERATE_UNITS` units, else
  :data:`INTERVAL_DRAWS` seeded random ones. That test assumes the differences
  symmetric about the shift, and a real effect of a few fixed scenarios is
  skewed; so where the metric lies in [-1, 1] each end goes as far as Tango's
  score interval for paired proportions puts it (:func:`_score_interval`; for
  units of unequal size on their effective counts, and with no unit differing
  the width of 0 differing of n units, never [0, 0]). The end nearest 0 is then put on
  the side of 0 the exact p-value says, so the two agree to the bit.
* **The rule** (:func:`decide_paired`): *pass* only when the test rejects at
  alpha and the interval lies beyond the threshold; *fail* when the point
  estimate itself is on the wrong side of the threshold (no gain observed, a
  rise beyond tolerance observed); otherwise, and whenever the suite has too
  few units for the test to reject at all, *inconclusive*, with the suite's
  minimum detectable effect and the number of units that would decide it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from statistics import NormalDist
from typing import Literal

import numpy as np

from harness.analysis import held, stats

__all__ = ["ENUMERATE_UNITS", "INTERVAL_DRAWS", "Decision", "PairedEvidence", "decide_paired", "describe", "evidence_fields",
           "evidence_from_row", "paired_evidence", "units_to_reject"]

#: Up to this many units every sign assignment is enumerated (2^16 = 65,536); beyond, :data:`INTERVAL_DRAWS`.
ENUMERATE_UNITS = 16
#: Seeded random sign assignments behind the interval beyond :data:`ENUMERATE_UNITS` units.
INTERVAL_DRAWS = 20_000
#: The interval's ends are found to this share of the search range (bisection).
_PRECISION = 1e-7
_POWER = 0.8

Direction = Literal["gain", "no_rise"]


@dataclass(frozen=True)
class PairedEvidence:
    """What the data say of one paired difference (treatment - baseline) over units.

    Attributes:
        n: Units (scenarios, or conversations) that ran in both arms.
        scenarios: Scenarios behind them (each weighs the same in ``diff``).
        up: Units whose difference is above 0 (for correctness: units the treatment fixed).
        down: Units whose difference is below 0 (broken).
        diff: The mean per-scenario difference; None without units.
        ci_low: Lower end of the inverted interval (None: unbounded, the test cannot reject anywhere below).
        ci_high: Upper end (None: unbounded).
        p_value: The exact two-sided p-value of "no difference".
        test: The test, in words.
        mde: The smallest difference the suite detects at 80% power and this alpha.
        variance: Null variance of one unit's term, as a share of a scenario (for the units needed).
        alpha: The test's level; the interval is at 1 - alpha.
        unit: ``scenario`` or ``conversation``.
    """

    n: int
    scenarios: int
    up: int
    down: int
    diff: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float
    test: str
    mde: float
    variance: float
    alpha: float
    unit: str = "scenario"


@dataclass(frozen=True)
class Decision:
    """One decided line: ``passed`` True/False, or None for inconclusive; ``reason`` says it all in print."""

    passed: bool | None
    reason: str
    #: Units a suite would need to decide the observed difference at 80% power (None: decided, or no size would).
    needed: int | None = None


def units_to_reject(alpha: float) -> int:
    """The fewest non-zero units a two-sided sign-flip test needs to reach p <= alpha at all (6 at 0.05).

    With n units the most extreme outcome (all one way) has p = 2 / 2^n.
    """
    return max(1, math.ceil(math.log2(2.0 / alpha) - 1e-12))


def _draw_signs(n: int, draws: int, seed: int) -> np.ndarray:
    """Sign assignments (rows of +-1, int8): all 2^n up to :data:`ENUMERATE_UNITS`, else ``draws`` seeded rows."""
    if n <= ENUMERATE_UNITS:
        bits = ((np.arange(2**n, dtype=np.int64)[:, None] >> np.arange(n)) & 1).astype(np.int8)
    else:
        bits = np.random.default_rng(seed).integers(0, 2, size=(draws, n), dtype=np.int8)
    signs = 2 * bits - 1
    signs.flags.writeable = False
    return signs


#: What a report asks for (the same unit counts again and again; 20,000 x 761 units: 15 MB) held, the oldest dropped.
_signs = stats._HeldByBytes(_draw_signs, 64 * 2**20)


def _signed_sums(signs: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """``signs @ columns`` in float64, a block of rows at a time through one reused buffer of about 4 MB: the same
    products as one float copy of every draw, without allocating it (on 761 units that copy cost a second a call)."""
    out = np.empty((len(signs), columns.shape[1]))
    rows = max(1, 2**19 // max(1, signs.shape[1]))
    buffer = np.empty((min(rows, len(signs)), signs.shape[1]))
    for start in range(0, len(signs), rows):
        part = signs[start:start + rows]
        block = buffer[:len(part)]
        block[:] = part
        out[start:start + len(part)] = block @ columns
    return out


class _Inversion:
    """p(mu0) of the sign-flip test of ``T_u - mu0 * m_u`` on one fixed set of sign assignments."""

    def __init__(self, sums: np.ndarray, sizes: np.ndarray, draws: int, seed: int) -> None:
        signs = _signs(len(sums), draws, seed)
        self.enumerated = len(sums) <= ENUMERATE_UNITS
        both = _signed_sums(signs, np.column_stack((sums, sizes)))  # one pass over the signs for both sums
        self.st, self.sm = both[:, 0], both[:, 1]
        self.total, self.size = float(sums.sum()), float(sizes.sum())
        self.tolerance = 1e-9 * max(1.0, float(np.abs(sums).sum()) + float(sizes.sum()))

    def p(self, mu: float) -> float:
        observed = abs(self.total - mu * self.size) - self.tolerance
        hits = int((np.abs(self.st - mu * self.sm) >= observed).sum())
        if self.enumerated:
            return hits / len(self.st)
        return (1 + hits) / (1 + len(self.st))


def _edge(accept: object, inside: float, outside: float, span: float) -> float:
    """Bisect between an accepted ``inside`` and a rejected ``outside`` for the last accepted point."""
    for _ in range(200):  # bounded whatever the floats do
        if abs(outside - inside) <= _PRECISION * span:
            break
        middle = (inside + outside) / 2.0
        if accept(middle):  # type: ignore[operator]
            inside = middle
        else:
            outside = middle
    return inside


def _end(accept: object, diff: float, far: float, bound: float | None, span: float) -> float | None:
    """One end of the accepted set, searching from ``diff`` towards ``far`` (past every unit) and ``bound``."""
    limit = far if bound is None else (max(far, bound) if far < diff else min(far, bound))
    if accept(limit):  # type: ignore[operator]
        return bound  # the test rejects nothing on this side: the metric's own bound, or unbounded (None)
    return _edge(accept, diff, limit, span)


def _tango(fixed: float, broken: float, n: float, alpha: float,
           bounds: tuple[float, float]) -> tuple[float, float]:
    """Tango's (1998) score interval for a paired difference from ``fixed`` and ``broken`` (fractional) of ``n``.

    Under each hypothesised difference it uses the restricted maximum-likelihood variance of fixes and breaks, so
    a sample with few fixes still reaches the differences a few unseen fixes would make, and a sample with none
    differing still has a width: ``+-z^2 / (n + z^2)`` (0.057 at n = 64).
    """
    z = NormalDist().inv_cdf(1.0 - alpha / 2.0)

    def accept(delta: float) -> bool:
        w = -fixed - broken + (2 * n - fixed + broken) * delta
        # the restricted MLE of the break probability given the difference delta
        q = (math.sqrt(max(0.0, w * w + 8 * n * broken * delta * (1 - delta))) - w) / (4 * n)
        gap = abs(fixed - broken - n * delta)
        variance = n * (2 * q + delta * (1 - delta))
        return gap <= 1e-12 if variance <= 0 else gap <= z * math.sqrt(variance)

    diff = (fixed - broken) / n
    low = bounds[0] if accept(bounds[0]) else _edge(accept, diff, bounds[0], 1.0)
    high = bounds[1] if accept(bounds[1]) else _edge(accept, diff, bounds[1], 1.0)
    return low, high


def _score_interval(sums: np.ndarray, sizes: np.ndarray, parts: tuple[np.ndarray, np.ndarray], alpha: float,
                    bounds: tuple[float | None, float | None]) -> tuple[float, float] | None:
    """Tango's score interval on the units' fixes and breaks; for units of unequal size, on their effective counts.

    The shifted sign-flip test assumes unit differences symmetric about the true shift; a real effect made of
    a few fixed scenarios is skewed, and then the inverted interval's upper end falls short (n = 20 at a true
    +0.10: 4.4% of its intervals end below the truth). Tango's interval knows each difference lies in [-1, 1].
    Equal units: a unit's fix is the positive part of its mean difference (with one epoch, McNemar's discordant
    pairs; over epochs ``d**2 <= |d|`` makes the variance an upper bound). Unequal units (conversations): the
    scenarios' fixes and breaks (``parts``) divided by the design effect (Rao and Scott 1992), the variance of
    the per-scenario mean over whole units (``K / (K - 1)`` times the spread of ``T_u - diff * m_u``) over its
    variance were the scenarios independent, never below 1. With no unit differing the data cannot say how alike
    a unit's scenarios are, so each unit counts as one observation: the interval of 0 differing of ``n`` units.
    None for a metric not bounded within [-1, 1].
    """
    n = len(sums)
    if n == 0 or bounds[0] is None or bounds[1] is None or bounds[0] < -1.0 or bounds[1] > 1.0:
        return None
    limits = (bounds[0], bounds[1])
    if not np.any(sums != 0) and not np.any(parts[0]):
        return _tango(0.0, 0.0, float(n), alpha, limits)
    if sizes.min() == sizes.max():
        d = sums / sizes
        return _tango(float(np.clip(d, 0.0, None).sum()), float(np.clip(-d, 0.0, None).sum()), float(n), alpha,
                      limits)
    total = float(sizes.sum())
    fixed, broken = float(parts[0].sum()), float(parts[1].sum())
    diff = float(sums.sum()) / total
    independent = ((fixed + broken) / total - diff * diff) / total
    clustered = n / (n - 1) * float(((sums - diff * sizes) ** 2).sum()) / total**2
    effect = max(1.0, clustered / independent) if independent > 0 else total / n
    return _tango(fixed / effect, broken / effect, total / effect, alpha, limits)


def _hull(a: float | None, b: float | None, lowest: bool) -> float | None:
    """The outer of two ends (None: unbounded, outermost)."""
    if a is None or b is None:
        return None
    return min(a, b) if lowest else max(a, b)


def _fraction(value: float) -> Fraction:
    """A per-unit sum as the rational it is (k / epochs): the exact test works on the lattice."""
    if value.is_integer():  # one epoch: every unit sum is a whole number (and limit_denominator is slow)
        return Fraction(int(value))
    exact = Fraction(value).limit_denominator(1_000_000)
    return exact if abs(float(exact) - value) <= 1e-12 * max(1.0, abs(value)) else Fraction(value)


def paired_evidence(baseline: Sequence[float], treatment: Sequence[float], units: Sequence[object] | None = None, *,
                    alpha: float = 0.05, bounds: tuple[float | None, float | None] = (-1.0, 1.0),
                    draws: int = INTERVAL_DRAWS, seed: int = stats.DEFAULT_SEED) -> PairedEvidence:
    """The exact test, the inverted interval and the power of one paired difference.

    Args:
        baseline: one value per scenario (its mean over epochs) in the baseline arm.
        treatment: the same scenarios' values in the treatment arm.
        units: the unit of each scenario (its conversation); None: each scenario is its own unit.
        alpha: the test's level; the interval is at 1 - alpha.
        bounds: the smallest and largest difference the metric can take (None: unbounded), where an
            interval the test cannot close stops.
        draws: sign assignments beyond :data:`ENUMERATE_UNITS` units.
        seed: their seed.

    Example (three scenarios fixed, three tied: not significant, the interval holds 0):
        >>> e = paired_evidence([0, 0, 0, 1, 0, 1], [1, 1, 1, 1, 0, 1])
        >>> e.p_value, e.up, e.down, e.ci_low <= 0 < e.ci_high
        (0.25, 3, 0, True)
    """
    diffs = np.asarray(treatment, dtype=np.float64) - np.asarray(baseline, dtype=np.float64)
    named = None if units is None else [str(u) for u in units]
    content = held.digest(diffs.tobytes(), b"\0" if named is None else json.dumps(named).encode("utf-8"))
    return _held((content, alpha, bounds, draws, seed), diffs, named, alpha, bounds, draws, seed)


def _evidence(diffs: np.ndarray, named: list[str] | None, alpha: float, bounds: tuple[float | None, float | None],
              draws: int, seed: int) -> PairedEvidence:
    """:func:`paired_evidence` of the differences (treatment - baseline) and the units' names (None: the scenarios)."""
    labels: list[int] | list[str] = list(range(len(diffs))) if named is None else named
    unit = "scenario" if named is None or len(set(labels)) == len(labels) else "conversation"
    order = sorted(set(labels), key=str)
    index = {label: i for i, label in enumerate(order)}
    codes = np.array([index[label] for label in labels], dtype=np.int64)
    sums = np.bincount(codes, weights=diffs, minlength=len(order)) if len(diffs) else np.zeros(0)
    sizes = np.bincount(codes, minlength=len(order)).astype(np.float64) if len(diffs) else np.zeros(0)
    n, scenarios = len(order), len(diffs)
    if n == 0:
        return PairedEvidence(0, 0, 0, 0, None, None, None, 1.0, "none (no unit ran in both arms)", 1.0, 0.0, alpha,
                              unit)
    exact = stats.sign_flip_test([_fraction(float(s)) for s in sums], seed=seed)
    diff = float(sums.sum() / sizes.sum())
    # Null variance of one unit's term, per scenario: with one scenario per unit and 0/1 outcomes, the share
    # of discordant scenarios (McNemar's); the MDE and the units needed follow from it.
    variance = float(n * (sums**2).sum() / sizes.sum() ** 2)
    mde = stats.min_detectable_effect(n, variance, alpha=alpha, power=_POWER)
    inversion = _Inversion(sums, sizes, draws, seed)
    per_unit = sums / sizes
    span = max(1.0, float(per_unit.max() - per_unit.min()))
    reach = 2.0 * span
    accept = lambda mu: inversion.p(mu) > alpha  # noqa: E731
    low = _end(accept, diff, float(per_unit.min()) - reach, bounds[0], span)
    high = _end(accept, diff, float(per_unit.max()) + reach, bounds[1], span)
    parts = (np.bincount(codes, weights=np.clip(diffs, 0.0, None), minlength=n),
             np.bincount(codes, weights=np.clip(-diffs, 0.0, None), minlength=n))
    score = _score_interval(sums, sizes, parts, alpha, bounds)
    if score is not None:  # the hull: each end as far as either interval puts it (skew-aware, see the function)
        low, high = _hull(low, score[0], True), _hull(high, score[1], False)
    low, high = _agree(exact.p_value > alpha, diff, low, high, accept, span)
    return PairedEvidence(n, scenarios, int((sums > 0).sum()), int((sums < 0).sum()), diff, low, high,
                          exact.p_value, exact.test.replace("per-scenario", f"per-{unit}"), mde, variance, alpha, unit)


#: Evidence held by its inputs' content (:mod:`harness.analysis.held`: a report asks for the same pairs again and again).
_held = held.ByDigest(_evidence)


def _agree(zero_accepted: bool, diff: float, low: float | None, high: float | None, accept: object,
           span: float) -> tuple[float | None, float | None]:
    """Put 0 inside the interval exactly when the exact p-value does not reject (sampled ends can miss by noise)."""
    if zero_accepted:
        return (None if low is None else min(low, 0.0)), (None if high is None else max(high, 0.0))
    holds_zero = (low is None or low <= 0.0) and (high is None or high >= 0.0)
    if not holds_zero:
        return low, high
    if diff > 0:  # 0 is rejected by the exact test: the lower end is the first accepted point above it
        return _edge(accept, diff, 0.0, span), high
    return low, _edge(accept, diff, 0.0, span)


def _number(value: float | None) -> str:
    return "unbounded" if value is None else f"{value:+.2f}"


def p_text(p: float) -> str:
    """A p-value as a reader expects it: two decimals from 0.1 (``1.00``, ``0.25``), two digits below (``0.0039``)."""
    if p >= 0.1:
        return f"{p:.2f}"
    return f"{p:.2g}" if p >= 1e-4 else "< 0.0001"


def describe(e: PairedEvidence) -> str:
    """``+0.50 [+0.00, +1.00], 6 scenarios (3 up, 0 down), exact p 0.25``."""
    units = f"{e.n:,} {e.unit}{'s' if e.n != 1 else ''}"
    if e.unit != "scenario":
        units += f" of {e.scenarios:,} scenarios"
    return (f"{_number(e.diff)} [{_number(e.ci_low)}, {_number(e.ci_high)}], {units} ({e.up} up, {e.down} down), "
            f"exact p {p_text(e.p_value)}")


def _needed(e: PairedEvidence, effect: float) -> int | None:
    """Units at which an effect this far from the threshold would be detected at 80% power (None: no size would)."""
    if effect <= 0:
        return None
    z = NormalDist().inv_cdf(1.0 - e.alpha / 2.0) + NormalDist().inv_cdf(_POWER)
    variance = max(e.variance, 0.5 / max(e.n, 1))
    return max(units_to_reject(e.alpha), math.ceil(z * z * variance / (effect * effect)))


def _alike_to_bound(alpha: float, tolerance: float) -> int | None:
    """Units, none differing, at which the score interval's upper end ``z^2 / (n + z^2)`` is within ``tolerance``.

    189 at alpha 0.05 and tolerance 0.02 (None: a tolerance of 0 or below no size reaches).
    """
    if tolerance <= 0:
        return None
    z = NormalDist().inv_cdf(1.0 - alpha / 2.0)
    return math.ceil(z * z * (1.0 - tolerance) / tolerance - 1e-9)


def decide_paired(e: PairedEvidence, *, direction: Direction, threshold: float, what: str) -> Decision:
    """The rule every paired decision follows (see the module docstring).

    ``direction="gain"``: is the difference proven above ``threshold`` (continuity, an index's recall)?
    ``direction="no_rise"``: is the rise proven at most ``threshold`` (the unsupported-claim rate)?

    Example (the starter suite's six decision scenarios: 3 fixed, 0 broken):
        >>> e = paired_evidence([0] * 6, [1, 1, 1, 0, 0, 0])
        >>> decide_paired(e, direction="gain", threshold=0.0, what="continuity").passed is None
        True
    """
    shown = f"{what} {describe(e)}"
    if e.diff is None:
        return Decision(None, f"{what} undecided: no {e.unit} ran in both arms")
    rejects = e.p_value <= e.alpha
    if direction == "gain":
        proven = rejects and e.ci_low is not None and e.ci_low > threshold
        ruled_out = e.ci_high is not None and e.ci_high <= threshold
        wrong_side, effect, bar = e.diff <= threshold, e.diff - threshold, f"> {threshold:.2f}"
    else:
        proven = e.ci_high is not None and e.ci_high <= threshold
        ruled_out = e.ci_low is not None and e.ci_low > threshold
        wrong_side, effect, bar = e.diff > threshold, threshold - e.diff, f"<= tolerance {threshold:.2f}"
    if proven:
        return Decision(True, f"{shown} {bar}")
    if ruled_out:  # the whole interval on the wrong side: decided against, whatever the suite's size
        return Decision(False, f"{shown}: {'no gain' if direction == 'gain' else 'a rise beyond tolerance'}")
    if direction == "no_rise" and e.up + e.down == 0 and e.ci_high is not None:
        needed = _alike_to_bound(e.alpha, threshold)  # no unit differs: only more units narrow the interval
        size = "" if needed is None else f"; about {needed:,} {e.unit}s would decide it"
        return Decision(None, f"{shown}: not shown within tolerance {threshold:.2f}, no {e.unit} differs and "
                              f"{e.n:,} are too few to bound the rise{size}", needed)
    least = units_to_reject(e.alpha)
    if e.up + e.down < least:
        return Decision(None, f"{shown}: too few to decide ({e.up + e.down} differ; the test at {e.alpha:g} needs "
                              f"{least})", least)
    if wrong_side:
        return Decision(False, f"{shown}: {'no gain' if direction == 'gain' else 'a rise beyond tolerance'}")
    needed = _needed(e, effect)
    size = "" if needed is None else f"; about {needed:,} {e.unit}s would decide it"
    return Decision(None, f"{shown}: {'gain not proven' if direction == 'gain' else 'not shown within tolerance'}, "
                          f"the suite detects {e.mde:.2f}{size}", needed)


def evidence_fields(e: PairedEvidence) -> dict[str, object]:
    """The evidence as the fields of a ``paired`` row of ``summary.json`` (rounded as the aggregate rounds)."""
    r = lambda v: None if v is None else round(float(v), 6)  # noqa: E731
    return {"diff": r(e.diff), "ci_low": r(e.ci_low), "ci_high": r(e.ci_high), "n_scenarios": e.scenarios,
            "n_units": e.n, "unit": e.unit, "up": e.up, "down": e.down, "p_value": e.p_value, "test": e.test,
            "mde": r(e.mde), "variance": r(e.variance), "alpha": e.alpha}


def evidence_from_row(row: dict[str, object] | object) -> PairedEvidence | None:
    """A ``paired`` row read back (None when it predates the exact test: no ``p_value``)."""
    get = row.get if isinstance(row, dict) else (lambda k, d=None: getattr(row, k, d))  # type: ignore[union-attr]
    if get("p_value") is None or get("n_units") is None:
        return None

    def num(key: str) -> float | None:
        value = get(key)
        return None if value is None else float(value)  # type: ignore[arg-type]

    return PairedEvidence(int(get("n_units")), int(get("n_scenarios") or 0), int(get("up") or 0),  # type: ignore[arg-type]
                          int(get("down") or 0), num("diff"), num("ci_low"), num("ci_high"),  # type: ignore[arg-type]
                          float(get("p_value")), str(get("test") or ""), float(get("mde") or 1.0),  # type: ignore[arg-type]
                          float(get("variance") or 0.0), float(get("alpha") or 0.05), str(get("unit") or "scenario"))  # type: ignore[arg-type]
