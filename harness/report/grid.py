"""The scenario x arm grid of the report: one row per scenario, one column per model x arm.

Each cell holds what a maintainer needs to see why recall fixed or broke a
scenario without opening panels one by one: the outcome colour (every epoch
the same outcome, or "mixed"), the correct count over the epochs, and the
first lines of the answer. A cell links to its samples' panels (the first
epoch, and each epoch when there are several). Rows carry what the page's
script sorts and filters on: category, the id and title, whether the columns
disagree, and each cell's correct rate.

Pure data for ``templates/index.html.j2``; every text is autoescaped there.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harness.report import formatting as fmt
from harness.score import CORRECT_OUTCOMES

#: Characters of the answer shown in a cell (its first lines, cut here).
ANSWER_HEAD = 100
#: Lines of the answer shown in a cell.
ANSWER_LINES = 2
#: Epoch links per cell; the rest are counted.
EPOCH_LINKS = 6


def answer_head(text: Any, limit: int = ANSWER_HEAD, lines: int = ANSWER_LINES) -> str:
    """The first ``lines`` non-blank lines of an answer, cut to ``limit`` characters with an ellipsis.

    Example:
        >>> answer_head("Postgres 15.\\n\\nIt was decided in March.\\nMore.", limit=30)
        'Postgres 15. It was decided i…'
    """
    if not isinstance(text, str):
        return ""
    kept = [line.strip() for line in text[: limit * 4].splitlines() if line.strip()][:lines]  # never a whole essay
    head = " ".join(kept)
    return head if len(head) <= limit else head[: limit - 1].rstrip() + "…"


def _columns(samples: Sequence[dict[str, Any]], arms: list[str]) -> list[tuple[str, str]]:
    models = sorted({str(s.get("model")) for s in samples})
    present = {(str(s.get("model")), str(s.get("arm"))) for s in samples}
    return [(model, arm) for model in models for arm in arms if (model, arm) in present]


def _cell(members: list[dict[str, Any]]) -> dict[str, Any]:
    """One cell from its samples (page order, so epochs ascending)."""
    outcomes = [m["_outcome"] for m in members]
    scored = [o for o in outcomes if o != "error"]
    correct = sum(o in CORRECT_OUTCOMES for o in scored)
    outcome = outcomes[0] if len(set(outcomes)) == 1 else "mixed"
    first = next((m for m in members if m["_outcome"] != "error"), members[0])
    if first["_outcome"] == "error":
        error = first.get("error")
        head = f"error: {error.get('type', 'error')}" if isinstance(error, dict) else "error"
    else:
        head = answer_head(first.get("final_answer")) or "(no answer)"
    links = [(m.get("epoch"), m["_pid"], "✓" if m["_outcome"] in CORRECT_OUTCOMES else "✗")
             for m in members[:EPOCH_LINKS]] if len(members) > 1 else []
    return {
        "outcome": outcome, "head": head, "pid": first["_pid"],
        "rate": round(correct / len(scored), 4) if scored else None,
        "count": f"{correct}/{len(scored)}" + (f" +{len(outcomes) - len(scored)} err" if len(scored) < len(outcomes)
                                               else ""),
        "label": fmt.label(outcome), "links": links, "more": max(len(members) - EPOCH_LINKS, 0),
    }


def scenario_grid(samples: Sequence[dict[str, Any]], summary: dict[str, Any]) -> dict[str, Any]:
    """Rows and columns of the grid from the page's samples (each with ``_pid`` and ``_outcome``).

    Returns:
        ``{"columns": [{"model", "arm", "name", "cls"}], "rows": [{"scenario_id", "title", "category",
        "differ", "cells": [cell or None]}], "categories": [...], "outcomes": [...]}`` with a cell
        ``{"outcome", "label", "head", "pid", "rate", "count", "links", "more"}`` (``rate`` None when
        every sample of the cell is an error).
    """
    arms = fmt.run_arms(summary, samples)
    columns = _columns(samples, arms)
    several_models = len({model for model, _ in columns}) > 1
    index = {column: i for i, column in enumerate(columns)}
    rows: dict[str, dict[str, Any]] = {}
    members: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for sample in samples:
        sid = str(sample.get("scenario_id"))
        if sid not in rows:
            rows[sid] = {"scenario_id": sid, "title": str(sample.get("title") or ""),
                         "category": str(sample.get("category"))}
        column = index.get((str(sample.get("model")), str(sample.get("arm"))))
        if column is not None:
            members.setdefault((sid, column), []).append(sample)
    out_rows = []
    for sid in sorted(rows):
        row = rows[sid]
        cells = [_cell(members[(sid, c)]) if (sid, c) in members else None for c in range(len(columns))]
        rates = {cell["rate"] for cell in cells if cell is not None and cell["rate"] is not None}
        out_rows.append({**row, "cells": cells, "differ": len(rates) > 1})
    outcomes = {cell["outcome"] for row in out_rows for cell in row["cells"] if cell is not None}
    return {
        "columns": [{"model": model, "arm": arm, "name": f"{arm} · {model}" if several_models else arm,
                     "cls": fmt.arm_class(arm, arms)} for model, arm in columns],
        "rows": out_rows,
        "categories": sorted({row["category"] for row in out_rows}),
        "outcomes": sorted(outcomes),
    }
