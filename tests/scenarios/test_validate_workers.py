"""``validate`` in worker processes (issue 22: a LongMemEval S suite in under 20 s) finds exactly what one process finds.

The workers are real processes (fork on Linux). Each test compares a
worker load with the one-process load of the same files: problems with
their files and lines, counts, and the duplicate ids whose first file is
checked by another worker than the later one.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from harness import cli
from harness.scenarios import discovery, loading
from harness.scenarios.loading import load_suite
from tests.scenarios.test_json_fast_path import _conversation, _write

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _mixed_suite(tmp_path: Path) -> Path:
    """Good, broken and duplicate files of every kind: YAML and JSON syntax, defaults, a conversation folder."""
    suite = tmp_path / "suite"
    out, data = _conversation(tmp_path / "lme", probes=3)
    shutil.copytree(out, suite / "lme")
    _write(suite / "lme" / "0a995998.yaml", data)
    _write(suite / "lme" / "copy.yaml", {**data, "probes": data["probes"][1:2]})  # q2 again: a duplicate in JSON syntax
    broken = dict(data, probes=[{**data["probes"][0], "id": "bad", "expect": {"abstain": "perhaps"}}])
    _write(suite / "lme" / "broken.yaml", {**broken, "id": "other"})
    for name in ("good", "broken", "duplicates", "defaults", "warnings"):
        shutil.copytree(FIXTURES / "scenarios" / name, suite / name)
    shutil.copytree(FIXTURES / "conversation_suite", suite / "conversations")
    (suite / "unreadable.yaml").write_bytes(b"id: [unclosed\n")
    return suite


def _as_seen(load: loading.SuiteLoad) -> tuple[list[str], int, int, list[Path]]:
    return [f"{p} [{p.severity}]" for p in load.problems], load.passed, load.skipped, load.files


def test_workers_find_the_same_problems_lines_counts_and_duplicates_as_one_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = _mixed_suite(tmp_path)
    monkeypatch.setattr(loading, "WORKER_MIN_BYTES", 0)
    one = load_suite([suite], keep=False, jobs=1)
    workers = load_suite([suite], keep=False, jobs=2)
    assert _as_seen(workers) == _as_seen(one)
    seen = _as_seen(workers)[0]
    assert any("duplicate scenario id" in p and "0a995998.yaml:" in p for p in seen), seen  # a line from another worker's file
    assert sum("[error]" in p for p in seen) >= 3 and workers.passed > 5


def _spawned_workers(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Record every worker pool :func:`loading._loads_in_workers` starts (its ``max_workers``)."""
    started: list[int] = []
    real = loading.concurrent.futures.ProcessPoolExecutor

    def recording(*args: object, **kwargs: object) -> object:
        started.append(int(kwargs["max_workers"]))  # type: ignore[call-overload]
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(loading.concurrent.futures, "ProcessPoolExecutor", recording)
    return started


def test_a_small_suite_a_kept_load_or_one_job_stays_in_this_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    suite = _mixed_suite(tmp_path)
    started = _spawned_workers(monkeypatch)
    load_suite([suite], keep=False, jobs=4)  # a few kB: below WORKER_MIN_BYTES
    monkeypatch.setattr(loading, "WORKER_MIN_BYTES", 0)
    load_suite([suite], jobs=4)  # keep=True: the scenarios must come back whole
    load_suite([suite], keep=False, jobs=1)
    assert started == []
    load_suite([suite], keep=False, jobs=64)
    assert started == [len(discovery.discover_files([suite])[0])]  # never more workers than files to check


_LOAD_UNIT_LIGHT = loading._load_unit_light


def die_on_copy(unit: loading._Unit, selection: loading.Selection) -> loading._Loaded:
    """A worker that is killed (as the OOM killer would) when it reaches ``copy.yaml``."""
    if unit[0].name == "copy.yaml":
        os._exit(9)
    return _LOAD_UNIT_LIGHT(unit, selection)


def test_a_worker_that_dies_leaves_nothing_unchecked_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = _mixed_suite(tmp_path)
    monkeypatch.setattr(loading, "WORKER_MIN_BYTES", 0)
    one = load_suite([suite], keep=False, jobs=1)
    monkeypatch.setattr(loading, "_load_unit_light", die_on_copy)
    survived = load_suite([suite], keep=False, jobs=2)
    assert _as_seen(survived) == _as_seen(one)
    assert "a validation worker stopped" in capsys.readouterr().err


def test_the_validate_command_prints_the_same_with_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = _mixed_suite(tmp_path)
    monkeypatch.setattr(loading, "WORKER_MIN_BYTES", 0)
    started = _spawned_workers(monkeypatch)
    assert cli.main(["validate", "--jobs", "1", str(suite)]) == 1
    alone = capsys.readouterr().out
    assert cli.main(["validate", "--jobs", "2", str(suite)]) == 1
    assert capsys.readouterr().out == alone and started == [2]
    assert "errors" in alone.splitlines()[-1]


@pytest.mark.parametrize("jobs", ["0", "-1", "two"])
def test_a_jobs_count_below_one_or_not_a_number_is_refused(jobs: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        cli.main(["validate", "--jobs", jobs, "scenarios/starter"])
    assert stopped.value.code == 2
    assert "--jobs" in capsys.readouterr().err
