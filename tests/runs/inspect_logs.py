"""The offline run the inspect export's tests read, exported afresh per test, and the helpers that read its logs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from tests.integration.offline_runs import offline_run


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One offline run for the file (the run is not what these tests check; each test copies it before changing it)."""
    return offline_run(tmp_path_factory.mktemp("export"))


@pytest.fixture
def exported(run_dir: Path, tmp_path: Path) -> tuple[Path, Path]:
    """``run_dir`` exported afresh for each test (a fraction of a second), so each test runs the export itself: a
    module-scoped export ran in the first test's setup alone, and mutmut then tied the export to that test only."""
    assert main(["export", "inspect", str(run_dir), str(tmp_path / "logs")]) == 0
    return run_dir, tmp_path / "logs"


def read_records(run_dir: Path) -> dict[str, dict[str, Any]]:
    lines = (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines()
    return {r["sample_id"]: r for r in map(json.loads, lines)}


def log_path(logs: Path, arm: str) -> Path:
    """The exported log of ``arm`` (file names end with the log's task id: ``<time>_run-<model>-<arm>_<id>.eval``)."""
    (path,) = logs.glob(f"*_run-offline-reference-{arm.replace('_', '-')}_*.eval")
    return path


def doctored(run_dir: Path, tmp_path: Path, record: Any = None, manifest: Any = None) -> Path:
    """A copy of ``run_dir`` with ``record(dict)`` applied to each results line and ``manifest(dict)`` to run.json."""
    import shutil

    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    if record is not None:
        lines = [json.loads(line) for line in (copy / "results.jsonl").read_text(encoding="utf-8").splitlines()]
        for line in lines:
            record(line)
        (copy / "results.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    if manifest is not None:
        data = json.loads((copy / "run.json").read_text(encoding="utf-8"))
        manifest(data)
        (copy / "run.json").write_text(json.dumps(data), encoding="utf-8")
    return copy
