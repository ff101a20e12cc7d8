"""The forgetting table: per arm, what the system offers to forget with, and what its forgetting measured.

``summary.json`` ``forgetting[]`` (:func:`forgetting_block`), the terminal's
table (:func:`forgetting_lines`) and the HTML report's *Forgetting* section
read the same rows, built by :func:`harness.score.forgetting_table` over the
samples of scenarios that ask to forget; a run without one has no block, no
table and no section. Each arm's mechanism is its memory system's declared
``forgetting`` (``docs/memory-systems.md``); an arm whose system is not
installed here reads ``unknown (system not installed)``.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

#: The terminal table's columns: (header, row key); ``-``: no write phase (nothing to call forget with).
COLUMNS = (("asked", "forget_requests"), ("calls", "forget_calls"), ("removed", "forgets_removed"),
           ("retained", "retrievable"), ("said", "disclosed"))
#: The narrowest mechanism column, widened to its longest word while the arm header fits (a longer word is broken):
#: the arm column gives way first (an arm too long for it stands on its own line above its row).
MECHANISM_MIN = 10
ARM_HEADER = "forgetting · arm"
LEGEND = ("asked: forget requests in the sessions, each once; calls/removed: forget calls of the write phase and those that "
          "removed something; retained: forgotten facts the model was given at the probe; said: repeated in answers")


def mechanisms(arms: Sequence[str]) -> dict[str, str]:
    """Arm -> its memory system's forgetting mechanism, in words."""
    from harness.memory_systems import UnknownArmError, resolve_arm

    found = {}
    for arm in arms:
        try:
            found[arm] = resolve_arm(arm).forgetting
        except UnknownArmError:
            found[arm] = "unknown (system not installed)"
    return found


def forgetting_block(scored: Sequence[Any], arms: Sequence[str] = ()) -> list[dict[str, Any]]:
    """``summary.json``'s ``forgetting[]`` in the run's ``arms`` order (empty when no scenario asks to forget)."""
    from harness.score import forgetting_table

    return forgetting_table(scored, mechanisms(sorted({s.arm for s in scored})), arms)


def _cell(value: Any) -> str:
    return "-" if value is None else str(value)


def forgetting_lines(rows: Sequence[Mapping[str, Any]], width: int = 80) -> list[str]:
    """The terminal's forgetting table, one row per model x arm (models as headings when several), within ``width``.

    Nothing is cut: a mechanism longer than its column wraps under itself, an
    arm name too long for its column stands alone on the line above its row,
    and the numbers stay on the row's first line (``grep ARM`` finds them).
    Only numbers wider than ``width`` itself can pass it.
    """
    if not rows:
        return []
    models = sorted({r["model"] for r in rows})
    counts = [len(h) for h, _ in COLUMNS]
    for r in rows:
        counts = [max(c, len(_cell(r.get(key)))) for c, (_, key) in zip(counts, COLUMNS)]
    numbers = "  ".join(f"{h:>{c}}" for (h, _), c in zip(COLUMNS, counts))
    room = width - len(numbers) - 4  # what the arm and mechanism columns share
    said = [str(r.get("mechanism") or "") for r in rows]
    floor = max(MECHANISM_MIN, min(max(map(len, " ".join(said).split()), default=0), room - len(ARM_HEADER)))
    arm_width = max([len(ARM_HEADER), *(n for n in (len(str(r["arm"])) + 2 for r in rows) if n <= room - floor)])
    mechanism_width = max(floor, min(max(len("mechanism"), *map(len, said)), room - arm_width))
    lines = [f"{ARM_HEADER:<{arm_width}}  {'mechanism':<{mechanism_width}}  {numbers}"]
    for model in models:
        if len(models) > 1:
            lines.append(model)
        for r in (r for r in rows if r["model"] == model):
            arm = str(r["arm"])
            if len(arm) + 2 > arm_width:
                lines.append(f"  {arm}")
                arm = ""
            pieces = textwrap.wrap(str(r.get("mechanism") or ""), mechanism_width, break_on_hyphens=False) or [""]
            cells = "  ".join(f"{_cell(r.get(key)):>{c}}" for (_, key), c in zip(COLUMNS, counts))
            lines.append(f"  {arm:<{arm_width - 2}}  {pieces[0]:<{mechanism_width}}  {cells}")
            lines += [f"{'':<{arm_width}}  {piece}" for piece in pieces[1:]]
    return lines


#: The HTML section's columns: (header, row key).
HTML_COLUMNS = (("forget requests", "forget_requests"), ("forget calls", "forget_calls"),
                ("removed something", "forgets_removed"), ("forgotten facts", "forgotten_facts"),
                ("retained at the probe", "retrievable"), ("repeated in answers", "disclosed"),
                ("notes", "notes"))


def forgetting_section(summary: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The HTML report's *Forgetting* tables, one per model: ``[{"model", "rows": [{"arm", "mechanism", "cells"}]}]``."""
    rows = [r for r in summary.get("forgetting") or [] if isinstance(r, dict)]
    tables = []
    for model in sorted({str(r.get("model")) for r in rows}):
        tables.append({"model": model, "rows": [
            {"arm": r.get("arm"), "mechanism": r.get("mechanism"), "samples": r.get("samples"),
             "cells": [_cell(r.get(key)) for _, key in HTML_COLUMNS]}
            for r in rows if str(r.get("model")) == model]})
    return tables
