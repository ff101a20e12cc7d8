"""Coverage of the paired intervals and the gate's false-PASS rate, before and after the exact decision rule.

Simulates paired binary outcomes (baseline, treatment) with epoch
correlation: each scenario has its own chance of a right answer in the
baseline, ``p ~ Beta(0.5, 0.5)`` (most scenarios nearly always right or
nearly always wrong, so its epochs agree, as on a real suite), and the
treatment fixes a share of scenarios (chance 1) and breaks another (chance
0); ``--epochs`` epochs draw from those chances. The true difference is the
population mean of (treatment - baseline) chances: 0 (as many fixed as
broken) or +0.10. For n = 5, 10, 20, 60 and 250 scenarios it prints:

* each interval's **coverage** of the true difference (goal >= 94.5%);
* the gate's **false-PASS** rate at difference 0 (goal <= alpha = 5%): a
  PASS of ``continuity_improves`` when memory does not help.

Methods: *before*, the percentile bootstrap over scenarios
(:func:`harness.analysis.stats.paired_diff_ci`) and its rule (PASS when the
lower end is above 0 with at least 2 scenarios); *after*, the interval
inverted from the sign-flip test and the rule of
:func:`harness.analysis.decision.decide_paired` (the exact test rejects and
the interval lies above 0).

Each cell is a share of ``--sims`` simulations; its Monte Carlo standard
error is printed (sqrt(p(1-p)/sims): 0.7 points at 95% and 1,000 sims).

``--family conversations`` simulates a conversation suite instead (LoCoMo's
``conv/probe`` ids): 5, 10, 20 and 40 conversations of skewed sizes (a
conversation holds ``ceil(lognormal(log 5, 1))`` probes, capped at 60: most
hold a few, some dozens), whose probes share the conversation's own shares of
fixed and broken (``Dirichlet(2 * (fixed, broken, rest))``: strongly alike
within a conversation). The unit of inference is the conversation; the true
difference is still ``(fixed - broken) / 2`` per probe. *Before* is the
interval inverted from the sign-flip test alone (what units of unequal size
had), *after* the interval shipped now (hulled with the design-effect score
interval); both decide by the same exact test.

Usage:
    python benchmarks/bench_verdict_coverage.py [--sims 1000] [--epochs 3] [--seed 7] [--family conversations]
    python benchmarks/bench_verdict_coverage.py --family conversations --sizes 40 --truths 0 --sims 10000
                                                    # one cell, with a Monte Carlo error a fifth of a point
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.analysis import decision, stats  # noqa: E402

SIZES = (5, 10, 20, 60, 250)
CONVERSATIONS = (5, 10, 20, 40)
#: (true difference, share of scenarios fixed, share broken): E[fixed * (1 - p) - broken * p] with E[p] = 1/2.
EFFECTS = ((0.0, 0.15, 0.15), (0.10, 0.25, 0.05))
ALPHA = 0.05


def simulate(rng: np.random.Generator, n: int, epochs: int, fixed: float, broken: float) -> tuple[np.ndarray, ...]:
    """Per-scenario means over epochs in each arm."""
    p = rng.beta(0.5, 0.5, size=n)
    kind = rng.random(n)
    q = np.where(kind < fixed, 1.0, np.where(kind < fixed + broken, 0.0, p))
    a = rng.binomial(epochs, p) / epochs
    b = rng.binomial(epochs, q) / epochs
    return a, b


def simulate_conversations(rng: np.random.Generator, k: int, epochs: int, fixed: float,
                           broken: float) -> tuple[np.ndarray, ...]:
    """Per-probe means over epochs in each arm, and each probe's conversation (see the module docstring)."""
    sizes = np.minimum(np.ceil(rng.lognormal(np.log(5.0), 1.0, size=k)), 60).astype(np.int64)
    shares = rng.dirichlet(2.0 * np.array([fixed, broken, 1.0 - fixed - broken]), size=k)
    units = np.repeat(np.arange(k), sizes)
    p = rng.beta(0.5, 0.5, size=len(units))
    kind = rng.random(len(units))
    f, b = shares[units, 0], shares[units, 1]
    q = np.where(kind < f, 1.0, np.where(kind < f + b, 0.0, p))
    return rng.binomial(epochs, p) / epochs, rng.binomial(epochs, q) / epochs, units


def _sign_flip_alone(sums: np.ndarray, sizes: np.ndarray, *args: object) -> object:
    """The interval units of unequal size had before the design-effect score interval: none beside the sign flip."""
    return None if sizes.min() != sizes.max() else _SCORE(sums, sizes, *args)


_SCORE = decision._score_interval


def _exact(e: decision.PairedEvidence) -> tuple[float, float, bool]:
    """(low, high, PASS) of the shipped rule's evidence; an unbounded end is the rate's bound."""
    low = -1.0 if e.ci_low is None else e.ci_low
    high = 1.0 if e.ci_high is None else e.ci_high
    return low, high, decision.decide_paired(e, direction="gain", threshold=0.0, what="c").passed is True


def _cell(sims: int, n: int, truth: float,
          trial: Callable[[int], dict[str, tuple[float, float, bool]]]) -> dict[str, float]:
    """Coverage and PASS rate of each method over ``sims`` trials (``trial(i)``: method -> (low, high, PASS))."""
    covered = {"before": 0, "after": 0}
    passed = {"before": 0, "after": 0}
    for i in range(sims):
        for method, (low, high, ok) in trial(i).items():
            covered[method] += low <= truth <= high
            passed[method] += ok
    return {"n": n, "truth": truth, **{f"cover_{k}": v / sims for k, v in covered.items()},
            **{f"pass_{k}": v / sims for k, v in passed.items()}}


def _effects(truths: Sequence[float] | None) -> list[tuple[float, float, float]]:
    """The simulated effects, or those of the given true differences."""
    return [e for e in EFFECTS if truths is None or any(math.isclose(e[0], t) for t in truths)]


def run_conversations(sims: int, epochs: int, seed: int, sizes: Sequence[int] = CONVERSATIONS,
                      truths: Sequence[float] | None = None) -> list[dict[str, float]]:
    rng = np.random.default_rng(seed)
    rows = []
    for k in sizes:
        for truth, fixed, broken in _effects(truths):
            def trial(i: int) -> dict[str, tuple[float, float, bool]]:
                a, b, units = simulate_conversations(rng, k, epochs, fixed, broken)  # noqa: B023 - trial() runs within this iteration
                out = {}
                for method, score in (("before", _sign_flip_alone), ("after", _SCORE)):
                    decision._score_interval = score  # type: ignore[assignment]
                    try:
                        out[method] = _exact(decision.paired_evidence(a, b, units, alpha=ALPHA,
                                                                      seed=stats.DEFAULT_SEED + i))
                    finally:
                        decision._score_interval = _SCORE
                return out
            rows.append(_cell(sims, k, truth, trial))
    return rows


def run(sims: int, epochs: int, seed: int, sizes: Sequence[int] = SIZES,
        truths: Sequence[float] | None = None) -> list[dict[str, float]]:
    rng = np.random.default_rng(seed)
    rows = []
    for n in sizes:
        for truth, fixed, broken in _effects(truths):
            def trial(i: int) -> dict[str, tuple[float, float, bool]]:
                a, b = simulate(rng, n, epochs, fixed, broken)  # noqa: B023 - trial() runs within this iteration
                boot = stats.paired_diff_ci(a, b, seed=stats.DEFAULT_SEED + i)
                before = (boot.ci_low, boot.ci_high, bool(n >= 2 and boot.ci_low > 0.0))  # noqa: B023 - trial() runs within this iteration
                return {"before": before,
                        "after": _exact(decision.paired_evidence(a, b, alpha=ALPHA, seed=stats.DEFAULT_SEED + i))}
            rows.append(_cell(sims, n, truth, trial))
    return rows


def _se(share: float, sims: int) -> float:
    return math.sqrt(max(share * (1 - share), 1.0 / sims) / sims)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=1000)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--family", choices=("scenarios", "conversations"), default="scenarios")
    parser.add_argument("--sizes", type=int, nargs="+", help="only these suite sizes (scenarios, or conversations)")
    parser.add_argument("--truths", type=float, nargs="+", choices=[e[0] for e in EFFECTS],
                        help="only these true differences")
    args = parser.parse_args(argv)
    started = time.process_time()
    conversations = args.family == "conversations"
    sizes = args.sizes or (CONVERSATIONS if conversations else SIZES)
    rows = (run_conversations if conversations else run)(args.sims, args.epochs, args.seed, sizes, args.truths)
    print(f"{args.sims} simulations per cell, {args.epochs} epochs, alpha {ALPHA}; Monte Carlo standard error "
          f"about {100 * _se(0.95, args.sims):.1f} points at 95% coverage, {100 * _se(0.05, args.sims):.1f} at 5%")
    print(f"{'n':>4} {'true diff':>9} | {'coverage before':>15} {'after':>7} | {'PASS rate before':>16} {'after':>7}")
    for r in rows:
        flag = lambda c: "" if c >= 0.945 else " <"  # noqa: E731
        print(f"{r['n']:>4} {r['truth']:>+9.2f} | {100 * r['cover_before']:>14.1f}%{flag(r['cover_before']):2}"
              f"{100 * r['cover_after']:>6.1f}%{flag(r['cover_after']):2}| {100 * r['pass_before']:>15.1f}% "
              f"{100 * r['pass_after']:>6.1f}%" + ("   <- false PASS" if r["truth"] == 0 else "   (power)"))
    print("goal: coverage >= 94.5% at every n ('<' marks a miss); false-PASS (true diff 0) <= 5%")
    print(f"CPU {time.process_time() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
