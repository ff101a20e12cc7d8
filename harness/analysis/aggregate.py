"""Aggregate tables from sample scores: rates with intervals, paired comparisons, flips.

Input is a list of :class:`harness.score.scoring.SampleScores`; output is plain
JSON-ready lists of dicts, exactly the ``metrics``, ``paired``, ``mcnemar``,
``flips``, ``latency``, ``added_latency`` and ``min_detectable_effect`` blocks
of ``summary.json`` (documented in ``docs/summary-json.md``).

The unit of inference is the scenario (the conversation, for a conversation
file's probes ``conv-26/q017``): paired differences, the McNemar block, the
flip table and the minimum detectable effect all start from each scenario's
mean over its epochs in each arm, so repeating a deterministic run N times
changes no p-value and no interval. Each ``paired`` row carries the evidence
of :func:`harness.analysis.decision.paired_evidence` (the exact sign-flip
test over units with its p-value, the units up and down, and the interval
inverted from that test) that every decision reads; the per-arm ``metrics``
intervals are bootstraps clustered by scenario, shown and never decided on. Latency figures leave out cached samples (their latency is a replay
of the first call's).

Categories are whatever names the scenarios carry (built-in or declared by a
suite); each gets its rows. A suite that declares a protocol
(:class:`harness.scenarios.Protocol`) also gets rows of category ``headline``:
the scenarios its paper's headline counts (``headline=`` the ids), which the
verdict reads instead of ``all``. ``token_f1`` (informational, LoCoMo-style token
F1 against ``expect.f1_reference``) and ``bleu1`` are ``metrics`` rows only
when some sample has a reference, the ``session_*`` rows (LongMemEval's
session-level retrieval on LongMemEval's population: questions with a target
turn on the user side) and ``ours_session_*`` (the same on every question
with evidence sessions) only when some sample has them, and
``tool_latency_p50_s``/``tool_latency_p95_s`` only when some arm offered
tools, ``retained_after_forget_count`` (distinct forgotten facts that reached
the model at the probe, in its own scope) and ``answer_forgotten_rate``
(answers repeating one) only when some scenario asks to forget; ``task_averaged_accuracy`` (category ``all``) is the mean of the
categories' continuity accuracy. None of them is paired, tested or read by
the verdict. ``unlabelled_probes`` (the count of samples whose probe has no
gold, ``expect.unlabelled``: continuity n/a, left out of continuity and
over-abstention) is a row only when some sample is unlabelled.

The scores become one numpy array per column (NaN = not applicable) and every
group (model x arm x category) is a boolean mask over them: no pandas, so the
report neither pays its import nor its per-group overhead. Scenarios are coded
as integers in sorted id order once, and the bootstrap draws for a given number
of scenarios are cached in :mod:`harness.analysis.stats`, so each interval is a
``bincount`` and one matrix product.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from harness.analysis import decision, stats
from harness.analysis.pairwise import conversation_of
from harness.score import SampleScores, retained_count, session_figures, session_metric_order, task_averaged

ALL = "all"
#: The rows of the scenarios a suite's protocol counts in its headline (``Protocol.in_headline``); present only
#: when the suite declares a protocol, and then what the verdict reads instead of ``all``.
HEADLINE = "headline"
#: Prefix of the ``paired`` rows of a group the protocol reports apart (``apart:adversarial``, ``apart:abstention``).
APART = "apart:"
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
    "latency_s": ("live_latency_s", None),
}
#: Paired metrics with no natural bound on the difference (an interval the test cannot close is unbounded).
_UNBOUNDED_METRICS = frozenset({"prompt_tokens", "tool_result_tokens", "latency_s"})
_UNBOUNDED: tuple[float | None, float | None] = (None, None)
ONE_EPOCH_TEST = "exact McNemar (1 epoch, scenario pairs)"
_COUNT_METRICS = ("tool_calls", "model_calls", "prompt_tokens", "completion_tokens", "tool_result_tokens")
#: The write phase's costs (harness.run.sample.run_write_phase), apart from the probe's; 0 for arms without one.
WRITE_COUNT_METRICS = ("write_model_calls", "write_tool_calls", "write_prompt_tokens", "write_completion_tokens")


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
             s.completion_tokens, s.tool_result_tokens, num(s.cost_usd), s.latency_s, s.cached,
             num(None if s.status != "ok" or not s.tools_offered else s.tool_calls > 0),
             num(s.token_f1 if s.status == "ok" else None), num(s.bleu1 if s.status == "ok" else None),
             num(s.tool_latency_s if s.status == "ok" and s.tools_offered else None))
            for s in scores
        ]
        (model, arm, category, scenario, epoch, ok, abstain, correct, abstained, adherence, unsupported, leak,
         tool_leaks, precision, recall, tool_calls, model_calls, prompt, completion, tool_tokens, cost,
         latency, cached, tool_use, f1, bleu, tool_latency) = zip(*rows)
        self.model, self.arm, self.category = (np.array(c, dtype=object) for c in (model, arm, category))
        self.scenario_ids, self.sc = np.unique(np.array(scenario, dtype=object).astype(str), return_inverse=True)
        self.epoch = np.array(epoch, dtype=np.int64)
        self.cached = np.array(cached, dtype=bool)
        # A scenario has one category; the first sample's stands for it.
        first = np.unique(self.sc, return_index=True)[1]
        self.sc_category = np.array([str(c) for c in self.category[first]], dtype=object)
        #: The unit of inference of each scenario: its conversation (``conv-26/q017`` -> ``conv-26``), else itself.
        self.sc_unit = np.array([conversation_of(str(s)) for s in self.scenario_ids], dtype=object)
        self.ok, self.should_abstain = np.array(ok, dtype=bool), np.array(abstain, dtype=bool)
        self.error = (~self.ok).astype(np.float64)
        floats = {"correct": correct, "abstained": abstained, "adherence": adherence, "unsupported": unsupported,
                  "answer_leak": leak, "precision": precision, "recall": recall, "cost_usd": cost,
                  "latency_s": latency, "tool_use": tool_use, "tool_calls": tool_calls, "model_calls": model_calls,
                  "prompt_tokens": prompt, "completion_tokens": completion, "tool_result_tokens": tool_tokens,
                  "token_f1": f1, "bleu1": bleu, "tool_latency_s": tool_latency}
        self.values = {name: np.array(column, dtype=np.float64) for name, column in floats.items()}
        #: Session-level retrieval (``recall_any@5``, ``ndcg@10``, ...), one column per figure and population:
        #: ``session_*`` on LongMemEval's population, ``ours_session_*`` on ours.
        self.session_metrics = sorted({f"{prefix}session_{key}" for s in scores
                                       for prefix, figures in session_figures(s).items() for key in figures},
                                      key=session_metric_order)
        for name in self.session_metrics:
            prefix, figure = name.split("session_", 1)
            self.values[name] = np.array([num(session_figures(s)[prefix].get(figure)) for s in scores],
                                         dtype=np.float64)
        self.has_tool_latency = bool((~np.isnan(self.values["tool_latency_s"])).any())
        #: Some sample has a token F1 (its scenario sets ``expect.f1_reference``): only then is it a metric.
        self.has_f1 = bool((~np.isnan(self.values["token_f1"])).any())
        abst = self.values["abstained"]
        self.values["answered"] = np.where(np.isnan(abst), np.nan, 1.0 - abst)
        self.values["live_latency_s"] = np.where(self.cached, np.nan, self.values["latency_s"])
        self.tool_leaks = np.array(tool_leaks, dtype=np.int64)
        #: Probes without gold (``expect.unlabelled``): no continuity, no over-abstention; counted apart.
        self.unlabelled = np.array([s.outcome == "unlabelled" for s in scores], dtype=bool)
        self.has_unlabelled = bool(self.unlabelled.any())
        self.out_of_scope = np.array([len(s.out_of_scope_attempts) for s in scores], dtype=np.int64)
        # Forgetting (harness.score.forgetting): distinct forgotten facts that reached the model at the probe, and
        # whether the answer repeated one; apart from the tool leaks, which cross scope or policy.
        self.retained = np.array([retained_count(s.retained_after_forget) for s in scores], dtype=np.int64)
        self.values["answer_forgotten"] = np.array(
            [num(None if s.status != "ok" else bool(s.answer_forgotten)) for s in scores], dtype=np.float64)
        #: Some sample's scenario asks to forget (or a sample retained a forgotten fact): only then are they metrics.
        self.has_forgetting = any(s.forget_requests or s.forgotten_facts or s.retained_after_forget for s in scores)
        for name in WRITE_COUNT_METRICS:
            self.values[name] = np.array([getattr(s, name) for s in scores], dtype=np.float64)
        self.values["write_holds_answer"] = np.array([num(s.write_holds_answer) for s in scores], dtype=np.float64)


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
    add("over_abstention_rate", ok & ~cols.should_abstain & ~cols.unlabelled, "abstained")
    add("coverage", ok, "answered")
    add("selective_accuracy", ok & (cols.values["answered"] == 1.0), "correct")
    if cols.has_f1:  # informational, beside the exact checks; never paired nor in the verdict
        add("token_f1", ok, "token_f1")
        add("bleu1", ok, "bleu1")
    add("answer_leakage_rate", ok, "answer_leak")
    if cols.has_unlabelled:  # logged traffic: how many samples continuity_accuracy's n leaves out, and why
        out.append(_row(model, arm, category, "unlabelled_probes",
                        stats.Interval(int((ok & cols.unlabelled).sum()), None, None, 0), int(mask.sum())))
    leaks = int(cols.tool_leaks[mask].sum())
    out.append(_row(model, arm, category, "tool_leakage_count", stats.Interval(leaks, None, None, 0),
                    int(mask.sum())))
    if cols.has_forgetting:  # forgotten facts back at the probe: the memory's own failure, apart from tool leaks
        retained = int(cols.retained[mask].sum())
        out.append(_row(model, arm, category, "retained_after_forget_count", stats.Interval(retained, None, None, 0),
                        int(mask.sum())))
        add("answer_forgotten_rate", ok, "answer_forgotten")
    attempts = int(cols.out_of_scope[mask].sum())  # refused reads of other workspaces' items: an attack the gate held
    out.append(_row(model, arm, category, "out_of_scope_attempts", stats.Interval(attempts, None, None, 0),
                    int(mask.sum())))
    add("retrieved_precision", ok, "precision")
    add("retrieved_recall", ok, "recall")
    for name in cols.session_metrics:  # session-level retrieval, informational like token_f1
        add(name, ok, name)
    add("tool_use_rate", ok, "tool_use")
    out.append(_row(model, arm, category, "cached_samples",
                    stats.Interval(int(cols.cached[mask].sum()), None, None, 0), int(mask.sum())))
    for column in _COUNT_METRICS + WRITE_COUNT_METRICS:
        add(column, ok, column)
    add("write_holds_answer_rate", ok, "write_holds_answer")
    n_ok = len(ok_sc)
    cost = cols.values["cost_usd"][ok]
    known_cost = n_ok > 0 and not np.isnan(cost).any()
    if known_cost:
        add("cost_usd", ok, "cost_usd")
    else:
        out.append(_row(model, arm, category, "cost_usd", None, 0))
    live = ok & ~cols.cached
    latency, live_sc = cols.values["latency_s"][live], cols.sc[live]
    quantiles = (("latency_p50_s", 0.5), ("latency_p95_s", 0.95))
    intervals = (stats.cluster_quantile_cis(latency, live_sc, [q for _, q in quantiles], **boot) if len(latency)
                 else [None] * len(quantiles))
    for (metric, _), iv in zip(quantiles, intervals):
        out.append(_row(model, arm, category, metric, iv, len(latency)))
    if cols.has_tool_latency:  # the memory tools' own share of the latency, apart from the whole
        tool_latency = cols.values["tool_latency_s"][live]
        known = ~np.isnan(tool_latency)
        tool_latency, tool_sc = tool_latency[known], live_sc[known]
        intervals = (stats.cluster_quantile_cis(tool_latency, tool_sc, [q for _, q in quantiles], **boot)
                     if len(tool_latency) else [None] * len(quantiles))
        for (metric, _), iv in zip(quantiles, intervals):
            out.append(_row(model, arm, category, f"tool_{metric}", iv, len(tool_latency)))
    correct = cols.values["correct"][ok]
    n_correct = float(np.nansum(correct))
    tokens = cols.values["prompt_tokens"][ok] + cols.values["completion_tokens"][ok]
    for metric, numerator, usable in (("tokens_per_correct", tokens, n_ok > 0),
                                      ("cost_per_correct", cost, known_cost)):
        iv = stats.cluster_ratio_ci(numerator, correct, ok_sc, **boot) if usable and n_correct > 0 else None
        out.append(_row(model, arm, category, metric, iv, int(n_correct)))
    add("error_rate", mask, "error_rate")
    return out


def _task_averaged_row(cols: _Columns, mask: np.ndarray, model: str, arm: str) -> dict[str, Any]:
    """LongMemEval's task-averaged accuracy of one model x arm: the mean of its categories' continuity accuracy.

    Each category weighs the same, however many samples it has. Category
    ``all``, no interval; ``n`` counts the ok samples behind it, as the
    ``continuity_accuracy`` row of ``all`` does.
    """
    known = mask & cols.ok & ~np.isnan(cols.values["correct"])
    per_category = {str(c): float(cols.values["correct"][known & (cols.category == c)].mean())
                    for c in sorted(set(cols.category[known].tolist()))}
    n = int(known.sum())
    value = stats.Interval(task_averaged(per_category), None, None, n) if per_category else None
    return _row(model, arm, ALL, "task_averaged_accuracy", value, n)


def _scenario_sums(cols: _Columns, rows: np.ndarray, column: str) -> tuple[np.ndarray, np.ndarray]:
    """Per scenario code: (sum, count) of the column's known values over ``rows`` (count 0: scenario absent)."""
    values = cols.values[column][rows]
    known = ~np.isnan(values)
    codes = cols.sc[rows][known]
    size = len(cols.scenario_ids)
    return np.bincount(codes, weights=values[known], minlength=size), np.bincount(codes, minlength=size)


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


def _paired_rows(cols: _Columns, rows_a: np.ndarray, rows_b: np.ndarray, head: dict[str, Any],
                 cfg: AggregateConfig, masks: Mapping[str, np.ndarray]) -> list[dict[str, Any]]:
    """``paired`` rows: every metric over all scenarios first (category ``all``), then the protocol's groups
    (``masks``: ``headline`` and each ``apart:NAME``, masks over scenario codes), then per category."""
    filters = {None: np.ones_like(rows_a), "answerable": ~cols.should_abstain, "unanswerable": cols.should_abstain}
    by_category: dict[str, list[dict[str, Any]]] = {}
    for metric, (column, row_filter) in PAIRED_METRICS.items():
        sum_a, n_a = _scenario_sums(cols, rows_a & filters[row_filter], column)
        sum_b, n_b = _scenario_sums(cols, rows_b & filters[row_filter], column)
        common = (n_a > 0) & (n_b > 0)
        if not common.any():
            continue
        mean_a, mean_b = sum_a[common] / n_a[common], sum_b[common] / n_b[common]
        categories, units = cols.sc_category[common], cols.sc_unit[common]
        groups = [ALL, *masks, *sorted(set(categories.tolist()))]
        pick: Any  # a category mask, or every row
        for category in groups:
            if category in masks:
                pick = masks[category][common]
                if not pick.any():
                    continue
            else:
                pick = slice(None) if category == ALL else categories == category
            evidence = decision.paired_evidence(mean_a[pick], mean_b[pick], units[pick], alpha=cfg.alpha,
                                                bounds=_UNBOUNDED if metric in _UNBOUNDED_METRICS else (-1.0, 1.0),
                                                seed=cfg.seed)
            by_category.setdefault(category, []).append(
                {**head, "category": category, "metric": metric, **decision.evidence_fields(evidence)})
    return [row for category in sorted(by_category, key=lambda c: (c != ALL, c != HEADLINE, c not in masks, c))
            for row in by_category[category]]


def _comparisons(cols: _Columns, model_rows: np.ndarray, model: str, arm_a: str, arm_b: str, cfg: AggregateConfig,
                 titles: Mapping[str, str], masks: Mapping[str, np.ndarray]) -> dict[str, list[dict[str, Any]]]:
    boot = {"resamples": cfg.resamples, "seed": cfg.seed}
    head = {"model": model, "arm_a": arm_a, "arm_b": arm_b}
    ok = model_rows & cols.ok
    rows_a, rows_b = ok & (cols.arm == arm_a), ok & (cols.arm == arm_b)
    paired = _paired_rows(cols, rows_a, rows_b, head, cfg, masks)
    # Scenario means of correctness (the unit of the test, the flips and the MDE), compared exactly as
    # integer fractions hits / samples.
    sum_a, n_a = _scenario_sums(cols, rows_a, "correct")
    sum_b, n_b = _scenario_sums(cols, rows_b, "correct")
    present = np.flatnonzero((n_a > 0) & (n_b > 0))
    hits_a, hits_b = np.rint(sum_a[present]).astype(np.int64), np.rint(sum_b[present]).astype(np.int64)
    n_a, n_b = n_a[present].astype(np.int64), n_b[present].astype(np.int64)
    sign = np.sign(hits_b * n_a - hits_a * n_b)
    rate_a, rate_b = hits_a / n_a, hits_b / n_b
    fixed, broken = int((sign > 0).sum()), int((sign < 0).sum())
    both = int(((hits_a == n_a) & (hits_b == n_b)).sum())
    neither = int(((hits_a == 0) & (hits_b == 0)).sum())
    if not len(present):
        result = stats.PairedTest(1.0, "none (no scenario ran in both arms)")
    elif (n_a == 1).all() and (n_b == 1).all():
        result = stats.PairedTest(stats.mcnemar_exact(fixed, broken), ONE_EPOCH_TEST)
    else:
        diffs = [Fraction(int(hb), int(nb)) - Fraction(int(ha), int(nh))
                 for ha, nh, hb, nb in zip(hits_a, n_a, hits_b, n_b)]
        result = stats.sign_flip_test(diffs, seed=cfg.seed)
    mcnemar = [{**head, "n_pairs": len(present), "both_correct": both, "fixed": fixed, "broken": broken,
                "both_wrong": neither, "tied": len(present) - both - fixed - broken - neither,
                "p_value": result.p_value, "test": result.test, "unit": "scenario"}]
    flips: list[dict[str, Any]] = []
    for code, ra, rb, s in zip(present.tolist(), rate_a.tolist(), rate_b.tolist(), sign.tolist()):
        if s == 0:
            continue
        sid = str(cols.scenario_ids[code])
        flips.append({**head, "scenario_id": sid, "title": titles.get(sid, sid),
                      "category": str(cols.sc_category[code]), "kind": "fixed" if s > 0 else "broken",
                      "a_correct_rate": _r(ra), "b_correct_rate": _r(rb)})
    flips.sort(key=lambda f: (f["kind"], -abs(f["b_correct_rate"] - f["a_correct_rate"]), f["scenario_id"]))
    lat_sc, lat_a, lat_b = _pairs(cols, rows_a, rows_b, "live_latency_s")
    added = []
    if len(lat_sc):
        diff = lat_b - lat_a
        p50 = stats.cluster_quantile_ci(diff, lat_sc, 0.5, **boot)
        added.append({**head, "p50_s": _r(p50.value), "p95_s": _r(stats.quantile(diff, 0.95)),
                      "ci_low_p50": _r(p50.ci_low), "ci_high_p50": _r(p50.ci_high)})
    n_sc = len(present)
    # The sign-flip test's null variance per scenario is d_i^2; with 0/1 means it is McNemar's discordant share.
    discordance = float(np.mean((rate_b - rate_a) ** 2)) if n_sc else 0.0
    mde = [{**head, "n_scenarios": n_sc, "discordance": _r(discordance),
            "mde": _r(stats.min_detectable_effect(n_sc, discordance, alpha=cfg.alpha, power=cfg.power))}]
    return {"paired": paired, "mcnemar": mcnemar, "flips": flips, "added_latency": added,
            "min_detectable_effect": mde}


def aggregate(scores: Sequence[SampleScores], *, titles: Mapping[str, str] | None = None,
              config: AggregateConfig | None = None,
              headline: Collection[str] | None = None,
              apart: Mapping[str, Collection[str]] | None = None) -> dict[str, list[dict[str, Any]]]:
    """Every aggregate block of ``summary.json`` from the scored samples.

    Args:
        scores: one entry per sample (error samples included; they count in error_rate only).
        titles: scenario id -> title, for the flip table.
        config: arms to compare and bootstrap settings.
        headline: the scenario ids the suite's protocol counts in its headline; given, ``metrics`` and
            ``paired`` get rows of category ``headline`` over exactly these (None: no such rows).
        apart: the groups the protocol reports apart (``adversarial``: its scenario ids; ``abstention``: the
            abstention probes); each gets ``paired`` rows of category ``apart:NAME``, which the verdict reads.

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
    in_headline = None
    masks: dict[str, np.ndarray] = {}
    for name, ids in ([(HEADLINE, headline)] if headline is not None else []) + [
            (APART + group, ids) for group, ids in sorted((apart or {}).items())]:
        chosen = frozenset(ids)
        masks[name] = np.array([str(sid) in chosen for sid in cols.scenario_ids], dtype=bool)
    if headline is not None:
        in_headline = masks[HEADLINE][cols.sc]
    for model in sorted(set(cols.model.tolist())):
        model_rows = cols.model == model
        model_arms = set(cols.arm[model_rows].tolist())
        for arm in sorted(model_arms):
            mask = model_rows & (cols.arm == arm)
            result["metrics"] += _group_metrics(cols, mask, (model, arm, ALL), cfg)
            if in_headline is not None:
                result["metrics"] += _group_metrics(cols, mask & in_headline, (model, arm, HEADLINE), cfg)
            for category in sorted(set(cols.category[mask].tolist())):
                result["metrics"] += _group_metrics(cols, mask & (cols.category == category),
                                                    (model, arm, str(category)), cfg)
            result["metrics"].append(_task_averaged_row(cols, mask, model, arm))
            latency = cols.values["latency_s"][mask & cols.ok & ~cols.cached]
            result["latency"].append({"model": model, "arm": arm, "p50_s": _r(stats.quantile(latency, 0.5)),
                                      "p95_s": _r(stats.quantile(latency, 0.95)),
                                      "values_s": [round(v, 3) for v in latency.tolist()]})
        if cfg.treatment_arm not in model_arms:
            continue
        baselines = sorted(model_arms - {cfg.treatment_arm}, key=lambda a: (a != cfg.baseline_arm, a))
        for baseline in baselines:
            for key, rows in _comparisons(cols, model_rows, str(model), baseline, cfg.treatment_arm, cfg,
                                          titles, masks).items():
                result[key] += rows
    return result
