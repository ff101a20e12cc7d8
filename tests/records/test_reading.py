"""``results.scan_results``: every usable record once, every bad line named, nothing deleted."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.records import ResultsError, SampleRecord, iter_records, scan_results


def _record(scenario: str, arm: str = "recall", answer: str = "a", status: str = "ok") -> SampleRecord:
    return SampleRecord(
        sample_id=f"{scenario}|{arm}|m|0", scenario_id=scenario, scenario_hash="h", category="c", arm=arm,
        model="m", epoch=0, seed=1, status=status, final_answer=answer, stop_reason="final_answer",
        started_at="2026-01-01T00:00:00Z", wall_time_s=0.1,
    )


def _write(path: Path, *lines: bytes) -> Path:
    path.write_bytes(b"".join(lines))
    return path


def _line(record: SampleRecord) -> bytes:
    return record.model_dump_json().encode() + b"\n"


def test_scan_keeps_the_last_record_per_sample_id_and_counts_duplicates(tmp_path: Path) -> None:
    path = _write(tmp_path / "r.jsonl", _line(_record("s1", answer="old")), _line(_record("s2")),
                  _line(_record("s1", answer="new")))
    scan = scan_results(path)
    assert [r.final_answer for r in scan.records if r.scenario_id == "s1"] == ["new"]
    assert len(scan.records) == 2 and scan.duplicates == 1 and scan.problems == []


def test_scan_names_binary_and_non_object_lines_by_file_and_line_without_raising(tmp_path: Path) -> None:
    path = _write(tmp_path / "r.jsonl", _line(_record("s1")), b"\xff\xfe\x00garbage\n", b"[1, 2]\n", b"42\n",
                  _line(_record("s2")))
    before = path.read_bytes()
    scan = scan_results(path)
    assert [r.scenario_id for r in scan.records] == ["s1", "s2"]
    assert len(scan.problems) == 3
    assert scan.problems[0].startswith(f"{path}:2: not UTF-8")
    assert f"{path}:3: a JSON list" in scan.problems[1]
    assert f"{path}:4: a JSON int" in scan.problems[2]
    assert not scan.torn_last_line
    assert path.read_bytes() == before  # reading never rewrites


def test_scan_marks_a_torn_last_line(tmp_path: Path) -> None:
    path = _write(tmp_path / "r.jsonl", _line(_record("s1")), _line(_record("s2"))[:40])
    scan = scan_results(path)
    assert scan.torn_last_line and len(scan.problems) == 1 and "interrupted write" in scan.problems[0]
    assert [r.scenario_id for r in scan.records] == ["s1"]


def test_scan_reports_records_that_fail_the_schema_with_the_field(tmp_path: Path) -> None:
    bad = _record("s1").model_dump(mode="json")
    bad["status"] = "maybe"
    import json

    path = _write(tmp_path / "r.jsonl", json.dumps(bad).encode() + b"\n", b'{"schema_version": 9}\n')
    scan = scan_results(path)
    assert "status" in scan.problems[0] and "schema_version 9" in scan.problems[1]


def test_iter_records_still_raises_on_a_bad_line_that_is_not_last(tmp_path: Path) -> None:
    path = _write(tmp_path / "r.jsonl", b"\xff\n", _line(_record("s1")))
    with pytest.raises(ResultsError, match=":1: not UTF-8"):
        list(iter_records(path))
