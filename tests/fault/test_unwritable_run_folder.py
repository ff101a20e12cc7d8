"""A run folder that cannot be written: a clear message and exit 2 before the first model call, never a traceback.

The tests run as root, for whom a folder's mode bits do not stop a write (a
``chmod 555`` folder is writable for root, so it is no fault): what really
fails is a path under a file and a read-only filesystem, used here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import main
from harness.records import RESULTS_FILE, read_manifest
from tests.fault.conftest import remount, tmpfs
from tests.run.scripted_model import install_scripted


def _run(suite: Path, out: Path) -> int:
    return main(["run", "--scenarios", str(suite), "--model", "scripted/x", "--out", str(out), "--no-cache", "--no-progress"])


def test_out_under_a_file_is_refused_before_any_model_call(tmp_path: Path, suite: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--out below a regular file: exit 2 saying a parent is a file; no model call, no traceback."""
    model = install_scripted(lambda m, t: {"content": "ok"})
    (tmp_path / "notes.txt").write_text("hello", encoding="utf-8")

    code = _run(suite, tmp_path / "notes.txt" / "run")

    err = capsys.readouterr().err
    assert code == 2 and model.calls == 0 and "Traceback" not in err
    assert f"cannot create the run folder {tmp_path / 'notes.txt' / 'run'}: a parent is a file, not a folder; choose another --out" in err


def test_out_naming_a_file_is_refused_and_the_file_kept(tmp_path: Path, suite: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--out naming an existing regular file: exit 2, the file untouched, no model call."""
    model = install_scripted(lambda m, t: {"content": "ok"})
    target = tmp_path / "report.txt"
    target.write_text("keep me", encoding="utf-8")

    assert _run(suite, target) == 2

    assert model.calls == 0 and target.read_text(encoding="utf-8") == "keep me"
    assert "a file of that name exists" in capsys.readouterr().err


def test_out_on_a_read_only_filesystem_is_refused_before_any_model_call(tmp_path: Path, suite: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--out inside a read-only mount: exit 2 naming the folder and 'Read-only file system'; no model call."""
    model = install_scripted(lambda m, t: {"content": "ok"})
    with tmpfs(tmp_path / "ro", "64k", read_only=True) as ro:
        code = _run(suite, ro)
        err = capsys.readouterr().err

    assert code == 2 and model.calls == 0 and "Traceback" not in err
    assert f"cannot write the run folder {ro}: Read-only file system" in err


def test_resume_of_a_folder_that_became_read_only_is_refused_before_any_model_call(
    tmp_path: Path, suite: Path, fake_report: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """--resume of a run whose folder is now read-only: exit 2 before any model call; the folder is left as it was."""
    model = install_scripted(lambda m, t: {"content": "ok"})
    with tmpfs(tmp_path / "disk", "1m") as disk:
        run_dir = disk / "run"
        assert _run(suite, run_dir) == 0
        results = (run_dir / RESULTS_FILE).read_text(encoding="utf-8").splitlines(keepends=True)
        (run_dir / RESULTS_FILE).write_text("".join(results[:2]), encoding="utf-8")
        before = {p.name: p.read_bytes() for p in run_dir.iterdir()}
        remount(disk, "ro")
        model = install_scripted(lambda m, t: {"content": "ok"})
        capsys.readouterr()

        code = main(["run", "--resume", str(run_dir), "--no-cache", "--no-progress"])

        err = capsys.readouterr().err
        assert code == 2 and model.calls == 0 and "Traceback" not in err
        assert "Read-only file system" in err and str(run_dir) in err
        assert {p.name: p.read_bytes() for p in run_dir.iterdir()} == before
        assert read_manifest(run_dir).status == "complete"
