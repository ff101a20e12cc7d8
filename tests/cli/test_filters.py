"""Scenario filters on the command line: how repeated ones combine, and misspelt ones that must not pass silently."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import build_parser, main
from tests.memory_systems.prompt_factories import write_small_suite


def _run(tmp_path: Path, *filters: str) -> int:
    suite = tmp_path / "suite"
    if not suite.exists():
        write_small_suite(suite)
    args = ["run", "--scenarios", str(suite), "--out", str(tmp_path / "run"), "--no-progress"]
    for f in filters:
        args += ["--filter", f]
    return main(args)


def test_a_misspelt_filter_kind_is_refused_with_a_hint(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(tmp_path, "categ:leakage") == 2
    err = capsys.readouterr().err
    assert "categ:leakage" in err and "did you mean category:NAME or tag:NAME?" in err
    assert not (tmp_path / "run" / "results.jsonl").exists()


def test_an_id_glob_matching_nothing_beside_one_that_matches_is_refused(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(tmp_path, "alpha", "alhpa") == 2
    assert "--filter 'alhpa' matches no scenario id; fix or drop it" in capsys.readouterr().err


def test_the_filter_help_says_how_repeated_filters_combine() -> None:
    help_text = build_parser()._subparsers._group_actions[0].choices["run"].format_help()  # noqa: SLF001
    flat = " ".join(help_text.split())
    assert "filters of one kind combine with OR, kinds with AND" in flat


def test_list_with_an_unknown_category_says_one_error_and_not_to_validate(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "--category", "nonsense"]) == 1
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == "1 error" and "validate" not in err.splitlines()[-1]
    assert "unknown category; choose from" in err
