"""``report RUN --scenarios PATH``: a run folder moved away from its suite (a CI artifact) is reported from where the suite is now."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.cli import main
from tests.integration.conftest import SMOKE


@pytest.fixture()
def moved(tmp_path: Path) -> tuple[Path, Path, dict]:
    """A finished smoke run whose suite then moved from ``suite`` to ``elsewhere``; and its summary before the move."""
    suite = tmp_path / "suite"
    shutil.copytree(SMOKE, suite)
    run_dir = tmp_path / "artifact"
    assert main(["run", "--scenarios", str(suite), "--arms", "history_only", "recall", "--out", str(run_dir),
                 "--no-cache", "--no-progress"]) in (0, 1)
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    suite.rename(tmp_path / "elsewhere")
    return run_dir, tmp_path / "elsewhere", summary


def test_a_run_whose_suite_moved_says_to_pass_scenarios(moved: tuple[Path, Path, dict], capsys: pytest.CaptureFixture[str]) -> None:
    run_dir, _, _ = moved
    assert main(["report", str(run_dir)]) == 2
    err = capsys.readouterr().err
    assert "are not at" in err and "pass --scenarios PATH, where they are now" in err and "Traceback" not in err


def test_report_scenarios_scores_a_moved_run_as_it_was_scored_where_it_ran(moved: tuple[Path, Path, dict]) -> None:
    run_dir, elsewhere, before = moved
    manifest_before = (run_dir / "run.json").read_bytes()
    assert main(["report", str(run_dir), "--scenarios", str(elsewhere)]) in (0, 1)
    after = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    assert after["verdict"] == before["verdict"] and after["metrics"] == before["metrics"]
    assert (run_dir / "run.json").read_bytes() == manifest_before  # the artifact's record of where it ran is kept


def test_report_scenarios_names_a_scenario_whose_text_changed_since_the_run(moved: tuple[Path, Path, dict],
                                                                           capsys: pytest.CaptureFixture[str]) -> None:
    run_dir, elsewhere, _ = moved
    path = elsewhere / "smoke-02-ci-provider.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("Which CI system", "What CI system"), encoding="utf-8")
    assert main(["report", str(run_dir), "--scenarios", str(elsewhere)]) in (0, 1)
    assert "smoke-02-ci-provider" in capsys.readouterr().err


def test_report_scenarios_that_do_not_exist_exit_2(moved: tuple[Path, Path, dict], capsys: pytest.CaptureFixture[str]) -> None:
    run_dir, elsewhere, _ = moved
    assert main(["report", str(run_dir), "--scenarios", str(elsewhere / "nope")]) == 2
    assert "--scenarios" in capsys.readouterr().err
