"""Faults in a run folder that ``recall-eval report`` survives, each shown through ``main`` in the test's process (the
fault is the folder, not the process).

The run folder comes from a real offline run; each test damages a copy the way
the issue saw it happen (a torn last line, duplicated lines, a binary line, a
record of another model, a run still marked running, an empty results file)
and reads what the command prints and exits with. No traceback, nothing deleted.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.fault.conftest import cli_in_process, offline_smoke_run


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished offline run: 5 smoke scenarios x history_only, recall = 10 samples."""
    base = tmp_path_factory.mktemp("fault-report")
    return offline_smoke_run(base)


@pytest.fixture()
def run_dir(pristine: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "run"
    shutil.copytree(pristine, copy)
    return copy


def _results(run_dir: Path) -> Path:
    return run_dir / "results.jsonl"


def _no_traceback(done: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in done.stdout + done.stderr


def test_torn_last_line_makes_an_incomplete_report_and_gate_fails(run_dir: Path) -> None:
    """A last line cut short by a crash: the report says "incomplete: 9 of 10 samples" first, never pass or fail, and --gate exits 1."""
    data = _results(run_dir).read_bytes()
    _results(run_dir).write_bytes(data[:-120])
    before = _results(run_dir).read_bytes()

    done = cli_in_process("report", run_dir)

    _no_traceback(done)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].startswith("incomplete: 9 of 10 samples (a torn last line in results.jsonl")
    assert "verdict: INCOMPLETE" in done.stdout and "verdict: FAIL" not in done.stdout
    assert f"{_results(run_dir)}:10: not valid JSON" in done.stderr
    assert cli_in_process("report", run_dir, "--gate").returncode == 1
    assert _results(run_dir).read_bytes() == before


def test_duplicated_lines_are_scored_once_and_counted(run_dir: Path) -> None:
    """The first lines appended again: each sample is scored once (the last record), figures do not move, and the duplicates are counted."""
    clean = json.loads((run_dir / "summary.json").read_text())
    lines = _results(run_dir).read_text().splitlines(keepends=True)
    with _results(run_dir).open("a") as handle:
        handle.writelines(lines[:4])

    done = cli_in_process("report", run_dir)

    _no_traceback(done)
    assert done.returncode == 0, done.stderr
    assert "4 duplicate record(s) dropped" in done.stderr
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["run"]["samples"] == 10 and summary["run"]["duplicates_dropped"] == 4
    assert summary["metrics"] == clean["metrics"] and summary["mcnemar"] == clean["mcnemar"]
    assert summary["verdict"]["status"] == clean["verdict"]["status"]


def test_binary_and_non_object_lines_are_named_by_file_and_line(run_dir: Path) -> None:
    """A line of binary bytes and a JSON line that is not an object: each is named file:line with what is wrong, the
    report is built, nothing is deleted."""
    lines = _results(run_dir).read_bytes().splitlines(keepends=True)
    lines[2] = b"\xff\xfe\x00\x01 binary\n"  # replaces a record: one sample is missing now
    lines.insert(5, b'["not", "an", "object"]\n')
    _results(run_dir).write_bytes(b"".join(lines))
    before = _results(run_dir).read_bytes()

    done = cli_in_process("report", run_dir)

    _no_traceback(done)
    assert done.returncode == 0, done.stderr
    assert f"{_results(run_dir)}:3: not UTF-8 text" in done.stderr
    assert f"{_results(run_dir)}:6: a JSON list, not a sample record object" in done.stderr
    assert done.stdout.splitlines()[0].startswith("incomplete: 9 of 10 samples (2 unusable line(s) in results.jsonl)")
    assert _results(run_dir).read_bytes() == before


def test_a_record_of_another_model_is_refused_unless_included(run_dir: Path) -> None:
    """A record whose model run.json does not list (another run's line appended): report refuses with exit 2 naming
    it, and scores it with --include-foreign."""
    summary_before = (run_dir / "summary.json").read_bytes()
    record = json.loads(_results(run_dir).read_text().splitlines()[0])
    record["sample_id"] = record["sample_id"].replace(record["model"], "openai/other")
    record["model"] = "openai/other"
    with _results(run_dir).open("a") as handle:
        handle.write(json.dumps(record) + "\n")

    refused = cli_in_process("report", run_dir)

    _no_traceback(refused)
    assert refused.returncode == 2
    assert "1 record(s) are outside" in refused.stderr and "model 'openai/other' (1)" in refused.stderr
    assert "--include-foreign" in refused.stderr
    assert (run_dir / "summary.json").read_bytes() == summary_before
    included = cli_in_process("report", run_dir, "--include-foreign")
    assert included.returncode == 0, included.stderr
    assert json.loads((run_dir / "summary.json").read_text())["run"]["foreign_records"] == 1


def test_a_run_still_marked_running_is_incomplete(run_dir: Path) -> None:
    """run.json still says running (the run was killed): the report says incomplete first and --gate exits 1."""
    manifest = json.loads((run_dir / "run.json").read_text())
    manifest["status"] = "running"
    (run_dir / "run.json").write_text(json.dumps(manifest))

    done = cli_in_process("report", run_dir, "--gate")

    _no_traceback(done)
    assert done.returncode == 1
    assert done.stdout.splitlines()[0].startswith("incomplete: 10 of 10 samples (run.json status 'running')")
    assert json.loads((run_dir / "summary.json").read_text())["verdict"]["status"] == "incomplete"


def test_an_empty_results_file_of_a_complete_run_is_incomplete(run_dir: Path) -> None:
    """An empty results.jsonl under a run.json marked complete: "incomplete: 0 of 10 samples", not inconclusive, and --gate exits 1."""
    _results(run_dir).write_text("")

    done = cli_in_process("report", run_dir, "--gate")

    _no_traceback(done)
    assert done.returncode == 1
    assert done.stdout.splitlines()[0].startswith("incomplete: 0 of 10 samples")
    assert "verdict: INCOMPLETE" in done.stdout


def test_a_report_that_cannot_be_written_is_a_message_not_a_traceback(run_dir: Path) -> None:
    """A folder standing where ``index.html`` should be: exit 2 naming the file, no traceback, no temp file left, results untouched."""
    before = _results(run_dir).read_bytes()
    (run_dir / "index.html").unlink()
    (run_dir / "index.html").mkdir()
    done = cli_in_process("report", run_dir)
    assert done.returncode == 2
    _no_traceback(done)
    assert "index.html" in done.stderr and "cannot write the report" in done.stderr
    assert not list(run_dir.glob("*.tmp")) and _results(run_dir).read_bytes() == before


def test_a_report_on_a_read_only_filesystem_is_a_message_not_a_traceback(run_dir: Path, tmp_path: Path) -> None:
    """A run folder on a read-only tmpfs: ``report`` exits 2 saying the folder must be writable, with no traceback."""
    from tests.fault.conftest import remount, tmpfs

    with tmpfs(tmp_path / "ro", "4m") as mount:
        shutil.copytree(run_dir, mount / "run")
        remount(mount, "ro")
        done = cli_in_process("report", mount / "run")
        assert done.returncode == 2
        _no_traceback(done)
        assert "cannot write the report" in done.stderr and "writable" in done.stderr
