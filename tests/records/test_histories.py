"""Pasted histories stored once per run, by reference: written once, read back whole, reported as if inline."""

from __future__ import annotations

import base64
import json
import re
import shutil
import zlib
from pathlib import Path

import pytest

from harness.records import (
    HISTORIES_FILE,
    RESULTS_FILE,
    SampleRecord,
    by_reference_line,
    history_digest,
    iter_records,
    pasted_span,
    scan_results,
)

ROOT = Path(__file__).resolve().parents[2]
LOCOMO_MINI = ROOT / "tests" / "fixtures" / "importers" / "locomo_mini.json"
REPORT_FILES = ("summary.json", "scores.jsonl", "metrics.csv", "junit.xml", "index.html")


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A LoCoMo-shaped suite (several probes per conversation, one pasted history each) run offline in three arms."""
    from harness.cli import main

    base = tmp_path_factory.mktemp("histories")
    suite, run_dir = base / "suite", base / "run"
    assert main(["import", "locomo", str(LOCOMO_MINI), str(suite)]) == 0
    code = main(["run", "--scenarios", str(suite), "--out", str(run_dir), "--no-cache", "--no-progress"])
    assert code in (0, 1)
    return run_dir


def _disk_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _unpack(line: dict) -> list[dict]:
    """A schema 3 line's schema 2 lines (any other line as it is)."""
    if line.get("schema_version") != 3:
        return [line]
    inner = zlib.decompress(base64.b64decode(line["zlib"])).decode("utf-8")
    return [json.loads(text) for text in inner.splitlines() if text.strip()]


def _lines(path: Path) -> list[dict]:
    """The histories file's lines as schema 2 wrote them: each compressed line unpacked."""
    return [inner for line in _disk_lines(path) for inner in _unpack(line)]


def _edit_inside(path: Path, old: str, new: str) -> None:
    """Replace ``old`` by ``new`` inside every compressed line, written back compressed (an edit made on purpose)."""
    edited = []
    for line in _disk_lines(path):
        inner = zlib.decompress(base64.b64decode(line["zlib"])).decode("utf-8").replace(old, new)
        edited.append(json.dumps({**line, "zlib": base64.b64encode(zlib.compress(inner.encode("utf-8"))).decode("ascii")}))
    path.write_text("".join(f"{text}\n" for text in edited), encoding="utf-8")


def _inline_copy(run_dir: Path, target: Path) -> Path:
    """The same run with every history inline, as schema 1 wrote it (no histories.jsonl, no ``pasted``)."""
    shutil.copytree(run_dir, target)
    (target / HISTORIES_FILE).unlink()
    records = list(iter_records(run_dir / RESULTS_FILE))
    with (target / RESULTS_FILE).open("w", encoding="utf-8") as out:
        for record in records:
            data = record.model_dump(mode="json", exclude={"pasted"})
            data["schema_version"] = 1
            out.write(json.dumps(data) + "\n")
    return target


def _report_outputs(run_dir: Path) -> dict[str, str]:
    from harness.report import build_report

    build_report(run_dir)
    stamp = re.escape(json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))["generated_at"])
    # only the generation time itself: a run that started in the same second keeps its started_at as written
    generated = re.compile(rf'("generated_at"\s*:\s*"){stamp}"|(generated ){stamp}')
    return {name: generated.sub(lambda m: (m.group(1) or m.group(2)) + ("<generated_at>\"" if m.group(1) else "<generated_at>"),
                                (run_dir / name).read_text(encoding="utf-8")).replace(str(run_dir), "<run>")
            for name in REPORT_FILES}


def test_a_full_history_run_writes_each_pasted_history_once(finished_run: Path) -> None:
    raw = _lines(finished_run / RESULTS_FILE)
    pasted = [r for r in raw if r["arm"] == "full_history" and r["pasted"]]
    conversations = {r["scenario_id"].split("/")[0] for r in pasted}
    histories = [h for h in _lines(finished_run / HISTORIES_FILE) if "parts" in h]  # not the shared messages' lines
    assert len(pasted) > len(conversations) >= 2  # several probes share each conversation's history
    assert len(histories) == len({h["digest"] for h in histories}) == len({r["pasted"]["digest"] for r in pasted})
    for record in pasted:  # on disk: one marker where the span was
        marker = record["messages"][record["pasted"]["at"]]
        assert marker == {"role": "pasted_history", "digest": record["pasted"]["digest"], "count": record["pasted"]["count"]}
    assert all(r["pasted"] is None for r in raw if r["arm"] != "full_history")


def test_resolved_messages_are_exactly_the_prompt_full_history_built(finished_run: Path) -> None:
    from harness.memory_systems.prompts import build_full_history
    from harness.scenarios import load_scenarios

    manifest = json.loads((finished_run / "run.json").read_text(encoding="utf-8"))
    scenarios = {s.id: s for s in load_scenarios(manifest["scenario_paths"])}
    records = [r for r in iter_records(finished_run / RESULTS_FILE) if r.arm == "full_history"]
    assert records and all(r.pasted is not None for r in records)
    for record in records:
        built = build_full_history(scenarios[record.scenario_id]).messages
        assert record.messages[:len(built)] == built
        assert history_digest(record.messages[1:1 + record.pasted.count]) == record.pasted.digest


def test_report_page_and_scores_are_identical_to_the_inline_form(finished_run: Path, tmp_path: Path) -> None:
    by_reference = _report_outputs(shutil.copytree(finished_run, tmp_path / "run"))
    inline = _report_outputs(_inline_copy(finished_run, tmp_path / "inline").rename(tmp_path / "run2"))
    inline = {name: text.replace(str(tmp_path / "run2"), "<run>") for name, text in inline.items()}
    digest = json.loads(by_reference["summary.json"])["run"]["results_sha256"]  # names results.jsonl's own bytes
    inline["summary.json"] = inline["summary.json"].replace(json.loads(inline["summary.json"])["run"]["results_sha256"], digest)
    for name in REPORT_FILES:
        assert by_reference[name] == inline[name], f"{name} differs between by-reference and inline histories"
    assert (tmp_path / "run" / RESULTS_FILE).stat().st_size < (tmp_path / "run2" / RESULTS_FILE).stat().st_size


def test_an_old_format_folder_with_inline_histories_still_reads(finished_run: Path, tmp_path: Path) -> None:
    old = _inline_copy(finished_run, tmp_path / "old")
    assert {json.loads(line)["schema_version"] for line in (old / RESULTS_FILE).read_text().splitlines()} == {1}
    new, legacy = scan_results(finished_run / RESULTS_FILE), scan_results(old / RESULTS_FILE)
    assert not legacy.problems and len(legacy.records) == len(new.records)
    assert [r.messages for r in legacy.records] == [r.messages for r in new.records]


def test_resume_writes_no_second_copy_of_a_history(finished_run: Path, tmp_path: Path) -> None:
    from harness.cli import main

    run_dir = shutil.copytree(finished_run, tmp_path / "run")
    lines = (run_dir / RESULTS_FILE).read_text(encoding="utf-8").splitlines(keepends=True)
    full = [line for line in lines if '"arm":"full_history"' in line]
    kept = [line for line in lines if '"arm":"full_history"' not in line] + full[:1]
    (run_dir / RESULTS_FILE).write_text("".join(kept), encoding="utf-8")  # an interrupted run: full_history barely started
    before = (run_dir / HISTORIES_FILE).read_text(encoding="utf-8")
    assert main(["run", "--resume", str(run_dir), "--no-cache", "--no-progress"]) in (0, 1)
    histories = _lines(run_dir / HISTORIES_FILE)
    assert (run_dir / HISTORIES_FILE).read_text(encoding="utf-8") == before  # every history was already there
    assert len(histories) == len({h["digest"] for h in histories})
    resumed = {r.sample_id: r.messages for r in iter_records(run_dir / RESULTS_FILE)}
    assert resumed == {r.sample_id: r.messages for r in iter_records(finished_run / RESULTS_FILE)}


def test_resume_after_histories_were_lost_writes_them_again(finished_run: Path, tmp_path: Path) -> None:
    """A record whose history is gone is unusable (named by line): resume runs its sample again and writes the history again."""
    from harness.cli import main

    run_dir = shutil.copytree(finished_run, tmp_path / "run")
    (run_dir / HISTORIES_FILE).unlink()
    scan = scan_results(run_dir / RESULTS_FILE)
    assert scan.problems and all("is not in" in p and HISTORIES_FILE in p for p in scan.problems)
    assert main(["run", "--resume", str(run_dir), "--no-cache", "--no-progress"]) in (0, 1)
    again = scan_results(run_dir / RESULTS_FILE)
    assert len(again.records) == len(scan_results(finished_run / RESULTS_FILE).records)
    # The old lines stay in the file; with their history written again they read too, as older duplicates.
    assert not again.problems and again.duplicates == len(scan.problems)


def _record(messages: list[dict], pasted: int) -> SampleRecord:
    return SampleRecord(sample_id="c/q|full_history|m|0", scenario_id="c/q", scenario_hash="0" * 64, category="single_hop",
                        arm="full_history", model="m", epoch=0, seed=0, status="ok", final_answer="x", stop_reason="final_answer",
                        messages=messages, pasted=pasted_span(messages, 1, pasted), started_at="2026-01-01T00:00:00Z", wall_time_s=0.1)


def test_a_marker_naming_another_history_is_refused_by_line(tmp_path: Path) -> None:
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "a"}, {"role": "assistant", "content": "b"},
                {"role": "user", "content": "q"}]
    record = _record(messages, 2)
    line = json.loads(by_reference_line(record))
    line["messages"][1]["digest"] = "f" * 64
    (tmp_path / RESULTS_FILE).write_text(json.dumps(line) + "\n", encoding="utf-8")
    scan = scan_results(tmp_path / RESULTS_FILE)
    assert not scan.records and "results.jsonl:1" in scan.problems[0] and "pasted.digest" in scan.problems[0]


def test_a_history_edited_after_it_was_written_is_never_spliced_in(tmp_path: Path) -> None:
    """A histories.jsonl line whose messages no longer hash to its digest: the record needing it is a named bad line."""
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "a"}, {"role": "assistant", "content": "b"},
                {"role": "user", "content": "q"}]
    record = _record(messages, 2)
    assert record.pasted is not None
    forged = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "the answer is 42"}]
    (tmp_path / HISTORIES_FILE).write_text(json.dumps({"digest": record.pasted.digest, "schema_version": 1,
                                                       "messages": forged}) + "\n", encoding="utf-8")
    (tmp_path / RESULTS_FILE).write_text(by_reference_line(record) + "\n", encoding="utf-8")
    scan = scan_results(tmp_path / RESULTS_FILE)
    assert not scan.records and "results.jsonl:1" in scan.problems[0] and "is not in" in scan.problems[0]


def test_a_schema_1_record_with_pasted_is_refused(tmp_path: Path) -> None:
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "a"}, {"role": "user", "content": "q"}]
    data = _record(messages, 1).model_dump(mode="json")
    data["schema_version"] = 1
    (tmp_path / RESULTS_FILE).write_text(json.dumps(data) + "\n", encoding="utf-8")
    assert "schema 1 record holds its history inline" in scan_results(tmp_path / RESULTS_FILE).problems[0]


def test_a_plain_handle_gets_the_record_inline(tmp_path: Path) -> None:
    """Anything but the run's ResultsWriter (e.g. a test's file) writes whole messages, which read back the same."""
    from harness.records import append_record

    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "a"}, {"role": "user", "content": "q"}]
    with (tmp_path / RESULTS_FILE).open("w", encoding="utf-8") as handle:
        append_record(handle, _record(messages, 1))
    (read,) = iter_records(tmp_path / RESULTS_FILE)
    assert read.messages == messages and not (tmp_path / HISTORIES_FILE).exists()


def test_a_workers_run_writes_each_pasted_history_once_too(finished_run: Path, tmp_path: Path) -> None:
    """With --workers the parent alone writes: a worker's record arrives inline and is written by reference."""
    from harness.cli import main

    manifest = json.loads((finished_run / "run.json").read_text(encoding="utf-8"))
    run_dir = tmp_path / "run"
    code = main(["run", "--scenarios", *manifest["scenario_paths"], "--arms", "full_history", "--workers", "2", "--max-concurrency", "2",
                 "--out", str(run_dir), "--no-cache", "--no-progress"])
    assert code in (0, 1)
    raw = _lines(run_dir / RESULTS_FILE)
    assert raw and all(r["messages"][1]["role"] == "pasted_history" for r in raw)
    assert len([h for h in _lines(run_dir / HISTORIES_FILE) if "parts" in h]) == len({r["pasted"]["digest"] for r in raw})
    alone = {r.sample_id: r.messages for r in iter_records(finished_run / RESULTS_FILE) if r.arm == "full_history"}
    assert {r.sample_id: r.messages for r in iter_records(run_dir / RESULTS_FILE)} == alone


def _long(n: int, role: str = "user") -> dict:
    return {"role": role, "content": f"[session {n}] " + "a long turn of a session pasted into several histories " * 12}


def test_a_session_pasted_into_two_histories_is_written_once_also_across_a_resume(tmp_path: Path) -> None:
    """LongMemEval S shares filler sessions between questions: each long message is one line, named by both histories."""
    from harness.records.writing import ResultsWriter

    system, probe = {"role": "system", "content": "s"}, {"role": "user", "content": "q"}
    first = _record([system, _long(1), _long(2, "assistant"), {"role": "user", "content": "short"}, probe], 3)
    second = _record([system, _long(3), _long(2, "assistant"), _long(1), probe], 3).model_copy(
        update={"sample_id": "c/q2|full_history|m|0", "scenario_id": "c/q2"}
    )
    with ResultsWriter(tmp_path / RESULTS_FILE) as writer:
        writer.write_record(first)
    with ResultsWriter(tmp_path / RESULTS_FILE) as writer:  # a resumed run: the messages already written are not written again
        writer.write_record(second)
    on_disk = _disk_lines(tmp_path / HISTORIES_FILE)
    assert [line["schema_version"] for line in on_disk] == [3, 3] and "[session" not in (tmp_path / HISTORIES_FILE).read_text()
    lines = _lines(tmp_path / HISTORIES_FILE)
    assert [line["holds"] for line in on_disk] == [[h["digest"] for h in _unpack(line) if "message" in h] for line in on_disk]
    shared = [h["message"] for h in lines if "message" in h]
    assert sorted(m["content"][:11] for m in shared) == ["[session 1]", "[session 2]", "[session 3]"]
    assert [len(h["parts"]) for h in lines if "parts" in h] == [3, 3] and {h["schema_version"] for h in lines} == {2}
    assert lines[-1]["parts"][1] == lines[1]["digest"]  # session 2, by name
    scan = scan_results(tmp_path / RESULTS_FILE)
    assert not scan.problems and [r.messages for r in scan.records] == [first.messages, second.messages]


def test_a_schema_1_histories_file_still_reads(tmp_path: Path) -> None:
    messages = [{"role": "system", "content": "s"}, _long(1), _long(2, "assistant"), {"role": "user", "content": "q"}]
    record = _record(messages, 2)
    assert record.pasted is not None
    (tmp_path / HISTORIES_FILE).write_text(json.dumps({"digest": record.pasted.digest, "schema_version": 1,
                                                       "messages": messages[1:3]}) + "\n", encoding="utf-8")
    (tmp_path / RESULTS_FILE).write_text(by_reference_line(record) + "\n", encoding="utf-8")
    scan = scan_results(tmp_path / RESULTS_FILE)
    assert not scan.problems and scan.records[0].messages == messages


def _written(tmp_path: Path) -> tuple[list[dict], SampleRecord]:
    """A record pasting two long messages, written by a run's writer into ``tmp_path``."""
    from harness.records.writing import ResultsWriter

    messages = [{"role": "system", "content": "s"}, _long(1), _long(2, "assistant"), {"role": "user", "content": "q"}]
    record = _record(messages, 2)
    with ResultsWriter(tmp_path / RESULTS_FILE) as writer:
        writer.write_record(record)
    return messages, record


def _refused_for_its_history(tmp_path: Path) -> None:
    scan = scan_results(tmp_path / RESULTS_FILE)
    assert not scan.records and "results.jsonl:1" in scan.problems[0] and "is not in" in scan.problems[0]


def test_a_shared_message_edited_after_it_was_written_is_never_spliced_in(tmp_path: Path) -> None:
    _written(tmp_path)
    _edit_inside(tmp_path / HISTORIES_FILE, "[session 2]", "[session 9]")
    _refused_for_its_history(tmp_path)


def test_a_schema_2_histories_file_still_reads(tmp_path: Path) -> None:
    """A run written before histories were compressed: its schema 2 lines, as they were, read back whole."""
    messages, _ = _written(tmp_path)
    inner = _lines(tmp_path / HISTORIES_FILE)
    (tmp_path / HISTORIES_FILE).write_text("".join(json.dumps(line) + "\n" for line in inner), encoding="utf-8")
    assert {line["schema_version"] for line in _disk_lines(tmp_path / HISTORIES_FILE)} == {2}
    scan = scan_results(tmp_path / RESULTS_FILE)
    assert not scan.problems and scan.records[0].messages == messages


def test_a_compressed_line_that_does_not_decompress_is_reported_by_the_record_needing_it(tmp_path: Path) -> None:
    _written(tmp_path)
    line = _disk_lines(tmp_path / HISTORIES_FILE)[0]
    (tmp_path / HISTORIES_FILE).write_text(json.dumps({**line, "zlib": line["zlib"][:40] + "A" * 8}) + "\n", encoding="utf-8")
    _refused_for_its_history(tmp_path)
