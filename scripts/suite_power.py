"""Power of a suite, measured on a run: per category, the paired scenarios, their discordance and what they can detect.

Usage: ``python scripts/suite_power.py RUN_DIR [--arm recall] [--baseline history_only] [--target 0.10]``

For each category (and the whole suite) it prints n (scenarios paired between the two arms),
the discordance p_d (the mean squared per-scenario difference of accuracy: with one epoch,
the share of scenarios where exactly one arm is right), the minimum detectable effect at
alpha 0.05 and 80% power (:func:`harness.analysis.stats.min_detectable_effect`, the rule
the verdict's MDE line uses), the 95% half-width of the paired difference's interval
(1.96 * sqrt(p_d / n)), and how many scenarios the target effect would need at that
discordance. SUITE.md's power table is this script's output on the offline run.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import defaultdict
from pathlib import Path
from statistics import NormalDist

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

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


def power_rows(diffs: dict[str, list[float]], target: float) -> list[tuple[str, int, float, float, float, int]]:
    """``(category, n, p_d, MDE, 95% half-width, n for target)`` rows, the whole suite last."""
    z = NormalDist().inv_cdf(0.975) + NormalDist().inv_cdf(0.8)
    rows = []
    for name in sorted(diffs, key=lambda c: (c == "(all)", c)):
        values = diffs[name]
        n = len(values)
        p_d = sum(v * v for v in values) / n if n else 0.0
        half = 1.96 * math.sqrt(p_d / n) if n else 1.0
        needed = math.ceil(p_d * (z / target) ** 2) if p_d else 0
        rows.append((name, n, p_d, min_detectable_effect(n, p_d), half, needed))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--arm", default="recall")
    parser.add_argument("--baseline", default="history_only")
    parser.add_argument("--target", type=float, default=0.10)
    args = parser.parse_args(argv)
    scores = args.run_dir / "scores.jsonl"
    if not scores.is_file():
        print(f"{scores}: no such file (give a run folder)", file=sys.stderr)
        return 2
    rows = power_rows(paired_differences(scores, args.arm, args.baseline), args.target)
    print(f"| category | n | discordance | MDE (80%) | 95% half-width | n for {args.target:+.2f} |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, n, p_d, mde, half, needed in rows:
        print(f"| {name} | {n} | {p_d:.2f} | {mde:.2f} | ±{half:.2f} | {needed} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
