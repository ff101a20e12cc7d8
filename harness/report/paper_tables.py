"""The report's "papers' metrics" tables: per model and arm, a row per category with our continuity accuracy
beside the published benchmarks' own figures, then latency and tokens.

Columns, each shown only when some row has a value: continuity accuracy
(ours), LoCoMo's stemmed token F1 and BLEU-1, LongMemEval's session-level
Recall@k (``recall_all``: every evidence session in the top k) and NDCG@k
on LongMemEval's population (questions with a target turn on the user side),
then the same on ours (every question with an evidence session),
latency p50/p95 of the whole sample, the memory tools' own latency p50/p95,
and prompt and completion tokens per sample. The ``all`` row comes first; its
caption gives LongMemEval's task-averaged accuracy. A pure function of
``summary.json``; the rows are keyed on the samples' categories, in name order.
"""

from __future__ import annotations

from typing import Any

from harness.report import formatting as fmt
from harness.score import SESSION_KS

ALL = "all"
#: (metric, column heading), in the order shown.
PAPER_COLUMNS: tuple[tuple[str, str], ...] = (
    ("continuity_accuracy", "continuity (ours)"),
    ("token_f1", "F1 (LoCoMo)"),
    ("bleu1", "BLEU-1 (LoCoMo)"),
    *((metric, heading) for k in SESSION_KS for metric, heading in (
        (f"session_recall_all@{k}", f"Recall@{k} (LongMemEval)"), (f"session_ndcg@{k}", f"NDCG@{k} (LongMemEval)"))),
    *((metric, heading) for k in SESSION_KS for metric, heading in (
        (f"ours_session_recall_all@{k}", f"Recall@{k} (ours: every evidence question)"),
        (f"ours_session_ndcg@{k}", f"NDCG@{k} (ours: every evidence question)"))),
    ("latency_p50_s", "latency p50"),
    ("latency_p95_s", "latency p95"),
    ("tool_latency_p50_s", "memory tools p50"),
    ("tool_latency_p95_s", "memory tools p95"),
    ("prompt_tokens", "prompt tokens"),
    ("completion_tokens", "completion tokens"),
)
#: A table is shown only when one of these has a value: the papers' own figures.
_PAPER_METRICS = frozenset(m for m, _ in PAPER_COLUMNS if m in ("token_f1", "bleu1") or "session_" in m)


def paper_tables(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """One table per model x arm that has some paper metric: headings, rows of formatted cells, task average."""
    wanted = {m for m, _ in PAPER_COLUMNS} | {"task_averaged_accuracy"}
    cells: dict[tuple[str, str], dict[tuple[str, str], dict[str, Any]]] = {}
    for row in summary.get("metrics") or []:
        if row.get("metric") in wanted:
            key = (str(row.get("model")), str(row.get("arm")))
            cells.setdefault(key, {})[(str(row.get("category")), str(row.get("metric")))] = row
    arms = fmt.run_arms(summary, [{"arm": arm} for _, arm in cells])
    tables = []
    for model, arm in sorted(cells, key=lambda k: (k[0], arms.index(k[1]) if k[1] in arms else len(arms), k[1])):
        mine = cells[(model, arm)]
        if not any(row.get("value") is not None for (_, m), row in mine.items() if m in _PAPER_METRICS):
            continue
        columns = [(m, h) for m, h in PAPER_COLUMNS
                   if any(m == metric and row.get("value") is not None for (_, metric), row in mine.items())]
        categories = sorted({c for c, _ in mine if c != ALL})
        rows = [{"category": c, "cells": [fmt.format_metric(mine.get((c, m)), m) for m, _ in columns]}
                for c in [ALL, *categories]]
        task = mine.get((ALL, "task_averaged_accuracy"))
        tables.append({"model": model, "arm": arm, "headings": [h for _, h in columns], "rows": rows,
                       "task_averaged": fmt.format_metric(task, "task_averaged_accuracy") if task else None})
    return tables
