"""``recall-eval view``: an index of every run below DIR, their files, compare and history pages, and nothing outside DIR."""

from __future__ import annotations

import http.client
import io
import json
import os
import shutil
import socket
import sys
import threading
from pathlib import Path
from typing import Any

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


def test_view_on_a_port_in_use_exits_2_and_says_to_choose_another(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    import tempfile

    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["view", str(tmp_path), "--port", str(port)]) == 2
    assert capsys.readouterr().err == (f"recall-eval view: cannot listen on 127.0.0.1:{port}: Address already in use; "
                                       "choose another --port (0 picks a free one)\n")
    assert list((tmp_path / "tmp").iterdir()) == []  # the folder it made for its pages is removed again


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


# Each layer of the viewer's file rule alone: every case below is stopped by exactly one check of `Viewer.artefact`
# (or of the handler's open), the others letting it through, so removing that one check serves the secret.
SECRET = "sk-live-LAYER-4242"


def _run_folder(folder: Path, report: str = "report", manifest: str = "{}") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "run.json").write_text(manifest, encoding="utf-8")
    (folder / "index.html").write_text(report, encoding="utf-8")
    return folder


def _refused(viewer: Viewer, rel: str) -> str:
    from harness.runs.viewer import ViewError

    with pytest.raises(ViewError) as caught:
        viewer.artefact(rel)
    return str(caught.value)


def test_a_run_folder_reached_through_a_symbolic_link_is_not_served(tmp_path: Path) -> None:
    """A link below DIR to a run folder outside it (its run.json and index.html regular files): not the folder the
    index walked to, so nothing of it is served, while the run folder itself is."""
    root = tmp_path / "root"
    _run_folder(root / "mine")
    _run_folder(tmp_path / "elsewhere", report=SECRET)
    os.symlink(tmp_path / "elsewhere", root / "linked")
    viewer = Viewer(root, tmp_path / "cache")
    assert viewer.artefact("mine/index.html") == root.resolve() / "mine" / "index.html"
    assert viewer.listed_folder("linked") is None
    assert "serves only the reports of the runs its index lists" in _refused(viewer, "linked/index.html")
    assert "not found: linked/" in _refused(viewer, "linked/")


def test_a_run_folder_under_a_dot_folder_or_a_cache_is_not_served(tmp_path: Path) -> None:
    """A run folder below ``.git`` or the response cache (its files regular, no link on the way): never listed,
    never served."""
    root = tmp_path / "root"
    for rel in (".git/run", ".recall-eval-cache/run", "ok/.hidden"):
        _run_folder(root / rel, report=SECRET)
    viewer = Viewer(root, tmp_path / "cache")
    for rel in (".git/run", ".recall-eval-cache/run", "ok/.hidden"):
        assert viewer.listed_folder(rel) is None, rel
        _refused(viewer, rel + "/index.html")


def test_a_run_folder_inside_another_run_folder_is_not_served(tmp_path: Path) -> None:
    """``run/inner`` holds a run.json and an index.html of its own, but the index never looks inside a run folder."""
    root = tmp_path / "root"
    _run_folder(root / "run")
    _run_folder(root / "run" / "inner", report=SECRET)
    _run_folder(root / "a" / "b" / "deep" / "inner", report=SECRET)  # a folder of runs, one of them nested deeper
    (root / "a" / "run.json").write_text("{}", encoding="utf-8")
    viewer = Viewer(root, tmp_path / "cache")
    assert viewer.artefact("run/") == root.resolve() / "run" / "index.html"
    for rel in ("run/inner", "a/b/deep/inner"):
        assert viewer.listed_folder(rel) is None, rel
        _refused(viewer, rel + "/index.html")


def test_a_folder_without_a_regular_run_json_is_not_a_run_folder(tmp_path: Path) -> None:
    """An ``index.html`` beside no run.json, or beside a run.json that is a link or a folder: not served."""
    root = tmp_path / "root"
    (root / "notes").mkdir(parents=True)
    (root / "notes" / "index.html").write_text(SECRET, encoding="utf-8")
    _run_folder(root / "linkedjson", report=SECRET).joinpath("run.json").unlink()
    os.symlink(root / "notes" / "index.html", root / "linkedjson" / "run.json")
    _run_folder(root / "dirjson", report=SECRET).joinpath("run.json").unlink()
    (root / "dirjson" / "run.json").mkdir()
    viewer = Viewer(root, tmp_path / "cache")
    for rel in ("notes", "linkedjson", "dirjson"):
        assert viewer.listed_folder(rel) is None, rel
        _refused(viewer, rel + "/index.html")


def test_only_a_run_folders_report_is_served_not_its_other_files(tmp_path: Path) -> None:
    """run.json, summary.json, results.jsonl or a store of a listed run folder are regular files of a listed,
    not sensitive run: only the file name keeps them from being served; a folder's URL means its report."""
    root = tmp_path / "root"
    run = _run_folder(root / "run")
    for name in ("summary.json", "results.jsonl", "memory.sqlite", "index.htm"):
        (run / name).write_text(SECRET, encoding="utf-8")
    viewer = Viewer(root, tmp_path / "cache")
    for rel in ("run", "run/", "/run/index.html", "run//index.html"):
        assert viewer.artefact(rel) == root.resolve() / "run" / "index.html", rel
    for name in ("run.json", "summary.json", "results.jsonl", "memory.sqlite", "index.htm"):
        assert "not found: run/" + name in _refused(viewer, "run/" + name), name


def test_a_report_that_is_a_link_is_not_served_by_the_check_or_by_the_open(tmp_path: Path) -> None:
    """A listed run folder whose index.html is a link to a secret: the artefact check refuses it, and the handler's
    open refuses a link at the path too (the layer for a link swapped in after the check)."""
    from harness.runs.viewer import _handler

    root = tmp_path / "root"
    _run_folder(root / "evil").joinpath("index.html").unlink()
    (tmp_path / "secret.txt").write_text(SECRET, encoding="utf-8")
    os.symlink(tmp_path / "secret.txt", root / "evil" / "index.html")
    viewer = Viewer(root, tmp_path / "cache")
    assert _refused(viewer, "evil/index.html") == "not found: evil/index.html"
    viewer.artefact = lambda rel: root.resolve() / "evil" / "index.html"  # the check passed; the link came after
    sent: list[tuple[int, bytes]] = []
    handler = object.__new__(_handler(viewer))
    handler._send = lambda status, body, content_type: sent.append((status, body))  # type: ignore[method-assign]
    with pytest.raises(OSError):
        handler._file("evil/index.html")
    assert sent == []


def test_a_sensitive_runs_report_is_served_only_when_asked(tmp_path: Path) -> None:
    """A run whose run.json says ``parameters.sensitive`` (or cannot be read: it may be one): not served unless the
    viewer was started with --include-sensitive; a plain run beside it is served either way."""
    root = tmp_path / "root"
    _run_folder(root / "plain")
    _run_folder(root / "private", report=SECRET, manifest=json.dumps({"parameters": {"sensitive": True}}))
    _run_folder(root / "broken", report=SECRET, manifest='{"parameters": {"sensitive": tr')
    viewer = Viewer(root, tmp_path / "cache")
    assert viewer.artefact("plain/") == root.resolve() / "plain" / "index.html"
    for rel in ("private/", "broken/index.html"):
        assert "a sensitive run: start the viewer with --include-sensitive" in _refused(viewer, rel), rel
    shown = Viewer(root, tmp_path / "cache", include_sensitive=True)
    assert shown.artefact("private/") == root.resolve() / "private" / "index.html"


def _stop_after(requests: list[str], answers: list[tuple[int, bytes]]) -> Any:
    """A ``serve_forever`` for ``recall-eval view`` in process: the real server answers ``requests`` in a thread,
    then the user presses Ctrl-C."""
    from http.server import ThreadingHTTPServer

    def serve(server: ThreadingHTTPServer) -> None:
        thread = threading.Thread(target=ThreadingHTTPServer.serve_forever, args=(server,), daemon=True)
        thread.start()
        try:
            for path in requests:
                answers.append(fetch(f"http://127.0.0.1:{server.server_address[1]}/{path}"))
        finally:
            server.shutdown()
            thread.join()
        raise KeyboardInterrupt

    return serve


def _warmed() -> None:
    """Wait for the viewer's background read of every run (its message is printed from that thread)."""
    for thread in threading.enumerate():
        if thread.name == "view-index":
            thread.join(timeout=60)


def test_view_prints_its_address_and_run_count_serves_until_ctrl_c_and_says_how_many_sensitive_runs_it_hides(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import harness.runs.viewer as viewer_module

    root = tmp_path / "runs"
    _run_folder(root / "plain", report="plain report")
    _run_folder(root / "private", report=SECRET, manifest=json.dumps({"parameters": {"sensitive": True}}))
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(viewer_module.tempfile, "tempdir", str(tmp_path / "tmp"))  # where its own folder goes
    answers: list[tuple[int, bytes]] = []
    monkeypatch.setattr(viewer_module._Server, "serve_forever", _stop_after(["plain/", "private/"], answers))
    assert main(["view", str(root), "--port", "0"]) == 0
    _warmed()
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0].startswith("serving at http://127.0.0.1:") and lines[0].endswith("/ (Ctrl-C stops)")
    assert int(lines[0].split(":")[2].split("/")[0]) > 0  # the port it got, not the 0 it was asked for
    assert f"2 run folder(s) below {root.resolve()}" in " ".join(out.split())
    assert "1 sensitive run(s) hidden (--include-sensitive shows them)" in out
    assert err == "stopped\n"
    assert answers == [(200, b"plain report"), (404, answers[1][1])] and b"--include-sensitive" in answers[1][1]
    assert list((tmp_path / "tmp").iterdir()) == []  # its own folder of built pages, removed on the way out

    answers.clear()
    assert main(["view", str(root), "--port", "0", "--include-sensitive"]) == 0
    _warmed()
    out, _ = capsys.readouterr()
    assert answers == [(200, b"plain report"), (200, SECRET.encode())] and "hidden" not in out


def test_a_folder_that_cannot_be_indexed_in_the_background_is_said_once_and_the_server_stays_up(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from harness.runs.viewer import _warm

    viewer = Viewer(tmp_path, tmp_path / "cache")

    def unreadable(**_: Any) -> list[dict[str, Any]]:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(viewer.index, "rows", unreadable)
    _warm(viewer)
    out, err = capsys.readouterr()
    assert (out, err) == ("", f"recall-eval view: cannot index {tmp_path.resolve()}: Permission denied\n")


def test_index_rows_leaves_sensitive_runs_out_unless_asked(tmp_path: Path) -> None:
    from harness.runs.viewer import index_rows

    _run_folder(tmp_path / "plain")
    _run_folder(tmp_path / "private", manifest=json.dumps({"parameters": {"sensitive": True}}))
    assert [row["path"] for row in index_rows(tmp_path)] == ["plain"]
    assert sorted(row["path"] for row in index_rows(tmp_path, include_sensitive=True)) == ["plain", "private"]


def test_a_run_folder_is_served_by_its_exact_name_not_one_its_ends_trimmed(tmp_path: Path) -> None:
    """`` spaced`` and ``Xray`` are run folders of their own beside ``spaced`` and ``ray``: a request for one gets
    its report, never the other's (only the slashes around the path are dropped)."""
    root = tmp_path / "root"
    for name in (" spaced", "spaced", "Xray", "ray"):
        _run_folder(root / name, report=f"report of {name!r}")
    viewer = Viewer(root, tmp_path / "cache")
    for name in (" spaced", "Xray"):
        assert viewer.artefact(f"{name}/index.html") == root.resolve() / name / "index.html", name
        assert viewer.artefact(f"/{name}/") == root.resolve() / name / "index.html", name
        assert viewer.listed_folder(f"/{name}/") == root.resolve() / name, name


def test_a_compare_or_history_request_for_what_is_not_a_reported_run_says_which_and_why(tmp_path: Path) -> None:
    from harness.runs.viewer import ViewError

    root = tmp_path / "root"
    _run_folder(root / "plain")
    _run_folder(root / "private", manifest=json.dumps({"parameters": {"sensitive": True}}))
    (root / "notes").mkdir()
    viewer = Viewer(root, tmp_path / "cache")
    with pytest.raises(ViewError) as caught:
        viewer.history_page()
    assert str(caught.value) == f"no run below {root.resolve()} has a report yet"
    _run_folder(root / "half").joinpath("summary.json").write_text("{}", encoding="utf-8")  # no scores.jsonl
    said = {}
    for rel in ("notes", "private", "half", "plain"):
        with pytest.raises(ViewError) as caught:
            viewer.run_folder(rel)
        said[rel] = str(caught.value)
    assert said["notes"] == f"'notes' is not a run folder below {root.resolve()}"
    assert said["private"] == (f"'private' is not a run folder below {root.resolve()} "
                               "(a sensitive run: start the viewer with --include-sensitive)")
    assert said["half"] == f"half: no report yet (summary.json, scores.jsonl); build it with `recall-eval report {root.resolve() / 'half'}`"
    assert said["plain"].startswith("plain: no report yet (summary.json, scores.jsonl)")


@pytest.fixture(scope="module")
def reported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three finished runs with reports: ``a`` and ``b`` alike, ``hot`` at another temperature (not comparable)."""
    from tests.runs.compare_factories import synthetic_run

    root = tmp_path_factory.mktemp("reported")
    synthetic_run(root / "a")
    shutil.copytree(root / "a", root / "b")
    synthetic_run(root / "hot", parameters={"temperature": 0.7})
    return root


def test_each_pair_compared_is_kept_as_its_own_page_and_a_pair_not_comparable_still_shows_its_metrics(
        reported: Path, tmp_path: Path) -> None:
    root = tmp_path / "runs"
    shutil.copytree(reported, root)
    viewer = Viewer(root, tmp_path / "cache")
    (tmp_path / "cache").mkdir()
    pages = {pair: viewer.compare_page(*pair) for pair in (("a", "b"), ("a", "hot"), ("b", "hot"))}
    assert len(list((tmp_path / "cache").iterdir())) == 3  # no pair's page overwrites another's
    assert sorted(p.read_text(encoding="utf-8") for p in (tmp_path / "cache").iterdir()) == sorted(pages.values())
    hot = pages[("a", "hot")]
    assert "NOT COMPARABLE" in hot and "continuity accuracy" in hot  # the viewer compares anyway, saying so


def test_a_run_removed_while_its_compare_page_is_built_is_named_and_a_page_that_fails_otherwise_is_not_hidden(
        reported: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import harness.runs.compare as compare_module
    from harness.runs.comparability import CompareError
    from harness.runs.viewer import ViewError

    root = tmp_path / "runs"
    shutil.copytree(reported, root)
    viewer = Viewer(root, tmp_path / "cache")
    real = compare_module.compare_runs

    def vanishing(run_a: Path, run_b: Path, **kw: Any) -> Any:
        shutil.rmtree(run_b)
        return real(run_a, run_b, **kw)

    monkeypatch.setattr(compare_module, "compare_runs", vanishing)
    with pytest.raises(ViewError) as caught:
        viewer.compare_page("a", "hot")
    assert str(caught.value) == "not found: run hot (removed while the page was built)"
    monkeypatch.setattr(compare_module, "compare_runs", lambda run_a, run_b, **kw: [shutil.rmtree(run_a),
                                                                                     vanishing(run_a, run_b, **kw)])
    with pytest.raises(ViewError) as caught:
        viewer.compare_page("a", "b")
    assert str(caught.value) == "not found: run a, b (removed while the page was built)"
    shutil.copytree(reported / "a", root / "a")
    shutil.copytree(reported / "a", root / "b")

    def failing(run_a: Path, run_b: Path, **kw: Any) -> Any:
        raise CompareError("b: scores.jsonl differs from its summary")

    monkeypatch.setattr(compare_module, "compare_runs", failing)
    with pytest.raises(CompareError, match="differs from its summary"):  # both runs there: the handler's 422
        viewer.compare_page("a", "b")
    monkeypatch.setattr(compare_module, "compare_runs", lambda *a, **kw: (_ for _ in ()).throw(PermissionError(13, "no")))
    with pytest.raises(PermissionError):
        viewer.compare_page("a", "b")


def test_the_history_page_says_which_run_it_left_out_and_why(reported: Path, tmp_path: Path) -> None:
    root = tmp_path / "runs"
    shutil.copytree(reported, root)
    shutil.copytree(root / "a", root / "broken")
    (root / "broken" / "summary.json").write_text("{not json", encoding="utf-8")
    (tmp_path / "cache").mkdir()
    page = Viewer(root, tmp_path / "cache").history_page()
    assert f"warning: {root.resolve() / 'broken' / 'summary.json'}: unreadable (not valid JSON" in page
    assert f"left out; rebuild it with `recall-eval report {root.resolve() / 'broken'}`" in page


def _exchange(base: str, method: str, path: str, host: str) -> tuple[int, dict[str, str], bytes]:
    """``(status, headers, body)`` of one request with exactly this ``Host`` header."""
    port = int(base.rstrip("/").rsplit(":", 1)[1])
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.putrequest(method, path, skip_host=True)
    connection.putheader("Host", host)
    connection.endheaders()
    response = connection.getresponse()
    answer = response.status, dict(response.getheaders()), response.read()
    connection.close()
    return answer


def test_every_answer_says_its_type_and_length_is_never_cached_or_sniffed_and_head_sends_no_body(tmp_path: Path) -> None:
    _run_folder(tmp_path / "run", report="<p>report</p>")
    with serving(tmp_path) as base:
        port = base.rstrip("/").rsplit(":", 1)[1]
        page = _exchange(base, "GET", "/", f"127.0.0.1:{port}")
        runs = _exchange(base, "GET", "/_runs.json", f"localhost:{port}")
        report = _exchange(base, "GET", "/run/index.html", f"[::1]:{port}")  # an IPv6 loopback Host is this server
        missing = _exchange(base, "GET", "/run/run.json", "localhost")
        head = _exchange(base, "HEAD", "/run/index.html", f"127.0.0.1:{port}")
        foreign = _exchange(base, "GET", "/", f"[::2]:{port}")
        lookalike = _exchange(base, "GET", "/", f"X127.0.0.1:{port}")  # only the IPv6 brackets are trimmed
    for status, headers, _body in (page, runs, report, missing, head):
        assert status in (200, 404) and headers["Cache-Control"] == "no-store", headers
        assert headers["X-Content-Type-Options"] == "nosniff" and headers["Server"].startswith("recall-eval-view ")
    assert [a[1]["Content-Type"] for a in (page, runs, report, missing)] == [
        "text/html; charset=utf-8", "application/json", "text/html; charset=utf-8", "text/plain; charset=utf-8"]
    assert (report[0], report[2]) == (200, b"<p>report</p>") and missing[0] == 404
    assert all(int(a[1]["Content-Length"]) == len(a[2]) > 0 for a in (page, runs, report, missing))
    assert (head[0], head[1]["Content-Length"], head[2]) == (200, str(len(b"<p>report</p>")), b"")
    assert foreign[0] == 403 and foreign[2].decode("utf-8").startswith("forbidden: this viewer answers only to")
    assert lookalike[0] == 403 and json.loads(runs[2])["root"] == str(tmp_path.resolve())


def test_closing_the_viewer_after_its_page_folder_was_cleaned_away_is_quiet(tmp_path: Path) -> None:
    from harness.runs.viewer import ViewError, make_server

    _run_folder(tmp_path / "private", manifest=json.dumps({"parameters": {"sensitive": True}}))
    server = make_server(tmp_path, 0)
    assert server.owned_cache is not None and server.owned_cache.name.startswith("recall-eval-view-")  # named in /tmp
    assert server.daemon_threads is True  # a browser's open connection never holds up Ctrl-C
    with pytest.raises(ViewError, match="a sensitive run"):  # not asked to: sensitive runs stay hidden
        server.viewer.artefact("private/index.html")
    shutil.rmtree(server.owned_cache)  # a temp cleaner got there first
    server.server_close()
    kept = make_server(tmp_path, 0, tmp_path / "mine")  # a folder the caller gave is the caller's: used, left alone
    (tmp_path / "mine").mkdir()
    kept.viewer._keep("page.html", "<p>kept</p>")
    kept.server_close()
    assert kept.owned_cache is None and [p.name for p in (tmp_path / "mine").iterdir()] == ["page.html"]


def test_the_compare_and_history_pages_are_html_and_a_compare_without_a_run_says_so(reported: Path, tmp_path: Path) -> None:
    root = tmp_path / "runs"
    shutil.copytree(reported, root)
    with serving(root) as base:
        host = "127.0.0.1:" + base.rstrip("/").rsplit(":", 1)[1]
        compare = _exchange(base, "GET", "/_compare?a=a&b=b", host)
        history = _exchange(base, "GET", "/_history", host)
        no_a, no_b = fetch(base + "_compare?b=a"), fetch(base + "_compare?a=a")
    for status, headers, body in (compare, history):
        assert (status, headers["Content-Type"]) == (200, "text/html; charset=utf-8") and b"</html>" in body
    said = f"'' is not a run folder below {root.resolve()}".encode()
    assert no_a == (404, said) and no_b == (404, said)


def test_a_page_that_cannot_be_built_is_an_answer_that_says_why_and_the_server_keeps_serving(tmp_path: Path) -> None:
    """A run removed while read: 404 naming the file (or the page); a run the page cannot be built from: 422 with
    its message; anything else: 500 naming the error. The next request is answered as usual."""
    from harness.runs.history import HistoryError
    from harness.runs.viewer import make_server

    server = make_server(tmp_path, 0)
    failures = iter([FileNotFoundError(2, "No such file or directory", "/runs/gone/run.json"),
                     NotADirectoryError(20, "Not a directory"), HistoryError("a/summary.json: unreadable"),
                     RuntimeError("the template broke")])

    def failing() -> str:
        raise next(failures)

    server.viewer.history_page = failing  # type: ignore[method-assign]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}/"
        answers = [fetch(base + "_history") for _ in range(4)]
        after = fetch(base)[0]
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
    assert answers == [(404, b"not found: /runs/gone/run.json (removed while being read)"),
                       (404, b"not found: /_history (removed while being read)"),
                       (422, b"a/summary.json: unreadable"), (500, b"RuntimeError: the template broke")]
    assert after == 200


class _Flushed(io.StringIO):
    """A terminal stream that remembers what had been flushed (what a pipe to another program shows by then)."""

    def __init__(self) -> None:
        super().__init__()
        self.shown = ""

    def flush(self) -> None:
        super().flush()
        self.shown = self.getvalue()


def test_the_background_index_never_holds_up_ctrl_c_and_its_messages_reach_a_pipe_at_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first read of every run happens in a daemon thread named ``view-index`` while the server answers (Ctrl-C
    does not wait for it); what it says (runs hidden, a folder it cannot index) is flushed as it is said."""
    import argparse

    import harness.runs.viewer as viewer_module
    from harness.runs.viewer import _warm, cli_view
    from harness.runs.viewer_index import RunIndex

    _run_folder(tmp_path / "private", manifest=json.dumps({"parameters": {"sensitive": True}}))
    release = threading.Event()
    real_rows = RunIndex.rows

    def held_rows(self: RunIndex, **kw: Any) -> list[dict[str, Any]]:
        release.wait(60)
        return real_rows(self, **kw)

    monkeypatch.setattr(RunIndex, "rows", held_rows)
    seen: dict[str, Any] = {}

    def serve(server: Any) -> None:
        seen["daemon"] = [t.daemon for t in threading.enumerate() if t.name == "view-index"]
        raise KeyboardInterrupt

    monkeypatch.setattr(viewer_module._Server, "serve_forever", serve)
    out, err = _Flushed(), _Flushed()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    assert cli_view(argparse.Namespace(dir=str(tmp_path), port=0)) == 0  # no include_sensitive: hidden
    assert seen["daemon"] == [True]
    release.set()
    _warmed()
    assert out.shown.endswith("1 sensitive run(s) hidden (--include-sensitive shows them)\n")

    viewer = Viewer(tmp_path, tmp_path / "cache")
    monkeypatch.setattr(viewer.index, "rows", lambda **_: (_ for _ in ()).throw(OSError("disk gone")))
    _warm(viewer)
    assert err.shown.endswith(f"recall-eval view: cannot index {tmp_path.resolve()}: disk gone\n")


def test_a_compare_page_showing_a_sensitive_run_on_either_side_is_kept_nowhere(reported: Path, tmp_path: Path) -> None:
    root = tmp_path / "runs"
    shutil.copytree(reported, root)
    manifest = json.loads((root / "a" / "run.json").read_text(encoding="utf-8"))
    manifest["parameters"]["sensitive"] = True
    (root / "a" / "run.json").write_text(json.dumps(manifest), encoding="utf-8")
    (tmp_path / "cache").mkdir()
    viewer = Viewer(root, tmp_path / "cache", include_sensitive=True)
    assert "NOT COMPARABLE" in viewer.compare_page("a", "hot") and "NOT COMPARABLE" in viewer.compare_page("hot", "a")
    assert list((tmp_path / "cache").iterdir()) == []  # served from memory only
    viewer.compare_page("b", "hot")
    assert len(list((tmp_path / "cache").iterdir())) == 1


def test_a_head_request_gets_the_headers_and_not_one_byte_of_body(tmp_path: Path) -> None:
    _run_folder(tmp_path / "run", report="<p>report</p>")
    with serving(tmp_path) as base:
        port = int(base.rstrip("/").rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=30) as raw:
            raw.sendall(f"HEAD /run/index.html HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
            received = b""
            while chunk := raw.recv(65536):
                received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.0 200") and b"Content-Length: 13" in head and body == b""
