"""A folder of run folders for the viewer's tests, and a viewer serving it on a free port."""

from __future__ import annotations

import json
import shutil
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.integration.conftest import SMOKE


def runs_tree(root: Path) -> Path:
    """``root`` holding ``nightly/n1`` and ``nightly/n2`` (finished offline runs with reports) and ``live``
    (a run in progress: run.json says running, two of its four records written, no report)."""
    from harness.cli import main

    for name in ("n1", "n2"):
        code = main(["run", "--scenarios", str(SMOKE), "--filter", "smoke-02*", "--filter", "smoke-03*",
                     "--arms", "history_only", "recall", "--out", str(root / "nightly" / name), "--no-cache", "--no-progress"])
        assert code in (0, 1)
    live = root / "live"
    live.mkdir()
    manifest = json.loads((root / "nightly" / "n1" / "run.json").read_text(encoding="utf-8"))
    manifest.update(run_id="live", status="running", finished_at=None)
    (live / "run.json").write_text(json.dumps(manifest), encoding="utf-8")
    lines = (root / "nightly" / "n1" / "results.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (live / "results.jsonl").write_text("".join(lines[:2]), encoding="utf-8")
    (live / "later.jsonl").write_text("".join(lines[2:]), encoding="utf-8")  # appended by tests to make it progress
    return root


def progress_live(root: Path) -> None:
    """The live run writes one more record."""
    rest = (root / "live" / "later.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    with (root / "live" / "results.jsonl").open("a", encoding="utf-8") as handle:
        handle.write(rest[0])
    (root / "live" / "later.jsonl").write_text("".join(rest[1:]), encoding="utf-8")


@contextmanager
def serving(root: Path) -> Iterator[str]:
    """The viewer of ``root`` on 127.0.0.1 and a free port, in a thread; yields its base URL."""
    from harness.runs.viewer import make_server

    server = make_server(root, 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def fetch(url: str, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    """``(status, body)`` of a GET, errors included."""
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310 - a local test server
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """Every file below ``root`` with its size and modification time: what the viewer must leave as it was."""
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(root.rglob("*")) if p.is_file()}


def copy_tree(source: Path, target: Path) -> Path:
    shutil.copytree(source, target)
    return target
