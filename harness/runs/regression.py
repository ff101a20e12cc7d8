"""Is run B worse than run A on a decision metric? The shared paired rule over the scenarios both runs scored.

Two runs of one suite score the same scenarios, so a change between them is
paired by scenario exactly as the verdict pairs two arms: each scenario's
mean over its epochs in A and in B, the exact sign-flip test over units
(conversations for ``conv/probe`` ids) and the interval inverted from it
(:func:`harness.analysis.decision.paired_evidence`). B *regresses* when the
shared rule (:func:`harness.analysis.decision.decide_paired`) proves the
change on the bad side of 0: a drop for a higher-is-better metric, a rise
for a lower-is-better one. Comparing A's and B's own intervals (do they
overlap?) is not this rule: it ignores the pairing and is not a test.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

__all__ = ["SAMPLE_METRICS", "PairedChange", "paired_change", "regression_decision"]


def _score(sample: Mapping[str, Any], name: str) -> float | None:
    """Boolean score ``name`` of an ok sample of ``scores.jsonl`` (its ``scores`` list) as 1 or 0; None where it
    does not apply (an error sample, a score absent or null).

    Looked up when called, not built into a closure at import: code run at import escapes mutation testing.
    """
    if sample.get("status") != "ok":
        return None
    found = next((s for s in sample.get("scores") or () if isinstance(s, Mapping) and s.get("name") == name), None)
    if found is None or found.get("value") is None:
        return None
    return 1.0 if found["value"] else 0.0


#: Decision metric -> its value in one sample of ``scores.jsonl``, None where it does not apply: the per-sample
#: form of the aggregate's ``metrics`` row of the same name. Metrics ``scores.jsonl`` does not hold per sample
#: (answer leakage, abstention rates, precision) are decided by :func:`harness.runs.compare.is_worse`.
SAMPLE_METRICS: dict[str, Callable[[Mapping[str, Any]], float | None]] = {
    "continuity_accuracy": lambda s: _score(s, "continuity"),
    "unsupported_claim_rate": lambda s: _score(s, "unsupported_claims"),
    "adherence_rate": lambda s: _score(s, "adherence"),
    "error_rate": lambda s: 0.0 if s.get("status") == "ok" else 1.0,
}


def _means(samples: Iterable[Mapping[str, Any]], model: str, arm: str, category: str,
           value: Callable[[Mapping[str, Any]], float | None]) -> dict[str, float]:
    """Scenario -> mean of ``value`` over its samples of ``model`` x ``arm`` (in ``category``, unless ``all``)."""
    sums: dict[str, list[float]] = {}
    for s in samples:
        if s.get("model") != model or s.get("arm") != arm or category not in ("all", s.get("category")):
            continue
        v = value(s)
        if v is not None:
            sums.setdefault(str(s.get("scenario_id")), []).append(v)
    return {sid: sum(vs) / len(vs) for sid, vs in sums.items()}


@dataclass(frozen=True)
class PairedChange:
    """One metric's paired change from A to B over the scenarios both scored, decided both ways by the shared rule.

    ``evidence`` is of B - A in the metric's own unit (a drop of continuity is negative); ``worse`` is the rule's
    decision on "B is worse than A" (``passed`` True: a regression), ``better`` on "B is better than A".
    """

    evidence: Any
    worse: Any
    better: Any

    @property
    def status(self) -> Literal["worse", "better", "undecided", "same"]:
        """``worse`` (proven, a regression), ``better`` (proven), ``same`` (no unit differs), else ``undecided``."""
        if self.worse.passed is True:
            return "worse"
        if self.better.passed is True:
            return "better"
        return "same" if self.evidence.up + self.evidence.down == 0 else "undecided"

    @property
    def reason(self) -> str:
        """The rule's sentence for the status: the proven direction's, else the one on "B is worse"."""
        return self.better.reason if self.status == "better" else self.worse.reason


def _negated(e: Any) -> Any:
    """The same evidence for the opposite difference (A - B): ends swapped and negated, up and down swapped."""
    flip = lambda v: None if v is None else 0.0 - v  # noqa: E731  (0.0 - 0.0 is 0.0, never -0.0)
    return replace(e, up=e.down, down=e.up, diff=flip(e.diff), ci_low=flip(e.ci_high), ci_high=flip(e.ci_low))


def paired_change(samples_a: Iterable[Mapping[str, Any]], samples_b: Iterable[Mapping[str, Any]], *, model: str,
                  arm: str, category: str, metric: str, higher_is_better: bool, alpha: float = 0.05,
                  model_b: str | None = None) -> PairedChange | None:
    """The paired change of ``metric`` from A's ``model`` to B's ``model_b`` (the same model when None) in ``arm``.

    None when the metric has no per-sample form here or no scenario was scored in both runs (then the change
    cannot be decided by a paired test). The test and interval are computed once, in the bad direction as a
    gain (as the verdict computes a gain), and read both ways.
    """
    from harness.analysis import conversation_of, decide_paired, paired_evidence

    value = SAMPLE_METRICS.get(metric)
    if value is None or category == "headline":  # the headline's scenarios are the protocol's, not a category
        return None
    a = _means(samples_a, model, arm, category, value)
    b = _means(samples_b, model if model_b is None else model_b, arm, category, value)
    common = sorted(a.keys() & b.keys())
    if not common:
        return None
    before, after = [a[s] for s in common], [b[s] for s in common]
    worse_from, worse_to = (after, before) if higher_is_better else (before, after)  # the bad direction as a gain
    bad = paired_evidence(worse_from, worse_to, [conversation_of(s) for s in common], alpha=alpha)
    good = _negated(bad)
    drop, rise = ("drop", "rise") if higher_is_better else ("rise", "drop")
    worse = decide_paired(bad, direction="gain", threshold=0.0, what=f"{metric} {drop} from A to B")
    better = decide_paired(good, direction="gain", threshold=0.0, what=f"{metric} {rise} from A to B")
    return PairedChange(good if higher_is_better else bad, worse, better)


def regression_decision(samples_a: Iterable[Mapping[str, Any]], samples_b: Iterable[Mapping[str, Any]], *,
                        model: str, arm: str, category: str, metric: str, higher_is_better: bool,
                        alpha: float = 0.05, model_b: str | None = None) -> Any:
    """The shared rule's :class:`~harness.analysis.decision.Decision` on "B is worse than A", or None.

    None when the metric has no per-sample form here or no scenario was scored in both runs (then the change
    cannot be decided by a paired test; ``compare`` says nothing is proven). ``passed`` True means B is
    proven worse: a regression.
    """
    change = paired_change(samples_a, samples_b, model=model, arm=arm, category=category, metric=metric,
                           higher_is_better=higher_is_better, alpha=alpha, model_b=model_b)
    return None if change is None else change.worse
