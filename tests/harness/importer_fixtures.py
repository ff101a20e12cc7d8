"""Shared pieces of the importer tests: the small benchmark files in the published shapes, and imports of them.

``tests/fixtures/importers/locomo_mini.json`` and ``longmemeval_mini.json`` are
written for these tests (no benchmark data): every field of the published
shapes and every known data fault appears in them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from harness.importers import run_import
from harness.scoring import contains

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "importers"
LOCOMO = FIXTURES / "locomo_mini.json"
LONGMEMEVAL = FIXTURES / "longmemeval_mini.json"


def imported(kind: str, tmp_path: Path, source: Path | None = None) -> tuple[Path, list[str]]:
    """Import a fixture into ``tmp_path/<kind>``; returns the folder and the printed lines."""
    lines: list[str] = []
    out = tmp_path / kind
    run_import(kind, source or (LOCOMO if kind == "locomo" else LONGMEMEVAL), out, echo=lines.append)
    return out, lines


def read_yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def probe(conversation: dict[str, Any], pid: str) -> dict[str, Any]:
    return next(p for p in conversation["probes"] if p["id"] == pid)


def source(path: Path) -> list[Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def passes(answer: str, expect: dict[str, Any]) -> bool:
    """The positive text checks an importer writes, scored with the harness's own matching (word-bounded short golds)."""
    ok = True
    if expect.get("must_contain_any"):
        ok &= any(contains(answer, text) for text in expect["must_contain_any"])
    for group in expect.get("must_contain_groups", []):
        ok &= any(contains(answer, text) for text in group)
    return ok
