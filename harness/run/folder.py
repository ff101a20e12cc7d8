"""Who may write a run folder, and what an earlier attempt left in it.

A run folder has one writer at a time: ``recall-eval run`` and ``run
--resume`` hold an OS lock (``flock``) on ``<run folder>/.lock`` from before
the first write of ``run.json`` until they exit (with ``--workers`` the
parent holds it; only the parent writes). A second writer stops at once with
a message naming the holder. The lock file stays in the folder: it holds the
pid, host and start time of the last holder, and a holder that was killed
releases the lock with its process (the OS does it), so a stale file never
blocks. It is never deleted, because deleting a lock file lets two
processes each lock a different file of the same name.

Before the first model call the folder is created, locked and written to
(lock file, ``results.jsonl``, ``run.json``): a folder that cannot be
written fails here, with a message, instead of after the model was paid.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path

from harness.records import MANIFEST_FILE, RESULTS_FILE, SampleRecord, scan_results

LOCK_FILE = ".lock"
# How long a second writer waits for the holder to finish writing its name into the lock file.
_HOLDER_READ_S = 1.0
# Bad lines named one by one before the rest are only counted.
_MAX_PROBLEMS_SHOWN = 10


class RunFolderError(Exception):
    """The run folder cannot be written, or another process is writing it; the message says which and what to do."""


@dataclass
class RunFolderLock:
    """An exclusive ``flock`` on the run folder's lock file, held until :meth:`release`."""

    path: Path
    fd: int

    def release(self) -> None:
        """Give the folder up (also done by the OS when the process ends, however it ends)."""
        if self.fd >= 0:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = -1


def _why(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def prepare_folder(run_dir: Path) -> None:
    """Create ``run_dir`` (and parents) or say, without a traceback, why it cannot be."""
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise RunFolderError(f"cannot create the run folder {run_dir}: a file of that name exists; choose another --out") from None
    except OSError as exc:
        hint = "a parent is a file, not a folder" if isinstance(exc, NotADirectoryError) else _why(exc)
        raise RunFolderError(f"cannot create the run folder {run_dir}: {hint}; choose another --out") from None
    if not run_dir.is_dir():
        raise RunFolderError(f"cannot use {run_dir} as a run folder: it is not a folder; choose another --out")


def _holder(fd: int) -> dict[str, object]:
    """What the current holder wrote into the lock file (it may still be writing: retry briefly)."""
    deadline = time.monotonic() + _HOLDER_READ_S
    while True:
        try:
            data = json.loads(os.pread(fd, 4096, 0) or b"null")
            if isinstance(data, dict) and "pid" in data:
                return data
        except (OSError, ValueError):
            pass
        if time.monotonic() >= deadline:
            return {}
        time.sleep(0.05)


def lock_folder(run_dir: Path, started_at: str) -> RunFolderLock:
    """Take the run folder's lock, or raise :class:`RunFolderError` naming the process that holds it.

    Also the first write test of the folder: the lock file is created and
    this process's pid, host and ``started_at`` are written into it.
    """
    path = run_dir / LOCK_FILE
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)  # never through a planted link
    except OSError as exc:
        raise RunFolderError(f"cannot write the run folder {run_dir}: {_why(exc)} ({path}); choose another --out") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _holder(fd)
        os.close(fd)
        raise RunFolderError(f"run folder {run_dir} is being written by {describe_writer(holder)}; wait for it or use another --out") from None
    info = json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "started_at": started_at}).encode("utf-8") + b"\n"
    try:
        os.pwrite(fd, info, 0)
        os.ftruncate(fd, len(info))
    except OSError as exc:
        RunFolderLock(path, fd).release()
        raise RunFolderError(f"cannot write the run folder {run_dir}: {_why(exc)} ({path}); free space or choose another --out") from None
    return RunFolderLock(path, fd)


def live_writer(run_dir: Path) -> dict[str, object] | None:
    """The holder of ``run_dir``'s lock while a live process holds it (``pid``, ``host``, ``started_at``), else None.

    For readers that would write beside a run (``report``, ``compare``): a
    run still writing must not get a summary of half its records. Nothing is
    created: a folder without a lock file has no writer, and a lock file
    whose holder died (the OS released its lock) is stale and reads as None.
    The check takes a shared lock for an instant; a writer starting in that
    instant is refused as if another writer held the folder.
    """
    try:
        fd = os.open(Path(run_dir) / LOCK_FILE, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:  # no lock file (never run, or not a run folder), or a link: no live writer we can see
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _holder(fd) or {"pid": "?"}
        except OSError:
            return None
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def describe_writer(holder: dict[str, object]) -> str:
    """``pid 123 on host (started ...)``: who holds a run folder, for messages."""
    who = f"pid {holder.get('pid', '?')}" + (f" on {holder['host']}" if holder.get("host") else "")
    return f"{who} (started {holder.get('started_at', 'at an unknown time')})"


def check_fresh(run_dir: Path) -> None:
    """Refuse a folder that already holds a run (checked again under the lock: another run may just have finished there)."""
    if (run_dir / RESULTS_FILE).exists() or (run_dir / MANIFEST_FILE).exists():
        raise RunFolderError(f"{run_dir} already holds a run; continue it with --resume {run_dir} or choose another --out")


@dataclass
class EarlierAttempt:
    """What ``results.jsonl`` holds when a run is resumed, read without trusting it (nothing is deleted).

    Attributes:
        done: The last record of every sample whose last record is ok; these are not run again.
        failed: Samples whose last record is an error: run again (the new record is appended after it).
        problems: Unusable lines as ``file:line: what``; whatever sample they held is run again.
    """

    done: list[SampleRecord] = field(default_factory=list)
    failed: int = 0
    problems: list[str] = field(default_factory=list)

    def warnings(self) -> list[str]:
        """Lines for the terminal: each bad line by file and line (the first few), then a count."""
        lines = [f"{problem}; skipped (its sample, if any, is run again)" for problem in self.problems[:_MAX_PROBLEMS_SHOWN]]
        if len(self.problems) > _MAX_PROBLEMS_SHOWN:
            lines.append(f"... and {len(self.problems) - _MAX_PROBLEMS_SHOWN} more unusable lines; they stay in the file")
        return lines


def read_earlier_attempt(run_dir: Path) -> EarlierAttempt:
    """The samples an earlier attempt finished; call it under the lock, so no other writer is appending."""
    scan = scan_results(run_dir / RESULTS_FILE)
    done = [r for r in scan.records if r.status == "ok"]
    return EarlierAttempt(done=done, failed=len(scan.records) - len(done), problems=list(scan.problems))
