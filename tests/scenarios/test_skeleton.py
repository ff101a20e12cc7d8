"""``recall-eval new scenario|suite NAME``: commented skeletons that validate as written and run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.scenarios import load_suite


def test_new_scenario_writes_a_commented_skeleton_that_validates_without_a_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["new", "scenario", "fact-07-dev-port"]) == 0
    path = tmp_path / "fact-07-dev-port.yaml"
    text = path.read_text(encoding="utf-8")
    assert text.count("\n#") >= 5 and "id: fact-07-dev-port" in text  # commented, and named as asked
    suite = load_suite([path])
    assert suite.problems == [] and [s.id for s in suite.scenarios] == ["fact-07-dev-port"]
    assert main(["validate", str(path)]) == 0


def test_new_suite_writes_defaults_and_a_scenario_that_validate(tmp_path: Path) -> None:
    folder = tmp_path / "billing"
    assert main(["new", "suite", str(folder)]) == 0
    assert sorted(p.name for p in folder.iterdir()) == ["_defaults.yaml", "billing-01.yaml"]
    suite = load_suite([folder])
    assert suite.problems == [] and [s.id for s in suite.scenarios] == ["billing-01"]


def test_the_skeleton_runs_and_only_the_memory_arms_answer_it(tmp_path: Path) -> None:
    assert main(["new", "suite", str(tmp_path / "suite")]) == 0
    run_dir = tmp_path / "run"
    assert main(["run", "--scenarios", str(tmp_path / "suite"), "--out", str(run_dir), "--no-cache", "--no-progress"]) in (0, 1)
    rows = [json.loads(line) for line in (run_dir / "scores.jsonl").read_text(encoding="utf-8").splitlines()]
    assert {r["arm"]: r["outcome"] for r in rows} == {"history_only": "abstained_wrongly", "recall": "correct",
                                                     "full_history": "correct"}


@pytest.mark.parametrize(("argv", "message"), [
    (["new", "scenario", "bad id"], "'bad id' is not a scenario id"),
    (["new", "scenario", "taken"], "taken.yaml already exists"),
    (["new", "suite", "full"], "full already exists and is not an empty folder"),
])
def test_new_refuses_a_bad_name_or_an_existing_file_and_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                      capsys: pytest.CaptureFixture[str],
                                                                      argv: list[str], message: str) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "taken.yaml").write_text("mine\n", encoding="utf-8")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "notes.txt").write_text("mine\n", encoding="utf-8")
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    assert main(argv) == 2
    assert message in capsys.readouterr().err
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before
    assert (tmp_path / "taken.yaml").read_text(encoding="utf-8") == "mine\n"
