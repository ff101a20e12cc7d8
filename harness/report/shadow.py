"""The ``shadow`` arm's figures: what recall would have disclosed on the run's probes, per workspace and overall.

Read from the records' ``shadow`` field (:class:`harness.records.ShadowSearchLog`,
written by :mod:`harness.memory_systems.shadow`); nothing is searched again.
Each probe counts once per model (its lowest epoch: the shadow search is a
pure function of the probe and the store, the same in every epoch). Per
model, overall and per probe workspace (``(none)`` for a probe without one):

- ``probes``, ``cold`` (the policy denied reads: the search was refused
  without reading storage, as recall would have had no tools);
- ``surfaced_share``: probes where recall's search would have disclosed at
  least one item, of all probes (a cold probe surfaces nothing);
- ``items_per_probe``, ``truncated`` (searches the result budget cut) and
  ``omitted_results``;
- ``result_chars`` / ``result_tokens``: what the search results would have
  added to recall's prompt, in total and per probe (tokens in the sample
  model's tokenizer);
- ``latency_p50_ms`` / ``latency_p95_ms`` of the searches that ran (the
  harness's own lower quantile, :func:`harness.analysis.quantile`);
- ``scope_violations``: disclosures the probe's scope forbids, found by
  reading each disclosed item back from the store. Must be 0: anything else
  is a Host defect, and leads the report's headlines.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness.records import SampleRecord
from harness.scenarios import Scenario

NO_WORKSPACE = "(none)"


def shadow_figures(logs: Sequence[Any]) -> dict[str, Any]:
    """The figures of one group of shadow searches (see the module docstring for each key)."""
    from harness.analysis import quantile

    n = len(logs)
    ran = [log.elapsed_s * 1000.0 for log in logs if log.status == "ok"]
    items = sum(len(log.disclosed_item_ids) for log in logs)
    chars = sum(log.result_chars for log in logs if log.status == "ok")
    tokens = sum(log.result_tokens for log in logs if log.status == "ok")
    violations = [v for log in logs for v in log.scope_violations]

    def per(total: float) -> float | None:
        return round(total / n, 4) if n else None

    p50, p95 = quantile(ran, 0.5), quantile(ran, 0.95)
    return {
        "probes": n,
        "cold": sum(not log.admitted for log in logs),
        "searched": len(ran),
        "surfaced": sum(bool(log.disclosed_item_ids) for log in logs),
        "surfaced_share": per(sum(bool(log.disclosed_item_ids) for log in logs)),
        "items_per_probe": per(items),
        "truncated": sum(log.truncated for log in logs),
        "omitted_results": sum(log.omitted_count for log in logs),
        "result_chars": chars,
        "result_chars_per_probe": per(chars),
        "result_tokens": tokens,
        "result_tokens_per_probe": per(tokens),
        "latency_p50_ms": None if p50 is None else round(p50, 3),
        "latency_p95_ms": None if p95 is None else round(p95, 3),
        "scope_violations": len(violations),
        "violations": violations[:20],
    }


def shadow_block(records: Sequence[SampleRecord], scenarios: Mapping[str, Scenario]) -> dict[str, Any] | None:
    """``summary.json``'s ``shadow``: per model, the figures overall and per workspace; None without shadow records."""
    chosen: dict[tuple[str, str], SampleRecord] = {}
    for record in records:
        if record.shadow is None:
            continue
        key = (record.model, record.scenario_id)
        if key not in chosen or record.epoch < chosen[key].epoch:
            chosen[key] = record
    if not chosen:
        return None
    models: list[dict[str, Any]] = []
    for model in sorted({model for model, _ in chosen}):
        mine = [r for (m, _), r in sorted(chosen.items()) if m == model]
        by_workspace: dict[str, list[Any]] = {}
        for record in mine:
            scenario = scenarios.get(record.scenario_id)
            workspace = scenario.probe.workspace if scenario is not None else None
            by_workspace.setdefault(workspace or NO_WORKSPACE, []).append(record.shadow)
        models.append({
            "model": model,
            "overall": shadow_figures([r.shadow for r in mine]),
            "workspaces": [{"workspace": ws, **shadow_figures(logs)} for ws, logs in sorted(by_workspace.items())],
        })
    return {"models": models, "scope_violations": sum(m["overall"]["scope_violations"] for m in models),
            "search": {"terms": "the probe message's content words and adjacent pairs", "match": "exact",
                       "limit": "the tool's default"}}


def shadow_headline(block: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A leading headline when the shadow search saw a scope violation (a Host defect), else None."""
    if not block or not block.get("scope_violations"):
        return None
    return {"code": "shadow_scope_violation", "lead": True,
            "text": f"shadow: {block['scope_violations']} scope violation(s) in what recall's search would have "
                    "disclosed: a Host defect (must be 0); see summary.json shadow.models[].violations"}


#: (key of a figures dict, column header), in table order.
COLUMNS = (
    ("probes", "probes"), ("cold", "cold (denied)"), ("surfaced_share", "surfaced ≥1 item"),
    ("items_per_probe", "items / probe"), ("truncated", "budget truncations"),
    ("result_chars_per_probe", "chars / probe"), ("result_tokens_per_probe", "tokens / probe"),
    ("latency_p50_ms", "search p50 ms"), ("latency_p95_ms", "search p95 ms"),
    ("scope_violations", "scope violations"),
)


def _cell(key: str, value: Any) -> str:
    from harness.report import formatting as fmt

    if key == "surfaced_share":
        return "—" if not fmt.is_number(value) else f"{value:.0%}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return fmt.num(value)


def shadow_section(summary: Mapping[str, Any]) -> dict[str, Any] | None:
    """The report section's tables (one per model: overall, then each workspace), or None without a shadow block."""
    block = summary.get("shadow")
    if not isinstance(block, Mapping) or not block.get("models"):
        return None
    tables = []
    for entry in block["models"]:
        rows = [{"label": "all workspaces", "cells": [_cell(k, entry["overall"].get(k)) for k, _ in COLUMNS]}]
        rows += [{"label": ws["workspace"], "cells": [_cell(k, ws.get(k)) for k, _ in COLUMNS]}
                 for ws in entry.get("workspaces") or []]
        tables.append({"caption": entry["model"], "rows": rows})
    return {"headers": [h for _, h in COLUMNS], "tables": tables, "scope_violations": block.get("scope_violations", 0)}


def shadow_terminal_lines(block: Mapping[str, Any] | None) -> list[str]:
    """One line per model for the terminal (within 80 columns), or none without a shadow block."""
    if not block:
        return []
    lines = []
    for entry in block.get("models") or []:
        o = entry["overall"]
        share = "—" if o["surfaced_share"] is None else f"{o['surfaced_share']:.0%}"
        p95 = "—" if o["latency_p95_ms"] is None else f"{o['latency_p95_ms']:.1f}"
        lines.append(f"shadow ({entry['model']}): recall would surface items in {o['surfaced']}/{o['probes']} "
                     f"probes ({share})")
        lines.append(f"  {o['items_per_probe'] or 0:.2f} items/probe, +{o['result_tokens_per_probe'] or 0:.0f} "
                     f"tokens/probe, search p95 {p95} ms, {o['scope_violations']} scope violations")
    return lines
