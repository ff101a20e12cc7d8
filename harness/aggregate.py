"""Aggregate tables from sample scores: rates with intervals, paired comparisons, flips.

Input is a list of :class:`harness.scoring.SampleScores`; output is plain
JSON-ready lists of dicts, exactly the ``metrics``, ``paired``, ``mcnemar``,
``flips``, ``latency``, ``added_latency`` and ``min_detectable_effect`` blocks
of ``summary.json`` (documented in ``docs/summary-json.md``). pandas is
imported inside :func:`aggregate` so importing this module stays cheap.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from harness import stats
from harness.scoring import SampleScores

if TYPE_CHECKING:
    import pandas as pd

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


@dataclass(frozen=True)
class AggregateConfig:
    """Who is compared with whom, and how intervals are drawn."""

    treatment_arm: str = "recall"
    baseline_arm: str = "history_only"
    resamples: int = stats.DEFAULT_RESAMPLES
    seed: int = stats.DEFAULT_SEED
    alpha: float = 0.05
    power: float = 0.8


def scores_frame(scores: Sequence[SampleScores]) -> pd.DataFrame:
    """One row per sample with the numeric columns aggregation needs (NaN = not applicable)."""
    import pandas as pd

    nan = float("nan")

    def num(value: bool | float | None) -> float:
        return nan if value is None else float(value)

    rows = [
        {
            "model": s.model, "arm": s.arm, "category": s.category, "scenario_id": s.scenario_id, "epoch": s.epoch,
            "ok": s.status == "ok", "error": float(s.status == "error"), "should_abstain": s.should_abstain,
            "correct": num(s.continuity_correct), "abstained": num(s.abstained), "answered": num(s.answered),
            "adherence": num(s.adherence), "unsupported": num(None if s.status != "ok" else s.unsupported),
            "answer_leak": num(None if s.status != "ok" else bool(s.answer_leaks)), "tool_leaks": len(s.tool_leaks),
            "precision": num(s.retrieved_precision), "recall": num(s.retrieved_recall),
            "tool_calls": s.tool_calls, "model_calls": s.model_calls, "prompt_tokens": s.prompt_tokens,
            "completion_tokens": s.completion_tokens, "tool_result_tokens": s.tool_result_tokens,
            "cost_usd": num(s.cost_usd), "latency_s": s.latency_s,
        }
        for s in scores
    ]
    return pd.DataFrame(rows)


def _row(model: str, arm: str, category: str, metric: str, iv: stats.Interval | None, n: int) -> dict[str, Any]:
    iv = iv or stats.Interval(None, None, None, 0)
    return {"model": model, "arm": arm, "category": category, "metric": metric,
            "value": _r(iv.value), "ci_low": _r(iv.ci_low), "ci_high": _r(iv.ci_high), "n": int(n)}


def _r(value: float | None) -> float | None:
    return None if value is None else round(float(value), 6)


def _mean(frame: pd.DataFrame, column: str, cfg: AggregateConfig) -> tuple[stats.Interval | None, int]:
    sub = frame[frame[column].notna()]
    if sub.empty:
        return None, 0
    iv = stats.cluster_mean_ci(sub[column].to_numpy(), sub["scenario_id"].to_numpy(),
                               resamples=cfg.resamples, seed=cfg.seed)
    return iv, len(sub)


def _group_metrics(g: pd.DataFrame, key: tuple[str, str, str], cfg: AggregateConfig) -> list[dict[str, Any]]:
    model, arm, category = key
    ok = g[g["ok"]]
    out: list[dict[str, Any]] = []

    def add(metric: str, frame: pd.DataFrame, column: str) -> None:
        iv, n = _mean(frame, column, cfg)
        out.append(_row(model, arm, category, metric, iv, n))

    add("continuity_accuracy", ok, "correct")
    add("adherence_rate", ok, "adherence")
    add("unsupported_claim_rate", ok, "unsupported")
    add("abstention_rate_unanswerable", ok[ok["should_abstain"]], "abstained")
    add("over_abstention_rate", ok[~ok["should_abstain"]], "abstained")
    add("coverage", ok, "answered")
    add("selective_accuracy", ok[ok["answered"] == 1.0], "correct")
    add("answer_leakage_rate", ok, "answer_leak")
    leaks = int(g["tool_leaks"].sum())
    out.append(_row(model, arm, category, "tool_leakage_count", stats.Interval(leaks, None, None, 0), len(g)))
    add("retrieved_precision", ok, "precision")
    add("retrieved_recall", ok, "recall")
    for column in ("tool_calls", "model_calls", "prompt_tokens", "completion_tokens", "tool_result_tokens"):
        add(column, ok, column)
    known_cost = not ok.empty and bool(ok["cost_usd"].notna().all())
    if known_cost:
        add("cost_usd", ok, "cost_usd")
    else:
        out.append(_row(model, arm, category, "cost_usd", None, 0))
    for metric, q in (("latency_p50_s", 0.5), ("latency_p95_s", 0.95)):
        iv = None
        if not ok.empty:
            iv = stats.cluster_quantile_ci(ok["latency_s"].to_numpy(), ok["scenario_id"].to_numpy(), q,
                                           resamples=cfg.resamples, seed=cfg.seed)
        out.append(_row(model, arm, category, metric, iv, len(ok)))
    n_correct = float(ok["correct"].sum()) if not ok.empty else 0.0
    for metric, numerator, usable in (
        ("tokens_per_correct", ok["prompt_tokens"] + ok["completion_tokens"], not ok.empty),
        ("cost_per_correct", ok["cost_usd"], known_cost),
    ):
        iv = None
        if usable and n_correct > 0:
            iv = stats.cluster_ratio_ci(numerator.to_numpy(), ok["correct"].to_numpy(), ok["scenario_id"].to_numpy(),
                                        resamples=cfg.resamples, seed=cfg.seed)
        out.append(_row(model, arm, category, metric, iv, int(n_correct)))
    iv, n = _mean(g, "error", cfg)
    out.append(_row(model, arm, category, "error_rate", iv, n))
    return out


def _per_scenario(ok: pd.DataFrame, arm: str, column: str, row_filter: str | None) -> pd.Series:
    sub = ok[ok["arm"] == arm]
    if row_filter == "answerable":
        sub = sub[~sub["should_abstain"]]
    elif row_filter == "unanswerable":
        sub = sub[sub["should_abstain"]]
    return sub.groupby("scenario_id")[column].mean().dropna()


def _pairs(ok: pd.DataFrame, arm_a: str, arm_b: str, column: str) -> pd.DataFrame:
    a = ok[ok["arm"] == arm_a].set_index(["scenario_id", "epoch"])[column]
    b = ok[ok["arm"] == arm_b].set_index(["scenario_id", "epoch"])[column]
    joined = a.to_frame("a").join(b.to_frame("b"), how="inner").dropna()
    return joined.reset_index()


def _comparisons(frame: pd.DataFrame, model: str, arm_a: str, arm_b: str, cfg: AggregateConfig,
                 titles: Mapping[str, str]) -> dict[str, list[dict[str, Any]]]:
    ok = frame[frame["ok"]]
    paired = []
    for metric, (column, row_filter) in PAIRED_METRICS.items():
        a = _per_scenario(ok, arm_a, column, row_filter)
        b = _per_scenario(ok, arm_b, column, row_filter)
        common = a.index.intersection(b.index)
        if common.empty:
            continue
        iv = stats.paired_diff_ci(a[common].to_numpy(), b[common].to_numpy(), resamples=cfg.resamples, seed=cfg.seed)
        paired.append({"model": model, "metric": metric, "arm_a": arm_a, "arm_b": arm_b, "diff": _r(iv.value),
                       "ci_low": _r(iv.ci_low), "ci_high": _r(iv.ci_high), "n_scenarios": iv.n})
    pairs = _pairs(ok, arm_a, arm_b, "correct")
    fixed = int(((pairs["a"] == 0) & (pairs["b"] == 1)).sum())
    broken = int(((pairs["a"] == 1) & (pairs["b"] == 0)).sum())
    both = int(((pairs["a"] == 1) & (pairs["b"] == 1)).sum())
    mcnemar = [{"model": model, "arm_a": arm_a, "arm_b": arm_b, "n_pairs": len(pairs), "both_correct": both,
                "fixed": fixed, "broken": broken, "both_wrong": len(pairs) - both - fixed - broken,
                "p_value": stats.mcnemar_exact(fixed, broken)}]
    rates = pairs.groupby("scenario_id")[["a", "b"]].mean()
    category = ok.drop_duplicates("scenario_id").set_index("scenario_id")["category"]
    flips = [
        {"model": model, "arm_a": arm_a, "arm_b": arm_b, "scenario_id": sid, "title": titles.get(sid, sid),
         "category": str(category.get(sid, "")), "kind": "fixed" if row.b > row.a else "broken",
         "a_correct_rate": _r(row.a), "b_correct_rate": _r(row.b)}
        for sid, row in rates.iterrows() if row.a != row.b
    ]
    flips.sort(key=lambda f: (f["kind"], -abs(f["b_correct_rate"] - f["a_correct_rate"]), f["scenario_id"]))
    lat = _pairs(ok, arm_a, arm_b, "latency_s")
    added = []
    if not lat.empty:
        diff = (lat["b"] - lat["a"]).to_numpy()
        p50 = stats.cluster_quantile_ci(diff, lat["scenario_id"].to_numpy(), 0.5, resamples=cfg.resamples, seed=cfg.seed)
        added.append({"model": model, "arm_a": arm_a, "arm_b": arm_b, "p50_s": _r(p50.value),
                      "p95_s": _r(float(np.quantile(diff, 0.95))),
                      "ci_low_p50": _r(p50.ci_low), "ci_high_p50": _r(p50.ci_high)})
    n_sc = int(rates.shape[0])
    discordance = (fixed + broken) / len(pairs) if len(pairs) else 0.0
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
    frame = scores_frame(scores)
    for (model, arm), g in sorted(frame.groupby(["model", "arm"]), key=lambda kv: kv[0]):
        result["metrics"] += _group_metrics(g, (model, arm, ALL), cfg)
        for category, gc in sorted(g.groupby("category"), key=lambda kv: kv[0]):
            result["metrics"] += _group_metrics(gc, (model, arm, str(category)), cfg)
        ok = g[g["ok"]]
        values = [round(float(v), 3) for v in ok["latency_s"]]
        result["latency"].append({"model": model, "arm": arm,
                                  "p50_s": _r(float(ok["latency_s"].quantile(0.5))) if values else None,
                                  "p95_s": _r(float(ok["latency_s"].quantile(0.95))) if values else None,
                                  "values_s": values})
    for model, g in sorted(frame.groupby("model"), key=lambda kv: kv[0]):
        arms = set(g["arm"])
        if cfg.treatment_arm not in arms:
            continue
        baselines = sorted(arms - {cfg.treatment_arm}, key=lambda a: (a != cfg.baseline_arm, a))
        for baseline in baselines:
            for key, rows in _comparisons(g, str(model), baseline, cfg.treatment_arm, cfg, titles).items():
                result[key] += rows
    return result
