"""Aggregate tables from sample scores: rates with intervals, paired comparisons, flips.

Input is a list of :class:`harness.scoring.SampleScores`; output is plain
JSON-ready lists of dicts, exactly the ``metrics``, ``paired``, ``mcnemar``,
``flips``, ``latency``, ``added_latency`` and ``min_detectable_effect`` blocks
of ``summary.json`` (documented in ``docs/summary-json.md``).

The scores become one numpy array per column (NaN = not applicable) and every
group (model x arm x category) is a boolean mask over them: no pandas, so the
report neither pays its import nor its per-group overhead. Scenarios are coded
as integers in sorted id order once, and the bootstrap draws for a given number
of scenarios are cached in :mod:`harness.stats`, so each interval is a
``bincount`` and one matrix product.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from harness import stats
from harness.scoring import SampleScores

ALL = "all"
#: Paired metrics: name -> (column, row filter or None).
PAIRED_METRICS: dict[str, tuple[str, str | None]] = {
    "continuity_accuracy": ("correct", None),
    "adherence_rate": ("adherence", None),
    "unsupported_claim_rate": ("unsupported", None),
    "answer_leakage_rate": ("answer_leak", None),
    "coverage": ("answered", None),
    "over_abstention_rate": ("abstained", "answerable"),
    "abstention_rate_unanswerable": ("abstained", "unanswerable"),
    "prompt_tokens": ("prompt_tokens", None),
    "tool_result_tokens": ("tool_result_tokens", None),
    "latency_s": ("latency_s", None),
}
_COUNT_METRICS = ("tool_calls", "model_calls", "prompt_tokens", "completion_tokens", "tool_result_tokens")


@dataclass(frozen=True)
class AggregateConfig:
    """Who is compared with whom, and how intervals are drawn."""

    treatment_arm: str = "recall"
    baseline_arm: str = "history_only"
    resamples: int = stats.DEFAULT_RESAMPLES
    seed: int = stats.DEFAULT_SEED
    alpha: float = 0.05
    power: float = 0.8


class _Columns:
    """One array per column, one entry per sample; ``sc`` codes scenario ids in sorted order."""

    def __init__(self, scores: Sequence[SampleScores]) -> None:
        nan = float("nan")

        def num(value: bool | float | None) -> float:
            return nan if value is None else float(value)

        rows = [
            (s.model, s.arm, s.category, s.scenario_id, s.epoch, s.status == "ok", s.should_abstain,
             num(s.continuity_correct), num(s.abstained), num(s.adherence),
             num(None if s.status != "ok" else bool(s.unsupported_claims)),
             num(None if s.status != "ok" else bool(s.answer_leaks)), len(s.tool_leaks),
             num(s.retrieved_precision), num(s.retrieved_recall), s.tool_calls, s.model_calls, s.prompt_tokens,
             s.completion_tokens, s.tool_result_tokens, num(s.cost_usd), s.latency_s)
            for s in scores
        ]
        (model, arm, category, scenario, epoch, ok, abstain, correct, abstained, adherence, unsupported, leak,
         tool_leaks, precision, recall, tool_calls, model_calls, prompt, completion, tool_tokens, cost,
         latency) = zip(*rows)
        self.model, self.arm, self.category = (np.array(c, dtype=object) for c in (model, arm, category))
        self.scenario_ids, self.sc = np.unique(np.array(scenario, dtype=object).astype(str), return_inverse=True)
        self.epoch = np.array(epoch, dtype=np.int64)
        self.ok, self.should_abstain = np.array(ok, dtype=bool), np.array(abstain, dtype=bool)
        self.error = (~self.ok).astype(np.float64)
        floats = {"correct": correct, "abstained": abstained, "adherence": adherence, "unsupported": unsupported,
                  "answer_leak": leak, "precision": precision, "recall": recall, "cost_usd": cost,
                  "latency_s": latency, "tool_calls": tool_calls, "model_calls": model_calls,
                  "prompt_tokens": prompt, "completion_tokens": completion, "tool_result_tokens": tool_tokens}
        self.values = {name: np.array(column, dtype=np.float64) for name, column in floats.items()}
        abst = self.values["abstained"]
        self.values["answered"] = np.where(np.isnan(abst), np.nan, 1.0 - abst)
        self.tool_leaks = np.array(tool_leaks, dtype=np.int64)


def _row(model: str, arm: str, category: str, metric: str, iv: stats.Interval | None, n: int) -> dict[str, Any]:
    iv = iv or stats.Interval(None, None, None, 0)
    return {"model": model, "arm": arm, "category": category, "metric": metric,
            "value": _r(iv.value), "ci_low": _r(iv.ci_low), "ci_high": _r(iv.ci_high), "n": int(n)}


def _r(value: float | None) -> float | None:
    return None if value is None else round(float(value), 6)


def _group_metrics(cols: _Columns, mask: np.ndarray, key: tuple[str, str, str],
                   cfg: AggregateConfig) -> list[dict[str, Any]]:
    """Every ``metrics`` row of one model x arm x category (``mask`` selects its samples)."""
    model, arm, category = key
    ok = mask & cols.ok
    ok_sc = cols.sc[ok]
    boot = {"resamples": cfg.resamples, "seed": cfg.seed}
    out: list[dict[str, Any]] = []

    def add(metric: str, rows: np.ndarray, column: str) -> None:
        values = cols.values[column][rows]
        known = ~np.isnan(values)
        n = int(known.sum())
        iv = stats.cluster_mean_ci(values[known], cols.sc[rows][known], **boot) if n else None
        out.append(_row(model, arm, category, metric, iv, n))

    add("continuity_accuracy", ok, "correct")
    add("adherence_rate", ok, "adherence")
    add("unsupported_claim_rate", ok, "unsupported")
    add("abstention_rate_unanswerable", ok & cols.should_abstain, "abstained")
    add("over_abstention_rate", ok & ~cols.should_abstain, "abstained")
    add("coverage", ok, "answered")
    add("selective_accuracy", ok & (cols.values["answered"] == 1.0), "correct")
    add("answer_leakage_rate", ok, "answer_leak")
    leaks = int(cols.tool_leaks[mask].sum())
    out.append(_row(model, arm, category, "tool_leakage_count", stats.Interval(leaks, None, None, 0),
                    int(mask.sum())))
    add("retrieved_precision", ok, "precision")
    add("retrieved_recall", ok, "recall")
    for column in _COUNT_METRICS:
        add(column, ok, column)
    n_ok = len(ok_sc)
    cost = cols.values["cost_usd"][ok]
    known_cost = n_ok > 0 and not np.isnan(cost).any()
    if known_cost:
        add("cost_usd", ok, "cost_usd")
    else:
        out.append(_row(model, arm, category, "cost_usd", None, 0))
    latency = cols.values["latency_s"][ok]
    for metric, q in (("latency_p50_s", 0.5), ("latency_p95_s", 0.95)):
        iv = stats.cluster_quantile_ci(latency, ok_sc, q, **boot) if n_ok else None
        out.append(_row(model, arm, category, metric, iv, n_ok))
    correct = cols.values["correct"][ok]
    n_correct = float(np.nansum(correct))
    tokens = cols.values["prompt_tokens"][ok] + cols.values["completion_tokens"][ok]
    for metric, numerator, usable in (("tokens_per_correct", tokens, n_ok > 0),
                                      ("cost_per_correct", cost, known_cost)):
        iv = stats.cluster_ratio_ci(numerator, correct, ok_sc, **boot) if usable and n_correct > 0 else None
        out.append(_row(model, arm, category, metric, iv, int(n_correct)))
    add("error_rate", mask, "error_rate")
    return out


def _per_scenario(cols: _Columns, rows: np.ndarray, column: str) -> dict[int, float]:
    """Scenario code -> mean of the column over its known values (scenarios with none left out)."""
    values = cols.values[column][rows]
    known = ~np.isnan(values)
    codes = cols.sc[rows][known]
    size = len(cols.scenario_ids)
    totals = np.bincount(codes, weights=values[known], minlength=size)
    counts = np.bincount(codes, minlength=size)
    return {int(k): float(totals[k] / counts[k]) for k in np.flatnonzero(counts)}


def _pairs(cols: _Columns, rows_a: np.ndarray, rows_b: np.ndarray, column: str) -> tuple[np.ndarray, ...]:
    """(scenario codes, a values, b values) of the samples both arms ran (same scenario and epoch), NaN dropped."""
    values = cols.values[column]
    index_a = {(int(s), int(e)): i for i, s, e in zip(np.flatnonzero(rows_a), cols.sc[rows_a], cols.epoch[rows_a])}
    joined = [(s, index_a[(int(s), int(e))], j)
              for j, s, e in zip(np.flatnonzero(rows_b), cols.sc[rows_b], cols.epoch[rows_b])
              if (int(s), int(e)) in index_a]
    joined.sort()
    sc = np.array([s for s, _, _ in joined], dtype=np.int64)
    a = values[np.array([i for _, i, _ in joined], dtype=np.int64)]
    b = values[np.array([j for _, _, j in joined], dtype=np.int64)]
    keep = ~(np.isnan(a) | np.isnan(b))
    return sc[keep], a[keep], b[keep]


def _comparisons(cols: _Columns, model_rows: np.ndarray, model: str, arm_a: str, arm_b: str, cfg: AggregateConfig,
                 titles: Mapping[str, str]) -> dict[str, list[dict[str, Any]]]:
    boot = {"resamples": cfg.resamples, "seed": cfg.seed}
    ok = model_rows & cols.ok
    rows_a, rows_b = ok & (cols.arm == arm_a), ok & (cols.arm == arm_b)
    filters = {None: ok, "answerable": ~cols.should_abstain, "unanswerable": cols.should_abstain}
    paired = []
    for metric, (column, row_filter) in PAIRED_METRICS.items():
        a = _per_scenario(cols, rows_a & filters[row_filter], column)
        b = _per_scenario(cols, rows_b & filters[row_filter], column)
        common = sorted(a.keys() & b.keys())
        if not common:
            continue
        iv = stats.paired_diff_ci([a[k] for k in common], [b[k] for k in common], **boot)
        paired.append({"model": model, "metric": metric, "arm_a": arm_a, "arm_b": arm_b, "diff": _r(iv.value),
                       "ci_low": _r(iv.ci_low), "ci_high": _r(iv.ci_high), "n_scenarios": iv.n})
    sc, a, b = _pairs(cols, rows_a, rows_b, "correct")
    fixed, broken = int(((a == 0) & (b == 1)).sum()), int(((a == 1) & (b == 0)).sum())
    both = int(((a == 1) & (b == 1)).sum())
    mcnemar = [{"model": model, "arm_a": arm_a, "arm_b": arm_b, "n_pairs": len(sc), "both_correct": both,
                "fixed": fixed, "broken": broken, "both_wrong": len(sc) - both - fixed - broken,
                "p_value": stats.mcnemar_exact(fixed, broken)}]
    present = np.unique(sc)
    size = len(cols.scenario_ids)
    n_per = np.bincount(sc, minlength=size)[present]
    rate_a = np.bincount(sc, weights=a, minlength=size)[present] / n_per
    rate_b = np.bincount(sc, weights=b, minlength=size)[present] / n_per
    ok_codes, ok_categories = cols.sc[ok], cols.category[ok]
    first = dict(zip(ok_codes[::-1].tolist(), ok_categories[::-1].tolist()))  # first ok sample of each scenario
    flips = []
    for code, ra, rb in zip(present.tolist(), rate_a.tolist(), rate_b.tolist()):
        if ra == rb:
            continue
        sid = str(cols.scenario_ids[code])
        flips.append({"model": model, "arm_a": arm_a, "arm_b": arm_b, "scenario_id": sid,
                      "title": titles.get(sid, sid), "category": str(first.get(code, "")),
                      "kind": "fixed" if rb > ra else "broken", "a_correct_rate": _r(ra), "b_correct_rate": _r(rb)})
    flips.sort(key=lambda f: (f["kind"], -abs(f["b_correct_rate"] - f["a_correct_rate"]), f["scenario_id"]))
    lat_sc, lat_a, lat_b = _pairs(cols, rows_a, rows_b, "latency_s")
    added = []
    if len(lat_sc):
        diff = lat_b - lat_a
        p50 = stats.cluster_quantile_ci(diff, lat_sc, 0.5, **boot)
        added.append({"model": model, "arm_a": arm_a, "arm_b": arm_b, "p50_s": _r(p50.value),
                      "p95_s": _r(float(np.quantile(diff, 0.95))),
                      "ci_low_p50": _r(p50.ci_low), "ci_high_p50": _r(p50.ci_high)})
    n_sc = len(present)
    discordance = (fixed + broken) / len(sc) if len(sc) else 0.0
    mde = [{"model": model, "arm_a": arm_a, "arm_b": arm_b, "n_scenarios": n_sc, "discordance": _r(discordance),
            "mde": _r(stats.min_detectable_effect(n_sc, discordance, alpha=cfg.alpha, power=cfg.power))}]
    return {"paired": paired, "mcnemar": mcnemar, "flips": flips, "added_latency": added,
            "min_detectable_effect": mde}


def aggregate(scores: Sequence[SampleScores], *, titles: Mapping[str, str] | None = None,
              config: AggregateConfig | None = None) -> dict[str, list[dict[str, Any]]]:
    """Every aggregate block of ``summary.json`` from the scored samples.

    Args:
        scores: one entry per sample (error samples included; they count in error_rate only).
        titles: scenario id -> title, for the flip table.
        config: arms to compare and bootstrap settings.

    Returns:
        ``{"metrics", "paired", "mcnemar", "flips", "latency", "added_latency", "min_detectable_effect"}``.
    """
    cfg = config or AggregateConfig()
    titles = titles or {}
    result: dict[str, list[dict[str, Any]]] = {k: [] for k in (
        "metrics", "paired", "mcnemar", "flips", "latency", "added_latency", "min_detectable_effect")}
    if not scores:
        return result
    cols = _Columns(scores)
    cols.values["error_rate"] = cols.error
    for model in sorted(set(cols.model.tolist())):
        model_rows = cols.model == model
        model_arms = set(cols.arm[model_rows].tolist())
        for arm in sorted(model_arms):
            mask = model_rows & (cols.arm == arm)
            result["metrics"] += _group_metrics(cols, mask, (model, arm, ALL), cfg)
            for category in sorted(set(cols.category[mask].tolist())):
                result["metrics"] += _group_metrics(cols, mask & (cols.category == category),
                                                    (model, arm, str(category)), cfg)
            latency = cols.values["latency_s"][mask & cols.ok]
            has = len(latency) > 0
            result["latency"].append({"model": model, "arm": arm,
                                      "p50_s": _r(float(np.quantile(latency, 0.5))) if has else None,
                                      "p95_s": _r(float(np.quantile(latency, 0.95))) if has else None,
                                      "values_s": [round(v, 3) for v in latency.tolist()]})
        if cfg.treatment_arm not in model_arms:
            continue
        baselines = sorted(model_arms - {cfg.treatment_arm}, key=lambda a: (a != cfg.baseline_arm, a))
        for baseline in baselines:
            for key, rows in _comparisons(cols, model_rows, str(model), baseline, cfg.treatment_arm, cfg,
                                          titles).items():
                result[key] += rows
    return result
