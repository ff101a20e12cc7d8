"""``recall-eval view [DIR]``: one local page over every run folder below DIR.

The run folders stay the artifact: the viewer only indexes and serves them
(standard library ``http.server``, bound to 127.0.0.1). ``/`` lists every run
(suite, models, arms, verdict, the paired continuity difference, started,
status, samples done); the page polls ``/_runs.json`` so a run in progress
counts up live. Each row opens its own ``index.html``; any two ticked rows
open the compare page (``/_compare?a=..&b=..``), and ``/_history`` the
history page of every run. Those two pages are built on request into a
temporary folder the viewer owns, never into a run folder; their links are
relative to DIR, which is where the viewer serves the run folders' reports
(``/<run>/index.html``).

Only what those pages link to is served: the ``index.html`` of a run folder
the index lists (:data:`SERVED_ARTEFACTS`), reached through no symbolic link
and itself a regular file. Nothing else below DIR is, whatever its name: no
dotfile and nothing under a dot-folder (``.env``, ``.git``, the response
cache, a run's ``.lock``), no store (``memory.sqlite``), no ``run.json`` or
``results.jsonl``; ``view .`` in a checkout serves nothing of ``.git``. A
request whose ``Host`` is not this server is refused (a page on another site
cannot read the runs through DNS rebinding). The index is kept incrementally
(:mod:`harness.runs.viewer_index`): the server answers at once, reads every
run once in the background, then only the runs whose files changed.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
import tempfile
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from harness.regular_files import open_regular
from harness.runs.viewer_index import RunIndex, RunRow, find_run_folders, finite_json, is_regular, read_row, skipped
from harness.wrapping import say_path

__all__ = ["DEFAULT_PORT", "SERVED_ARTEFACTS", "RunRow", "ViewError", "Viewer", "cli_view", "find_run_folders",
           "index_rows", "make_server", "read_row"]

DEFAULT_PORT = 8765
#: The files of a run folder the viewer serves: what the index, compare and history pages link to (its report).
#: Nothing else (run.json, results.jsonl, a store, a .env, a cache entry, a lock) is served, whatever its name.
SERVED_ARTEFACTS = frozenset({"index.html"})


class ViewError(Exception):
    """The viewer cannot start or cannot build a page; the message says why."""


def index_rows(root: Path, *, include_sensitive: bool = False) -> list[dict[str, Any]]:
    """Every run below ``root`` as JSON-ready rows, newest first; sensitive runs only when ``include_sensitive``."""
    return RunIndex(root).rows(include_sensitive=include_sensitive)


class Viewer:
    """What the request handler serves: the index, the run folders' reports, compare and history pages."""

    def __init__(self, root: Path, cache: Path, *, include_sensitive: bool = False) -> None:
        self.root = root.resolve()
        self.cache = cache
        self.include_sensitive = include_sensitive
        self.index = RunIndex(self.root)
        self._lock = threading.Lock()

    def listed_folder(self, rel: str) -> Path | None:
        """The run folder ``rel`` names, when it is one the index lists; None otherwise.

        Listed: below DIR through no symbolic link, no dot-folder or cache on the way, holding a regular
        ``run.json`` and inside no other run folder (the index never looks inside a run folder).
        """
        parts = [p for p in rel.strip("/").split("/") if p]
        if "\x00" in rel or any(skipped(p) for p in parts):
            return None
        folder = self.root.joinpath(*parts)
        try:
            if folder.resolve() != folder:  # a link on the way: not the folder the index walked to
                return None
        except OSError:
            return None
        if not is_regular(folder / "run.json"):
            return None
        if any((self.root.joinpath(*parts[:i]) / "run.json").exists() for i in range(len(parts))):
            return None  # inside another run folder
        return folder

    def hidden(self, folder: Path) -> bool:
        """``folder`` is a sensitive run folder (or its run.json cannot be read: when in doubt, serve nothing of it)
        and the viewer was not asked to show those."""
        from harness.runs.history import is_sensitive_run

        return not self.include_sensitive and is_sensitive_run(folder)

    def artefact(self, rel: str) -> Path:
        """The report file a URL path names (``run/index.html``; a folder means its ``index.html``).

        Raises:
            ViewError: anything else: a file that is not a served artefact (:data:`SERVED_ARTEFACTS`), a dotfile or
                anything under a dot-folder, a folder the index does not list, a sensitive run (unless asked),
                a link or anything but a regular file.
        """
        parts = [p for p in rel.strip("/").split("/") if p]
        if not parts or parts[-1] not in SERVED_ARTEFACTS:
            parts.append("index.html")
        folder = self.listed_folder("/".join(parts[:-1]))
        if folder is None:
            raise ViewError(f"not found: {rel} (the viewer serves only the reports of the runs its index lists)")
        if self.hidden(folder):
            raise ViewError(f"not found: {rel} (a sensitive run: start the viewer with --include-sensitive)")
        path = folder / parts[-1]
        if not is_regular(path):
            raise ViewError(f"not found: {rel}")
        return path

    def run_folder(self, rel: str) -> Path:
        """A run folder named by the query, listed by the index and holding a report to compare."""
        path = self.listed_folder(rel)
        if path is None or self.hidden(path):
            raise ViewError(f"{rel!r} is not a run folder below {self.root}"
                            + (" (a sensitive run: start the viewer with --include-sensitive)"
                               if path is not None else ""))
        if not ((path / "summary.json").is_file() and (path / "scores.jsonl").is_file()):
            raise ViewError(f"{rel}: no report yet (summary.json, scores.jsonl); build it with `recall-eval report {path}`")
        return path

    def compare_page(self, a: str, b: str) -> str:
        from harness.runs.compare import compare_runs
        from harness.runs.compare_page import render_compare

        run_a, run_b = self.run_folder(a), self.run_folder(b)
        unreadable: tuple[type[Exception], ...] = (*_data_errors(), OSError)
        with self._lock:  # one build at a time: two tabs asking for the same pair build it once each, not interleaved
            try:
                cmp = compare_runs(run_a, run_b)
            except unreadable:
                gone = [rel for rel, path in ((a, run_a), (b, run_b)) if not (path / "run.json").exists()]
                if gone:
                    raise ViewError(f"not found: run {', '.join(gone)} (removed while the page was built)") from None
                raise
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


def _data_errors() -> tuple[type[Exception], ...]:
    """What a compare or history page raises for a run folder it cannot be built from (a message, not a fault)."""
    from harness.records import ResultsError
    from harness.report import ReportError
    from harness.runs.comparability import CompareError
    from harness.runs.history import HistoryError

    return CompareError, ResultsError, ReportError, HistoryError


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
                    rows = viewer.index.rows(include_sensitive=viewer.include_sensitive)
                    body = json.dumps(finite_json({"root": str(viewer.root), "runs": rows}),
                                      allow_nan=False).encode("utf-8")
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
            except (FileNotFoundError, NotADirectoryError) as exc:  # a run folder removed while it was read
                self._text(HTTPStatus.NOT_FOUND, f"not found: {exc.filename or url.path} (removed while being read)")
            except _data_errors() as exc:  # a run folder the page cannot be built from: its message says why
                self._text(HTTPStatus.UNPROCESSABLE_ENTITY, str(exc))
            except Exception as exc:  # noqa: BLE001 - a page that cannot be built is an answer, not a dead server
                self._text(HTTPStatus.INTERNAL_SERVER_ERROR, f"{type(exc).__name__}: {exc}")

        def _file(self, rel: str) -> None:
            path = viewer.artefact(rel)
            with open_regular(path, follow_symlinks=False) as handle:  # not a FIFO or a link swapped in since
                body = handle.read()
            self._send(HTTPStatus.OK, body, "text/html; charset=utf-8")

    return Handler


def make_server(root: Path, port: int = DEFAULT_PORT, cache: Path | None = None, *,
                include_sensitive: bool = False) -> _Server:
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
        viewer = Viewer(root, cache, include_sensitive=include_sensitive)
        server = _Server(("127.0.0.1", port), _handler(viewer))
    except OSError as exc:
        if own:
            shutil.rmtree(cache, ignore_errors=True)
        raise ViewError(f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}; choose another --port (0 picks a free one)") from None
    server.daemon_threads = True
    server.owned_cache = cache if own else None
    server.viewer = viewer
    return server


class _Server(ThreadingHTTPServer):
    """The viewer's server; closing it removes the folder of built pages it made for itself."""

    owned_cache: Path | None = None
    viewer: Viewer

    def server_close(self) -> None:
        super().server_close()
        if self.owned_cache is not None:
            shutil.rmtree(self.owned_cache, ignore_errors=True)


def _warm(viewer: Viewer) -> None:
    """Read every run once, while the server already answers (the page's first poll waits for it, later ones read
    only what changed); then say how many sensitive runs are hidden."""
    try:
        viewer.index.rows()
    except OSError as exc:  # the folder itself became unreadable: each poll will say so
        print(f"recall-eval view: cannot index {viewer.root}: {exc.strerror or exc}", file=sys.stderr, flush=True)
        return
    hidden = 0 if viewer.include_sensitive else viewer.index.sensitive_count()
    if hidden:
        print(f"{hidden} sensitive run(s) hidden (--include-sensitive shows them)", flush=True)


def cli_view(args: Any) -> int:
    """``recall-eval view [DIR] [--port N]``: serve until Ctrl-C (0); 2 when it cannot start."""
    root = Path(args.dir)
    try:
        server = make_server(root, args.port, include_sensitive=bool(getattr(args, "include_sensitive", False)))
    except ViewError as exc:
        print(f"recall-eval view: {exc}", file=sys.stderr)
        return 2
    host, port = str(server.server_address[0]), server.server_address[1]
    count = sum(1 for _ in find_run_folders(server.viewer.root))
    print(f"serving at http://{host}:{port}/ (Ctrl-C stops)")  # the address first: it is what the user opens
    say_path(f"{count} run folder(s) below", root.resolve())  # a long folder stands on its own line
    sys.stdout.flush()
    threading.Thread(target=_warm, args=(server.viewer,), name="view-index", daemon=True).start()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("stopped", file=sys.stderr)
    finally:
        server.server_close()
    return 0
