"""Conversation probes end to end: ``run --filter`` of one probe, results ids, and a report of 1 of 200 probes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from harness.cli import main  # noqa: E402
from harness.records import RESULTS_FILE, read_manifest, scan_results, write_manifest  # noqa: E402
from tests.scenarios.conversation_factories import write_conversation  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
VALID = ROOT / "tests" / "fixtures" / "scenarios" / "good" / "valid.yaml"
ARMS = ("history_only", "recall", "full_history")


def _suite(tmp_path: Path, probes: int) -> Path:
    suite = tmp_path / "suite"
    write_conversation(suite, probes=probes)
    broken = VALID.read_text(encoding="utf-8").replace("id: fx-valid", "id: fx-broken").replace("kind: context", "kind: contxt", 1)
    (suite / "broken.yaml").write_text(broken, encoding="utf-8")
    return suite


def _run(tmp_path: Path, suite: Path, *extra: str) -> int:
    return main(["run", "--scenarios", str(suite), "--model", "offline/reference", "--out", str(tmp_path / "run"),
                 "--cache-dir", str(tmp_path / "cache"), "--no-progress", "--retries", "0", *extra])


def _break_probe(suite: Path, number: int) -> None:
    """Give probe ``q<number>`` a value its schema refuses."""
    path = suite / "conv-1.yaml"
    line = f"      message: What is the name of Caroline's dog? ({number})\n"
    text = path.read_text(encoding="utf-8")
    assert line in text
    path.write_text(text.replace(line, line + "      incognito: maybe\n"), encoding="utf-8")


def test_run_filter_of_one_probe_ignores_a_broken_unselected_file_that_validate_refuses(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = _suite(tmp_path, probes=5)
    assert _run(tmp_path, suite, "--filter", "conv-1/q2") in (0, 1)  # 1: a verdict on one scenario may fail; never 2
    records = scan_results(tmp_path / "run" / RESULTS_FILE).records
    assert sorted(r.sample_id for r in records) == sorted(f"conv-1/q2|{arm}|offline/reference|0" for arm in ARMS)
    assert all(r.status == "ok" and r.category == "project_fact" for r in records)
    assert read_manifest(tmp_path / "run").scenario_ids == ["conv-1/q2"]
    run_files = {p.name for p in (tmp_path / "run").iterdir()}
    assert not any("q2" in name for name in run_files)  # the id names no file
    assert "<code>conv-1/q2</code>" in (tmp_path / "run" / "index.html").read_text(encoding="utf-8")
    capsys.readouterr()
    assert main(["validate", str(suite)]) == 1
    assert "broken.yaml" in capsys.readouterr().out


def test_the_recall_arm_of_a_probe_searches_the_conversation_store(tmp_path: Path) -> None:
    suite = _suite(tmp_path, probes=3)
    _run(tmp_path, suite, "--filter", "conv-1/q1", "--arms", "recall")
    [record] = scan_results(tmp_path / "run" / RESULTS_FILE).records
    assert "memory_search" in record.tools_offered
    assert "Biscuit" in (record.final_answer or "")


def test_report_loads_only_the_scenarios_its_results_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run planned over 200 probes that wrote 1: the report validates that one probe, so a probe broken since does not matter."""
    from harness.scenarios import conversation

    suite = _suite(tmp_path, probes=200)
    assert _run(tmp_path, suite, "--filter", "conv-1/q7") in (0, 1)
    run_dir = tmp_path / "run"
    manifest = read_manifest(run_dir)
    every = sorted(f"conv-1/q{n}" for n in range(1, 201))
    write_manifest(run_dir, manifest.model_copy(update={"scenario_ids": every, "sample_count": 600, "status": "interrupted"}))
    _break_probe(suite, 100)
    checked: list[object] = []
    real = conversation.check_conversation_probe
    monkeypatch.setattr(conversation, "check_conversation_probe", lambda *a, **k: checked.append(a) or real(*a, **k))
    assert main(["report", str(run_dir)]) in (0, 1)
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    assert summary["run"]["samples"] == 3 and summary["run"]["planned_samples"] == 600
    assert len(checked) == 1  # q7 alone was validated, not the 199 others
