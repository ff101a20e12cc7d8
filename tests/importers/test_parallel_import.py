"""``import`` in worker processes (issue 22: LongMemEval S in under 60 s) writes exactly what one process writes.

The workers are real processes. Each test imports the same source twice,
in one process and in workers, and compares every file written (the
conversations, ``_suite.json``, ``SUITE.md``) and the printed fault log: the
duplicate ids renamed, the repairs and drops with their first examples, the
gold audit.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from harness import importers
from harness.importers import FaultLog, parallel, run_import
from tests.importers.importer_fixtures import LOCOMO, LONGMEMEVAL


def _files(folder: Path) -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(folder.iterdir())}


def _grown(tmp_path: Path, source: Path, copies: int) -> Path:
    """The fixture's elements repeated ``copies`` times: every id after the first copy is a duplicate to rename."""
    elements: list[Any] = json.loads(source.read_text(encoding="utf-8"))
    path = tmp_path / source.name
    path.write_text(json.dumps(elements * copies), encoding="utf-8")
    return path


def _both(
    tmp_path: Path, kind: str, source: Path, monkeypatch: pytest.MonkeyPatch, jobs: int = 2
) -> tuple[dict[str, str], list[str], dict[str, str], list[str]]:
    monkeypatch.setattr(importers, "WORKER_MIN_BYTES", 0)
    one_lines: list[str] = []
    many_lines: list[str] = []
    run_import(kind, source, tmp_path / "one", echo=one_lines.append, jobs=1)
    run_import(kind, source, tmp_path / "many", echo=many_lines.append, jobs=jobs)
    return _files(tmp_path / "one"), [line.replace(str(tmp_path / "one"), "OUT") for line in one_lines], \
        _files(tmp_path / "many"), [line.replace(str(tmp_path / "many"), "OUT") for line in many_lines]


@pytest.mark.parametrize(("kind", "source"), [("longmemeval", LONGMEMEVAL), ("locomo", LOCOMO)])
def test_workers_write_the_same_files_renames_faults_and_audit_as_one_process(
    kind: str, source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    grown = _grown(tmp_path, source, copies=3)
    one, one_lines, many, many_lines = _both(tmp_path, kind, grown, monkeypatch)
    assert many_lines == one_lines
    assert many == one  # every file byte for byte, _suite.json (counts, repairs, drops, audit) and SUITE.md too
    assert any("duplicate" in line and "renamed" in line for line in one_lines), one_lines  # renames were exercised


def test_workers_hold_only_a_few_elements_of_the_file_at_once() -> None:
    """The file is read as it is converted: at most two elements per worker are waiting."""
    consumed: list[int] = []

    def elements() -> Any:
        for index, element in enumerate(json.loads(LONGMEMEVAL.read_text(encoding="utf-8")) * 4):
            consumed.append(index)
            yield index, element

    from harness.importers import longmemeval

    results = parallel.convert_all(longmemeval.convert_question, elements(), FaultLog(), set(), jobs=2)
    next(results)
    assert len(consumed) <= 2 * 2 + 1
    rest = list(results)
    assert len(consumed) == 36 and len(rest) == 35


def die_at_element_five(element: Any, index: int, faults: FaultLog, taken: set[str]) -> Any:
    """LongMemEval's converter, except that the worker converting element 5 is killed (as the OOM killer would)."""
    from harness.importers import longmemeval

    if index == 5 and os.getpid() != PARENT:
        os._exit(9)
    return longmemeval.convert_question(element, index, faults, taken)


# The test's own process, set by the test: read at import, it would be the process that imported this module,
# which under a runner that forks each test (mutmut does) is not the one running it, and the test would kill itself.
PARENT: int | None = None


def test_a_worker_that_dies_leaves_no_element_unconverted_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    grown = _grown(tmp_path, LONGMEMEVAL, copies=2)
    monkeypatch.setattr(importers, "WORKER_MIN_BYTES", 0)
    monkeypatch.setattr(sys.modules[__name__], "PARENT", os.getpid())
    run_import("longmemeval", grown, tmp_path / "one", echo=lambda _: None, jobs=1)
    monkeypatch.setitem(importers.FORMATS, "longmemeval",
                        importers.FORMATS["longmemeval"].__class__(die_at_element_five, *list(vars(importers.FORMATS["longmemeval"]).values())[1:]))
    run_import("longmemeval", grown, tmp_path / "many", echo=lambda _: None, jobs=2)
    assert _files(tmp_path / "many") == _files(tmp_path / "one")
    assert "a conversion worker stopped" in capsys.readouterr().err


def test_a_small_file_is_converted_in_this_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[int] = []
    real = parallel.concurrent.futures.ProcessPoolExecutor

    def recording(*args: Any, **kwargs: Any) -> Any:
        started.append(kwargs["max_workers"])
        return real(*args, **kwargs)

    monkeypatch.setattr(parallel.concurrent.futures, "ProcessPoolExecutor", recording)
    run_import("longmemeval", LONGMEMEVAL, tmp_path / "small", echo=lambda _: None, jobs=4)  # a few kB: below the floor
    assert started == []
    monkeypatch.setattr(importers, "WORKER_MIN_BYTES", 0)
    run_import("longmemeval", LONGMEMEVAL, tmp_path / "large", echo=lambda _: None, jobs=4)
    assert started == [4]
