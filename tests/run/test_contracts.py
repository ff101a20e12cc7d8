"""`run --instructions` and each arm's contract: recorded in run.json, kept on resume, a conflict refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.memory_systems import configure_instructions

REPO = Path(__file__).resolve().parents[2]
SMOKE = REPO / "scenarios" / "smoke"


@pytest.fixture(autouse=True)
def _restore_instructions() -> object:
    yield
    configure_instructions(None)  # a run installs its set process-wide, as it does its embedder


def run(tmp_path: Path, *extra: str, out: str = "run") -> tuple[int, Path]:
    folder = tmp_path / out
    code = main(["run", "--scenarios", str(SMOKE), "--out", str(folder), "--cache-dir", str(tmp_path / "cache"),
                 "--no-progress", "--arms", "history_only", "recall", "full_history", *extra])
    return code, folder


def manifest(folder: Path) -> dict:
    return json.loads((folder / "run.json").read_text(encoding="utf-8"))


def test_a_run_records_its_instruction_set_and_each_arms_contract(tmp_path: Path) -> None:
    code, folder = run(tmp_path)
    assert code in (0, 1)
    recorded = manifest(folder)
    assert recorded["parameters"]["instructions"] == "shared"
    assert recorded["parameters"]["retrieval_budget_counts"] == "memory text"
    contracts = {arm: f["contract"] for arm, f in recorded["arm_fingerprints"].items()}
    assert contracts["recall"]["ingests"] == "prepared items" and contracts["recall"]["times"] == "iso + epoch ms"
    assert contracts["full_history"]["ingests"] == "raw turns" and contracts["history_only"]["discloses"] == "nothing"
    assert contracts["recall"]["instructions"] == contracts["full_history"]["instructions"]  # one block for both
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    assert "differs from raw turns" in summary["contracts"]["marks"]["recall"]["ingests"]
    calls = [c for r in map(json.loads, (folder / "results.jsonl").read_text().splitlines()) if r["arm"] == "recall"
             for c in r["tool_calls"] if c["name"] == "memory_search" and c["status"] == "ok"]
    assert calls and all("observedAtIso" in found for c in calls for found in json.loads(c["result_text"])["results"])


def test_legacy_is_recorded_and_a_resume_that_asks_for_another_set_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, folder = run(tmp_path, "--instructions", "legacy")
    assert code in (0, 1) and manifest(folder)["parameters"]["instructions"] == "legacy"
    assert manifest(folder)["arm_fingerprints"]["recall"]["contract"]["instructions"]["name"] == "legacy"
    capsys.readouterr()
    assert main(["run", "--resume", str(folder), "--instructions", "shared", "--no-progress"]) == 2
    assert "--instructions shared conflicts with the run being resumed (it has legacy)" in capsys.readouterr().err
