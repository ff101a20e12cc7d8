"""The report's systems table: every arm side by side on the same questions, budget and statistics.

One row per model x arm (``summary.json`` ``systems``): continuity accuracy
with its interval, the unsupported-claim rate, leakage (canaries in answers,
and in tool results: a Host bug), the retrieved items' recall@k and precision
against the scenario's relevant items, tokens per sample at the probe and in
the write phase, the latency of each memory-search call (p50/p95 over calls,
intervals clustered by scenario), cost per sample, and whether the system saw
true session times (with its temporal-category accuracy beside it: a system
that stamps writes "now" is read for what it is), what building and
embedding each system's memory cost per sample (:mod:`harness.report.accounting`),
and, where a scenario asks to forget, each arm's forgotten facts back at the probe
and answers repeating one (the verdict's ``no_retained_after_forget`` judges the
treatment arm; this column shows every arm's).

Figures come from the aggregate ``metrics`` rows (category ``all``; continuity
from ``headline`` when the suite has a protocol, as the verdict and the arm
table read it, with ``continuity_over`` saying which), so the table never
disagrees with the metrics table; only the per-call search latency
is read from the records, since ``metrics`` keeps latency per sample.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from harness.report import formatting as fmt
from harness.report.accounting import ACCOUNTING_COLUMNS, accounting_by_arm, accounting_cells

__all__ = ["SEARCH_TOOLS", "SYSTEM_COLUMNS", "TEMPORAL_CATEGORY", "is_search_tool", "systems_block", "systems_lines",
           "systems_section"]

#: Probe tools that retrieve by a query: the Host's ``memory_search``, named memory's ``recall``; a plug-in's
#: tool counts when its name ends in ``search`` (``note_search``). ``memory_get`` reads one id and is left out.
SEARCH_TOOLS = frozenset({"memory_search", "recall"})
#: The aggregate's category of a suite protocol's headline (``harness.analysis.HEADLINE``): continuity is read there.
HEADLINE_CATEGORY = "headline"
#: The category whose accuracy sits beside "sees session times".
TEMPORAL_CATEGORY = "temporal"
#: (key of a ``systems`` row, column header), in table order.
SYSTEM_COLUMNS = (
    ("continuity", "continuity [95% CI]"),
    ("unsupported_claim_rate", "unsupported"),
    ("leakage", "leakage answer / tool"),
    ("retrieved_recall", "recall@k"),
    ("retrieved_precision", "precision"),
    ("tokens", "tokens: probe / write"),
    ("search_latency", "search p50 / p95 ms"),
    ("cost_usd", "cost / sample"),
    ("session_times", "session times (temporal)"),
    ("forgetting", "forgotten: retained / said"),
    *ACCOUNTING_COLUMNS,  # ingest and embedding cost per sample (harness.report.accounting)
)


def is_search_tool(name: str) -> bool:
    """Whether a probe tool call is a memory search (see :data:`SEARCH_TOOLS`)."""
    return name in SEARCH_TOOLS or name.endswith("search")


def _metric_index(metrics: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str, str, str], Mapping[str, Any]]:
    return {(str(r.get("model")), str(r.get("arm")), str(r.get("category")), str(r.get("metric"))): r
            for r in metrics if isinstance(r, Mapping)}


def _search_latencies(records: Iterable[Any]) -> dict[tuple[str, str], tuple[list[float], list[str]]]:
    """(model, arm) -> (elapsed seconds of every memory-search call of an ok probe, the scenario of each)."""
    out: dict[tuple[str, str], tuple[list[float], list[str]]] = {}
    for record in records:
        if record.status != "ok":
            continue
        for call in record.tool_calls:
            if is_search_tool(call.name):
                values, clusters = out.setdefault((record.model, record.arm), ([], []))
                values.append(float(call.elapsed_s))
                clusters.append(record.scenario_id)
    return out


def _value(index: Mapping[tuple[str, str, str, str], Mapping[str, Any]], key: tuple[str, str, str, str],
           *, interval: bool = False) -> Any:
    row = index.get(key)
    if row is None:
        return None
    if interval:
        return {"value": row.get("value"), "ci_low": row.get("ci_low"), "ci_high": row.get("ci_high"), "n": row.get("n")}
    return row.get("value")


def _sum(a: Any, b: Any) -> float | None:
    known = [v for v in (a, b) if fmt.is_number(v)]
    return round(sum(known), 1) if known else None


def systems_block(manifest: Any, records: Sequence[Any], metrics: Sequence[Mapping[str, Any]],
                  uncredited: Mapping[tuple[str, str], int] | None = None) -> list[dict[str, Any]]:
    """``summary.json`` ``systems``: one row per model x arm of the run, in the run's arm order.

    Args:
        manifest: the run's :class:`harness.records.RunManifest` (arms, models, fingerprints, budget).
        records: the run's sample records (for the per-call search latency).
        metrics: the aggregate ``metrics`` rows.
        uncredited: (model, arm) -> ids its tools reported and were not credited with (beyond top_k, not shown:
            :mod:`harness.score.credit`); recall@k and precision count only the credited ones.
    """
    from harness.analysis import cluster_quantile_cis

    index = _metric_index(metrics)
    latencies = _search_latencies(records)
    accounting = accounting_by_arm(records)
    fingerprints = getattr(manifest, "arm_fingerprints", None) or {}
    budget = manifest.parameters.get("retrieval_budget") if isinstance(manifest.parameters, dict) else None
    present = {(str(r.get("model")), str(r.get("arm"))) for r in metrics if isinstance(r, Mapping)}
    rows = []
    for model in manifest.models:
        for arm in manifest.arms:
            if (model, arm) not in present:
                continue
            key = lambda metric, category="all": (model, arm, category, metric)  # noqa: E731, B023 - used within this iteration
            fingerprint = fingerprints.get(arm)
            values, clusters = latencies.get((model, arm), ([], []))
            p50 = p95 = None
            if values:
                p50, p95 = cluster_quantile_cis(values, clusters, (0.5, 0.95))
            temporal = _value(index, key("continuity_accuracy", TEMPORAL_CATEGORY), interval=True)
            headline = _value(index, key("continuity_accuracy", HEADLINE_CATEGORY), interval=True)
            rows.append({
                "model": model, "arm": arm,
                "system": getattr(fingerprint, "system", None), "version": getattr(fingerprint, "version", None),
                "config_hash": getattr(fingerprint, "config_hash", None),
                "embedder": getattr(fingerprint, "embedder", None),
                "retrieval_budget": getattr(fingerprint, "retrieval_budget", None) or budget,
                # a suite with a protocol: the headline's continuity, as the verdict decides it (LoCoMo's
                # adversarial category, where an arm that sees nothing wins by abstaining, is reported apart)
                "continuity": headline if headline is not None
                else _value(index, key("continuity_accuracy"), interval=True),
                "continuity_over": HEADLINE_CATEGORY if headline is not None else "all",
                "unsupported_claim_rate": _value(index, key("unsupported_claim_rate")),
                "answer_leakage_rate": _value(index, key("answer_leakage_rate")),
                "tool_leakage_count": _value(index, key("tool_leakage_count")),
                "retrieved_recall": _value(index, key("retrieved_recall")),
                "retrieved_precision": _value(index, key("retrieved_precision")),
                "uncredited_ids": (uncredited or {}).get((model, arm), 0),
                "probe_tokens": _sum(_value(index, key("prompt_tokens")), _value(index, key("completion_tokens"))),
                "write_tokens": _sum(_value(index, key("write_prompt_tokens")),
                                     _value(index, key("write_completion_tokens"))),
                "search_calls": len(values),
                "search_latency_p50_ms": _ms(p50), "search_latency_p95_ms": _ms(p95),
                "search_latency_p50_ci_ms": _ms_ci(p50),
                "cost_usd": _value(index, key("cost_usd")),
                "sees_session_times": None if fingerprint is None else bool(fingerprint.sees_session_times),
                "temporal_continuity": temporal,
                # only where a scenario asks to forget: forgotten facts back at the probe, and answers repeating one
                "retained_after_forget": _value(index, key("retained_after_forget_count")),
                "forgotten_in_answers": _forgotten_answers(index.get(key("answer_forgotten_rate"))),
                **accounting.get((model, arm), {}),
            })  # fmt: skip
    return rows


def _forgotten_answers(row: Mapping[str, Any] | None) -> int | None:
    """Answers that repeated a forgotten fact: the ``answer_forgotten_rate`` row's rate times its n."""
    if row is None or not fmt.is_number(row.get("value")) or not fmt.is_number(row.get("n")):
        return None
    return round(row["value"] * row["n"])


def _ms(interval: Any) -> float | None:
    return None if interval is None or interval.value is None else round(interval.value * 1000, 3)


def _ms_ci(interval: Any) -> list[float] | None:
    if interval is None or interval.ci_low is None or interval.ci_high is None:
        return None
    return [round(interval.ci_low * 1000, 3), round(interval.ci_high * 1000, 3)]


def _interval_text(block: Any) -> str:
    if not isinstance(block, Mapping) or not fmt.is_number(block.get("value")):
        return "—"
    low, high = block.get("ci_low"), block.get("ci_high")
    if fmt.is_number(low) and fmt.is_number(high):
        return f"{_pct(block['value'])} [{_pct(low)}, {_pct(high)}]"
    return _pct(block["value"])


def _cells(row: Mapping[str, Any]) -> dict[str, str]:
    """Every column of one ``systems`` row as display text (``—`` where the figure does not apply)."""
    leak_tool = row.get("tool_leakage_count")
    tool_text = f"{leak_tool:g}" if fmt.is_number(leak_tool) else "—"
    probe, write = row.get("probe_tokens"), row.get("write_tokens")
    p50, p95 = row.get("search_latency_p50_ms"), row.get("search_latency_p95_ms")
    sees = row.get("sees_session_times")
    temporal = _interval_text(row.get("temporal_continuity"))
    times = "—" if sees is None else ("yes" if sees else "NO: writes stamped now")
    cost = row.get("cost_usd")
    return {
        "continuity": _interval_text(row.get("continuity")),
        "unsupported_claim_rate": _pct(row.get("unsupported_claim_rate")),
        "leakage": f"{_pct(row.get('answer_leakage_rate'))} / {tool_text}",
        "retrieved_recall": _pct(row.get("retrieved_recall")),
        "retrieved_precision": _pct(row.get("retrieved_precision")),
        "tokens": f"{_count(probe)} / {_count(write)}",
        "search_latency": "—" if p50 is None else f"{p50:.2f} / {p95:.2f}",
        "cost_usd": f"${cost:.4f}" if fmt.is_number(cost) else "—",
        "session_times": times if temporal == "—" else f"{times} ({temporal})",
        "forgetting": "—" if row.get("retained_after_forget") is None
        else f"{_count(row.get('retained_after_forget'))} / {_count(row.get('forgotten_in_answers'))}",
        **accounting_cells(row),
    }


def _pct(value: Any) -> str:
    """A rate as a whole percentage (``0.267`` -> ``27%``); ``—`` when it does not apply."""
    return f"{value * 100:.0f}%" if fmt.is_number(value) else "—"


def _count(value: Any) -> str:
    return f"{value:,.0f}" if fmt.is_number(value) else "—"


def systems_section(summary: Mapping[str, Any]) -> dict[str, Any] | None:
    """The HTML section's rows (``{"columns", "budget", "rows": [{"model", "arm", "cells"}]}``), or None without rows."""
    from harness.report.contracts import contracts_section

    rows = [r for r in summary.get("systems") or [] if isinstance(r, Mapping)]
    if not rows:
        return None
    budget = _dict((summary.get("run") or {}).get("parameters")).get("retrieval_budget")
    columns = [(key, header) for key, header in SYSTEM_COLUMNS  # forgetting only where a scenario asks to forget
               if key != "forgetting" or any(r.get("retained_after_forget") is not None for r in rows)]
    return {
        "columns": [header for _, header in columns],
        "budget": _budget_text(budget), "contracts": contracts_section(summary),  # the terms beside the table
        "rows": [{"model": str(r.get("model")), "arm": str(r.get("arm")),
                  "system": r.get("system") or "—", "cells": [_cells(r)[key] for key, _ in columns]}
                 for r in rows],
    }


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _budget_text(budget: Any) -> str:
    if isinstance(budget, Mapping) and "top_k" in budget and "chars" in budget:
        return f"top_k={budget['top_k']},chars={budget['chars']}"
    return "not recorded (top_k=10,chars=4000)"


#: The terminal's compact columns: (key of a cell, header, width).
_TERMINAL = (("continuity", "continuity [CI]", 21), ("unsupported_claim_rate", "unsup", 6),
             ("retrieved_recall", "rec@k", 6), ("search_latency", "search ms", 12))


def systems_lines(summary: Mapping[str, Any], width: int = 80) -> list[str]:
    """The systems table for a terminal, only the columns that fit ``width`` (the page has them all)."""
    rows = [r for r in summary.get("systems") or [] if isinstance(r, Mapping)]
    if not rows:
        return []
    arm_width = max(len("arm"), *(len(str(r.get("arm"))) for r in rows))
    columns: list[tuple[str, str, int]] = []
    used = arm_width
    for column in _TERMINAL:
        if used + 2 + column[2] > width:
            break
        columns.append(column)
        used += 2 + column[2]
    budget = _budget_text(_dict(_dict(summary.get("run")).get("parameters")).get("retrieval_budget"))
    over = "; continuity over the headline" if any(r.get("continuity_over") == HEADLINE_CATEGORY for r in rows) else ""
    lines = [f"systems, retrieval budget {budget}{over}:"]
    lines.append("  ".join([f"{'arm':<{arm_width}}", *(f"{h:>{w}}" for _, h, w in columns)]))
    for row in rows:
        cells = _cells(row)
        lines.append("  ".join([f"{str(row.get('arm')):<{arm_width}}", *(f"{cells[k]:>{w}}" for k, _, w in columns)]))
    over_credited = [f"{r.get('arm')} {r['uncredited_ids']}" for r in rows if fmt.is_number(r.get("uncredited_ids"))
                     and r["uncredited_ids"] > 0]
    if over_credited:  # a system that reported more than it showed at k: its recall@k counts only what it did
        lines.append(f"  ids reported but not credited (beyond top_k, or not shown): {', '.join(over_credited)}")
    return lines
