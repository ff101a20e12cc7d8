"""Reading a ``--store`` file's bytes: only a regular file, through any symlink, with its WAL, writing nothing beside it.

A store in use by an application is an SQLite file in WAL mode: its last
commits sit in ``FILE-wal`` until a checkpoint. :func:`read_store_bytes`

- resolves a symlink first, so the ``-wal`` is looked for beside the real
  file (beside the link there is none, and the read would be silently stale);
- refuses anything that is not a regular file (a FIFO would block the read
  forever, a device or folder is no store), checked on the opened descriptor;
- copies the main file and its ``-wal`` into a private temporary folder and
  checkpoints the copy there, so the bytes returned (and their sha256, which
  ``run.json`` records) hold every commit, and nothing is ever created beside
  the store: SQLite's ``mode=ro`` on the store itself would create ``-shm``
  when none is there;
- copies the ``-wal`` again after the main file, and starts over when it
  changed meanwhile (a writer committed or checkpointed during the copy), so a
  checkpoint racing the copy cannot mix old and new pages.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import tempfile
from pathlib import Path

_ATTEMPTS = 5
_KIND = {stat.S_IFIFO: "a FIFO (named pipe)", stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device",
         stat.S_IFSOCK: "a socket", stat.S_IFDIR: "a folder"}


class StoreFileError(Exception):
    """The store file cannot be read as a regular file; the message names it and the fix."""


def read_regular(path: Path, label: str) -> bytes | None:
    """The bytes of ``path`` when it is a regular file; None when it does not exist.

    Opened without blocking (a FIFO would wait for a writer forever) and checked on the descriptor, so a
    file swapped for a FIFO after a check is still refused.

    Raises:
        StoreFileError: ``path`` is not a regular file, or cannot be read.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StoreFileError(f"{label} {path}: cannot read: {exc.strerror or exc}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = _KIND.get(stat.S_IFMT(mode), "not a regular file")
            raise StoreFileError(f"{label} {path}: {kind}, not a regular file; give the memory-item SQLite file or "
                                 "its JSON export (docs/store-export.md)")
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=True) as handle:
            fd = -1
            return handle.read()
    except OSError as exc:
        raise StoreFileError(f"{label} {path}: cannot read: {exc.strerror or exc}") from None
    finally:
        if fd >= 0:
            os.close(fd)


def _checkpointed(main: bytes, wal: bytes) -> bytes:
    """The database ``main`` with the commits of ``wal`` written into it, in a private temporary copy."""
    with tempfile.TemporaryDirectory(prefix="recall-eval-store-") as folder:
        copy = Path(folder) / "store.sqlite"
        copy.write_bytes(main)
        copy.with_name(copy.name + "-wal").write_bytes(wal)
        db = sqlite3.connect(copy)
        try:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        finally:
            db.close()
        return copy.read_bytes()


def read_store_bytes(path: str | Path, label: str = "--store") -> tuple[Path, bytes]:
    """(the real path of ``path``, its bytes with any ``-wal`` checkpointed in), touching nothing beside it.

    Raises:
        StoreFileError: missing, not a regular file, unreadable, or changing under every attempt to copy it.
    """
    given = Path(path)
    try:
        real = given.resolve(strict=True)
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop
        reason = "no such file" if isinstance(exc, FileNotFoundError) else getattr(exc, "strerror", None) or exc
        raise StoreFileError(f"{label} {given}: cannot read: {reason}") from None
    wal_path = real.with_name(real.name + "-wal")
    for _ in range(_ATTEMPTS):
        wal = read_regular(wal_path, label)
        data = read_regular(real, label)
        if data is None:
            raise StoreFileError(f"{label} {given}: cannot read: no such file")
        if not wal or not data.startswith(b"SQLite format 3\x00"):
            return real, data
        if read_regular(wal_path, label) == wal:
            try:
                return real, _checkpointed(data, wal)
            except sqlite3.Error as exc:
                raise StoreFileError(f"{label} {given}: cannot read the store with its -wal: {exc}") from None
    raise StoreFileError(f"{label} {given}: its -wal changed during each of {_ATTEMPTS} copies (a busy writer); "
                         "try again, or export the store while it is quiet (docs/store-export.md)")
