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
from harness.scenarios import AnswerCheck
from harness.score.matching import check_answer

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
    """The positive text checks an importer wrote, scored by the harness's own ``check_answer`` (word-bounded short golds)."""
    check = AnswerCheck(**{k: expect[k] for k in ("must_contain_any", "must_contain_groups") if k in expect})
    return check_answer(answer, check)[0]
