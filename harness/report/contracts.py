"""The contract table beside the systems table: the terms each arm met the probe on, and where they differ.

``summary.json`` ``contracts`` holds, per arm, the contract ``run.json``
recorded (:mod:`harness.memory_systems.contract`) and its marks: the fields
that are undeclared, or that differ between arms in a way that makes their
numbers unequal (what they ingest, their embedder, instructions, how times
reach the model, the budget of a retrieving arm, a product below its
vendor's defaults). The page shows every field with a ``*`` on a marked one;
the terminal shows what every arm shares on one line and, per arm, only what
it does not share. A run made before contracts were recorded has no block.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.memory_systems import CONTRACT_FIELDS, contract_field_text, contract_marks

__all__ = ["CONTRACT_HEADERS", "contracts_block", "contracts_lines", "contracts_section"]

_HEADER = {"retrieval_budget": "budget", "vendor_defaults": "vendor defaults"}
#: (contract field, column header), in display order.
CONTRACT_HEADERS = tuple((name, _HEADER.get(name, name)) for name in CONTRACT_FIELDS)


def contracts_block(manifest: Any) -> dict[str, Any] | None:
    """``summary.json`` ``contracts``: ``{"arms": {arm: contract}, "marks": {arm: {field: why}}}``, None without contracts."""
    fingerprints = getattr(manifest, "arm_fingerprints", None) or {}
    contracts: dict[str, dict[str, Any]] = {}
    for arm in manifest.arms:
        contract = getattr(fingerprints.get(arm), "contract", None)
        if contract is not None:
            contracts[arm] = contract.model_dump(mode="json")
    if not contracts:
        return None
    return {"arms": contracts, "marks": contract_marks(contracts)}


def _parts(summary: Mapping[str, Any]) -> tuple[dict[str, Mapping[str, Any]], dict[str, Mapping[str, Any]]]:
    block = summary.get("contracts")
    if not isinstance(block, Mapping):
        return {}, {}
    arms = {str(a): c for a, c in (block.get("arms") or {}).items() if isinstance(c, Mapping)}
    marks = {str(a): m for a, m in (block.get("marks") or {}).items() if isinstance(m, Mapping)}
    return arms, marks


def contracts_section(summary: Mapping[str, Any]) -> dict[str, Any] | None:
    """The page's contract table (``{"columns", "rows": [{"arm", "cells": [{"text", "mark"}]}]}``), or None."""
    arms, marks = _parts(summary)
    if not arms:
        return None
    rows = []
    for arm, contract in arms.items():
        cells = []
        for name, _ in CONTRACT_HEADERS:
            why = str(marks.get(arm, {}).get(name) or "")
            cells.append({"text": contract_field_text(contract, name) + (" *" if why else ""), "mark": why})
        rows.append({"arm": arm, "cells": cells})
    return {"columns": [header for _, header in CONTRACT_HEADERS], "rows": rows,
            "marked": sum(1 for arm in arms if marks.get(arm))}


def contracts_lines(summary: Mapping[str, Any], width: int = 80) -> list[str]:
    """The contracts for a terminal: what every arm shares on one line, then each arm's own terms (``*``: marked)."""
    arms, marks = _parts(summary)
    if not arms:
        return []
    texts = {arm: {name: contract_field_text(c, name) for name, _ in CONTRACT_HEADERS} for arm, c in arms.items()}
    shared = [name for name, _ in CONTRACT_HEADERS if len({t[name] for t in texts.values()}) == 1
              and not any(name in marks.get(arm, {}) for arm in arms)]
    headers = dict(CONTRACT_HEADERS)
    lines = ["contracts (* unequal or undeclared; docs/memory-systems.md, System contracts):"]
    if shared:
        first = next(iter(texts.values()))
        lines += _fit("  every arm: " + "; ".join(f"{headers[name]} {first[name]}" for name in shared), width).split("\n")
    arm_width = max(len(arm) for arm in arms)
    for arm, text in texts.items():
        own = [f"{headers[name]} {text[name]}{'*' if name in marks.get(arm, {}) else ''}"
               for name, _ in CONTRACT_HEADERS if name not in shared]
        if own:
            lines += _fit(f"  {arm:<{arm_width}}  " + "; ".join(own), width).split("\n")
    return lines


def _fit(line: str, width: int) -> str:
    """A long arm line wrapped under its own indentation (never cut: every term is read)."""
    import textwrap

    indent = " " * (len(line) - len(line.lstrip(" ")) + 4)
    return "\n".join(textwrap.wrap(line, width, subsequent_indent=indent, break_on_hyphens=False)) or line
