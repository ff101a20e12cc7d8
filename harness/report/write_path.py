"""The report's *Write path* section: what each memory arm wrote, and where its answerable samples were lost.

Laid out from ``summary.json``'s ``write_path`` and ``oracle_vs_extracted``
blocks (:mod:`harness.score.writes` computes them; nothing is recomputed
here) into plain rows that ``templates/index.html.j2`` draws and autoescapes.
The section exists only when it has something to say: some arm wrote memory
through the agent, or an oracle/extracted pair ran. A run of the default arms
has a ``write_path`` row for ``recall`` (the oracle) and no write phase, so it
shows no section.
"""

from __future__ import annotations

from typing import Any

from harness.report import formatting as fmt

__all__ = ["PAIR_COLUMNS", "STAGE_COLUMNS", "WRITE_COLUMNS", "write_path_section"]

#: (key in a ``write_path`` row, column header), in table order.
WRITE_COLUMNS = (
    ("samples", "samples"),
    ("memories_written", "memories written"),
    ("write_duplicates", "duplicates"),
    ("writes_rejected", "rejected"),
    ("forgets", "forgets done / requested"),
    ("written_holds_expected_rate", "written holds expected"),
    ("retrieved_holds_expected_rate", "retrieved holds expected"),
)
STAGE_COLUMNS = (
    ("correct", "correct"),
    ("extraction", "lost at extraction"),
    ("retrieval", "lost at retrieval"),
    ("answer", "lost at answer"),
)
#: (key in an ``oracle_vs_extracted`` row, column header), in table order.
PAIR_COLUMNS = (
    ("n_scenarios", "scenarios"),
    ("both_correct", "both correct"),
    ("extraction_failures", "extraction failures"),
    ("retrieval_failures", "retrieval failures"),
    ("answer_failures", "answer failures"),
    ("oracle_failed_too", "oracle failed too"),
    ("extracted_only_correct", "extracted only correct"),
)


def _count(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else "—"


def _written_by_agent(summary: dict[str, Any]) -> set[tuple[str, str]]:
    """(model, arm) pairs whose samples had a write phase (a mean ``write_model_calls`` above 0)."""
    return {
        (str(r.get("model")), str(r.get("arm")))
        for r in summary.get("metrics") or []
        if isinstance(r, dict) and r.get("metric") == "write_model_calls" and r.get("category", "all") == "all"
        and fmt.is_number(r.get("value")) and r["value"] > 0
    }


def write_path_section(summary: dict[str, Any]) -> dict[str, Any] | None:
    """The section's tables, or None when no arm wrote memory and no oracle/extracted pair ran.

    Returns:
        ``{"tables": [{"model", "rows": [{"arm", "source", "cells": [...], "stages": [...]}]}],
        "pairs": [{"model", "oracle_arm", "extracted_arm", "cells": [...]}]}`` with every
        figure already formatted (``—`` where ``summary.json`` has null).
    """
    rows = [r for r in summary.get("write_path") or [] if isinstance(r, dict)]
    pairs = [p for p in summary.get("oracle_vs_extracted") or [] if isinstance(p, dict)]
    agent = _written_by_agent(summary)
    wrote = any((str(r.get("model")), str(r.get("arm"))) in agent
                or any(isinstance(r.get(k), int) and r[k] > 0
                       for k in ("memories_written", "write_duplicates", "writes_rejected"))
                for r in rows)
    if not (wrote or pairs):
        return None
    arms = fmt.run_arms(summary, rows)
    tables: dict[str, list[dict[str, Any]]] = {}
    for row in sorted(rows, key=lambda r: (str(r.get("model")), arms.index(str(r.get("arm"))))):
        key = (str(row.get("model")), str(row.get("arm")))
        by_agent = key in agent or bool(row.get("memories_written"))
        stages = _v if isinstance(_v := row.get("stages"), dict) else {}
        cells = []
        for field, _ in WRITE_COLUMNS:
            if field == "forgets":
                cells.append(f"{_count(row.get('forgets_done'))} / {_count(row.get('forgets_requested'))}")
            elif field.endswith("_rate"):
                cells.append(fmt.num(row.get(field)))
            else:
                cells.append(_count(row.get(field)))
        tables.setdefault(key[0], []).append({
            "arm": key[1], "cls": fmt.arm_class(key[1], arms),
            "source": "written by the agent" if by_agent else "the scenario's items (oracle)",
            "cells": cells, "stages": [_count(stages.get(stage)) for stage, _ in STAGE_COLUMNS],
        })
    pair_rows = [{"model": str(p.get("model")), "oracle_arm": str(p.get("oracle_arm")),
                  "extracted_arm": str(p.get("extracted_arm")),
                  "cells": [_count(p.get(field)) for field, _ in PAIR_COLUMNS]}
                 for p in sorted(pairs, key=lambda p: (str(p.get("model")), str(p.get("extracted_arm"))))]
    return {"tables": [{"model": model, "rows": tables[model]} for model in sorted(tables)], "pairs": pair_rows}
