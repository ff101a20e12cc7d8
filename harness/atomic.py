"""Replacing a file atomically, safely in a folder someone else may have written into.

Every file the harness replaces whole (``run.json``, ``summary.json``,
``index.html``, the other report outputs, response- and judge-cache entries,
the memory document, importer outputs) goes through :func:`write_atomic`: the
bytes go to a temp file with a unique name in the target's own folder,
created exclusively and without following a symlink
(``O_CREAT | O_EXCL | O_NOFOLLOW``), then renamed over the target in that
folder. So a symlink planted under a temp name (or a stale temp file) is
never written through, two writers of one folder never share a temp file
(the last rename wins, both succeed), and a reader sees the old file or the
new one, never half of one. The rename replaces a symlink at the target's
name itself, never the file it points to.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterator, Sequence
from pathlib import Path

__all__ = ["TEMP_SUFFIX", "temp_path", "write_atomic"]

#: Every temp file ends so (``.<name>.<random>.tmp``): hidden, and recognisable as debris if a crash leaves one.
TEMP_SUFFIX = ".tmp"
_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_TRIES = 16


def temp_path(path: Path) -> Path:
    """A fresh temp name beside ``path`` (not created): ``.<name>.<12 random hex digits>.tmp``."""
    return path.with_name(f".{path.name}.{secrets.token_hex(6)}{TEMP_SUFFIX}")


def _write(fd: int, data: memoryview) -> int:
    """``os.write``; a seam for tests that inject a full disk."""
    return os.write(fd, data)


def _create(path: Path, mode: int) -> tuple[int, Path]:
    """Create a new temp file beside ``path`` exclusively; a name that exists (planted or not) is skipped."""
    for _ in range(_TRIES):
        tmp = temp_path(path)
        try:
            return os.open(tmp, _FLAGS, mode), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"{path.parent}: could not create a fresh temp file in {_TRIES} tries")


#: Characters of text encoded at a time: a text is written as UTF-8 without ever being held whole as bytes.
TEXT_SLICE = 1 << 20


def _encoded(data: bytes | str | Sequence[str]) -> Iterator[bytes]:
    """``data`` as UTF-8 bytes, in slices of at most :data:`TEXT_SLICE` characters (bytes as they are)."""
    if isinstance(data, bytes):
        yield data
        return
    for text in (data,) if isinstance(data, str) else data:
        for start in range(0, len(text), TEXT_SLICE):  # a str slice never splits a character, so each encodes alone
            yield text[start:start + TEXT_SLICE].encode("utf-8")


def write_atomic(path: Path, data: bytes | str | Sequence[str], *, mode: int = 0o666) -> Path:
    """Replace ``path`` with ``data`` (text is written as UTF-8) atomically.

    Args:
        path: the file to replace (its folder must exist).
        data: the new content: bytes, a text, or a text in pieces (a report page: written one piece at a
            time, so a page of hundreds of MB is never held whole, or whole again as UTF-8).
        mode: permission bits of the new file before the umask (0o600 for a private file).

    Returns:
        ``path``.

    Raises:
        OSError: the temp file could not be written or renamed; it is removed, ``path`` is untouched.
    """
    path = Path(path)
    fd, tmp = _create(path, mode)
    try:
        try:
            for raw in _encoded(data):
                view = memoryview(raw)
                while view:
                    view = view[_write(fd, view):]
            if mode != 0o666:
                os.fchmod(fd, mode)  # exact bits for a private file, whatever the umask left
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path
