"""``run --resume`` on a damaged ``results.jsonl``: every bad line named, its sample run again, nothing deleted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.records import RESULTS_FILE, read_manifest, scan_results, write_manifest
from tests.fault.conftest import SMOKE


def _offline_run(tmp_path: Path) -> Path:
    run_dir = tmp_path / "run"
    code = main(["run", "--scenarios", str(SMOKE), "--filter", "smoke-0[12]*", "--out", str(run_dir), "--no-cache", "--no-progress"])
    assert code == 0
    write_manifest(run_dir, read_manifest(run_dir).model_copy(update={"status": "interrupted"}))
    return run_dir


def _resume(run_dir: Path) -> int:
    return main(["run", "--resume", str(run_dir), "--no-cache", "--no-progress"])


def test_resume_reruns_samples_behind_binary_non_object_error_and_torn_lines_and_keeps_every_byte(
    tmp_path: Path, fake_report: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """A results file with a binary line, a JSON array, an error record and a torn last line: resume warns file:line
    for each bad line, re-runs their samples, deletes nothing."""
    run_dir = _offline_run(tmp_path)
    results = run_dir / RESULTS_FILE
    records = [json.loads(line) for line in results.read_text(encoding="utf-8").splitlines()]
    assert len(records) == 6
    failed = dict(
        records[2],
        status="error",
        error={"type": "RateLimitError", "message": "busy", "attempts": 5},
        final_answer=None,
        stop_reason="error",
    )
    damaged = b"".join(
        [
            (json.dumps(records[0]) + "\n").encode(),
            b"\x00\xff\xfe binary garbage \x80\n",  # line 2: bytes that are not text (records[1] is lost)
            b'["a", "json", "array"]\n',  # line 3: JSON, but not a record
            (json.dumps(failed) + "\n").encode(),  # line 4: a failed attempt of records[2]
            (json.dumps(records[3]) + "\n").encode(),
            (json.dumps(records[4]) + "\n").encode(),
            (json.dumps(records[5]))[:50].encode(),  # line 7: cut off, no newline
        ]
    )
    results.write_bytes(damaged)
    capsys.readouterr()

    code = _resume(run_dir)

    err = capsys.readouterr().err
    assert code == 0, err
    assert "Traceback" not in err
    assert f"{results}:2: not UTF-8 text" in err and f"{results}:3: a JSON list, not a sample record object" in err
    assert f"{results}:7: not valid JSON" in err
    assert "3 samples to run (3 already done, 1 failed before and run again)" in err
    after = results.read_bytes()
    assert after.startswith(damaged + b"\n")  # nothing deleted; the torn line is closed before the first new record
    scan = scan_results(results)
    assert sorted(r.sample_id for r in scan.records) == sorted(r["sample_id"] for r in records)
    assert {r.status for r in scan.records} == {"ok"}
    assert len(scan.problems) == 3  # the same three bad lines, and no new one
    assert read_manifest(run_dir).status == "complete"


def test_resume_after_a_torn_last_line_does_not_glue_the_next_record_to_it(tmp_path: Path, fake_report: None) -> None:
    """A results file ending in a torn line (no newline): the first appended record starts on a line of its own and is readable."""
    run_dir = _offline_run(tmp_path)
    results = run_dir / RESULTS_FILE
    text = results.read_text(encoding="utf-8")
    results.write_text(text[: len(text) - 100], encoding="utf-8")

    assert _resume(run_dir) == 0

    scan = scan_results(results)
    assert len(scan.records) == 6 and len(scan.problems) == 1 and scan.lines == 7
