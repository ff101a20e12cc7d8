"""What changed between two runs, with a regression gate.

Two runs are compared only when their numbers mean the same thing (see
:mod:`harness.runs.comparability`: suite, models, arms, epochs, seed, the
parameters that change answers, judge, scoring setup, harness version) and
both are complete and readable. Every difference is printed as ``name: A ->
B``; runs that differ are *not comparable* (exit 2) unless ``--force``,
which compares what both runs have and lists what only one of them has
(models, arms, scenarios, categories). Rows that did not change are hidden
unless ``--all``.

A decision metric (continuity, adherence, unsupported claims, leakage,
abstention, retrieval, error rate) *regresses* when the shared paired rule
proves B worse than A over the scenarios both runs scored
(:mod:`harness.runs.regression`: the exact sign-flip test and the interval
inverted from it, as the verdict decides). Where no per-scenario scores can
be paired (the protocol's ``headline`` rows, a summary without scores), it
falls back to B's interval lying entirely on the bad side of A's.
``tool_leakage_count`` has no interval and regresses when B has more leaks
than A. A verdict that goes from pass to anything else is a regression too.

Latency (p50, p95) and cost (per sample, per correct answer) are *worse*
only beyond the intervals and beyond both floors of :class:`GateOptions`
(B - A more than a share of A's value and more than an absolute amount), and
even then they gate only when asked (``--gate-on latency``, ``--gate-on
cost``): two runs of one deterministic model differ in latency by tens of
milliseconds on a busy machine, and that must not fail a nightly. Token
metrics are reported but never gate. The command, its tables and exit codes
are :mod:`harness.runs.compare_cli`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.defaults import COMPARE_FLOORS
from harness.runs.comparability import (
    CompareError,
    Difference,
    RunData,
    differences,
    load_run,
    only_in,
    run_problems,
)

__all__ = ["GATE_FAMILIES", "CompareError", "Comparison", "GateOptions", "MetricChange", "compare_runs", "format_diff",
           "format_row", "is_regression", "is_worse"]
HIGHER_IS_BETTER = frozenset({
    "continuity_accuracy", "adherence_rate", "abstention_rate_unanswerable", "coverage", "selective_accuracy",
    "retrieved_precision", "retrieved_recall",
})
LOWER_IS_BETTER = frozenset({
    "unsupported_claim_rate", "answer_leakage_rate", "tool_leakage_count", "over_abstention_rate",
    "error_rate",
})
#: Metrics that are worse only beyond the floors and gate only with ``--gate-on FAMILY``, by family.
FLOORED_METRICS: dict[str, frozenset[str]] = {
    "latency": frozenset({"latency_p50_s", "latency_p95_s"}),
    "cost": frozenset({"cost_usd", "cost_per_correct"}),
}
GATE_FAMILIES = tuple(FLOORED_METRICS)
_MANIFEST_FIELD = {"models": "models", "arms": "arms", "scenarios": "scenario_ids"}


@dataclass(frozen=True)
class GateOptions:
    """What gates ``compare``: the latency and cost floors, and which of those families gate at all.

    A latency or cost row is worse when B's interval lies above A's and B - A
    exceeds both ``*_pct`` percent of A's value and the absolute floor; it
    gates only when its family is in ``gate_on``.
    """

    #: Families among :data:`GATE_FAMILIES` whose worse rows fail the gate (``--gate-on``).
    gate_on: frozenset[str] = frozenset()
    latency_pct: float = COMPARE_FLOORS["latency_pct"]
    latency_ms: float = COMPARE_FLOORS["latency_ms"]
    cost_pct: float = COMPARE_FLOORS["cost_pct"]
    cost_usd: float = COMPARE_FLOORS["cost_usd"]

    def floors(self, family: str) -> tuple[float, float]:
        """(share of A's value, absolute amount in the metric's unit) that B - A must both exceed."""
        if family == "latency":
            return self.latency_pct / 100.0, self.latency_ms / 1000.0
        return self.cost_pct / 100.0, self.cost_usd


def family(metric: str) -> str | None:
    """``latency`` or ``cost`` for a floored metric, None for a decision metric (or one that never gates)."""
    return next((name for name, metrics in FLOORED_METRICS.items() if metric in metrics), None)


@dataclass(frozen=True)
class MetricChange:
    """One metric row (model, arm, category, metric) present in both runs: A's and B's summary rows."""

    model: str
    arm: str
    category: str
    metric: str
    a: Mapping[str, Any]
    b: Mapping[str, Any]
    #: Worse beyond the intervals (and, for latency and cost, the floors) and gated: fails ``compare``.
    regression: bool
    #: Worse beyond the intervals and floors, gated or not (a latency or cost row without ``--gate-on``).
    worse: bool = False
    #: The shared rule's sentence on "B is worse" (n, units up and down, exact p), where it decided the row.
    why: str | None = None
    #: B's model when the runs' models are paired (``compare --pair``); None: the same model as ``model``.
    model_b: str | None = None
    #: The paired change over the scenarios both runs scored (B - A, the exact test, both decisions), where the
    #: metric has a per-sample form: :class:`harness.runs.regression.PairedChange`.
    paired: Any = None

    @property
    def models(self) -> str:
        """``m`` for one model, ``a -> b`` for a pair."""
        return self.model if self.model_b in (None, self.model) else f"{self.model} -> {self.model_b}"

    @property
    def not_gated(self) -> bool:
        """Worse, but of a family that gates only when asked: shown, never a failure."""
        return self.worse and not self.regression

    @property
    def diff(self) -> float | None:
        if self.a.get("value") is None or self.b.get("value") is None:
            return None
        return float(self.b["value"]) - float(self.a["value"])

    @property
    def changed(self) -> bool:
        """False when A and B print the same (value and interval): such rows are hidden unless ``--all``."""
        return format_row(self.a) != format_row(self.b)


@dataclass
class Comparison:
    """Everything ``compare`` found; :func:`cli_compare` prints it and picks the exit code."""

    a: RunData
    b: RunData
    differences: list[Difference]
    #: Why a run is no basis for a gate (incomplete, unreadable lines).
    problems: list[str]
    verdict_a: str
    verdict_b: str
    metrics: list[MetricChange]
    scenarios: list[dict[str, Any]]
    #: kind -> (only in A, only in B), for models, arms, scenarios and categories.
    only_in: dict[str, tuple[list[str], list[str]]]
    #: A's models paired with B's (``--pair``, or one model each): then ``differences`` holds only what breaks
    #: the pairing and ``noted`` what belongs to the paired models (:mod:`harness.runs.pairing`).
    pairing: Any = None
    noted: list[Difference] = field(default_factory=list)

    @property
    def comparable(self) -> bool:
        return not self.differences and not self.problems

    @property
    def nothing_shared(self) -> list[str]:
        """The kinds (models, arms, scenarios) of which the runs have none in common: then nothing can be compared."""
        return [kind for kind, (a_only, _) in self.only_in.items()
                if kind != "categories" and len(a_only) == len(getattr(self.a.manifest, _MANIFEST_FIELD[kind]))
                and not (kind == "models" and self.pairing is not None)]

    @property
    def verdict_regression(self) -> bool:
        return self.verdict_a == "pass" and self.verdict_b != "pass"

    @property
    def regressions(self) -> list[MetricChange]:
        return [c for c in self.metrics if c.regression]

    @property
    def not_gated(self) -> list[MetricChange]:
        """Latency and cost rows worse beyond intervals and floors whose family does not gate (no ``--gate-on``)."""
        return [c for c in self.metrics if c.not_gated]


def is_worse(metric: str, a: Mapping[str, Any], b: Mapping[str, Any], gate: GateOptions | None = None) -> bool:
    """True when B is worse than A beyond both intervals and, for latency and cost, beyond both floors."""
    if a.get("value") is None or b.get("value") is None:
        return False
    if metric == "tool_leakage_count":
        return float(b["value"]) > float(a["value"])
    if None in (a.get("ci_low"), a.get("ci_high"), b.get("ci_low"), b.get("ci_high")):
        return False
    if metric in HIGHER_IS_BETTER:
        return float(b["ci_high"]) < float(a["ci_low"])
    group = family(metric)
    if metric not in LOWER_IS_BETTER and group is None:
        return False
    if float(b["ci_low"]) <= float(a["ci_high"]):
        return False
    if group is None:
        return True
    share, absolute = (gate or GateOptions()).floors(group)
    rise = float(b["value"]) - float(a["value"])
    return rise > absolute and rise > share * abs(float(a["value"]))


def is_regression(metric: str, a: Mapping[str, Any], b: Mapping[str, Any], gate: GateOptions | None = None) -> bool:
    """True when B is worse than A (:func:`is_worse`) and the metric gates: every decision metric; latency and
    cost only when ``gate.gate_on`` names their family."""
    group = family(metric)
    if group is not None and group not in (gate or GateOptions()).gate_on:
        return False
    return is_worse(metric, a, b, gate)


# ---------------------------------------------------------------- what changed


def metric_changes(summary_a: Mapping[str, Any], summary_b: Mapping[str, Any], gate: GateOptions | None = None,
                   samples_a: Sequence[Mapping[str, Any]] | None = None,
                   samples_b: Sequence[Mapping[str, Any]] | None = None,
                   pairs: Mapping[str, str] | None = None) -> list[MetricChange]:
    """Every metric present in both runs (same model, or paired models; same arm and category), with its flags.

    ``pairs`` maps A's models to B's (``compare --pair``); None pairs each model with itself. With both runs'
    scored samples, a decision metric is decided by the shared paired rule
    (:func:`harness.runs.regression.paired_change`); else (and for latency, cost and leak counts) by
    :func:`is_worse`.
    """
    from harness.runs.regression import paired_change

    def key(row: Mapping[str, Any], model: str | None = None) -> tuple[str, str, str, str]:
        return model or row["model"], row["arm"], row["category"], row["metric"]

    b_model_of = {b: a for a, b in (pairs or {}).items()}
    a_rows = {key(r): r for r in summary_a.get("metrics", [])}
    alpha = float(((summary_b.get("verdict") or {}).get("config") or {}).get("alpha") or 0.05)
    changes = []
    for row in summary_b.get("metrics", []):
        model_a = b_model_of.get(row["model"], row["model"]) if pairs is None or row["model"] in b_model_of else None
        a = a_rows.get(key(row, model_a)) if model_a is not None else None
        if a is None:
            continue
        metric = row["metric"]
        shared: dict[str, Any] = {"model_b": row["model"] if pairs is not None else None}
        paired = None
        if samples_a is not None and samples_b is not None and metric in HIGHER_IS_BETTER | LOWER_IS_BETTER:
            paired = paired_change(samples_a, samples_b, model=a["model"], model_b=row["model"], arm=row["arm"],
                                   category=row["category"], metric=metric, alpha=alpha,
                                   higher_is_better=metric in HIGHER_IS_BETTER)
        if paired is not None:
            proven = paired.worse.passed is True
            changes.append(MetricChange(*key(a), a=a, b=row, regression=proven, worse=proven, why=paired.worse.reason,
                                        paired=paired, **shared))
            continue
        changes.append(MetricChange(*key(a), a=a, b=row, regression=is_regression(metric, a, row, gate),
                                    worse=is_worse(metric, a, row, gate), **shared))
    return changes


def scenario_changes(samples_a: Sequence[Mapping[str, Any]], samples_b: Sequence[Mapping[str, Any]],
                     pairs: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """Scenarios whose correct rate changed, per model (A's, when ``pairs`` maps A's models to B's) and arm (error
    samples left out)."""
    from harness.score import CORRECT_OUTCOMES

    a_model_of = {b: a for a, b in (pairs or {}).items()}

    def rates(samples: Sequence[Mapping[str, Any]], rename: Mapping[str, str]) -> dict[tuple[str, str, str], float]:
        tally: dict[tuple[str, str, str], list[int]] = {}
        for s in samples:
            if s.get("status") != "ok":
                continue
            good = s.get("outcome") in CORRECT_OUTCOMES
            tally.setdefault((rename.get(s["model"], s["model"]), s["arm"], s["scenario_id"]), []).append(int(good))
        return {k: sum(v) / len(v) for k, v in tally.items()}

    ra, rb = rates(samples_a, {}), rates(samples_b, a_model_of)
    return [
        {"model": k[0], "arm": k[1], "scenario_id": k[2], "a_correct_rate": ra[k], "b_correct_rate": rb[k],
         "change": "fixed" if rb[k] > ra[k] else "broken"}
        for k in sorted(ra.keys() & rb.keys()) if ra[k] != rb[k]
    ]


def compare_runs(run_a: Path, run_b: Path, *, include_foreign: bool = False,
                 gate: GateOptions | None = None, pair: Sequence[str] | None = None) -> Comparison:
    """Load (or rebuild) both runs, check they are comparable, and diff what they share under ``gate``.

    ``pair`` holds ``OLD=NEW`` model pairs (``--pair``); with none, runs of one model each whose names differ
    are paired anyway (:func:`harness.runs.pairing.resolve_pairing`).
    """
    from harness.runs.pairing import resolve_pairing, split_differences

    a = load_run(Path(run_a), include_foreign=include_foreign)
    b = load_run(Path(run_b), include_foreign=include_foreign)
    problems = [*run_problems("A", a), *run_problems("B", b)]
    pairing = resolve_pairing(a.manifest.models, b.manifest.models, pair)
    found, noted = differences(a, b), list[Difference]()
    shared = only_in(a, b)
    if pairing is not None:
        found, noted = split_differences(found)
        paired_a, paired_b = {x for x, _ in pairing.pairs}, {y for _, y in pairing.pairs}
        unpaired = (sorted(set(a.manifest.models) - paired_a), sorted(set(b.manifest.models) - paired_b))
        shared.pop("models", None)
        if unpaired[0] or unpaired[1]:
            shared["models"] = unpaired
            found.insert(0, Difference("unpaired models", ", ".join(unpaired[0]) or "none",
                                       ", ".join(unpaired[1]) or "none"))
    return Comparison(
        a=a, b=b, differences=found, problems=problems,
        verdict_a=a.summary["verdict"]["status"], verdict_b=b.summary["verdict"]["status"],
        metrics=metric_changes(a.summary, b.summary, gate, a.samples, b.samples,
                               pairs=None if pairing is None else pairing.mapping()),
        scenarios=scenario_changes(a.samples, b.samples, None if pairing is None else pairing.mapping()),
        only_in=shared, pairing=pairing, noted=noted,
    )


# ---------------------------------------------------------------- printing


def format_row(row: Mapping[str, Any]) -> str:
    """``0.82 [0.74, 0.89]``; durations as in the HTML report (``3.2 ms [3.0 ms, 3.5 ms]``); tokens grouped."""
    from harness.report import metric_kind, seconds_interval

    if row.get("value") is None:
        return "n/a"
    kind = metric_kind(str(row.get("metric", "")))
    if kind == "s":
        return seconds_interval(row["value"], row.get("ci_low"), row.get("ci_high"))

    def one(v: float) -> str:
        return f"{v:,.0f}" if kind == "int" and abs(v) >= 1000 else f"{v:.3g}"

    low, high = row.get("ci_low"), row.get("ci_high")
    return one(row["value"]) + ("" if low is None or high is None else f" [{one(low)}, {one(high)}]")


def format_diff(change: MetricChange) -> str:
    from harness.report import metric_kind, seconds

    if change.diff is None:
        return "n/a"
    kind = metric_kind(change.metric)
    if kind == "s":
        return seconds(change.diff, sign=True)
    return f"{change.diff:+,.0f}" if kind == "int" and abs(change.diff) >= 1000 else f"{change.diff:+.3g}"
