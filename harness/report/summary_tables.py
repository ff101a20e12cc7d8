"""The summary's tables as the page shows them: metrics per arm, categories, protocol groups, paired rows.

Each function reads ``summary.json``'s dict and returns rows for a template; nothing here decides a
number (the analysis stage did), it only orders, labels and picks what the page shows.
"""

from __future__ import annotations

from typing import Any

from harness.report import formatting as fmt
from harness.score import SESSION_KS

METRIC_ORDER = (
    "continuity_accuracy", "task_averaged_accuracy", "adherence_rate", "unsupported_claim_rate",
    "abstention_rate_unanswerable", "over_abstention_rate", "coverage", "selective_accuracy", "token_f1", "bleu1",
    "answer_leakage_rate", "tool_leakage_count", "retained_after_forget_count", "answer_forgotten_rate",
    "out_of_scope_attempts", "retrieved_precision", "retrieved_recall",
    *(f"session_{m}@{k}" for k in SESSION_KS for m in ("recall_any", "recall_all", "ndcg")),
    "tool_calls", "model_calls", "prompt_tokens", "completion_tokens",
    "tool_result_tokens", "write_model_calls", "write_tool_calls", "write_prompt_tokens", "write_completion_tokens",
    "write_holds_answer_rate", "cost_usd", "latency_p50_s", "latency_p95_s", "tool_latency_p50_s",
    "tool_latency_p95_s", "tokens_per_correct", "cost_per_correct", "error_rate",
)  # fmt: skip


def metric_tables(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """One table per model: a row per metric, a column per arm (category "all")."""
    rows = [r for r in summary.get("metrics") or [] if r.get("category", "all") == "all"]
    arms = fmt.run_arms(summary, rows)
    tables: dict[str, dict[str, Any]] = {}
    for row in rows:
        table = tables.setdefault(str(row.get("model")), {"model": str(row.get("model")), "cells": {}})
        table["cells"][(str(row.get("metric")), str(row.get("arm")))] = row
    out = []
    for table in tables.values():
        present = {metric for metric, _ in table["cells"]}
        metrics = [m for m in METRIC_ORDER if m in present] + sorted(present - set(METRIC_ORDER))
        table_arms = [a for a in arms if any((m, a) in table["cells"] for m in metrics)]
        body: list[tuple[str, list[Any]]] = [(m, [table["cells"].get((m, a)) for a in table_arms]) for m in metrics]
        if any(fmt.is_number(c.get("value")) and c["value"] > 0
               for (m, _), c in table["cells"].items() if m == "write_model_calls"):
            at = next((i + 1 for i, (m, _) in enumerate(body) if m == "completion_tokens"), len(body))
            body[at:at] = [(name, [_probe_plus_write(table["cells"], a, parts) for a in table_arms])
                           for name, parts in _PROBE_PLUS_WRITE.items()]
        out.append({"model": table["model"], "arms": table_arms, "rows": body})
    return out


#: Rows of the metric table that put the write phase's cost beside the probe's (runs with a write phase only).
_PROBE_PLUS_WRITE = {
    "model calls per sample, probe + write": (("model_calls",), ("write_model_calls",)),
    "tokens per sample, probe + write": (("prompt_tokens", "completion_tokens"),
                                         ("write_prompt_tokens", "write_completion_tokens")),
}


def _probe_plus_write(cells: dict[tuple[str, str], Any], arm: str,
                      parts: tuple[tuple[str, ...], tuple[str, ...]]) -> dict[str, str] | None:
    """``{"text": "1,234 + 5,678"}``: an arm's probe and write-phase figure side by side (None without either)."""
    sums: list[float | None] = []
    for metrics in parts:
        values = [(cells.get((m, arm)) or {}).get("value") for m in metrics]
        numbers = [v for v in values if fmt.is_number(v)]
        sums.append(sum(numbers) if numbers else None)
    if all(s is None for s in sums):
        return None
    calls = parts[0] == ("model_calls",)
    return {"text": " + ".join(fmt.num(s) if calls or s is None else f"{s:,.0f}" for s in sums)}


def judge_sensitivity(summary: dict[str, Any]) -> dict[str, Any] | None:
    """The judge sensitivity table: a row per judge, a column per model · arm, then the spread row."""
    found = summary.get("judge_sensitivity")
    if not isinstance(found, dict) or not found.get("judges"):
        return None
    keys = [(str(r["model"]), str(r["arm"])) for r in found.get("spread") or []]
    multi_model = len({m for m, _ in keys}) > 1
    columns = [f"{m} · {a}" if multi_model else a for m, a in keys]
    rows = []
    for judge in found["judges"]:
        prompt = judge.get("prompt") or {}
        mine = {(str(r["model"]), str(r["arm"])): r.get("value") for r in judge.get("accuracy") or []}
        rows.append({"label": f"{judge.get('model')} · {prompt.get('name')} ({str(prompt.get('sha256') or '')[:12]})",
                     "cells": [fmt.num(mine.get(key)) for key in keys]})
    rows.append({"label": "spread (max − min)", "cells": [fmt.num(r.get("spread")) for r in found.get("spread") or []]})
    return {"columns": columns, "rows": rows, "not_comparable": found.get("not_comparable") or 0}


def category_tables(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """Per model: a row per category (the suite's description under its name), a cell per arm.

    A cell holds the ``continuity_accuracy`` row and, when the run has one, the
    informational ``token_f1`` row of that model, arm and category.
    """
    wanted = ("continuity_accuracy", "token_f1")
    rows = [r for r in summary.get("metrics") or [] if r.get("metric") in wanted and r.get("category", "all") != "all"]
    described = {str(c.get("name")): c.get("description") for c in summary.get("categories") or []
                 if isinstance(c, dict)}
    arms = fmt.run_arms(summary, rows)
    cells: dict[str, dict[tuple[str, str, str], dict[str, Any]]] = {}
    for row in rows:
        cells.setdefault(str(row.get("model")), {})[(str(row.get("category")), str(row.get("arm")),
                                                     str(row.get("metric")))] = row
    tables = []
    for model in sorted(cells):
        mine = cells[model]
        categories = sorted({c for c, _, _ in mine})
        table_arms = [a for a in arms if any((c, a, m) in mine for c in categories for m in wanted)]
        body = [{"category": c, "description": described.get(c),
                 "cells": [{"accuracy": mine.get((c, a, "continuity_accuracy")), "f1": mine.get((c, a, "token_f1"))}
                           for a in table_arms]} for c in categories]
        tables.append({"model": model, "arms": table_arms, "rows": body,
                       "has_f1": any(m == "token_f1" for _, _, m in mine)})
    return tables


_GROUP_WORDS = {"headline": "headline", "apart": "reported apart", "not_judged": "not judged"}


def protocol_tables(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """Per model: the suite protocol's per-category rows (paper order, groups), each cell's text pre-formatted.

    A cell reads ``0.42 [0.30, 0.55]`` (the headline, with its interval) or
    ``0.42`` with its n in the title, plus the retrieved-item recall with its n where retrieval ran.
    """
    protocol = summary.get("protocol") or {}
    tables = []
    for table in protocol.get("tables") or []:
        arms = list(table.get("arms") or [])
        rows = []
        for row in table.get("rows") or []:
            cells = []
            for arm in arms:
                cell = (row.get("arms") or {}).get(arm)
                if not cell:
                    cells.append({"text": "–", "n": None, "recall": None})
                    continue
                text = ("not judged" if cell.get("accuracy") is None and row.get("group") == "not_judged"
                        else fmt.format_metric({"metric": "continuity_accuracy", "value": cell.get("accuracy"),
                                                "ci_low": cell.get("ci_low"), "ci_high": cell.get("ci_high")}))
                value = fmt.format_metric({"metric": "retrieved_recall", "value": cell.get("retrieved_recall")})
                recall = f"recall {value} (n={cell['recall_n']})" if cell.get("recall_n") else None
                cells.append({"text": text, "n": cell.get("n"), "recall": recall})
            group = str(row.get("group"))
            rows.append({"category": row.get("category"), "group": _GROUP_WORDS.get(group, group),
                         "cls": f"grp-{row.get('group')}", "scenarios": row.get("scenarios"),
                         "no_relevant": row.get("no_relevant_item"), "cells": cells})
        tables.append({"model": table.get("model"), "arms": arms, "rows": rows})
    return tables


_CHECKED_CONTINUITY = ("continuity_accuracy_headline", "continuity_accuracy")


def _key(row: dict[str, Any]) -> tuple[str, str, str]:
    return (str(row.get("model")), str(row.get("arm_a")), str(row.get("arm_b")))


def paired_rows(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """One block per model x comparison: paired differences, McNemar and the detectable effect."""
    blocks: dict[tuple[str, str, str], dict[str, Any]] = {}

    def block(row: dict[str, Any]) -> dict[str, Any]:
        return blocks.setdefault(_key(row), {"key": _key(row), "diffs": [], "mcnemar": None, "mde": None})

    for row in summary.get("paired") or []:
        if row.get("category", "all") == "all":  # per-category rows are drawn in the effect chart
            block(row)["diffs"].append(row)
        elif row.get("category") == "headline" and row.get("metric") == "continuity_accuracy":
            block(row)["diffs"].insert(0, {**row, "metric": "continuity_accuracy_headline"})  # what the verdict reads
    for row in summary.get("mcnemar") or []:
        block(row)["mcnemar"] = {"unit": "scenario", **row}  # summaries before the field: always scenarios
    for found in blocks.values():  # the continuity row the verdict's checks read, to name the unit they pair
        found["checks_row"] = next((d for d in found["diffs"] if d.get("metric") in _CHECKED_CONTINUITY), None)
    for row in summary.get("min_detectable_effect") or []:
        block(row)["mde"] = row
    arms = fmt.run_arms(summary)

    def order(key: tuple[str, str, str]) -> tuple[Any, ...]:
        return (key[0], *(arms.index(a) if a in arms else len(arms) for a in key[1:]), key)

    return [blocks[key] for key in sorted(blocks, key=order)]


def verdict_reasons(summary: dict[str, Any]) -> list[str]:
    """The verdict's reasons, less those the lead headlines above them already say."""
    leads = {h.get("text") for h in summary.get("headlines") or [] if isinstance(h, dict) and h.get("lead")}
    return [r for r in (summary.get("verdict") or {}).get("reasons") or [] if r not in leads]


def unsupported_kinds(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """Per model: a row per claim kind, a cell per arm (``claims in samples``), from ``unsupported_by_kind``."""
    rows = summary.get("unsupported_by_kind") or []
    arms = fmt.run_arms(summary, rows)
    tables: dict[str, dict[str, Any]] = {}
    for row in rows:
        table = tables.setdefault(str(row.get("model")), {"model": str(row.get("model")), "cells": {}})
        table["cells"][(str(row.get("kind")), str(row.get("arm")))] = row
    out = []
    for model in sorted(tables):
        cells = tables[model]["cells"]
        kinds = sorted({k for k, _ in cells})
        table_arms = [a for a in arms if any((k, a) in cells for k in kinds)]
        out.append({"model": model, "arms": table_arms,
                    "rows": [(kind, [cells.get((kind, a)) for a in table_arms]) for kind in kinds]})
    return out
