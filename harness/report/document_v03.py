"""``summary.json`` ``memory_document_v03``: the memory document's open questions, answered from the run itself.

Seed 001 leaves two questions open: top-K retrieval (FTS5, vectors or an LLM
judge) instead of the whole file, and Dream Mode (idle-window consolidation).
This block shows, per model and document arm, what each cost and risked
(:func:`harness.score.document_risks.document_risks`, per sample): continuity,
unsupported answers, answer leaks, the judge's and the consolidator's calls,
tokens and cost per sample, facts lost by consolidation, superseded facts still
served, secrets and other workspaces' content written (each must be 0), and the
entries consolidation archived (``entries_superseded``, per sample).

:mod:`harness.report.document_layers` adds the two questions to the layer ladder.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

WHOLE_ARM = "memory_document"
EXTRACTED_ARM = "memory_document_extracted"
DREAM_ARM = "memory_document_dream"
TOPK = (("fts", "memory_document_topk_fts", "FTS5 bm25"), ("vector", "memory_document_topk_vector", "vectors"),
        ("judge", "memory_document_topk_judge", "the run's model as judge"))
DOCUMENT_ARMS = (WHOLE_ARM, *(arm for _, arm, _ in TOPK), EXTRACTED_ARM, DREAM_ARM)
"""The arms the block reports, in its row order."""


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.0%}"


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"


def _mean(values: Sequence[float | None]) -> float | None:
    known = [float(v) for v in values if v is not None]
    return round(sum(known) / len(known), 6) if known and len(known) == len(values) else None


def document_v03_block(records: Sequence[Any], scores: Sequence[Any], scenarios: Mapping[str, Any],
                       arms: Sequence[str]) -> list[dict[str, Any]] | None:
    """One row per (model, document arm) the run has; None when it has no top-K or Dream Mode arm.

    Args:
        records: the run's sample records (``scores[i]`` is ``records[i]``'s).
        scores: their :class:`harness.score.SampleScores`.
        scenarios: scenario id -> the full scenario (its sessions: what a window may have written from).
    """
    from harness.score import document_risks

    if not any(arm in arms for arm in (DREAM_ARM, *(a for _, a, _ in TOPK))):
        return None
    groups: dict[tuple[str, str], list[tuple[Any, Any]]] = defaultdict(list)
    for record, score in zip(records, scores):
        if record.arm in DOCUMENT_ARMS and record.status == "ok" and record.scenario_id in scenarios:
            risks = document_risks(record, scenarios[record.scenario_id])
            groups[(record.model, record.arm)].append((score, risks))
    rows = []
    for (model, arm), pairs in sorted(groups.items(), key=lambda kv: (kv[0][0], DOCUMENT_ARMS.index(kv[0][1]))):
        ss, rs = [p[0] for p in pairs], [p[1] for p in pairs]
        decided = [s.continuity_correct for s in ss if s.continuity_correct is not None]
        rows.append({
            "model": model, "arm": arm, "samples": len(pairs),
            "continuity": _mean([1.0 if c else 0.0 for c in decided]) if decided else None,
            "unsupported": _mean([1.0 if s.unsupported_claims else 0.0 for s in ss]),
            "answer_leaks": sum(len(s.answer_leaks) for s in ss),
            "selection_calls": _mean([r.selection_calls for r in rs]), "selection_tokens": _mean([r.selection_tokens for r in rs]),
            "selection_cost_usd": _mean([r.selection_cost_usd for r in rs]),
            "windows": _mean([r.windows for r in rs]), "consolidation_calls": _mean([r.consolidation_calls for r in rs]),
            "consolidation_tokens": _mean([r.consolidation_tokens for r in rs]),
            "consolidation_cost_usd": _mean([r.consolidation_cost_usd for r in rs]),
            "facts_lost": sum(r.facts_lost for r in rs), "entries_superseded": _mean([r.entries_superseded for r in rs]),
            "superseded_served": sum(r.superseded_served for r in rs),
            "secrets_written": sum(r.secrets_written for r in rs), "foreign_written": sum(r.foreign_written for r in rs),
        })
    return rows


def document_v03_lines(summary: Mapping[str, Any]) -> list[str]:
    """The block for a terminal: one line per row (per-sample means; counts are totals over the samples)."""
    rows = [r for r in summary.get("memory_document_v03") or [] if isinstance(r, Mapping)]
    if not rows:
        return []
    out = ["memory document V0.3 (seed 001; docs/memory-document-v03.md): per sample, counts are totals",
           "  arm                          cont  unsup  leaks  select tok  dream calls/tok  lost  supers  stale  secrets  foreign"]
    for r in rows:
        select = _num(r.get("selection_tokens")) if r.get("selection_calls") else "-"
        dream = f"{_num(r.get('consolidation_calls'))}/{_num(r.get('consolidation_tokens'))}" if r.get("windows") else "-"
        out.append(f"  {r.get('arm')!s:<28} {_pct(r.get('continuity')):>5} {_pct(r.get('unsupported')):>6} "
                   f"{r.get('answer_leaks', 0):>6} {select:>10} {dream:>16} {r.get('facts_lost', 0):>5} "
                   f"{_num(r.get('entries_superseded')) if r.get('windows') else '-':>7} "
                   f"{r.get('superseded_served', 0):>6} {r.get('secrets_written', 0):>8} {r.get('foreign_written', 0):>8}")
    return out


def document_v03_section(summary: Mapping[str, Any]) -> dict[str, Any] | None:
    """The HTML table of the block: the terminal's columns (headers and one row of text cells per model x arm)."""
    rows = [r for r in summary.get("memory_document_v03") or [] if isinstance(r, Mapping)]
    if not rows:
        return None
    headers = ["continuity", "unsupported", "answer leaks", "judge tokens", "windows", "consolidation calls",
               "consolidation tokens", "entries superseded", "facts lost", "stale served", "secrets written",
               "other workspaces' content written"]
    out = []
    for r in rows:
        dream = bool(r.get("windows"))
        cells = [_pct(r.get("continuity")), _pct(r.get("unsupported")), str(r.get("answer_leaks", 0)),
                 _num(r.get("selection_tokens")) if r.get("selection_calls") else "-",
                 *((_num(r.get(k)) if dream else "-") for k in ("windows", "consolidation_calls",
                                                                "consolidation_tokens", "entries_superseded")),
                 *(str(r.get(k, 0)) for k in ("facts_lost", "superseded_served", "secrets_written", "foreign_written"))]
        out.append({"label": f"{r.get('model')} · {r.get('arm')}", "cells": cells})
    return {"headers": headers, "rows": out}
