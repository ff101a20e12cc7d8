"""The shipped suites from any folder: a missing ``scenarios/starter`` (or ``scenarios/smoke``) is the installed copy."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from harness.cli import main
from harness.scenarios import shipped_path, use_shipped_suites
from harness.scenarios.shipped import shipped_root

REPO = Path(__file__).resolve().parents[2]


def test_the_shipped_root_holds_the_starter_and_smoke_suites() -> None:
    root = shipped_root()
    assert root is not None and (root / "starter" / "_defaults.yaml").is_file() and (root / "smoke").is_dir()


def test_a_path_that_exists_here_is_used_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "scenarios" / "starter").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    assert shipped_path("scenarios/starter") == "scenarios/starter"


@pytest.mark.parametrize("given", ["scenarios", "scenarios/starter", "scenarios/smoke", "scenarios/starter/", "scenarios/acceptance",
                                   "scenarios/smoke/smoke-01-changelog-format.yaml"])
def test_a_shipped_suite_missing_here_is_the_installed_copy(given: str, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    resolved = Path(shipped_path(given))
    assert resolved.is_absolute() and resolved.exists()
    assert resolved == shipped_root().joinpath(*Path(given).parts[1:])


@pytest.mark.parametrize("given", ["scenarios/nope", "suites/starter", "starter", "scenarios/smoke/nope.yaml", "/nope/scenarios",
                                   "scenarios/../scenarios/smoke"])
def test_any_other_missing_path_stays_as_given(given: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert shipped_path(given) == given


def test_only_the_suite_path_arguments_are_rewritten(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    args = use_shipped_suites(argparse.Namespace(paths=["scenarios/smoke"], scenarios=None, out="scenarios/smoke"))
    assert args.paths == [str(shipped_root() / "smoke")] and args.scenarios is None and args.out == "scenarios/smoke"


def test_list_and_validate_from_another_folder_read_the_shipped_suites(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["list"]) == 0
    assert "upd-03-api-rate-limit" in capsys.readouterr().out
    assert main(["validate", "scenarios/smoke"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("5 files, 5 scenarios, 0 errors")
