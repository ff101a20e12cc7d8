"""``results.scan_results``: every usable record once, every bad line named, nothing deleted."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.records import (
    ResultsError,
    RunManifest,
    SampleRecord,
    foreign_check,
    foreign_reasons,
    iter_records,
    scan_results,
)


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


def _manifest(epochs: int = 2) -> RunManifest:
    return RunManifest(run_id="r", harness_version="0", status="complete", started_at="t", models=["m"], arms=["recall"],
                       epochs=epochs, seed=0, scenario_paths=[], scenario_ids=["s1"], suite_hash="h")


def test_a_record_the_manifest_plans_is_not_foreign() -> None:
    assert foreign_reasons(_record("s1"), _manifest()) == []


def test_foreign_reasons_names_each_field_run_json_does_not_plan() -> None:
    record = _record("s9", arm="baseline").model_copy(update={"model": "other", "epoch": 2})
    assert foreign_reasons(record, _manifest(epochs=2)) == ["model 'other'", "arm 'baseline'", "scenario 's9'", "epoch 2"]


@pytest.mark.parametrize("epoch", [-1, 2])
def test_an_epoch_outside_the_planned_range_is_foreign_even_though_the_record_model_accepts_it(epoch: int) -> None:
    """The record model takes any int epoch; the manifest check alone keeps ``-1`` and ``epochs`` out."""
    record = SampleRecord.model_validate({**_record("s1").model_dump(), "epoch": epoch})
    assert foreign_check(_manifest(epochs=2))(record) == [f"epoch {epoch}"]
    assert foreign_check(_manifest(epochs=2))(_record("s1").model_copy(update={"epoch": 1})) == []


@pytest.mark.parametrize("version", [True, 1.0, 2.0])
def test_a_schema_version_that_only_equals_a_known_one_is_refused_by_the_reader(tmp_path: Path, version: object) -> None:
    """``true`` and ``2.0`` compare equal to known versions and the record model accepts them; the reader's type check alone refuses them."""
    import json

    data = {**_record("s1").model_dump(mode="json"), "schema_version": version}
    SampleRecord.model_validate(data)  # the record model alone lets it through
    scan = scan_results(_write(tmp_path / "r.jsonl", json.dumps(data).encode() + b"\n"))
    assert scan.records == [] and f"schema_version {version!r} is not supported" in scan.problems[0]


def test_a_schema_error_says_how_many_more_problems_the_record_has(tmp_path: Path) -> None:
    import json

    one = {**_record("s1").model_dump(mode="json"), "status": "maybe"}
    two = {**one, "epoch": "first"}
    scan = scan_results(_write(tmp_path / "r.jsonl", json.dumps(one).encode() + b"\n", json.dumps(two).encode() + b"\n"))
    assert "more)" not in scan.problems[0] and scan.problems[1].endswith("(+1 more)")


def test_only_an_unfinished_last_line_is_marked_torn(tmp_path: Path) -> None:
    bad = b'{"schema_version": 9}\n'
    clean = scan_results(_write(tmp_path / "clean.jsonl", _line(_record("s1")), bad))  # a bad but whole last line
    assert not clean.torn_last_line and "interrupted write" not in clean.problems[0]
    torn = scan_results(_write(tmp_path / "torn.jsonl", bad, _line(_record("s1"))[:40]))  # a bad middle line, a torn last one
    assert torn.torn_last_line and "interrupted write" not in torn.problems[0] and "interrupted write" in torn.problems[1]


def test_records_follow_the_order_of_their_newest_line(tmp_path: Path) -> None:
    """A re-run sample's record takes the place of its newest line (the order a resumed run finished them)."""
    path = _write(tmp_path / "r.jsonl", _line(_record("s1", answer="old")), _line(_record("s2")), _line(_record("s1", answer="new")))
    assert [(r.scenario_id, r.final_answer) for r in scan_results(path).records] == [("s2", "a"), ("s1", "new")]


def test_the_scan_counts_non_blank_lines_and_digests_the_bytes_it_read(tmp_path: Path) -> None:
    import hashlib

    path = _write(tmp_path / "r.jsonl", _line(_record("s1")), b"\n", b"   \n", b"42\n", _line(_record("s2")))
    scan = scan_results(path)
    assert scan.lines == 3 and scan.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_missing_results_file_reads_as_empty(tmp_path: Path) -> None:
    scan = scan_results(tmp_path / "none.jsonl")
    assert (scan.records, scan.problems, scan.lines, scan.sha256) == ([], [], 0, "")


def test_a_record_whose_sample_id_is_not_its_own_is_refused(tmp_path: Path) -> None:
    """A line claiming another sample's id would stand in for that sample and hide its own."""
    forged = _record("s1").model_copy(update={"sample_id": "s1|baseline|m|0"})
    scan = scan_results(_write(tmp_path / "r.jsonl", _line(forged), _line(_record("s2"))))
    assert [r.scenario_id for r in scan.records] == ["s2"]
    assert "sample_id 's1|baseline|m|0' does not match" in scan.problems[0] and "'s1|recall|m|0'" in scan.problems[0]


def test_every_dropped_duplicate_is_counted(tmp_path: Path) -> None:
    path = _write(tmp_path / "r.jsonl", *[_line(_record("s1", answer=str(n))) for n in range(3)], _line(_record("s2")))
    scan = scan_results(path)
    assert scan.duplicates == 2 and [r.final_answer for r in scan.records if r.scenario_id == "s1"] == ["2"]


def test_iter_records_skips_a_torn_last_line(tmp_path: Path) -> None:
    path = _write(tmp_path / "r.jsonl", _line(_record("s1")), _line(_record("s2"))[:40])
    assert [r.scenario_id for r in iter_records(path)] == ["s1"]


def test_read_manifest_says_whether_the_folder_the_manifest_or_its_content_is_wrong(tmp_path: Path) -> None:
    from harness.records import MANIFEST_FILE, read_manifest

    with pytest.raises(ResultsError, match=r"nope: no such run folder \(the folder does not exist\)"):
        read_manifest(tmp_path / "nope")
    with pytest.raises(ResultsError, match=rf"{MANIFEST_FILE}: no run manifest; is .* a recall-eval run folder\?"):
        read_manifest(tmp_path)
    (tmp_path / MANIFEST_FILE).write_text('{"run_id": 5}', encoding="utf-8")
    with pytest.raises(ResultsError, match=rf"{MANIFEST_FILE}: invalid run manifest: run_id: "):
        read_manifest(tmp_path)
    (tmp_path / MANIFEST_FILE).write_text(_manifest().model_dump_json(), encoding="utf-8")
    assert read_manifest(tmp_path) == _manifest()


@pytest.mark.parametrize(("content", "problem"), [
    ('{"run_id": 5}', "run_id: Input should be a valid string (+10 more)"),
    ("{not json", "(manifest): Invalid JSON: "),
])
def test_an_invalid_manifest_is_named_on_one_line_by_its_first_problem(tmp_path: Path, content: str, problem: str) -> None:
    """pydantic's own message is two lines per error (a 2 KB block for one bad field of run.json); the reader says the first, and how many more."""
    from harness.records import MANIFEST_FILE, read_manifest

    (tmp_path / MANIFEST_FILE).write_text(content, encoding="utf-8")
    with pytest.raises(ResultsError) as raised:
        read_manifest(tmp_path)
    assert "\n" not in str(raised.value) and f"{MANIFEST_FILE}: invalid run manifest: {problem}" in str(raised.value)


def test_a_schema_error_names_a_nested_field_by_its_dotted_path_and_a_single_error_alone(tmp_path: Path) -> None:
    """One bad field deep in a record: the line says where (``model_calls.0.prompt_tokens``) and nothing more."""
    import json

    data = _record("s1").model_dump(mode="json")
    data["model_calls"] = [{"round": 0, "latency_s": 1.0, "prompt_tokens": "many", "completion_tokens": 5,
                           "usage_source": "response"}]
    scan = scan_results(_write(tmp_path / "r.jsonl", json.dumps(data).encode() + b"\n"))
    assert scan.problems == [f"{tmp_path / 'r.jsonl'}:1: invalid sample record: model_calls.0.prompt_tokens: "
                             "Input should be a valid integer, unable to parse string as an integer"]
