"""`run --retrieval-budget` and a suite's retrieval_budget: one budget for every arm, recorded, and kept on resume."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main

REPO = Path(__file__).resolve().parents[2]
SMOKE = REPO / "scenarios" / "smoke"


def run(tmp_path: Path, *extra: str, suite: Path = SMOKE, out: str = "run") -> tuple[int, Path]:
    folder = tmp_path / out
    code = main(["run", "--scenarios", str(suite), "--out", str(folder), "--cache-dir", str(tmp_path / "cache"),
                 "--no-progress", "--arms", "history_only", "recall", "recall_fts", *extra])
    return code, folder


def records(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "results.jsonl").read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize(("value", "fault"), [
    ("top_k=0", "top_k=0 must be a whole number from 1 to 100"),
    ("top_k=10,chars=12", "chars=12 must be a whole number from 256 to 1000000"),
    ("depth=3", "unknown key 'depth'"),
    ("top_k=ten", "top_k='ten' is not a whole number"),
])
def test_a_bad_retrieval_budget_exits_2_with_one_clear_line_and_writes_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str, fault: str) -> None:
    with pytest.raises(SystemExit) as caught:
        run(tmp_path, "--retrieval-budget", value)
    assert caught.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "argument --retrieval-budget" in err[-1] and fault in err[-1]
    assert "Traceback" not in "\n".join(err)
    assert not (tmp_path / "run").exists()


def test_the_budget_is_recorded_in_run_json_and_every_arm_fingerprint(tmp_path: Path) -> None:
    code, folder = run(tmp_path, "--retrieval-budget", "top_k=3,chars=2000")
    assert code in (0, 1)
    manifest = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    assert manifest["parameters"]["retrieval_budget"] == {"top_k": 3, "chars": 2000}
    assert manifest["parameters"]["retrieval_budget_source"] == "--retrieval-budget"
    prints = manifest["arm_fingerprints"]
    assert set(prints) == {"history_only", "recall", "recall_fts"}
    assert {p["system"] for p in prints.values()} == {"none", "memory_tools", "memory_tools_fts"}
    assert all(p["retrieval_budget"] == {"top_k": 3, "chars": 2000} and p["sees_session_times"] for p in prints.values())
    assert all(p["version"].startswith("recall-eval ") and len(p["config_hash"]) == 64 for p in prints.values())
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    assert summary["run"]["parameters"]["retrieval_budget"] == {"top_k": 3, "chars": 2000}


def test_every_memory_arm_honours_the_budget_it_was_given(tmp_path: Path) -> None:
    _, folder = run(tmp_path, "--retrieval-budget", "top_k=1,chars=256")
    memory = [r for r in records(folder) if r["arm"] in ("recall", "recall_fts") and r["tool_calls"]]
    assert memory
    for record in memory:
        for call in record["tool_calls"]:
            if call["name"] == "memory_search" and call["status"] == "ok":
                result = json.loads(call["result_text"])
                assert result["limit"] <= 1 and len(result["results"]) <= 1
                assert sum(len(r["content"]) for r in result["results"]) <= 256  # memory text, not the JSON around it
            elif call["name"] == "memory_get" and call["status"] == "ok":
                assert len(json.loads(call["result_text"])["item"]["content"]) <= 256  # memory_get is inside it too
    # the smoke suite's items are short: that the budget binds is shown on long items (tests/memory_systems/test_equal_budget.py)
    assert any(json.loads(c["result_text"]).get("results") for r in memory for c in r["tool_calls"])


def test_the_vector_hybrid_and_shadow_arms_honour_the_budget_too(tmp_path: Path) -> None:
    """They build their Host at the probe, after the harness set the budget: a Host built in open kept top-k 10."""
    _, folder = run(tmp_path, "--retrieval-budget", "top_k=2,chars=300", "--arms", "recall_vector", "recall_hybrid", "shadow")
    searched = [(r["arm"], c) for r in records(folder) for c in r["tool_calls"]
                if c["name"] == "memory_search" and c["status"] == "ok"]
    assert {arm for arm, _ in searched} == {"recall_vector", "recall_hybrid"}
    for _, call in searched:
        result = json.loads(call["result_text"])
        assert result["limit"] <= 2 and len(result["results"]) <= 2
        assert sum(len(r["content"]) for r in result["results"]) <= 300
    shadows = [json.loads(r["shadow"]["result_text"])["results"] for r in records(folder)
               if r["arm"] == "shadow" and r["shadow"]["status"] == "ok"]
    assert shadows and all(len(found) <= 2 and sum(len(r["content"]) for r in found) <= 300 for found in shadows)


def test_a_suite_budget_is_used_and_recorded_as_the_suites(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    for source in sorted(SMOKE.glob("*.yaml")):
        (suite / source.name).write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    (suite / "_defaults.yaml").write_text("retrieval_budget: {top_k: 4}\n", encoding="utf-8")
    _, folder = run(tmp_path, suite=suite)
    manifest = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    assert manifest["parameters"]["retrieval_budget"] == {"top_k": 4, "chars": 4000}
    assert manifest["parameters"]["retrieval_budget_source"] == "suite"
    _, flagged = run(tmp_path, "--retrieval-budget", "top_k=6", suite=suite, out="flagged")
    assert json.loads((flagged / "run.json").read_text())["parameters"]["retrieval_budget"]["top_k"] == 6


def test_a_run_without_a_budget_records_the_default(tmp_path: Path) -> None:
    _, folder = run(tmp_path)
    manifest = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    assert manifest["parameters"]["retrieval_budget"] == {"top_k": 10, "chars": 4000}
    assert manifest["parameters"]["retrieval_budget_source"] == "default"


def test_resuming_with_another_budget_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, folder = run(tmp_path, "--retrieval-budget", "top_k=3")
    capsys.readouterr()
    code = main(["run", "--resume", str(folder), "--retrieval-budget", "top_k=5", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2
    assert "--retrieval-budget top_k=5,chars=4000 conflicts with the run being resumed (it has top_k=3,chars=4000)" in err
    assert main(["run", "--resume", str(folder), "--no-progress"]) in (0, 1)  # the run's own budget is kept
    assert json.loads((folder / "run.json").read_text())["parameters"]["retrieval_budget"]["top_k"] == 3


def test_rerun_failing_keeps_the_budget_the_run_was_given(tmp_path: Path) -> None:
    _, folder = run(tmp_path, "--retrieval-budget", "top_k=2")
    again = tmp_path / "again"
    assert main(["run", "--rerun-failing", str(folder), "--out", str(again), "--cache-dir", str(tmp_path / "cache"),
                 "--no-progress"]) in (0, 1)
    parameters = json.loads((again / "run.json").read_text(encoding="utf-8"))["parameters"]
    assert parameters["retrieval_budget"] == {"top_k": 2, "chars": 4000}
