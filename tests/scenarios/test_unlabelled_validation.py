"""An unlabelled probe (``expect.unlabelled``) validates without gold, and is refused when it sets one."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from harness.cli import main

SCENARIO = {
    "id": "logged-1", "title": "A logged session", "category": "project_fact", "description": "logged traffic",
    "sessions": [{"id": "s1", "workspace": "acme", "started_at": "2026-03-01T10:00:00Z",
                  "turns": [{"role": "user", "content": "Use port 5433."}]}],
    "probe": {"workspace": "acme", "started_at": "2026-03-02T10:00:00Z", "message": "Which port?"},
    "expect": {"unlabelled": True, "logged_reply": "5433."},
}


def _validate(tmp_path: Path, expect: dict, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    path = tmp_path / "logged-1.yaml"
    path.write_text(yaml.safe_dump({**SCENARIO, "expect": expect}), encoding="utf-8")
    code = main(["validate", str(path)])
    return code, capsys.readouterr().out


def test_an_unlabelled_probe_without_items_or_checks_validates_without_warnings(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _validate(tmp_path, SCENARIO["expect"], capsys)
    assert code == 0 and "0 errors, 0 warnings" in out


@pytest.mark.parametrize("gold", [{"must_contain_any": ["5433"]}, {"abstain": True}, {"f1_reference": "5433"},
                                  {"rubric": "says 5433"}])
def test_an_unlabelled_probe_that_sets_a_gold_is_an_error_naming_the_field(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], gold: dict) -> None:
    code, out = _validate(tmp_path, {**SCENARIO["expect"], **gold}, capsys)
    (name,) = gold
    assert code == 1 and f"expect.{name}" in out and "expect.unlabelled is true (no gold)" in out
