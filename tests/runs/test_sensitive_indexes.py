"""Sensitive run folders (run.json ``parameters.sensitive``) stay out of ``history`` and ``view`` unless asked."""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from harness.cli import main
from harness.runs.history import find_runs, is_sensitive_run, read_points
from harness.runs.viewer import make_server
from tests.integration.offline_runs import offline_run
from tests.runs.viewer_fixtures import fetch


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``public`` and ``private`` (the same finished offline run, the second marked sensitive) under one folder."""
    work = tmp_path_factory.mktemp("made")
    made = offline_run(work)
    root = tmp_path_factory.mktemp("runs")
    for name in ("public", "private"):
        shutil.copytree(made, root / name)
        manifest = json.loads((root / name / "run.json").read_text(encoding="utf-8"))
        manifest["run_id"] = name
        if name == "private":
            manifest["parameters"]["sensitive"] = True
        (root / name / "run.json").write_text(json.dumps(manifest), encoding="utf-8")
        summary = json.loads((root / name / "summary.json").read_text(encoding="utf-8"))
        summary["run"]["run_id"] = name
        (root / name / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    return root


@contextmanager
def serving(root: Path, cache: Path, *, include_sensitive: bool = False) -> Iterator[str]:
    server = make_server(root, 0, cache, include_sensitive=include_sensitive)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_a_run_is_sensitive_when_its_run_json_says_so(runs: Path) -> None:
    assert is_sensitive_run(runs / "private") and not is_sensitive_run(runs / "public")


def test_history_leaves_sensitive_runs_out_unless_asked(runs: Path) -> None:
    points, warnings = read_points(find_runs([runs]))
    assert [p.run_id for p in points] == ["public"]
    assert any("1 sensitive run folder(s) left out" in w for w in warnings)
    points, _ = read_points(find_runs([runs]), include_sensitive=True)
    assert sorted(p.run_id for p in points) == ["private", "public"]


def test_history_cli_include_sensitive_charts_them(runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["history", str(runs), "--out", str(tmp_path / "h.html")]) == 0
    assert "history of 1 run(s)" in capsys.readouterr().out
    assert main(["history", str(runs), "--out", str(tmp_path / "h.html"), "--include-sensitive"]) == 0
    assert "history of 2 run(s)" in capsys.readouterr().out


def test_the_viewer_neither_lists_nor_serves_a_sensitive_run_unless_asked(runs: Path, tmp_path: Path) -> None:
    with serving(runs, tmp_path / "c1") as base:
        _, body = fetch(base + "_runs.json")
        assert [r["path"] for r in json.loads(body)["runs"]] == ["public"]
        assert fetch(base + "public/index.html")[0] == 200
        status, text = fetch(base + "private/index.html")
        assert status == 404 and b"--include-sensitive" in text
        assert fetch(base + "private/results.jsonl")[0] == 404
        assert fetch(base + "_compare?a=public&b=private")[0] == 404
    with serving(runs, tmp_path / "c2", include_sensitive=True) as base:
        _, body = fetch(base + "_runs.json")
        assert sorted(r["path"] for r in json.loads(body)["runs"]) == ["private", "public"]
        assert fetch(base + "private/index.html")[0] == 200


def test_the_viewer_keeps_no_page_of_a_sensitive_run_outside_its_folder(runs: Path, tmp_path: Path) -> None:
    cache = tmp_path / "pages"
    cache.mkdir()
    with serving(runs, cache, include_sensitive=True) as base:
        assert fetch(base + "_compare?a=public&b=private")[0] == 200
        assert fetch(base + "_history")[0] == 200
    assert list(cache.iterdir()) == []  # served from memory, never written to the viewer's folder
