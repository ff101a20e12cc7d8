"""Bad input at the command line: a clear message naming the file (and line), exit != 0, no traceback, nothing lost."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import main
from harness.records import RESULTS_FILE
from tests.integration.conftest import SMOKE


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def _offline_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    run_dir = tmp_path / "run"
    code, text = _cli(
        capsys,
        "run",
        "--scenarios",
        str(SMOKE),
        "--filter",
        "smoke-01-*",
        "--out",
        str(run_dir),
        "--cache-dir",
        str(tmp_path / "cache"),
        "--no-progress",
    )
    assert code == 0, text
    return run_dir


def test_a_yaml_syntax_error_names_the_file_and_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("id: broken-one\ntitle: [unclosed\ncategory: preference\n", encoding="utf-8")

    code, text = _cli(capsys, "run", "--scenarios", str(broken), "--out", str(tmp_path / "run"), "--no-progress")

    assert code != 0 and "Traceback" not in text
    assert f"{broken}:2" in text or f"{broken}:3" in text
    assert not (tmp_path / "run" / RESULTS_FILE).exists()


def test_a_wrong_field_names_the_file_line_and_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = (SMOKE / "smoke-01-changelog-format.yaml").read_text(encoding="utf-8")
    bad = tmp_path / "bad-field.yaml"
    bad.write_text(source.replace("category: preference", "category: 42-not-a-category"), encoding="utf-8")

    code, text = _cli(capsys, "run", "--scenarios", str(bad), "--out", str(tmp_path / "run"), "--no-progress")

    assert code != 0 and "Traceback" not in text
    assert f"{bad}:4" in text and "category" in text


def test_report_on_a_folder_that_is_not_a_run_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "notes.txt").write_text("hello", encoding="utf-8")

    code, text = _cli(capsys, "report", str(tmp_path))

    assert code != 0 and "Traceback" not in text
    assert "run.json" in text and "run folder" in text


def test_report_on_a_corrupted_middle_line_names_the_line_and_keeps_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = _offline_run(tmp_path, capsys)
    results = run_dir / RESULTS_FILE
    lines = results.read_text(encoding="utf-8").splitlines(keepends=True)
    assert len(lines) == 3
    lines[1] = lines[1][:40] + "\n"
    results.write_text("".join(lines), encoding="utf-8")
    before = results.read_bytes()

    code, text = _cli(capsys, "report", str(run_dir))

    # The report is built on what is there, says it is incomplete first, and --gate refuses it.
    assert code == 0 and "Traceback" not in text
    assert text.startswith("incomplete: 2 of 3 samples") and f"{RESULTS_FILE}:2: not valid JSON" in text
    assert _cli(capsys, "report", str(run_dir), "--gate")[0] == 1
    assert results.read_bytes() == before


def test_report_tolerates_a_truncated_last_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = _offline_run(tmp_path, capsys)
    results = run_dir / RESULTS_FILE
    text = results.read_text(encoding="utf-8")
    results.write_text(text[: len(text) - 200], encoding="utf-8")  # a write cut short by a crash

    code, out = _cli(capsys, "report", str(run_dir))

    assert code == 0, out
    assert "Traceback" not in out and (run_dir / "index.html").is_file()
