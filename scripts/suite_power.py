"""Power of a suite, measured on a run: per category, the paired scenarios, their discordance and what they can detect.

Usage: ``python scripts/suite_power.py RUN_DIR [--arm recall] [--baseline history_only] [--target 0.10] [--half-width 0.15]``

For each category (and the whole suite) it prints n (scenarios paired between the two arms),
the discordance p_d (the mean squared per-scenario difference of accuracy: with one epoch,
the share of scenarios where exactly one arm is right), the minimum detectable effect at
alpha 0.05 and 80% power (:func:`harness.analysis.stats.min_detectable_effect`, the rule
the verdict's MDE line uses), how many scenarios the target effect would need at that
discordance, the half-width of the 95% interval the report prints for the category
(:func:`harness.analysis.decision.paired_evidence`: the hull of the inverted exact test and
Tango's score interval), and how many scenarios that interval needs to be no wider than
``--half-width`` with the category's fixes and breaks in the same proportions.

The interval is narrower than ``1.96 * sqrt(p_d / n)`` when the difference is large: its
width follows the variance around the difference, ``p_d - diff^2``, not the null variance
``p_d`` the MDE uses. A category whose baseline cannot answer (no breaks) has that variance
at most 0.25 whatever the model; :func:`one_sided_worst_case` is the n that bounds it.
SUITE.md's power table is this script's output on the offline run.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from statistics import NormalDist

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.analysis.decision import paired_evidence  # noqa: E402
from harness.analysis.stats import min_detectable_effect  # noqa: E402
from harness.score import CORRECT_OUTCOMES  # noqa: E402


def paired_differences(scores: Path, arm: str, baseline: str) -> dict[str, list[float]]:
    """Per category, each scenario's accuracy difference ``arm - baseline`` (mean over its epochs)."""
    by_sample: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    category: dict[str, str] = {}
    with scores.open(encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            if record.get("arm") not in (arm, baseline):
                continue
            by_sample[(record["scenario_id"], record.get("model", ""))][record["arm"]].append(
                1.0 if record.get("outcome") in CORRECT_OUTCOMES else 0.0)
            category[record["scenario_id"]] = record.get("category", "?")
    out: dict[str, list[float]] = defaultdict(list)
    for (sid, _), arms in by_sample.items():
        if arm in arms and baseline in arms:
            diff = sum(arms[arm]) / len(arms[arm]) - sum(arms[baseline]) / len(arms[baseline])
            out[category[sid]].append(diff)
            out["(all)"].append(diff)
    return out


def half_width(diffs: list[float]) -> float:
    """Half the width of the 95% interval the report prints for these per-scenario differences (1.0: none)."""
    evidence = paired_evidence([max(0.0, -d) for d in diffs], [max(0.0, d) for d in diffs])
    if evidence.ci_low is None or evidence.ci_high is None:
        return 1.0
    return (evidence.ci_high - evidence.ci_low) / 2.0


def stretched(diffs: list[float], size: int) -> list[float]:
    """``size`` differences in the same proportions as ``diffs`` (each sorted value repeated in its share)."""
    ordered = sorted(diffs)
    return [ordered[i * len(ordered) // size] for i in range(size)]


def fewest(fits: Callable[[int], bool], start: int, ceiling: int) -> int | None:
    """The smallest n >= 1 with ``fits(n)``, for a ``fits`` that stays true once true (None: not by ``ceiling``).

    Doubles from ``start`` until it fits, then bisects the last step.
    """
    low, high = 1, min(start, ceiling)
    while not fits(high):
        if high >= ceiling:
            return None
        low, high = high + 1, min(high * 2, ceiling)
    while low < high:
        middle = (low + high) // 2
        low, high = (low, middle) if fits(middle) else (middle + 1, high)
    return low


def scenarios_for_half_width(diffs: list[float], target: float, ceiling: int = 4000) -> int | None:
    """The fewest scenarios, in ``diffs``' proportions, whose interval is no wider than ``+/-target`` (None: over ceiling).

    The width shrinks as n grows in fixed proportions."""
    if not diffs:
        return None
    return fewest(lambda size: half_width(stretched(diffs, size)) <= target, len(diffs), ceiling)


def one_sided_worst_case(target: float, ceiling: int = 4000) -> int | None:
    """The n at which a category with no breaks has an interval within ``+/-target`` at every fix rate.

    The worst rate's width shrinks as n grows."""
    return fewest(lambda size: max(half_width([1.0] * fixed + [0.0] * (size - fixed)) for fixed in range(size + 1))
                  <= target, 8, ceiling)


def power_rows(diffs: dict[str, list[float]], target: float,
               half_target: float = 0.15) -> list[tuple[str, int, float, float, int, float, int | None]]:
    """``(category, n, p_d, MDE, n for target, half-width, n for half_target)`` rows, the whole suite last."""
    z = NormalDist().inv_cdf(0.975) + NormalDist().inv_cdf(0.8)
    rows = []
    for name in sorted(diffs, key=lambda c: (c == "(all)", c)):
        values = diffs[name]
        n = len(values)
        p_d = sum(v * v for v in values) / n if n else 0.0
        needed = math.ceil(p_d * (z / target) ** 2) if p_d else 0
        rows.append((name, n, p_d, min_detectable_effect(n, p_d), needed, half_width(values),
                     scenarios_for_half_width(values, half_target)))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--arm", default="recall")
    parser.add_argument("--baseline", default="history_only")
    parser.add_argument("--target", type=float, default=0.10)
    parser.add_argument("--half-width", type=float, default=0.15)
    args = parser.parse_args(argv)
    scores = args.run_dir / "scores.jsonl"
    if not scores.is_file():
        print(f"{scores}: no such file (give a run folder)", file=sys.stderr)
        return 2
    rows = power_rows(paired_differences(scores, args.arm, args.baseline), args.target, args.half_width)
    print(f"| category | n | discordance | MDE (80%) | n for {args.target:+.2f} | 95% half-width "
          f"| n for ±{args.half_width:.2f} |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, n, p_d, mde, needed, half, for_half in rows:
        print(f"| {name} | {n} | {p_d:.2f} | {mde:.2f} | {needed} | ±{half:.2f} | {for_half or '-'} |")
    print(f"\nA category with no breaks needs {one_sided_worst_case(args.half_width)} scenarios for "
          f"±{args.half_width:.2f} at any fix rate.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
