"""The viewer's incremental index: a poll re-reads only the runs whose files changed."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

import harness.runs.viewer_index as viewer_index
from harness.runs.viewer_index import RunIndex, count_lines
from tests.runs.compare_factories import synthetic_run


@pytest.fixture()
def runs(tmp_path: Path) -> Path:
    """Three finished runs with reports below ``tmp_path / "root"``."""
    first = synthetic_run(tmp_path / "root" / "r0")
    for i in (1, 2):
        shutil.copytree(first, tmp_path / "root" / f"r{i}")
    return tmp_path / "root"


@pytest.fixture()
def reads(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every summary.json the index reads, in order."""
    seen: list[Path] = []
    real = viewer_index.read_summary

    def counting(path: Path) -> dict:
        seen.append(path)
        return real(path)

    monkeypatch.setattr(viewer_index, "read_summary", counting)
    return seen


def test_an_unchanged_summary_is_not_read_again(runs: Path, reads: list[Path]) -> None:
    index = RunIndex(runs)
    first = index.rows()
    assert len(reads) == 3 and len(first) == 3
    assert index.rows() == first and len(reads) == 3  # a second poll: nothing changed, nothing read


def test_a_changed_summary_is_read_again_and_only_it(runs: Path, reads: list[Path]) -> None:
    index = RunIndex(runs)
    index.rows()
    path = runs / "r1" / "summary.json"
    summary = json.loads(path.read_text(encoding="utf-8"))
    summary["verdict"]["status"] = "fail"
    path.write_text(json.dumps(summary), encoding="utf-8")
    os.utime(path, ns=(1, 1))  # another mtime even on a coarse clock
    rows = {r["path"]: r for r in index.rows()}
    assert reads[3:] == [path.resolve()] and rows["r1"]["verdict"] == "fail"


def test_a_growing_results_file_updates_the_count_without_reading_the_summary(runs: Path, reads: list[Path]) -> None:
    index = RunIndex(runs)
    before = {r["path"]: r["samples_done"] for r in index.rows()}
    with (runs / "r2" / "results.jsonl").open("a", encoding="utf-8") as handle:
        handle.write("{}\n{}\n")
    after = {r["path"]: r["samples_done"] for r in index.rows()}
    assert after["r2"] == before["r2"] + 2 and len(reads) == 3


def test_a_run_added_or_removed_appears_or_vanishes_on_the_next_poll(runs: Path, reads: list[Path]) -> None:
    index = RunIndex(runs)
    index.rows()
    shutil.copytree(runs / "r0", runs / "r3")
    shutil.rmtree(runs / "r1")
    assert sorted(r["path"] for r in index.rows()) == ["r0", "r2", "r3"] and len(reads) == 4


def test_count_lines_reads_only_what_was_appended(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    path.write_bytes(b"a\nb\n")
    first = count_lines(path)
    with path.open("ab") as handle:
        handle.write(b"c\nd")
    second = count_lines(path, first)
    assert (first.lines, second.lines, second.size) == (2, 3, 7)
    path.write_bytes(b"x\n")  # replaced by a shorter file: counted from its start
    assert count_lines(path, second).lines == 1


def test_a_run_folder_removed_while_it_is_read_drops_out_of_the_index(runs: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """r1's folder deleted between its run.json and its summary.json being read: the poll lists r0 and r2, no error."""
    real = viewer_index.read_summary

    def vanishing(path: Path) -> dict:
        if path.parent.name == "r1":
            shutil.rmtree(path.parent)
        return real(path)

    monkeypatch.setattr(viewer_index, "read_summary", vanishing)
    assert sorted(r["path"] for r in RunIndex(runs).rows()) == ["r0", "r2"]


def test_a_run_that_fails_in_a_way_no_check_foresaw_costs_its_row_only(runs: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """An unforeseen error reading r1 (here planted in its summary's reader): r1 is a row naming the error, the
    other runs are listed as ever."""
    real = viewer_index.read_summary

    def broken(path: Path) -> dict:
        if path.parent.name == "r1":
            raise KeyError("planted")
        return real(path)

    monkeypatch.setattr(viewer_index, "read_summary", broken)
    rows = {r["path"]: r for r in RunIndex(runs).rows()}
    own = json.loads((runs / "r0" / "summary.json").read_text(encoding="utf-8"))["verdict"]["status"]
    assert sorted(rows) == ["r0", "r1", "r2"] and rows["r0"]["verdict"] == own
    assert rows["r1"]["status"] == "unreadable" and "KeyError" in rows["r1"]["problem"]
