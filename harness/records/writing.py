"""Writing a run folder's records so that a crash or a full disk loses at most the line being written.

``results.jsonl`` is only ever appended to (:class:`ResultsWriter`, one
unbuffered write per line); ``run.json`` is replaced atomically, or
rewritten in place on a full disk (:func:`write_manifest`).
"""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path
from typing import Any

from harness.atomic import write_atomic
from harness.records.histories import by_reference_line, history_lines, written_digests
from harness.records.jsontext import model_json
from harness.records.models import HISTORIES_FILE, MANIFEST_FILE, ResultsError, RunManifest, SampleRecord

#: Files of a run folder are never opened through a symlink: one planted there would send writes outside the folder.
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def append_record(handle: Any, record: SampleRecord) -> None:
    """Write one record as a line and flush it, so a crash loses at most that line.

    A :class:`ResultsWriter` writes a pasted history once, by reference
    (:meth:`ResultsWriter.write_record`); any other handle gets the record inline.
    """
    if isinstance(handle, ResultsWriter):
        handle.write_record(record)
        return
    append_line(handle, model_json(record))


def append_line(handle: Any, line: str) -> None:
    """Write one record already dumped as JSON (by a worker process) and flush it, like :func:`append_record`."""
    handle.write(line + "\n")
    handle.flush()


class ResultsWriteError(ResultsError):
    """A record could not be appended (disk full, quota, I/O error); the run must stop."""

    def __init__(self, message: str, cause: OSError) -> None:
        super().__init__(message)
        self.cause = cause


def _write_fd(fd: int, data: bytes | memoryview) -> int:
    """``os.write``; a seam for tests that inject a failing disk."""
    return os.write(fd, data)


class ResultsWriter:
    """Appends lines to ``results.jsonl``: one unbuffered write per line, nothing held back.

    Text-file-like (``write``/``flush``/``close``) so :func:`append_line` can use
    it. Why not ``open(..., "a")``: a buffered file that fails to flush keeps
    the failed bytes and raises again on every later write and at close, and a
    failed line stays half-written. Here a failed write is cut back to the
    last complete line (nothing of an earlier line is touched), remembered
    in :attr:`error`, and raised once as :class:`ResultsWriteError`; later
    writes raise it again without touching the file.

    If the file does not end with a newline (an earlier write was cut off),
    the first line written starts with one, so the new record is never
    glued to the torn fragment.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.error: ResultsWriteError | None = None
        self._histories: ResultsWriter | None = None  # histories.jsonl beside the file, opened on the first pasted history
        self._digests: set[str] = set()
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _NOFOLLOW, 0o644)
        try:
            size = os.fstat(self._fd).st_size
            self._newline_first = size > 0 and _last_byte(self.path, size) != b"\n"
        except OSError:
            os.close(self._fd)
            raise

    def write(self, text: str) -> int:
        """Append ``text`` whole, or raise :class:`ResultsWriteError` leaving the file as it was."""
        if self.error is not None:
            raise self.error
        data = ("\n" + text if self._newline_first else text).encode("utf-8")
        start = os.lseek(self._fd, 0, os.SEEK_END)
        view = memoryview(data)
        try:
            while view:
                view = view[_write_fd(self._fd, view):]
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, start)  # only this line's bytes: every earlier line stays whole
            self.error = ResultsWriteError(f"{self.path}: cannot append a record: {exc.strerror or exc}", exc)
            raise self.error from exc
        self._newline_first = False
        return len(text)

    def write_record(self, record: SampleRecord) -> None:
        """Append ``record``; a pasted history goes to ``histories.jsonl`` first, once per digest (records schema 2)."""
        if record.pasted is not None:
            if self._histories is None:
                self._histories = ResultsWriter(self.path.parent / HISTORIES_FILE)
                self._digests = written_digests(self._histories.path)
            if record.pasted.digest not in self._digests:
                text, added = history_lines(record, self._digests)  # its new shared messages, then the history
                self._histories.write(text)  # one append, before the record that points at it
                self._digests.update(added)
        self.write(by_reference_line(record) + "\n")

    def flush(self) -> None:
        """Nothing to do: every write went to the file at once."""

    def close(self) -> None:
        if self._histories is not None:
            self._histories.close()
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> ResultsWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _last_byte(path: Path, size: int) -> bytes:
    with open(path, "rb") as handle:
        handle.seek(size - 1)
        return handle.read(1)


def write_manifest(run_dir: Path, manifest: RunManifest) -> None:
    """Replace ``run.json`` atomically (:func:`harness.atomic.write_atomic`: a unique temp file, never through a symlink).

    On a full disk, where the temp file cannot be written, ``run.json`` is
    rewritten in place instead (it keeps its blocks, so a manifest of about
    the same size fits); if even that fails, the old content is put back.

    Raises:
        ResultsError: the manifest could not be written (no temp file is left behind).
    """
    path = Path(run_dir) / MANIFEST_FILE
    data = (model_json(manifest, indent=2) + "\n").encode("utf-8")
    try:
        write_atomic(path, data)
        return
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT) or path.is_symlink() or not path.is_file():
            raise ResultsError(f"{path}: cannot write the run manifest: {exc.strerror or exc}") from None
        failure = exc
    try:
        _rewrite_in_place(path, data)
    except OSError:
        raise ResultsError(f"{path}: cannot write the run manifest: {failure.strerror or failure}") from None


def _rewrite_in_place(path: Path, data: bytes) -> None:
    """Overwrite ``path`` with ``data`` without allocating a new file; restore the old bytes on failure."""
    fd = os.open(path, os.O_RDWR | _NOFOLLOW)
    old = _read_all(fd)
    try:
        try:
            _pwrite_all(fd, data)
            os.ftruncate(fd, len(data))
        except OSError:
            with contextlib.suppress(OSError):
                _pwrite_all(fd, old)
                os.ftruncate(fd, len(old))
            raise
    finally:
        os.close(fd)


def _read_all(fd: int) -> bytes:
    chunks: list[bytes] = []
    while chunk := os.pread(fd, 1 << 20, sum(len(c) for c in chunks)):
        chunks.append(chunk)
    return b"".join(chunks)


def _pwrite_all(fd: int, data: bytes) -> None:
    view, offset = memoryview(data), 0
    while offset < len(data):
        offset += os.pwrite(fd, view[offset:], offset)
