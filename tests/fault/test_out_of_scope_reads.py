"""A model talked into reading another workspace's memory: the Host refuses, and the refusals are counted and shown.

The scenario is the smoke suite's two-client case (``smoke-04``: items of
``ws-acme`` and ``ws-globex``, the probe in ``ws-acme``); the model is the
scripted test double, playing one that a prompt-injected item has persuaded
to call ``memory_get`` on ``ws-globex``'s item id in three spellings before
answering. The run and the report are the real ``recall-eval run`` command
in this process.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from tests.run.scripted_model import install_scripted, tool_call

REPO = Path(__file__).resolve().parents[2]
SCENARIO = REPO / "scenarios" / "smoke" / "smoke-04-leak-pilot-customer.yaml"
#: ws-globex's item, as the injected text spells it, then respelled (case, padding) to get past an exact check.
SPELLINGS = ("it-globex-pilot", "IT-GLOBEX-PILOT", " it-globex-pilot ")


def _attacked(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> dict[str, Any]:
    """memory_get of the other workspace's item in each spelling (when the tools are offered), then an answer."""
    asked = sum(1 for m in messages if m.get("role") == "tool")
    if tools and asked < len(SPELLINGS):
        return {"content": None, "tool_calls": [tool_call("memory_get", json.dumps({"itemId": SPELLINGS[asked]}), f"c{asked}")]}
    return {"content": "I could not find who the pilot customer is."}


@pytest.fixture()
def attacked_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, str]:
    install_scripted(_attacked)
    run_dir = tmp_path / "run"
    code = main(["run", "--scenarios", str(SCENARIO), "--model", "scripted/x", "--arms", "history_only", "recall",
                 "--out", str(run_dir), "--no-cache", "--no-progress", "--retries", "0"])
    captured = capsys.readouterr()
    assert code in (0, 1), captured.err
    return run_dir, captured.out + captured.err


def _rows(run_dir: Path, metric: str) -> dict[str, Any]:
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    return {r["arm"]: r["value"] for r in summary["metrics"] if r["metric"] == metric and r["category"] == "all"}


def test_refused_reads_of_another_workspace_are_counted_per_arm_in_summary_json(attacked_run: tuple[Path, str]) -> None:
    """Three memory_get calls on ws-globex's item (three spellings), all refused: summary.json counts 3 for recall,
    0 for history_only (no tools), and no leak."""
    run_dir, _ = attacked_run
    assert _rows(run_dir, "out_of_scope_attempts") == {"recall": 3, "history_only": 0}
    assert _rows(run_dir, "tool_leakage_count") == {"recall": 0, "history_only": 0}
    records = [json.loads(line) for line in (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    recall = next(r for r in records if r["arm"] == "recall")
    assert [c["status"] for c in recall["tool_calls"]] == ["not_found", "not_found", "invalid_arguments"]


def test_refused_reads_are_a_note_in_the_terminal_and_the_report(attacked_run: tuple[Path, str]) -> None:
    """The terminal prints a `blocked:` note naming the arm and the count, and index.html carries the same headline."""
    run_dir, printed = attacked_run
    lines = printed.splitlines()
    start = next(i for i, line in enumerate(lines) if "blocked:" in line)
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].startswith("      ")), len(lines))
    note = " ".join(line.strip() for line in lines[start:end])  # the terminal wraps notes to 80 columns
    assert "arm recall" in note and "3 time(s)" in note and "tool-level leaks 0" in note and "gate held" in note
    page = (run_dir / "index.html").read_text(encoding="utf-8")
    assert 'data-code="out_of_scope_attempts"' in page and "3 time(s)" in page


def test_a_run_nobody_attacked_has_no_blocked_note(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The same run with a model that reads only its own workspace's item: 0 attempts, no `blocked:` note."""
    def honest(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> dict[str, Any]:
        if tools and not any(m.get("role") == "tool" for m in messages):
            return {"content": None, "tool_calls": [tool_call("memory_get", '{"itemId": "it-acme-pilot"}')]}
        return {"content": "Initech is the pilot customer."}

    install_scripted(honest)
    run_dir = tmp_path / "run"
    main(["run", "--scenarios", str(SCENARIO), "--model", "scripted/x", "--arms", "history_only", "recall",
          "--out", str(run_dir), "--no-cache", "--no-progress", "--retries", "0"])
    printed = capsys.readouterr()
    assert _rows(run_dir, "out_of_scope_attempts") == {"recall": 0, "history_only": 0}
    assert "blocked:" not in printed.out + printed.err
