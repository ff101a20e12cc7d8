"""``recall-eval view``: an index of every run below DIR, their files, compare and history pages, and nothing outside DIR."""

from __future__ import annotations

import http.client
import json
import os
import socket
from pathlib import Path

import pytest

from harness.cli import main
from harness.runs.viewer import Viewer, find_run_folders
from tests.runs.viewer_fixtures import fetch, progress_live, runs_tree, serving, snapshot


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return runs_tree(tmp_path_factory.mktemp("runs"))


def _rows(base: str) -> dict[str, dict]:
    status, body = fetch(base + "_runs.json")
    assert status == 200
    return {row["path"]: row for row in json.loads(body)["runs"]}


def test_the_index_lists_every_run_folder_below_dir_with_suite_models_arms_verdict_and_status(tree: Path) -> None:
    with serving(tree) as base:
        rows = _rows(base)
        status, page = fetch(base)
    assert status == 200 and b"_runs.json" in page
    assert sorted(rows) == ["live", "nightly/n1", "nightly/n2"]
    n1 = rows["nightly/n1"]
    assert n1["suite"] == "smoke" and n1["scenarios"] == 2 and n1["models"] == ["offline/reference"]
    assert n1["arms"] == ["history_only", "recall"] and n1["status"] == "complete" and n1["verdict"] in ("pass", "fail", "inconclusive")
    assert n1["report"] and n1["comparable"] and (n1["samples_done"], n1["samples_planned"]) == (4, 4)
    summary = json.loads((tree / "nightly" / "n1" / "summary.json").read_text(encoding="utf-8"))
    paired = next(r for r in summary["paired"] if r["metric"] == "continuity_accuracy" and r["arm_a"] == "history_only"
                  and r["arm_b"] == "recall" and r.get("category", "all") == "all")
    assert n1["continuity"] == [{"model": "offline/reference", "value": paired["diff"], "ci_low": paired["ci_low"],
                                 "ci_high": paired["ci_high"]}]
    assert n1["started_at"] == json.loads((tree / "nightly" / "n1" / "run.json").read_text(encoding="utf-8"))["started_at"]
    live = rows["live"]
    assert live["status"] == "running" and live["verdict"] == "" and not live["report"] and not live["comparable"]


def test_a_run_in_progress_counts_up_as_its_records_arrive(tmp_path: Path, tree: Path) -> None:
    import shutil

    root = tmp_path / "copy"
    shutil.copytree(tree, root)
    with serving(root) as base:
        before = _rows(base)["live"]["samples_done"]
        progress_live(root)
        after = _rows(base)["live"]["samples_done"]
    assert (before, after) == (2, 3)


def _raw_get(base: str, path: str) -> int:
    """GET ``path`` exactly as written (no client-side normalising of ``..``)."""
    host, port = base.removeprefix("http://").rstrip("/").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    connection.putrequest("GET", path, skip_host=True)
    connection.putheader("Host", f"127.0.0.1:{port}")
    connection.endheaders()
    status = connection.getresponse().status
    connection.close()
    return status


def test_files_outside_dir_are_never_served(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "run").mkdir(parents=True)
    (root / "run" / "run.json").write_text("{}", encoding="utf-8")  # a run folder (unreadable, still listed)
    (root / "run" / "index.html").write_text("inside", encoding="utf-8")
    (tmp_path / "secret.txt").write_text("TOPSECRET", encoding="utf-8")
    os.symlink(tmp_path / "secret.txt", root / "run" / "link.txt")
    os.symlink(tmp_path, root / "escape")
    with serving(root) as base:
        assert fetch(base + "run/index.html") == (200, b"inside")
        for path in ("/../secret.txt", "/run/../../secret.txt", "/%2e%2e/secret.txt", "/run/%2E%2E/%2E%2E/secret.txt",
                     "/..%2fsecret.txt", "//" + str(tmp_path / "secret.txt"), "/run/link.txt", "/escape/secret.txt",
                     "/run/index.html%00.txt"):
            assert _raw_get(base, path) == 404, path
        status, body = fetch(base + "_compare?a=..&b=run")
        assert status == 404 and b"TOPSECRET" not in body
    viewer = Viewer(root, tmp_path / "cache")
    assert viewer.listed_folder("../secret.txt") is None and viewer.listed_folder("escape") is None
    assert viewer.listed_folder("run") == root.resolve() / "run"


def test_a_request_for_another_host_is_refused(tree: Path) -> None:
    with serving(tree) as base:
        status, body = fetch(base + "_runs.json", headers={"Host": "attacker.example:80"})
    assert status == 403 and b"runs" not in body


def test_the_compare_and_history_pages_are_built_outside_the_run_folders(tree: Path) -> None:
    before = snapshot(tree)
    with serving(tree) as base:
        status, page = fetch(base + "_compare?a=nightly/n1&b=nightly/n2")
        assert status == 200 and b"n1" in page and b"n2" in page
        # its links to both reports are relative to DIR, where the viewer serves them
        assert b'href="nightly/n1/index.html' in page and fetch(base + "nightly/n2/index.html")[0] == 200
        status, history = fetch(base + "_history")
        assert status == 200 and b'nightly/n1/index.html' in history
        status, body = fetch(base + "_compare?a=nightly/n1&b=live")
        assert status == 404 and b"no report yet" in body
    assert snapshot(tree) == before


def test_find_run_folders_does_not_search_inside_a_run_or_a_cache(tmp_path: Path) -> None:
    for folder in ("a", "a/inner", ".recall-eval-cache/x", "b/c"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "run.json").write_text("{}", encoding="utf-8")
    assert [p.relative_to(tmp_path).as_posix() for p in find_run_folders(tmp_path)] == ["a", "b/c"]


def test_an_unreadable_run_json_is_a_row_that_says_so(tmp_path: Path) -> None:
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "run.json").write_text("{not json", encoding="utf-8")
    with serving(tmp_path) as base:
        row = _rows(base)["bad"]
    assert row["status"] == "unreadable" and "run.json" in row["problem"]


def test_view_of_a_missing_folder_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["view", str(tmp_path / "nope"), "--port", "0"]) == 2
    assert "no such folder" in capsys.readouterr().err


def test_view_on_a_port_in_use_exits_2_and_says_to_choose_another(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        assert main(["view", str(tmp_path), "--port", str(taken.getsockname()[1])]) == 2
    assert "choose another --port (0 picks a free one)" in capsys.readouterr().err


def test_built_pages_go_to_the_viewers_own_folder_which_closing_removes(tree: Path) -> None:
    import threading

    from harness.runs.viewer import make_server
    from tests.runs.viewer_fixtures import fetch as get

    server = make_server(tree, 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    cache = server.owned_cache
    try:
        assert get(f"http://127.0.0.1:{server.server_address[1]}/_history")[0] == 200
        assert [p.name for p in cache.iterdir()] == ["history.html"] and not cache.is_relative_to(tree)
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
    assert not cache.exists()
