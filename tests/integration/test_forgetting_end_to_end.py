"""Every built-in memory system measured on the starter suite's forgetting scenarios, offline, end to end."""

from __future__ import annotations

import json
from pathlib import Path

from harness.memory_systems import builtin_arms

ROOT = Path(__file__).resolve().parents[2]


def test_every_built_in_system_gets_a_forgetting_row_in_summary_terminal_and_report(tmp_path: Path, capsys) -> None:
    from harness.cli import main

    arms = list(builtin_arms())
    run_dir = tmp_path / "run"
    code = main(["run", "--scenarios", str(ROOT / "scenarios" / "starter"), "--filter", "category:forgetting",
                 "--arms", *arms, "--out", str(run_dir), "--cache-dir", str(tmp_path / "cache"), "--no-progress"])
    assert code in (0, 1)
    out = capsys.readouterr().out
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    rows = {r["arm"]: r for r in summary["forgetting"]}
    assert list(rows) == arms and all(r["samples"] == 3 and r["forget_requests"] == 3 for r in rows.values())
    # the ceiling pastes the raw transcripts: every withdrawn fact is in its prompt
    assert rows["full_history"]["retrievable"] == rows["full_history"]["forgotten_facts"] == 5
    assert rows["recall"]["retrievable"] == 0 and rows["history_only"]["retrievable"] == 0
    # the offline writer forgets by the title it hears, so a fact saved under another title survives its forget
    assert rows["named_memory"]["forget_calls"] == 3 and rows["named_memory"]["forgets_removed"] < 3
    assert rows["named_memory"]["retrievable"] > 0 and rows["named_memory_cold"]["retrievable"] == 0
    assert rows["memory_document_extracted"]["forget_calls"] == 0  # extract_memory only appends
    leaks = [r for r in summary["metrics"] if r["metric"] == "tool_leakage_count" and r["category"] == "all"]
    assert {r["value"] for r in leaks} == {0}  # none of it is a Host defect
    scores = [json.loads(line) for line in (run_dir / "scores.jsonl").read_text(encoding="utf-8").splitlines()]
    named = next(s for s in scores if s["arm"] == "named_memory" and s["scenario_id"] == "forget-01-home-address")
    reason = next(x["reason"] for x in named["scores"] if x["name"] == "retained_after_forget")
    assert reason.endswith("forgot 'home address'; the fact was stored as 'send freelance'")
    other_workspace = next(s for s in scores if s["arm"] == "named_memory"
                           and s["scenario_id"] == "forget-04-other-workspace-forget")
    assert other_workspace["outcome"] == "correct"  # the web workspace's forget left the mobile one's branch
    assert "forgetting · arm" in out and "retained after forget in recall: 0 retrievable, 0 answers (must be 0)" in out
    page = (run_dir / "index.html").read_text(encoding="utf-8")
    assert 'id="forgetting"' in page and "delete by exact name" in page
