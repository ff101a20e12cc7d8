"""Hostile folders under a real ``recall-eval view`` process, asked over real HTTP on 127.0.0.1.

Secrets beside the runs (``.env``, a store, a cache entry, a lock, ``.git``), a
summary.json whose verdict is a string or holds NaN, FIFOs named like run
files, a run folder removed while a page is built. The viewer serves only the
reports its index links to, shows a bad run as one row saying why, never hangs
and never answers 500 for a user's file.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.fault.conftest import REPO, harness_cli
from tests.runs.compare_factories import edit_json, synthetic_run

SECRET = "sk-live-TOPSECRET-4242"


@contextmanager
def view_process(root: Path, *flags: str) -> Iterator[str]:
    """``recall-eval view ROOT --port 0`` as a real process; yields its base URL once it serves, stops it after."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    argv = [sys.executable, "-m", "harness.cli", "view", str(root), "--port", "0", *flags]
    with subprocess.Popen(argv, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        try:
            assert proc.stdout is not None
            if not select.select([proc.stdout], [], [], 60)[0]:
                pytest.fail("`recall-eval view` did not start within 60 s: it hangs indexing the folder")
            line = proc.stdout.readline()
            assert "serving" in line, line + (proc.stderr.read() if proc.poll() is not None and proc.stderr else "")
            yield line.split(" at ")[1].split()[0]
        finally:
            proc.kill()  # the viewer writes nothing a test reads afterwards; leaving the block waits for it


def get(url: str) -> tuple[int, bytes]:
    """``(status, body)`` of a GET with a timeout: a hang is a failure, not a stuck test."""
    try:
        with urllib.request.urlopen(url, timeout=30) as response:  # noqa: S310 - a local test server
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def strict_rows(base: str) -> dict[str, dict]:
    """``/_runs.json`` parsed as strict JSON (NaN refused, as a browser does), rows by path."""
    status, body = get(base + "_runs.json")
    assert status == 200, body

    def refuse(name: str) -> None:
        raise AssertionError(f"/_runs.json holds {name}: not JSON")

    return {r["path"]: r for r in json.loads(body, parse_constant=refuse)["runs"]}


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return synthetic_run(tmp_path_factory.mktemp("viewer-run") / "run", ids=[f"fact-{i:03d}" for i in range(200)],
                         recall_right=180, history_right=20)  # a pass: 189 scenarios bound a 0.02 rise


def _plant_secrets(root: Path, run: Path) -> dict[str, bytes]:
    """The files a user keeps beside their runs, each holding the secret; URL path -> its bytes."""
    planted = {
        ".env": f"OPENAI_API_KEY={SECRET}\n", "memory.sqlite": f"SQLite format 3\x00{SECRET}",
        ".recall-eval-cache/0a1b2c.json": json.dumps({"reply": SECRET}), "normal/.lock": f"pid 1 {SECRET}",
        ".git/config": f"[remote]\n\turl = https://x:{SECRET}@example.com\n", ".git/run/run.json": "{}",
        ".git/run/index.html": SECRET, "run/.env": SECRET, "run/notes/index.html": SECRET,
        "run/inner/run.json": "{}", "run/inner/index.html": SECRET,  # a run inside a run: the index never lists it
    }
    for rel, text in planted.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    (root / "run" / "secret-link.html").symlink_to(root / ".env")
    (root / "evil").mkdir()  # a run folder whose report is a link to the .env
    (root / "evil" / "run.json").write_text("{}", encoding="utf-8")
    (root / "evil" / "index.html").symlink_to(root / ".env")
    return {rel: text.encode() for rel, text in planted.items()}


def test_the_viewer_serves_only_the_reports_its_index_links_to(finished: Path, tmp_path: Path) -> None:
    """A folder with .env, memory.sqlite, a cache entry, a lock, .git and a run's own files: only the run's
    index.html (what the index links to) is served; every other path, a dotfile, a link and run.json included, is 404."""
    root = tmp_path / "root"
    shutil.copytree(finished, root / "run")
    _plant_secrets(root, root / "run")
    with view_process(root) as base:
        assert set(strict_rows(base)) == {"run", "evil"}  # the run below .git is not listed
        assert get(base + "run/index.html")[0] == 200 and get(base + "run/")[0] == 200
        refused = [".env", "memory.sqlite", ".recall-eval-cache/0a1b2c.json", "normal/.lock", ".git/config",
                   ".git/HEAD", ".git/", ".git/run/index.html", "run/.env", "run/run.json", "run/results.jsonl",
                   "run/summary.json", "run/scores.jsonl", "run/notes/index.html", "run/inner/index.html", "run/secret-link.html",
                   "run/.lock", "%2eenv", "run/%2e%2e/.env", "evil/index.html", "evil/", "_compare?a=.git/run&b=run"]
        for path in refused:
            status, body = get(base + path)
            assert status == 404 and SECRET.encode() not in body, path


def test_view_of_a_git_checkout_serves_nothing_of_git(finished: Path, tmp_path: Path) -> None:
    """``recall-eval view .`` in a git checkout holding a run: .git/config, HEAD, objects are 404; the report is served."""
    root = tmp_path / "checkout"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    shutil.copytree(finished, root / "reports" / "nightly")
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    with view_process(root) as base:
        assert get(base + "reports/nightly/index.html")[0] == 200
        for path in (".git/config", ".git/HEAD", ".git/index", ".git/description", ".git"):
            assert get(base + path)[0] == 404, path


def _bad_summaries(root: Path, finished: Path) -> None:
    """``good`` intact; ``string`` with ``"verdict": "pass"``; ``nan`` with NaN and 1e400 in its paired rows."""
    for name in ("good", "string", "nan"):
        shutil.copytree(finished, root / name)
    edit_json(root / "string" / "summary.json", lambda s: s.update(verdict="pass"))
    text = (root / "nan" / "summary.json").read_text(encoding="utf-8")
    data = json.loads(text)
    data["paired"][0]["diff"] = "__NAN__"
    data["paired"][0]["ci_low"] = "__BIG__"
    (root / "nan" / "summary.json").write_text(
        json.dumps(data).replace('"__NAN__"', "NaN").replace('"__BIG__"', "1e400"), encoding="utf-8")


def test_a_summary_whose_verdict_is_a_string_or_holds_nan_is_one_unreadable_row(finished: Path, tmp_path: Path) -> None:
    """One summary.json with ``"verdict": "pass"`` and one with NaN: the viewer starts, /_runs.json is strict JSON,
    each bad run is a row saying why (its verdict 'unreadable'), the good run is intact; comparing with a bad run is
    422 with compare's message, the history page still builds."""
    _bad_summaries(tmp_path, finished)
    with view_process(tmp_path) as base:
        rows = strict_rows(base)
        status, body = get(base + "_compare?a=good&b=string")  # compare's own message, not a server fault
        assert status == 422 and b"string/summary.json" in body and b"Traceback" not in body, body
        assert get(base + "_history")[0] == 200
    own = json.loads((finished / "summary.json").read_text(encoding="utf-8"))["verdict"]["status"]
    assert rows["good"]["verdict"] == own and not rows["good"]["problem"]
    assert rows["string"]["verdict"] == "unreadable" and "verdict is a string, not an object" in rows["string"]["problem"]
    assert rows["nan"]["verdict"] == "unreadable" and "NaN" in rows["nan"]["problem"]


def test_a_summary_changed_to_a_bad_one_while_serving_costs_one_row(finished: Path, tmp_path: Path) -> None:
    """A summary edited to ``"verdict": "pass"`` while the viewer serves: the next /_runs.json is 200 with every
    row, the changed run's saying why; edited back, it reads as before."""
    for name in ("a", "b"):
        shutil.copytree(finished, tmp_path / name)
    original = (tmp_path / "b" / "summary.json").read_text(encoding="utf-8")
    with view_process(tmp_path) as base:
        assert strict_rows(base)["b"]["verdict"] == "pass"
        edit_json(tmp_path / "b" / "summary.json", lambda s: s.update(verdict="pass"))
        rows = strict_rows(base)
        assert set(rows) == {"a", "b"} and rows["b"]["verdict"] == "unreadable"
        (tmp_path / "b" / "summary.json").write_text(original, encoding="utf-8")
        assert strict_rows(base)["b"]["verdict"] == "pass"


def test_history_leaves_out_a_run_whose_summary_is_malformed_saying_why(finished: Path, tmp_path: Path) -> None:
    """``history`` on the same folders: the bad runs are left out with one warning each naming the file and field,
    the page is written (exit 0); with only bad runs, one line and exit 2; never a traceback."""
    _bad_summaries(tmp_path / "runs", finished)
    done = harness_cli("history", tmp_path / "runs", "--out", tmp_path / "h.html")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert f"{tmp_path / 'runs' / 'string' / 'summary.json'}: unreadable (verdict is a string" in done.stderr
    assert f"{tmp_path / 'runs' / 'nan' / 'summary.json'}: unreadable (not valid JSON (NaN" in done.stderr
    assert "history of 1 run(s)" in done.stdout
    shutil.rmtree(tmp_path / "runs" / "good")
    done = harness_cli("history", tmp_path / "runs", "--out", tmp_path / "h2.html")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "recall-eval history: no run with a summary.json" in done.stderr


def test_a_fifo_named_like_a_run_file_never_hangs_the_viewer(finished: Path, tmp_path: Path) -> None:
    """FIFOs named results.jsonl, summary.json, index.html and run.json: the viewer starts, /_runs.json answers
    (0 samples done, the summary and run.json rows unreadable naming the FIFO), the FIFO index.html is 404."""
    for name in ("results", "summary", "page", "manifest"):
        shutil.copytree(finished, tmp_path / name)
    for folder, file in (("results", "results.jsonl"), ("summary", "summary.json"), ("page", "index.html"),
                         ("manifest", "run.json")):
        (tmp_path / folder / file).unlink()
        os.mkfifo(tmp_path / folder / file)
    with view_process(tmp_path) as base:
        rows = strict_rows(base)
        assert rows["results"]["samples_done"] == 0 and rows["results"]["verdict"] == "pass"
        assert rows["summary"]["verdict"] == "unreadable" and "FIFO" in rows["summary"]["problem"]
        assert rows["manifest"]["status"] == "unreadable"
        assert get(base + "page/index.html")[0] == 404
        assert get(base + "_history")[0] == 200


def test_a_run_folder_removed_while_its_compare_page_is_built_is_404(finished: Path, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """B's folder deleted after the viewer checked it and before compare read it: 404 naming the run, never a 500."""
    import harness.runs.compare as compare_module
    from tests.runs.viewer_fixtures import fetch, serving

    for name in ("a", "b"):
        shutil.copytree(finished, tmp_path / name)
    real = compare_module.compare_runs

    def vanishing(run_a: Path, run_b: Path, **kw: object) -> object:
        shutil.rmtree(run_b)
        return real(run_a, run_b, **kw)

    monkeypatch.setattr(compare_module, "compare_runs", vanishing)
    with serving(tmp_path) as base:
        status, body = fetch(base + "_compare?a=a&b=b")
        assert status == 404 and b"removed" in body, body
        assert [r["path"] for r in json.loads(fetch(base + "_runs.json")[1])["runs"]] == ["a"]


def test_the_report_of_a_run_whose_run_json_cannot_be_read_is_not_served(tmp_path: Path) -> None:
    """A run folder whose run.json is not JSON (it may be a sensitive run's): listed as unreadable, its index.html
    404 (when in doubt, serve nothing of it)."""
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "run.json").write_text("{\"parameters\": {\"sensitive\": tr", encoding="utf-8")
    (tmp_path / "run" / "index.html").write_text(SECRET, encoding="utf-8")
    with view_process(tmp_path) as base:
        assert strict_rows(base)["run"]["status"] == "unreadable"
        status, body = get(base + "run/index.html")
        assert status == 404 and SECRET.encode() not in body
