"""The viewer's index of run folders, kept incrementally: a poll re-reads only the runs whose files changed.

An open viewer tab polls ``/_runs.json`` every 2 to 10 seconds. Reading every
``run.json`` and ``summary.json`` below the folder on each poll cost 8-10 s
over 2,000 runs; :class:`RunIndex` instead keeps each run's row with the
``os.stat`` signature (inode, size, modification time) of the files the row
is made from, and reads a run again only when its signature changed. A poll
where nothing changed costs one walk of the folders and a few ``stat`` calls
per run. A growing ``results.jsonl`` (a run in progress) is counted from
where the last count stopped.

One bad run costs one row: an unreadable ``run.json`` or ``summary.json`` is
a row saying why (:mod:`harness.runs.summary_file`), a run folder that
vanishes while it is read drops out of the index, and no file that is not a
regular file (a FIFO named ``results.jsonl``) is ever opened.
"""

from __future__ import annotations

import math
import os
import stat
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from harness.regular_files import open_regular

__all__ = ["SKIPPED_FOLDERS", "RunIndex", "RunRow", "find_run_folders", "finite_json", "read_row"]

#: Folders never searched for runs: caches, virtualenvs, version control.
SKIPPED_FOLDERS = frozenset({".recall-eval-cache", ".git", ".venv", "node_modules", "__pycache__"})
#: The files a row is made from: a change to any of them (or its appearing) makes the run be read again.
_WATCHED = ("run.json", "summary.json", "results.jsonl", "scores.jsonl", "index.html")


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
    verdict: str  #: summary.json's verdict, '' before the report, 'unreadable' when summary.json cannot be read
    report: bool  #: index.html exists
    comparable: bool  #: summary.json and scores.jsonl exist (compare reads them)
    #: Per model: the paired continuity difference treatment - baseline, ``{"model", "value", "ci_low", "ci_high"}``.
    continuity: list[dict[str, Any]] = field(default_factory=list)
    problem: str = ""


def skipped(name: str) -> bool:
    """A folder the index never looks into: a dot-folder (``.git``, ``.env.d``), a cache, a virtualenv."""
    return name.startswith(".") or name in SKIPPED_FOLDERS


def find_run_folders(root: Path) -> Iterator[Path]:
    """Every folder below ``root`` (itself included) holding a ``run.json``, sorted; a run folder's insides are not searched."""
    for current, dirs, files in os.walk(root, followlinks=False):
        if "run.json" in files:
            dirs[:] = []
            yield Path(current)
            continue
        dirs[:] = sorted(d for d in dirs if not skipped(d))


def _signature(run_dir: Path) -> tuple[tuple[int, int, int, int] | None, ...]:
    """(inode, size, mtime in ns, mode) of each watched file, None for one that is missing."""
    out: list[tuple[int, int, int, int] | None] = []
    folder = os.fspath(run_dir)
    for name in _WATCHED:
        try:
            st = os.stat(os.path.join(folder, name))
        except OSError:
            out.append(None)
        else:
            out.append((st.st_ino, st.st_size, st.st_mtime_ns, st.st_mode))
    return tuple(out)


@dataclass(frozen=True)
class _Count:
    """Complete lines of a ``results.jsonl`` up to ``size`` bytes of the file with inode ``inode``."""

    inode: int = -1
    size: int = 0
    lines: int = 0


def count_lines(results: Path, before: _Count = _Count()) -> _Count:
    """Complete lines of ``results.jsonl`` (a count, without parsing), reading only what was appended since ``before``.

    A file that is not a regular file (a FIFO) counts 0 and is never opened; a file that shrank or was
    replaced is counted again from its start.
    """
    try:
        with open_regular(results) as handle:
            st = os.fstat(handle.fileno())
            start = before if (st.st_ino == before.inode and st.st_size >= before.size) else _Count(st.st_ino)
            handle.seek(start.size)
            lines = start.lines + sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 20), b""))
            return _Count(st.st_ino, handle.tell(), lines)
    except OSError:
        return _Count()


def _number(value: Any) -> float | None:
    """A finite number, else None: a row's figures go into JSON, where NaN is not a value."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        return value if math.isfinite(value) else None
    except OverflowError:  # an integer of 400 digits
        return None


def finite_json(value: Any) -> Any:
    """``value`` with every NaN or infinite float replaced by None (JSON has neither)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite_json(v) for v in value]
    return value


def _continuity(summary: dict[str, Any]) -> list[dict[str, Any]]:
    config = (summary.get("verdict") or {}).get("config") or {}
    treatment, baseline = config.get("treatment_arm") or "recall", config.get("baseline_arm") or "history_only"
    return [
        {"model": str(r.get("model")), "value": _number(r.get("diff")), "ci_low": _number(r.get("ci_low")),
         "ci_high": _number(r.get("ci_high"))}
        for r in summary.get("paired") or []
        if r.get("category", "all") == "all" and r.get("metric") == "continuity_accuracy"
        and r.get("arm_a") == baseline and r.get("arm_b") == treatment
    ]


def read_summary(path: Path) -> dict[str, Any]:
    """``summary.json`` checked for what a row shows (:func:`harness.runs.summary_file.read_summary_file`)."""
    from harness.runs.summary_file import read_summary_file

    return read_summary_file(path)


def read_row(root: Path, run_dir: Path, done: int | None = None) -> RunRow:
    """The index row of one run folder; an unreadable ``run.json`` or ``summary.json`` is named, never raised.

    ``done``: the complete lines of ``results.jsonl`` when the caller counted them (else they are counted here).

    Raises:
        FileNotFoundError: the run folder vanished while it was read (the caller drops it).
    """
    from harness.records import ResultsError, read_manifest
    from harness.runs.summary_file import SummaryFileError

    rel = run_dir.relative_to(root).as_posix()
    rel = "" if rel == "." else rel
    base: dict[str, Any] = {"path": rel, "report": (run_dir / "index.html").is_file(),
            "comparable": (run_dir / "summary.json").is_file() and (run_dir / "scores.jsonl").is_file()}
    try:
        manifest = read_manifest(run_dir)
    except (ResultsError, OSError) as exc:
        if not (run_dir / "run.json").exists():
            raise FileNotFoundError(run_dir / "run.json") from None
        return replace(_unreadable(root, run_dir, str(exc)), report=base["report"], comparable=base["comparable"])
    summary: dict[str, Any] = {}
    problem, verdict = "", ""
    if (run_dir / "summary.json").exists():
        try:
            summary = read_summary(run_dir / "summary.json")
            verdict = str((summary.get("verdict") or {}).get("status") or "")
        except FileNotFoundError:
            pass  # removed since the check: the run has no report (any more)
        except (SummaryFileError, OSError) as exc:
            problem, verdict = f"summary.json unreadable: {exc}", "unreadable"
    planned = manifest.sample_count or len(manifest.scenario_ids) * len(manifest.arms) * len(manifest.models) * manifest.epochs
    return RunRow(
        run_id=manifest.run_id, suite=", ".join(Path(p).name for p in manifest.scenario_paths),
        scenarios=len(manifest.scenario_ids), models=list(manifest.models), arms=list(manifest.arms),
        status=manifest.status, started_at=manifest.started_at or "",
        samples_done=count_lines(run_dir / "results.jsonl").lines if done is None else done,
        samples_planned=planned, verdict=verdict, continuity=_continuity(summary), problem=problem, **base,
    )


def _unreadable(root: Path, run_dir: Path, problem: str) -> RunRow:
    """The row of a run folder whose files cannot be shown: its name and why."""
    rel = run_dir.relative_to(root).as_posix()
    return RunRow(path="" if rel == "." else rel, run_id=run_dir.name, suite="", scenarios=0, models=[], arms=[],
                  status="unreadable", started_at="", samples_done=0, samples_planned=0, verdict="", report=False,
                  comparable=False, problem=problem)


@dataclass(frozen=True)
class _Entry:
    signature: tuple[Any, ...]
    row: dict[str, Any]
    sensitive: bool
    count: _Count


def _sensitive(run_dir: Path) -> bool:
    from harness.runs.history import is_sensitive_run

    return is_sensitive_run(run_dir, unreadable=False)


class RunIndex:
    """Every run below ``root`` as JSON-ready rows, re-reading only the runs whose watched files changed."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root).resolve()
        self._entries: dict[Path, _Entry] = {}
        self._lock = threading.Lock()

    def _entry(self, run_dir: Path) -> _Entry | None:
        signature = _signature(run_dir)
        if signature[0] is None:
            return None  # run.json gone: the run vanished
        old = self._entries.get(run_dir)
        if old is not None and old.signature == signature:
            return old
        count = count_lines(run_dir / "results.jsonl", old.count if old is not None else _Count())
        if old is not None and old.signature[:2] == signature[:2] and old.signature[3:] == signature[3:]:
            # only results.jsonl changed (a run in progress): the row as it was, with the new count
            return _Entry(signature, {**old.row, "samples_done": count.lines}, old.sensitive, count)
        try:
            read = read_row(self.root, run_dir, done=count.lines)
        except FileNotFoundError:
            return None
        except Exception as exc:  # noqa: BLE001 - a file no check foresaw costs its row, never the index
            read = _unreadable(self.root, run_dir, f"cannot be indexed: {type(exc).__name__}: {exc}")
        row = {f.name: getattr(read, f.name) for f in fields(read)}
        if not os.path.exists(os.path.join(run_dir, "run.json")):
            return None  # removed while it was read: no row for a run that is not there
        return _Entry(signature, finite_json(row), _sensitive(run_dir), count)

    def refresh(self) -> list[_Entry]:
        """Walk the folders, re-read what changed, forget what vanished; the entries, newest first."""
        with self._lock:  # two tabs polling at once read each changed run once
            entries: dict[Path, _Entry] = {}
            for run_dir in find_run_folders(self.root):
                entry = self._entry(run_dir)
                if entry is not None:
                    entries[run_dir] = entry
            self._entries = entries
        return sorted(entries.values(), key=lambda e: (e.row["started_at"], e.row["path"]), reverse=True)

    def rows(self, *, include_sensitive: bool = False) -> list[dict[str, Any]]:
        """Every run's row, newest first; sensitive runs only when ``include_sensitive``."""
        return [e.row for e in self.refresh() if include_sensitive or not e.sensitive]

    def sensitive_count(self) -> int:
        """Runs of the last refresh that hold real user data (hidden unless ``--include-sensitive``)."""
        with self._lock:
            return sum(e.sensitive for e in self._entries.values())


def is_regular(path: Path) -> bool:
    """``path`` itself (not a link to one) is a regular file."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False
