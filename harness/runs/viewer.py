"""``recall-eval view [DIR]``: one local page over every run folder below DIR.

The run folders stay the artifact: the viewer only indexes and serves them
(standard library ``http.server``, bound to 127.0.0.1). ``/`` lists every run
(suite, models, arms, verdict, the paired continuity difference, started,
status, samples done); the page polls ``/_runs.json`` so a run in progress
counts up live. Each row opens its own ``index.html``; any two ticked rows
open the compare page (``/_compare?a=..&b=..``), and ``/_history`` the
history page of every run. Those two pages are built on request into a
temporary folder the viewer owns, never into a run folder; their links are
relative to DIR, which is where the viewer serves the run folders' files
(``/<run>/index.html``). Nothing outside DIR is served: every path is
resolved (symbolic links included) and must stay below DIR; a request whose
``Host`` is not this server is refused (a page on another site cannot read
the runs through DNS rebinding).
"""

from __future__ import annotations

import hashlib
import json
import mimetypes
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

#: Folders never searched for runs: caches, virtualenvs, version control.
_SKIPPED = {".recall-eval-cache", ".git", ".venv", "node_modules", "__pycache__"}
DEFAULT_PORT = 8765


class ViewError(Exception):
    """The viewer cannot start or cannot build a page; the message says why."""


@dataclass(frozen=True)
class RunRow:
    """One run folder as the index lists it."""

    path: str  #: below DIR, with '/' (the URL of its files)
    run_id: str
    suite: str
    scenarios: int
    models: list[str]
    arms: list[str]
    status: str  #: run.json's status: running, complete, interrupted, failed (or unreadable)
    started_at: str
    samples_done: int
    samples_planned: int
    verdict: str  #: summary.json's verdict, '' before the report
    report: bool  #: index.html exists
    comparable: bool  #: summary.json and scores.jsonl exist (compare reads them)
    #: Per model: the paired continuity difference treatment - baseline, ``{"model", "value", "ci_low", "ci_high"}``.
    continuity: list[dict[str, Any]] = field(default_factory=list)
    problem: str = ""


def find_run_folders(root: Path) -> Iterator[Path]:
    """Every folder below ``root`` (itself included) holding a ``run.json``, sorted; a run folder's insides are not searched."""
    for current, dirs, files in os.walk(root, followlinks=False):
        if "run.json" in files:
            dirs[:] = []
            yield Path(current)
            continue
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED and not d.startswith("."))


def _done(results: Path) -> int:
    """Complete lines of ``results.jsonl`` (a count, without parsing: the index is polled)."""
    try:
        with results.open("rb") as handle:
            return sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 20), b""))
    except OSError:
        return 0


def _continuity(summary: dict[str, Any]) -> list[dict[str, Any]]:
    config = (summary.get("verdict") or {}).get("config") or {}
    treatment, baseline = config.get("treatment_arm") or "recall", config.get("baseline_arm") or "history_only"
    return [
        {"model": r.get("model"), "value": r.get("diff"), "ci_low": r.get("ci_low"), "ci_high": r.get("ci_high")}
        for r in summary.get("paired") or []
        if isinstance(r, dict) and r.get("category", "all") == "all" and r.get("metric") == "continuity_accuracy"
        and r.get("arm_a") == baseline and r.get("arm_b") == treatment
    ]


def read_row(root: Path, run_dir: Path) -> RunRow:
    """The index row of one run folder; an unreadable ``run.json`` or ``summary.json`` is named, never raised."""
    from harness.records import ResultsError, read_manifest

    rel = run_dir.relative_to(root).as_posix()
    rel = "" if rel == "." else rel
    base = {"path": rel, "report": (run_dir / "index.html").is_file(),
            "comparable": (run_dir / "summary.json").is_file() and (run_dir / "scores.jsonl").is_file()}
    try:
        manifest = read_manifest(run_dir)
    except (ResultsError, OSError) as exc:
        return RunRow(run_id=run_dir.name, suite="", scenarios=0, models=[], arms=[], status="unreadable", started_at="",
                      samples_done=0, samples_planned=0, verdict="", problem=str(exc), **base)
    summary: dict[str, Any] = {}
    problem = ""
    if (run_dir / "summary.json").is_file():
        try:
            loaded = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
            summary = loaded if isinstance(loaded, dict) else {}
        except (OSError, ValueError) as exc:
            problem = f"summary.json unreadable: {exc}"
    planned = manifest.sample_count or len(manifest.scenario_ids) * len(manifest.arms) * len(manifest.models) * manifest.epochs
    return RunRow(
        run_id=manifest.run_id, suite=", ".join(Path(p).name for p in manifest.scenario_paths),
        scenarios=len(manifest.scenario_ids), models=list(manifest.models), arms=list(manifest.arms),
        status=manifest.status, started_at=manifest.started_at or "", samples_done=_done(run_dir / "results.jsonl"),
        samples_planned=planned, verdict=str((summary.get("verdict") or {}).get("status") or ""),
        continuity=_continuity(summary), problem=problem, **base,
    )


def index_rows(root: Path, *, include_sensitive: bool = False) -> list[dict[str, Any]]:
    """Every run below ``root`` as JSON-ready rows, newest first; sensitive runs only when ``include_sensitive``."""
    from harness.runs.history import is_sensitive_run

    rows = [asdict(read_row(root, run_dir)) for run_dir in find_run_folders(root)
            if include_sensitive or not is_sensitive_run(run_dir, unreadable=False)]
    return sorted(rows, key=lambda r: (r["started_at"], r["path"]), reverse=True)


def inside(root: Path, rel: str) -> Path | None:
    """``root / rel`` resolved, when it stays below ``root`` (symbolic links followed); None otherwise."""
    if "\x00" in rel:
        return None
    candidate = (root / rel.lstrip("/")).resolve()
    return candidate if candidate == root or candidate.is_relative_to(root) else None


class Viewer:
    """What the request handler serves: the index, the run folders' files, compare and history pages."""

    def __init__(self, root: Path, cache: Path, *, include_sensitive: bool = False) -> None:
        self.root = root.resolve()
        self.cache = cache
        self.include_sensitive = include_sensitive
        self._lock = threading.Lock()

    def hidden(self, path: Path) -> bool:
        """``path`` lies in a sensitive run folder and the viewer was not asked to show those."""
        from harness.runs.history import is_sensitive_run

        if self.include_sensitive:
            return False
        for folder in (path, *path.parents):
            if folder == self.root.parent or not folder.is_relative_to(self.root):
                break
            if (folder / "run.json").is_file():
                return is_sensitive_run(folder)
        return False

    def run_folder(self, rel: str) -> Path:
        """A run folder named by the query, below the root and holding a report to compare."""
        path = inside(self.root, rel)
        if path is None or not (path / "run.json").is_file() or self.hidden(path):
            raise ViewError(f"{rel!r} is not a run folder below {self.root}"
                            + (" (a sensitive run: start the viewer with --include-sensitive)"
                               if path is not None and self.hidden(path) else ""))
        if not ((path / "summary.json").is_file() and (path / "scores.jsonl").is_file()):
            raise ViewError(f"{rel}: no report yet (summary.json, scores.jsonl); build it with `recall-eval report {path}`")
        return path

    def compare_page(self, a: str, b: str) -> str:
        from harness.runs.compare import compare_runs
        from harness.runs.compare_page import render_compare

        run_a, run_b = self.run_folder(a), self.run_folder(b)
        with self._lock:  # one build at a time: two tabs asking for the same pair build it once each, not interleaved
            cmp = compare_runs(run_a, run_b)
            page = render_compare(cmp, self.root, force=not cmp.comparable)
        self._keep(f"compare-{_digest(a, b)}.html", page, run_a, run_b)
        return page

    def history_page(self) -> str:
        from harness.runs.history import read_points, render_history

        runs = [p for p in find_run_folders(self.root) if (p / "summary.json").is_file()]
        if not runs:
            raise ViewError(f"no run below {self.root} has a report yet")
        with self._lock:
            points, warnings = read_points(runs, include_sensitive=self.include_sensitive)
            page = render_history(points, self.root, warnings)
        self._keep("history.html", page, *(p.path for p in points))
        return page

    def _keep(self, name: str, page: str, *runs: Path) -> None:
        """The built page, also written to the viewer's own folder (never a run folder), for a look afterwards.

        Not when it shows a sensitive run: that folder is outside the run folders, and a sensitive run's text is
        written nowhere but its own folder (the page is still served from memory).
        """
        from harness.runs.history import is_sensitive_run

        if any(is_sensitive_run(run) for run in runs):
            return
        (self.cache / name).write_text(page, encoding="utf-8")


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()[:16]


def _handler(viewer: Viewer) -> type[BaseHTTPRequestHandler]:
    from harness.runs.viewer_page import INDEX_PAGE

    class Handler(BaseHTTPRequestHandler):
        server_version = "recall-eval-view"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
            pass  # quiet: the terminal shows the address, not every poll

        def _send(self, status: int, body: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Content-Type-Options", "nosniff")
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _text(self, status: int, text: str) -> None:
            self._send(status, text.encode("utf-8"), "text/plain; charset=utf-8")

        def _host_ok(self) -> bool:
            host = (self.headers.get("Host") or "").rsplit(":", 1)[0].strip("[]")
            return host in ("127.0.0.1", "localhost", "::1")

        def do_HEAD(self) -> None:  # noqa: N802 - http.server's name
            self.do_GET()

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            if not self._host_ok():
                self._text(HTTPStatus.FORBIDDEN, "forbidden: this viewer answers only to 127.0.0.1 and localhost")
                return
            url = urlsplit(self.path)
            query = {k: v[-1] for k, v in parse_qs(url.query).items()}
            try:
                if url.path == "/":
                    self._send(HTTPStatus.OK, INDEX_PAGE.encode("utf-8"), "text/html; charset=utf-8")
                elif url.path == "/_runs.json":
                    rows = index_rows(viewer.root, include_sensitive=viewer.include_sensitive)
                    body = json.dumps({"root": str(viewer.root), "runs": rows}).encode("utf-8")
                    self._send(HTTPStatus.OK, body, "application/json")
                elif url.path == "/_compare":
                    page = viewer.compare_page(query.get("a", ""), query.get("b", ""))
                    self._send(HTTPStatus.OK, page.encode("utf-8"), "text/html; charset=utf-8")
                elif url.path == "/_history":
                    self._send(HTTPStatus.OK, viewer.history_page().encode("utf-8"), "text/html; charset=utf-8")
                else:
                    self._file(unquote(url.path))
            except ViewError as exc:
                self._text(HTTPStatus.NOT_FOUND, str(exc))
            except Exception as exc:  # noqa: BLE001 - a page that cannot be built is an answer, not a dead server
                self._text(HTTPStatus.INTERNAL_SERVER_ERROR, f"{type(exc).__name__}: {exc}")

        def _file(self, rel: str) -> None:
            path = inside(viewer.root, rel)
            if path is not None and path.is_dir():
                path = path / "index.html"
            if path is not None and viewer.hidden(path):
                self._text(HTTPStatus.NOT_FOUND, f"not found: {rel} (a sensitive run: start the viewer with "
                                                 "--include-sensitive)")
                return
            if path is None or not path.is_file():
                self._text(HTTPStatus.NOT_FOUND, f"not found: {rel}")
                return
            kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
            if kind.startswith("text/") or kind in ("application/json", "application/javascript"):
                kind += "; charset=utf-8"
            self._send(HTTPStatus.OK, path.read_bytes(), kind)

    return Handler


def make_server(root: Path, port: int = DEFAULT_PORT, cache: Path | None = None, *,
                include_sensitive: bool = False) -> ThreadingHTTPServer:
    """A server of ``root`` on 127.0.0.1:``port`` (0: a free port; ``server.server_address`` says which).

    Raises:
        ViewError: ``root`` is not a folder, or the port cannot be had.
    """
    root = Path(root)
    if not root.is_dir():
        raise ViewError(f"{root}: no such folder; pass the folder that holds your run folders (default reports)")
    own = cache is None
    cache = Path(tempfile.mkdtemp(prefix="recall-eval-view-")) if cache is None else cache
    try:
        server = _Server(("127.0.0.1", port), _handler(Viewer(root, cache, include_sensitive=include_sensitive)))
    except OSError as exc:
        if own:
            shutil.rmtree(cache, ignore_errors=True)
        raise ViewError(f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}; choose another --port (0 picks a free one)") from None
    server.daemon_threads = True
    server.owned_cache = cache if own else None
    return server


class _Server(ThreadingHTTPServer):
    """The viewer's server; closing it removes the folder of built pages it made for itself."""

    owned_cache: Path | None = None

    def server_close(self) -> None:
        super().server_close()
        if self.owned_cache is not None:
            shutil.rmtree(self.owned_cache, ignore_errors=True)


def cli_view(args: Any) -> int:
    """``recall-eval view [DIR] [--port N]``: serve until Ctrl-C (0); 2 when it cannot start."""
    root = Path(args.dir)
    try:
        server = make_server(root, args.port, include_sensitive=bool(getattr(args, "include_sensitive", False)))
    except ViewError as exc:
        print(f"recall-eval view: {exc}", file=sys.stderr)
        return 2
    host, port = server.server_address[:2]
    count = len(index_rows(root, include_sensitive=bool(getattr(args, "include_sensitive", False))))
    hidden = sum(1 for _ in find_run_folders(root)) - count
    print(f"serving {count} run(s) below {root.resolve()} at http://{host}:{port}/ (Ctrl-C stops)"
          + (f"; {hidden} sensitive run(s) hidden (--include-sensitive shows them)" if hidden else ""), flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("stopped", file=sys.stderr)
    finally:
        server.server_close()
    return 0
